"""A file-system model built for one run: the resources, and the paths that I/O takes.

The same assembly serves every file-system model (``simfs.filesystems.core.system``): its
parts are named after the model (``oss``/``ost`` for Lustre, ``shelf``/``blade`` for
PanFS, ...).  Data path of a buffered write from a client to a file striped over targets
``o_k`` that hold fractions ``f_k`` of the rank's bytes (``sum f_k = 1``)::

    client core (copy)  ->  client NIC tx  ->  fabric core  ->
        for each server s:  NIC rx and CPU, weight sum(f_k for o_k on s)
        for each target o_k: controller (if any) and the target device, weight f_k

Reads take the opposite NIC directions.  An SSD target's capacity is its write bandwidth;
a read byte costs ``write_Bps / read_Bps`` of it, so that mixed traffic shares one device.

Rate caps (per rank): one core's copy rate for buffered I/O; the RPC window
``touched_targets x max_rpcs_in_flight x rpc_size / rpc_latency`` (Little's law: at most
that many bytes in flight per round trip); for buffered reads the readahead window,
``max_read_ahead_bytes / readers on the node / rpc_latency`` (the client's readahead
budget is shared by the files it reads, and a reader can have no more in flight than it
has read ahead); for O_DIRECT one transfer per round trip.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from simfs.engine import FluidNetwork, Path, Resource
from simfs.engine.resource import combine_load_models
from simfs.errors import check_whole
from simfs.filesystems.core.layout import Layout, TargetAllocator
from simfs.filesystems.core.locking import PAGE_BYTES
from simfs.filesystems.core.metadata import MetadataService
from simfs.filesystems.core.request_io import RequestIo
from simfs.filesystems.core.system import FileSystem
from simfs.hardware import ClientNode, ClientSpec, HddSpec, LinkSpec, Server, SsdSpec, SwitchSpec
from simfs.hardware.controller import PrefetchThrash
from simfs.hardware.hdd import SeekThrashing, random_request_cost
from simfs.hardware.loss_recovery import fan_in_goodput_factor


def _at_speed(spec: ClientSpec, factor: float) -> ClientSpec:
    """A client node ``factor`` times as fast as its model (copy rates and per-call time)."""
    if factor == 1.0:
        return spec
    return replace(
        spec,
        copy_write_Bps=spec.copy_write_Bps * factor,
        copy_read_Bps=spec.copy_read_Bps * factor,
        call_overhead_s=spec.call_overhead_s / factor,
    )


@dataclass(frozen=True)
class RateCap:
    """A rank's rate cap and what sets it (reported as the bottleneck when it binds)."""

    rate_Bps: float
    reason: str


