"""Storage controllers (e.g. a DDN S2A couplet): a bandwidth cap over the LUNs they serve.

Every byte to or from a LUN crosses its controller, whatever the drives behind it could
deliver.  Write-back caching and cache thrash are load-dependent refinements on top.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource


@dataclass(frozen=True)
class ControllerSpec:
    """Attribute: ``bandwidth_Bps``, the controller's sustained throughput (bytes/s)."""

    bandwidth_Bps: float

    def __post_init__(self) -> None:
        if not self.bandwidth_Bps > 0:
            raise ValueError("bandwidth_Bps: a controller needs a positive bandwidth")

    def resource(self, name: str) -> Resource:
        return Resource(name, self.bandwidth_Bps, kind="controller")
