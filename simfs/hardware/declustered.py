"""Declustered erasure-coded arrays: IBM Spectrum Scale RAID (GNR) vdisks.

A conventional RAID set puts every stripe on the same ``k + p`` drives.  A declustered
array spreads each track's ``k`` data strips and ``p`` parity strips over ``k + p`` of
its ``n`` drives, a different subset for every track, so that all ``n`` drives serve
every vdisk and a failed drive is rebuilt from all the others at once (Holland and
Gibson, "Parity declustering for continuous operation in redundant disk arrays",
ASPLOS 1992; IBM Spectrum Scale RAID documentation, "Declustered RAID" and "RAID
codes": 8+2p, 8+3p, 4+2p and 4+3p Reed-Solomon codes over arrays of many pdisks).

For streaming, a track of ``k`` data strips costs ``k + p`` strip transfers, so the array
delivers ``n x k / (k + p)`` drives' rate, whatever ``n`` is.  A track is what a RAID
set's stripe is: a write of less than a full track pays read-modify-write on its
strips, and each strip is one drive's visit.  So :class:`DeclusteredArray` is a
:class:`~simfs.hardware.raid.RaidSet` whose stripe geometry is the code's (``k`` data,
``p`` parity strips of ``chunk_bytes``) and whose bandwidth is the whole array's.
A failed drive costs ``1/n`` of the array (its strips are read from the others), as a
RAID set's does.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.hardware.raid import RaidSet

#: Spectrum Scale RAID's erasure codes for data vdisks: (data strips, parity strips).
ERASURE_CODES = {"8+2p": (8, 2), "8+3p": (8, 3), "4+2p": (4, 2), "4+3p": (4, 3)}


@dataclass(frozen=True)
class DeclusteredArray(RaidSet):
    """A vdisk spread over a declustered array of ``disk_count`` drives, coded ``level``
    (one of :data:`ERASURE_CODES`) in strips of ``chunk_bytes``."""

    def __post_init__(self) -> None:
        if self.level not in ERASURE_CODES:
            raise ValueError(f"level: expected one of {', '.join(ERASURE_CODES)}, got {self.level!r}")
        width = sum(ERASURE_CODES[self.level])
        if self.disk_count < width:
            raise ValueError(
                f"disk_count: a {self.level} track needs {width} distinct drives, the array has {self.disk_count}"
            )
        if self.chunk_bytes < 0:
            raise ValueError("chunk_bytes: must be non-negative (0: unknown, no partial-track cost)")
        if self.write_thread_Bps or self.data_offset_bytes:
            raise ValueError("write_thread_Bps, data_offset_bytes: a declustered array has neither")

    @property
    def parity_disks(self) -> int:
        """Parity strips per track."""
        return ERASURE_CODES[self.level][1]

    @property
    def data_disks(self) -> int:
        """Data strips per track: the drives one track's data occupies."""
        return ERASURE_CODES[self.level][0]

    @property
    def code_efficiency(self) -> float:
        """Data bytes per byte the drives store: ``k / (k + p)``."""
        return self.data_disks / (self.data_disks + self.parity_disks)

    def bandwidth_Bps(self, op: str) -> float:
        """Streaming data bandwidth of the whole array: ``n x k / (k + p)`` drives."""
        return self.disk_count * self.code_efficiency * self.drive.bandwidth_Bps(op)