class FileSystemInstance:
    """The resources of ``system`` for a run on ``nodes`` client nodes."""

    def __init__(
        self,
        system: FileSystem,
        network: FluidNetwork,
        nodes: int,
        rng: np.random.Generator,
        stripe_offset: int | None = None,
        *,
        record_queues: bool = False,
    ) -> None:
        check_whole(system.name, "nodes", nodes, 0)
        if nodes > system.client_count:
            raise ValueError(f"nodes: {system.name} has {system.client_count} clients, asked for {nodes}")
        if not hasattr(rng, "spawn"):
            raise ValueError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {rng!r}")
        self.system = system
        self.network = network
        # Seeded imbalance (core/variability.py): its own stream, spawned without drawing
        # from the run's, so that neither its presence nor its switching on moves the
        # allocator's random choices.
        variability = system.variability
        self.variability_rng = rng.spawn(1)[0]
        speeds = variability.node_factors(self.variability_rng, nodes)
        self.target_factors = variability.target_factors(self.variability_rng, system.target_count)
        self.clients: list[ClientNode] = [
            _at_speed(system.client_of(i), float(speeds[i])).build(i) for i in range(nodes)
        ]
        fabric = SwitchSpec(
            port_count=system.client_count + system.server_count + 1,
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
        server, target = names["server"], names["target"]
        # Metadata requests are served one by one (core/metadata.py), not as flows.
        self.metadata = MetadataService(network.env, system, nodes, record=record_queues, rng=self.variability_rng)
        self._request_io: RequestIo | None = None
        self.servers: list[Server] = [system.server.build(f"{server}{i}", server) for i in range(system.server_count)]
        target_capacity = system.target.bandwidth_Bps("write")
        thrash = None
        if system.mechanisms["hdd_seek"] and isinstance(system.target.drive, HddSpec):
            thrash = SeekThrashing(system.target.drive, system.read_visit_bytes, system.write_visit_bytes)
        prefetch = None
        if system.mechanisms["controller_prefetch"] and system.controller is not None:
            segments_per_target = system.controller.cache_segments * system.controller_total / system.target_count
            read_request = min(system.io.rpc_size_bytes, system.io.stripe_size_bytes)
            prefetch = PrefetchThrash(system.controller, segments_per_target, read_request)
        thrash = combine_load_models(thrash, prefetch)
        self.targets = [
            Resource(
                f"{target}{i}",
                target_capacity * system.target_capacity_factor(i) * float(self.target_factors[i]),
                kind=target,
                load_model=thrash,
            )
            for i in range(system.target_count)
        ]
        self.target_read_weight = target_capacity / system.target.bandwidth_Bps("read")
        self.raid_threads = (
            [
                Resource(f"{target}{i}.md-thread", system.target.write_thread_Bps, kind="raid-thread")
                for i in range(system.target_count)
            ]
            if system.target.write_thread_Bps and system.mechanisms["md_raid_thread"]
            else []
        )
        self.controllers = (
            [
                system.controller.resource(f"{names['controller']}{i}", kind=names["controller"])
                for i in range(system.controller_total)
            ]
            if system.controller is not None
            else []
        )
        # Client groups (a Roadrunner compute unit) reach the servers over their own uplink.
        group_size = system.client_group_size
        self.group_uplinks = (
            [
                Resource(f"fabric.group{g}-uplink", system.group_uplink_Bps, kind="group-uplink")
                for g in range(-(-nodes // group_size))
            ]
            if group_size
            else []
        )
        for client in self.clients:
            network.add_all(client.resources)
        network.add_all(self.group_uplinks)
        network.add(self.fabric)
        if self.uplink is not None:
            network.add(self.uplink)
        for server in self.servers:
            network.add_all(server.resources)
        network.add_all(self.targets)
        network.add_all(self.raid_threads)
        network.add_all(self.controllers)
        self.host_cpu = (
            system.shared_host.resource()
            if system.shared_host is not None and system.mechanisms["shared_host_cpu"]
            else None
        )
        if self.host_cpu is not None:
            network.add(self.host_cpu)
        offset = system.io.stripe_offset if stripe_offset is None else stripe_offset
        self.allocator = TargetAllocator(
            [system.server_of_target(i) for i in range(system.target_count)], offset, rng, system.excluded_targets
        )

    # -- request-level data path ----------------------------------------------------------
    @property
    def request_io(self) -> RequestIo:
        """The request-level data path (built on first use: only phases whose writers
        contend for locks run through it)."""
        if self._request_io is None:
            policy = self.system.lock_policy()
            if policy is None:
                raise ValueError(f"{self.system.name}: a {self.system.FILESYSTEM} file system has no lock manager")
            self._request_io = RequestIo(self, policy, parity_width=self.system.client_parity_width)
        return self._request_io

    @property
    def request_io_built(self) -> bool:
        return self._request_io is not None

    # -- metadata -----------------------------------------------------------------------
    def allocate(self, stripe_count: int, stripe_size_bytes: int, *, overstriping: bool = False) -> Layout:
        system = self.system
        if system.HASHED_PLACEMENT:
            layout = self.allocator.draw(stripe_size_bytes)
        else:
            advance = system.allocation_advance()
            layout = self.allocator.allocate(
                stripe_count, stripe_size_bytes, advance=advance, overstriping=overstriping
            )
        return system.shape_layout(layout)

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
        call_bytes: float | None = None,
        fetch_fraction: float = 1.0,
        disk_fraction: float = 1.0,
        random: bool = False,
    ) -> Path:
        """The path of a rank's data on ``node``; ``stripe_share`` sums to 1.

        The path has three parts, each of which can be left out to model a buffer
        between them: ``copy``, the client core's copy (buffered I/O); ``network``, from
        the client NIC through the server to the controller; ``disk``, the target devices.
        (``copy`` alone: bytes landing in the page cache; ``copy`` and ``network``: bytes
        landing in a controller's write-back cache; ``disk`` alone: its destaging.)
        ``request_bytes`` is the size of the requests reaching the targets (default: a bulk
        RPC, at most a stripe); it sets the RAID, SSD and server-thread costs.
        ``call_bytes`` is the application's call size (its
        per-call core time, ``call_overhead``).  Reads of data other ranks read too move
        only ``fetch_fraction`` of the rank's bytes over the network (the rest comes from
        the node's page cache) and read ``disk_fraction`` of those from the drives (the
        rest from the servers' cache).  ``random``: the requests go to offsets in no
        order (IOR ``-z``), so each costs a drive's repositioning.
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
            goodput = self._incast(client.spec.network, layout, stripe_share, op)
            path.append((nic, sent / goodput, "tcp_incast" if goodput < 1 else ""))
            if self.system.mechanisms["fabric_oversubscription"]:
                path.append((self.fabric, sent))
            if self.uplink is not None:
                path.append((self.uplink, sent))
            if self.group_uplinks:
                path.append((self.group_uplinks[node // self.system.client_group_size], sent))
        threads = self.system.server.thread_cost_per_byte(request) if self.system.mechanisms["oss_threads"] else 0.0
        target_cost, target_mechanism = self.target_cost_and_mechanism(op, request, random=random)
        target_weight = target_cost * sent * disk_fraction
        server_share: dict[int, float] = defaultdict(float)
        placements = self.system.data_placements(layout, stripe_share, op)
        for target, share in placements if placements is not None else self._placements(layout, stripe_share, op):
            share_sent = share * sent
            server_share[self.system.server_of_target(target)] += share_sent
            if network and self.controllers:
                path.append((self.controllers[self.system.controller_of_target(target)], share_sent * disk_fraction))
            if disk:
                path.append((self.targets[target], share * target_weight, target_mechanism))
                if op == "write" and self.raid_threads:
                    path.append((self.raid_threads[target], share_sent))
        if network:
            for server_index, share in server_share.items():
                server = self.servers[server_index]
                path.append((server.nic_rx if op == "write" else server.nic_tx, share))
                path.append((server.cpu, share))
                if threads > 0:
                    path.append((server.threads, share * threads))
            if op == "write" and self.system.stored_copies > 1:
                path += self._chain_path(layout, stripe_share, target_weight, target_mechanism, disk)
            if self.host_cpu is not None:
                # The host's costs are per byte the client writes or fetches (what a
                # write adds on the wire, chained copies or fragments, is in the cost).
                cost = self.system.shared_host.cpu_s_per_byte(op, self.system.stored_copies)
                path.append((self.host_cpu, cost * (1.0 if op == "write" else fetch_fraction)))
        # Bytes served from the page cache (fetch_fraction 0) load nothing beyond the core.
        return [entry for entry in path if entry[1] > 0]

    def _placements(self, layout: Layout, stripe_share: np.ndarray, op: str) -> list[tuple[int, float]]:
        """(target, share of the rank's bytes) for each object: a read of replicated
        chunks (chained copies) is spread evenly over the copies, as clients choose among
        them; otherwise each object is read or written where the layout puts it."""
        system = self.system
        copies = system.stored_copies
        placements = []
        for k, share in enumerate(stripe_share.tolist()):
            if share <= 0:
                continue
            target = layout.targets[k]
            if op == "write" or copies == 1:
                placements.append((target, share))
                continue
            first, slot = system.server_of_target(target), target % system.targets_per_server
            for hop in range(copies):
                replica = (first + hop) % system.server_count * system.targets_per_server + slot
                placements.append((replica, share / copies))
        return placements

    def _chain_path(
        self, layout: Layout, stripe_share: np.ndarray, target_weight: float, target_mechanism: str, disk: bool
    ) -> Path:
        """The replicas of a chained write: the copy of each object's bytes that server
        ``s`` stores is forwarded to the servers after it (``s + 1``, ... in server order,
        distinct from ``s``), each receiving, processing and storing it."""
        system = self.system
        copies = system.stored_copies
        path: list[tuple[Resource, float] | tuple[Resource, float, str]] = []
        for k, share in enumerate(stripe_share.tolist()):
            if share <= 0:
                continue
            first = system.server_of_target(layout.targets[k])
            slot = layout.targets[k] % system.targets_per_server
            for hop in range(1, copies):
                sender = self.servers[(first + hop - 1) % system.server_count]
                receiver_index = (first + hop) % system.server_count
                receiver = self.servers[receiver_index]
                path += [(sender.nic_tx, share), (receiver.nic_rx, share), (receiver.cpu, share)]
                if disk:
                    replica = receiver_index * system.targets_per_server + slot
                    path.append((self.targets[replica], share * target_weight, target_mechanism))
        return path

    def server_path(self, target: int, op: str, request_bytes: float) -> Path:
        """The path of I/O issued on the server itself (obdfilter-survey): its CPU, the
        controller, the target; no client, no network, no bulk-RPC service threads."""
        path: list[tuple[Resource, float]] = [(self.servers[self.system.server_of_target(target)].cpu, 1.0)]
        if self.controllers:
            path.append((self.controllers[self.system.controller_of_target(target)], 1.0))
        layout = Layout((target,), int(request_bytes))
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
                index = self.system.controller_of_target(layout.targets[k])
                absorbed += share * controller.cache_bytes / max(1, writers.get(index, 1))
        return absorbed

    def controllers_of(self, layout: Layout) -> set[int]:
        return {self.system.controller_of_target(target) for target in layout.targets}

    def target_cost(self, op: str, request_bytes: float) -> float:
        """Target capacity used per byte of ``op`` in ``request_bytes`` requests.

        The capacity is the set's write bandwidth; a read byte costs write/read of it.
        RAID parity (read-modify-write), an SSD's IOPS bound and its write cliff each
        multiply the cost when their mechanism is on.
        """
        return self.target_cost_and_mechanism(op, request_bytes)[0]

    def target_cost_and_mechanism(self, op: str, request_bytes: float, *, random: bool = False) -> tuple[float, str]:
        """:meth:`target_cost` and the mechanisms that raised it above the plain cost
        (``"raid_parity"``, ``"ssd_iops+ssd_write_cliff"``; ``""``: none), named beside
        a target that limits the flow.  ``random`` requests (IOR ``-z``) on HDDs each pay
        a reposition (:func:`~simfs.hardware.hdd.random_request_cost`, the ``hdd_seek``
        mechanism)."""
        target, mechanisms = self.system.target, self.system.mechanisms
        cost = 1.0 if op == "write" else self.target_read_weight
        factors = []
        if random and isinstance(target.drive, HddSpec) and mechanisms["hdd_seek"]:
            factors.append(("hdd_seek", random_request_cost(target.drive, target.drive_request_bytes(request_bytes))))
        if op == "write" and mechanisms["raid_parity"]:
            factors.append(("raid_parity", target.write_cost(request_bytes)))
        if isinstance(target.drive, SsdSpec):
            if mechanisms["ssd_iops"]:
                factors.append(("ssd_iops", target.drive.request_cost(op, target.drive_request_bytes(request_bytes))))
            if op == "write" and mechanisms["ssd_write_cliff"]:
                factors.append(("ssd_write_cliff", target.drive.write_amplification))
        for _, factor in factors:
            cost *= factor
        return cost, "+".join(name for name, factor in factors if factor > 1 + 1e-9)

    def request_bytes(self, layout: Layout, direct_transfer_bytes: int | None = None) -> int:
        """Size of the requests that reach a target: a bulk RPC for buffered I/O, each
        transfer as issued for O_DIRECT; never more than a stripe (a request goes to one
        target)."""
        size = min(self.system.io.rpc_size_bytes, layout.stripe_size_bytes)
        return size if direct_transfer_bytes is None else min(size, direct_transfer_bytes)

    def effective_call_bytes(self, call_bytes: float | None) -> float | None:
        """The call size that sets per-call core time (None with ``call_overhead`` off)."""
        return call_bytes if self.system.mechanisms["call_overhead"] else None

    def core_Bps(self, node: int, op: str, call_bytes: float) -> float:
        """What one process on ``node`` moves through the page cache on one core, in
        calls of ``call_bytes``: the cap of buffered I/O before any network limit."""
        return self.clients[node].spec.core_Bps(op, self.effective_call_bytes(call_bytes))

    def _incast(self, link: LinkSpec, layout: Layout, stripe_share: np.ndarray, op: str) -> float:
        """Goodput factor of a read over a TCP client ``link``: the servers answering one
        round at once into the client's switch port, and how TCP recovers what the port
        drops (``simfs.hardware.loss_recovery``)."""
        system = self.system
        if op != "read" or not system.mechanisms["tcp_incast"] or link.transport != "tcp":
            return 1.0
        senders = system.incast_senders([layout.targets[k] for k, share in enumerate(stripe_share) if share > 0])
        return fan_in_goodput_factor(
            senders,
            float(self.request_bytes(layout)),
            link.bandwidth_Bps,
            system.port_buffer_bytes,
            system.rto_min_s,
            link.latency_s,
            system.tcp_burst_bytes,
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
        random: bool = False,
    ) -> RateCap:
        """The tightest per-rank cap and its reason.  A read at ``random`` offsets (IOR
        ``-z``) gets no read-ahead: like an O_DIRECT transfer, each waits for its own
        request (of at least a page), and on HDDs for the drive's repositioning."""
        t = self.system.io
        caps = []
        if direct or (random and op == "read"):
            # One request in flight: each costs the round trip plus its own transfer.
            request = transfer_size_bytes if direct else max(transfer_size_bytes, PAGE_BYTES)
            per_request = t.rpc_latency_s + request / self.lone_request_Bps(node, op)
            drive = self.system.target.drive
            if random and isinstance(drive, HddSpec) and self.system.mechanisms["hdd_seek"]:
                per_request += drive.positioning_s
            reason = "direct-io-latency" if direct else "random-read-latency"
            caps.append(RateCap(transfer_size_bytes / per_request, reason))
            if not direct:
                caps.append(RateCap(self.core_Bps(node, op, transfer_size_bytes), "client-core"))
        else:
            caps.append(RateCap(self.core_Bps(node, op, transfer_size_bytes), "client-core"))
            caps.append(RateCap(self.rpc_window_Bps(layout, stripe_share), "rpc-window"))
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
        rate = min(
            system.client_of(node).network.bandwidth_Bps, system.server.network.bandwidth_Bps, system.server.cpu_Bps
        )
        controller = system.controller
        if controller is not None:
            rate = min(rate, controller.bandwidth_Bps)
        cached = op == "write" and controller is not None and controller.cache_bytes > 0
        if not (cached and system.mechanisms["controller_cache"]):
            rate = min(rate, system.target.bandwidth_Bps(op))
        return rate

    def rpc_window_Bps(self, layout: Layout, stripe_share: np.ndarray) -> float:
        """Bytes a client can keep in flight per round trip to the targets it uses (no limit
        with the ``rpc_window`` mechanism off)."""
        if not self.system.mechanisms["rpc_window"]:
            return float("inf")
        t = self.system.io
        return touched_targets(layout, stripe_share) * t.max_rpcs_in_flight * t.rpc_size_bytes / t.rpc_latency_s

    def dirty_limit_bytes(self, layout: Layout, stripe_share: np.ndarray, ranks_on_node: int, node: int = 0) -> float:
        """Dirty bytes one writer may leave in the page cache: the per-target limit (Lustre's per OSC)
        over the targets it writes, bounded by its share of the kernel's dirty limit."""
        if not self.system.mechanisms["dirty_limit"]:
            return 0.0
        per_osc = touched_targets(layout, stripe_share) * self.system.io.max_dirty_bytes_per_osc
        return min(per_osc, self.clients[node].spec.dirty_limit_bytes / ranks_on_node)

    @property
    def resources(self) -> list[Resource]:
        return list(self.network.resources)


def touched_targets(layout: Layout, stripe_share: np.ndarray) -> int:
    """Targets a client sends to (its OSCs): an overstriped file has several of its
    objects on one target, and the client has one OSC, one RPC window and one dirty
    limit per target, not per object."""
    if len(set(layout.targets)) == len(layout.targets):
        return int(np.count_nonzero(stripe_share > 0))
    return len({layout.targets[k] for k in np.flatnonzero(stripe_share > 0)})
