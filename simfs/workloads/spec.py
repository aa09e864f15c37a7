"""The workload description shared by the simulator and the runner.

A command line (``dd ...``, ``ior ...``) is parsed into a :class:`WorkloadSpec`: an
ordered list of :class:`PhaseSpec` repeated ``iterations`` times.  Nodes and processes
per node are not part of it; they are experiment settings.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from simfs.errors import WorkloadError, check_finite, check_whole

Op = Literal["write", "read", "rewrite", "create", "stat", "remove", "mix"]
#: Ops that are metadata operations on ``items_per_rank`` items (mdtest phases).
METADATA_OPS = ("create", "stat", "remove")

#: Bytes a rank may move in one phase: float64 counts every byte exactly up to 2^53, and
#: a phase's bytes are summed over ranks in floats (beyond it ``-s 2^63`` lost 1 MiB).
MAX_BYTES_PER_RANK = 2**53
#: Metadata items per rank and phase (mdtest ``-n``): each is simulated request by request.
MAX_ITEMS_PER_RANK = 100_000_000
#: Repetitions of the phase sequence (IOR ``-i``, mdtest ``-i``).
MAX_ITERATIONS = 100_000
#: An open-loop phase's op: a mix of operations offered at a requested rate (SPECsfs).
OPEN_LOOP_OP = "mix"
_OPS = ("write", "read", "rewrite", *METADATA_OPS, OPEN_LOOP_OP)


@dataclass(frozen=True)
class DirectoryTree:
    """mdtest's directory tree (``-z DEPTH -b BRANCH [-L] [-I ITEMS]``): where a rank's
    items go, ``items_per_directory`` in each directory that holds items, directory after
    directory in mdtest's order (pre-order, depth first: a directory's items, then each
    child's subtree), the whole tree ``loops`` times (mdtest ``-n`` with ``-I`` in a shared
    tree: one tree per ``-I`` items).

    Attributes
    ----------
    depth: levels below the top directory (``-z``; 0: the top directory alone).
    branch: subdirectories of each directory above the leaves (``-b``).
    leaf_only: items in the leaves only (``-L``), not in every directory.
    items_per_directory: a rank's items in each directory that holds items.
    loops: trees one after another, each with the same items per directory.
    """

    depth: int
    branch: int
    leaf_only: bool
    items_per_directory: int
    loops: int = 1

    def __post_init__(self) -> None:
        for name in ("branch", "items_per_directory", "loops"):
            check_whole("directory tree", name, getattr(self, name), 1, WorkloadError)
        check_whole("directory tree", "depth", self.depth, 0, WorkloadError)

    @property
    def directories(self) -> int:
        """Directories in one tree (mdtest's ``num_dirs_in_tree``)."""
        if self.branch == 1:
            return self.depth + 1
        return (self.branch ** (self.depth + 1) - 1) // (self.branch - 1)

    @property
    def holders_per_tree(self) -> int:
        """Directories of one tree that hold items: its leaves with ``leaf_only``."""
        return self.branch**self.depth if self.leaf_only else self.directories

    @property
    def items(self) -> int:
        """A rank's items over all its trees."""
        return self.loops * self.holders_per_tree * self.items_per_directory

    def runs(self, first: int, count: int) -> Iterator[tuple[int, int]]:
        """``(directory, items)`` for a rank's items ``first`` to ``first + count``, one
        run per directory (numbered in the order mdtest fills them, over all loops)."""
        end = first + count
        while first < end:
            directory = first // self.items_per_directory
            stop = min(end, (directory + 1) * self.items_per_directory)
            yield directory, stop - first
            first = stop

    def path(self, directory: int) -> str:
        """The relative path of item-holding ``directory`` (as numbered by :meth:`runs`):
        ``tree.0/d3/d1`` is loop 0's top directory, its child 3, that one's child 1."""
        loop, index = divmod(directory, self.holders_per_tree)
        return "/".join((f"tree.{loop}", *self._holder_steps()[index]))

    @functools.cache  # noqa: B019 (frozen and hashable: one cache entry per tree shape)
    def _holder_steps(self) -> tuple[tuple[str, ...], ...]:
        """The child steps from the top to each item-holding directory, in mdtest's order."""
        holders: list[tuple[str, ...]] = []

        def visit(steps: tuple[str, ...]) -> None:
            if not self.leaf_only or len(steps) == self.depth:
                holders.append(steps)
            if len(steps) < self.depth:
                for child in range(self.branch):
                    visit((*steps, f"d{child}"))

        visit(())
        return tuple(holders)


@dataclass(frozen=True)
class PhaseSpec:
    """One timed phase every rank runs.

    Attributes
    ----------
    op: ``"write"``, ``"read"`` or ``"rewrite"`` (data; rewrite moves the bytes once each
        way), or ``"create"``, ``"stat"``, ``"remove"``
        (metadata on ``items_per_rank`` items; an mdtest read phase is ``"read"`` with
        items).
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
    items_per_rank: metadata items each rank handles (mdtest ``-n``); 0 for a data phase.
    shared_directory: the files a phase creates or removes share one directory (IOR
        ``-F``, mdtest without ``-u``), so their directory updates serialise.
    server_side: the phase runs on an OSS against its OSTs (obdfilter-survey): no client,
        no network; each rank is an object.
    same_data: every rank reads the same bytes: all of one shared file (the SFWA
        access class: every client reads a common input file).
    task_offset: with ``reorder_tasks``, rank ``r`` reads the data of rank
        ``(r + task_offset * ppn) mod ranks``, ``task_offset`` nodes away (IOR ``-Q``
        with its by-slot mapping of ranks to nodes).
    random_offsets: each transfer once, in a random order within the rank's blocks
        (IOR ``-z``): reads without read-ahead, a request per transfer at the targets.
    stonewall_s: stop issuing transfers this many seconds into the phase (IOR ``-D``);
        0 for no deadline.
    wear_out: after the deadline every rank continues until it has done as many
        transfers as the rank that did most (IOR ``-O stoneWallingWearOut=1``).
    owner_stride: rank ``r`` works on the items of rank ``r + owner_stride`` (mdtest
        ``-N``: stat, read and remove the files another rank created; with the stride
        a node's ranks, another node's).
    collective: MPI-IO collective I/O (``MPI_File_write_all``, IOR ``-c``, benchio): the
        ranks' data is gathered by aggregators, one per node up to the file's stripe
        count, which write whole stripes (ROMIO's two-phase I/O).
    stonewall_bound: the phase does what an earlier stonewalled phase did (IOR ``-O
        stoneWallingStatusFile=`` without ``-D``, mdtest ``-x`` on a stat, read or remove
        phase): the size on the command line is only its upper bound, and like a
        stonewalled phase its result is a steady rate (:mod:`simfs.workloads.steady_state`).
    existing_file: write into the file that is there (IOR ``-E``): opened, not created.
    directory_tree: where the items go (mdtest ``-z``, ``-b``, ``-I``); ``None``: all of
        them in one directory.
    transfer_limit: at most this many of the rank's transfers, the first in its order (0:
        all of them): the sample of a time-bounded phase at random offsets, whose blocks
        keep their size (:mod:`simfs.workloads.steady_state`).
    load_per_s: an open-loop phase (op ``"mix"``, SPECsfs2008 ``LOAD``): operations per
        second requested over all ranks, each rank a load-generating process that paces
        its share (:mod:`simfs.workloads.specsfs`); 0 for every other phase.
    warmup_s: an open-loop phase's warm-up before its measured interval (``WARMUP_TIME``).
    runtime_s: an open-loop phase's measured interval (``RUNTIME``).
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
    items_per_rank: int = 0
    shared_directory: bool = False
    server_side: bool = False
    same_data: bool = False
    task_offset: int = 1
    random_offsets: bool = False
    stonewall_s: float = 0.0
    wear_out: bool = False
    owner_stride: int = 0
    collective: bool = False
    stonewall_bound: bool = False
    existing_file: bool = False
    directory_tree: DirectoryTree | None = None
    transfer_limit: int = 0
    load_per_s: float = 0.0
    warmup_s: float = 0.0
    runtime_s: float = 0.0

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise WorkloadError(f"phase: op: expected one of {', '.join(_OPS)}, got {self.op!r}")
        if not self.label:
            object.__setattr__(self, "label", self.op)
        owner = f"phase {self.label!r}"
        # A metadata phase (mdtest: create, stat, read, remove) handles items, whose data
        # may be none; a data phase moves bytes.
        check_whole(owner, "items_per_rank", self.items_per_rank, 1 if self.op in METADATA_OPS else 0, WorkloadError)
        # An open-loop phase's bytes are its operations' (not simulated: specsfs.py).
        minimum_bytes = 0 if self.items_per_rank or self.op == OPEN_LOOP_OP else 1
        check_whole(owner, "bytes_per_rank", self.bytes_per_rank, minimum_bytes, WorkloadError)
        for name in ("transfer_size_bytes", "segment_count"):
            check_whole(owner, name, getattr(self, name), 1, WorkloadError)
        for name in ("task_offset", "owner_stride", "transfer_limit"):
            check_whole(owner, name, getattr(self, name), 0, WorkloadError)
        check_finite(owner, "stonewall_s", self.stonewall_s, 0, error=WorkloadError)
        check_finite(owner, "warmup_s", self.warmup_s, 0, error=WorkloadError)
        if self.op == OPEN_LOOP_OP:
            check_finite(owner, "load_per_s", self.load_per_s, 0, above=True, error=WorkloadError)
            check_finite(owner, "runtime_s", self.runtime_s, 0, above=True, error=WorkloadError)
        elif self.load_per_s or self.runtime_s:
            raise WorkloadError(f"{owner}: load_per_s and runtime_s belong to an open-loop ({OPEN_LOOP_OP!r}) phase")

    def data_owner(self, rank: int, ppn: int, ranks: int) -> int:
        """The rank whose data ``rank`` accesses: itself, or with ``reorder_tasks`` the
        rank ``task_offset`` nodes on (IOR ``-C -Q``, ranks placed on nodes by slot), or
        ``owner_stride`` ranks on (mdtest ``-N``)."""
        if self.owner_stride:
            return (rank + self.owner_stride) % ranks
        return (rank + self.task_offset * ppn) % ranks if self.reorder_tasks else rank

    @property
    def block_size_bytes(self) -> int:
        return self.bytes_per_rank // self.segment_count

    def with_items(self, items: int) -> PhaseSpec:
        """This metadata phase on ``items`` items per rank, each with its bytes."""
        per_item = self.bytes_per_rank // self.items_per_rank
        return dataclasses.replace(self, items_per_rank=items, bytes_per_rank=items * per_item)

    def with_segments(self, segments: int) -> PhaseSpec:
        """This data phase with ``segments`` IOR segments per rank, each block as it is."""
        return dataclasses.replace(self, segment_count=segments, bytes_per_rank=segments * self.block_size_bytes)

    @property
    def time_bounded(self) -> bool:
        """The phase ends at a stonewall (IOR ``-D``, mdtest ``-W``) or does what one
        left (:attr:`stonewall_bound`): its result is a rate, not a size."""
        return self.stonewall_s > 0 or self.stonewall_bound

    @property
    def is_open_loop(self) -> bool:
        """Operations offered at a requested rate, answered with a response time (SPECsfs)."""
        return self.op == OPEN_LOOP_OP

    @property
    def is_metadata(self) -> bool:
        """An mdtest phase: per-item metadata operations (and the item's data, if any)."""
        return self.items_per_rank > 0


@dataclass(frozen=True)
class WorkloadSpec:
    """A parsed workload.

    Attributes
    ----------
    tool: ``"dd"``, ``"ior"``, ``"mdtest"``, ``"bonnie++"`` or ``"obdfilter-survey"``.
    command: the command line it came from.
    phases: the phases in order.
    iterations: how often the phase sequence is repeated (IOR ``-i``).
    aggregate: how the tool reports aggregate bandwidth: ``"sum_of_ranks"`` (each dd
        prints its own rate; the seed sums them) or ``"makespan"`` (IOR: total bytes over
        last close minus first open).
    synchronized: ranks wait for each other before every phase (IOR, mdtest, the seed's
        dd pair); ``False`` for tools with no barriers (bonnie++), where ranks meet only
        at the start and a fast rank's next phase overlaps a slow rank's last.
    notes: what the command line asks for that the simulation leaves out (an interface or
        hints it has no model of), one line each; simulated results carry them.
    """

    tool: str
    command: str
    phases: tuple[PhaseSpec, ...]
    iterations: int = 1
    aggregate: Literal["sum_of_ranks", "makespan"] = "makespan"
    synchronized: bool = True
    intra_phase_barriers: bool = False
    options: dict[str, object] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if not self.phases or not all(isinstance(phase, PhaseSpec) for phase in self.phases):
            raise WorkloadError(f"{self.tool}: phases: expected one or more PhaseSpec, got {self.phases!r}")
        check_whole(self.tool, "iterations", self.iterations, 1, WorkloadError)
        if self.aggregate not in ("sum_of_ranks", "makespan"):
            raise WorkloadError(
                f"{self.tool}: aggregate: expected 'sum_of_ranks' or 'makespan', got {self.aggregate!r}"
            )
        for phase in self.phases:
            # A time-bounded phase's size is only its upper bound (the IO500 sets IOR's -b as
            # high as IOR's 64-bit offsets take and lets the stonewall end the phase).
            if phase.bytes_per_rank > MAX_BYTES_PER_RANK and not (phase.time_bounded and phase.bytes_per_rank < 2**63):
                raise WorkloadError(
                    f"{self.tool}: {phase.label}: {phase.bytes_per_rank:,} bytes per rank; simfs counts bytes "
                    f"exactly up to 2^53 = {MAX_BYTES_PER_RANK:,} (8 PiB) per rank and phase"
                )
            # A time-bounded phase is simulated on a sample (simfs.workloads.steady_state):
            # its -n is only an upper bound, which the IO500 sets as high as mdtest takes.
            if phase.items_per_rank > MAX_ITEMS_PER_RANK and not phase.time_bounded:
                raise WorkloadError(
                    f"{self.tool}: {phase.label}: {phase.items_per_rank:,} items per rank; at most "
                    f"{MAX_ITEMS_PER_RANK:,} (each item is simulated request by request)"
                )
        if self.iterations > MAX_ITERATIONS:
            raise WorkloadError(f"{self.tool}: {self.iterations:,} iterations; at most {MAX_ITERATIONS:,}")

    @property
    def bytes_per_rank(self) -> int:
        return max(p.bytes_per_rank for p in self.phases)


def transfer_offsets(phase: PhaseSpec, owner: int, ranks: int, iteration: int) -> tuple[int, Iterator[int]]:
    """How many transfers a rank makes in a phase, and their file offsets in the order it
    issues them, generated as it goes: a list would hold ~36 bytes per transfer (10 GB for
    a 1 TiB block in 4 KiB transfers), and a generator costs a few tens of nanoseconds per
    transfer where computing each offset from its index costs ~0.3 us.  IOR's layout:
    segment ``s`` of rank ``r``'s data starts at ``(s * ranks + r) * block`` in a shared
    file, at ``s * block`` in its own file; with random offsets (``-z``) the transfers are
    permuted, the same way on every run."""
    block, transfer = phase.block_size_bytes, phase.transfer_size_bytes
    per_block = max(block // transfer, 1)
    first = owner * block if phase.shared_file else 0
    stride = ranks * block if phase.shared_file else block
    count = phase.segment_count * per_block

    def in_order() -> Iterator[int]:
        for segment in range(phase.segment_count):
            start = first + segment * stride
            yield from range(start, start + per_block * transfer, transfer)

    def shuffled() -> Iterator[int]:
        import numpy as np

        order = np.random.default_rng((iteration, owner)).permutation(count)
        for chunk in range(0, count, 65536):
            for index in order[chunk : chunk + 65536].tolist():
                segment, within = divmod(index, per_block)
                yield first + segment * stride + within * transfer

    return count, shuffled() if phase.random_offsets else in_order()
