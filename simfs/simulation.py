"""Run one workload on one system under one experiment: the rank programs.

Every rank is a SimPy process.  For each iteration and phase it waits at a global
barrier (IOR's barrier before open; the seed's dd runs started all nodes together),
then opens (create on write), moves its bytes as flows, optionally fsyncs, and closes.

Buffered writes model the page cache's dirty limit: a writer may run ahead of the
network by at most its dirty limit, so the application sees
``(bytes - dirty) / R + dirty / copy_rate`` and the last ``dirty`` bytes drain in the
background after it returns (unless the phase fsyncs, which waits for them).  A
controller's write-back cache is a second such buffer, between the network and the
drives.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import itertools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import simpy

from simfs import cost
from simfs.engine import RANDOM_READ, RANDOM_WRITE, READ, WRITE, FluidNetwork
from simfs.engine.barrier import Barrier
from simfs.errors import ExperimentError, ImplausibleValueWarning, WorkloadError
from simfs.experiment import Experiment
from simfs.filesystems.core import FileSystem, FileSystemInstance, Layout
from simfs.filesystems.core.locking import PAGE_BYTES
from simfs.results import PhaseAttribution, RankRecord, Result
from simfs.workloads import parse_workload
from simfs.workloads.spec import PhaseSpec, WorkloadSpec, transfer_offsets
from simfs.workloads.specsfs import draw_operations
from simfs.workloads.steady_state import steady_state_sample


def _request_level_possible(system: FileSystem, experiment: Experiment) -> bool:
    """Shared-file writes may run request by request through the lock manager."""
    return experiment.mode != "fluid" and system.lock_policy() is not None and system.mechanisms["extent_locks"]


def resolved_stripe_count(system: FileSystem, experiment: Experiment) -> int:
    """The stripe objects of each file: ``overstripe_count``, else ``stripe_count`` (the
    profile's without one, -1 for every target)."""
    if experiment.overstripe_count is not None:
        return experiment.overstripe_count
    stripe_count = system.io.stripe_count if experiment.stripe_count is None else experiment.stripe_count
    return system.target_count if stripe_count == -1 else stripe_count


def estimate_cost(system: FileSystem, workload: WorkloadSpec, experiment: Experiment) -> cost.Cost:
    """What simulating ``workload`` on ``system`` will cost (:mod:`simfs.cost`): of its
    time-bounded phases, the sample that :func:`run` simulates."""
    background = _background_workload(experiment)
    all_nodes = experiment.nodes + (experiment.background_nodes if background else 0)
    request_level = _request_level_possible(system, experiment)
    workload, _ = steady_state_sample(workload, experiment.ranks, request_level_writes=request_level)
    # run() refuses impossible stripes; the estimate may come first, as a sweep's does.
    layout = {
        "stripe_count": max(1, resolved_stripe_count(system, experiment)),
        "server_count": max(1, system.server_count),
        "node_copy_Bps": system.client.cores * system.client.copy_write_Bps,
        "node_link_Bps": system.client.network.bandwidth_Bps,
        "metadata_latency_s": system.io.metadata_latency_s,
    }
    main = cost.estimate(
        experiment.ranks,
        experiment.nodes,
        list(workload.phases),
        workload.iterations,
        system.server_count + system.target_count + all_nodes,
        request_level,
        **layout,
    )
    if not background:
        return main
    # The background job shares the run: its ranks are in flight beside the main ones.
    extra = cost.estimate(
        experiment.background_nodes * experiment.background_ppn,
        experiment.background_nodes,
        list(background.phases),
        background.iterations,
        0,
        request_level,
        **layout,
    )
    return cost.Cost(*(a + b for a, b in zip(dataclasses.astuple(main), dataclasses.astuple(extra))))


@contextlib.contextmanager
def _cyclic_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the events run (and as it was after).

    A run makes millions of short-lived events, generators and records; reference counts
    free them, but the collector still walks every live object each time allocations
    pass its threshold, which costs more the more the run holds (IOR ior-hard-style, 1,000
    ranks x 200 records: 16% of the CPU time, and the same peak memory without it:
    ``docs/performance.md``).  Cycles made during the run are collected after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run(
    system: FileSystem,
    workload: WorkloadSpec,
    experiment: Experiment,
    *,
    record_timeline: bool = False,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Result:
    """Simulate ``workload`` on ``system``; see :func:`simfs.simulate` for the friendly API.

    A run estimated beyond :mod:`simfs.cost`'s limits is refused unless ``force``.
    ``progress(done, total)`` is called as ranks finish phases (``total`` rank phases)."""
    io = system.io
    system.check_workload(workload)
    if workload.tool == "obdfilter-survey":
        experiment = _survey_experiment(system, workload, experiment)
    background = _background_workload(experiment)
    all_nodes = experiment.nodes + (experiment.background_nodes if background else 0)
    if all_nodes > system.client_count:
        raise ExperimentError(
            f"nodes: {system.name} has {system.client_count} client nodes, asked for {all_nodes} "
            "(raise client.count with --set to model a larger cluster)"
        )
    stripe_count = resolved_stripe_count(system, experiment)
    if experiment.overstripe_count is not None:
        if not system.OVERSTRIPING:
            raise ExperimentError(
                f"overstripe_count: {system.name} is {system.FILESYSTEM}, which has no overstriping "
                "(Lustre's lfs setstripe -C); use stripe_count"
            )
    elif stripe_count > system.target_count:
        raise ExperimentError(
            f"stripe_count: {stripe_count} is more than the {system.target_count} OSTs of {system.name}"
        )
    stripe_size = io.stripe_size_bytes if experiment.stripe_size is None else experiment.stripe_size
    stripe_offset = io.stripe_offset if experiment.stripe_offset is None else experiment.stripe_offset
    if stripe_offset >= system.target_count:
        raise ExperimentError(
            f"stripe_offset: {stripe_offset} is not an OST index of {system.name} (0..{system.target_count - 1})"
        )

    workload, sample_notes = steady_state_sample(
        workload, experiment.ranks, request_level_writes=_request_level_possible(system, experiment)
    )
    cost.check(estimate_cost(system, workload, experiment), force=force)
    cores = system.client.cores
    # An obdfilter-survey rank is a server thread, a SPECsfs one a load-generating process
    # that mostly waits: neither is a rank on a core.
    if experiment.ppn > cores and workload.tool not in ("obdfilter-survey", "specsfs2008"):
        warnings.warn(
            f"ppn: {experiment.ppn} processes per node on {cores}-core client nodes of {system.name}: "
            "they share the cores",
            ImplausibleValueWarning,
            stacklevel=2,
        )

    env = simpy.Environment()
    network = FluidNetwork(env, record_timeline=record_timeline, completion_tolerance=experiment.completion_tolerance)
    fs = FileSystemInstance(
        system, network, all_nodes, np.random.default_rng(experiment.seed), stripe_offset, record_queues=record_timeline
    )
    program = _Program(env, network, fs, workload, experiment, stripe_count, stripe_size)
    programs = [program]
    if background:
        neighbour = Experiment(nodes=experiment.background_nodes, ppn=experiment.background_ppn, seed=experiment.seed)
        programs.append(
            _Program(
                env,
                network,
                fs,
                background,
                neighbour,
                stripe_count,
                stripe_size,
                node_offset=experiment.nodes,
                rank_offset=experiment.ranks,
            )
        )
    if progress is not None:
        total = sum(each.experiment.ranks * len(each.workload.phases) * each.workload.iterations for each in programs)
        finished = [0]

        def phase_done() -> None:
            finished[0] += 1
            progress(finished[0], total)

        for each in programs:
            each.on_record = phase_done
    for each in programs:
        for rank in range(each.experiment.ranks):
            env.process(each.rank(rank))
    with _cyclic_collection_paused():
        env.run()
    return Result(
        system=system.name,
        workload=workload,
        experiment=experiment,
        stripe_count=stripe_count,
        stripe_size_bytes=stripe_size,
        rank_records=[record for each in programs for record in each.records],
        background_workload=background,
        attribution=_attribution(
            network, {**fs.metadata.seconds, **(fs.request_io.seconds if fs.request_io_built else {})}
        ),
        phase_modes={key: mode for each in programs for key, mode in each.modes.items()},
        timeline=network.timeline() if record_timeline else None,
        resource_columns=_resource_columns(network, fs),
        solves=network.stats.solves,
        request_counts=_request_counts(env, fs),
        notes=workload.notes + sample_notes + _unanswered_notes(workload, program.records),
        request_queues={f"{system.NAMES['metadata']}.dir-lock": fs.metadata.queue_samples()}
        if record_timeline
        else None,
        host_cpu_busy=_host_cpu_busy(network, fs, workload, program.phase_marks),
    )


def _unanswered_notes(workload: WorkloadSpec, records: list[RankRecord]) -> tuple[str, ...]:
    """A note for each open-loop phase in which no operation ended in the measured
    interval: its rate is 0 and its response time undefined (NaN), not a measurement."""
    ended: dict[tuple[int, str], int] = defaultdict(int)
    for record in records:
        ended[(record.iteration, record.phase)] += record.ops
    notes = []
    for phase in workload.phases:
        if phase.is_open_loop and any(ops == 0 for (_, label), ops in ended.items() if label == phase.label):
            asked = phase.load_per_s * phase.runtime_s
            notes.append(
                f"{phase.label}: no operation ended in the {phase.runtime_s:g} s measured interval "
                f"({phase.load_per_s:g} op/s asks for {asked:.2g} in it): no response time to report; "
                f"ask for more load or a longer --runtime"
            )
    return tuple(notes)


def _resource_columns(network: FluidNetwork, fs: FileSystemInstance) -> dict[str, Any]:
    """``Result.resource_usage``: the fluid resources, then the metadata service's cores,
    a request-level station outside the network, with the core-seconds it served."""
    resources = network.resources
    cores = fs.metadata.cores
    return {
        "resource": [r.name for r in resources] + [cores.name],
        "kind": [r.kind for r in resources] + [cores.kind],
        "unit": [r.unit for r in resources] + ["core"],
        "capacity_per_s": [r.capacity for r in resources] + [float(cores.servers)],
        "served": np.append(network.served_work(), cores.busy_s),
    }


def _host_cpu_busy(
    network: FluidNetwork, fs: FileSystemInstance, workload: WorkloadSpec, marks: list
) -> dict[tuple[int, str], float]:
    """Per synchronised data phase, the shared host's cores busy from its barrier to the
    next (or to its last rank's end), as a share of them; empty without a shared host.
    Metadata and open-loop phases are left out: their requests use the cores through the
    metadata service's own station, which this does not read."""
    if fs.host_cpu is None or len(marks) < 2:
        return {}
    index = network.resources.index(fs.host_cpu)
    capacity = fs.host_cpu.capacity
    metadata = {phase.label for phase in workload.phases if phase.is_metadata or phase.is_open_loop}
    busy = {}
    for (start, served_before, key), (end, served_after, _) in zip(marks, marks[1:]):
        if key is not None and key[1] not in metadata and end > start:
            charged = float(served_after[index] - served_before[index]) / (capacity * (end - start))
            busy[key] = min(1.0, fs.system.shared_host.utilisation(charged))
    return busy


def _request_counts(env: simpy.Environment, fs: FileSystemInstance) -> dict[str, int]:
    # SimPy numbers every event it schedules (the heap's tie-breaker, ``Environment._eid``):
    # the next number is the count, read once here rather than counted on the event loop.
    counts = {"events": next(env._eid), "metadata_requests": fs.metadata.requests}
    if fs.request_io_built:
        io = fs.request_io
        counts.update(lock_enqueues=io.locks.enqueues, lock_callbacks=io.locks.callbacks, **io.counts)
    return counts


class _Program:
    """The rank programs of one run and the state they share (files, barrier, records)."""

    def __init__(
        self,
        env: simpy.Environment,
        network: FluidNetwork,
        fs: FileSystemInstance,
        workload: WorkloadSpec,
        experiment: Experiment,
        stripe_count: int,
        stripe_size: int,
        *,
        node_offset: int = 0,
        rank_offset: int = 0,
    ) -> None:
        self.env = env
        self.node_offset = node_offset
        self.rank_offset = rank_offset
        self.network = network
        self.fs = fs
        self.workload = workload
        self.experiment = experiment
        self.stripe_count = stripe_count
        self.stripe_size = stripe_size
        # More objects than targets only where overstripe_count asked for them (checked above).
        self.overstriping = stripe_count > fs.system.target_count
        self.barrier = Barrier(env, experiment.ranks)
        self.layouts: dict[tuple[int, str], Layout] = {}
        self.existing: dict[str, Layout] = {}  # files a read-only workload finds in place
        self.records: list[RankRecord] = []
        # Called at every rank record (a phase a rank finished): progress for a long run.
        self.on_record: Callable[[], None] | None = None
        self.writers: dict[tuple[int, str], dict[int, int]] = {}
        #: Collective phases in progress: (done event, aggregators still writing).
        self.collectives: dict[tuple[int, str], list] = {}
        #: Phases (iteration, label) whose data ran at request level.
        self.modes: dict[tuple[int, str], str] = {}
        self.draining: set[tuple[int, tuple]] = set()
        #: mdtest -W: per (iteration, phase label), each rank's items at the deadline;
        #: per iteration, the count every rank went on to (the later phases' items).
        self.stonewall_counts: dict[tuple[int, str], list[int]] = {}
        self.mdtest_items: dict[int, int] = {}
        #: Synchronised phases as their barriers release: (time, work served per
        #: resource so far, (iteration, label)); the next mark closes each, the last one
        #: (label None) when every rank has finished.
        self.phase_marks: list[tuple[float, np.ndarray, tuple[int, str] | None]] = []
        self.ranks_done = 0

    def rank(self, rank: int):
        jitter = self.fs.system.variability.start_jitter_s
        for iteration in range(self.workload.iterations):
            for index, phase in enumerate(self.workload.phases):
                if self.workload.synchronized or (iteration == 0 and index == 0):
                    yield self.barrier.wait()
                    if self.workload.synchronized and rank == 0 and self.fs.host_cpu is not None:
                        self.phase_marks.append(
                            (self.env.now, self.network.served_work().copy(), (iteration, phase.label))
                        )
                if jitter and not self.workload.synchronized and iteration == 0 and index == 0:
                    # Launched without a barrier (pdsh, ssh): the ranks start apart.
                    yield self.env.timeout(float(self.fs.variability_rng.uniform(0, jitter)))
                yield from self._phase(rank, iteration, phase)
        self.ranks_done += 1
        if self.ranks_done == self.experiment.ranks and self.phase_marks:
            # The last phase ends with its last rank, not with the simulation (a
            # background job or a pending stonewall deadline may run on).
            self.phase_marks.append((self.env.now, self.network.served_work().copy(), None))

    # -- one phase of one rank ----------------------------------------------------------
    def _phase(self, rank: int, iteration: int, phase: PhaseSpec):
        if phase.is_open_loop:
            yield from self._open_loop_phase(rank, iteration, phase)
            return
        if phase.server_side:
            yield from self._server_phase(rank, iteration, phase)
            return
        if phase.is_metadata:
            yield from self._metadata_phase(rank, iteration, phase)
            return
        ppn, ranks = self.experiment.ppn, self.experiment.ranks
        node = rank // ppn + self.node_offset
        owner = phase.data_owner(rank, ppn, ranks)
        file_key = "shared" if phase.shared_file else str(owner)
        open_time = self.env.now
        data_op = "write" if phase.op == "rewrite" else phase.op  # rewrite's read half is added below

        directory = self._directory(iteration, phase, node)
        if phase.op == "write" or (phase.op == "rewrite" and (iteration, file_key) not in self.layouts):
            new_layout = (iteration, file_key) not in self.layouts
            if new_layout:
                self.layouts[(iteration, file_key)] = self.fs.allocate(
                    self.stripe_count, self.stripe_size, overstriping=self.overstriping
                )
            creates = new_layout and not phase.existing_file  # IOR -E opens the file that is there
            yield from self.fs.metadata.request(
                node,
                "create" if creates else "open",
                _OPEN_CLOSE_TAG,
                directory=directory,
                shared_directory=phase.shared_directory,
            )
        else:
            yield from self.fs.metadata.request(node, "open", _OPEN_CLOSE_TAG, directory=directory)
        if self.workload.intra_phase_barriers:
            yield self.barrier.wait()
        layout = self._layout(iteration, file_key)
        if phase.op == "write" and phase.collective:
            yield from self._collective_write(rank, node, iteration, phase, layout)
            if self.workload.intra_phase_barriers:
                yield self.barrier.wait()
            yield from self.fs.metadata.request(node, "close", _OPEN_CLOSE_TAG, directory=directory)
            self._record(iteration, phase, rank, node, open_time)
            return
        if phase.op == "write" and self._request_mode(phase):
            written = yield from self._request_write(node, iteration, phase, layout, file_key, owner)
            if self.workload.intra_phase_barriers:
                yield self.barrier.wait()
            yield from self.fs.metadata.request(node, "close", _OPEN_CLOSE_TAG, directory=directory)
            self._record(iteration, phase, rank, node, open_time, size=written)
            return
        share = self._stripe_share(phase, owner, layout)
        device = self._device_requests(phase, layout, share, node)
        cap = self.fs.rate_cap(
            layout,
            share,
            data_op,
            direct=phase.direct,
            transfer_size_bytes=phase.transfer_size_bytes,
            readers_on_node=ppn,
            node=node,
            random=device.get("random", False),
        )
        tag = self.network.tag(f"{iteration}/{phase.label}/{cap.reason}")
        size = float(phase.bytes_per_rank)
        request = self.fs.request_bytes(layout, phase.transfer_size_bytes if phase.direct else None)
        full_path = self.fs.data_path(
            node,
            layout,
            share,
            data_op,
            copy=not phase.direct,
            call_bytes=phase.transfer_size_bytes,
            **({"request_bytes": request} | device),
            **self._shared_read_fractions(phase),
        )

        if phase.stonewall_s:
            moved = yield from self._stonewalled(phase, size, full_path, cap.rate_Bps, tag, _kind(data_op, device))
            if self.workload.intra_phase_barriers:
                yield self.barrier.wait()
            yield from self.fs.metadata.request(node, "close", _OPEN_CLOSE_TAG, directory=directory)
            self._record(iteration, phase, rank, node, open_time, size=moved)
            return
        if phase.op == "read":
            stall = 0.0 if phase.random_offsets else self._readahead_restart_s(phase)
            if stall > 0:
                yield self.env.timeout(stall)
            yield self.network.transfer(size, full_path, rate_cap=cap.rate_Bps, tag=tag, kind=_kind("read", device))
        elif phase.op == "rewrite":
            # Read a chunk, dirty it, write it back: the file once each way, at one pace.
            read_path = self.fs.data_path(
                node, layout, share, "read", copy=True, request_bytes=request, call_bytes=phase.transfer_size_bytes
            )
            read_cap = self.fs.rate_cap(
                layout,
                share,
                "read",
                direct=False,
                transfer_size_bytes=phase.transfer_size_bytes,
                readers_on_node=ppn,
                node=node,
            )
            pace = min(cap.rate_Bps, read_cap.rate_Bps)
            yield self.env.all_of(
                [
                    self.network.transfer(size, read_path, rate_cap=pace, tag=tag, kind=READ),
                    self.network.transfer(size, full_path, rate_cap=pace, tag=tag, kind=WRITE),
                ]
            )
        else:
            yield from self._write(node, layout, share, phase, iteration, size, full_path, cap.rate_Bps, tag)
        if self.workload.intra_phase_barriers:
            yield self.barrier.wait()
        yield from self.fs.metadata.request(node, "close", _OPEN_CLOSE_TAG, directory=directory)
        self._record(iteration, phase, rank, node, open_time)

    # -- MPI-IO collective buffering ---------------------------------------------------------
    def _collective_write(self, rank: int, node: int, iteration: int, phase: PhaseSpec, layout: Layout):
        """A collective write (two-phase I/O): the first rank of each of the first
        ``aggregators`` nodes gathers a file domain from every node over the network and
        writes it, whole stripes of its own stripe objects (ROMIO assigns stripe ``s`` to
        aggregator ``s mod aggregators``); every rank returns when all domains are written.

        The exchange and the writes of an aggregator are taken one after the other (ROMIO's
        blocking two-phase cycles); the overlap of one cycle's write-back with the next
        cycle's exchange, and per-message costs of the exchange, are not modelled."""
        ppn, nodes = self.experiment.ppn, self.experiment.nodes
        key = (iteration, phase.label)
        aggregators = self.fs.system.collective_aggregators(nodes, layout.stripe_count)
        if key not in self.collectives:
            self.collectives[key] = [self.env.event(), aggregators]
        state = self.collectives[key]
        local = rank % ppn
        if local == 0 and rank // ppn < aggregators:
            index = rank // ppn
            domain = phase.bytes_per_rank * self.experiment.ranks / aggregators
            tag = self.network.tag(f"{iteration}/{phase.label}/collective-exchange")
            if nodes > 1:
                senders = [c for c in range(nodes) if c != rank // ppn]
                path = [(self.fs.clients[node].nic_rx, 1.0)]
                path += [(self.fs.clients[sender + self.node_offset].nic_tx, 1.0 / len(senders)) for sender in senders]
                yield self.network.transfer(domain * (nodes - 1) / nodes, path, tag=tag)
            share = np.array([1.0 if k % aggregators == index else 0.0 for k in range(layout.stripe_count)])
            share /= share.sum()
            buffer = COLLECTIVE_BUFFER_BYTES
            cap = self.fs.rate_cap(
                layout, share, "write", direct=False, transfer_size_bytes=buffer, readers_on_node=1, node=node
            )
            write_tag = self.network.tag(f"{iteration}/{phase.label}/{cap.reason}")
            path = self.fs.data_path(
                node, layout, share, "write", copy=True, request_bytes=self.fs.request_bytes(layout), call_bytes=buffer
            )
            yield from self._write(node, layout, share, phase, iteration, domain, path, cap.rate_Bps, write_tag)
            state[1] -= 1
            if state[1] == 0:
                state[0].succeed()
        yield state[0]

    # -- request level: writers that contend for locks ------------------------------------
    def _request_mode(self, phase: PhaseSpec) -> bool:
        """Whether a write phase runs at request level: writes to one shared file from
        several nodes (whose locks conflict), with a lock manager and its mechanism on;
        the experiment's ``mode`` can force either level."""
        mode = self.experiment.mode
        if mode == "fluid" or not phase.shared_file or phase.same_data:
            return False
        if self.fs.system.lock_policy() is None or not self.fs.system.mechanisms["extent_locks"]:
            return False
        return mode == "request" or self.experiment.nodes > 1

    def _request_write(self, node: int, iteration: int, phase: PhaseSpec, layout: Layout, file_key: str, owner: int):
        """A rank's write calls one by one through the request-level path; returns the
        bytes written (fewer than the phase's if it stops at a stonewall deadline)."""
        io = self.fs.request_io
        file_id = (self.rank_offset, iteration, file_key)
        io.open_file(file_id, layout)
        label = f"{iteration}/{phase.label}"
        self.modes[(iteration, phase.label)] = "request"
        _, offsets = transfer_offsets(phase, owner, self.experiment.ranks, iteration)
        if phase.transfer_limit:
            offsets = itertools.islice(offsets, phase.transfer_limit)
        transfer = phase.transfer_size_bytes
        deadline = self.env.now + phase.stonewall_s if phase.stonewall_s else float("inf")
        written = 0
        write = io.direct_write if phase.direct else io.write
        for offset in offsets:
            if self.env.now >= deadline:
                break
            yield from write(node, file_id, offset, transfer, label, call_bytes=transfer)
            written += transfer
        if phase.fsync:
            yield from io.fsync(node, file_id, label)
        elif (node, file_id) not in self.draining:
            self.draining.add((node, file_id))
            io.drain(node, file_id)
        return written

    def _stonewalled(self, phase: PhaseSpec, size: float, path, rate_cap: float, tag: int, kind: int):
        """A data phase cut at its stonewall deadline (IOR ``-D``): the rank's bytes move as
        one flow through the whole path (the page cache's head start is left out: a
        deadline phase runs long enough for the steady rate to dominate) until they are
        done or the deadline comes; returns the bytes of the whole transfers moved."""
        flow = self.network.transfer(size, path, rate_cap=rate_cap, tag=tag, kind=kind)
        deadline = self.env.timeout(phase.stonewall_s)
        yield flow | deadline
        if flow.triggered:
            return int(size)
        moved = self.network.stop(flow)
        return int(moved // phase.transfer_size_bytes) * phase.transfer_size_bytes

    def _server_phase(self, rank: int, iteration: int, phase: PhaseSpec):
        """obdfilter-survey: object ``rank`` on OST ``rank mod osts`` of the first OSS,
        driven by ``threads_per_object`` echo threads with one ``rsz`` request each in
        flight (a rate cap of threads x rsz / service time, Little's law)."""
        options, system = self.workload.options, self.fs.system
        osts = options["osts"] or system.targets_per_server
        ost = rank % osts
        start = self.env.now
        path = self.fs.server_path(ost, phase.op, phase.transfer_size_bytes)
        service = system.server.rpc_service_s
        cap = options["threads_per_object"] * phase.transfer_size_bytes / service if service > 0 else float("inf")
        tag = self.network.tag(f"{iteration}/{phase.label}/echo-threads")
        kind = READ if phase.op == "read" else WRITE
        yield self.network.transfer(float(phase.bytes_per_rank), path, rate_cap=cap, tag=tag, kind=kind)
        self._record(iteration, phase, rank, 0, start)

    def _metadata_phase(self, rank: int, iteration: int, phase: PhaseSpec):
        """An mdtest phase: ``items_per_rank`` operations one after another, and the
        items' data (``-w`` on create, ``-e`` on read) through a one-stripe file path."""
        ppn, ranks = self.experiment.ppn, self.experiment.ranks
        node = rank // ppn + self.node_offset
        start = self.env.now
        is_dir = " dir " in f" {phase.label} "
        ops = {
            "create": ("mkdir",) if is_dir else ("create", "close"),  # mkdir: no open handle to close
            "stat": ("stat",),
            "read": ("open", "close"),
            "remove": ("rmdir",) if is_dir else ("remove",),
        }[phase.op]
        # mdtest -N: the items of the rank that many ranks on (created on its node).
        owner = phase.data_owner(rank, ppn, ranks)
        directory = ("mdtest", iteration, "shared" if phase.shared_directory else owner, self.rank_offset)
        operate = functools.partial(
            self._operate_in_tree,
            phase.directory_tree,
            functools.partial(
                self.fs.metadata.operate,
                node,
                ops,
                tag=f"{iteration}/{phase.label}",
                shared_directory=phase.shared_directory,
                owner_node=owner // ppn + self.node_offset,
            ),
            directory,
        )
        # After a stonewalled create, mdtest's later file phases work on the items made.
        items = phase.items_per_rank if is_dir else self.mdtest_items.get(iteration, phase.items_per_rank)
        if phase.stonewall_s and phase.op == "create" and not is_dir:
            items = yield from self._stonewalled_creates(iteration, phase, operate, start)
        else:
            yield from operate(0, items)
        if phase.bytes_per_rank:
            op = "write" if phase.op == "create" else "read"
            key = (iteration, f"mdtest-{rank}")
            if key not in self.layouts:  # the items' data share one single-stripe file per rank
                self.layouts[key] = self.fs.allocate(1, self.stripe_size)
            layout = self.layouts[key]
            share = np.ones(1)
            path = self.fs.data_path(
                node,
                layout,
                share,
                op,
                copy=not phase.direct,
                request_bytes=phase.transfer_size_bytes,
                call_bytes=phase.transfer_size_bytes,
            )
            cap = self.fs.core_Bps(node, op, phase.transfer_size_bytes)
            data_tag = self.network.tag(f"{iteration}/{phase.label}/client-core")
            data_bytes = phase.bytes_per_rank * items / phase.items_per_rank
            yield self.network.transfer(
                float(data_bytes), path, rate_cap=cap, tag=data_tag, kind=WRITE if op == "write" else READ
            )
        self._record(iteration, phase, rank, node, start, ops=items)

    def _open_loop_phase(self, rank: int, iteration: int, phase: PhaseSpec):
        """A SPECsfs2008 load-generating process (:mod:`simfs.workloads.specsfs`): its
        operations' scheduled starts are a Poisson stream of its share of the load; each
        one waits for the previous answer (one in flight), then is one request of its
        service class to the metadata service.  No operation starts after the measured
        interval; those that end inside it (after the warm-up) are counted, with their
        response times: past saturation an operation may take longer than the interval,
        and one still in flight at its end would see a server others have left."""
        node = rank // self.experiment.ppn + self.node_offset
        rate = phase.load_per_s / self.experiment.ranks
        rng = np.random.default_rng((self.experiment.seed, rank + self.rank_offset, iteration))
        begin = self.env.now
        measured_from = begin + phase.warmup_s
        until = measured_from + phase.runtime_s
        # Draws in chunks: one numpy call per operation would cost more than its request,
        # and a chunk for a whole run of a huge requested load would not fit in memory.
        chunk = min(256, max(16, int(rate * (phase.warmup_s + phase.runtime_s) * 1.1) + 16))
        gaps = iter(())
        picks = iter(())
        scheduled = begin
        ops, response = 0, 0.0
        tag = f"{iteration}/{phase.label}"
        metadata = self.fs.metadata
        while True:
            gap = next(gaps, None)
            if gap is None:
                gaps = iter(rng.exponential(1.0 / rate, chunk).tolist())
                picks = iter(draw_operations(rng, chunk))
                gap = next(gaps)
            scheduled += gap
            if scheduled >= until:
                break
            if scheduled > self.env.now:
                yield self.env.timeout(scheduled - self.env.now)
            sent = self.env.now
            if sent >= until:
                break
            yield from metadata.request(node, next(picks), tag)
            if measured_from <= self.env.now <= until:
                ops += 1
                response += self.env.now - sent
        if self.env.now < until:
            yield self.env.timeout(until - self.env.now)
        self._record(iteration, phase, rank, node, measured_from, ops=ops, response_s=response, end=until)

    def _stonewalled_creates(self, iteration: int, phase: PhaseSpec, operate, start: float):
        """mdtest ``-W``: create until the deadline, then (an MPI_Allreduce of the counts)
        every rank goes on to the count of the rank that made most, as mdtest does
        ("Continue stonewall hit min ... max ..."); returns that count."""
        done = yield from operate(0, phase.items_per_rank, deadline=start + phase.stonewall_s)
        counts = self.stonewall_counts.setdefault((iteration, phase.label), [])
        counts.append(done)
        yield self.barrier.wait()
        most = max(counts)
        self.mdtest_items[iteration] = most
        if most > done:
            yield from operate(done, most - done)
        return most

    @staticmethod
    def _operate_in_tree(tree, operate, directory, first: int, count: int, deadline: float = float("inf")):
        """A rank's items ``first`` to ``first + count``, each in its directory: the one
        ``directory``, or that of mdtest's tree (``-z -b -I``), directory after directory;
        returns the items done (none started at or after ``deadline``)."""
        if tree is None:
            return (yield from operate(count, directory=directory, deadline=deadline))
        done = 0
        for index, items in tree.runs(first, count):
            made = yield from operate(items, directory=(*directory, index), deadline=deadline)
            done += made
            if made < items:
                break
        return done

    def _record(
        self,
        iteration: int,
        phase: PhaseSpec,
        rank: int,
        node: int,
        start: float,
        ops: int = 0,
        size: int | None = None,
        response_s: float = 0.0,
        end: float | None = None,
    ) -> None:
        """The rank's record of a phase that ends now, or at ``end`` (an open-loop
        phase's measured interval); ranks numbered across both jobs."""
        if self.on_record is not None:
            self.on_record()
        self.records.append(
            RankRecord(
                iteration,
                phase.label,
                phase.op,
                rank + self.rank_offset,
                node,
                phase.bytes_per_rank if size is None else size,
                start,
                self.env.now if end is None else end,
                ops=ops,
                response_s=response_s,
            )
        )

    def _write(self, node, layout, share, phase, iteration, size, full_path, rate_cap, tag):
        """A write through two buffers: the page cache (dirty limit) and the controllers'
        write-back caches.

        Bytes reach the controllers in order; the caches end up holding the last
        ``cached`` of them, which are the page cache's write-back first and then the tail
        of what the application wrote through.  So the application moves
        ``size - dirty - front`` bytes at the speed of the whole path, ``front`` bytes
        into the controller caches and ``dirty`` bytes into the page cache; the
        write-back then moves ``dirty - absorbed`` bytes to the drives and ``absorbed``
        into the caches.  Cached bytes are destaged to the drives from the moment they
        arrive, in the background.  An fsync waits for the write-back, not the destaging.
        """
        fs, buffered = self.fs, not phase.direct
        dirty = min(size, fs.dirty_limit_bytes(layout, share, self.experiment.ppn, node)) if buffered else 0.0
        writers = self._writers_per_controller(iteration, phase)
        cached = min(size, fs.write_back_cache_bytes(layout, share, writers))
        absorbed = min(dirty, cached)  # of the write-back
        front = cached - absorbed  # of what the application writes through
        device = self._device_requests(phase, layout, share, node)
        kind = _kind("write", device)
        drives = fs.data_path(node, layout, share, "write", copy=False, network=False, **device)
        # Destaging from the controllers' caches runs behind the ranks (even an fsync waits
        # for the write-back only): simulated, and not the phase's bottleneck.
        destage_tag = self.network.tag(f"{iteration}/{phase.label}/destage", awaited=False)
        if size - dirty - front > 0:
            yield self.network.transfer(size - dirty - front, full_path, rate_cap=rate_cap, tag=tag, kind=kind)
        if front > 0:
            self.network.transfer(front, drives, tag=destage_tag, kind=kind)
            into_cache = fs.data_path(
                node,
                layout,
                share,
                "write",
                copy=buffered,
                disk=False,
                call_bytes=phase.transfer_size_bytes,
            )
            yield self.network.transfer(front, into_cache, rate_cap=rate_cap, tag=tag, kind=kind)
        if dirty > 0:
            writeback = self.env.process(self._writeback(node, layout, share, phase, iteration, dirty, absorbed))
            copy_path = fs.data_path(
                node, layout, share, "write", copy=True, network=False, disk=False, call_bytes=phase.transfer_size_bytes
            )
            core = fs.core_Bps(node, "write", phase.transfer_size_bytes)
            yield self.network.transfer(dirty, copy_path, rate_cap=core, tag=tag)
            if phase.fsync:
                yield writeback

    def _writeback(self, node, layout, share, phase, iteration, dirty, absorbed):
        """The page cache's write-back of ``dirty`` bytes, the last ``absorbed`` of which
        land in the controllers' write-back caches."""
        fs = self.fs
        window = fs.rpc_window_Bps(layout, share)
        # Without an fsync the ranks do not wait for the write-back: it shares the targets
        # with the phase but does not set its time, so it does not name its bottleneck.
        tag = self.network.tag(f"{iteration}/{phase.label}/rpc-window", awaited=phase.fsync)
        device = self._device_requests(phase, layout, share, node)
        kind = _kind("write", device)
        if dirty > absorbed:
            path = fs.data_path(node, layout, share, "write", copy=False, **device)
            yield self.network.transfer(dirty - absorbed, path, rate_cap=window, tag=tag, kind=kind)
        if absorbed > 0:
            drives = fs.data_path(node, layout, share, "write", copy=False, network=False, **device)
            self.network.transfer(
                absorbed, drives, tag=self.network.tag(f"{iteration}/{phase.label}/destage", awaited=False), kind=kind
            )
            path = fs.data_path(node, layout, share, "write", copy=False, disk=False)
            yield self.network.transfer(absorbed, path, rate_cap=window, tag=tag, kind=WRITE)

    def _device_requests(self, phase: PhaseSpec, layout: Layout, share: np.ndarray, node: int) -> dict:
        """``data_path`` settings for the requests a phase at random offsets (IOR ``-z``)
        sends the targets: each transfer its own request (at least a page: the page cache
        reads and writes back whole pages), at a place of its own; ``{}`` for requests in
        order.  A buffered random write whose whole data fits under the dirty limit is
        written back in order (the pages are all there by the close, contiguous), so its
        requests are the sequential ones."""
        if not phase.random_offsets:
            return {}
        if phase.op != "read" and not phase.direct:
            if phase.bytes_per_rank <= self.fs.dirty_limit_bytes(layout, share, self.experiment.ppn, node):
                return {}
        transfer = phase.transfer_size_bytes if phase.direct else max(phase.transfer_size_bytes, PAGE_BYTES)
        return {"request_bytes": self.fs.request_bytes(layout, transfer), "random": True}

    def _writers_per_controller(self, iteration: int, phase: PhaseSpec) -> dict[int, int]:
        """How many ranks write through each controller in this phase: those whose file
        exists (after a barrier, every rank's; ranks started apart count as they open)."""
        key = (iteration, phase.label)
        if key in self.writers:
            return self.writers[key]
        counts: dict[int, int] = defaultdict(int)
        complete = True
        for rank in range(self.experiment.ranks):
            layout = self.layouts.get((iteration, "shared" if phase.shared_file else str(rank)))
            if layout is None:
                complete = False
                continue
            for controller in self.fs.controllers_of(layout):
                counts[controller] += 1
        if complete:
            self.writers[key] = dict(counts)
        return dict(counts)

    def _directory(self, iteration: int, phase: PhaseSpec, node: int) -> tuple:
        """The directory a data phase's file lives in: one shared by every rank (IOR puts
        its files in one), or one per node (the seed's dd runs made one per node)."""
        if phase.shared_directory or phase.shared_file:
            return ("files", iteration, self.rank_offset)
        return ("node", node)

    def _layout(self, iteration: int, file_key: str) -> Layout:
        if (iteration, file_key) in self.layouts:
            return self.layouts[(iteration, file_key)]
        # Read of a file this workload did not write in this iteration: it was written
        # by an earlier iteration or exists before the run.
        for it in range(iteration - 1, -1, -1):
            if (it, file_key) in self.layouts:
                return self.layouts[(it, file_key)]
        if file_key not in self.existing:
            self.existing[file_key] = self.fs.allocate(
                self.stripe_count, self.stripe_size, overstriping=self.overstriping
            )
        return self.existing[file_key]

    def _shared_read_fractions(self, phase: PhaseSpec) -> dict[str, float]:
        """A read of data every rank reads (``same_data``): the ranks of a node fetch it
        once and share the node's page cache; the nodes, reading it at the same time,
        cost the drives one read and are served the rest from the servers' cache."""
        if phase.op == "read" and self.fs.system.cached_read(
            phase.bytes_per_rank * self.experiment.ranks, phase.direct
        ):
            return {"fetch_fraction": 0.0, "disk_fraction": 0.0}
        if not (phase.same_data and phase.op == "read"):
            return {}
        mechanisms = self.fs.system.mechanisms
        return {
            "fetch_fraction": 1.0 / self.experiment.ppn if mechanisms["client_read_sharing"] else 1.0,
            "disk_fraction": 1.0 / self.experiment.nodes if mechanisms["server_read_cache"] else 1.0,
        }

    def _readahead_restart_s(self, phase: PhaseSpec) -> float:
        """The stalls of a buffered reader whose segments of a shared file are not
        contiguous (IOR ``-s``): readahead sees a seek at each new segment and starts
        over, so the first read there waits one RPC round trip."""
        if phase.direct or not phase.shared_file or phase.same_data or self.experiment.ranks == 1:
            return 0.0
        if not self.fs.system.mechanisms["readahead_restart"]:
            return 0.0
        return (phase.segment_count - 1) * self.fs.system.io.rpc_latency_s

    def _stripe_share(self, phase: PhaseSpec, owner: int, layout: Layout) -> np.ndarray:
        """Fraction of the rank's bytes in each stripe object of ``layout``."""
        if phase.shared_file and not phase.same_data:
            block = phase.block_size_bytes
            stride = block * self.experiment.ranks
            per_stripe = layout.segmented_bytes_per_object(owner * block, block, stride, phase.segment_count)
        else:
            per_stripe = layout.bytes_per_object(0, phase.bytes_per_rank)
        return per_stripe / per_stripe.sum()


def _kind(op: str, device_requests: dict) -> int:
    """The flow kind load models see: a read or a write, at random offsets when the
    phase's requests reach the targets at random places (``_device_requests``)."""
    if op == "read":
        return RANDOM_READ if device_requests else READ
    return RANDOM_WRITE if device_requests else WRITE


def _survey_experiment(system: FileSystem, workload: WorkloadSpec, experiment: Experiment) -> Experiment:
    """obdfilter-survey runs on one OSS: its objects are the ranks, nodes do not apply."""
    osts = workload.options["osts"] or system.targets_per_server
    if osts > system.targets_per_server:
        raise ExperimentError(
            f"obdfilter-survey: ost={osts}, but an OSS of {system.name} has {system.targets_per_server}"
        )
    if experiment.has_background:
        raise ExperimentError("background: obdfilter-survey runs on the servers alone; no background job")
    return replace(experiment, nodes=1, ppn=osts * workload.options["objects_per_ost"])


BACKGROUND_PREFIX = "background "
#: ROMIO's collective buffer (``cb_buffer_size``, 16 MiB): what an aggregator writes per call.
COLLECTIVE_BUFFER_BYTES = 16 << 20
#: The request statistics tag of the opens and closes around data phases (not attributed).
_OPEN_CLOSE_TAG = "metadata"


def _background_workload(experiment: Experiment) -> WorkloadSpec | None:
    """The background job's workload, its phases labelled ``background ...``."""
    if not experiment.has_background:
        return None
    try:
        spec = parse_workload(experiment.background)
    except WorkloadError as exc:
        raise ExperimentError(f"background: {exc}") from None
    phases = tuple(replace(p, label=BACKGROUND_PREFIX + p.label) for p in spec.phases)
    return replace(spec, phases=phases)


def _attribution(network: FluidNetwork, request_seconds: dict[str, dict[str, float]]) -> list[PhaseAttribution]:
    """Flow-seconds per (iteration, phase) spent limited by each kind of resource or cap,
    and the seconds its requests spent in each part of the request-level models."""
    kinds = [r.kind for r in network.resources]
    stats = network.stats  # brought up to date once (the property banks every cell)
    moved: dict[tuple[int, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    # Per phase and limiter kind, the seconds held while a mechanism lowered its capacity.
    lowered: dict[tuple[int, str], dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(float))
    )
    for label, seconds in request_seconds.items():
        if label == _OPEN_CLOSE_TAG:
            continue
        iteration, phase = label.split("/", 1)
        bucket = moved[(int(iteration), phase)]
        for kind, value in seconds.items():
            if value > 0:
                bucket[kind] += value
    # Work the ranks do not wait for (network.tag's awaited=False) sets no phase's time.
    unawaited = network.unawaited_tags
    for label, tag in network.tags.items():
        if tag in unawaited:
            continue
        iteration, phase, cap_reason = label.split("/", 2)
        work = stats.limited_time[tag]
        bucket = moved[(int(iteration), phase)]
        if work[0] > 0:
            bucket[cap_reason] += float(work[0])
        for index in np.flatnonzero(work[1:]):
            bucket[kinds[index]] += float(work[index + 1])
    labels = {tag: label for label, tag in network.tags.items()}
    for (tag, mechanism), reduced in stats.reduced_time.items():
        if tag in unawaited:
            continue
        iteration, phase, _ = labels[tag].split("/", 2)
        for index in np.flatnonzero(reduced[1:]):
            lowered[(int(iteration), phase)][kinds[index]][mechanism] += float(reduced[index + 1])
    return [
        PhaseAttribution(
            it, phase, dict(by_kind), {kind: dict(by) for kind, by in lowered.get((it, phase), {}).items()}
        )
        for (it, phase), by_kind in moved.items()
    ]
