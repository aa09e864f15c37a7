"""What a simulation will cost, estimated before it starts, and the limits a run must
stay within unless the user forces it.

A typo (``--ppn 999999``, ``oss.count = 10000000``) or a workload far beyond what a
discrete-event simulation on one core can do should be refused in a second with the
estimate, not run for hours or until the machine runs out of memory.

The estimate is of the order of magnitude, from the three things that cost CPU time
(coefficients measured on the development machine, 2026-11-24 and 28, with
``benchmarks/bench_speed.py`` and the runs listed in ``docs/performance.md``; against
the measured runs of ``benchmarks/bench_scale.py``, ``docs/performance.md`` "One run
against the clients it models", it is 0.7 to 1.6 times their CPU time):

* **Fluid solves.**  Every start and end of a rank's data flow re-solves the network;
  when the ranks' creates queue at the metadata server the starts and ends are staggered,
  two solves per rank and data phase (IOR file-per-process, write then read, at 256, 512
  and 1,024 clients: 1,041, 2,065 and 4,130 solves; at 1,000 to 1,000,000 clients 2.0 to
  2.2 per rank and phase).  A solve costs about 0.55 ms plus 0.7 us per flow it solves.
  It solves the flows a change reaches through saturated resources, not every flow in
  flight: those that share a server with the changed one, about ``ranks x stripes /
  servers used`` (all of them when one shared file's stripes sit on a few servers).  At
  1,000 to 1,000,000 clients with ten per OST, 4 stripes over OSS of 4 OSTs, that is 160
  where the runs solved 1 to 252 on average.
* **Metadata requests**, one by one through the metadata service: about 16 us each
  (mdtest ``-n 1000`` on 64 ranks: 256,000 requests in 4.1 s).  An operation of an
  open-loop SPECsfs2008 run is one (``panasas-as9-fitted`` at 77,137 op/s, 10 x 150
  processes: 115,814 requests in 2.6 s of CPU, 22 us each, on 2026-11-29 beside the
  IO500 study; 5.3-6.4 s, 46-55 us, when that study ran on both cores of this VM).
* **Request-level writes** (shared-file writes from several nodes through the lock
  manager): about 210 us each (IO500 ior-hard, 1,000 x 1,000 writes in 210 s on
  2026-11-28; 349 s, 350 us a write, before the engine work of issue 20).  A phase
  with a deadline (IOR ``-D``) stops each rank's calls at it, so a node makes no more than
  its cores copy into the page cache in that time (a buffered write), or its link carries
  (``O_DIRECT``), plus one call in progress per rank.  The time is taken as twice the
  deadline: a rank's deadline runs from its own start, and the starts of a node's ranks
  spread as their opens queue at the metadata server.  The LANL MPI-IO Test N-1 runs, 75
  nodes x 4 ranks writing 10 MB records for 2 minutes, were estimated at 3 hours from
  their 100,000 records per rank and took 14 s (now about 2 minutes).

Memory: about 15 KB per rank (issue 20: 100,000 ranks took 1.49 GB) and about 4 KB per
server, target and client node built.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from simfs.errors import ExperimentError

#: Refuse a run estimated to take longer than this (seconds of one core) unless forced.
MAX_ESTIMATED_SECONDS = 3600.0
#: Refuse a run estimated to need more than this fraction of the machine's memory.
MAX_MEMORY_FRACTION = 0.5

_SOLVE_S = 0.55e-3
_SOLVE_PER_FLOW_S = 0.7e-6
_SOLVES_PER_RANK_PHASE = 2
_METADATA_REQUEST_S = 16e-6
_REQUEST_WRITE_S = 210e-6
# A node's request-level writes before a deadline are counted over this many deadlines:
# its ranks' deadlines run from their own starts, which their opens spread.
_DEADLINE_MARGIN = 2
_BYTES_PER_RANK = 15_000
_BYTES_PER_COMPONENT = 4_000
# Metadata requests per item of an mdtest phase, by operation (create + close, open + close).
_REQUESTS_PER_ITEM = {"create": 2, "stat": 1, "read": 2, "remove": 1}


@dataclass(frozen=True)
class Cost:
    """An estimate of one simulation: what it will do and what that costs."""

    ranks: int
    data_rank_phases: int
    metadata_requests: int
    request_writes: int
    components: int
    seconds: float
    memory_bytes: float

    def describe(self) -> str:
        return (
            f"about {_duration(self.seconds)} and {self.memory_bytes / 1e9:.1f} GB "
            f"({self.ranks:,} ranks, {self.data_rank_phases:,} rank data phases, "
            f"{self.metadata_requests:,} metadata requests, {self.request_writes:,} request-level writes, "
            f"{self.components:,} servers, targets and clients)"
        )


def estimate(
    ranks: int,
    nodes: int,
    phases: list,
    iterations: int,
    components: int,
    request_level_shared_writes: bool,
    *,
    stripe_count: int = 1,
    server_count: int = 1,
    node_copy_Bps: float = math.inf,
    node_link_Bps: float = math.inf,
    metadata_latency_s: float = 0.0,
) -> Cost:
    """The cost of ``ranks`` ranks on ``nodes`` nodes running ``phases`` (PhaseSpec)
    ``iterations`` times on a system of ``components`` servers, targets and clients;
    ``request_level_shared_writes``: a shared-file write goes through the lock manager;
    ``stripe_count``: the targets a file is striped over; ``server_count``: the data
    servers (OSS) they sit on; ``node_copy_Bps`` and ``node_link_Bps``: what one client
    node's cores copy into its page cache and its link carries, bytes per second (the
    writes a phase with a deadline can make before it); ``metadata_latency_s``: a metadata
    request's round trip, which bounds how many an open-loop process makes (0: no bound)."""
    if stripe_count < 1 or server_count < 1:
        raise ValueError(f"stripe_count and server_count: expected at least 1, got {stripe_count} and {server_count}")
    if not (node_copy_Bps > 0 and node_link_Bps > 0):  # NaN fails too
        raise ValueError(
            f"node_copy_Bps and node_link_Bps: expected positive rates, got {node_copy_Bps!r} and {node_link_Bps!r}"
        )
    data_rank_phases = 0
    metadata_requests = 0
    request_writes = 0
    solve_seconds = 0.0
    for phase in phases:
        if phase.is_open_loop:
            # One request per operation offered, warm-up included (SPECsfs2008); a process
            # has one in flight, so no more than one a round trip each.
            offered = phase.load_per_s
            if metadata_latency_s > 0:
                offered = min(offered, ranks / metadata_latency_s)
            metadata_requests += math.ceil(offered * (phase.warmup_s + phase.runtime_s))
            continue
        if phase.is_metadata:
            metadata_requests += ranks * phase.items_per_rank * _REQUESTS_PER_ITEM.get(phase.op, 1)
            continue
        data_rank_phases += ranks
        metadata_requests += 2 * ranks  # open (or create) and close
        solve_seconds += (
            _SOLVES_PER_RANK_PHASE
            * ranks
            * (
                _SOLVE_S
                + _SOLVE_PER_FLOW_S
                * _flows_per_solve(ranks, 1 if phase.shared_file else ranks, stripe_count, server_count)
            )
        )
        # As simulation._request_mode decides: shared-file writes from several nodes through
        # the lock manager; MPI-IO collective writes (benchio, IOR -c) are aggregated by
        # ROMIO's two-phase I/O instead and cost what a fluid phase costs.
        request_level = phase.shared_file and phase.op == "write" and not phase.collective and not phase.same_data
        if request_level_shared_writes and request_level and nodes > 1:
            transfer = max(phase.transfer_size_bytes, 1)
            transfers = max(phase.bytes_per_rank // transfer, 1)
            per_rank = min(transfers, phase.transfer_limit) if phase.transfer_limit else transfers
            phase_writes = ranks * per_rank
            node_Bps = node_link_Bps if phase.direct else node_copy_Bps
            if phase.stonewall_s > 0 and node_Bps < math.inf:
                per_node = int(node_Bps * _DEADLINE_MARGIN * phase.stonewall_s // transfer)
                phase_writes = min(phase_writes, nodes * per_node + ranks)
            request_writes += phase_writes
    data_rank_phases *= iterations
    metadata_requests *= iterations
    request_writes *= iterations
    seconds = solve_seconds * iterations + metadata_requests * _METADATA_REQUEST_S + request_writes * _REQUEST_WRITE_S
    memory = ranks * _BYTES_PER_RANK + components * _BYTES_PER_COMPONENT
    return Cost(ranks, data_rank_phases, metadata_requests, request_writes, components, seconds, memory)


def _flows_per_solve(ranks: int, files: int, stripe_count: int, server_count: int) -> int:
    """The flows one re-solve reaches: those sharing a server with the changed flow (each
    rank has one flow, over its file's stripes), all of them when the files' stripes
    cover few servers."""
    stripe_servers = min(stripe_count, server_count)
    servers_used = min(server_count, files * stripe_servers)
    return min(ranks, math.ceil(ranks * stripe_servers / servers_used))


def check(cost: Cost, *, force: bool = False) -> None:
    """Refuse ``cost`` above the limits (module docstring) unless ``force``."""
    if force:
        return
    if cost.seconds > MAX_ESTIMATED_SECONDS:
        raise ExperimentError(
            f"this run would take {cost.describe()}; the limit is {_duration(MAX_ESTIMATED_SECONDS)} "
            "(use --force, or force=True, to run it anyway)"
        )
    available = _memory_bytes()
    if available and cost.memory_bytes > MAX_MEMORY_FRACTION * available:
        raise ExperimentError(
            f"this run would need {cost.describe()}; the machine has {available / 1e9:.1f} GB "
            "(use --force, or force=True, to run it anyway)"
        )


def _memory_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0.0


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 86400:,.0f} days"
