"""SIGINT and SIGTERM during a live run: noted, not raised, until the run is cleaned up.

The runner promises a record and no files left behind whatever the timing of signals.
Python's default SIGINT handler raises KeyboardInterrupt wherever the main thread happens
to be: a second Ctrl-C could land inside ``shutil.rmtree`` of the run directory, or
between the run and its record, and cut the cleanup short.  Inside
:func:`deferred_signals` both signals only note themselves and tell the listeners (the
coordinator turns the first into a stop request for the ranks); the handlers that were
there before come back when the outermost block ends, after the record is written and
the run directory removed.

Test hook (environment, for the test suite): ``SIMFS_RUNNER_PAUSE=POINT`` makes the
reporter, at ``POINT`` (``before_remove``: the run is over and its directory about to be
removed; ``before_outputs``: the record is about to be written), create the file named by
``SIMFS_RUNNER_FLAG`` and wait until a signal arrives or that file is deleted (60 s at
most), so that a test can put a signal, or a fault, exactly there.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The signals a run defers: Ctrl-C, and what batch systems and ``kill`` send.
DEFERRED = (signal.SIGINT, signal.SIGTERM)
#: How long a test hook waits at most (a hang guard, not a timing).
_HOOK_WAIT_S = 60.0


class Deferred:
    """The signals received inside :func:`deferred_signals`, and who to tell."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._listeners: list[Callable[[int], None]] = []

    def handle(self, number: int, frame: Any) -> None:
        self.received.append(number)
        for listener in list(self._listeners):
            listener(number)

    @contextmanager
    def listening(self, listener: Callable[[int], None]) -> Iterator[None]:
        """Call ``listener(signal)`` on every signal while the block runs, and once at
        once for a signal that came before it (a Ctrl-C during the checks still stops)."""
        self._listeners.append(listener)
        try:
            if self.received:
                listener(self.received[0])
            yield
        finally:
            self._listeners.remove(listener)

    def names(self) -> str:
        """``SIGINT`` or ``SIGINT, SIGTERM``: the signals received, each once."""
        return ", ".join(dict.fromkeys(signal.Signals(number).name for number in self.received))


_active: Deferred | None = None


@contextmanager
def deferred_signals() -> Iterator[Deferred]:
    """SIGINT and SIGTERM noted in the yielded :class:`Deferred` instead of acted on.

    Nested blocks share the outermost one's record (``simfs measure`` holds the signals
    from the start of the run to the written record; :func:`~simfs.runner.measure` holds
    them by itself for a library caller).  Outside the main thread Python cannot set
    handlers, and signals go to the main thread's anyway, so nothing is deferred there.
    """
    global _active
    if _active is not None:
        yield _active
        return
    deferred = Deferred()
    if threading.current_thread() is not threading.main_thread():
        yield deferred
        return
    previous: dict[int, Any] = {}
    try:
        for number in DEFERRED:
            before = signal.getsignal(number)
            # An ignored signal stays ignored: a shell starts background jobs with SIGINT
            # ignored, and nohup-like wrappers rely on it.
            if before is not signal.SIG_IGN:
                previous[number] = signal.signal(number, deferred.handle)
        _active = deferred
        yield deferred
    finally:
        _active = None
        for number, handler in previous.items():
            # None: a handler installed from C, which Python cannot put back; the default
            # is the nearest thing.
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


def pause_point(name: str) -> None:
    """The ``SIMFS_RUNNER_PAUSE`` test hook (module docstring); a no-op otherwise."""
    if os.environ.get("SIMFS_RUNNER_PAUSE") != name:
        return
    deferred = _active
    seen = len(deferred.received) if deferred is not None else 0
    flag = os.environ.get("SIMFS_RUNNER_FLAG")
    touch_flag()
    deadline = time.monotonic() + _HOOK_WAIT_S
    while time.monotonic() < deadline:
        if deferred is not None and len(deferred.received) > seen:
            return
        if flag and not os.path.exists(flag):
            return
        time.sleep(0.01)


def touch_flag() -> None:
    """Create ``SIMFS_RUNNER_FLAG`` (the rank hooks' way to say where they are), holding
    the process ID of the one that reached the hook: a test signals that process alone.
    Written whole before it appears (renamed into place), so it is never seen empty."""
    flag = os.environ.get("SIMFS_RUNNER_FLAG")
    if flag:
        partial = Path(f"{flag}.{os.getpid()}.partial")
        partial.write_text(str(os.getpid()))
        os.replace(partial, flag)
