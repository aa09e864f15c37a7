"""Servers (Lustre OSS, MDS): a NIC and a CPU that handles the bytes passing through.

The OSS CPU handles RPCs, checksums and the block layer for every byte it serves; its
capacity is expressed as the bytes/s it can process, so that a fast back end behind a
slow server shows the server as the bottleneck.

Service threads.  An OSS serves bulk RPCs from a pool of ``threads`` (Lustre's
``ost_io`` service); a thread is held for ``rpc_service_s`` per RPC (receive, hand to the
disk, wait, reply).  The pool therefore moves at most ``threads x rpc_bytes /
rpc_service_s`` (Little's law); RPCs beyond the pool wait in the server's request queue.
The pool is a resource whose capacity is the thread count (thread-seconds per second),
each byte costing ``rpc_service_s / rpc_bytes`` of it; the flows waiting on it are the
RPC queue of the timeline.  With Lustre's default of up to 512 threads it binds only on
small servers or in a thread sweep such as obdfilter-survey's (Lustre Operations Manual,
"Setting OSS service threads"; ``oss_num_threads``).
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.errors import check_finite, check_whole
from simfs.hardware.links import LinkSpec, nic_resources


@dataclass(frozen=True)
class ServerSpec:
    """Attributes: ``network`` (link technology), ``cpu_Bps`` (bytes/s the CPU can
    process), ``threads`` (bulk RPC service threads), ``rpc_service_s`` (thread time per
    bulk RPC)."""

    network: LinkSpec
    cpu_Bps: float
    threads: int = 512
    rpc_service_s: float = 0.0

    def __post_init__(self) -> None:
        check_finite("server", "cpu_Bps", self.cpu_Bps, 0, above=True)
        check_whole("server", "threads", self.threads, 1)
        check_finite("server", "rpc_service_s", self.rpc_service_s, 0)  # 0: threads never bind

    def thread_cost_per_byte(self, rpc_bytes: float) -> float:
        """Thread-seconds one byte holds, moved in ``rpc_bytes`` RPCs."""
        return self.rpc_service_s / rpc_bytes

    def build(self, name: str, kind: str) -> Server:
        tx, rx = nic_resources(name, self.network, kind=kind)
        cpu = Resource(f"{name}.cpu", self.cpu_Bps, kind=f"{kind}-cpu")
        threads = Resource(f"{name}.threads", float(self.threads), kind=f"{kind}-threads", unit="thread")
        return Server(name=name, cpu=cpu, nic_tx=tx, nic_rx=rx, threads=threads)


@dataclass(frozen=True)
class Server:
    name: str
    cpu: Resource
    nic_tx: Resource
    nic_rx: Resource
    threads: Resource

    @property
    def resources(self) -> tuple[Resource, ...]:
        return (self.cpu, self.nic_tx, self.nic_rx, self.threads)
