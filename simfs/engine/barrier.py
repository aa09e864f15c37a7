"""A reusable barrier for SimPy processes (MPI_Barrier between benchmark phases)."""

from __future__ import annotations

import simpy
from simpy.events import Event


class Barrier:
    """Releases all ``parties`` waiters at the instant the last one arrives."""

    def __init__(self, env: simpy.Environment, parties: int) -> None:
        if parties < 1:
            raise ValueError(f"parties: a barrier needs at least one party, got {parties}")
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
