"""Hard disk drives, and what many interleaved streams do to them.

For one sequential stream a disk delivers its sustained media rate, which varies from
the outer to the inner zone; simfs uses the mean over zones for a file system that fills
the disk evenly.

Seek thrashing.  A disk serving ``n`` interleaved sequential streams transfers a visit of
``v`` bytes for one stream (``v / B`` seconds at media rate ``B``), then, unless the next
request is from the same stream (probability ``1/n`` for requests drawn evenly from the
streams), repositions: an average seek plus half a revolution, ``t_pos``.  Its throughput
is therefore (Ruemmler & Wilkes, "An introduction to disk drive modeling", IEEE Computer
27(3), 1994, for the positioning model)::

    B_eff(n) = v / (v / B + (1 - 1/n) t_pos) = B / (1 + (1 - 1/n) B t_pos / v)

It falls with the number of streams and rises with the visit size.  In a RAID set every
drive sees every stream, each visit being the part of a request that lands on one drive
(about the request size over the data drives).  Writes behind a write-back cache are
destaged in longer runs than reads are fetched, so reads and writes get separate visit
sizes; for a mix, the overhead is averaged over the streams.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.engine.resource import ResourceLoad
from simfs.errors import check_finite


@dataclass(frozen=True)
class HddSpec:
    """Attributes: ``sustained_Bps`` (mean media rate, bytes/s), ``average_seek_s``,
    ``rpm``."""

    sustained_Bps: float
    average_seek_s: float = 0.0
    rpm: float = 0.0

    def __post_init__(self) -> None:
        check_finite("hdd", "sustained_Bps", self.sustained_Bps, 0, above=True)
        check_finite("hdd", "average_seek_s", self.average_seek_s, 0)
        check_finite("hdd", "rpm", self.rpm, 0)

    def bandwidth_Bps(self, op: str) -> float:
        """Streaming bandwidth for ``op`` ("read" or "write"); symmetric for disks."""
        return self.sustained_Bps

    @property
    def average_rotational_latency_s(self) -> float:
        """Half a revolution."""
        return 30.0 / self.rpm if self.rpm else 0.0

    @property
    def positioning_s(self) -> float:
        """Average seek plus half a revolution: the cost of switching streams."""
        return self.average_seek_s + self.average_rotational_latency_s


def random_request_cost(drive: HddSpec, visit_bytes: float) -> float:
    """Drive time per byte of requests at random offsets relative to streaming: each
    visit of ``visit_bytes`` (a request's part on one drive) is preceded by a reposition,
    ``(v / B + t_pos) / (v / B) = 1 + B t_pos / v`` (the module docstring's model with
    every request from another place: IOR ``-z``)."""
    if not visit_bytes > 0:
        raise ValueError("visit_bytes: must be positive")
    return 1.0 + drive.sustained_Bps * drive.positioning_s / visit_bytes


def interleaved_stream_factor(streams: float, sustained_Bps: float, positioning_s: float, visit_bytes: float) -> float:
    """``B_eff(n) / B`` for ``streams`` interleaved sequential streams (module docstring)."""
    if streams <= 1:
        return 1.0
    if not (sustained_Bps > 0 and positioning_s >= 0 and visit_bytes > 0):
        raise ValueError("sustained_Bps and visit_bytes must be positive, positioning_s non-negative")
    return 1.0 / (1.0 + (1.0 - 1.0 / streams) * sustained_Bps * positioning_s / visit_bytes)


@dataclass(frozen=True)
class SeekThrashing:
    """Load model of a device built of HDDs (one drive or a RAID set of them).

    The device's nominal capacity is scaled by :func:`interleaved_stream_factor` with the
    number of flows crossing it as the stream count, and the inverse visit size averaged
    over its read and write streams (other flows count as reads).
    """

    drive: HddSpec
    read_visit_bytes: float
    write_visit_bytes: float
    #: The switchable mechanism this models (results name it beside the bottleneck).
    mechanism = "hdd_seek"

    def __post_init__(self) -> None:
        if not (self.read_visit_bytes > 0 and self.write_visit_bytes > 0):
            raise ValueError("read_visit_bytes, write_visit_bytes: must be positive")

    def __call__(self, nominal_capacity: float, load: ResourceLoad) -> float:
        n = load.flow_count
        if n <= 1:
            return nominal_capacity
        # Random flows interrupt the streams as any stream does, but their own
        # repositioning is in their requests' cost (random_request_cost): none again here.
        reads = n - load.write_count - load.random_count
        inverse_visit = (reads / self.read_visit_bytes + load.write_count / self.write_visit_bytes) / n
        if inverse_visit == 0:
            return nominal_capacity
        factor = interleaved_stream_factor(n, self.drive.sustained_Bps, self.drive.positioning_s, 1.0 / inverse_visit)
        return nominal_capacity * factor
