"""RAID sets: streaming bandwidth of a set of identical drives, parity costs, failures.

Full stripes.  For large sequential I/O, RAID-0 delivers every drive's rate; RAID-5/6
with full-stripe writes and rotating parity deliver the data drives' rate
(``disks - parity``) for reads and writes alike, since each full stripe writes one chunk
per drive, parity included (Patterson, Gibson & Katz, "A case for redundant arrays of
inexpensive disks (RAID)", SIGMOD 1988).

Partial stripes (read-modify-write).  A write covering ``k`` of the ``d`` data chunks of
a stripe (``k < d``) must read the old data and parity and write both back: ``2k + 2p``
chunk transfers instead of the ``k (d + p) / d`` a full stripe costs per data chunk
(Chen et al., "RAID: high-performance, reliable secondary storage", ACM Computing
Surveys 26(2), 1994, the small-write problem).  :meth:`RaidSet.write_cost` gives that
ratio for a request size; requests are taken as stripe aligned.

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

import math
from dataclasses import dataclass

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

    def __post_init__(self) -> None:
        if self.level not in PARITY_DISKS:
            raise ValueError(f"level: expected one of {sorted(PARITY_DISKS)}, got {self.level!r}")
        if self.disk_count <= PARITY_DISKS[self.level]:
            raise ValueError(
                f"disk_count: {self.level} needs more than {PARITY_DISKS[self.level]} drives, got {self.disk_count}"
            )
        if self.chunk_bytes < 0:
            raise ValueError("chunk_bytes: must be non-negative (0: unknown, no partial-stripe cost)")
        if self.write_thread_Bps < 0:
            raise ValueError("write_thread_Bps: must be non-negative (0: no software RAID thread limit)")

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
        """Drive work of a ``request_bytes`` write relative to full-stripe writing (>= 1)."""
        if self.parity_disks == 0 or self.chunk_bytes == 0 or request_bytes >= self.full_stripe_bytes:
            return 1.0
        d, p = self.data_disks, self.parity_disks
        chunks = max(1, math.ceil(request_bytes / self.chunk_bytes))
        read_modify_write = 2 * chunks + 2 * p
        full_stripe = chunks * (d + p) / d
        return read_modify_write / full_stripe

    def drive_request_bytes(self, request_bytes: float) -> float:
        """Bytes of one request that land on one drive: at most a chunk; with no chunk
        size known, the request spread over the data drives, but never split below a
        4 KiB page."""
        if self.chunk_bytes:
            return min(request_bytes, self.chunk_bytes)
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
