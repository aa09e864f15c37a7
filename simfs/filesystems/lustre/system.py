"""A Lustre installation as described by a system profile (hardware + default tunables).

The profile sections (see ``docs/reference/profile-format.md``) map one to one onto the
specs here: ``[client]`` -> :class:`~simfs.hardware.ClientSpec`, ``[oss]`` ->
:class:`~simfs.hardware.ServerSpec`, ``[ost]`` -> :class:`~simfs.hardware.RaidSet`,
``[controller]`` -> :class:`~simfs.hardware.ControllerSpec`, ``[mds]`` ->
:class:`MdsSpec`, ``[lustre]`` -> :class:`LustreTunables`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from simfs.errors import ProfileError
from simfs.hardware import (
    LINK_PRESETS,
    ClientSpec,
    ControllerSpec,
    HddSpec,
    LinkSpec,
    RaidSet,
    ServerSpec,
    SsdSpec,
)
from simfs.hardware.raid import PARITY_DISKS
from simfs.mechanisms import mechanisms_from_profile
from simfs.systems.profile import REQUIRED, Profile
from simfs.units import format_bytes
from simfs.workloads.spec import WorkloadSpec


@dataclass(frozen=True)
class LustreTunables:
    """Striping defaults and client RPC settings.

    Attributes
    ----------
    stripe_count: default stripe count (-1: all OSTs).
    stripe_size_bytes: default stripe size.
    stripe_offset: -1 for the MDS's round robin, or a fixed first OST index.
    max_rpcs_in_flight: concurrent bulk RPCs per OSC (client x OST).
    rpc_size_bytes: bulk RPC size (max_pages_per_rpc x page size).
    max_dirty_bytes_per_osc: dirty page-cache bytes a client may hold per OSC.
    rpc_latency_s: round trip of one bulk RPC without queueing (network + server).
    metadata_latency_s: round trip of one metadata RPC without queueing.
    lock_handoff_s: time to call an extent lock back from one client and grant it to another.
    max_read_ahead_bytes: a client's readahead budget, shared by the files it reads.
    """

    stripe_count: int
    stripe_size_bytes: int
    stripe_offset: int
    max_rpcs_in_flight: int
    rpc_size_bytes: int
    max_dirty_bytes_per_osc: int
    rpc_latency_s: float
    metadata_latency_s: float
    lock_handoff_s: float = 1e-3
    max_read_ahead_bytes: int = 41_943_040


@dataclass(frozen=True)
class MdsSpec:
    """Metadata service rates (operations/s of one MDS) for create, open, close, stat and
    remove, and ``dir_update_per_s``: creates and removes per second within one
    directory.

    Directory serialisation.  ldiskfs in Lustre 1.x takes one lock per directory for
    every entry insert or delete (parallel directory operations, "pdirops", arrived in
    Lustre 2.2), so creates in a shared directory are served one at a time, each holding
    the lock for ``1 / dir_update_per_s`` however many MDS threads are free (the
    Lustre 2.2 change log and LU-50 describe the single-lock behaviour pdirops removed).
    A unique directory per process (mdtest ``-u``) avoids it.
    """

    create_per_s: float
    open_per_s: float
    close_per_s: float
    stat_per_s: float
    remove_per_s: float
    dir_update_per_s: float

    def rate(self, op: str) -> float:
        return {
            "create": self.create_per_s,
            "open": self.open_per_s,
            "close": self.close_per_s,
            "stat": self.stat_per_s,
            "remove": self.remove_per_s,
        }[op]


@dataclass(frozen=True)
class LustreSystem:
    """Everything needed to build a Lustre model for a run."""

    #: What the model's parts are called in resource names and bottleneck columns (a
    #: file system built on the same object-storage skeleton renames them: ``panfs.py``).
    NAMES: ClassVar[dict[str, str]] = {"server": "oss", "target": "ost", "controller": "controller", "metadata": "mds"}
    #: The file system's name in ``simfs show`` and errors.
    FILESYSTEM: ClassVar[str] = "lustre"

    name: str
    description: str
    client: ClientSpec
    client_count: int
    fabric_blocking_factor: float
    #: Links from the clients' switch to the servers' (0: clients and servers on one switch).
    client_uplink_Bps: float
    #: Ethernet switch port buffer, per-server TCP burst and minimum RTO (TCP incast).
    port_buffer_bytes: float
    tcp_burst_bytes: float
    rto_min_s: float
    mds: MdsSpec
    oss: ServerSpec
    oss_count: int
    osts_per_oss: int
    ost: RaidSet
    controller: ControllerSpec | None
    controller_count: int
    controller_attached: str
    tunables: LustreTunables
    origin: str
    mechanisms: dict[str, bool]
    #: Bytes one drive transfers per stream visit, for reads and for writes (seek thrashing).
    read_visit_bytes: float = 0.0
    write_visit_bytes: float = 0.0
    #: OSTs with one failed drive (what-if), in ``ost_state`` "degraded" or "rebuilding".
    failed_drive_osts: tuple[int, ...] = ()
    ost_state: str = "degraded"
    rebuild_fraction: float = 0.3
    #: Bytes sent and stored per byte written: 1 for Lustre (RAID is inside the OST);
    #: components / data components for a file system whose clients write parity (PanFS).
    write_redundancy: float = 1.0

    def client_of(self, node: int) -> ClientSpec:
        """Client node ``node``'s hardware: all alike here; CXFS's partitions differ."""
        return self.client

    def cached_read(self, total_bytes: float, direct: bool) -> bool:
        """Whether a read of data written in the same run comes from the page cache: not
        on Lustre, whose clients drop the pages of a file another client opens (and the
        seeds' files outsize memory); a local file system keeps them (``localfs.py``)."""
        return False

    def check_workload(self, workload: WorkloadSpec) -> None:
        """Refuse a workload this file system cannot run (none here)."""

    @property
    def excluded_osts(self) -> tuple[int, ...]:
        """OSTs no new file may use (none in Lustre; a failed PanFS blade)."""
        return ()

    def incast_senders(self, osts: list[int]) -> int:
        """How many senders answer one round of a read from ``osts`` at once (TCP
        incast).  In Lustre an OSS answers for all its OSTs."""
        return len({self.oss_of_ost(ost) for ost in osts})

    def ost_capacity_factor(self, ost: int) -> float:
        if ost not in self.failed_drive_osts:
            return 1.0
        return self.ost.state_factor(self.ost_state, self.rebuild_fraction)

    @property
    def ost_count(self) -> int:
        return self.oss_count * self.osts_per_oss

    def oss_of_ost(self, ost: int) -> int:
        """OSTs are numbered consecutively per OSS (OST0000, OST0001 on OSS 0, ...)."""
        return ost // self.osts_per_oss

    def controller_of_ost(self, ost: int) -> int:
        """Which controller serves ``ost``.

        ``shared`` controllers (a SAN array such as a DDN couplet) take LUNs alternately
        (LUN i on controller i mod n); ``per-oss`` controllers are HBAs inside each OSS,
        ``controller_count`` of them per server, taking that server's OSTs alternately.
        """
        if self.controller_attached == "per-oss":
            oss = self.oss_of_ost(ost)
            return oss * self.controller_count + (ost % self.osts_per_oss) % self.controller_count
        return ost % self.controller_count

    @property
    def controller_total(self) -> int:
        if self.controller is None:
            return 0
        return self.controller_count * (self.oss_count if self.controller_attached == "per-oss" else 1)

    # -- construction from a profile ----------------------------------------------------
    @classmethod
    def from_profile(cls, profile: Profile) -> LustreSystem:
        link = link_reader(profile)
        ost_count = profile.number("oss.count", integer=True, positive=True) * profile.number(
            "oss.osts_per_oss", integer=True, positive=True
        )
        try:
            client = client_spec(profile, link)
            oss = ServerSpec(
                network=link("oss.network"),
                cpu_Bps=profile.number("oss.cpu_Bps", positive=True),
                threads=profile.number("oss.threads", 512, integer=True, positive=True),
                rpc_service_s=profile.number("oss.rpc_service_s", 0.0, minimum=0),
            )
            drive_kind = profile.string("ost.drive", choices={"hdd", "ssd"})
            drive = hdd_spec(profile) if drive_kind == "hdd" else _ssd(profile)
            ost = RaidSet(
                level=profile.string("ost.raid_level", choices=set(PARITY_DISKS)),
                disk_count=profile.number("ost.disks", integer=True, positive=True),
                drive=drive,
                chunk_bytes=profile.number("ost.chunk_bytes", 0, integer=True, minimum=0),
                write_thread_Bps=profile.number("ost.write_thread_Bps", 0.0, minimum=0),
                data_offset_bytes=profile.number("ost.data_offset_bytes", 0, integer=True, minimum=0),
            )
            failed = index_list(profile, "ost.failed_drive_osts", ost_count, "OST")
            rebuilding = profile.boolean("ost.rebuilding", False)
            rebuild_fraction = profile.number("ost.rebuild_fraction", 0.3, minimum=0, maximum=0.95)
            if failed:
                ost.state_factor("rebuilding" if rebuilding else "degraded", rebuild_fraction)
            controller = None
            controller_count = 1
            controller_attached = "shared"
            if profile.has("controller"):
                controller = ControllerSpec(
                    bandwidth_Bps=profile.number("controller.bandwidth_Bps", positive=True),
                    cache_bytes=profile.number("controller.cache_bytes", 0, minimum=0),
                    prefetch_bytes=profile.number("controller.prefetch_bytes", 0, minimum=0),
                    cache_segments=profile.number("controller.cache_segments", 0, integer=True, minimum=0),
                )
                controller_count = profile.number("controller.count", integer=True, positive=True)
                controller_attached = profile.string("controller.attached", "shared", choices={"shared", "per-oss"})
        except ValueError as exc:  # a spec's own check, naming its field
            raise ProfileError(f"{profile.origin}: {exc}") from None

        tunables = LustreTunables(
            stripe_count=profile.number("lustre.stripe_count", integer=True, minimum=-1),
            stripe_size_bytes=profile.number("lustre.stripe_size_bytes", integer=True, minimum=65536),
            stripe_offset=profile.number("lustre.stripe_offset", -1, integer=True, minimum=-1),
            max_rpcs_in_flight=profile.number("lustre.max_rpcs_in_flight", integer=True, positive=True),
            rpc_size_bytes=profile.number("lustre.rpc_size_bytes", integer=True, positive=True),
            max_dirty_bytes_per_osc=profile.number("lustre.max_dirty_bytes_per_osc", integer=True, positive=True),
            rpc_latency_s=profile.number("lustre.rpc_latency_s", positive=True),
            metadata_latency_s=profile.number("lustre.metadata_latency_s", positive=True),
            lock_handoff_s=profile.number("lustre.lock_handoff_s", 1e-3, positive=True),
            max_read_ahead_bytes=profile.number("lustre.max_read_ahead_bytes", 41_943_040, integer=True, positive=True),
        )
        if tunables.stripe_size_bytes % 65536:
            raise ProfileError(f"{profile.origin}: lustre.stripe_size_bytes: expected a multiple of 65536")
        system = cls(
            **shared_fields(profile),
            client=client,
            mds=mds_spec(profile, "mds"),
            oss=oss,
            oss_count=profile.number("oss.count", integer=True, positive=True),
            osts_per_oss=profile.number("oss.osts_per_oss", integer=True, positive=True),
            ost=ost,
            controller=controller,
            controller_count=controller_count,
            controller_attached=controller_attached,
            tunables=tunables,
            failed_drive_osts=failed,
            ost_state="rebuilding" if rebuilding else "degraded",
            rebuild_fraction=rebuild_fraction,
            **_visits(profile, ost, tunables),
        )
        if tunables.stripe_count > system.ost_count:
            raise ProfileError(
                f"{profile.origin}: lustre.stripe_count: {tunables.stripe_count} is more than "
                f"the {system.ost_count} OSTs"
            )
        if not -1 <= tunables.stripe_offset < system.ost_count:
            raise ProfileError(f"{profile.origin}: lustre.stripe_offset: expected -1 or 0..{system.ost_count - 1}")
        profile.string("system.filesystem", choices={"lustre"})
        # The table of the drive kind not in use may stay (a what-if swaps ost.drive).
        unused_drive = "ost.ssd" if drive_kind == "hdd" else "ost.hdd"
        profile.check_all_read(ignore=("system.sources", "calibration", unused_drive))
        return system

    # -- description --------------------------------------------------------------------
    def mechanisms_line(self) -> str:
        """The ``describe`` line naming the mechanisms switched off."""
        off = [name for name, on in self.mechanisms.items() if not on]
        return f"  mechanisms off: {', '.join(off)}" if off else "  mechanisms: all on"

    def describe(self) -> str:
        """A human-readable summary of the assembled hardware (``simfs show``)."""
        c, t = self.client, self.tunables
        ost_write = self.ost.bandwidth_Bps("write")
        ost_read = self.ost.bandwidth_Bps("read")
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.name} {c.network.bandwidth_Bps / 1e9:.3g} GB/s, "
            f"copy {c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s per core write/read)",
            f"  fabric: blocking factor {self.fabric_blocking_factor:g}"
            + (
                f"; clients reach the servers over {self.client_uplink_Bps / 1e9:.3g} GB/s of uplinks"
                if self.client_uplink_Bps
                else ""
            ),
            f"  MDS: create {self.mds.create_per_s:g}/s, open {self.mds.open_per_s:g}/s, "
            f"close {self.mds.close_per_s:g}/s, stat {self.mds.stat_per_s:g}/s, remove {self.mds.remove_per_s:g}/s; "
            f"{self.mds.dir_update_per_s:g} creates or removes/s in one directory",
            f"  OSS: {self.oss_count} x ({self.oss.network.name} {self.oss.network.bandwidth_Bps / 1e9:.3g} GB/s, "
            f"CPU {self.oss.cpu_Bps / 1e9:.3g} GB/s, {self.oss.threads} service threads), "
            f"{self.osts_per_oss} OST(s) each",
            f"  OST: {self.ost_count} x {self.ost.level} of {self.ost.disk_count} {drive_name(self.ost.drive)} "
            f"= {ost_write / 1e6:.0f}/{ost_read / 1e6:.0f} MB/s write/read",
        ]
        if self.controller is not None:
            where = "per OSS" if self.controller_attached == "per-oss" else "shared by all OSS"
            lines.append(
                f"  controllers: {self.controller_count} {where} x "
                f"{self.controller.bandwidth_Bps / 1e9:.3g} GB/s ({self.controller_total} in all)"
            )
            if self.controller.cache_bytes or self.controller.cache_segments:
                prefetch = (
                    f"{self.controller.cache_segments} prefetch segments of {format_bytes(self.controller.prefetch_bytes)}"
                    if self.controller.cache_segments and self.controller.prefetch_bytes
                    else "prefetch not modelled (segments unknown)"
                )
                lines.append(
                    f"  controller cache: {format_bytes(self.controller.cache_bytes)} write-back each; {prefetch}"
                )
        if isinstance(self.ost.drive, HddSpec):
            lines.append(
                f"  seek thrashing: positioning {self.ost.drive.positioning_s * 1e3:.3g} ms, visits "
                f"{format_bytes(self.read_visit_bytes)} read / {format_bytes(self.write_visit_bytes)} write per drive"
            )
        if isinstance(self.ost.drive, SsdSpec) and self.ost.drive.preconditioned:
            lines.append(f"  SSDs preconditioned: write amplification {self.ost.drive.write_amplification:.3g}")
        if self.failed_drive_osts:
            factor = self.ost.state_factor(self.ost_state, self.rebuild_fraction)
            lines.append(
                f"  failed drives: OST(s) {', '.join(map(str, self.failed_drive_osts))} {self.ost_state} "
                f"({factor:.0%} of capacity)"
            )
        if self.ost.write_thread_Bps:
            lines.append(f"  software RAID write thread: {self.ost.write_thread_Bps / 1e6:.0f} MB/s per OST")
        if self.ost.chunk_bytes and self.ost.parity_disks:
            lines.append(
                f"  RAID chunk {format_bytes(self.ost.chunk_bytes)}, full stripe {format_bytes(self.ost.full_stripe_bytes)}"
            )
            if self.ost.data_offset_bytes % self.ost.full_stripe_bytes:
                rpc = self.tunables.rpc_size_bytes
                lines.append(
                    f"  data start {format_bytes(self.ost.data_offset_bytes)} past a stripe boundary: a "
                    f"{format_bytes(rpc)} write costs {self.ost.write_cost(rpc):.3g}x the drive work of an aligned one"
                )
        lines.append(self.mechanisms_line())
        lines.append(
            f"  striping: count {t.stripe_count}, size {format_bytes(t.stripe_size_bytes)}, "
            f"offset {t.stripe_offset}; RPCs: {t.max_rpcs_in_flight} x {format_bytes(t.rpc_size_bytes)} "
            f"in flight per OSC, {t.rpc_latency_s * 1e3:.3g} ms round trip; "
            f"max dirty {format_bytes(t.max_dirty_bytes_per_osc)} per OSC"
        )
        back_end = self.ost_count * min(ost_write, ost_read)
        if self.controller is not None:
            back_end = min(back_end, self.controller_total * self.controller.bandwidth_Bps)
        server_side = min(back_end, self.oss_count * self.oss.network.bandwidth_Bps)
        lines.append(f"  server-side streaming ceiling: {server_side / 1e9:.3g} GB/s")
        return "\n".join(lines)


