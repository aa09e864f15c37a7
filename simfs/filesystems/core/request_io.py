"""Writes as requests: client page caches, locks, write-back RPCs, data servers, targets.

Where writers of one file contend for its locks (a shared file written from several
nodes), bytes cannot move as smooth fluid flows: every write may need a lock that another
node must first give up, and giving it up means writing that node's dirty pages back as
the small, unaligned requests they are.  This module is the request-level data path of
such a phase (DESIGN.md section 4).  A write call of a process:

1. takes, in object order, the locks covering its bytes (``locking.py``: an enqueue, and
   perhaps callbacks, flushes and cancels at other nodes);
2. if its first or last page is partial, not in the node's cache, and already holds data
   on its target, reads that page first (a synchronous page read: the kernel completes a
   page before writing part of it; Lustre ``ll_prepare_partial_page``);
3. copies its bytes into the node's page cache on one core (``copy rate`` and per-call
   time); a page that is being written back cannot be changed until that write is done,
   and neighbouring records of two processes share their boundary pages;
4. leaves them dirty under the node's lock.  Dirty pages go out as write RPCs of up to
   ``rpc_size`` contiguous bytes when a full RPC has gathered, when the node's dirty
   bytes per target pass ``max_dirty_bytes_per_osc`` (the writer waits), when the lock
   is called back (synchronously: the holder's flush), and at fsync.

A write RPC crosses the client NIC, half a round trip, then holds a data-server thread
(Lustre's ``ost_io`` pool) while it crosses the server NIC, the server CPU, the
controller and the target, and returns half a round trip later; a client keeps at most
``max_rpcs_in_flight`` per target.  A controller with a write-back cache acknowledges a
write once the cache has room for it and destages behind it, lowest offsets first, so
that neighbouring small writes of different clients reach the disks together.  Each target serves one request at a time: a request
that does not continue where the last one ended costs a positioning (seek and half a
revolution) on HDDs, and a partial RAID stripe its read-modify-write
(``RaidSet.write_cost``), so that small, scattered flushes are as slow as a disk makes
them.  With client-computed parity (PanFS) the flush of a partial parity stripe reads
the stripe's old data and parity units from the blades first, then writes the new units
and the parity.

Where nothing serialises (a lock granted once per object and never called back), this
path and the fluid path agree (``tests/unit/test_request_io.py``): the request level
adds the serialisation, not a different bandwidth.
"""

from __future__ import annotations

import bisect
from collections import defaultdict, deque
from collections.abc import Generator, Hashable, Iterable
from typing import TYPE_CHECKING

import simpy
from simpy.events import Event

from simfs.engine.station import Station, ThreadPool
from simfs.filesystems.core.intervals import IntervalSet
from simfs.filesystems.core.layout import Layout
from simfs.filesystems.core.locking import PAGE_BYTES, Lock, LockManager, LockPolicy
from simfs.hardware import HddSpec

if TYPE_CHECKING:
    from simfs.filesystems.core.instance import FileSystemInstance


def object_pieces(layout: Layout, offset: int, length: int) -> list[tuple[int, int, int]]:
    """``(stripe object, start, end)`` in object offsets of ``[offset, offset + length)``."""
    return layout.pieces(offset, length)


def file_offset(layout: Layout, obj: int, obj_offset: int) -> int:
    """The file offset of byte ``obj_offset`` of stripe object ``obj``."""
    return layout.file_offset(obj, obj_offset)


class _InFlight:
    """Pages of one object being written back, sorted by start.  An overlap query looks
    back from the query's end only as far as the longest entry reaches (entries are at
    most one RPC bundle long), not over every entry before it."""

    __slots__ = ("starts", "entries", "bytes", "longest")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.entries: list[tuple[int, int, Event]] = []
        self.bytes = IntervalSet()
        self.longest = 0  # the longest entry ever added: a bound on how far back to look

    def add(self, start: int, end: int, done: Event) -> None:
        index = bisect.bisect_right(self.starts, start)
        self.starts.insert(index, start)
        self.entries.insert(index, (start, end, done))
        self.bytes.add(start, end)
        if end - start > self.longest:
            self.longest = end - start

    def remove(self, start: int, end: int, done: Event) -> None:
        index = bisect.bisect_left(self.starts, start)
        while self.entries[index][2] is not done:
            index += 1
        del self.starts[index]
        del self.entries[index]
        self.bytes.remove(start, end)
        for other_start, other_end, _ in self.overlapping(start, end):  # re-cover what others still hold
            self.bytes.add(max(start, other_start), min(end, other_end))

    def overlapping(self, start: int, end: int) -> list[tuple[int, int, Event]]:
        """The entries overlapping ``[start, end)``, latest start first.  An entry that
        starts at least the longest entry added before ``start`` ends by ``start``: the
        search stops there."""
        found = []
        reach = start - self.longest
        index = bisect.bisect_left(self.starts, end) - 1
        entries = self.entries
        while index >= 0 and entries[index][0] > reach:
            entry = entries[index]
            if entry[1] > start:
                found.append(entry)
            index -= 1
        return found


