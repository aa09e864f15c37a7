"""Panasas PanFS (ActiveScale / ActiveStor): shelves of blades, per-file RAID.

A PanFS installation is an object-storage file system built of the core's parts (clients, a
metadata service, storage servers holding object targets; ``simfs.filesystems.core``),
mapped as:

========================  ============================  =====================================
PanFS                     model part                    profile section
========================  ============================  =====================================
DirectorBlade             metadata service (``director``)  ``[director]``
shelf and its uplink      server (``shelf``): NIC = uplink ``[shelf]``
StorageBlade port + CPU   per-shelf "controller" (``blade-port``), one per blade, holding the
                          blade's write-back cache      ``[blade]``
StorageBlade drives       target (``blade``)            ``[blade]``, ``[blade.hdd]``
per-file RAID-5           parity stripes of ``raid_width`` blades, 64 KB stripe units,
                          over ``blades_per_file`` blades (the stripe count);
                          ``write_redundancy`` = width / (width - 1)   ``[panfs]``
========================  ============================  =====================================

What differs from Lustre, and why (Welch et al., "Scalable Performance of the Panasas
Parallel File System", FAST 2008, sections 3-5; seed ``000_cd5f2d1d7b196eec.txt``,
"Background on Panasas ActiveScale"):

* **Per-file RAID computed by the client.**  Each file is striped in 64 KB stripe units
  over a parity group of blades, one unit in each stripe being parity, and the client
  computes and sends the parity.  So a client writing ``B`` bytes sends and the blades store
  ``B x width / (width - 1)``: the client's 1GbE carries payload *and* parity.
* **TCP incast.**  A read of one stripe is answered by every blade holding a component at
  once, each from its own port; the senders that overflow a client's switch port are
  blades, not shelves (``incast_sender_of_ost``).  This is the case the incast literature
  started from (Nagle, Serenyi and Matthews, SC 2004, on Panasas).
* **Blade failure.**  A failed blade leaves the bladeset: new files avoid it, and while
  its data is reconstructed every surviving blade gives ``rebuild_fraction`` of its drives
  to the rebuild (PanFS rebuilds in parallel on all blades, per file; Welch et al. 2008,
  section 4.3).  ``panfs.failed_blades`` and ``panfs.rebuilding`` are the what-if.

Not modelled: the HybridBlade's SSD (it holds metadata and small files, not the streaming
data of dd and IOR), and more than one DirectorBlade serving one volume (a volume is
managed by one director; the seed's tests use one volume).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError
from simfs.filesystems.core.layout import Layout
from simfs.filesystems.core.locking import LockPolicy
from simfs.filesystems.core.readers import (
    client_spec,
    drive_name,
    hdd_spec,
    index_list,
    link_reader,
    metadata_spec,
    shared_fields,
)
from simfs.filesystems.core.system import ClientIo, FileSystem
from simfs.hardware import ControllerSpec, RaidSet, ServerSpec
from simfs.hardware.raid import PARITY_DISKS
from simfs.systems.profile import Profile
from simfs.units import format_bytes


@dataclass(frozen=True)
class PanfsSystem(FileSystem):
    """A PanFS installation; see the module docstring for how its parts map."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "shelf",
        "target": "blade",
        "controller": "blade-port",
        "metadata": "director",
    }
    FILESYSTEM: ClassVar[str] = "panfs"

    #: Blades that have failed (what-if); see ``rebuilding``.
    failed_blades: tuple[int, ...] = ()
    #: True while the failed blades' data is reconstructed on the others.
    rebuilding: bool = False
    #: Components of one parity stripe, parity included (RAID-5: width - 1 data units).
    raid_width: int = 10
    #: Bytes of a file on one RAID group before the next group (0: every file over all
    #: its blades at once).
    group_bytes: int = 0

    def shape_layout(self, layout: Layout) -> Layout:
        """Each contiguous ``group_bytes`` of a file on one RAID group of ``raid_width``
        blades, the next on the next group (``core/layout.py``); the allocator's blades,
        cut to whole groups."""
        if not self.group_bytes or layout.stripe_count < 2 * self.raid_width:
            return layout
        groups = layout.stripe_count // self.raid_width
        return Layout(
            layout.targets[: groups * self.raid_width],
            layout.stripe_size_bytes,
            group_width=self.raid_width,
            group_bytes=self.group_bytes,
        )

    def lock_policy(self) -> LockPolicy:
        """Parity-stripe locks from the file's metadata manager: clients compute parity,
        so two clients must not update one parity stripe at once (Welch et al. 2008;
        Bent et al. 2009: small strided writes within a parity stripe serialise)."""
        return LockPolicy(
            "panfs-parity-stripe",
            per_object=False,
            unit_bytes=self.io.stripe_size_bytes * (self.raid_width - 1),
            grow=False,
            service_s=self.metadata.demand_s("open"),
        )

    @property
    def client_parity_width(self) -> int:
        return self.raid_width

    @property
    def excluded_targets(self) -> tuple[int, ...]:
        return self.failed_blades

    def incast_senders(self, targets: list[int]) -> int:
        # A sequential reader reads one parity stripe at a time: its data components'
        # blades answer at once, each from its own port.
        return min(len(set(targets)), self.raid_width - 1)

    def target_capacity_factor(self, target: int) -> float:
        if target in self.failed_blades:
            return 1.0  # no new file is placed on it (``excluded_targets``)
        return 1.0 - self.rebuild_fraction if self.failed_blades and self.rebuilding else 1.0

    # -- construction from a profile ----------------------------------------------------
    @classmethod
    def from_profile(cls, profile: Profile) -> PanfsSystem:
        link = link_reader(profile)
        shelf_count = profile.number("shelf.count", integer=True, positive=True)
        blades_per_shelf = profile.number("shelf.storage_blades", integer=True, positive=True)
        # Only HDD blades exist in the seeds; the field is there to say so.
        profile.string("blade.drive", choices={"hdd"})
        try:
            client = client_spec(profile, link)
            shelf = ServerSpec(
                network=link("shelf.uplink"),
                cpu_Bps=profile.number("shelf.switch_Bps", positive=True),
            )
            blade = RaidSet(
                level=profile.string("blade.raid_level", choices=set(PARITY_DISKS)),
                disk_count=profile.number("blade.drives", integer=True, positive=True),
                drive=hdd_spec(profile, "blade.hdd"),
            )
            port = ControllerSpec(
                bandwidth_Bps=profile.number("blade.port_Bps", positive=True),
                cache_bytes=profile.number("blade.cache_bytes", 0, minimum=0),
            )
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None

        blades = shelf_count * blades_per_shelf
        width = profile.number("panfs.raid_width", integer=True, minimum=2, maximum=blades)
        # A large file spans many parity stripes, placed over the bladeset (RAID 50).
        spread = profile.number("panfs.blades_per_file", integer=True, minimum=width, maximum=blades)
        stripe_unit = profile.number("panfs.stripe_unit_bytes", 65536, integer=True, positive=True)
        if stripe_unit % 65536:
            raise ProfileError(f"{profile.origin}: panfs.stripe_unit_bytes: expected a multiple of 65536")
        failed = index_list(profile, "panfs.failed_blades", blades, "blade")
        usable = blades - len(failed)
        if usable < width:
            raise ProfileError(
                f"{profile.origin}: panfs.failed_blades: {usable} blades left, fewer than panfs.raid_width = {width}"
            )
        io = ClientIo(
            stripe_count=min(spread, usable),  # new files go to the blades left
            stripe_size_bytes=stripe_unit,
            stripe_offset=-1,
            max_rpcs_in_flight=profile.number("panfs.requests_in_flight_per_blade", integer=True, positive=True),
            rpc_size_bytes=stripe_unit,
            max_dirty_bytes_per_osc=profile.number("panfs.max_dirty_bytes_per_blade", integer=True, positive=True),
            rpc_latency_s=profile.number("panfs.request_latency_s", positive=True),
            metadata_latency_s=profile.number("panfs.metadata_latency_s", positive=True),
            max_read_ahead_bytes=profile.number("panfs.max_read_ahead_bytes", integer=True, positive=True),
        )
        system = cls(
            **shared_fields(profile),
            client=client,
            metadata=metadata_spec(profile, "director"),
            server=shelf,
            server_count=shelf_count,
            targets_per_server=blades_per_shelf,
            target=blade,
            controller=port,
            controller_count=blades_per_shelf,
            controller_attached="per-oss",
            io=io,
            rebuild_fraction=profile.number("panfs.rebuild_fraction", 0.3, minimum=0, maximum=0.95),
            # One visit size both ways: the blade's OSD file system writes out of its cache and
            # reads ahead in the same extents (an assumption; it makes the read peak a prediction).
            read_visit_bytes=profile.number("blade.hdd.visit_bytes", stripe_unit, positive=True),
            write_visit_bytes=profile.number("blade.hdd.visit_bytes", stripe_unit, positive=True),
            write_redundancy=width / (width - 1),
            raid_width=width,
            # Bent et al., SC09: "each contiguous GB is spread only across a single RAID group".
            group_bytes=_group_bytes(profile, width, stripe_unit),
            failed_blades=failed,
            rebuilding=profile.boolean("panfs.rebuilding", False),
        )
        profile.string("system.filesystem", choices={"panfs"})
        profile.check_all_read(ignore=("system.sources", "calibration"))
        return system

    # -- description --------------------------------------------------------------------
    def describe(self) -> str:
        c, t, blade = self.client, self.io, self.target
        port = self.controller
        assert port is not None
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.summary()}, "
            f"copy {c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s per core write/read)",
            f"  fabric: blocking factor {self.fabric_blocking_factor:g}",
            f"  DirectorBlade: {self.metadata.describe()}",
            f"  shelves: {self.server_count} x ({self.targets_per_server} StorageBlades, "
            f"{self.server.network.name} uplink {self.server.network.bandwidth_Bps / 1e9:.3g} GB/s)",
            f"  StorageBlades: {self.target_count} x ({blade.disk_count} {drive_name(blade.drive)} as {blade.level}, "
            f"port {port.bandwidth_Bps / 1e6:.0f} MB/s, cache {format_bytes(port.cache_bytes)})",
            f"  files over {t.stripe_count} blades in RAID-5 parity stripes of {self.raid_width} "
            f"({self.raid_width - 1} data + parity, {format_bytes(t.stripe_size_bytes)} stripe units): "
            f"{self.write_redundancy:.3g} bytes sent per byte written",
            f"  client: {t.max_rpcs_in_flight} x {format_bytes(t.rpc_size_bytes)} in flight per blade, "
            f"{t.rpc_latency_s * 1e3:.3g} ms round trip",
        ]
        lines.append(self.mechanisms_line())
        if self.failed_blades:
            state = f"rebuilding ({self.rebuild_fraction:.0%} of every other blade)" if self.rebuilding else "failed"
            lines.append(f"  blades {', '.join(map(str, self.failed_blades))}: {state}; new files avoid them")
        usable = self.target_count - len(self.failed_blades)
        blade_rate = min(port.bandwidth_Bps, blade.bandwidth_Bps("write"))
        ceiling = min(usable * blade_rate, self.server_count * self.server.network.bandwidth_Bps)
        lines.append(f"  server-side streaming ceiling: {ceiling / 1e9:.3g} GB/s")
        return "\n".join(lines)


def _group_bytes(profile: Profile, width: int, stripe_unit: int) -> int:
    """``panfs.group_bytes``: a whole number of the group's stripe rows (0: no groups); by
    default the whole rows in a GiB."""
    row = width * stripe_unit
    value = profile.number("panfs.group_bytes", (1 << 30) // row * row, integer=True, minimum=0)
    if value % row:
        raise ProfileError(
            f"{profile.origin}: panfs.group_bytes: expected a multiple of a group's stripe row "
            f"(raid_width x stripe unit = {row} bytes), got {value}"
        )
    return value
