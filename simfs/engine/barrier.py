"""A reusable barrier for SimPy processes (MPI_Barrier between benchmark phases)."""

from __future__ import annotations

import simpy
from simpy.events import Event

from simfs.errors import check_whole


class Barrier:
    """Releases all ``parties`` waiters at the instant the last one arrives."""

    def __init__(self, env: simpy.Environment, parties: int) -> None:
        check_whole("barrier", "parties", parties, 1)  # a fractional count would never be reached
        self._env = env
        self._parties = parties
        self._arrived = 0
        self._event = env.event()

    @property
    def parties(self) -> int:
        return self._parties

    def wait(self) -> Event:
        event = self._event
        self._arrived += 1
        if self._arrived == self._parties:
            self._arrived = 0
            self._event = self._env.event()
            event.succeed()
        return event
