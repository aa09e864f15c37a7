"""How the ranks of a live run talk: local processes or MPI ranks.

Both backends give a rank the same three things, so the rank program does not know which
one it runs under:

* ``gather(payload)``: a collective (it is also the barrier); every rank gets the list
  of every rank's payload, in rank order.  If the run is being stopped (a rank died, the
  user pressed Ctrl-C) it raises :class:`RunAborted` instead.
* ``stop_requested()``: cheap, checked between transfers, so that every rank stops
  within one transfer of a failure elsewhere (local) or of a signal (both).
* ``record(gathered)``: hands each gathered list to the reporter (the process that writes
  the output): a no-op locally, where the parent sees every payload itself; rank 0's
  list under MPI.

Local backend: the parent process is the coordinator.  Each rank is a child process with
a pipe to it; a collective is each child sending its payload and waiting for the parent's
answer.  The parent answers a collective only once every rank has arrived, and answers
every waiting rank with an abort once a rank has failed or died, so no rank hangs in a
barrier its peer will never reach.  Children ignore SIGINT: the parent, which the
terminal's Ctrl-C reaches too, turns it into a stop request; SIGTERM sent to a child
stops that child's transfers like a failure.  Each child holds its own end of its own
pipe and nothing else, so when the coordinator dies (SIGKILL, the OOM killer) a child
waiting for it reads end-of-file at once, and one in the middle of its transfers sees
its parent process change: either way it raises :class:`CoordinatorGone`, and the
rank removes the run directory itself.

MPI backend: a collective is a non-blocking ``Iallgather`` (the payload sizes) and
``Iallgatherv`` (the pickled payloads) on ``COMM_WORLD``, waited for by polling, so that
Python signal handlers run while a rank waits: a rank blocked in a C-level collective
for a peer that was SIGKILLed would never see the SIGTERM with which ``mpirun`` then
ends the job, and be killed a second later with its files in place.  SIGINT and SIGTERM
set the stop flag; once it is set, a collective that has not completed within
:data:`ABANDON_AFTER_S` is abandoned (:class:`CollectiveAbandoned`): a peer is dead or
stuck, and the rank cleans up without it.
"""

from __future__ import annotations

import atexit
import os
import pickle
import socket
import sys
import time
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from simfs.errors import SimfsError

ABORT = "__simfs_abort__"
#: Once a stop is requested, how long an MPI rank still waits for a collective its peers
#: may yet reach (they stop within one check of the flag) before it concludes one is
#: dead.  Open MPI SIGKILLs the ranks one second after its SIGTERM; this leaves rank 0
#: most of that second for the record.
ABANDON_AFTER_S = 0.25


class RunAborted(Exception):  # noqa: N818 - a signal to stop, like KeyboardInterrupt
    """The run is being stopped (another rank failed, or a signal); carries the reason."""


class CoordinatorGone(RunAborted):
    """Local backend: the coordinating process died; the rank cleans up and exits."""


class CollectiveAbandoned(RunAborted):
    """MPI backend: after a stop request, the peers did not reach a collective in time."""


class LocalComm:
    """A child process's end of the local backend."""

    def __init__(self, rank: int, size: int, connection: Any, stop_event: Any) -> None:
        self.rank = rank
        self.size = size
        self.host = socket.gethostname()
        self._connection = connection
        self._stop = stop_event
        self._parent = os.getppid()
        self._stopping = False

    def gather(self, payload: Any) -> list[Any]:
        try:
            self._connection.send(("gather", payload))
            answer = self._connection.recv()
        except (EOFError, OSError):  # OSError: EPIPE, the coordinator's end is closed
            raise CoordinatorGone("the coordinating process is gone") from None
        if isinstance(answer, tuple) and answer and answer[0] == ABORT:
            raise RunAborted(answer[1])
        return answer

    def stop(self) -> None:
        """A SIGTERM sent to this rank alone: stop like a failure, report, leave."""
        self._stopping = True

    def coordinator_gone(self) -> bool:
        # An orphan is adopted by init or a subreaper: its parent changes.
        return os.getppid() != self._parent

    def stop_requested(self) -> bool:
        return self._stopping or self._stop.is_set() or self.coordinator_gone()

    def record(self, gathered: list[Any]) -> None:
        """The parent records gathered lists itself (it sees every payload)."""


