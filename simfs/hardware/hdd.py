"""Hard disk drives.

For streaming I/O a disk delivers its sustained media rate, which varies from the outer
to the inner zone; simfs uses the mean over zones for a file system that fills the disk
evenly.  Seek and rotational costs are carried here for the load-dependent models
(interleaved streams) that build on this one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HddSpec:
    """Attributes: ``sustained_Bps`` (mean media rate, bytes/s), ``average_seek_s``,
    ``rpm``."""

    sustained_Bps: float
    average_seek_s: float = 0.0
    rpm: float = 0.0

    def __post_init__(self) -> None:
        if not self.sustained_Bps > 0:
            raise ValueError("sustained_Bps: an HDD needs a positive sustained rate")
        if self.average_seek_s < 0 or self.rpm < 0:
            raise ValueError("average_seek_s, rpm: must be non-negative")

    def bandwidth_Bps(self, op: str) -> float:
        """Streaming bandwidth for ``op`` ("read" or "write"); symmetric for disks."""
        return self.sustained_Bps

    @property
    def average_rotational_latency_s(self) -> float:
        """Half a revolution."""
        return 30.0 / self.rpm if self.rpm else 0.0
