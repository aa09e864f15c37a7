"""Solid-state drives: separate read and write bandwidth and IOPS, no seek penalty.

IOPS limit.  A datasheet gives a sequential bandwidth ``B`` (measured with large
requests) and a random 4 KiB IOPS figure ``I`` (the controller and flash translation
layer's per-request cost).  For requests of ``r`` bytes the drive delivers at most
``min(B, I r)``: the roofline bound of the two figures (Williams, Waterman & Patterson,
"Roofline", CACM 52(4), 2009, applied to a storage device as in Polte et al., "Comparing
performance of solid state devices and mechanical disks", PDSW 2008).  An Intel X25-E
(3,300 write IOPS, 170 MB/s) is IOPS-bound below about 51 KiB per write.  With no
interleaving cost, many streams do not thrash an SSD.

Write cliff.  A drive that has been written through once with no TRIM (ldiskfs of the
Lustre 1.8 era issued none) holds no free flash blocks; each new write forces garbage
collection, which copies still-valid pages first.  Under greedy collection with
uniformly spread overwrites the write amplification is about ``(1 + rho) / (2 rho)`` for
a spare fraction ``rho`` (Hu et al., "Write amplification analysis in flash-based solid
state drives", SYSTOR 2009), and the host sees ``B / WA``.  A fresh or trimmed drive, or
one written only sequentially, sees ``WA = 1``; the preconditioned state is a what-if.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.errors import check_finite

#: The request size of datasheet random IOPS figures.
IOPS_REQUEST_BYTES = 4096


@dataclass(frozen=True)
class SsdSpec:
    """Attributes: sequential ``read_Bps`` and ``write_Bps`` (bytes/s); random 4 KiB
    ``read_iops`` and ``write_iops`` (0: unknown, no IOPS bound); ``spare_fraction``,
    the over-provisioned flash over the user capacity (0: unknown); ``preconditioned``,
    whether the drive is in the post-fill steady state (write cliff)."""

    read_Bps: float
    write_Bps: float
    read_iops: float = 0.0
    write_iops: float = 0.0
    spare_fraction: float = 0.0
    preconditioned: bool = False

    def __post_init__(self) -> None:
        for name in ("read_Bps", "write_Bps"):
            check_finite("ssd", name, getattr(self, name), 0, above=True)
        for name in ("read_iops", "write_iops"):  # 0: no IOPS bound
            check_finite("ssd", name, getattr(self, name), 0)
        if not isinstance(self.preconditioned, bool):
            raise ValueError(f"ssd: preconditioned: expected true or false, got {self.preconditioned!r}")
        if not 0 <= self.spare_fraction <= 10:
            raise ValueError("spare_fraction: expected a fraction of the user capacity in [0, 10]")
        if self.preconditioned and self.spare_fraction == 0:
            raise ValueError(
                "spare_fraction: a preconditioned SSD needs its spare fraction (the write cliff depends on it)"
            )

    def bandwidth_Bps(self, op: str) -> float:
        return self.read_Bps if op == "read" else self.write_Bps

    def iops(self, op: str) -> float:
        return self.read_iops if op == "read" else self.write_iops

    def request_cost(self, op: str, request_bytes: float) -> float:
        """Device time per byte of ``request_bytes`` requests relative to streaming (>= 1):
        ``B / min(B, I r)``."""
        if request_bytes <= 0:
            raise ValueError("request_bytes: must be positive")
        iops = self.iops(op)
        if iops == 0:
            return 1.0
        bandwidth = self.bandwidth_Bps(op)
        return bandwidth / min(bandwidth, iops * request_bytes)

    @property
    def write_amplification(self) -> float:
        """``(1 + rho) / (2 rho)`` when preconditioned (never below 1), else 1."""
        if not self.preconditioned:
            return 1.0
        rho = self.spare_fraction
        return max(1.0, (1 + rho) / (2 * rho))


#: tmpfs's "device": the pages themselves, a pass-through (what moves them binds first).
TMPFS_PAGES = SsdSpec(read_Bps=1e15, write_Bps=1e15)
