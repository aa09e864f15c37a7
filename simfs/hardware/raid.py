"""RAID sets: streaming bandwidth of a set of identical drives, parity costs, failures.

Full stripes.  For large sequential I/O, RAID-0 delivers every drive's rate; RAID-5/6
with full-stripe writes and rotating parity deliver the data drives' rate
(``disks - parity``) for reads and writes alike, since each full stripe writes one chunk
per drive, parity included (Patterson, Gibson & Katz, "A case for redundant arrays of
inexpensive disks (RAID)", SIGMOD 1988).

Partial stripes.  A write covering ``k`` of the ``d`` data chunks of a stripe (``k < d``)
either reads the old data and parity and writes both back (read-modify-write: ``2k + 2p``
chunk transfers) or reads the ``d - k`` chunks it does not change and writes its ``k``
and the parity (reconstruct-write: ``d + p``), instead of the ``k (d + p) / d`` a full
stripe costs per data chunk (Chen et al., "RAID: high-performance, reliable secondary
storage", ACM Computing Surveys 26(2), 1994, the small-write problem).  Array software
takes the cheaper of the two per stripe (Linux md: ``handle_stripe_dirtying`` in
``drivers/md/raid5.c`` counts the reads each needs), and so does simfs, counting the bytes
the drives move: for ``b`` bytes in one stripe of ``c``-byte chunks, ``2b + 2p min(c, b)``
against ``(d + p) c``.  The chunks a request touches set how many drives position for it
(:meth:`RaidSet.drive_request_bytes`).

Alignment.  Requests are taken as aligned to their own size in the volume; where the
volume's data starts ``data_offset_bytes`` past a stripe boundary (an LVM physical
volume's first extent, a partition's first sector), every request is shifted by that
much, and a request of a full stripe's size straddles two stripes, each written in part.
:meth:`RaidSet.write_cost` gives the drive work of a request size relative to aligned
full-stripe writing, averaged over the positions the requests take in their stripes;
:meth:`RaidSet.drive_request_bytes` the bytes each drive moves per request.

Software RAID write thread.  Linux md handled all stripe work of a RAID-5/6 array in one
kernel thread (``raid5d``) until Linux 3.12 (2013, "raid5: multi-threaded" by Shaohua Li);
parity generation and stripe-cache handling for writes then run on one core per array,
which caps the array's write rate below its drives' rate on fast sets.  ``write_thread_Bps``
is that cap (0: hardware RAID, or none known); reads bypass it.

Failures.  A set with a failed drive (RAID-5/6) serves every request from the surviving
drives: to first order it loses that drive's share, ``(n - 1) / n``.  While it rebuilds,
the rebuild also takes ``rebuild_fraction`` of what is left.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from simfs.errors import check_finite, check_whole
from simfs.hardware.hdd import HddSpec
from simfs.hardware.ssd import SsdSpec

Drive = HddSpec | SsdSpec

#: Parity drives per RAID level.
PARITY_DISKS = {"raid0": 0, "raid5": 1, "raid6": 2}
RAID_STATES = ("optimal", "degraded", "rebuilding")


@dataclass(frozen=True)
class RaidSet:
    """``disk_count`` drives of one model at one RAID ``level``, striped in ``chunk_bytes``."""

    level: str
    disk_count: int
    drive: Drive
    chunk_bytes: int = 0
    write_thread_Bps: float = 0.0
    data_offset_bytes: int = 0

    def __post_init__(self) -> None:
        if self.level not in PARITY_DISKS:
            raise ValueError(f"level: expected one of {sorted(PARITY_DISKS)}, got {self.level!r}")
        check_whole("raid", "disk_count", self.disk_count, 1)
        check_whole("raid", "chunk_bytes", self.chunk_bytes, 0)  # 0: unknown, no partial-stripe cost
        check_whole("raid", "data_offset_bytes", self.data_offset_bytes, 0)  # 0: data starts on a stripe boundary
        check_finite("raid", "write_thread_Bps", self.write_thread_Bps, 0)  # 0: no software RAID thread limit
        if self.disk_count <= PARITY_DISKS[self.level]:
            raise ValueError(
                f"disk_count: {self.level} needs more than {PARITY_DISKS[self.level]} drives, got {self.disk_count}"
            )

    @property
    def parity_disks(self) -> int:
        return PARITY_DISKS[self.level]

    @property
    def data_disks(self) -> int:
        return self.disk_count - self.parity_disks

    @property
    def full_stripe_bytes(self) -> int:
        return self.data_disks * self.chunk_bytes

    def bandwidth_Bps(self, op: str) -> float:
        """Streaming data bandwidth of the set for ``op`` (full stripes, all drives healthy)."""
        return self.data_disks * self.drive.bandwidth_Bps(op)

    def write_cost(self, request_bytes: float) -> float:
        """Drive work of a ``request_bytes`` write relative to aligned full-stripe writing (>= 1)."""
        if self.parity_disks == 0 or self.chunk_bytes == 0:
            return 1.0
        return _write_cost(
            self.data_disks, self.parity_disks, self.chunk_bytes, self.data_offset_bytes, max(1, round(request_bytes))
        )

    def drive_request_bytes(self, request_bytes: float) -> float:
        """Bytes of one request that land on one drive: the request spread over the chunks
        it touches (more chunks than its size needs when it is not aligned); with no chunk
        size known, spread over the data drives, but never split below a 4 KiB page."""
        if self.chunk_bytes:
            request = max(1, round(request_bytes))
            touched = _mean_chunks_touched(self.full_stripe_bytes, self.chunk_bytes, self.data_offset_bytes, request)
            return min(request_bytes, request_bytes / touched)
        return max(request_bytes / self.data_disks, min(request_bytes, 4096))

    def state_factor(self, state: str, rebuild_fraction: float = 0.0) -> float:
        """Capacity left in ``state`` (see the module docstring)."""
        if state not in RAID_STATES:
            raise ValueError(f"state: expected one of {', '.join(RAID_STATES)}, got {state!r}")
        if state == "optimal":
            return 1.0
        if self.parity_disks == 0:
            raise ValueError(f"state: a {self.level} set with a failed drive has lost data; it cannot run {state}")
        if not 0 <= rebuild_fraction < 1:
            raise ValueError("rebuild_fraction: expected a fraction in [0, 1)")
        degraded = (self.disk_count - 1) / self.disk_count
        return degraded * (1 - rebuild_fraction) if state == "rebuilding" else degraded


#: Most request positions averaged over; sizes with a longer period relative to the stripe
#: are averaged over this many evenly spaced positions instead.
_MAX_POSITIONS = 1024


def _stripe_pieces(stripe_bytes: int, data_offset_bytes: int, request_bytes: int) -> list[list[tuple[int, int, int]]]:
    """Per position a request takes among the stripes (starts ``j * request_bytes +
    data_offset_bytes``, one period of them), the ``(start, end, count)`` byte ranges it
    covers in the stripes it touches: a head, ``count`` whole stripes, a tail."""
    positions = stripe_bytes // math.gcd(request_bytes, stripe_bytes)
    if positions <= _MAX_POSITIONS:
        starts = [(j * request_bytes + data_offset_bytes) % stripe_bytes for j in range(positions)]
    else:
        starts = [k * stripe_bytes // _MAX_POSITIONS for k in range(_MAX_POSITIONS)]
    pieces = []
    for start in starts:
        end = start + request_bytes
        if end <= stripe_bytes:
            pieces.append([(start, end, 1)])
            continue
        whole, tail = divmod(end - stripe_bytes, stripe_bytes)
        ranges = [(start, stripe_bytes, 1)]
        if whole:
            ranges.append((0, stripe_bytes, whole))
        if tail:
            ranges.append((0, tail, 1))
        pieces.append(ranges)
    return pieces


@functools.lru_cache(maxsize=1024)
def _write_cost(
    data_disks: int, parity_disks: int, chunk_bytes: int, data_offset_bytes: int, request_bytes: int
) -> float:
    # In bytes moved by the drives: a piece of b bytes in one stripe costs
    # read-modify-write 2b + 2p min(chunk, b) or reconstruct-write (d + p) chunk, the
    # cheaper; aligned full stripes cost b (d + p) / d, the reference.
    stripe_bytes = data_disks * chunk_bytes
    pieces = _stripe_pieces(stripe_bytes, data_offset_bytes, request_bytes)
    moved = 0.0
    for ranges in pieces:
        for start, end, count in ranges:
            piece = end - start
            if piece == stripe_bytes:
                moved += count * piece * (data_disks + parity_disks) / data_disks
            else:
                read_modify_write = 2 * piece + 2 * parity_disks * min(chunk_bytes, piece)
                reconstruct_write = (data_disks + parity_disks) * chunk_bytes
                moved += count * min(read_modify_write, reconstruct_write)
    aligned = request_bytes * (data_disks + parity_disks) / data_disks
    return max(1.0, moved / len(pieces) / aligned)


@functools.lru_cache(maxsize=1024)
def _mean_chunks_touched(stripe_bytes: int, chunk_bytes: int, data_offset_bytes: int, request_bytes: int) -> float:
    pieces = _stripe_pieces(stripe_bytes, data_offset_bytes, request_bytes)
    touched = sum(
        count * (math.ceil(end / chunk_bytes) - start // chunk_bytes)
        for ranges in pieces
        for start, end, count in ranges
    )
    return touched / len(pieces)
