"""Client nodes: cores that copy data for buffered I/O, a NIC, and a page cache.

Buffered I/O copies every byte between the application buffer and the page cache on the
calling core.  A single ``dd`` is therefore bounded by one core's copy rate: the CRT-DC
clients reach 100% CPU with one dd on every Lustre system (seed
``000_cd5f2d1d7b196eec.txt``, "Analyses").  The node's cores are one resource whose
capacity is the number of cores (core-seconds per second); a byte costs
``1 / copy_rate`` core-seconds, and one process can use at most one core, which is its
rate cap.  Direct I/O skips the copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
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
    """

    cores: int
    memory_bytes: float
    network: LinkSpec
    copy_write_Bps: float
    copy_read_Bps: float
    dirty_ratio: float = 0.4

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError("cores: a client needs at least one core")
        if not self.memory_bytes > 0:
            raise ValueError("memory_bytes: must be positive")
        if not (self.copy_write_Bps > 0 and self.copy_read_Bps > 0):
            raise ValueError("copy_write_Bps, copy_read_Bps: must be positive")
        if not 0 < self.dirty_ratio <= 1:
            raise ValueError("dirty_ratio: must be in (0, 1]")

    def copy_Bps(self, op: str) -> float:
        return self.copy_read_Bps if op == "read" else self.copy_write_Bps

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
