"""File layouts: striping over targets, and the choice of targets for a new file.

A file with stripe count ``c`` and stripe size ``S`` stores byte ``x`` in stripe object
``(x // S) % c`` (Lustre's RAID-0 layout of objects; PanFS's parity groups and CXFS's
XVM stripes are the same arithmetic over blades and LUNs, GPFS's blocks over NSDs with
``S`` the block size).  The metadata service picks the ``c`` targets when the file is
created:

* default (``stripe_offset = -1``): round robin over a list that interleaves targets by
  server, starting at a random position and advancing by ``c`` per file, as Lustre's RR
  allocator does when space is balanced (Lustre Operations Manual, "Managing free space":
  round-robin allocator; lov_qos.c);
* fixed (``stripe_offset = i``): stripes on targets ``i, i+1, ...`` in index order for
  every file (``lfs setstripe -i i``), so all files start on the same target.

Grouped layouts (PanFS).  PanFS stripes each contiguous ``group_bytes`` of a file (a GB)
over one RAID group of ``group_width`` blades only, the next GB over the next group
(Bent et al., SC09: "each contiguous GB is spread only across a single RAID group ...
consisting of just eight storage devices from a pool of around one hundred").  A grouped
layout lists the groups' targets one group after another; byte ``x`` is in group
``(x // group_bytes) mod groups`` and within it striped as above over ``group_width``
targets.  Its stripe objects are the targets' slots: slot ``g * width + k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simfs.errors import check_whole

if TYPE_CHECKING:
    # numpy is imported where arrays are made: reading a profile (``simfs show``) never
    # makes one, and numpy is most of that command's start-up.
    import numpy as np


@dataclass(frozen=True)
class Layout:
    """Where one file's stripes live: ``targets[k]`` holds stripe object ``k``.

    With ``group_width`` (PanFS), each ``group_bytes`` of the file lives on the next group
    of ``group_width`` consecutive entries of ``targets`` (see the module docstring)."""

    targets: tuple[int, ...]
    stripe_size_bytes: int
    group_width: int = 0
    group_bytes: int = 0

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError("layout: targets: expected at least one target")
        check_whole("layout", "stripe_size_bytes", self.stripe_size_bytes, 1)
        check_whole("layout", "group_width", self.group_width, 0)
        check_whole("layout", "group_bytes", self.group_bytes, 0)
        if self.group_width:
            if self.group_bytes < 1:
                raise ValueError(f"layout: group_bytes: a grouped layout needs at least 1, got {self.group_bytes!r}")
            if len(self.targets) % self.group_width:
                raise ValueError(f"targets: {len(self.targets)} is not a whole number of groups of {self.group_width}")
            if self.group_bytes % (self.group_width * self.stripe_size_bytes):
                raise ValueError("group_bytes: expected a whole number of stripe rows of the group")

    @property
    def stripe_count(self) -> int:
        return len(self.targets)

    @property
    def width(self) -> int:
        """Targets one byte range is striped over (a group's, or all)."""
        return self.group_width or len(self.targets)

    @property
    def groups(self) -> int:
        return len(self.targets) // self.group_width if self.group_width else 1

    def locate(self, offset: int) -> tuple[int, int]:
        """``(stripe object, offset in it)`` of file byte ``offset``."""
        size, width = self.stripe_size_bytes, self.width
        cycle = 0
        slot_base = 0
        if self.group_width:
            chunk, offset = divmod(offset, self.group_bytes)
            cycle, group = divmod(chunk, self.groups)
            slot_base = group * width
        unit, within = divmod(offset, size)
        row, column = divmod(unit, width)
        per_chunk = self.group_bytes // width if self.group_width else 0
        return slot_base + column, cycle * per_chunk + row * size + within

    def file_offset(self, obj: int, obj_offset: int) -> int:
        """The file offset of byte ``obj_offset`` of stripe object ``obj``."""
        size, width = self.stripe_size_bytes, self.width
        if not self.group_width:
            row, within = divmod(obj_offset, size)
            return (row * width + obj) * size + within
        group, column = divmod(obj, width)
        per_chunk = self.group_bytes // width
        cycle, rest = divmod(obj_offset, per_chunk)
        row, within = divmod(rest, size)
        chunk = cycle * self.groups + group
        return chunk * self.group_bytes + (row * width + column) * size + within

    def pieces(self, offset: int, length: int) -> list[tuple[int, int, int]]:
        """``(stripe object, start, end)`` in object offsets of ``[offset, offset + length)``,
        in file order of their first bytes, each object's bytes merged where contiguous
        in it (one piece per object for a range within one pass over the targets)."""
        size = self.stripe_size_bytes
        order: list[int] = []
        runs: dict[int, list[list[int]]] = {}
        position, end = offset, offset + length
        while position < end:
            step_end = min(end, (position // size + 1) * size)
            obj, obj_start = self.locate(position)
            obj_end = obj_start + step_end - position
            spans = runs.get(obj)
            if spans is None:
                runs[obj] = [[obj_start, obj_end]]
                order.append(obj)
            elif spans[-1][1] == obj_start:
                spans[-1][1] = obj_end
            else:
                spans.append([obj_start, obj_end])
            position = step_end
        return [(obj, start, stop) for obj in order for start, stop in runs[obj]]

    def bytes_per_object(self, offset: int, length: int) -> np.ndarray:
        """Bytes of ``[offset, offset + length)`` in each stripe object."""
        import numpy as np

        if not self.group_width:
            return stripe_bytes(offset, length, self.stripe_size_bytes, self.stripe_count)
        result = np.zeros(self.stripe_count)
        width, position, end = self.width, offset, offset + length
        chunks = -(-end // self.group_bytes) - position // self.group_bytes
        if chunks > 2 * self.groups:
            # Many whole passes over the groups: each slot gets its share of them.
            passes = (chunks - 2) // self.groups
            whole = passes * self.groups * self.group_bytes
            result += whole / self.stripe_count
            start_chunk = position // self.group_bytes + 1
            head_end = start_chunk * self.group_bytes
            result += self.bytes_per_object(position, head_end - position)
            tail_start = head_end + whole
            return result + self.bytes_per_object(tail_start, end - tail_start)
        while position < end:
            chunk = position // self.group_bytes
            chunk_end = min(end, (chunk + 1) * self.group_bytes)
            group = chunk % self.groups
            within = position - chunk * self.group_bytes
            result[group * width : (group + 1) * width] += stripe_bytes(
                within, chunk_end - position, self.stripe_size_bytes, width
            )
            position = chunk_end
        return result

    def segmented_bytes_per_object(self, first_offset: int, block: int, stride: int, segments: int) -> np.ndarray:
        """Bytes per stripe object of ``segments`` blocks at ``first_offset + k * stride``."""
        import numpy as np

        if not self.group_width:
            return segmented_stripe_bytes(
                first_offset, block, stride, segments, self.stripe_size_bytes, self.stripe_count
            )
        if segments > _EXACT_SEGMENTS:
            # A long strided pattern visits every group's rows alike: spread it evenly over
            # the groups it reaches (the pattern's exact per-slot split is not periodic
            # over a short cycle here, and does not matter once every slot is reached).
            extent = first_offset + (segments - 1) * stride + block
            reached = min(self.groups, -(-extent // self.group_bytes))
            result = np.zeros(self.stripe_count)
            result[: reached * self.width] = segments * block / (reached * self.width)
            return result
        result = np.zeros(self.stripe_count)
        for segment in range(segments):
            result += self.bytes_per_object(first_offset + segment * stride, block)
        return result


class TargetAllocator:
    """Chooses targets for new files (one allocator per metadata service, per run).

    Parameters
    ----------
    server_of_target: for each target index, the index of the server that serves it.
    stripe_offset: -1 for round robin from a random start, or a fixed first target.
    rng: the run's random generator (only the random start uses it).
    excluded: targets no new file may use (a failed PanFS blade).
    """

    def __init__(
        self,
        server_of_target: list[int],
        stripe_offset: int,
        rng: np.random.Generator,
        excluded: tuple[int, ...] = (),
    ) -> None:
        if not server_of_target:
            raise ValueError("server_of_target: an allocator needs at least one target")
        check_whole("allocator", "stripe_offset", stripe_offset, -1)
        if not hasattr(rng, "integers"):
            raise ValueError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {rng!r}")
        usable = [i for i in range(len(server_of_target)) if i not in excluded]
        if not usable:
            raise ValueError("excluded: every target is excluded; no file can be placed")
        if not -1 <= stripe_offset < len(server_of_target) or stripe_offset in excluded:
            raise ValueError(
                f"stripe_offset: expected -1 or a usable target in 0..{len(server_of_target) - 1}, got {stripe_offset}"
            )
        self._target_count = len(usable)
        self._offset = stripe_offset
        # Interleave by server: first target of every server, then the second of every server, ...
        rank_in_server = {
            i: sum(1 for j in usable if j < i and server_of_target[j] == server_of_target[i]) for i in usable
        }
        self._rr_order = sorted(usable, key=lambda i: (rank_in_server[i], server_of_target[i]))
        self._usable = usable  # in index order
        self._rng = rng
        self._next = int(rng.integers(self._target_count)) if stripe_offset == -1 else 0

    @property
    def target_count(self) -> int:
        return self._target_count

    def draw(self, stripe_size_bytes: int) -> Layout:
        """A one-target layout on a usable target drawn uniformly: a file placed by a hash
        of its name (GlusterFS's DHT), independent of the files before it."""
        return Layout((self._usable[int(self._rng.integers(self._target_count))],), stripe_size_bytes)

    def allocate(
        self, stripe_count: int, stripe_size_bytes: int, *, advance: int | None = None, overstriping: bool = False
    ) -> Layout:
        """The next file's layout; the next file starts ``advance`` targets on (default:
        past this file's targets, as Lustre's round robin).  With ``overstriping``
        (Lustre's ``lfs setstripe -C``) ``stripe_count`` may exceed the targets: the
        objects go round the targets again, several on each."""
        if stripe_count == -1:
            stripe_count = self._target_count
        most = stripe_count if overstriping else self._target_count
        if not 1 <= stripe_count <= most:
            raise ValueError(
                f"stripe_count: expected 1..{self._target_count} (or -1 for all targets), got {stripe_count}"
            )
        if self._offset >= 0:
            first = self._usable.index(self._offset)
            targets = tuple(self._usable[(first + k) % self._target_count] for k in range(stripe_count))
        else:
            targets = tuple(self._rr_order[(self._next + k) % self._target_count] for k in range(stripe_count))
            if advance is not None:
                self._next = (self._next + advance) % self._target_count
                return Layout(targets, stripe_size_bytes)
            advance = stripe_count
            if stripe_count % self._target_count == 0:
                # A file over the whole pool would start the next one on the same target
                # (its first object, a grouped layout's first group, always on one place);
                # Lustre's lod_alloc_rr "slowly precesses" the start once it has used all
                # targets, so the next file starts one further on.
                advance += 1
            self._next = (self._next + advance) % self._target_count
        return Layout(targets, stripe_size_bytes)


#: Segments of a strided pattern over a grouped layout counted one by one, at most.
_EXACT_SEGMENTS = 4096


def stripe_bytes(offset: int, length: int, stripe_size: int, stripe_count: int) -> np.ndarray:
    """Bytes of ``[offset, offset + length)`` that land in each of the stripe objects."""
    import numpy as np

    result = np.zeros(stripe_count)
    if length <= 0:
        return result
    first_unit = offset // stripe_size
    last_unit = (offset + length - 1) // stripe_size
    k = np.arange(stripe_count)
    # Units u in [first_unit, last_unit] with u % stripe_count == k.
    units = (last_unit - k) // stripe_count - (first_unit - 1 - k) // stripe_count
    result += units * stripe_size
    result[first_unit % stripe_count] -= offset - first_unit * stripe_size
    result[last_unit % stripe_count] -= (last_unit + 1) * stripe_size - (offset + length)
    return result


def segmented_stripe_bytes(
    first_offset: int, block: int, stride: int, segments: int, stripe_size: int, stripe_count: int
) -> np.ndarray:
    """Bytes per stripe object of ``segments`` blocks at ``first_offset + k * stride``.

    Offsets modulo one stripe cycle repeat with period ``cycle / gcd(stride, cycle)``, so
    only one period is computed however many segments there are.
    """
    cycle = stripe_size * stripe_count
    period = cycle // math.gcd(stride % cycle or cycle, cycle)
    counted = min(segments, period)
    one_pass = _strided_bytes(first_offset, block, stride, counted, stripe_size, stripe_count)
    if segments <= period:
        return one_pass
    full, rest = divmod(segments, period)
    return one_pass * full + _strided_bytes(first_offset, block, stride, rest, stripe_size, stripe_count)


#: Segments whose offsets are held in memory at once by ``_strided_bytes`` (8 MB each array).
_STRIDED_CHUNK = 1 << 20


def _strided_bytes(
    first_offset: int, block: int, stride: int, segments: int, stripe_size: int, stripe_count: int
) -> np.ndarray:
    """The sum of ``stripe_bytes`` over ``segments`` blocks at ``first_offset + k * stride``,
    without a call per block: a block ``[a, b)`` puts ``below(b) - below(a)`` bytes in each
    object, where ``below(x)`` counts the bytes of ``[0, x)`` there, so the blocks' ends
    and starts are summed separately, each a histogram of stripe units.  Integer
    arithmetic throughout (an ior-hard pattern has a period of up to millions of blocks,
    which a numpy call per block made hours of CPU in the IO500 study); the counts are
    whole bytes, exact in float64 below 2**53, so the answer is the per-block sum's, bit
    for bit."""
    import numpy as np

    total = np.zeros(stripe_count, dtype=np.int64)
    if block <= 0 or segments <= 0:
        return total.astype(float)
    cycle = stripe_size * stripe_count
    for chunk_start in range(0, segments, _STRIDED_CHUNK):
        index = np.arange(chunk_start, min(segments, chunk_start + _STRIDED_CHUNK), dtype=np.int64)
        starts = first_offset + index * stride
        ends = starts + block
        # Whole cycles between a block's start and end give every object a unit each
        # (a difference per block: sums of offsets this size would overflow int64).
        total += int((ends // cycle - starts // cycle).sum()) * stripe_size
        total += _bytes_below(ends % cycle, stripe_size, stripe_count)
        total -= _bytes_below(starts % cycle, stripe_size, stripe_count)
    return total.astype(float)


def _bytes_below(within: np.ndarray, stripe_size: int, stripe_count: int) -> np.ndarray:
    """Per stripe object, the bytes of ``[0, x)`` it holds, summed over every ``x`` in
    ``within`` (offsets inside one stripe cycle): ``x`` fills whole units of the objects
    before unit ``x // stripe_size`` and part of that one."""
    import numpy as np

    unit, part = np.divmod(within, stripe_size)
    per_unit = np.bincount(unit, minlength=stripe_count)
    # How many of the offsets fill object k whole: those whose unit is past k.
    past = np.concatenate((np.cumsum(per_unit[::-1])[::-1][1:], [0]))
    partial = np.zeros(stripe_count, dtype=np.int64)
    np.add.at(partial, unit, part)
    return past * stripe_size + partial
