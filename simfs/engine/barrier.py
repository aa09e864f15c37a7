"""A reusable barrier for SimPy processes (MPI_Barrier between benchmark phases)."""

from __future__ import annotations

import numbers

import simpy
from simpy.events import Event


class Barrier:
    """Releases all ``parties`` waiters at the instant the last one arrives."""

    def __init__(self, env: simpy.Environment, parties: int) -> None:
        # A fractional count would never be reached: the barrier would hold for ever.
        if isinstance(parties, bool) or not isinstance(parties, numbers.Integral) or parties < 1:
            raise ValueError(f"parties: a barrier needs a whole number of at least one party, got {parties!r}")
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