def _networks(profile: Profile) -> dict[str, LinkSpec]:
    networks = dict(LINK_PRESETS)
    for name in profile.table("networks", {}):
        base = networks.get(name)
        networks[name] = LinkSpec(
            name=name,
            bandwidth_Bps=profile.number(
                f"networks.{name}.bandwidth_Bps", base.bandwidth_Bps if base else REQUIRED, positive=True
            ),
            latency_s=profile.number(f"networks.{name}.latency_s", base.latency_s if base else 0.0, minimum=0),
            source=f"{profile.origin} [networks.{name}]",
            transport=profile.string(
                f"networks.{name}.transport", base.transport if base else "rdma", choices={"tcp", "rdma", "fc"}
            ),
        )
    return networks


# -- profile readers shared by the file systems built on this skeleton (panfs.py) --------
def link_reader(profile: Profile) -> Callable[[str], LinkSpec]:
    """A reader of network-name fields: presets plus the profile's own ``[networks.*]``."""
    networks = _networks(profile)

    def link(key: str) -> LinkSpec:
        name = profile.string(key)
        if name not in networks:
            raise ProfileError(
                f"{profile.origin}: {key}: unknown network {name!r} (expected one of {', '.join(sorted(networks))})"
            )
        return networks[name]

    return link


def client_spec(profile: Profile, link: Callable[[str], LinkSpec]) -> ClientSpec:
    """``[client]``; the spec's own checks raise ValueError naming the field."""
    return ClientSpec(
        cores=profile.number("client.cores", integer=True, positive=True),
        memory_bytes=profile.number("client.memory_bytes", positive=True),
        network=link("client.network"),
        **core_fields(profile),
    )


