"""Client nodes: cores that copy data for buffered I/O, a NIC, and a page cache.

Buffered I/O copies every byte between the application buffer and the page cache on the
calling core.  A single ``dd`` is therefore bounded by one core's copy rate: the CRT-DC
clients reach 100% CPU with one dd on every Lustre system (seed
``000_cd5f2d1d7b196eec.txt``, "Analyses").

Every call also costs ``call_overhead_s`` of the core beyond its copy (system call, VFS,
file-system client; for a stdio ``fgets``/``fread`` loop the library's per-call work).
Large transfers never notice it; 80-byte line reads are bounded by it (GeneIndex on
CXFS, seed ``003_ccdc285e551f91e9.txt``: about 80 MB/s from one task that reads 700 MB/s
in large chunks).  The node's cores are one resource whose
capacity is the number of cores (core-seconds per second); a byte costs
``1 / copy_rate`` core-seconds, and one process can use at most one core, which is its
rate cap.  Direct I/O skips the copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.errors import check_finite, check_whole
from simfs.hardware.links import LinkSpec, nic_resources


@dataclass(frozen=True)
class ClientSpec:
    """One client node model.

    Attributes
    ----------
    cores: physical cores available to I/O processes.
    memory_bytes: RAM.
    network: the client's link technology.
    copy_write_Bps, copy_read_Bps: one core's buffered copy rate (bytes/s) for writes
        (user buffer -> page cache, incl. file-system client overhead) and reads.
    dirty_ratio: fraction of RAM that may hold dirty pages before writers are throttled
        (Linux ``vm.dirty_ratio``).
    call_overhead_s: core time of one buffered read()/write() call beyond its copy.
    """

    cores: int
    memory_bytes: float
    network: LinkSpec
    copy_write_Bps: float
    copy_read_Bps: float
    dirty_ratio: float = 0.4
    call_overhead_s: float = 0.0

    def __post_init__(self) -> None:
        check_whole("client", "cores", self.cores, 1)
        for name in ("memory_bytes", "copy_write_Bps", "copy_read_Bps"):
            check_finite("client", name, getattr(self, name), 0, above=True)
        check_finite("client", "dirty_ratio", self.dirty_ratio, 0, above=True)
        if self.dirty_ratio > 1:
            raise ValueError(f"client: dirty_ratio: expected at most 1, got {self.dirty_ratio!r}")
        check_finite("client", "call_overhead_s", self.call_overhead_s, 0)

    def copy_Bps(self, op: str) -> float:
        return self.copy_read_Bps if op == "read" else self.copy_write_Bps

    def core_seconds_per_byte(self, op: str, call_bytes: float | None = None) -> float:
        """Core time per byte of buffered ``op`` in calls of ``call_bytes`` (None: the
        copy alone)."""
        per_call = self.call_overhead_s / call_bytes if call_bytes and self.call_overhead_s else 0.0
        return 1.0 / self.copy_Bps(op) + per_call

    def core_Bps(self, op: str, call_bytes: float | None = None) -> float:
        """What one process can move on one core: the rate cap of buffered I/O."""
        return 1.0 / self.core_seconds_per_byte(op, call_bytes)

    @property
    def dirty_limit_bytes(self) -> float:
        return self.dirty_ratio * self.memory_bytes

    def build(self, node: int) -> ClientNode:
        tx, rx = nic_resources(f"client{node}", self.network, kind="client")
        cpu = Resource(f"client{node}.cpu", float(self.cores), kind="client-cpu", unit="core")
        return ClientNode(index=node, spec=self, cpu=cpu, nic_tx=tx, nic_rx=rx)


@dataclass(frozen=True)
class ClientNode:
    """The resources of one client node in a run."""

    index: int
    spec: ClientSpec
    cpu: Resource
    nic_tx: Resource
    nic_rx: Resource

    @property
    def resources(self) -> tuple[Resource, ...]:
        return (self.cpu, self.nic_tx, self.nic_rx)
