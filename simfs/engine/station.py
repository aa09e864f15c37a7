"""Request-level service stations: a FIFO queue in front of identical servers.

Where a file system serialises (a metadata server's threads and cores, one directory's
lock, a lock server, a disk that takes one request at a time), simfs models requests one
by one instead of as fluid flows (DESIGN.md section 4, "two levels, one simulation").  A
:class:`Station` is the building block: ``servers`` identical servers take requests in
arrival order; a request holds a server for its service demand.

FIFO with known demands needs no process per request.  In a first-come-first-served
queue with ``c`` servers the service *start* times are non-decreasing in arrival order,
and a request starts when the earliest of the ``c`` servers is free (Kiefer and
Wolfowitz's recursion for the G/G/c queue: the workload vector).  So the completion of a
request is known the moment it arrives, and :meth:`Station.serve` returns a single SimPy
timeout that fires then: one event per request, however long the queue.  The one
requirement is that requests arrive in time order, which holds when they are made at
``env.now`` from SimPy processes.

Statistics follow from the same numbers: utilisation (busy server-seconds over server
time), the mean wait and sojourn, and the mean number in the station by Little's law
(``L = lambda W``: total sojourn time over the horizon), which the tests check against
the M/M/c formulas (Erlang C).
"""

from __future__ import annotations

import heapq
import math

import simpy
from simpy.events import Timeout


class Station:
    """``servers`` identical servers behind one FIFO queue.

    Parameters
    ----------
    env:
        The SimPy environment whose clock the requests follow.
    name:
        Unique, human-readable name (``"mds.threads"``); used in results.
    servers:
        Number of servers (threads, cores, 1 for a lock or a disk arm).
    kind:
        The class of part (``"mds-cpu"``, ``"directory-lock"``, ...), as for fluid resources.
    record:
        Keep ``(arrival time, requests in the station then)`` for every arrival
        (:meth:`queue_samples`): the queue a teaching plot shows.
    """

    __slots__ = (
        "_env",
        "_name",
        "_servers",
        "_kind",
        "_free_at",
        "_completions",
        "_record",
        "_samples",
        "completed",
        "busy_s",
        "wait_s",
        "sojourn_s",
        "max_wait_s",
        "first_arrival_s",
        "last_departure_s",
    )

    def __init__(self, env: simpy.Environment, name: str, servers: int = 1, *, kind: str = "", record: bool = False):
        if not name:
            raise ValueError("name: a station needs a non-empty name")
        if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
            raise ValueError(f"servers: station {name!r} needs a positive integer number of servers, got {servers!r}")
        self._env = env
        self._name = name
        self._servers = servers
        self._kind = kind or name
        # When each server next becomes free (a min-heap: the earliest is served next).
        self._free_at = [env.now] * servers
        # Completion times of requests not yet departed (for the number in the station).
        self._completions: list[float] = []
        self._record = record
        self._samples: list[tuple[float, int]] = []
        self.completed = 0
        self.busy_s = 0.0
        self.wait_s = 0.0
        self.sojourn_s = 0.0
        self.max_wait_s = 0.0
        self.first_arrival_s = math.nan
        self.last_departure_s = math.nan

    @property
    def name(self) -> str:
        return self._name

    @property
    def servers(self) -> int:
        return self._servers

    @property
    def kind(self) -> str:
        return self._kind

    def reserve(self, demand_s: float) -> float:
        """Queue a request of ``demand_s`` seconds arriving now; return its completion time.

        The caller must wait until then itself (``serve`` does it with a timeout); useful
        to chain a station into another computation without an event."""
        if not (demand_s >= 0 and math.isfinite(demand_s)):
            raise ValueError(f"demand_s: station {self._name!r} needs a finite non-negative demand, got {demand_s!r}")
        now = self._env.now
        if self.completed == 0 and math.isnan(self.first_arrival_s):
            self.first_arrival_s = now
        free = heapq.heappop(self._free_at)
        start = free if free > now else now
        finish = start + demand_s
        heapq.heappush(self._free_at, finish)
        if self._record:
            completions = self._completions
            while completions and completions[0] <= now:
                heapq.heappop(completions)
            heapq.heappush(completions, finish)
            self._samples.append((now, len(completions)))
        wait = start - now
        self.completed += 1
        self.busy_s += demand_s
        self.wait_s += wait
        self.sojourn_s += finish - now
        if wait > self.max_wait_s:
            self.max_wait_s = wait
        if not finish <= self.last_departure_s:
            self.last_departure_s = finish
        return finish

    def serve(self, demand_s: float) -> Timeout:
        """Queue a request of ``demand_s`` seconds arriving now; the event fires when it
        has been served (its value is the completion time)."""
        finish = self.reserve(demand_s)
        return self._env.timeout(finish - self._env.now, value=finish)

    def free_at(self) -> float:
        """When the next server becomes free (``now`` or earlier if one is idle)."""
        return self._free_at[0]

    # -- statistics -----------------------------------------------------------------------
    def utilisation(self, horizon_s: float) -> float:
        """Busy server-seconds over ``servers x horizon_s``."""
        return self.busy_s / (self._servers * horizon_s) if horizon_s > 0 else 0.0

    @property
    def mean_wait_s(self) -> float:
        return self.wait_s / self.completed if self.completed else 0.0

    @property
    def mean_sojourn_s(self) -> float:
        return self.sojourn_s / self.completed if self.completed else 0.0

    def mean_in_station(self, horizon_s: float) -> float:
        """Time-average number of requests waiting or in service (Little's law)."""
        return self.sojourn_s / horizon_s if horizon_s > 0 else 0.0

    def queue_samples(self) -> list[tuple[float, int]]:
        """``(time, requests in the station)`` at every arrival (``record=True`` only)."""
        if not self._record:
            raise RuntimeError(f"station {self._name!r} was created without record=True")
        return list(self._samples)

    def __repr__(self) -> str:
        return f"Station({self._name!r}, servers={self._servers})"
