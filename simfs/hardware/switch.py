"""A switch (or switched fabric) with a blocking factor.

A non-blocking fabric can switch every port at line rate at once.  A fabric with blocking
factor ``k`` (``k:1`` oversubscription, e.g. ~2 for the CRT-DC 1GbE network per seed
``000_cd5f2d1d7b196eec.txt``) carries at most ``ports x port_bandwidth / k`` through its
core.  Every client-server byte crosses the core once.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.errors import check_finite, check_whole


@dataclass(frozen=True)
class SwitchSpec:
    """Attributes: ``port_count`` ports of ``port_bandwidth_Bps`` each; ``blocking_factor``
    >= 1 (1 = non-blocking)."""

    port_count: int
    port_bandwidth_Bps: float
    blocking_factor: float = 1.0

    def __post_init__(self) -> None:
        check_whole("switch", "port_count", self.port_count, 1)
        check_finite("switch", "port_bandwidth_Bps", self.port_bandwidth_Bps, 0, above=True)
        check_finite("switch", "blocking_factor", self.blocking_factor, 1)  # 1: non-blocking

    @property
    def core_bandwidth_Bps(self) -> float:
        return self.port_count * self.port_bandwidth_Bps / self.blocking_factor

    def core_resource(self, name: str = "fabric.core") -> Resource:
        return Resource(name, self.core_bandwidth_Bps, kind="fabric")
