"""The distributed lock manager as a request-level model: grants, callbacks, cancels.

A client writes a file's bytes only under a write lock on them, granted by a lock server
(DESIGN.md section 4).  The locks and their rules differ between file systems; the
mechanics are shared, and that is what this module holds:

1. **Enqueue.**  A client that holds no lock covering its extent sends a request to the
   lock server (half a round trip there, the server's service time).
2. **Conflicts.**  The server grants at once if no other client holds (or waits for) an
   overlapping lock.  Otherwise it sends each holder a *blocking callback* and queues
   the request, first come first served.
3. **Revocation.**  A holder that gets the callback lets the writes using the lock finish,
   writes back its dirty pages under the lock (synchronous writes of their real sizes,
   through the data servers to the targets: ``request_io.py``), drops those pages, and
   sends a *cancel*.
4. **Grant.**  When nothing conflicts any more the server grants the request, grown to the
   largest extent that conflicts with nothing granted or waiting, if the policy grows
   locks, and tells the client (half a round trip).

The policy (:class:`LockPolicy`) says what is locked and how grants grow:

* **Lustre LDLM extent locks** (``lustre/ldlm/ldlm_extent.c``): one lock resource per
  stripe object, served by the object's OSS; requests are page-aligned extents; a grant
  grows to the largest extent free of the granted locks and short of the queued
  requests beyond it (``ldlm_extent_internal_policy_granted/_waiting``), but not
  downwards once more than 4 locks are granted or queued, and with more than 32 by at
  most 32 MiB (``LDLM_MAX_GROWN_EXTENT``) past the request's start
  (``ldlm_extent_internal_policy_fixup``).
* **PanFS parity-stripe locks**: clients compute each file's RAID parity, so two clients
  must not update one parity stripe at once: the unit is the parity stripe, granted by
  the file's metadata manager (Welch et al., FAST 2008, section 3; the PLFS paper, Bent
  et al. SC09: "small strided writes within a parity stripe serialise").
* **CXFS write tokens**: the metadata server hands out a file's write token; the unit is
  the file.
* **GPFS byte-range tokens** (Schmuck and Haskin, FAST 2002, section 3.1): from the
  file's token manager, in whole sectors, grown from the write upwards to the largest
  free range without a cap; a holder gives up only the part of its token from the
  conflicting request upwards (``partial``), and keeps and goes on using the rest.

Writers on one node share the node's locks: a lock belongs to a client node, and the
writes of its processes under it count as its users; a callback waits for them.
"""

from __future__ import annotations

import bisect
from collections import defaultdict, deque
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Annotations only: profiles name a LockPolicy, and reading one (``simfs show``)
    # should not load SimPy.
    import simpy
    from simpy.events import Event

    from simfs.engine.station import Station

#: The end of an object (an extent reaching it is open-ended).
EOF_OFFSET = 1 << 62
#: ldlm_extent.c: with more conflicting locks than this a grant does not grow downwards.
_NO_DOWNWARD_GROWTH = 4
PAGE_BYTES = 4096


@dataclass(frozen=True)
class LockPolicy:
    """What a file system locks, and how a grant grows.

    Attributes
    ----------
    name: shown in results (``"lustre-extent"``, ``"panfs-parity-stripe"``, ...).
    per_object: one lock resource per stripe object (Lustre) or per file.
    unit_bytes: requests cover whole units of this size (a page, a parity stripe, a
        block); 0: the whole file (a token).
    grow: grants grow to the largest extent free of conflicts.
    contended_locks: with more conflicting locks than this on the resource, a grant grows
        by at most ``contended_growth_bytes`` past the request's start (0: no cap).
    contended_growth_bytes: see ``contended_locks``.
    service_s: the lock server's CPU time per enqueue or cancel.
    downward: grants may grow below the request (Lustre, up to 4 conflicting locks); a
        GPFS token's desired range runs from the write's offset upwards only.
    servers: lock servers that files are spread over (GPFS token managers); a per-object
        policy uses the object's data server instead.
    one_way_s: half a round trip to a lock server (0: the file system's RPC latency).
    partial: a holder gives up only the conflicting part of its lock (GPFS: from the
        conflicting request's start upwards, or the overlap where the lock starts inside
        the request); otherwise the whole lock is cancelled (Lustre's LDLM).
    own_locks_conflict: a node's request waits for its own overlapping locks to go
        (``ldlm_extent_compat_queue`` checks every granted lock); GPFS merges a node's
        ranges instead, so a node never revokes from itself.
    """

    name: str
    per_object: bool
    unit_bytes: int
    grow: bool
    contended_locks: int = 0
    contended_growth_bytes: int = 0
    service_s: float = 20e-6
    downward: bool = True
    servers: int = 1
    one_way_s: float = 0.0
    partial: bool = False
    own_locks_conflict: bool = True

    def __post_init__(self) -> None:
        if self.unit_bytes < 0:
            raise ValueError(f"unit_bytes: must be non-negative, got {self.unit_bytes!r}")
        if self.service_s < 0:
            raise ValueError(f"service_s: must be non-negative, got {self.service_s!r}")
        if self.servers < 1:
            raise ValueError(f"servers: must be at least 1, got {self.servers!r}")
        if self.one_way_s < 0:
            raise ValueError(f"one_way_s: must be non-negative, got {self.one_way_s!r}")

    def extent(self, start: int, end: int) -> tuple[int, int]:
        """The extent a write of ``[start, end)`` must hold: whole units."""
        if self.unit_bytes == 0:
            return 0, EOF_OFFSET
        unit = self.unit_bytes
        return start // unit * unit, -(-end // unit) * unit


