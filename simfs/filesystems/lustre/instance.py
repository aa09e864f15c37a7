"""A Lustre model built for one run: the resources, and the paths that I/O takes.

Data path of a buffered write from a client to a file striped over OSTs ``o_k`` that
hold fractions ``f_k`` of the rank's bytes (``sum f_k = 1``)::

    client core (copy)  ->  client NIC tx  ->  fabric core  ->
        for each OSS s:   NIC rx and CPU, weight sum(f_k for o_k on s)
        for each OST o_k: controller (if any) and the OST device, weight f_k

Reads take the opposite NIC directions.  An SSD OST's capacity is its write bandwidth;
a read byte costs ``write_Bps / read_Bps`` of it, so that mixed traffic shares one device.

Rate caps (per rank): one core's copy rate for buffered I/O; the RPC window
``touched_osts x max_rpcs_in_flight x rpc_size / rpc_latency`` (Little's law: at most
that many bytes in flight per round trip); for buffered reads the readahead window,
``max_read_ahead_bytes / readers on the node / rpc_latency`` (the client's readahead
budget is shared by the files it reads, and a reader can have no more in flight than it
has read ahead); for O_DIRECT one transfer per round trip.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from simfs.engine import Flow, FluidNetwork, Path, Resource
from simfs.engine.resource import combine_load_models
from simfs.filesystems.lustre.layout import Layout, OstAllocator
from simfs.filesystems.lustre.system import LustreSystem
from simfs.hardware import ClientNode, HddSpec, LinkSpec, Server, SsdSpec, SwitchSpec
from simfs.hardware.controller import PrefetchThrash
from simfs.hardware.hdd import SeekThrashing
from simfs.hardware.incast import incast_goodput_factor


@dataclass(frozen=True)
class RateCap:
    """A rank's rate cap and what sets it (reported as the bottleneck when it binds)."""

    rate_Bps: float
    reason: str


