"""The metadata service as a request-level model: requests queue, serialise and call back.

Every metadata operation of a process is one request (an RPC), modelled one by one in
SimPy (DESIGN.md section 4: the metadata service is a place where file systems
serialise).  A request's journey::

    client node: a slot among its requests in flight    (max_mod_rpcs_in_flight for
                 create, remove, close, and one close beyond it;
                 max_metadata_rpcs_in_flight for open, stat)
    network:     half the network round trip
    server:      a service thread (held until the reply leaves)
                 [a lock callback to another client that caches the file's locks]
                 [the directory's lock, for an entry insert or delete in a directory
                  that others update too, under an "exclusive" directory lock; held
                  1 / dir_update_per_s, plus the callbacks it sends; under an
                  "operation" lock held until the request's reply reaches its client,
                  and its hand-over work when it comes from another client node]
                 the cores, shared by the requests present (processor sharing),
                 for the operation's work: cores / rate seconds (a lone request
                 uses up to request_parallelism cores at once)
    network:     the other half of the round trip

Why each part.  Lustre clients before 2.8 keep one modifying metadata RPC in flight per
node (the ``mdc`` RPC lock; ``max_mod_rpcs_in_flight`` arrived in 2.8, LU-5319), so the
ranks of a node take turns and one node's create rate is ``1 / round trip``.  A close
may take one slot beyond the limit when no other close is in flight (2.8's
``obd_mod_rpc_slot_avail_locked``, lustre/obdclass/genops.c), so one close is in flight
beside a create.  (Before 2.8 closes had a lock of their own, ``cl_close_lock``: there a
create never waited for a close, which this rule approximates.)  The
server's cores bound what all clients together get (``rate``).  ldiskfs before Lustre 2.2
guards each directory with one lock (LU-50, parallel directory operations), so inserts
into one shared directory are served one at a time.  A request whose file another client
created waits for that client to give up the locks it caches on it (a blocking callback and
its cancel: one more round trip; mdtest ``-N``).  Where the file system hands out
directory tokens that updates revoke (CXFS), every update calls back every client that
cached the directory since the last update, and each of those looks the directory up
again before its next request there: the cost grows with the number of contenders.

A lone request takes ``metadata_latency_s`` (the round trip of the network and the
request handling at both ends) plus the server's work on it (``cores / rate``);
contention adds the waits.

Statistics per phase tag (seconds the phase's requests spent in each part) become the
phase's bottleneck attribution, as fluid flows' limiter times do.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from collections.abc import Generator, Hashable
from typing import TYPE_CHECKING

import numpy as np
import simpy
from simpy.events import Event

from simfs.engine.station import SharedStation, Station, ThreadPool

if TYPE_CHECKING:
    from simfs.filesystems.core.system import FileSystem

#: Operations that modify the namespace (one client's modifying-RPC slots; a close has
#: a slot of its own beside them).
MODIFYING = frozenset({"create", "remove", "close", "mkdir", "rmdir"})
#: Operations that insert or delete a directory entry.
DIRECTORY_UPDATES = frozenset({"create", "remove", "mkdir", "rmdir"})
_RATE_OF = {"mkdir": "create", "rmdir": "remove"}


class MetadataService:
    """The metadata server of one run and the clients' request slots.

    Parameters
    ----------
    env:
        The run's SimPy environment.
    system:
        The file system (its ``metadata`` spec, ``io`` request limits, mechanisms).
    nodes:
        Client nodes in the run (each gets its own request slots).
    record:
        Keep the directory lock's queue samples for a teaching plot (``queue_samples``).
    """

    def __init__(
        self,
        env: simpy.Environment,
        system: FileSystem,
        nodes: int,
        *,
        record: bool = False,
        rng: np.random.Generator | None = None,
    ) -> None:
        spec = system.metadata
        name = system.NAMES["metadata"]
        self._env = env
        self._spec = spec
        self._name = name
        locking = system.mechanisms["mds_directory_lock"]
        self._exclusive = spec.directory_lock == "exclusive" and locking
        self._whole_operation = spec.directory_lock == "operation" and locking
        self._operation_locks: dict[Hashable, simpy.Resource] = {}
        # Directory -> the client node that last held its operation lock (it keeps it
        # until another node asks: the hand-over is paid only when the node changes).
        self._operation_holders: dict[Hashable, int] = {}
        # Many handler threads time-sliced on the cores: the cores are shared.
        # On one shared machine (a testbed) the service's cores are that machine's: a
        # phase they bind is CPU-bound, named as the data flows name it.
        self._cores_kind = (
            "host-cpu" if system.shared_host is not None and system.mechanisms["shared_host_cpu"] else name
        )
        self.cores = SharedStation(
            env, f"{name}.cores", spec.cores, kind=self._cores_kind, per_request=spec.request_parallelism
        )
        self._dir_locks: dict[Hashable, Station] = {}
        self._record = record
        self.threads = ThreadPool(env, spec.threads)
        io = system.io
        # 0: no limit.  Per node: modifying requests in flight (closes included), closes in
        # flight, other requests in flight, and the requests waiting for each pool.
        self._mod_limit = io.max_mod_rpcs_in_flight
        self._other_limit = io.max_metadata_rpcs_in_flight
        self._mod_in_flight = [0] * nodes
        self._close_in_flight = [0] * nodes
        self._other_in_flight = [0] * nodes
        # Waiting modifying requests in two queues, closes and the rest, each entry with its
        # arrival number so that the two merge back into arrival order.
        self._mod_waiters: list[deque[tuple[int, Event]]] = [deque() for _ in range(nodes)]
        self._close_waiters: list[deque[tuple[int, Event]]] = [deque() for _ in range(nodes)]
        self._arrivals = itertools.count()
        self._other_waiters: list[deque[Event]] = [deque() for _ in range(nodes)]
        self._demand = {op: spec.demand_s(op) for op in ("create", "open", "close", "stat", "remove")}
        self._threads_kind = f"{name}-threads"
        self._dir_kind = f"{name}-dir"
        self._one_way = io.metadata_latency_s / 2
        self._round_trip = io.metadata_latency_s
        self._dir_hold = 1.0 / spec.dir_update_per_s
        self._variability = system.variability
        self._rng = rng if rng is not None else np.random.default_rng(0)
        # Directory -> client nodes that cache its lookup lock (token).
        self._lookup_holders: dict[Hashable, set[int]] = defaultdict(set)
        #: Per phase tag: seconds its requests spent in each part (limiter kind -> s).
        self.seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.requests = 0

    # -- the process-facing API -----------------------------------------------------------
    def operate(
        self,
        node: int,
        ops: tuple[str, ...],
        items: int,
        tag: str,
        *,
        directory: Hashable = None,
        shared_directory: bool = False,
        owner_node: int | None = None,
        deadline: float = float("inf"),
    ) -> Generator[Event, object, int]:
        """``items`` times the requests ``ops`` (``("create", "close")``), one after the
        other, from a process on ``node`` (use with ``yield from``); returns the items done.

        ``directory`` names the directory the items live in; ``shared_directory`` says
        other processes update it too (so its lock is contended).  ``owner_node`` is the
        node whose process created the items (mdtest ``-N``): if it is another node, a
        remove first calls that node's cached locks back.  No item is started at or after
        ``deadline`` (simulated seconds; mdtest ``-W``).
        """
        for done in range(items):
            if self._env.now >= deadline:
                return done
            for op in ops:
                yield from self.request(
                    node, op, tag, directory=directory, shared_directory=shared_directory, owner_node=owner_node
                )
        return items

    def request(
        self,
        node: int,
        op: str,
        tag: str,
        *,
        directory: Hashable = None,
        shared_directory: bool = False,
        owner_node: int | None = None,
    ) -> Generator[Event, object, None]:
        """One metadata request from a process on ``node``; returns when its reply arrives."""
        env, spent = self._env, self.seconds[tag]
        base = _RATE_OF.get(op, op)
        if base not in self._demand:
            raise ValueError(f"op: unknown metadata operation {op!r}")
        slot = "close" if op == "close" else "modify" if op in MODIFYING else "other"
        if self._spec.lookup_callbacks and directory is not None and node not in self._lookup_holders[directory]:
            # The directory's token was called back since this node last looked it up.
            yield from self.request(node, "stat", tag)
            self._lookup_holders[directory].add(node)
        start = env.now
        if not self._take_slot(node, slot):
            yield from self._acquire_slot(node, slot)
        spent["client-rpc-slot"] += env.now - start
        one_way = self._one_way
        yield env.timeout(one_way)
        arrived = env.now
        if not self.threads.take():
            yield from self.threads.acquire()
        spent[self._threads_kind] += env.now - arrived
        self.requests += 1
        served_from = env.now
        if op == "remove" and owner_node is not None and owner_node != node:
            # The creator caches the file's locks: call them back and wait for the cancel.
            yield env.timeout(self._round_trip + self._spec.callback_s)
            spent["lock-callbacks"] += env.now - served_from
        if op in DIRECTORY_UPDATES and directory is not None:
            revoked = 0
            if self._spec.lookup_callbacks:
                holders = self._lookup_holders[directory]
                revoked = len(holders - {node})
                holders.clear()
                holders.add(node)
            if (shared_directory and self._exclusive) or revoked:
                hold = self._dir_hold * self._jitter() if shared_directory and self._exclusive else 0.0
                if revoked:
                    hold += self._round_trip + revoked * self._spec.callback_s
                before = env.now
                lock = self._dir_lock(directory)
                granted_done = lock.reserve(hold)
                yield env.timeout(granted_done - env.now)
                spent[self._dir_kind if not revoked else "lock-callbacks"] += env.now - before
        held = None
        handover = 0.0
        if self._whole_operation and shared_directory and op in DIRECTORY_UPDATES and directory is not None:
            held = self._operation_lock(directory).request()
            before = env.now
            yield held
            spent[self._dir_kind] += env.now - before
            if self._operation_holders.get(directory, node) != node:
                handover = self._spec.lock_handover_cpu_s
            self._operation_holders[directory] = node
        try:
            at_core = env.now
            finished = yield self.cores.serve(
                self._demand[base] * self._jitter() + handover, then_s=one_way, on_finish=self.threads.release_at
            )
        finally:
            # Given back when the reply reaches the client (which then unlocks).
            if held is not None:
                held.resource.release(held)
        spent[self._cores_kind] += finished - at_core
        spent["metadata-latency"] += 2 * one_way
        self._release_slot(node, slot)

    def _jitter(self) -> float:
        """A request's service-time factor (1 unless ``variability.service_cv``)."""
        return self._variability.service_factor(self._rng) if self._variability.service_cv else 1.0

    # -- client request slots -------------------------------------------------------------
    def _take_slot(self, node: int, slot: str) -> bool:
        """Take a slot of ``slot``'s pool at once if :meth:`_acquire_slot` would not wait
        (True); else take nothing (False)."""
        if slot == "other":
            if not self._other_limit:
                return True
            if self._other_in_flight[node] < self._other_limit:
                self._other_in_flight[node] += 1
                return True
            return False
        if not self._mod_limit:
            return True
        is_close = slot == "close"
        nobody_waits = not self._mod_waiters[node] and not self._close_waiters[node]
        if (nobody_waits and self._mod_in_flight[node] < self._mod_limit) or (
            is_close and not self._close_in_flight[node]
        ):
            self._take_mod_slot(node, is_close)
            return True
        return False

    def _acquire_slot(self, node: int, slot: str) -> Generator[Event, object, None]:
        """Wait for a slot of ``slot``'s pool ("modify", "close" or "other")."""
        if self._take_slot(node, slot):
            return
        if slot == "other":
            waiter = self._env.event()
            self._other_waiters[node].append(waiter)
            yield waiter  # the slot is handed over by the releasing request
            return
        waiter = self._env.event()
        (self._close_waiters if slot == "close" else self._mod_waiters)[node].append((next(self._arrivals), waiter))
        yield waiter  # the releasing request took the slot for us

    def _take_mod_slot(self, node: int, is_close: bool) -> None:
        self._mod_in_flight[node] += 1
        if is_close:
            self._close_in_flight[node] += 1

    def _release_slot(self, node: int, slot: str) -> None:
        if slot == "other":
            if not self._other_limit:
                return
            waiters = self._other_waiters[node]
            if waiters:
                waiters.popleft().succeed()  # hand the slot over: the count stays
            else:
                self._other_in_flight[node] -= 1
            return
        if not self._mod_limit:
            return
        self._mod_in_flight[node] -= 1
        if slot == "close":
            self._close_in_flight[node] -= 1
        # mdc_get_mod_rpc_slot's condition, in arrival order: a slot under the limit, or for
        # a close the extra one when no other close is in flight (a close may pass creates).
        # Under the limit every waiter qualifies, so the earliest go first; at the limit
        # only the earliest waiting close can, and only while no close is in flight.  (The
        # same grants in the same order as testing every waiter in turn, without walking
        # the queue: with 128 ranks a node, that walk was a third of an mdtest run.)
        others, closes = self._mod_waiters[node], self._close_waiters[node]
        while (others or closes) and self._mod_in_flight[node] < self._mod_limit:
            is_close = bool(closes) and (not others or closes[0][0] < others[0][0])
            _, waiter = (closes if is_close else others).popleft()
            self._take_mod_slot(node, is_close)
            waiter.succeed()
        if closes and not self._close_in_flight[node]:
            self._take_mod_slot(node, True)
            closes.popleft()[1].succeed()

    # -- directories ----------------------------------------------------------------------
    def _operation_lock(self, directory: Hashable) -> simpy.Resource:
        lock = self._operation_locks.get(directory)
        if lock is None:
            lock = self._operation_locks[directory] = simpy.Resource(self._env, capacity=1)
        return lock

    def _dir_lock(self, directory: Hashable) -> Station:
        lock = self._dir_locks.get(directory)
        if lock is None:
            lock = Station(self._env, f"{self._name}.dir-lock", 1, kind=f"{self._name}-dir", record=self._record)
            self._dir_locks[directory] = lock
        return lock

    def queue_samples(self) -> list[tuple[float, int]]:
        """``(time, requests at the lock)`` of the busiest directory lock (``record=True``)."""
        if not self._dir_locks:
            return []
        busiest = max(self._dir_locks.values(), key=lambda lock: lock.completed)
        return busiest.queue_samples()