class _File:
    """One file written at request level: its layout and what its targets hold."""

    __slots__ = ("key", "layout", "stored")

    def __init__(self, key: Hashable, layout: Layout) -> None:
        self.key = key
        self.layout = layout
        #: Per object: bytes already on the target (a partial page there must be read).
        self.stored: dict[int, IntervalSet] = defaultdict(IntervalSet)


class _Target:
    """A target device taking one request at a time from its queue: the request that
    continues where the last one ended goes first (the elevator of the server's block
    layer keeps a sequential stream going), until ``run_limit`` bytes of one stream have
    gone by; then the oldest request, whatever its stream (the scheduler's fairness: a
    stream's turn is one drive *visit*, the quantity the fluid model's seek thrashing
    uses, ``SeekThrashing``).  A request's service time is set when it starts
    (``demand(sequential)``)."""

    __slots__ = (
        "_env",
        "name",
        "kind",
        "last",
        "_busy",
        "_queue",
        "busy_s",
        "completed",
        "_run",
        "_run_limit",
        "_last_size",
    )

    def __init__(self, env: simpy.Environment, name: str, kind: str, run_limit: float) -> None:
        self._env = env
        self.name = name
        self.kind = kind
        self.last: tuple[Hashable, int, int] | None = None  # (file, object, end offset)
        self._run = 0.0  # bytes of the current stream served in a row
        self._run_limit = run_limit
        self._last_size = 0
        self._busy = False
        self._queue: deque[tuple[tuple[Hashable, int, int], int, object, Event]] = deque()
        self.busy_s = 0.0
        self.completed = 0

    def submit(self, position: tuple[Hashable, int, int], size: int, demand) -> Event:
        """Queue a request at ``position`` (file, object, start) of ``size`` bytes;
        ``demand(sequential)`` gives its service seconds.  Fires when it is done."""
        done = self._env.event()
        if self._busy:
            self._queue.append((position, size, demand, done))
        else:
            self._start(position, size, demand, done)
        return done

    def _start(self, position, size, demand, done) -> None:
        self._busy = True
        sequential = self.last == position
        self._run = self._run + size if sequential else size
        self._last_size = size
        seconds = demand(sequential)
        self.last = (position[0], position[1], position[2] + size)
        self.busy_s += seconds
        self._env.timeout(seconds).callbacks.append(lambda _e: self._finish(done))

    def _finish(self, done: Event) -> None:
        self.completed += 1
        done.succeed(self._env.now)
        if not self._queue:
            self._busy = False
            return
        chosen = None
        if self._run + self._last_size / 2 <= self._run_limit:  # the visit, to the nearest request
            last = self.last
            for entry in self._queue:
                if entry[0] == last:
                    chosen = entry
                    break
        if chosen is None:
            chosen = self._queue.popleft()
        else:
            self._queue.remove(chosen)
        self._start(*chosen)


