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
import numbers
from collections import deque
from collections.abc import Generator

import simpy
from simpy.events import Timeout

from simfs.engine.clock import clock_resolution


class _Servers:
    """What every station has: a name, a kind for attribution, a number of servers
    (validated here, named in the error)."""

    __slots__ = ("_env", "_name", "_servers", "_kind")

    def __init__(self, env: simpy.Environment, name: str, servers: int, kind: str) -> None:
        if not name:
            raise ValueError("name: a station needs a non-empty name")
        if isinstance(servers, bool) or not isinstance(servers, numbers.Integral) or servers < 1:
            raise ValueError(f"servers: station {name!r} needs a positive integer number of servers, got {servers!r}")
        self._env = env
        self._name = name
        self._servers = servers
        self._kind = kind or name

    @property
    def name(self) -> str:
        return self._name

    @property
    def servers(self) -> int:
        return self._servers

    @property
    def kind(self) -> str:
        return self._kind


class Station(_Servers):
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
        super().__init__(env, name, servers, kind)
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

    def reserve(self, demand_s: float, at: float | None = None) -> float:
        """Queue a request of ``demand_s`` seconds arriving now (or at ``at``, a time not
        before now); return its completion time.

        The caller must wait until then itself (``serve`` does it with a timeout); useful
        to chain stations without an event per hop.  Arrivals booked ahead of time are
        served in booking order, which is FIFO only if bookings come in time order: a
        chain of stations that each take one stream of requests (a server's NIC, then its
        CPU) keeps it, a station fed by several streams only approximately."""
        if not 0 <= demand_s < math.inf:  # NaN fails too
            raise ValueError(f"demand_s: station {self._name!r} needs a finite non-negative demand, got {demand_s!r}")
        if at is None:
            now = self._env.now
        elif self._env.now <= at < math.inf:  # NaN fails too
            now = at
        else:
            raise ValueError(f"at: station {self._name!r} books arrivals from now on, got {at!r} at {self._env.now!r}")
        if self.completed == 0 and math.isnan(self.first_arrival_s):
            self.first_arrival_s = now
        free_at = self._free_at
        free = free_at[0]
        start = free if free > now else now
        finish = start + demand_s
        if self._servers == 1:
            free_at[0] = finish
        else:
            heapq.heapreplace(free_at, finish)  # the earliest-free server takes it
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


class ThreadPool:
    """``threads`` service threads, each held by one request from the moment it gets it
    until a completion time the request learns only later (after lock waits, callbacks,
    the disk): requests wait in FIFO order when all are held.

    A held thread is "open" until its holder calls :meth:`release_at` with its end time;
    ended threads are freed lazily (a heap of end times), so a pool that never fills
    costs no event at all.
    """

    __slots__ = ("_env", "_threads", "_open", "_ends", "_waiters", "_wakeup_at", "waited_s", "acquired")

    def __init__(self, env: simpy.Environment, threads: int) -> None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads: a pool needs a positive integer number of threads, got {threads!r}")
        self._env = env
        self._threads = threads
        self._open = 0
        self._ends: list[float] = []
        self._waiters: deque[simpy.Event] = deque()
        self._wakeup_at = math.inf
        self.waited_s = 0.0
        self.acquired = 0

    @property
    def threads(self) -> int:
        return self._threads

    def free(self) -> int:
        """Threads free now."""
        now = self._env.now
        ends = self._ends
        while ends and ends[0] <= now:
            heapq.heappop(ends)
        return self._threads - self._open - len(ends)

    def take(self) -> bool:
        """Take a thread at once if one is free and nobody waits (True); else take
        nothing (False: :meth:`acquire` waits for one)."""
        if self.free() <= 0 or self._waiters:
            return False
        self.acquired += 1
        self._open += 1
        return True

    def acquire(self) -> Generator[simpy.Event, object, None]:
        """Take a thread (use with ``yield from``): at once if one is free and nobody
        waits, else in FIFO order when one is released."""
        if self.take():
            return
        self.acquired += 1
        since = self._env.now
        waiter = self._env.event()
        self._waiters.append(waiter)
        self._schedule_wakeup()
        yield waiter  # handed a thread by _wake
        self.waited_s += self._env.now - since

    def release_at(self, end: float) -> None:
        """The holder of an open thread will be done at ``end`` (not before now)."""
        self._open -= 1
        heapq.heappush(self._ends, end)
        if self._waiters:
            self._schedule_wakeup()

    def _schedule_wakeup(self) -> None:
        if not self._ends:
            return  # every thread is open: the next release_at schedules the wake-up
        at = self._ends[0]
        if at >= self._wakeup_at:
            return
        self._wakeup_at = at
        self._env.timeout(max(0.0, at - self._env.now)).callbacks.append(self._wake)

    def _wake(self, _event: simpy.Event) -> None:
        self._wakeup_at = math.inf
        while self._waiters and self.free() > 0:
            self._open += 1
            self._waiters.popleft().succeed()
        if self._waiters:
            self._schedule_wakeup()


