"""Servers (Lustre OSS, MDS): a NIC and a CPU that handles the bytes passing through.

The OSS CPU handles RPCs, checksums and the block layer for every byte it serves; its
capacity is expressed as the bytes/s it can process, so that a fast back end behind a
slow server shows the server as the bottleneck.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.hardware.links import LinkSpec, nic_resources


@dataclass(frozen=True)
class ServerSpec:
    """Attributes: ``network`` (link technology), ``cpu_Bps`` (bytes/s the CPU can
    process)."""

    network: LinkSpec
    cpu_Bps: float

    def __post_init__(self) -> None:
        if not self.cpu_Bps > 0:
            raise ValueError("cpu_Bps: a server needs a positive processing rate")

    def build(self, name: str, kind: str) -> Server:
        tx, rx = nic_resources(name, self.network, kind=kind)
        cpu = Resource(f"{name}.cpu", self.cpu_Bps, kind=f"{kind}-cpu")
        return Server(name=name, cpu=cpu, nic_tx=tx, nic_rx=rx)


@dataclass(frozen=True)
class Server:
    name: str
    cpu: Resource
    nic_tx: Resource
    nic_rx: Resource

    @property
    def resources(self) -> tuple[Resource, ...]:
        return (self.cpu, self.nic_tx, self.nic_rx)
