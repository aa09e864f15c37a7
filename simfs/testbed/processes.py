"""Processes the testbed starts, recorded so that exactly those are stopped.

A PID alone can be reused after its process ends; each record also keeps the process's
start time (``/proc/PID/stat`` field 22), and a record whose PID now belongs to another
process is left alone.  Every process starts in a session of its own, so stopping it
stops the children it made (``mfsmaster``'s metadata writer) with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from simfs.errors import SimfsError

#: How long a daemon may take to come up before the testbed gives up (start-up on this
#: machine takes under a second; the margin is for a busy machine).
READY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Started:
    """One process the testbed started: what it is, its PID, its start time (clock ticks
    since boot) and its log."""

    name: str
    pid: int
    start_ticks: int
    log: str

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Started:
        """As :meth:`to_json` wrote it (other keys, such as ``running``, are ignored)."""
        return cls(data["name"], data["pid"], data["start_ticks"], data["log"])


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` from field 3 (the state) on, or None if the process is gone.
    ``fields[0]`` is the state, ``fields[11]``/``[12]`` user and system ticks,
    ``fields[19]`` the start time in ticks since boot."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    return stat[stat.rindex(")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else int(fields[19])


def start(name: str, argv: list[str], log: Path) -> Started:
    """Start ``argv`` in a new session with its output in ``log``."""
    with open(log, "ab") as output:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    ticks = start_ticks(process.pid)
    return Started(name, process.pid, ticks if ticks is not None else -1, str(log))


def alive(record: Started) -> bool:
    """Whether the recorded process is still the one running under its PID (a zombie,
    ended but not yet reaped, counts as gone)."""
    fields = stat_fields(record.pid)
    return fields is not None and int(fields[19]) == record.start_ticks and fields[0] != "Z"


def stop(records: list[Started], grace_s: float = 15.0) -> list[str]:
    """SIGTERM each recorded process's session, wait up to ``grace_s`` for all of them,
    SIGKILL what is left; return the names of those that had to be killed."""
    running = [record for record in records if alive(record)]
    for record in running:
        _signal_session(record, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(alive(record) for record in running) and time.monotonic() < deadline:
        _reap(running)
        time.sleep(0.1)
    killed = []
    for record in running:
        if alive(record):
            _signal_session(record, signal.SIGKILL)
            killed.append(record.name)
    _reap(running)
    return killed


def _signal_session(record: Started, signum: int) -> None:
    try:
        os.killpg(record.pid, signum)  # its session leader's group: it and its children
    except ProcessLookupError:
        pass
    except PermissionError as error:
        raise SimfsError(f"testbed: cannot stop {record.name} (pid {record.pid}): {error.strerror}") from None


def _reap(records: list[Started]) -> None:
    """Collect the recorded processes that ended, where this process started them (a
    zombie's PID stays taken until its parent collects it)."""
    for record in records:
        try:
            os.waitpid(record.pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not our child: its own parent collects it


def wait_until(ready, started: Started, what: str) -> None:  # noqa: ANN001
    """Poll ``ready()`` until it is true; a one-line error if ``started`` exits first or
    :data:`READY_TIMEOUT_S` passes (naming ``what`` and the log)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not ready():
        if not alive(started):
            last = Path(started.log).read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
            raise SimfsError(f"testbed: {what} exited at start-up: {last[0]} (log {started.log})")
        if time.monotonic() > deadline:
            raise SimfsError(f"testbed: {what} not ready after {READY_TIMEOUT_S:.0f} s (log {started.log})")
        time.sleep(0.05)
