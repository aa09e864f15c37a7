"""RAID sets: streaming bandwidth of a set of identical drives.

For large sequential I/O, RAID-0 delivers every drive's rate; RAID-5/6 with full-stripe
writes and rotating parity deliver the data drives' rate (``disks - parity``) for both
reads and writes, since each full stripe writes one chunk per drive, parity included
(Patterson, Gibson & Katz, "A case for RAID", SIGMOD 1988).  Partial-stripe
read-modify-write and degraded operation are load-dependent refinements built on this.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.hardware.hdd import HddSpec
from simfs.hardware.ssd import SsdSpec

Drive = HddSpec | SsdSpec

#: Parity drives per RAID level.
PARITY_DISKS = {"raid0": 0, "raid5": 1, "raid6": 2}


@dataclass(frozen=True)
class RaidSet:
    """``disk_count`` drives of one model at one RAID ``level``."""

    level: str
    disk_count: int
    drive: Drive

    def __post_init__(self) -> None:
        if self.level not in PARITY_DISKS:
            raise ValueError(f"level: expected one of {sorted(PARITY_DISKS)}, got {self.level!r}")
        if self.disk_count <= PARITY_DISKS[self.level]:
            raise ValueError(
                f"disk_count: {self.level} needs more than {PARITY_DISKS[self.level]} drives, got {self.disk_count}"
            )

    @property
    def data_disks(self) -> int:
        return self.disk_count - PARITY_DISKS[self.level]

    def bandwidth_Bps(self, op: str) -> float:
        """Streaming data bandwidth of the set for ``op``."""
        return self.data_disks * self.drive.bandwidth_Bps(op)
