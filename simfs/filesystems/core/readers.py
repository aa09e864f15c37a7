"""Profile readers shared by every file-system model: networks, clients, the metadata
service, fabric and mechanisms, drives, and index lists.

Each reads fields by their dotted profile names, so that an error names the field
(``simfs.systems.profile.Profile``); a model reads its own sections with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simfs.errors import ProfileError
from simfs.filesystems.core.system import DIRECTORY_LOCKS, MetadataSpec
from simfs.filesystems.core.variability import variability_from_profile
from simfs.hardware import LINK_PRESETS, ClientSpec, ControllerSpec, HddSpec, LinkSpec, RaidSet, SsdSpec
from simfs.mechanisms import mechanisms_from_profile
from simfs.systems.profile import REQUIRED, Profile


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


def metadata_spec(profile: Profile, table: str, *, lookup_callbacks: bool = False) -> MetadataSpec:
    """The metadata service from ``[table]`` (``mds``, or PanFS's ``director``);
    ``lookup_callbacks`` is the model's rule, not a profile field."""
    create = profile.number(f"{table}.create_per_s", positive=True)
    open_ = profile.number(f"{table}.open_per_s", positive=True)
    try:
        return MetadataSpec(
            create_per_s=create,
            open_per_s=open_,
            close_per_s=profile.number(f"{table}.close_per_s", positive=True),
            # Absent: a stat costs an open, a remove a create, and one directory takes
            # creates as fast as the service (no extra serialisation).
            stat_per_s=profile.number(f"{table}.stat_per_s", open_, positive=True),
            remove_per_s=profile.number(f"{table}.remove_per_s", create, positive=True),
            dir_update_per_s=profile.number(f"{table}.dir_update_per_s", create, positive=True),
            cores=profile.number(f"{table}.cores", 1, integer=True, positive=True),
            request_parallelism=profile.number(f"{table}.request_parallelism", 1.0, minimum=1),
            threads=profile.number(f"{table}.threads", 512, integer=True, positive=True),
            directory_lock=profile.string(f"{table}.directory_lock", "exclusive", choices=set(DIRECTORY_LOCKS)),
            callback_s=profile.number(f"{table}.callback_s", 0.0, minimum=0),
            lock_handover_cpu_s=profile.number(f"{table}.lock_handover_cpu_s", 0.0, minimum=0),
            lookup_callbacks=lookup_callbacks,
        )
    except ValueError as exc:
        raise ProfileError(f"{profile.origin}: {table}.{exc}") from None


def one_store_per_server(store: RaidSet) -> dict[str, Any]:
    """The system fields of servers that each hold one store behind no controller
    (MooseFS's chunkservers, GlusterFS's bricks)."""
    return {
        "targets_per_server": 1,
        "target": store,
        "controller": None,
        "controller_count": 1,
        "controller_attached": "shared",
    }


def check_shared_cores(profile: Profile, metadata: MetadataSpec, host: Any, table: str) -> None:
    """A metadata service on a shared host (``[host]``, a testbed) runs on the host's cores:
    ``[table].cores`` must be ``host.cores``."""
    if host is not None and metadata.cores != host.cores:
        raise ProfileError(
            f"{profile.origin}: {table}.cores: {metadata.cores} on a shared host of {host.cores} cores "
            "([host]): its requests run on the host's cores"
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
        **_client_groups(profile),
        "port_buffer_bytes": profile.number("fabric.port_buffer_bytes", 131072, minimum=0),
        "tcp_burst_bytes": profile.number("fabric.tcp_burst_bytes", 65536, positive=True),
        "rto_min_s": profile.number("fabric.rto_min_s", 0.2, minimum=0),
        "origin": profile.origin,
        "mechanisms": mechanisms_from_profile(profile),
        "variability": variability_from_profile(profile),
    }


def _client_groups(profile: Profile) -> dict[str, Any]:
    """``fabric.client_group_size`` and ``fabric.group_uplink_Bps``: both or neither."""
    size = profile.number("fabric.client_group_size", 0, integer=True, minimum=0)
    uplink = profile.number("fabric.group_uplink_Bps", 0.0, minimum=0)
    if bool(size) != bool(uplink):
        missing = "fabric.group_uplink_Bps" if size else "fabric.client_group_size"
        raise ProfileError(f"{profile.origin}: {missing}: client groups need both a size and an uplink rate")
    return {"client_group_size": size, "group_uplink_Bps": uplink}


def index_list(profile: Profile, key: str, count: int, noun: str) -> tuple[int, ...]:
    """A list of distinct indices in ``0..count-1`` (failed OSTs or blades), sorted."""
    value = profile.raw(key, [])
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ProfileError(f"{profile.origin}: {key}: expected a list of {noun} indices, got {value!r}")
    bad = [i for i in value if not 0 <= i < count]
    if bad:
        raise ProfileError(f"{profile.origin}: {key}: {bad[0]} is not a valid {noun} index (0..{count - 1})")
    return tuple(sorted(set(value)))


def hdd_spec(profile: Profile, table: str = "ost.hdd") -> HddSpec:
    return HddSpec(
        sustained_Bps=profile.number(f"{table}.sustained_Bps", positive=True),
        average_seek_s=profile.number(f"{table}.average_seek_s", 0.0, minimum=0),
        rpm=profile.number(f"{table}.rpm", 0.0, minimum=0),
    )


def ssd_spec(profile: Profile, table: str = "ost.ssd") -> SsdSpec:
    return SsdSpec(
        read_Bps=profile.number(f"{table}.read_Bps", positive=True),
        write_Bps=profile.number(f"{table}.write_Bps", positive=True),
        read_iops=profile.number(f"{table}.read_iops", 0.0, minimum=0),
        write_iops=profile.number(f"{table}.write_iops", 0.0, minimum=0),
        spare_fraction=profile.number(f"{table}.spare_fraction", 0.0, minimum=0),
        preconditioned=profile.boolean(f"{table}.preconditioned", False),
    )


def controller_spec(profile: Profile) -> tuple[ControllerSpec | None, int, str]:
    """``[controller]``, if the targets are LUNs behind storage controllers: the spec,
    how many, and whether they are ``shared`` or one per server (``per-oss``)."""
    if not profile.has("controller"):
        return None, 1, "shared"
    controller = ControllerSpec(
        bandwidth_Bps=profile.number("controller.bandwidth_Bps", positive=True),
        cache_bytes=profile.number("controller.cache_bytes", 0, minimum=0),
        prefetch_bytes=profile.number("controller.prefetch_bytes", 0, minimum=0),
        cache_segments=profile.number("controller.cache_segments", 0, integer=True, minimum=0),
    )
    count = profile.number("controller.count", integer=True, positive=True)
    attached = profile.string("controller.attached", "shared", choices={"shared", "per-oss"})
    return controller, count, attached


def drive_name(drive: object) -> str:
    if isinstance(drive, HddSpec):
        return f"HDD ({drive.sustained_Bps / 1e6:.0f} MB/s)"
    assert isinstance(drive, SsdSpec)
    return f"SSD ({drive.read_Bps / 1e6:.0f}/{drive.write_Bps / 1e6:.0f} MB/s read/write)"