def load_mpi() -> Any:
    """mpi4py's ``MPI`` module, or a one-line SimfsError saying what is missing."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        if exc.name == "mpi4py":
            raise SimfsError("the MPI backend needs mpi4py: pip install 'simfs[mpi]'") from None
        # mpi4py is there but its extension cannot load libmpi (not installed, or not
        # the one mpi4py was built against).
        raise SimfsError(
            f"the MPI backend: mpi4py cannot load an MPI library ({' '.join(str(exc).split())}); install Open MPI or MPICH "
            "(e.g. apt-get install openmpi-bin) and reinstall mpi4py"
        ) from None
    except (RuntimeError, OSError) as exc:
        raise SimfsError(f"the MPI backend: mpi4py cannot start MPI ({' '.join(str(exc).split())})") from None
    return MPI


class MpiComm:
    """A rank of an MPI job (mpi4py).  Rank 0 is the reporter.

    ``signals`` is the :class:`~simfs.runner.signals.Deferred` of the run: a SIGINT or
    SIGTERM noted there is the stop flag.
    """

    def __init__(self, signals: Any) -> None:
        self._mpi = load_mpi()
        self._world = self._mpi.COMM_WORLD
        self._signals = signals
        self.rank = self._world.Get_rank()
        self.size = self._world.Get_size()
        self.host = socket.gethostname()
        self.reporter = self.rank == 0
        self.gathered: list[list[Any]] = []
        self.abandoned = ""
        #: Called on every rank with each recorded collective's answer (the phase
        #: boundaries an outside listener follows: ``run.py``); may run collectives itself.
        self.on_collective: Callable[[list[Any]], None] | None = None

    def gather(self, payload: Any) -> list[Any]:
        if self.abandoned:  # a collective left pending: no other can follow it
            raise CollectiveAbandoned(self.abandoned)
        mpi = self._mpi
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        size = array("q", [len(data)])
        sizes = array("q", bytes(8 * self.size))
        self._wait(self._world.Iallgather([size, mpi.LONG_LONG], [sizes, mpi.LONG_LONG]))
        counts = list(sizes)
        displacements = [0, *accumulate(counts[:-1])]
        received = bytearray(sum(counts))
        self._wait(self._world.Iallgatherv([data, mpi.BYTE], [received, (counts, displacements), mpi.BYTE]))
        view = memoryview(received)
        return [pickle.loads(view[start : start + count]) for start, count in zip(displacements, counts)]

    def _wait(self, request: Any) -> None:
        """Poll ``request`` (MPI progresses it in ``Test``), yielding the CPU between
        polls as Open MPI's own waits do when ranks outnumber cores."""
        stopped_at: float | None = None
        while not request.Test():
            if self.stop_requested():
                now = time.monotonic()
                stopped_at = stopped_at if stopped_at is not None else now
                if now - stopped_at >= ABANDON_AFTER_S:
                    self.abandoned = (
                        f"stopped by {self._signals.names()}, and the other ranks did not reach the next "
                        f"collective within {ABANDON_AFTER_S} s (a rank died, or the job is being ended)"
                    )
                    # The pending request would make MPI_Finalize wait for peers that
                    # never come: once this rank is done, it leaves without it.
                    atexit.register(_leave_without_finalize)
                    raise CollectiveAbandoned(self.abandoned)
            os.sched_yield()

    def stop_requested(self) -> bool:
        return bool(self._signals.received)

    def record(self, gathered: list[Any]) -> None:
        if self.reporter:
            self.gathered.append(gathered)
        if self.on_collective is not None:
            self.on_collective(gathered)

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank (through the same interruptible collective)."""
        return self.gather(value if self.reporter else None)[0]


def _leave_without_finalize() -> None:
    """The last exit handler of a rank whose job has come apart (it runs first: handlers
    run last-registered first).  Not MPI_Abort, which in Open MPI 4 waits to be killed
    when the job is already being ended; mpirun takes a rank that leaves without
    MPI_Finalize as one that failed, and ends the job if it is not ending already."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(1)


def in_mpi_job() -> bool:
    """Whether this process was started by an MPI launcher (Open MPI, MPICH/Hydra, Slurm PMI)."""
    return any(name in os.environ for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))