class RequestIo:
    """The request-level data path of one run (stations for every part it crosses).

    Parameters
    ----------
    instance:
        The run's file-system instance (its system, hardware costs and clients).
    policy:
        The file system's lock policy.
    parity_width:
        Components per parity stripe when clients compute parity (PanFS); 0 otherwise.
    """

    def __init__(self, instance: FileSystemInstance, policy: LockPolicy, *, parity_width: int = 0) -> None:
        system = instance.system
        env = instance.network.env
        self._env = env
        self._instance = instance
        self._system = system
        io = system.io
        names = system.NAMES
        self._rpc_size = io.rpc_size_bytes
        self._in_flight_limit = io.max_rpcs_in_flight
        # Streaming write-back moves in bundles of RPCs: a full run of contiguous dirty
        # pages goes as ``bundle`` RPCs at once, counted as that many against the window
        # (the same bytes in flight, so the same Little's-law rate, at a fraction of the
        # events).  Smaller writes (flushes, partial runs) keep their real sizes.
        # A bundle never exceeds a drive visit (below), or it would lengthen the runs the
        # targets' elevators serve between streams.
        visit = system.write_visit_bytes * system.target.data_disks if system.write_visit_bytes else float("inf")
        fit = int(visit // self._rpc_size) if visit < float("inf") else io.max_rpcs_in_flight
        self._bundle = max(1, min(io.max_rpcs_in_flight // 2, fit))
        self._bundle_bytes = self._rpc_size * self._bundle
        self._one_way = io.rpc_latency_s / 2
        self._dirty_per_target = io.max_dirty_bytes_per_osc if system.mechanisms["dirty_limit"] else 0
        self._parity_width = parity_width
        self._variability = system.variability
        nodes = len(instance.clients)
        self._clients = instance.clients
        self._cores = [
            Station(env, f"client{n}.cores", c.spec.cores, kind="client-core") for n, c in enumerate(self._clients)
        ]
        self._client_tx = [Station(env, f"client{n}.tx", kind="client") for n in range(nodes)]
        # Shared links between the clients and the servers: the clients' uplinks, and each
        # client group's (booked in order of arrival at them: approximately FIFO).
        self._uplink = Station(env, "fabric.client-uplink", kind="uplink") if system.client_uplink_Bps else None
        group_size = system.client_group_size
        self._group_uplinks = (
            [Station(env, f"fabric.group{g}-uplink", kind="group-uplink") for g in range(-(-nodes // group_size))]
            if group_size
            else []
        )
        self._client_rx = [Station(env, f"client{n}.rx", kind="client") for n in range(nodes)]
        server_name = names["server"]
        server = system.server
        self._server_threads = [ThreadPool(env, server.threads) for _ in range(system.server_count)]
        self._server_rx = [Station(env, f"{server_name}{i}.rx", kind=server_name) for i in range(system.server_count)]
        self._server_tx = [Station(env, f"{server_name}{i}.tx", kind=server_name) for i in range(system.server_count)]
        self._server_cpu = [
            Station(env, f"{server_name}{i}.cpu", kind=f"{server_name}-cpu") for i in range(system.server_count)
        ]
        self._controllers = [
            Station(env, f"{names['controller']}{i}", kind=names["controller"]) for i in range(system.controller_total)
        ]
        target_name = names["target"]
        # A stream's turn on a target: a drive visit on every data drive (HDD sets); an SSD
        # has no positioning to save, so its turns do not matter.
        self._targets = [_Target(env, f"{target_name}{i}", target_name, visit) for i in range(system.target_count)]
        controller = system.controller
        self._cache_bytes = (
            controller.cache_bytes if controller is not None and system.mechanisms["controller_cache"] else 0
        )
        self._cache_used = [0.0] * system.controller_total
        self._cache_waiters: list[list[Event]] = [[] for _ in range(system.controller_total)]
        self._cache_dirty: list[dict[tuple[Hashable, int], IntervalSet]] = [
            defaultdict(IntervalSet) for _ in range(system.target_count)
        ]
        self._destaging = [False] * system.target_count
        # What each controller's cache holds, dirty or destaged, newest last: reads of it
        # cost no disk; the oldest is evicted past the cache's size.
        self._cache_recent: list[dict[tuple[Hashable, int], IntervalSet]] = [
            defaultdict(IntervalSet) for _ in range(system.target_count)
        ]
        self._cache_order: list[deque[tuple[int, tuple[Hashable, int], int, int]]] = [
            deque() for _ in range(system.controller_total)
        ]
        self._cache_held = [0] * system.controller_total
        lock_servers: dict[Hashable, Station] = {}
        # Files in the order they were first locked: spread over the policy's lock servers
        # deterministically (a hash of a key would change from one interpreter to the next).
        file_order: dict[Hashable, int] = {}

        def server_of(key: Hashable) -> Station:
            # Lustre: the lock service of the object's OSS; others: the metadata service or
            # token managers, files spread round robin.
            if policy.per_object:
                where = self._server_of_key(key)
            else:
                where = -1 - file_order.setdefault(key, len(file_order)) % policy.servers
            if where not in lock_servers:
                lock_servers[where] = Station(env, f"lock-server{where}", kind="lock-server")
            return lock_servers[where]

        self.locks = LockManager(env, policy, nodes, server_of, self._one_way, self._flush_lock, self._lock_is_clean)
        self._files: dict[Hashable, _File] = {}
        self._dirty: list[dict[tuple[Hashable, int], IntervalSet]] = [defaultdict(IntervalSet) for _ in range(nodes)]
        self._cached: list[dict[tuple[Hashable, int], IntervalSet]] = [defaultdict(IntervalSet) for _ in range(nodes)]
        # Pages being written back per node and object: (start, end, done event).
        self._writeback: list[dict[tuple[Hashable, int], _InFlight]] = [defaultdict(_InFlight) for _ in range(nodes)]
        self._dirty_bytes: list[dict[int, int]] = [defaultdict(int) for _ in range(nodes)]
        self._in_flight: list[dict[int, int]] = [defaultdict(int) for _ in range(nodes)]
        self._outstanding: list[dict[int, int]] = [defaultdict(int) for _ in range(nodes)]
        self._rpc_waiters: list[dict[int, deque[tuple[Event, int]]]] = [defaultdict(deque) for _ in range(nodes)]
        self._space_waiters: list[dict[int, list[Event]]] = [defaultdict(list) for _ in range(nodes)]
        # Pages a process of the node is copying into now: page -> when it is free.
        self._page_busy: list[dict[tuple[Hashable, int, int], float]] = [{} for _ in range(nodes)]
        #: Per phase tag: seconds its writes spent in each part (attribution).
        self.seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        #: Requests served per part (``rpcs``, ``page_reads``, ...), for the event-rate report.
        self.counts: dict[str, int] = defaultdict(int)

    # -- files ------------------------------------------------------------------------------
    def open_file(self, key: Hashable, layout: Layout) -> None:
        if key not in self._files:
            self._files[key] = _File(key, layout)

    def _lock_key(self, file: _File, obj: int) -> Hashable:
        return (file.key, obj) if self.locks.policy.per_object else (file.key,)

    def _server_of_key(self, key: Hashable) -> int:
        file_key, obj = key  # per-object keys only
        return self._system.server_of_target(self._files[file_key].layout.targets[obj])

    # -- the process-facing API -------------------------------------------------------------
    def write(
        self, node: int, file_key: Hashable, offset: int, length: int, tag: str, *, call_bytes: int | None = None
    ) -> Generator[Event, object, None]:
        """One write call of ``length`` bytes at ``offset`` from a process on ``node``."""
        env, spent = self._env, self.seconds[tag]
        file, pieces, locks = yield from self._locked(node, file_key, offset, length, spent)
        # Partial first and last pages that hold other nodes' data: read them first.
        started = env.now
        for obj, start, end in (pieces[0], pieces[-1]) if len(pieces) > 1 else pieces[:1]:
            yield from self._complete_partial_pages(node, file, obj, start, end)
        spent["page-reads"] += env.now - started
        # The copy into the page cache, after any write-back of these pages is done and
        # after the node's other writer of a shared boundary page.
        started = env.now
        yield from self._wait_for_writeback(node, file, pieces)
        ready = env.now
        busy = self._page_busy[node]
        for obj, start, end in pieces:
            for page in {start // PAGE_BYTES, (end - 1) // PAGE_BYTES}:
                ready = max(ready, busy.get((file.key, obj, page), 0.0))
        spec = self._clients[node].spec
        demand = length / spec.copy_write_Bps
        if self._system.mechanisms["call_overhead"] and call_bytes:
            demand += spec.call_overhead_s * length / call_bytes
        finish = self._cores[node].reserve(demand, at=ready)
        for obj, start, end in pieces:
            for page in {start // PAGE_BYTES, (end - 1) // PAGE_BYTES}:
                busy[(file.key, obj, page)] = finish
        yield env.timeout(finish - env.now)
        spent["client-core"] += env.now - started
        for obj, start, end in pieces:
            key = (file.key, obj)
            self._dirty[node][key].add(start, end)
            self._cached[node][key].add(start, end)
            self._dirty_bytes[node][file.layout.targets[obj]] += end - start
        for lock in locks:
            self.locks.done(lock)
        # Write-back: full RPCs go at once; past the dirty limit the writer waits.
        started = env.now
        for obj, start, end in pieces:
            self._send_full_rpcs(node, file, obj, start, end)
        if self._dirty_per_target:
            for target in {file.layout.targets[obj] for obj, _, _ in pieces}:
                while self._dirty_bytes[node][target] > self._dirty_per_target:
                    self._fill_window(node, file, target)
                    waiter = env.event()
                    self._space_waiters[node][target].append(waiter)
                    yield waiter
        spent["rpc-window"] += env.now - started

    def direct_write(
        self, node: int, file_key: Hashable, offset: int, length: int, tag: str, *, call_bytes: int | None = None
    ) -> Generator[Event, object, None]:
        """One O_DIRECT write call: under its locks, the bytes go from the process's buffer
        straight to the targets as synchronous RPCs, and the call returns when they are
        there.  Nothing is cached, so a callback finds nothing to flush: the holder cancels
        as soon as its calls under the lock are done (Lustre's direct I/O takes the same
        extent locks as buffered I/O, ``ll_direct_IO`` through ``cl_io``)."""
        env, spent = self._env, self.seconds[tag]
        file, pieces, locks = yield from self._locked(node, file_key, offset, length, spent)
        started = env.now
        spec = self._clients[node].spec
        if self._system.mechanisms["call_overhead"] and call_bytes:
            # The system call and the page pinning; no copy (the NIC reads the user pages).
            finish = self._cores[node].reserve(spec.call_overhead_s * length / call_bytes)
            yield env.timeout(finish - env.now)
        rpcs = [env.process(self._rpc(node, file, obj, start, end, "write")) for obj, start, end in pieces]
        yield env.all_of(rpcs)
        spent["direct-io-latency"] += env.now - started
        for lock in locks:
            self.locks.done(lock)

    def _locked(self, node: int, file_key: Hashable, offset: int, length: int, spent: dict[str, float]):
        """A write call's file, its pieces per stripe object and the locks they need, taken
        in object order (no cycles between nodes waiting for each other); the wait is
        charged to ``extent-lock``."""
        file = self._files[file_key]
        pieces = sorted(object_pieces(file.layout, offset, length))
        started = self._env.now
        locks: list[Lock] = []
        if self.locks.policy.per_object:
            for obj, start, end in pieces:
                locks.append((yield from self.locks.acquire(node, (file.key, obj), start, end)))
        else:
            locks.append((yield from self.locks.acquire(node, (file.key,), offset, offset + length)))
        spent["extent-lock"] += self._env.now - started
        return file, pieces, locks

    def fsync(self, node: int, file_key: Hashable, tag: str) -> Generator[Event, object, None]:
        """Write back every dirty page of the file from ``node`` and wait for it."""
        started = self._env.now
        file = self._files[file_key]
        for obj in range(file.layout.stripe_count):
            yield from self._flush(node, file, obj, 0, 1 << 62, drop=False)
        self.seconds[tag]["fsync"] += self._env.now - started

    def drain(self, node: int, file_key: Hashable) -> None:
        """Write back the node's dirty pages of the file in the background (after a
        phase without fsync: the kernel's periodic write-back)."""
        file = self._files[file_key]

        def background() -> Generator[Event, object, None]:
            for obj in range(file.layout.stripe_count):
                yield from self._flush(node, file, obj, 0, 1 << 62, drop=False)

        self._env.process(background())

    # -- pages ------------------------------------------------------------------------------
    def _complete_partial_pages(self, node: int, file: _File, obj: int, start: int, end: int):
        key = (file.key, obj)
        cached, stored = self._cached[node][key], file.stored[obj]
        for page_start, partial in (
            (start // PAGE_BYTES * PAGE_BYTES, start % PAGE_BYTES != 0),
            ((end - 1) // PAGE_BYTES * PAGE_BYTES, end % PAGE_BYTES != 0),
        ):
            if not partial:
                continue
            page_end = page_start + PAGE_BYTES
            if cached.covers(page_start, page_end) or not stored.intersects(page_start, page_end):
                continue
            self.counts["page_reads"] += 1
            yield from self._rpc(node, file, obj, page_start, page_end, "read")
            cached.add(page_start, page_end)

    def _wait_for_writeback(self, node: int, file: _File, pieces: Iterable[tuple[int, int, int]]):
        for obj, start, end in pieces:
            for _, _, done in self._writeback[node][(file.key, obj)].overlapping(start, end):
                if not done.triggered:
                    yield done

    # -- write-back -------------------------------------------------------------------------
    def _send_full_rpcs(self, node: int, file: _File, obj: int, start: int, end: int) -> None:
        dirty = self._dirty[node][(file.key, obj)]
        bundle = self._bundle_bytes
        for run_start, run_end in dirty.within(max(0, start - bundle), end + bundle):
            # Full RPCs of contiguous dirty pages go out at once (osc_makes_rpc).
            position = run_start
            while run_end - position >= bundle:
                self._launch(node, file, obj, position, position + bundle)
                position += bundle

    def _fill_window(self, node: int, file: _File, target: int) -> None:
        """Past the dirty limit: send the oldest dirty pages of the target's objects until
        the client has its window of RPCs out (osc_check_rpcs)."""
        for obj in range(file.layout.stripe_count):
            if file.layout.targets[obj] != target:
                continue
            dirty = self._dirty[node][(file.key, obj)]
            while dirty and self._outstanding[node][target] < self._in_flight_limit:
                start, end = dirty.first()
                self._launch(node, file, obj, start, min(end, start + self._rpc_size))

    def _launch(self, node: int, file: _File, obj: int, start: int, end: int) -> Event:
        """Send the dirty pages ``[start, end)`` of an object as one write RPC (async);
        the event fires when they are on the target."""
        key = (file.key, obj)
        self._dirty[node][key].remove(start, end)
        self._outstanding[node][file.layout.targets[obj]] += 1
        done = self._env.event()
        self._writeback[node][key].add(start, end, done)
        self._env.process(self._write_rpc(node, file, obj, start, end, done))
        return done

    def _write_rpc(self, node: int, file: _File, obj: int, start: int, end: int, done: Event):
        if self._parity_width:
            yield from self._parity_write(node, file, obj, start, end)
        else:
            yield from self._rpc(node, file, obj, start, end, "write")
        key, target = (file.key, obj), file.layout.targets[obj]
        file.stored[obj].add(start, end)
        self._writeback[node][key].remove(start, end, done)
        self._dirty_bytes[node][target] -= end - start
        self._outstanding[node][target] -= 1
        done.succeed()
        # Writers past the dirty limit look again (and send more if still past it).
        waiters = self._space_waiters[node][target]
        for waiter in waiters:
            waiter.succeed()
        waiters.clear()

    def _lock_ranges(self, lock: Lock) -> list[tuple[int, int, int]]:
        file = self._files[lock.key[0]]
        if self.locks.policy.per_object:
            return [(lock.key[1], lock.start, lock.end)]
        layout = file.layout
        if lock.end - lock.start <= layout.stripe_size_bytes * layout.stripe_count:
            return object_pieces(layout, lock.start, lock.end - lock.start)
        return self._object_ranges(layout, lock.start, lock.end)

    def _lock_is_clean(self, lock: Lock) -> bool:
        file_key = lock.key[0]
        dirty, writeback = self._dirty[lock.node], self._writeback[lock.node]
        for obj, start, end in self._lock_ranges(lock):
            if dirty[(file_key, obj)].intersects(start, end):
                return False
            if writeback[(file_key, obj)].bytes.intersects(start, end):
                return False
        return True

    def _flush_lock(self, lock: Lock) -> Generator[Event, object, None]:
        """A revocation's write-back: the node's dirty pages under ``lock``, then its
        cached pages there are dropped."""
        file = self._files[lock.key[0]]
        for obj, start, end in self._lock_ranges(lock):
            yield from self._flush(lock.node, file, obj, start, end, drop=True)

    def _object_ranges(self, layout: Layout, start: int, end: int) -> list[tuple[int, int, int]]:
        """Per stripe object, an object range holding the file range ``[start, end)``
        (a superset where the file range spans several passes over a grouped layout)."""
        if layout.group_width:
            if end - start > layout.group_bytes:
                return [(obj, 0, 1 << 62) for obj in range(layout.stripe_count)]
            return layout.pieces(start, end - start)
        size, count = layout.stripe_size_bytes, layout.width
        first_unit, last_unit = start // size, (end - 1) // size
        ranges = []
        for obj in range(count):
            first = first_unit + (obj - first_unit) % count
            last = last_unit - (last_unit - obj) % count
            if first > last:
                continue
            obj_start = first // count * size + (start - first * size if first == first_unit else 0)
            obj_end = last // count * size + (end - last * size if last == last_unit else size)
            ranges.append((obj, obj_start, obj_end))
        return ranges

    def _flush(self, node: int, file: _File, obj: int, start: int, end: int, *, drop: bool):
        key = (file.key, obj)
        events = []
        for run_start, run_end in self._dirty[node][key].within(start, end):
            position = run_start
            while position < run_end:
                piece_end = min(run_end, position + self._rpc_size)
                events.append(self._launch(node, file, obj, position, piece_end))
                position = piece_end
        events += [done for _, _, done in self._writeback[node][key].overlapping(start, end) if done not in events]
        if events:
            yield self._env.all_of(events)
        if drop:
            self._cached[node][key].remove(start, end)

    # -- RPCs -------------------------------------------------------------------------------
    def _rpc(self, node: int, file: _File, obj: int, start: int, end: int, op: str):
        """Bulk RPCs of ``[start, end)`` of an object (one, or a bundle of full ones),
        page-granular on the target, within the client's window of RPCs in flight."""
        env = self._env
        target = file.layout.targets[obj]
        size = end - start
        rpcs = min(self._in_flight_limit, -(-size // self._rpc_size))
        in_flight = self._in_flight[node]
        waiters = self._rpc_waiters[node][target]
        if waiters or in_flight[target] + rpcs > self._in_flight_limit:
            # First come, first served: the completion that makes room reserves the
            # window for us before it wakes us (one wake-up per waiter, no re-checks).
            waiter = env.event()
            waiters.append((waiter, rpcs))
            yield waiter
        else:
            in_flight[target] += rpcs
        self.counts["rpcs"] += rpcs
        on_disk_start = start // PAGE_BYTES * PAGE_BYTES
        on_disk = -(-end // PAGE_BYTES) * PAGE_BYTES - on_disk_start
        client = self._clients[node].spec.network.bandwidth_Bps
        if op == "write":
            sent = self._client_tx[node].reserve(size / client)
            sent = self._shared_links(node, size, sent)
            yield env.timeout(sent + self._one_way - env.now)
        else:
            yield env.timeout(self._one_way)
        finish = yield from self._serve(target, file.key, obj, on_disk_start, on_disk, op)
        if op == "read":
            finish = self._shared_links(node, size, finish)
            finish = self._client_rx[node].reserve(size / client, at=finish + self._one_way)
            yield env.timeout(finish - env.now)
        else:
            yield env.timeout(finish + self._one_way - env.now)
        in_flight[target] -= rpcs
        while waiters and in_flight[target] + waiters[0][1] <= self._in_flight_limit:
            waiter, wanted = waiters.popleft()
            in_flight[target] += wanted
            waiter.succeed()

    def _shared_links(self, node: int, size: int, at: float) -> float:
        """The bytes cross the clients' uplink and the node's group uplink, if any."""
        system = self._system
        if self._uplink is not None:
            at = self._uplink.reserve(size / system.client_uplink_Bps, at=at)
        if self._group_uplinks:
            at = self._group_uplinks[node // system.client_group_size].reserve(size / system.group_uplink_Bps, at=at)
        return at

    def _serve(self, target: int, file_key: Hashable, obj: int, start: int, size: int, op: str):
        """A request at the server of ``target``: a thread held while the bytes cross the
        server's NIC and CPU, the controller and the target (or, for a write, until the
        controller's write-back cache has taken them); returns when it is done."""
        system = self._system
        server = system.server_of_target(target)
        pool = self._server_threads[server]
        yield from pool.acquire()
        now = self._env.now
        nic = self._server_rx[server] if op == "write" else self._server_tx[server]
        at = nic.reserve(size / system.server.network.bandwidth_Bps)
        at = self._server_cpu[server].reserve(size / system.server.cpu_Bps, at=at)
        if self._controllers:
            controller = system.controller_of_target(target)
            at = self._controllers[controller].reserve(size / system.controller.bandwidth_Bps, at=at)
            if op == "read" and self._cache_recent[target][(file_key, obj)].covers(start, start + size):
                pool.release_at(at)  # written lately: still in the controller's cache
                return at
            if op == "write" and self._cache_bytes:
                # Into the write-back cache, once it has room; destaged behind the reply.
                yield self._env.timeout(at - now)
                while self._cache_used[controller] + size > self._cache_bytes:
                    waiter = self._env.event()
                    self._cache_waiters[controller].append(waiter)
                    yield waiter
                self._cache_used[controller] += size
                self._cache_dirty[target][(file_key, obj)].add(start, start + size)
                self._remember(controller, target, (file_key, obj), start, start + size)
                if not self._destaging[target]:
                    self._destaging[target] = True
                    self._env.process(self._destage(target, controller))
                pool.release_at(self._env.now)
                return self._env.now
        if at > self._env.now:
            yield self._env.timeout(at - self._env.now)
        yield self._targets[target].submit(
            (file_key, obj, start), size, lambda sequential: self._target_demand(target, size, op, sequential)
        )
        pool.release_at(self._env.now)
        return self._env.now

    def _remember(self, controller: int, target: int, key: tuple[Hashable, int], start: int, end: int) -> None:
        self._cache_recent[target][key].add(start, end)
        order = self._cache_order[controller]
        order.append((target, key, start, end))
        self._cache_held[controller] += end - start
        while self._cache_held[controller] > self._cache_bytes and order:
            old_target, old_key, old_start, old_end = order.popleft()
            self._cache_held[controller] -= old_end - old_start
            if not self._cache_dirty[old_target][old_key].intersects(old_start, old_end):
                self._cache_recent[old_target][old_key].remove(old_start, old_end)

    def _target_demand(self, target: int, size: int, op: str, sequential: bool) -> float:
        """Seconds the target is busy with one request: its bytes at the set's rate,
        times the RAID and SSD costs of its size; on HDDs a positioning unless it
        continues where the last request ended, and a revolution for a partial-stripe
        write (read the old stripe, write it back)."""
        system, instance = self._system, self._instance
        cost = instance.target_cost(op, size)
        rate = system.target.bandwidth_Bps("write") * system.target_capacity_factor(target)
        demand = size * cost / (rate * float(self._instance.target_factors[target]))
        drive = system.target.drive
        if isinstance(drive, HddSpec) and system.mechanisms["hdd_seek"]:
            if not sequential:
                demand += drive.positioning_s
            if op == "write" and system.target.parity_disks and cost > 1 and drive.rpm:
                demand += 60.0 / drive.rpm
        return demand * self._variability.service_factor(self._instance.variability_rng)

    def _destage(self, target: int, controller: int):
        """Write the cache's dirty data of ``target`` to it, lowest offsets of each
        object first: neighbouring writes of different clients meet in the cache and go
        to the disks as one larger, better aligned request."""
        dirty = self._cache_dirty[target]
        chunk = max(self._rpc_size, self._system.target.full_stripe_bytes)
        while any(dirty.values()):
            key = next(k for k, extents in dirty.items() if extents)
            start, end = dirty[key].first()
            end = min(end, (start // chunk + 1) * chunk)
            dirty[key].remove(start, end)
            size = end - start
            yield self._targets[target].submit(
                (*key, start),
                size,
                lambda sequential, size=size: self._target_demand(target, size, "write", sequential),
            )
            self._cache_used[controller] -= end - start
            waiters = self._cache_waiters[controller]
            for waiter in waiters:
                waiter.succeed()
            waiters.clear()
        self._destaging[target] = False

    def _parity_write(self, node: int, file: _File, obj: int, start: int, end: int):
        """Client-computed RAID (PanFS): where the node's cache holds every data unit of
        the parity stripes a write-back touches, the client computes their parity from
        its cache and writes the data with its share of the parity; otherwise (a stripe
        shared with another node's write) it reads the old data and parity of the units
        it changes first, then writes them and the parity."""
        layout = file.layout
        unit = layout.stripe_size_bytes
        data_units = self._parity_width - 1
        stripe_start = self._parity_stripe_start(layout, file_offset(layout, obj, start))
        # The parity unit: kept on the slot and row of the unit after the stripe's data.
        parity_obj, parity_start = layout.locate(stripe_start + data_units * unit)
        parity_start = parity_start // unit * unit
        if self._holds_stripes(node, file, obj, start, end):
            self.counts["parity_from_cache"] += 1
            parity_bytes = -(-(end - start) // (data_units * PAGE_BYTES)) * PAGE_BYTES
        else:
            self.counts["parity_reads"] += 1
            parity_bytes = min(unit, end - start)
            yield self._env.all_of(
                [
                    self._env.process(self._rpc(node, file, obj, start, end, "read")),
                    self._env.process(self._rpc(node, file, parity_obj, parity_start, parity_start + unit, "read")),
                ]
            )
        yield self._env.all_of(
            [
                self._env.process(self._rpc(node, file, obj, start, end, "write")),
                self._env.process(
                    self._rpc(node, file, parity_obj, parity_start, parity_start + parity_bytes, "write")
                ),
            ]
        )

    def _parity_stripe_start(self, layout: Layout, offset: int) -> int:
        """The file offset where the parity stripe holding byte ``offset`` starts."""
        stripe_bytes = layout.stripe_size_bytes * (self._parity_width - 1)
        group_bytes = layout.group_bytes or (1 << 62)
        base = offset // group_bytes * group_bytes
        return base + (offset - base) // stripe_bytes * stripe_bytes

    def _holds_stripes(self, node: int, file: _File, obj: int, start: int, end: int) -> bool:
        """Whether the node's cache holds every data unit of each parity stripe that
        ``[start, end)`` of the object belongs to (dirty or written back and kept)."""
        layout = file.layout
        unit = layout.stripe_size_bytes
        cached = self._cached[node]
        for row in range(start // unit, (end - 1) // unit + 1):
            stripe_start = self._parity_stripe_start(layout, file_offset(layout, obj, max(start, row * unit)))
            for data_unit in range(self._parity_width - 1):
                data_obj, data_start = layout.locate(stripe_start + data_unit * unit)
                data_start = data_start // unit * unit
                if not cached[(file.key, data_obj)].covers(data_start, data_start + unit):
                    return False
        return True

    # -- what the phase reports -------------------------------------------------------------
    def station_usage(self) -> list[tuple[str, str, float, int]]:
        """``(name, kind, busy seconds, requests)`` of every station that served any."""
        stations = [*self._cores, *self._client_tx, *self._client_rx, *self._server_rx, *self._server_tx]
        stations += [*self._server_cpu, *self._controllers, *self._targets]
        return [(s.name, s.kind, s.busy_s, s.completed) for s in stations if s.completed]
