"""Storage controllers (e.g. a DDN S2A couplet): a bandwidth cap over the LUNs they serve,
a write-back cache, and a read prefetch cache that many streams can thrash.

Every byte to or from a LUN crosses its controller, whatever the drives behind it could
deliver.

Write-back cache.  A controller with ``cache_bytes`` of mirrored, battery-backed cache
acknowledges a write once it is in cache; it destages to the drives afterwards.  A burst
is absorbed at host speed until the cache is full; from then on writes run at the speed
of the drives, and the last ``cache_bytes`` drain after the writers have finished.  For a
stream writing ``S`` bytes with a share ``c`` of the cache the writer sees
``(S - c) / R_disk + c / R_host`` instead of ``S / R_disk``: large for bursts smaller
than the cache, a few percent for the seed's 50 GB dd per node.  The cache is shared
evenly by the streams writing through the controller (simfs.simulation applies it).

Prefetch thrash.  For sequential reads the controller fetches ``prefetch_bytes`` ahead
into one of ``cache_segments`` cache segments per stream.  With more read streams ``n``
than segments, a stream's prefetched data is evicted (LRU) before the stream returns
with probability ``1 - S/n``, and is fetched again: the drives then read
``1 + (1 - S/n) p / r`` bytes per byte delivered for requests of ``r`` bytes (the
mechanism of Shriver, Small & Smith, "Why does file system prefetching work?", USENIX
ATC 1999, applied to a controller's segment cache; DDN documents the S2A's prefetch as
per-segment).  With ``cache_segments = 0`` (unknown) nothing thrashes.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine import Resource
from simfs.engine.resource import ResourceLoad
from simfs.errors import check_finite, check_whole


@dataclass(frozen=True)
class ControllerSpec:
    """Attributes: ``bandwidth_Bps``, the controller's sustained throughput (bytes/s);
    ``cache_bytes``, write-back cache per controller (0: write-through);
    ``prefetch_bytes`` and ``cache_segments``, its read prefetch (0: unknown, no thrash)."""

    bandwidth_Bps: float
    cache_bytes: float = 0.0
    prefetch_bytes: float = 0.0
    cache_segments: int = 0

    def __post_init__(self) -> None:
        check_finite("controller", "bandwidth_Bps", self.bandwidth_Bps, 0, above=True)
        check_finite("controller", "cache_bytes", self.cache_bytes, 0)
        check_finite("controller", "prefetch_bytes", self.prefetch_bytes, 0)
        check_whole("controller", "cache_segments", self.cache_segments, 0)

    def resource(self, name: str, kind: str = "controller") -> Resource:
        return Resource(name, self.bandwidth_Bps, kind=kind)

    def prefetch_waste(self, read_streams: float, segments: float, request_bytes: float) -> float:
        """Extra drive bytes read per byte delivered (module docstring)."""
        if not (segments > 0 and self.prefetch_bytes > 0) or read_streams <= segments:
            return 0.0
        return (1.0 - segments / read_streams) * self.prefetch_bytes / request_bytes


@dataclass(frozen=True)
class PrefetchThrash:
    """Load model of an OST behind a prefetching controller: ``segments`` is the OST's
    share of the controller's cache segments, ``request_bytes`` the read request size."""

    controller: ControllerSpec
    segments: float
    request_bytes: float
    #: The switchable mechanism this models (results name it beside the bottleneck).
    mechanism = "controller_prefetch"

    def __call__(self, nominal_capacity: float, load: ResourceLoad) -> float:
        if load.read_count == 0:
            return nominal_capacity
        waste = self.controller.prefetch_waste(load.read_count, self.segments, self.request_bytes)
        read_share = load.read_count / load.flow_count
        return nominal_capacity / (1.0 + waste * read_share)
