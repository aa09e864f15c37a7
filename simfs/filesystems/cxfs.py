"""SGI CXFS: clients on a Fibre Channel SAN, a metadata server on Ethernet.

CXFS is a shared-disk file system: every client (here a partition of an SGI Altix) reads
and writes the RAID LUNs itself, over its own Fibre Channel HBAs and the SAN switches,
while a metadata server, reached over Gigabit Ethernet, hands out the tokens and does
every namespace operation (Shepard and Epe, "SGI InfiniteStorage Shared Filesystem
CXFS", SGI 2004; seed ``003_ccdc285e551f91e9.txt``).  There is no data server.  The model
maps the SAN onto the core's parts (:class:`~simfs.filesystems.core.FileSystem`):

==============================  ============================  ===========================
CXFS at TU Dresden              model part                    profile section
==============================  ============================  ===========================
Altix partition (venus, merkur)  client node; its NIC is its   ``[partitions.NAME]``,
                                FC ports (``ports x fc2``)    ``[client]`` (per CPU)
Brocade SilkWorm 4100 pair      fabric core                   ``[fabric]``
RM660 controller pair           server (``rm660-pair``): NIC  ``[rm660]``
                                = its host ports, CPU = its
                                sustained rate
LUN (an 8+1 tier of drives)     target (``lun``)              ``[lun]``, ``[lun.hdd]``
XVM volume (fastfs, work)       a file's stripe over the      ``[cxfs]``,
                                volume's LUNs                 ``[volumes.NAME]``
metadata server (Altix 350)     metadata service (``cxfs-mds``)  ``[mds]``
==============================  ============================  ===========================

What differs from Lustre, and why:

* **Clients are unequal.**  venus has 128 CPUs and 12 FC ports, merkur 64 CPUs and 8
  (seed section 3), so the nodes of a run are the partitions in profile order, each with
  its own cores, memory and FC bandwidth (``client_of``).
* **No RPCs, block I/O.**  The client's "RPCs" are SCSI requests to a LUN: request size,
  requests queued per LUN and their round trip are the ``[cxfs]`` request settings.
  There is no TCP, so no incast.
* **A volume is a set of LUNs.**  The production file systems are XVM stripes over
  different LUNs of the same controller pairs: fastfs 6 LUNs from each of the 4 pairs,
  work 1 from each (seed section 3).  ``cxfs.volume`` chooses the one a run uses; the
  LUNs of the other volumes are idle in that run.
* **Metadata over Ethernet.**  Every create or remove is a round trip to the metadata
  server over the GbE "CXFS interconnect" (seed Table 1), and in one directory the
  updates serialise on the directory's lock, as on a Lustre MDS.

Not modelled: the archive volume (one LUN, no measurement), DMF and tape, CXFS token
traffic between clients sharing a file (the seed's runs have one client per file or
per partition), and the March 2006 miscabled HBAs (section 4) other than as a what-if on
``partitions.venus.fc_ports``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError
from simfs.filesystems.core.locking import LockPolicy
from simfs.filesystems.core.readers import (
    core_fields,
    drive_name,
    hdd_spec,
    link_reader,
    metadata_spec,
    shared_fields,
)
from simfs.filesystems.core.system import ClientIo, FileSystem
from simfs.hardware import ClientSpec, LinkSpec, RaidSet, ServerSpec
from simfs.hardware.raid import PARITY_DISKS
from simfs.systems.profile import Profile
from simfs.units import format_bytes


def fc_ports(link: LinkSpec, ports: int) -> LinkSpec:
    """``ports`` Fibre Channel ports of technology ``link`` used as one (multipathed) pipe."""
    return LinkSpec(
        f"{ports} x {link.name}",
        ports * link.bandwidth_Bps,
        link.latency_s,
        f"{ports} ports of {link.source}",
        link.transport,
    )


@dataclass(frozen=True)
class CxfsSystem(FileSystem):
    """A CXFS installation; see the module docstring for how its parts map."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "rm660-pair",
        "target": "lun",
        "controller": "rm660",
        "metadata": "cxfs-mds",
    }
    FILESYSTEM: ClassVar[str] = "cxfs"

    #: The client nodes in run order (Altix partitions), and their names.
    partitions: tuple[ClientSpec, ...] = ()
    partition_names: tuple[str, ...] = ()
    partition_ports: tuple[int, ...] = ()
    host_ports_per_pair: int = 0
    #: The XVM volume the runs use, and the nominal FC port rate the seed quotes.
    volume: str = ""
    nominal_port_Bps: float = 0.0

    def lock_policy(self) -> LockPolicy:
        """A file's write token from the metadata server: one writing client at a time."""
        return LockPolicy(
            "cxfs-token", per_object=False, unit_bytes=0, grow=False, service_s=self.metadata.demand_s("open")
        )

    def client_of(self, node: int) -> ClientSpec:
        return self.partitions[node]

    # -- construction from a profile ----------------------------------------------------
    @classmethod
    def from_profile(cls, profile: Profile) -> CxfsSystem:
        link = link_reader(profile)
        fc = link("fc.link")
        nominal = profile.number("fc.nominal_port_Bps", positive=True)
        names = list(profile.table("partitions"))
        if not names:
            raise ProfileError(f"{profile.origin}: partitions: expected at least one [partitions.NAME] table")
        host_ports = profile.number("rm660.host_ports_per_pair", integer=True, positive=True)
        ports = tuple(profile.number(f"partitions.{name}.fc_ports", integer=True, positive=True) for name in names)
        try:
            partitions = tuple(
                ClientSpec(
                    cores=profile.number(f"partitions.{name}.cpus", integer=True, positive=True),
                    memory_bytes=profile.number(f"partitions.{name}.memory_bytes", positive=True),
                    network=fc_ports(fc, port_count),
                    **core_fields(profile),
                )
                for name, port_count in zip(names, ports)
            )
            pair = ServerSpec(
                network=fc_ports(fc, host_ports),
                cpu_Bps=profile.number("rm660.pair_Bps", positive=True),
            )
            lun = RaidSet(
                level=profile.string("lun.raid_level", choices=set(PARITY_DISKS)),
                disk_count=profile.number("lun.drives", integer=True, positive=True),
                drive=hdd_spec(profile, "lun.hdd"),
            )
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None

        volumes = list(profile.table("volumes"))
        volume = profile.string("cxfs.volume", choices=set(volumes))
        for name in volumes:  # every volume is checked, not only the one in use
            profile.number(f"volumes.{name}.luns_per_pair", integer=True, positive=True)
        luns_per_pair = profile.number(f"volumes.{volume}.luns_per_pair", integer=True, positive=True)
        pairs = profile.number("rm660.pairs", integer=True, positive=True)
        metadata_network = link("mds.network")
        metadata_latency = profile.number("cxfs.metadata_latency_s", positive=True)
        if metadata_latency < 2 * metadata_network.latency_s:
            raise ProfileError(
                f"{profile.origin}: cxfs.metadata_latency_s: {metadata_latency:g} s is less than a round trip "
                f"over mds.network ({2 * metadata_network.latency_s:g} s)"
            )
        stripe_unit = profile.number("cxfs.stripe_unit_bytes", integer=True, positive=True)
        if stripe_unit % 65536:
            raise ProfileError(f"{profile.origin}: cxfs.stripe_unit_bytes: expected a multiple of 65536")
        io = ClientIo(
            stripe_count=pairs * luns_per_pair,  # XVM stripes every file over the whole volume
            stripe_size_bytes=stripe_unit,
            stripe_offset=-1,
            max_rpcs_in_flight=profile.number("cxfs.requests_in_flight_per_lun", integer=True, positive=True),
            rpc_size_bytes=profile.number("cxfs.request_bytes", integer=True, positive=True),
            max_dirty_bytes_per_osc=profile.number("cxfs.max_dirty_bytes_per_lun", integer=True, positive=True),
            rpc_latency_s=profile.number("cxfs.request_latency_s", positive=True),
            metadata_latency_s=metadata_latency,
            max_read_ahead_bytes=profile.number("cxfs.max_read_ahead_bytes", integer=True, positive=True),
        )
        visit = profile.number("lun.hdd.visit_bytes", positive=True)
        system = cls(
            **shared_fields(profile, client_count=len(partitions)),
            client=partitions[0],
            # CXFS tokens: a directory update revokes the lookup tokens other clients hold on it
            # (Shepard and Epe 2004, "token" protocol of the metadata server).
            metadata=metadata_spec(profile, "mds", lookup_callbacks=True),
            server=pair,
            server_count=pairs,
            targets_per_server=luns_per_pair,
            target=lun,
            controller=None,
            controller_count=1,
            controller_attached="shared",
            io=io,
            read_visit_bytes=visit,
            write_visit_bytes=visit,
            partitions=partitions,
            partition_names=tuple(names),
            partition_ports=ports,
            host_ports_per_pair=host_ports,
            volume=volume,
            nominal_port_Bps=nominal,
        )
        profile.string("system.filesystem", choices={"cxfs"})
        profile.check_all_read(ignore=("system.sources", "calibration"))
        return system

    # -- description --------------------------------------------------------------------
    def describe(self) -> str:
        t, lun = self.io, self.target
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
        ]
        for name, part, ports in zip(self.partition_names, self.partitions, self.partition_ports):
            lines.append(
                f"  client {name}: {part.cores} CPUs, {format_bytes(part.memory_bytes)} RAM, {part.network.name} = "
                f"{part.network.bandwidth_Bps / 1e9:.3g} GB/s of FC payload "
                f"(nominal {ports * self.nominal_port_Bps / 2**30:.3g} GiB/s)"
            )
        c = self.client
        lines += [
            f"  per CPU: copy {c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s write/read, "
            f"{c.call_overhead_s * 1e6:.3g} us per call",
            f"  fabric: blocking factor {self.fabric_blocking_factor:g}",
            f"  metadata server: {self.metadata.describe()}; {t.metadata_latency_s * 1e3:.3g} ms round trip",
            f"  RM660 pairs: {self.server_count} x ({self.server.network.name} host ports "
            f"{self.server.network.bandwidth_Bps / 1e9:.3g} GB/s, sustains {self.server.cpu_Bps / 1e9:.3g} GB/s); "
            f"all host ports nominal {self.server_count * self.host_ports_per_pair * self.nominal_port_Bps / 2**30:.3g} GiB/s",
            f"  volume {self.volume}: {self.target_count} LUNs ({self.targets_per_server} per pair) of "
            f"{lun.disk_count} {drive_name(lun.drive)} as {lun.level}, XVM stripe unit "
            f"{format_bytes(t.stripe_size_bytes)}",
            f"  requests: {t.max_rpcs_in_flight} x {format_bytes(t.rpc_size_bytes)} queued per LUN, "
            f"{t.rpc_latency_s * 1e3:.3g} ms round trip; readahead {format_bytes(t.max_read_ahead_bytes)}",
            f"  seek thrashing: visits {format_bytes(self.write_visit_bytes)} per drive",
        ]
        lines.append(self.mechanisms_line())
        clients = sum(p.network.bandwidth_Bps for p in self.partitions)
        ceiling = min(
            clients,
            self.server_count * min(self.server.network.bandwidth_Bps, self.server.cpu_Bps),
            self.target_count * lun.bandwidth_Bps("write"),
        )
        lines.append(f"  streaming ceiling with every partition: {ceiling / 1e9:.3g} GB/s")
        return "\n".join(lines)
