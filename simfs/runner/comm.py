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
terminal's Ctrl-C reaches too, turns it into a stop request.

MPI backend: ``allgather`` on ``COMM_WORLD``; SIGINT and SIGTERM (``mpirun`` forwards
Ctrl-C as SIGTERM to the ranks) set the stop flag.
"""

from __future__ import annotations

import os
import signal
import socket
from typing import Any

ABORT = "__simfs_abort__"


class RunAborted(Exception):  # noqa: N818 - a signal to stop, like KeyboardInterrupt
    """The run is being stopped (another rank failed, or a signal); carries the reason."""


class LocalComm:
    """A child process's end of the local backend."""

    def __init__(self, rank: int, size: int, connection: Any, stop_event: Any) -> None:
        self.rank = rank
        self.size = size
        self.host = socket.gethostname()
        self._connection = connection
        self._stop = stop_event

    def gather(self, payload: Any) -> list[Any]:
        self._connection.send(("gather", payload))
        answer = self._connection.recv()
        if isinstance(answer, tuple) and answer and answer[0] == ABORT:
            raise RunAborted(answer[1])
        return answer

    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def record(self, gathered: list[Any]) -> None:
        """The parent records gathered lists itself (it sees every payload)."""


class MpiComm:
    """A rank of an MPI job (mpi4py).  Rank 0 is the reporter."""

    def __init__(self) -> None:
        try:
            from mpi4py import MPI
        except ImportError:
            raise RunAborted("the MPI backend needs mpi4py: pip install 'simfs[mpi]'") from None
        self._mpi = MPI
        self._world = MPI.COMM_WORLD
        self.rank = self._world.Get_rank()
        self.size = self._world.Get_size()
        self.host = socket.gethostname()
        self.reporter = self.rank == 0
        self.gathered: list[list[Any]] = []
        self._stopped = False
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self._on_signal)

    def _on_signal(self, number: int, frame: Any) -> None:
        self._stopped = True

    def gather(self, payload: Any) -> list[Any]:
        return self._world.allgather(payload)

    def stop_requested(self) -> bool:
        return self._stopped

    def record(self, gathered: list[Any]) -> None:
        if self.reporter:
            self.gathered.append(gathered)

    def broadcast(self, value: Any) -> Any:
        return self._world.bcast(value, root=0)


def in_mpi_job() -> bool:
    """Whether this process was started by an MPI launcher (Open MPI, MPICH/Hydra, Slurm PMI)."""
    return any(name in os.environ for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))