def core_fields(profile: Profile, table: str = "client") -> dict[str, float]:
    """The per-core fields of ``[table]`` (copy rates, per-call time) and the dirty ratio:
    the same for every client node, however the nodes differ (CXFS's partitions)."""
    return {
        "copy_write_Bps": profile.number(f"{table}.copy_write_Bps", positive=True),
        "copy_read_Bps": profile.number(f"{table}.copy_read_Bps", positive=True),
        "dirty_ratio": profile.number(f"{table}.dirty_ratio", 0.4, positive=True, maximum=1),
        "call_overhead_s": profile.number(f"{table}.call_overhead_s", 0.0, minimum=0),
    }


def mds_spec(profile: Profile, table: str) -> MdsSpec:
    """The metadata service from ``[table]`` (``mds``, or PanFS's ``director``)."""
    create = profile.number(f"{table}.create_per_s", positive=True)
    open_ = profile.number(f"{table}.open_per_s", positive=True)
    return MdsSpec(
        create_per_s=create,
        open_per_s=open_,
        close_per_s=profile.number(f"{table}.close_per_s", positive=True),
        # Absent: a stat costs an open, a remove a create, and one directory takes
        # creates as fast as the service (no extra serialisation).
        stat_per_s=profile.number(f"{table}.stat_per_s", open_, positive=True),
        remove_per_s=profile.number(f"{table}.remove_per_s", create, positive=True),
        dir_update_per_s=profile.number(f"{table}.dir_update_per_s", create, positive=True),
    )


