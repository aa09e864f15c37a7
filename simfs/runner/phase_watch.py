"""Following the phases of an MPI run from outside it.

Locally, ``measure(..., on_phase=...)`` calls its caller at each phase boundary while the
ranks wait (``run.py``).  Under ``mpirun`` the caller is not a rank: ``simfs testbed run
--mpi`` starts the job and waits for it.  So the job tells it, through a Unix socket named
in rank 0's environment (:data:`PHASE_SOCKET_ENV`; rank 0 tells the others whether there is
one, so that all of them agree): at each boundary of a synchronised run rank 0 sends the
event and waits for the answer, and every rank waits in one more barrier until it has
come, so that what the listener samples then (the machine's CPU times) falls between
phases, as it does locally.

:class:`PhaseListener` is the listening side, :func:`phase_notifier` rank 0's.  A listener
that cannot be reached, stops answering or goes away stops the notes, not the run; one
whose ``on_phase`` raises keeps answering (the caller finds the error in
:attr:`PhaseListener.error`).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

#: The environment variable naming the listener's socket (inherited by the ranks).
PHASE_SOCKET_ENV = "SIMFS_PHASE_SOCKET"
#: How long rank 0 waits for the listener's answer before it stops telling it, seconds.
#: Sampling a machine's counters takes milliseconds; this only bounds a stuck listener.
ANSWER_TIMEOUT_S = 10.0
#: How often rank 0 looks at the stop flag while it waits for an answer, seconds.
_POLL_S = 0.05


class PhaseMark(NamedTuple):
    """Which phase a boundary ends (the fields of a rank's record a listener needs)."""

    iteration: int
    phase: str


class PhaseListener:
    """Listens on a Unix socket at ``path`` for one job's phase boundaries and calls
    ``on_phase(event, mark)`` for each, in a thread of its own: ``("start", None)``,
    ``("end", PhaseMark)``, ``("failed", PhaseMark)``.  Use it as a context manager around
    the job; :attr:`error` holds the first exception ``on_phase`` raised (the job goes on
    without waiting for it)."""

    def __init__(self, path: str | Path, on_phase: Callable[[str, PhaseMark | None], None]) -> None:
        self._path = Path(path)
        self._on_phase = on_phase
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.error: BaseException | None = None

    @property
    def path(self) -> Path:
        return self._path

    def __enter__(self) -> PhaseListener:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(self._path))  # OSError where the path is too long for a socket
            server.listen(1)
        except OSError:
            server.close()
            raise
        server.settimeout(0.2)  # to see the stop flag between connections
        self._server = server
        self._thread = threading.Thread(target=self._serve, name="simfs-phase-listener", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        if self._server is not None:
            self._server.close()
        self._path.unlink(missing_ok=True)

    def _serve(self) -> None:
        assert self._server is not None
        while not self._stopping.is_set():
            try:
                connection, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(0.2)
                self._answer(connection)

    def _answer(self, connection: socket.socket) -> None:
        pending = b""
        while not self._stopping.is_set():
            try:
                chunk = connection.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not chunk:
                return  # rank 0 is done
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                self._note(line)
                try:
                    connection.sendall(b"ok\n")
                except OSError:
                    return

    def _note(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            mark = PhaseMark(int(message["iteration"]), str(message["phase"])) if "phase" in message else None
            self._on_phase(str(message["event"]), mark)
        except Exception as error:  # noqa: BLE001 - kept for the caller; the job goes on
            if self.error is None:
                self.error = error


def phase_notifier(path: str, stop_requested: Callable[[], bool] = lambda: False) -> Callable[[str, Any], None]:
    """Rank 0's side: ``notify(event, record)`` sends one boundary to the listener at
    ``path`` and waits for its answer.  If the listener cannot be reached, fails, or does
    not answer within :data:`ANSWER_TIMEOUT_S` (or before ``stop_requested()``: the
    other ranks give up on a stopped run within a fraction of a second), this and every
    later call do nothing: the run goes on unwatched."""
    state: dict[str, Any] = {"connection": None, "broken": False}

    def notify(event: str, record: Any) -> None:
        if state["broken"]:
            return
        try:
            message: dict[str, Any] = {"event": event}
            if record is not None:
                message.update(iteration=int(record.iteration), phase=str(record.phase))
            if state["connection"] is None:
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                state["connection"] = connection
                connection.settimeout(ANSWER_TIMEOUT_S)
                connection.connect(path)
                connection.settimeout(_POLL_S)
            connection = state["connection"]
            connection.sendall(json.dumps(message).encode() + b"\n")
            answer, deadline = b"", time.monotonic() + ANSWER_TIMEOUT_S
            while not answer.endswith(b"\n"):
                if stop_requested() or time.monotonic() > deadline:
                    raise OSError("the phase listener did not answer in time")
                try:
                    chunk = connection.recv(16)
                except TimeoutError:
                    continue
                if not chunk:
                    raise OSError("the phase listener went away")
                answer += chunk
            if answer != b"ok\n":
                raise OSError(f"the phase listener answered {answer!r}")
        except Exception:  # noqa: BLE001 - whatever goes wrong, the ranks must not wait for it
            state["broken"] = True
            if state["connection"] is not None:
                state["connection"].close()

    return notify


def watched_socket() -> str | None:
    """The listener's socket this process was told of, if any."""
    return os.environ.get(PHASE_SOCKET_ENV) or None