def lustre_extent_policy(service_s: float = 20e-6) -> LockPolicy:
    """Lustre's LDLM extent locks (``ldlm_extent.c``: 32 conflicting locks,
    ``LDLM_MAX_GROWN_EXTENT`` = 32 MiB)."""
    return LockPolicy(
        "lustre-extent",
        per_object=True,
        unit_bytes=PAGE_BYTES,
        grow=True,
        contended_locks=32,
        contended_growth_bytes=32 << 20,
        service_s=service_s,
    )


@dataclass(eq=False)
class Lock:
    """A granted lock of one client node on ``[start, end)`` of a resource."""

    node: int
    key: Hashable
    start: int
    end: int
    #: Writes of the node's processes using it now.
    users: int = 0
    #: The server has sent a blocking callback: it is being revoked.
    blocked: bool = False
    #: The client got the callback: no new writes may use it.
    cancelling: bool = False
    #: Gone from the server (cancelled after a callback, or dropped from the client's LRU).
    cancelled: bool = False
    idle: Event | None = None
    #: A partial revocation in progress (``LockPolicy.partial``): fires when the holder
    #: has given up ``revoking`` and holds the rest as a new lock.
    revoked: Event | None = None
    revoking: tuple[int, int] | None = None

    def covers(self, start: int, end: int) -> bool:
        return self.start <= start and end <= self.end


@dataclass(eq=False)
class _Request:
    node: int
    key: Hashable
    start: int
    end: int
    granted: Event
    #: The granted locks it was last found waiting for (until one is gone it cannot be
    #: granted, so the server need not look again).
    blockers: tuple[Lock, ...] = ()


class _LockIndex:
    """Locks sorted by start and indexed by 1 MiB bucket: an overlap query looks at the
    buckets it spans, and at the few locks too long to index (a first grant to the end of
    the object)."""

    __slots__ = ("locks", "starts", "buckets", "long")

    BUCKET = 1 << 20
    #: Locks spanning more buckets than this are kept in ``long`` instead.
    MAX_SPAN = 64

    def __init__(self) -> None:
        self.locks: list[Lock] = []
        self.starts: list[int] = []
        self.buckets: dict[int, list[Lock]] = defaultdict(list)
        self.long: list[Lock] = []

    def __len__(self) -> int:
        return len(self.locks)

    def _span(self, lock: Lock) -> range | None:
        first, last = lock.start // self.BUCKET, (lock.end - 1) // self.BUCKET
        return range(first, last + 1) if last - first < self.MAX_SPAN else None

    def add(self, lock: Lock) -> None:
        index = bisect.bisect_right(self.starts, lock.start)
        self.starts.insert(index, lock.start)
        self.locks.insert(index, lock)
        span = self._span(lock)
        if span is None:
            self.long.append(lock)
        else:
            for bucket in span:
                self.buckets[bucket].append(lock)

    def remove(self, lock: Lock) -> None:
        index = bisect.bisect_left(self.starts, lock.start)
        while self.locks[index] is not lock:
            index += 1
        del self.starts[index]
        del self.locks[index]
        span = self._span(lock)
        if span is None:
            self.long.remove(lock)
        else:
            for bucket in span:
                self.buckets[bucket].remove(lock)

    def overlapping(self, start: int, end: int) -> list[Lock]:
        """Locks overlapping ``[start, end)``."""
        found = [lock for lock in self.long if lock.start < end and start < lock.end]
        first, last = start // self.BUCKET, (end - 1) // self.BUCKET
        if last - first >= self.MAX_SPAN:
            return found + [lock for lock in self.locks if lock.start < end and start < lock.end and lock not in found]
        seen = set()
        buckets = self.buckets
        for bucket in range(first, last + 1):
            for lock in buckets.get(bucket, ()):
                if lock.start < end and start < lock.end and id(lock) not in seen:
                    seen.add(id(lock))
                    found.append(lock)
        return found