class LustreInstance:
    """The resources of ``system`` for a run on ``nodes`` client nodes."""

    def __init__(
        self,
        system: LustreSystem,
        network: FluidNetwork,
        nodes: int,
        rng: np.random.Generator,
        stripe_offset: int | None = None,
    ) -> None:
        if nodes > system.client_count:
            raise ValueError(f"nodes: {system.name} has {system.client_count} clients, asked for {nodes}")
        self.system = system
        self.network = network
        self.clients: list[ClientNode] = [system.client_of(i).build(i) for i in range(nodes)]
        fabric = SwitchSpec(
            port_count=system.client_count + system.oss_count + 1,
            port_bandwidth_Bps=system.client.network.bandwidth_Bps,
            blocking_factor=system.fabric_blocking_factor,
        )
        self.fabric = fabric.core_resource()
        # Clients on their own switch (a cluster's edge) reach the servers over shared uplinks.
        self.uplink = (
            Resource("fabric.client-uplink", system.client_uplink_Bps, kind="uplink")
            if system.client_uplink_Bps
            else None
        )
        names = system.NAMES
        server, target, metadata = names["server"], names["target"], names["metadata"]
        self.mds = Resource(f"{metadata}.service", 1.0, kind=metadata, unit="s")
        # One shared directory at most per run: unique directories never contend.
        self.shared_directory = Resource(
            f"{metadata}.shared-directory", system.mds.dir_update_per_s, kind=f"{metadata}-dir", unit="op"
        )
        self.oss: list[Server] = [system.oss.build(f"{server}{i}", server) for i in range(system.oss_count)]
        ost_capacity = system.ost.bandwidth_Bps("write")
        thrash = None
        if system.mechanisms["hdd_seek"] and isinstance(system.ost.drive, HddSpec):
            thrash = SeekThrashing(system.ost.drive, system.read_visit_bytes, system.write_visit_bytes)
        prefetch = None
        if system.mechanisms["controller_prefetch"] and system.controller is not None:
            segments_per_ost = system.controller.cache_segments * system.controller_total / system.ost_count
            read_request = min(system.tunables.rpc_size_bytes, system.tunables.stripe_size_bytes)
            prefetch = PrefetchThrash(system.controller, segments_per_ost, read_request)
        thrash = combine_load_models(thrash, prefetch)
        self.osts = [
            Resource(f"{target}{i}", ost_capacity * system.ost_capacity_factor(i), kind=target, load_model=thrash)
            for i in range(system.ost_count)
        ]
        self.ost_read_weight = ost_capacity / system.ost.bandwidth_Bps("read")
        self.raid_threads = (
            [
                Resource(f"{target}{i}.md-thread", system.ost.write_thread_Bps, kind="raid-thread")
                for i in range(system.ost_count)
            ]
            if system.ost.write_thread_Bps and system.mechanisms["md_raid_thread"]
            else []
        )
        handoff = system.tunables.lock_handoff_s
        self.locks = [
            Resource(f"{target}{i}.extent-locks", 1.0 / handoff, kind="extent-lock", unit="op")
            for i in range(system.ost_count)
        ]
        self.controllers = (
            [
                system.controller.resource(f"{names['controller']}{i}", kind=names["controller"])
                for i in range(system.controller_total)
            ]
            if system.controller is not None
            else []
        )
        for client in self.clients:
            network.add_all(client.resources)
        network.add(self.fabric)
        if self.uplink is not None:
            network.add(self.uplink)
        network.add(self.mds)
        network.add(self.shared_directory)
        for server in self.oss:
            network.add_all(server.resources)
        network.add_all(self.osts)
        network.add_all(self.locks)
        network.add_all(self.raid_threads)
        network.add_all(self.controllers)
        offset = system.tunables.stripe_offset if stripe_offset is None else stripe_offset
        self.allocator = OstAllocator(
            [system.oss_of_ost(i) for i in range(system.ost_count)], offset, rng, system.excluded_osts
        )

    # -- metadata -----------------------------------------------------------------------
    def metadata(self, op: str, tag: int = 0, *, items: int = 1, shared_directory: bool = False) -> Flow:
        """``items`` metadata operations of one process, one at a time.

        ``op`` is an MDS operation (``create``, ``open``, ``close``, ``stat``,
        ``remove``) or several joined by ``+`` (``"create+close"``: both per item, each a
        round trip).  Creates and removes in a ``shared_directory`` also hold its lock.
        """
        mds = self.system.mds
        ops = op.split("+")
        path: list[tuple[Resource, float]] = [(self.mds, sum(1.0 / mds.rate(o) for o in ops))]
        updates = sum(o in ("create", "remove") for o in ops)
        if shared_directory and updates and self.system.mechanisms["mds_directory_lock"]:
            path.append((self.shared_directory, float(updates)))
        return self.network.transfer(
            float(items),
            path,
            rate_cap=1.0 / (len(ops) * self.system.tunables.metadata_latency_s),
            name=f"{self.system.NAMES['metadata']}.{op}",
            tag=tag,
        )

    def allocate(self, stripe_count: int, stripe_size_bytes: int) -> Layout:
        return self.allocator.allocate(stripe_count, stripe_size_bytes)

    # -- data ---------------------------------------------------------------------------
    def data_path(
        self,
        node: int,
        layout: Layout,
        stripe_share: np.ndarray,
        op: str,
        *,
        copy: bool,
        network: bool = True,
        disk: bool = True,
        request_bytes: float | None = None,
        lock_handoffs_per_byte: float = 0.0,
        call_bytes: float | None = None,
        fetch_fraction: float = 1.0,
        disk_fraction: float = 1.0,
    ) -> Path:
        """The path of a rank's data on ``node``; ``stripe_share`` sums to 1.

        The path has three parts, each of which can be left out to model a buffer
        between them: ``copy``, the client core's copy (buffered I/O); ``network``, from
        the client NIC through the OSS to the controller; ``disk``, the OST devices.
        (``copy`` alone: bytes landing in the page cache; ``copy`` and ``network``: bytes
        landing in a controller's write-back cache; ``disk`` alone: its destaging.)
        ``request_bytes`` is the size of the requests reaching the OSTs (default: a bulk
        RPC, at most a stripe); it sets the RAID, SSD and OSS-thread costs.
        ``lock_handoffs_per_byte`` loads the OSTs' extent-lock resources (shared-file
        writes, ``locks.py``).  ``call_bytes`` is the application's call size (its
        per-call core time, ``call_overhead``).  Reads of data other ranks read too move
        only ``fetch_fraction`` of the rank's bytes over the network (the rest comes from
        the node's page cache) and read ``disk_fraction`` of those from the drives (the
        rest from the servers' cache).
        """
        client = self.clients[node]
        path: list[tuple[Resource, float]] = []
        if copy:
            path.append((client.cpu, client.spec.core_seconds_per_byte(op, self.effective_call_bytes(call_bytes))))
        request = request_bytes or self.request_bytes(layout)
        # Parity written by the client crosses the network and lands on the targets too.
        sent = self.system.write_redundancy if op == "write" else fetch_fraction
        if network:
            nic = client.nic_tx if op == "write" else client.nic_rx
            path.append((nic, sent / self._incast(client.spec.network, layout, stripe_share, op)))
            if self.system.mechanisms["fabric_oversubscription"]:
                path.append((self.fabric, sent))
            if self.uplink is not None:
                path.append((self.uplink, sent))
        threads = self.system.oss.thread_cost_per_byte(request) if self.system.mechanisms["oss_threads"] else 0.0
        ost_weight = self.ost_cost(op, request) * sent * disk_fraction
        share_sent = (stripe_share * sent).tolist()
        oss_share: dict[int, float] = defaultdict(float)
        for k, share in enumerate(stripe_share):
            if share <= 0:
                continue
            ost = layout.osts[k]
            oss_share[self.system.oss_of_ost(ost)] += share_sent[k]
            if network and self.controllers:
                path.append((self.controllers[self.system.controller_of_ost(ost)], share_sent[k] * disk_fraction))
            if network and lock_handoffs_per_byte > 0:
                path.append((self.locks[ost], share * lock_handoffs_per_byte))
            if disk:
                path.append((self.osts[ost], share * ost_weight))
                if op == "write" and self.raid_threads:
                    path.append((self.raid_threads[ost], share_sent[k]))
        if network:
            for oss_index, share in oss_share.items():
                server = self.oss[oss_index]
                path.append((server.nic_rx if op == "write" else server.nic_tx, share))
                path.append((server.cpu, share))
                if threads > 0:
                    path.append((server.threads, share * threads))
        # Bytes served from the page cache (fetch_fraction 0) load nothing beyond the core.
        return [(resource, weight) for resource, weight in path if weight > 0]

    def server_path(self, ost: int, op: str, request_bytes: float) -> Path:
        """The path of I/O issued on the OSS itself (obdfilter-survey): its CPU, the
        controller, the OST; no client, no network, no bulk-RPC service threads."""
        path: list[tuple[Resource, float]] = [(self.oss[self.system.oss_of_ost(ost)].cpu, 1.0)]
        if self.controllers:
            path.append((self.controllers[self.system.controller_of_ost(ost)], 1.0))
        layout = Layout((ost,), int(request_bytes))
        return path + self.data_path(0, layout, np.ones(1), op, copy=False, network=False, request_bytes=request_bytes)

    def write_back_cache_bytes(self, layout: Layout, stripe_share: np.ndarray, writers: dict[int, int]) -> float:
        """Bytes of a rank's write its controllers' write-back caches absorb: each
        controller's cache shared evenly by the ``writers`` (per controller index) using
        it, taken in proportion to the rank's bytes there (0 with the mechanism off)."""
        controller = self.system.controller
        if controller is None or not controller.cache_bytes or not self.system.mechanisms["controller_cache"]:
            return 0.0
        absorbed = 0.0
        for k, share in enumerate(stripe_share):
            if share > 0:
                index = self.system.controller_of_ost(layout.osts[k])
                absorbed += share * controller.cache_bytes / max(1, writers.get(index, 1))
        return absorbed

    def controllers_of(self, layout: Layout) -> set[int]:
        return {self.system.controller_of_ost(ost) for ost in layout.osts}

    def ost_cost(self, op: str, request_bytes: float) -> float:
        """OST capacity used per byte of ``op`` in ``request_bytes`` requests.

        The capacity is the set's write bandwidth; a read byte costs write/read of it.
        RAID parity (read-modify-write), an SSD's IOPS bound and its write cliff each
        multiply the cost when their mechanism is on.
        """
        ost, mechanisms = self.system.ost, self.system.mechanisms
        cost = 1.0 if op == "write" else self.ost_read_weight
        if op == "write" and mechanisms["raid_parity"]:
            cost *= ost.write_cost(request_bytes)
        if isinstance(ost.drive, SsdSpec):
            if mechanisms["ssd_iops"]:
                cost *= ost.drive.request_cost(op, ost.drive_request_bytes(request_bytes))
            if op == "write" and mechanisms["ssd_write_cliff"]:
                cost *= ost.drive.write_amplification
        return cost

    def request_bytes(self, layout: Layout, direct_transfer_bytes: int | None = None) -> int:
        """Size of the requests that reach an OST: a bulk RPC for buffered I/O, each
        transfer as issued for O_DIRECT; never more than a stripe (an RPC goes to one OST)."""
        size = min(self.system.tunables.rpc_size_bytes, layout.stripe_size_bytes)
        return size if direct_transfer_bytes is None else min(size, direct_transfer_bytes)

    def effective_call_bytes(self, call_bytes: float | None) -> float | None:
        """The call size that sets per-call core time (None with ``call_overhead`` off)."""
        return call_bytes if self.system.mechanisms["call_overhead"] else None

    def core_Bps(self, node: int, op: str, call_bytes: float) -> float:
        """What one process on ``node`` moves through the page cache on one core, in
        calls of ``call_bytes``: the cap of buffered I/O before any network limit."""
        return self.clients[node].spec.core_Bps(op, self.effective_call_bytes(call_bytes))

    def _incast(self, link: LinkSpec, layout: Layout, stripe_share: np.ndarray, op: str) -> float:
        """Goodput factor of a read over a TCP client ``link`` (``simfs.hardware.incast``)."""
        system = self.system
        if op != "read" or not system.mechanisms["tcp_incast"] or link.transport != "tcp":
            return 1.0
        servers = system.incast_senders([layout.osts[k] for k, share in enumerate(stripe_share) if share > 0])
        return incast_goodput_factor(
            servers,
            self.request_bytes(layout),
            link.bandwidth_Bps,
            system.port_buffer_bytes,
            system.tcp_burst_bytes,
            system.rto_min_s,
        )

    def rate_cap(
        self,
        layout: Layout,
        stripe_share: np.ndarray,
        op: str,
        *,
        direct: bool,
        transfer_size_bytes: int,
        readers_on_node: int = 1,
        node: int = 0,
    ) -> RateCap:
        """The tightest per-rank cap and its reason."""
        t = self.system.tunables
        caps = []
        if direct:
            # One request in flight: each costs the round trip plus its own transfer.
            per_request = t.rpc_latency_s + transfer_size_bytes / self.lone_request_Bps(node, op)
            caps.append(RateCap(transfer_size_bytes / per_request, "direct-io-latency"))
        else:
            caps.append(RateCap(self.core_Bps(node, op, transfer_size_bytes), "client-core"))
            caps.append(RateCap(self.rpc_window_Bps(stripe_share), "rpc-window"))
            if op == "read" and self.system.mechanisms["readahead_window"]:
                window = t.max_read_ahead_bytes / readers_on_node
                caps.append(RateCap(window / t.rpc_latency_s, "readahead-window"))
        return min(caps, key=lambda cap: cap.rate_Bps)

    def lone_request_Bps(self, node: int, op: str) -> float:
        """The rate of one request alone on its path, up to where it completes: the client
        and server links, the server, and the first stage that holds the data (a
        controller's write-back cache for a write, else the target; a request no larger
        than a stripe goes to one target)."""
        system = self.system
        rate = min(system.client_of(node).network.bandwidth_Bps, system.oss.network.bandwidth_Bps, system.oss.cpu_Bps)
        controller = system.controller
        if controller is not None:
            rate = min(rate, controller.bandwidth_Bps)
        cached = op == "write" and controller is not None and controller.cache_bytes > 0
        if not (cached and system.mechanisms["controller_cache"]):
            rate = min(rate, system.ost.bandwidth_Bps(op))
        return rate

    def rpc_window_Bps(self, stripe_share: np.ndarray) -> float:
        """Bytes a client can keep in flight per round trip to the OSTs it uses (no limit
        with the ``rpc_window`` mechanism off)."""
        if not self.system.mechanisms["rpc_window"]:
            return float("inf")
        t = self.system.tunables
        touched = int(np.count_nonzero(stripe_share > 0))
        return touched * t.max_rpcs_in_flight * t.rpc_size_bytes / t.rpc_latency_s

    def dirty_limit_bytes(self, stripe_share: np.ndarray, ranks_on_node: int, node: int = 0) -> float:
        """Dirty bytes one writer may leave in the page cache: Lustre's per-OSC limit
        over the OSTs it writes, bounded by its share of the kernel's dirty limit."""
        if not self.system.mechanisms["dirty_limit"]:
            return 0.0
        touched = int(np.count_nonzero(stripe_share > 0))
        per_osc = touched * self.system.tunables.max_dirty_bytes_per_osc
        return min(per_osc, self.clients[node].spec.dirty_limit_bytes / ranks_on_node)

    @property
    def resources(self) -> list[Resource]:
        return list(self.network.resources)
