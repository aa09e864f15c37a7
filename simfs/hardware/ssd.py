"""Solid-state drives: separate read and write bandwidth and IOPS, no seek penalty."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SsdSpec:
    """Attributes: sequential ``read_Bps`` and ``write_Bps`` (bytes/s); random 4 KiB
    ``read_iops`` and ``write_iops``."""

    read_Bps: float
    write_Bps: float
    read_iops: float = 0.0
    write_iops: float = 0.0

    def __post_init__(self) -> None:
        if not (self.read_Bps > 0 and self.write_Bps > 0):
            raise ValueError("read_Bps, write_Bps: an SSD needs positive bandwidths")
        if self.read_iops < 0 or self.write_iops < 0:
            raise ValueError("read_iops, write_iops: must be non-negative")

    def bandwidth_Bps(self, op: str) -> float:
        return self.read_Bps if op == "read" else self.write_Bps