def shared_fields(profile: Profile, client_count: int | None = None) -> dict[str, Any]:
    """The system fields every profile gives the same way: names, clients' count (from
    ``client.count`` unless the model counts them itself), fabric, mechanisms."""
    return {
        "name": profile.string("system.name"),
        "description": profile.string("system.description"),
        "client_count": client_count or profile.number("client.count", integer=True, positive=True),
        "fabric_blocking_factor": profile.number("fabric.blocking_factor", 1.0, minimum=1),
        "client_uplink_Bps": profile.number("fabric.client_uplink_Bps", 0.0, minimum=0),
        "port_buffer_bytes": profile.number("fabric.port_buffer_bytes", 131072, minimum=0),
        "tcp_burst_bytes": profile.number("fabric.tcp_burst_bytes", 65536, positive=True),
        "rto_min_s": profile.number("fabric.rto_min_s", 0.2, minimum=0),
        "origin": profile.origin,
        "mechanisms": mechanisms_from_profile(profile),
    }


def index_list(profile: Profile, key: str, count: int, noun: str) -> tuple[int, ...]:
    """A list of distinct indices in ``0..count-1`` (failed OSTs or blades), sorted."""
    value = profile.raw(key, [])
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ProfileError(f"{profile.origin}: {key}: expected a list of {noun} indices, got {value!r}")
    bad = [i for i in value if not 0 <= i < count]
    if bad:
        raise ProfileError(f"{profile.origin}: {key}: {bad[0]} is not a valid {noun} index (0..{count - 1})")
    return tuple(sorted(set(value)))


