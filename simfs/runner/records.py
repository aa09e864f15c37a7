"""What one rank did in one phase, and how a phase's ranks add up (IOR's arithmetic).

A :class:`RankPhase` is a flat record (Ciw's data records): it becomes one row of the
per-rank trace.  Times are seconds on the run's clock (0 = the first barrier).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class RankPhase:
    """One rank's timings and counts for one phase of one iteration.

    ``ops`` counts transfers (data phases) or items (metadata phases).
    ``pairs_at_deadline`` is the transfers (mdtest: items) done when the stonewall deadline
    hit (-1: the phase has no deadline, or it finished first); ``deadline_s``, for mdtest
    ``-W``, the seconds from the phase's start to that moment (mdtest's stonewall time;
    IOR's is the transfer time).  ``samples`` holds per-operation
    ``(offset, bytes, start, seconds)`` when per-operation tracing is on.
    """

    rank: int
    host: str
    iteration: int
    phase: str
    op: str
    open_start: float = math.nan
    open_end: float = math.nan
    xfer_start: float = math.nan
    xfer_end: float = math.nan
    close_start: float = math.nan
    close_end: float = math.nan
    bytes: int = 0
    ops: int = 0
    pairs_at_deadline: int = -1
    deadline_s: float = math.nan
    samples: list[tuple[int, int, float, float]] = field(default_factory=list, repr=False)

    def row(self) -> dict[str, Any]:
        return _flat_row(self, exclude="samples")


@dataclass(frozen=True)
class PhaseResult:
    """A phase of one iteration over all ranks, as IOR and mdtest report it.

    ``makespan_s`` is the last close minus the first open; ``bandwidth_Bps`` the bytes of
    all ranks over it (IOR); ``rate_per_s`` the items of all ranks over it (mdtest);
    ``sum_of_ranks_Bps`` each rank's bytes over its own open-to-close time, summed
    (dd and bonnie++ on several nodes, as the seeds add them).
    """

    iteration: int
    phase: str
    op: str
    ranks: int
    bytes: int
    ops: int
    makespan_s: float
    bandwidth_Bps: float
    rate_per_s: float
    sum_of_ranks_Bps: float
    open_s: float
    xfer_s: float
    close_s: float
    latency_s: float
    stonewall_s: float
    pairs_min: int
    pairs_max: int
    pairs_total: int

    @classmethod
    def of(cls, records: list[RankPhase]) -> PhaseResult:
        first = records[0]
        start = min(r.open_start for r in records)
        end = max(r.close_end for r in records)
        makespan = end - start
        total_bytes = sum(r.bytes for r in records)
        total_ops = sum(r.ops for r in records)
        own = [r.bytes / (r.close_end - r.open_start) for r in records if r.close_end > r.open_start]
        # IOR's open, wr/rd and close columns are the longest of the ranks.
        xfer = max(r.xfer_end - r.xfer_start for r in records)
        latency = sum((r.xfer_end - r.xfer_start) / r.ops for r in records if r.ops) / len(records)
        pairs = [r.pairs_at_deadline for r in records if r.pairs_at_deadline >= 0]
        stonewalled = [r for r in records if r.pairs_at_deadline >= 0]
        return cls(
            iteration=first.iteration,
            phase=first.phase,
            op=first.op,
            ranks=len(records),
            bytes=total_bytes,
            ops=total_ops,
            makespan_s=makespan,
            bandwidth_Bps=total_bytes / makespan if makespan > 0 else math.nan,
            rate_per_s=total_ops / makespan if makespan > 0 else math.nan,
            sum_of_ranks_Bps=sum(own),
            open_s=max(r.open_end - r.open_start for r in records),
            xfer_s=xfer,
            close_s=max(r.close_end - r.close_start for r in records),
            latency_s=latency,
            stonewall_s=max(
                (r.deadline_s if math.isfinite(r.deadline_s) else r.xfer_end - r.xfer_start for r in stonewalled),
                default=math.nan,
            ),
            pairs_min=min(pairs, default=-1),
            pairs_max=max(pairs, default=-1),
            pairs_total=sum(pairs) if pairs else -1,
        )

    def row(self) -> dict[str, Any]:
        return _flat_row(self)


def _flat_row(record: Any, exclude: str = "") -> dict[str, Any]:
    # dataclasses.asdict deep-copies every value (27 us a record against 3 us here): a
    # tenth of a second per 4,000 records, of the one second an MPI reporter has after
    # Ctrl-C (mpirun kills the ranks 1 s after forwarding it).  Every kept field is a scalar.
    return {f.name: getattr(record, f.name) for f in fields(record) if f.name != exclude}
