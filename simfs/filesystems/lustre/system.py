"""Lustre as described by a system profile: MDS, OSS, OSTs, controllers, striping and
client RPC settings, on the file-system-neutral core (``simfs.filesystems.core``).

The profile sections (see ``docs/reference/profile-format.md``) map one to one onto the
core's parts: ``[client]`` -> :class:`~simfs.hardware.ClientSpec`, ``[oss]`` -> the data
servers (:class:`~simfs.hardware.ServerSpec`), ``[ost]`` -> the targets
(:class:`~simfs.hardware.RaidSet`), ``[controller]`` ->
:class:`~simfs.hardware.ControllerSpec`, ``[mds]`` -> the metadata service
(:class:`~simfs.filesystems.core.MetadataSpec`), ``[lustre]`` -> the client I/O settings
(:class:`~simfs.filesystems.core.ClientIo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError
from simfs.filesystems.core.locking import LockPolicy, lustre_extent_policy
from simfs.filesystems.core.readers import (
    client_spec,
    controller_spec,
    drive_name,
    hdd_spec,
    index_list,
    link_reader,
    metadata_spec,
    shared_fields,
    ssd_spec,
)
from simfs.filesystems.core.system import ClientIo, FileSystem
from simfs.hardware import HddSpec, RaidSet, ServerSpec, SsdSpec
from simfs.hardware.raid import PARITY_DISKS
from simfs.systems.profile import Profile
from simfs.units import format_bytes


@dataclass(frozen=True)
class LustreSystem(FileSystem):
    """A Lustre installation: one MDS, OSS with their OSTs, optional SAN controllers."""

    NAMES: ClassVar[dict[str, str]] = {"server": "oss", "target": "ost", "controller": "controller", "metadata": "mds"}
    FILESYSTEM: ClassVar[str] = "lustre"
    OVERSTRIPING: ClassVar[bool] = True  # Lustre 2.13+ (LU-9846), lfs setstripe -C

    #: The OSS's lock service CPU time per enqueue or cancel (``oss.lock_service_s``).
    lock_service_s: float = 20e-6

    def lock_policy(self) -> LockPolicy:
        """LDLM extent locks on each stripe object (``core/locking.py``)."""
        return lustre_extent_policy(self.lock_service_s)

    def collective_aggregators(self, nodes: int, stripe_count: int) -> int:
        """ROMIO's Lustre driver: one aggregator per node, at most one per stripe object
        (``ad_lustre_aggregate.c``: ``avail_cb_nodes = min(cb_nodes, stripe_count)``), so
        that each object is written by one aggregator, stripe by stripe."""
        return min(nodes, stripe_count)

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
            drive = hdd_spec(profile) if drive_kind == "hdd" else ssd_spec(profile)
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
            controller, controller_count, controller_attached = controller_spec(profile)
        except ValueError as exc:  # a spec's own check, naming its field
            raise ProfileError(f"{profile.origin}: {exc}") from None

        stripe_count = profile.number("lustre.stripe_count", integer=True, minimum=-1)
        if stripe_count == 0:
            # lfs setstripe -c 0 means "the file system's default": a profile is that default.
            raise ProfileError(f"{profile.origin}: lustre.stripe_count: expected -1 (every OST) or at least 1, got 0")
        io = ClientIo(
            stripe_count=stripe_count,
            stripe_size_bytes=profile.number("lustre.stripe_size_bytes", integer=True, minimum=65536),
            stripe_offset=profile.number("lustre.stripe_offset", -1, integer=True, minimum=-1),
            max_rpcs_in_flight=profile.number("lustre.max_rpcs_in_flight", integer=True, positive=True),
            rpc_size_bytes=profile.number("lustre.rpc_size_bytes", integer=True, positive=True),
            max_dirty_bytes_per_osc=profile.number("lustre.max_dirty_bytes_per_osc", integer=True, positive=True),
            rpc_latency_s=profile.number("lustre.rpc_latency_s", positive=True),
            metadata_latency_s=profile.number("lustre.metadata_latency_s", positive=True),
            max_read_ahead_bytes=profile.number("lustre.max_read_ahead_bytes", 41_943_040, integer=True, positive=True),
            # Clients before Lustre 2.8 keep one modifying metadata RPC in flight (LU-5319).
            max_mod_rpcs_in_flight=profile.number("lustre.max_mod_rpcs_in_flight", 1, integer=True, positive=True),
            # mdc.*.max_rpcs_in_flight, 8 by default.
            max_metadata_rpcs_in_flight=profile.number(
                "lustre.max_metadata_rpcs_in_flight", 8, integer=True, positive=True
            ),
        )
        if io.stripe_size_bytes % 65536:
            raise ProfileError(f"{profile.origin}: lustre.stripe_size_bytes: expected a multiple of 65536")
        system = cls(
            **shared_fields(profile),
            client=client,
            metadata=metadata_spec(profile, "mds"),
            server=oss,
            server_count=profile.number("oss.count", integer=True, positive=True),
            targets_per_server=profile.number("oss.osts_per_oss", integer=True, positive=True),
            target=ost,
            controller=controller,
            controller_count=controller_count,
            controller_attached=controller_attached,
            io=io,
            failed_drive_targets=failed,
            # estimate: an LDLM enqueue or cancel is tens of microseconds of OSS CPU
            lock_service_s=profile.number("oss.lock_service_s", 20e-6, minimum=0),
            target_state="rebuilding" if rebuilding else "degraded",
            rebuild_fraction=rebuild_fraction,
            **_visits(profile, ost, io),
        )
        if io.stripe_count > system.target_count:
            raise ProfileError(
                f"{profile.origin}: lustre.stripe_count: {io.stripe_count} is more than the {system.target_count} OSTs"
            )
        if not -1 <= io.stripe_offset < system.target_count:
            raise ProfileError(f"{profile.origin}: lustre.stripe_offset: expected -1 or 0..{system.target_count - 1}")
        profile.string("system.filesystem", choices={"lustre"})
        # The table of the drive kind not in use may stay (a what-if swaps ost.drive).
        unused_drive = "ost.ssd" if drive_kind == "hdd" else "ost.hdd"
        profile.check_all_read(ignore=("system.sources", "calibration", unused_drive))
        return system

    # -- description --------------------------------------------------------------------
    def describe(self) -> str:
        """A human-readable summary of the assembled hardware (``simfs show``)."""
        c, t = self.client, self.io
        ost_write = self.target.bandwidth_Bps("write")
        ost_read = self.target.bandwidth_Bps("read")
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.summary()}, "
            f"copy {c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s per core write/read)",
            f"  fabric: blocking factor {self.fabric_blocking_factor:g}"
            + (
                f"; clients reach the servers over {self.client_uplink_Bps / 1e9:.3g} GB/s of uplinks"
                if self.client_uplink_Bps
                else ""
            ),
            f"  MDS: {self.metadata.describe()}; per client in flight: {_slots(t.max_mod_rpcs_in_flight)} "
            f"modifying RPC(s) (max_mod_rpcs_in_flight), {_slots(t.max_metadata_rpcs_in_flight)} other(s)",
            f"  OSS: {self.server_count} x ({self.server.network.summary()}, "
            f"CPU {self.server.cpu_Bps / 1e9:.3g} GB/s, {self.server.threads} service threads), "
            f"{self.targets_per_server} OST(s) each",
            f"  OST: {self.target_count} x {self.target.level} of {self.target.disk_count} {drive_name(self.target.drive)} "
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
        if isinstance(self.target.drive, HddSpec):
            lines.append(
                f"  seek thrashing: positioning {self.target.drive.positioning_s * 1e3:.3g} ms, visits "
                f"{format_bytes(self.read_visit_bytes)} read / {format_bytes(self.write_visit_bytes)} write per drive"
            )
        if isinstance(self.target.drive, SsdSpec) and self.target.drive.preconditioned:
            lines.append(f"  SSDs preconditioned: write amplification {self.target.drive.write_amplification:.3g}")
        if self.failed_drive_targets:
            factor = self.target.state_factor(self.target_state, self.rebuild_fraction)
            lines.append(
                f"  failed drives: OST(s) {', '.join(map(str, self.failed_drive_targets))} {self.target_state} "
                f"({factor:.0%} of capacity)"
            )
        if self.target.write_thread_Bps:
            lines.append(f"  software RAID write thread: {self.target.write_thread_Bps / 1e6:.0f} MB/s per OST")
        if self.target.chunk_bytes and self.target.parity_disks:
            lines.append(
                f"  RAID chunk {format_bytes(self.target.chunk_bytes)}, full stripe {format_bytes(self.target.full_stripe_bytes)}"
            )
            if self.target.data_offset_bytes % self.target.full_stripe_bytes:
                rpc = self.io.rpc_size_bytes
                lines.append(
                    f"  data start {format_bytes(self.target.data_offset_bytes)} past a stripe boundary: a "
                    f"{format_bytes(rpc)} write costs {self.target.write_cost(rpc):.3g}x the drive work of an aligned one"
                )
        lines.append(self.mechanisms_line())
        lines.append(
            f"  striping: count {t.stripe_count}, size {format_bytes(t.stripe_size_bytes)}, "
            f"offset {t.stripe_offset}; RPCs: {t.max_rpcs_in_flight} x {format_bytes(t.rpc_size_bytes)} "
            f"in flight per OSC, {t.rpc_latency_s * 1e3:.3g} ms round trip; "
            f"max dirty {format_bytes(t.max_dirty_bytes_per_osc)} per OSC"
        )
        back_end = self.target_count * min(ost_write, ost_read)
        if self.controller is not None:
            back_end = min(back_end, self.controller_total * self.controller.bandwidth_Bps)
        server_side = min(back_end, self.server_count * self.server.network.bandwidth_Bps)
        lines.append(f"  server-side streaming ceiling: {server_side / 1e9:.3g} GB/s")
        return "\n".join(lines)


def _visits(profile: Profile, ost: RaidSet, io: ClientIo) -> dict[str, float]:
    """Per-drive visit sizes; by default an RPC spread over the data drives."""
    if not isinstance(ost.drive, HddSpec):
        return {}
    default = io.rpc_size_bytes / ost.data_disks
    return {
        "read_visit_bytes": profile.number("ost.hdd.read_visit_bytes", default, positive=True),
        "write_visit_bytes": profile.number("ost.hdd.write_visit_bytes", default, positive=True),
    }


def _slots(limit: int) -> str:
    """A per-client request limit as ``simfs show`` prints it (0 is no limit)."""
    return str(limit) if limit else "no limit of"
