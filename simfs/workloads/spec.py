"""The workload description shared by the simulator and the runner.

A command line (``dd ...``, ``ior ...``) is parsed into a :class:`WorkloadSpec`: an
ordered list of :class:`PhaseSpec` repeated ``iterations`` times.  Nodes and processes
per node are not part of it; they are experiment settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Op = Literal["write", "read"]


@dataclass(frozen=True)
class PhaseSpec:
    """One timed phase every rank runs.

    Attributes
    ----------
    op: ``"write"`` or ``"read"``.
    bytes_per_rank: bytes each rank moves.
    transfer_size_bytes: bytes per read()/write() call.
    shared_file: all ranks use one file (IOR without ``-F``) instead of one each.
    fsync: the timed phase includes an fsync before close (IOR ``-e``, dd ``conv=fsync``).
    direct: O_DIRECT: no page cache, one transfer in flight per rank.
    reorder_tasks: read the data written by the rank one node away (IOR ``-C``), so that
        a node never reads what its own page cache holds.
    label: the phase's name in results.
    segment_count: IOR ``-s``: a rank's data is ``segment_count`` blocks; in a shared
        file, segment ``k`` of rank ``r`` starts at ``(k * ranks + r) * block``.
    """

    op: Op
    bytes_per_rank: int
    transfer_size_bytes: int
    shared_file: bool = False
    fsync: bool = False
    direct: bool = False
    reorder_tasks: bool = False
    label: str = ""
    segment_count: int = 1

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.op)

    @property
    def block_size_bytes(self) -> int:
        return self.bytes_per_rank // self.segment_count


@dataclass(frozen=True)
class WorkloadSpec:
    """A parsed workload.

    Attributes
    ----------
    tool: ``"dd"`` or ``"ior"``.
    command: the command line it came from.
    phases: the phases in order.
    iterations: how often the phase sequence is repeated (IOR ``-i``).
    aggregate: how the tool reports aggregate bandwidth: ``"sum_of_ranks"`` (each dd
        prints its own rate; the seed sums them) or ``"makespan"`` (IOR: total bytes over
        last close minus first open).
    """

    tool: str
    command: str
    phases: tuple[PhaseSpec, ...]
    iterations: int = 1
    aggregate: Literal["sum_of_ranks", "makespan"] = "makespan"
    options: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def bytes_per_rank(self) -> int:
        return max(p.bytes_per_rank for p in self.phases)