class _Resource:
    """A lock resource: its granted locks (indexed) and its queue."""

    __slots__ = ("index", "waiting")

    def __init__(self) -> None:
        self.index = _LockIndex()
        self.waiting: list[_Request] = []

    @property
    def granted(self) -> list[Lock]:
        return self.index.locks

    @property
    def starts(self) -> list[int]:
        return self.index.starts

    def add(self, lock: Lock) -> None:
        self.index.add(lock)

    def remove(self, lock: Lock) -> None:
        self.index.remove(lock)

    def overlapping(self, start: int, end: int) -> list[Lock]:
        return self.index.overlapping(start, end)


class _Held:
    """One client node's locks on one resource: indexed, and in grant order (its LRU)."""

    __slots__ = ("index", "order")

    def __init__(self) -> None:
        self.index = _LockIndex()
        self.order: deque[Lock] = deque()

    def __len__(self) -> int:
        return len(self.order)

    def add(self, lock: Lock) -> None:
        self.index.add(lock)
        self.order.append(lock)

    def remove(self, lock: Lock) -> None:
        self.index.remove(lock)
        self.order.remove(lock)


def _overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


class LockManager:
    """The lock servers of a run and the locks every client node holds.

    Parameters
    ----------
    env:
        The run's SimPy environment.
    policy:
        What is locked and how grants grow.
    nodes:
        Client nodes in the run.
    server_of:
        The lock server (a :class:`Station`) that serves a resource key.
    one_way_s:
        Half a client-server round trip (requests, callbacks, cancels, grants).
    flush:
        ``flush(lock)``: a generator that writes back the node's dirty pages under the
        lock and drops them (the revocation's write-back; ``request_io.py``).
    clean:
        ``clean(lock)``: whether the node holds no dirty page under the lock (the LRU
        drops only such locks).
    lru_locks:
        locks a client node keeps on one resource before it cancels unused ones (an
        estimate: Lustre sizes its lock LRU dynamically, ``ldlm.namespaces.*.lru_size``;
        a few per object keeps a writer's recent extents).
    """

    def __init__(
        self,
        env: simpy.Environment,
        policy: LockPolicy,
        nodes: int,
        server_of: Callable[[Hashable], Station],
        one_way_s: float,
        flush: Callable[[Lock], Generator[Event, object, None]],
        clean: Callable[[Lock], bool] = lambda lock: True,
        lru_locks: int = 16,
    ) -> None:
        self._env = env
        self.policy = policy
        self._server_of = server_of
        self._one_way = policy.one_way_s or one_way_s
        self._flush = flush
        self._clean = clean
        self.lru_locks = lru_locks
        self._resources: dict[Hashable, _Resource] = defaultdict(_Resource)
        self._held: list[dict[Hashable, _Held]] = [defaultdict(_Held) for _ in range(nodes)]
        self._pending: list[dict[Hashable, list[_Request]]] = [defaultdict(list) for _ in range(nodes)]
        #: Counters: requests sent, callbacks sent, grants.
        self.enqueues = 0
        self.callbacks = 0

    # -- the client side ------------------------------------------------------------------
    def held(self, node: int, key: Hashable, start: int, end: int) -> Lock | None:
        """A lock of ``node`` covering ``[start, end)`` that new writes may use."""
        held = self._held[node].get(key)
        if held is None:
            return None
        for lock in held.index.overlapping(start, end):
            if not lock.cancelling and lock.covers(start, end):
                return lock
        return None

    def acquire(self, node: int, key: Hashable, start: int, end: int) -> Generator[Event, object, Lock]:
        """A lock of ``node`` covering the extent of ``[start, end)`` (use with ``yield
        from``; returns the lock).  The caller counts itself a user and must call
        :meth:`done` when its write is over."""
        start, end = self.policy.extent(start, end)
        while True:
            lock = self.held(node, key, start, end)
            if lock is not None:
                lock.users += 1
                return lock
            # Another process of the node may have asked already: wait for its answer.
            pending = next(
                (r for r in self._pending[node][key] if r.start <= start and end <= r.end and not r.granted.triggered),
                None,
            )
            if pending is not None:
                yield pending.granted
                continue
            # A lock of the node is being cut back: what it keeps may cover this write.
            shrinking = self._shrinking(node, key, start, end)
            if shrinking is not None:
                yield shrinking
                continue
            request = _Request(node, key, start, end, self._env.event())
            self._pending[node][key].append(request)
            self.enqueues += 1
            yield self._env.timeout(self._one_way)
            done = self._server_of(key).reserve(self.policy.service_s)
            yield self._env.timeout(done - self._env.now)
            resource = self._resources[key]
            resource.waiting.append(request)
            self._reprocess(key, resource)
            lock = yield request.granted
            self._pending[node][key].remove(request)
            # Granted with the requester's reference already on it (``_deliver``), so a
            # callback that arrives with the grant waits for this write: otherwise two
            # nodes could take a lock from each other forever without either writing.
            return lock

    def _shrinking(self, node: int, key: Hashable, start: int, end: int) -> Event | None:
        held = self._held[node].get(key)
        if held is None or not self.policy.partial:
            return None
        for lock in held.index.overlapping(start, end):
            if lock.revoked is not None:
                return lock.revoked
        return None

    def done(self, lock: Lock) -> None:
        """A write under ``lock`` is over."""
        lock.users -= 1
        if lock.users == 0 and lock.idle is not None:
            lock.idle.succeed()
            lock.idle = None

    def locks_of(self, node: int, key: Hashable) -> list[Lock]:
        held = self._held[node].get(key)
        return list(held.order) if held is not None else []

    # -- the server side ------------------------------------------------------------------
    def _reprocess(self, key: Hashable, resource: _Resource) -> None:
        """Grant what can be granted, first come first served; call back what blocks.

        A request waits for every granted lock overlapping it, its own node's included
        (a node asks again only when its lock is being called back, and the new lock is
        granted once the old one is gone: ``ldlm_extent_compat_queue`` checks every
        granted lock), and for earlier waiting requests overlapping it."""
        still_waiting: list[_Request] = []
        queue = resource.waiting
        for position, request in enumerate(queue):
            for lock in request.blockers:  # a loop, not any(): this runs millions of times
                if not lock.cancelled:
                    break
            else:
                lock = None
            if lock is not None:
                still_waiting.append(request)  # still waits for the same holders
                continue
            blockers = tuple(resource.overlapping(request.start, request.end))
            if blockers and not self.policy.own_locks_conflict:
                blockers = tuple(lock for lock in blockers if lock.node != request.node)
            if blockers:
                for lock in blockers:
                    if not lock.blocked:
                        self._call_back(lock, request)
                request.blockers = blockers
                still_waiting.append(request)
                continue
            if any(_overlap(other.start, other.end, request.start, request.end) for other in still_waiting):
                still_waiting.append(request)  # an earlier request for these bytes goes first
                continue
            start, end = self._grown(resource, request, still_waiting + queue[position + 1 :])
            lock = Lock(request.node, key, start, end)
            resource.add(lock)
            self._env.timeout(self._one_way).callbacks.append(
                lambda _e, lock=lock, request=request: self._deliver(lock, request)
            )
        resource.waiting = still_waiting

    def _grown(self, resource: _Resource, request: _Request, waiting: list[_Request]) -> tuple[int, int]:
        """The granted extent, as Lustre's ``ldlm_extent_policy`` grows it: from the
        whole object down to the nearest granted lock on either side, not downwards at all
        once more than 4 locks are granted or queued, not past the start of a queued
        request beyond it, and (``_fixup``) by at most 32 MiB past the request's start
        with more than 32."""
        policy = self.policy
        if not policy.grow:
            return request.start, request.end
        start, end = request.start, request.end
        low, high = 0, EOF_OFFSET
        granted, starts = resource.granted, resource.starts
        conflicting = len(granted)
        if conflicting > _NO_DOWNWARD_GROWTH or not policy.downward:
            low = start
        # Granted locks (none overlaps the request, or it would be waiting): the nearest
        # ending before it and the nearest starting after it.
        index = bisect.bisect_left(starts, start) - 1
        if index >= 0:
            low = max(low, granted[index].end)
        index = bisect.bisect_left(starts, end)
        if index < len(granted):
            high = min(high, granted[index].start)
        # Queued requests (ldlm_extent_internal_policy_waiting).
        for other in waiting:
            if low == start and high == end:
                break
            conflicting += 1
            if conflicting > _NO_DOWNWARD_GROWTH:
                low = start
            if not _overlap(other.start, other.end, low, high) or _overlap(other.start, other.end, start, end):
                continue  # out of reach, or a ping-pong no extent avoids
            if other.start < start and low != start:
                low = min(other.end, start)
            if other.end > end:
                high = max(other.start, end)
        if policy.contended_locks and conflicting > policy.contended_locks:
            high = min(high, start + policy.contended_growth_bytes)
        unit = policy.unit_bytes or 1
        low = -(-low // unit) * unit
        high = high // unit * unit if high < EOF_OFFSET else high
        return min(low, start), max(high, end)

    def _deliver(self, lock: Lock, request: _Request) -> None:
        held = self._held[lock.node][lock.key]
        held.add(lock)
        # The enqueuing process's reference (Lustre's ldlm_cli_enqueue takes it with the
        # grant): the holder cannot cancel the lock before that process has written.
        lock.users += 1
        request.granted.succeed(lock)
        if len(held) > self.lru_locks:
            self._trim(held, keep=lock)

    def _trim(self, held: _Held, keep: Lock) -> None:
        """The client's lock LRU: past ``lru_locks`` locks on one resource it cancels the
        oldest while they are unused and clean (early lock cancellation, sent with its next
        request: no round trip of its own); the first that cannot go yet (in use, dirty)
        stops it until the next grant."""
        while len(held) > self.lru_locks:
            lock = held.order[0]
            if lock is keep or lock.users or lock.blocked or lock.cancelling or not self._clean(lock):
                return
            held.remove(lock)
            lock.cancelled = True
            self._resources[lock.key].remove(lock)

    def _call_back(self, lock: Lock, request: _Request) -> None:
        lock.blocked = True
        self.callbacks += 1
        part = self._revocable_part(lock, request) if self.policy.partial else None
        if part is None:
            self._env.timeout(self._one_way).callbacks.append(lambda _e: self._env.process(self._cancel(lock)))
        else:
            self._env.timeout(self._one_way).callbacks.append(
                lambda _e: self._env.process(self._give_up_part(lock, *part))
            )

    @staticmethod
    def _revocable_part(lock: Lock, request: _Request) -> tuple[int, int, int, int] | None:
        """What a partial revocation takes and what the holder keeps: ``(revoked start,
        revoked end, kept start, kept end)``; None where nothing would be kept."""
        if lock.start < request.start:
            # The requester wants from its start upwards (its desired range).
            return request.start, lock.end, lock.start, request.start
        if request.end < lock.end:
            return lock.start, request.end, request.end, lock.end
        return None

    def _give_up_part(self, lock: Lock, start: int, end: int, kept_start: int, kept_end: int):
        """The holder's side of a partial revocation: wait for its writes, write back the
        dirty data in ``[start, end)``, hold ``[kept_start, kept_end)`` as a new lock, and
        tell the server."""
        lock.cancelling = True
        lock.revoked = self._env.event()
        lock.revoking = (start, end)
        if lock.users:
            lock.idle = self._env.event()
            yield lock.idle
        yield from self._flush(Lock(lock.node, lock.key, start, end))
        kept = Lock(lock.node, lock.key, kept_start, kept_end)
        held = self._held[lock.node][lock.key]
        held.remove(lock)
        held.add(kept)
        revoked, lock.revoked = lock.revoked, None
        revoked.succeed()
        yield self._env.timeout(self._one_way)
        done = self._server_of(lock.key).reserve(self.policy.service_s)
        yield self._env.timeout(done - self._env.now)
        resource = self._resources[lock.key]
        resource.remove(lock)
        resource.add(kept)
        lock.cancelled = True
        self._reprocess(lock.key, resource)

    def _cancel(self, lock: Lock) -> Generator[Event, object, None]:
        """The holder's side of a revocation: wait for its writes, flush, cancel."""
        lock.cancelling = True
        if lock.users:
            lock.idle = self._env.event()
            yield lock.idle
        yield from self._flush(lock)
        self._held[lock.node][lock.key].remove(lock)
        yield self._env.timeout(self._one_way)
        done = self._server_of(lock.key).reserve(self.policy.service_s)
        yield self._env.timeout(done - self._env.now)
        resource = self._resources[lock.key]
        resource.remove(lock)
        lock.cancelled = True
        self._reprocess(lock.key, resource)