def _visits(profile: Profile, ost: RaidSet, tunables: LustreTunables) -> dict[str, float]:
    """Per-drive visit sizes; by default an RPC spread over the data drives."""
    if not isinstance(ost.drive, HddSpec):
        return {}
    default = tunables.rpc_size_bytes / ost.data_disks
    return {
        "read_visit_bytes": profile.number("ost.hdd.read_visit_bytes", default, positive=True),
        "write_visit_bytes": profile.number("ost.hdd.write_visit_bytes", default, positive=True),
    }


def hdd_spec(profile: Profile, table: str = "ost.hdd") -> HddSpec:
    return HddSpec(
        sustained_Bps=profile.number(f"{table}.sustained_Bps", positive=True),
        average_seek_s=profile.number(f"{table}.average_seek_s", 0.0, minimum=0),
        rpm=profile.number(f"{table}.rpm", 0.0, minimum=0),
    )


def _ssd(profile: Profile) -> SsdSpec:
    return SsdSpec(
        read_Bps=profile.number("ost.ssd.read_Bps", positive=True),
        write_Bps=profile.number("ost.ssd.write_Bps", positive=True),
        read_iops=profile.number("ost.ssd.read_iops", 0.0, minimum=0),
        write_iops=profile.number("ost.ssd.write_iops", 0.0, minimum=0),
        spare_fraction=profile.number("ost.ssd.spare_fraction", 0.0, minimum=0),
        preconditioned=profile.boolean("ost.ssd.preconditioned", False),
    )


def drive_name(drive: object) -> str:
    if isinstance(drive, HddSpec):
        return f"HDD ({drive.sustained_Bps / 1e6:.0f} MB/s)"
    assert isinstance(drive, SsdSpec)
    return f"SSD ({drive.read_Bps / 1e6:.0f}/{drive.write_Bps / 1e6:.0f} MB/s read/write)"