class SharedStation(_Servers):
    """``servers`` identical servers shared by every request present (egalitarian
    processor sharing): with ``n`` requests each is served at ``min(1, servers / n)``.

    The model of a many-threaded server on few cores (a metadata server's request
    handlers time-sliced on its CPUs): requests that arrive together finish together, as
    under the fluid model, where a FIFO queue would release them one by one.  Completion
    order is computed in *virtual time* ``V``, which advances at the common service
    rate: a request of ``demand_s`` arriving at ``V_a`` leaves when ``V = V_a + demand_s``
    (Kleinrock, *Queueing Systems* vol. 2, section 4.4); one wake-up event is kept for
    the next departure.  M/M/1-PS has the M/M/1 mean sojourn, ``1 / (mu - lambda)``.

    ``per_request`` (default 1) is how many servers one request's work can use at once:
    more than 1 where a request is handled by several threads or processes that run
    side by side (a FUSE file system's request on a shared machine: the kernel, the
    client daemon and the server each take part, partly in parallel), so that a lone
    request takes ``demand_s / per_request`` and the station still carries at most
    ``servers`` server-seconds per second.
    """

    __slots__ = (
        "_per_request",
        "_virtual",
        "_updated",
        "_jobs",
        "_sequence",
        "_generation",
        "_wake_at",
        "completed",
        "busy_s",
        "sojourn_s",
    )

    def __init__(
        self, env: simpy.Environment, name: str, servers: int = 1, *, kind: str = "", per_request: float = 1.0
    ) -> None:
        super().__init__(env, name, servers, kind)
        if not (isinstance(per_request, (int, float)) and 1 <= per_request <= servers):
            raise ValueError(
                f"per_request: station {name!r} needs servers per request between 1 and {servers}, got {per_request!r}"
            )
        self._per_request = float(per_request)
        self._virtual = 0.0
        self._updated = env.now
        # (finish V, sequence, arrival, event, delay after the finish, callback at it)
        self._jobs: list[tuple] = []
        self._sequence = 0
        self._generation = 0
        self._wake_at = math.inf
        self.completed = 0
        self.busy_s = 0.0
        self.sojourn_s = 0.0

    def _rate(self) -> float:
        present = len(self._jobs)
        return min(self._per_request, self._servers / present) if present else self._per_request

    def _advance(self) -> None:
        now = self._env.now
        elapsed = now - self._updated
        if elapsed > 0 and self._jobs:
            self._virtual += elapsed * self._rate()
            self.busy_s += elapsed * min(len(self._jobs) * self._per_request, self._servers)
        self._updated = now

    def serve(self, demand_s: float, then_s: float = 0.0, on_finish=None) -> simpy.Event:
        """A request of ``demand_s`` server-seconds arriving now; the event fires
        ``then_s`` after it has received them (a reply's way back, without an event of
        its own); its value is the completion time.  ``on_finish(time)``, if given, is
        called at the completion itself (to free what the request held)."""
        if not (demand_s >= 0 and math.isfinite(demand_s)):
            raise ValueError(f"demand_s: station {self._name!r} needs a finite non-negative demand, got {demand_s!r}")
        # A negative delay after the service would move SimPy's clock backwards.
        if not (then_s >= 0 and math.isfinite(then_s)):
            raise ValueError(f"then_s: station {self._name!r} needs a finite non-negative delay, got {then_s!r}")
        self._advance()
        done = self._env.event()
        if demand_s == 0:
            self.completed += 1
            if on_finish is not None:
                on_finish(self._env.now)
            _trigger_after(self._env, done, then_s, self._env.now)
            return done
        self._sequence += 1
        heapq.heappush(self._jobs, (self._virtual + demand_s, self._sequence, self._env.now, done, then_s, on_finish))
        self._schedule(arrival=True)
        return done

    def _schedule(self, arrival: bool = False) -> None:
        if not self._jobs:
            self._generation += 1
            self._wake_at = math.inf
            return
        now = self._env.now
        at = now + max(clock_resolution(now), (self._jobs[0][0] - self._virtual) / self._rate())
        # An arrival only slows the others: a wake-up already set is early, not late, and
        # finds nothing to release but reschedules (one event saved per arrival).
        if arrival and self._wake_at <= at:
            return
        self._generation += 1
        self._wake_at = at
        generation = self._generation
        self._env.timeout(at - self._env.now).callbacks.append(lambda _e: self._depart(generation))

    def _depart(self, generation: int) -> None:
        if generation != self._generation:
            return  # a later wake-up replaced this one
        self._wake_at = math.inf
        self._advance()
        now = self._env.now
        # Float round-off: requests within a relative 1e-12 of their finish, or closer to
        # it than the clock can resolve at ``now``, have finished.
        limit = self._virtual + max(1e-12 * max(1.0, abs(self._virtual)), self._rate() * clock_resolution(now))
        while self._jobs and self._jobs[0][0] <= limit:
            _, _, arrived, event, then_s, on_finish = heapq.heappop(self._jobs)
            self.completed += 1
            self.sojourn_s += now - arrived
            if on_finish is not None:
                on_finish(now)
            _trigger_after(self._env, event, then_s, now)
        self._schedule()

    @property
    def per_request(self) -> float:
        """Servers one request's work can use at once."""
        return self._per_request

    def mean_in_station(self, horizon_s: float) -> float:
        """Time-average number of requests present (Little's law)."""
        return self.sojourn_s / horizon_s if horizon_s > 0 else 0.0

    def utilisation(self, horizon_s: float) -> float:
        return self.busy_s / (self._servers * horizon_s) if horizon_s > 0 else 0.0

    def __repr__(self) -> str:
        return f"SharedStation({self._name!r}, servers={self._servers})"


def _trigger_after(env: simpy.Environment, event: simpy.Event, delay: float, value: float) -> None:
    """Trigger ``event`` (succeeded with ``value``) ``delay`` seconds from now: one
    scheduled event where a timeout and a succeed would be two."""
    event._ok = True
    event._value = value
    env.schedule(event, simpy.events.NORMAL, delay)
