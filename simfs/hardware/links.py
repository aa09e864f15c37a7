"""Links and NICs: full-duplex pipes with a practical (goodput) bandwidth.

A NIC is two resources, one per direction, because a client writing and another reading
through the same server port do not compete.  Bandwidths here are *practical* payload
rates, below the signalling rate by the encoding and protocol overhead.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.errors import check_finite


@dataclass(frozen=True)
class LinkSpec:
    """A link technology.

    Attributes
    ----------
    name: short key used in profiles (``client.network = "qdr-ib"``).
    bandwidth_Bps: practical payload bandwidth per direction, bytes/s.
    latency_s: one-way small-message latency, seconds (adds to RPC round trips).
    source: where the numbers come from.
    transport: "tcp" (Ethernet: drops under overload, see ``loss_recovery.py``), "rdma"
        (InfiniBand) or "fc" (Fibre Channel): credit-based, lossless.
    """

    name: str
    bandwidth_Bps: float
    latency_s: float
    source: str
    transport: str = "rdma"

    def __post_init__(self) -> None:
        check_finite(f"link {self.name!r}", "bandwidth_Bps", self.bandwidth_Bps, 0, above=True)
        check_finite(f"link {self.name!r}", "latency_s", self.latency_s, 0)
        if self.transport not in ("tcp", "rdma", "fc"):
            raise ValueError(f"transport: link {self.name!r}: expected tcp, rdma or fc, got {self.transport!r}")

    def summary(self) -> str:
        """``qdr-ib 3.2 GB/s (rdma, 1.3 us)``: the link as ``simfs show`` prints it (a
        user-defined link without ``transport`` is RDMA, lossless: saying so here shows it)."""
        return f"{self.name} {self.bandwidth_Bps / 1e9:.3g} GB/s ({self.transport}, {self.latency_s * 1e6:.3g} us)"


#: Built-in link technologies.  A profile may override any of them in ``[networks.NAME]``.
LINK_PRESETS: dict[str, LinkSpec] = {
    spec.name: spec
    for spec in (
        LinkSpec(
            "qdr-ib",
            3.2e9,
            1.3e-6,
            "QDR 4X InfiniBand: 40 Gb/s signalling, 8b/10b -> 32 Gb/s = 4 GB/s data; "
            "~3.2 GB/s practical through PCIe Gen2 x8 (Mellanox ConnectX-2 datasheet); "
            "latency ~1.3 us (Mellanox ConnectX-2 datasheet)",
        ),
        LinkSpec(
            "ddr-ib",
            1.6e9,
            1.5e-6,
            "DDR 4X InfiniBand: 20 Gb/s signalling, 16 Gb/s data = 2 GB/s; ~1.6 GB/s "
            "practical (Mellanox ConnectX datasheet)",
        ),
        LinkSpec(
            "fdr-ib",
            6.0e9,
            0.7e-6,
            "FDR 4X InfiniBand: 56 Gb/s signalling, 64b/66b -> 6.8 GB/s; ~6 GB/s "
            "practical through PCIe Gen3 x8 (Mellanox ConnectX-3 datasheet)",
        ),
        LinkSpec(
            "1gbe",
            117e6,
            50e-6,
            "Gigabit Ethernet: 125 MB/s line rate, ~117 MB/s TCP goodput after "
            "Ethernet/IP/TCP framing at 1500 MTU (DESIGN.md section 5)",
            "tcp",
        ),
        LinkSpec(
            "10gbe",
            1.17e9,
            20e-6,
            "10 Gigabit Ethernet: 1.25 GB/s line rate, ~1.17 GB/s TCP goodput at 1500 "
            "MTU (same framing overhead as 1GbE)",
            "tcp",
        ),
        LinkSpec(
            "fc2",
            200e6,
            10e-6,
            "2 Gb Fibre Channel: 2.125 Gbaud, 8b/10b -> 200 MB/s per direction (FC-PI)",
            "fc",
        ),
        LinkSpec(
            "fc4",
            400e6,
            10e-6,
            "4 Gb Fibre Channel: 4.25 Gbaud, 8b/10b -> 400 MB/s per direction (FC-PI-2)",
            "fc",
        ),
    )
}


def nic_resources(owner: str, link: LinkSpec, *, kind: str) -> tuple[Resource, Resource]:
    """The transmit and receive resources of ``owner``'s NIC on ``link``."""
    return (
        Resource(f"{owner}.nic.tx", link.bandwidth_Bps, kind=f"{kind}-nic"),
        Resource(f"{owner}.nic.rx", link.bandwidth_Bps, kind=f"{kind}-nic"),
    )
