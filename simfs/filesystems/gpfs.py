"""IBM Spectrum Scale (GPFS): NSD servers, block-striped files, a client page pool, and
metadata done by the clients themselves under tokens.

GPFS is a shared-disk file system: every node sees every disk, here as Network Shared
Disks (NSDs) served over the network by NSD servers, and every file is striped block by
block over all the NSDs of its storage pool (Schmuck and Haskin, "GPFS: A Shared-Disk
File System for Large Computing Clusters", FAST 2002, sections 2-3; IBM Spectrum Scale
documentation, "Improved system performance" and "Block allocation map").  The model maps
it onto the core's parts (:class:`~simfs.filesystems.core.FileSystem`):

==============================  ===============================  ======================
GPFS                            model part                       profile section
==============================  ===============================  ======================
client node and its page pool   client (``ClientSpec``); the      ``[client]``,
                                pagepool is its dirty limit       ``[gpfs]``
NSD server                      server (``nsd-server``): NIC,     ``[nsd_server]``
                                CPU, ``nsdMaxWorkerThreads``
NSD: a GNR vdisk on a           target (``nsd``):                 ``[nsd]``,
declustered array, or a         ``DeclusteredArray`` or           ``[nsd.hdd]`` /
hardware RAID LUN               ``RaidSet``                       ``[nsd.ssd]``
storage controller (optional)   controller (``controller``)      ``[controller]``
token managers, metanodes,      metadata service (``gpfs-meta``)  ``[metadata]``
metadata NSDs
block-level striping            ``stripe_count`` = all NSDs,      ``[gpfs]``
                                ``stripe_size`` = block size,
                                ``stripe_offset`` = -1
==============================  ===============================  ======================

How each GPFS mechanism reaches the core, and why:

* **Blocks over all NSDs.**  "Large files in GPFS are divided into equal sized blocks,
  and consecutive blocks are placed on different disks in a round-robin fashion" (IBM,
  "Improved system performance"), over all the disks of the pool, from a start the
  allocator chooses.  So a file's layout spans every NSD (``stripe_count`` = NSD count)
  in block-sized stripes (``gpfs.block_size_bytes``: ``mmcrfs -B`` allows 64 KiB to
  16 MiB, powers of two; message 6027-1152), starting where the round-robin allocator
  is (``stripe_offset = -1``).  There is no per-file striping to set.
* **Requests are blocks.**  The client moves whole blocks to and from the NSD servers
  (``rpc_size_bytes`` = block size), ``gpfs.requests_in_flight_per_nsd`` at a time, each a
  round trip of ``gpfs.request_latency_s`` without queueing.  An NSD server serves them from
  ``nsd_server.worker_threads`` threads (``nsdMaxWorkerThreads``), each held
  ``nsd_server.request_service_s`` per request.
* **The page pool, not the page cache.**  GPFS caches data in its pinned ``pagepool``
  and bypasses the Linux page cache, so ``vm.dirty_ratio`` does not apply (a
  ``client.dirty_ratio`` is refused).  Write-behind is bounded by the node's page pool,
  shared by the writers on the node, however many NSDs a file touches: the client's
  dirty limit is the page pool, and the per-target limit (Lustre's per-OSC one) is the
  page pool too, so that it never binds first.  GPFS's further share for sequential
  buffers (``prefetchPct``) is not modelled separately.  Prefetch reads ahead as many blocks as
  ``gpfs.prefetch_threads`` (``prefetchThreads``) issue at once, within the page pool:
  the readahead budget is ``min(prefetch_threads x block, pagepool)`` per node.
* **Declustered RAID.**  An ESS vdisk spreads 8+2p (or 8+3p, 4+2p, 4+3p) tracks over all
  drives of its declustered array (``simfs.hardware.declustered``): it streams at
  ``drives x 8/10`` drive rates, a track is one block (its strip, ``block / 8``, is one
  drive's visit), and a partial-block write pays read-modify-write.
* **Metadata without a metadata server.**  A client creates, opens and removes files
  itself: it takes tokens from a token manager, the file's metanode (one node per open
  file, "the node that has had the file open for the longest continuous period"; IBM,
  "Metanode") merges inode updates, and the metadata is logged and written to the
  metadata NSDs.  The core's metadata service stands for that whole distributed path:
  ``[metadata]`` gives the file system's aggregate rates (all clients, own
  directories) and the rate of updates in one shared directory, whose directory-block
  tokens every creating node must hold in turn; ``gpfs.metadata_latency_s`` is one
  operation's round trip.
* **Byte-range tokens.**  A writer of a shared file holds a byte-range token from the
  file's token manager (``gpfs.token_managers`` manager nodes share the files; IBM,
  "Using multiple token servers"; one request is a round trip of
  ``gpfs.token_latency_s``).  It asks for the range of its write ("required") and from
  there to the end of the file ("desired", for sequential access), and the token server
  grants as much of the desired range as conflicts with no other node's tokens, with no
  cap and never below the write (Schmuck and Haskin, section 3.1: "the token server
  grants as large a sub-range of the desired range as possible").  Tokens are whole
  sectors (the paper: "byte-range token granularity can be no smaller than one sector"),
  4 KiB here.  A conflicting request revokes the holder's token from the request's start
  upwards, and the holder keeps the rest ("node A will relinquish only part of its byte
  range token"); it first writes back its dirty data in the part it gives up, at its real
  sizes (a partial block pays read-modify-write on the NSD).  In GPFS the requester revokes from the holder itself
  (US patent application 2003/0018606); the request-level model routes the revocation
  through the token server, the same number of one-way trips within one.
  ``lock_policy`` hands these rules to ``core/locking.py``.

Not modelled: the metanode's merging of inode updates as its own request (a writer of a
shared file sends its size and time updates to the file's metanode when it flushes; one
small message per flush, inside the token traffic's resolution), subblocks and small files in inodes, replication (``-m``/``-r``), storage
pools other than the one data pool, the GNR NVRAM log tip that absorbs small writes, and
the placement of the GPFS daemon on a node's reserved cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError
from simfs.filesystems.core.locking import LockPolicy
from simfs.filesystems.core.readers import (
    controller_spec,
    drive_name,
    hdd_spec,
    link_reader,
    metadata_spec,
    shared_fields,
    ssd_spec,
)
from simfs.filesystems.core.system import ClientIo, FileSystem
from simfs.hardware import ClientSpec, HddSpec, RaidSet, ServerSpec
from simfs.hardware.declustered import ERASURE_CODES, DeclusteredArray
from simfs.hardware.hdd import interleaved_stream_factor
from simfs.hardware.raid import PARITY_DISKS
from simfs.systems.profile import Profile
from simfs.units import format_bytes

#: A byte-range token's granularity: one (4 KiB, Advanced Format) sector.
SECTOR_BYTES = 4096

#: File system block sizes ``mmcrfs -B`` accepts: 64 KiB to 16 MiB, powers of two.
BLOCK_SIZES = tuple(65536 << k for k in range(9))


@dataclass(frozen=True)
class GpfsSystem(FileSystem):
    """An IBM Spectrum Scale installation; see the module docstring for how its parts map."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "nsd-server",
        "target": "nsd",
        "controller": "controller",
        "metadata": "gpfs-meta",
    }
    FILESYSTEM: ClassVar[str] = "gpfs"

    # Defaults only because the base class's last fields have them; from_profile sets all.
    block_size_bytes: int = 4_194_304
    pagepool_bytes: int = 1_073_741_824
    prefetch_threads: int = 72
    #: Token managers (manager nodes serving byte-range and other tokens) and one token
    #: request's round trip: the request-level locking model's servers (``lock_policy``).
    token_managers: int = 1
    token_latency_s: float = 1e-4

    def lock_policy(self) -> LockPolicy:
        """Byte-range tokens (module docstring): per file, whole sectors, grown upwards
        without a cap, from ``token_managers`` servers ``token_latency_s`` away."""
        return LockPolicy(
            "gpfs-byte-range",
            per_object=False,
            unit_bytes=SECTOR_BYTES,
            grow=True,
            downward=False,
            partial=True,
            own_locks_conflict=False,
            servers=self.token_managers,
            one_way_s=self.token_latency_s / 2,
        )

    # -- construction from a profile ----------------------------------------------------
    @classmethod
    def from_profile(cls, profile: Profile) -> GpfsSystem:
        origin = profile.origin
        link = link_reader(profile)
        if profile.has("client.dirty_ratio"):
            raise ProfileError(
                f"{origin}: client.dirty_ratio: GPFS bypasses the Linux page cache; "
                "its write-behind buffer is gpfs.pagepool_bytes"
            )
        block = profile.number("gpfs.block_size_bytes", integer=True, positive=True)
        if block not in BLOCK_SIZES:
            raise ProfileError(
                f"{origin}: gpfs.block_size_bytes: expected a power of two from 65536 (64 KiB) to 16777216 "
                f"(16 MiB), as mmcrfs -B allows, got {block}"
            )
        memory = profile.number("client.memory_bytes", positive=True)
        pagepool = profile.number("gpfs.pagepool_bytes", integer=True, positive=True)
        if pagepool < block:
            raise ProfileError(
                f"{origin}: gpfs.pagepool_bytes: {pagepool} is less than one block ({block}); "
                "write-behind and prefetch buffer whole blocks"
            )
        if pagepool >= memory:
            raise ProfileError(
                f"{origin}: gpfs.pagepool_bytes: the pinned page pool must be less than client.memory_bytes"
            )
        server_count = profile.number("nsd_server.count", integer=True, positive=True)
        nsds_per_server = profile.number("nsd.per_server", integer=True, positive=True)
        nsd_count = server_count * nsds_per_server
        try:
            client = ClientSpec(
                cores=profile.number("client.cores", integer=True, positive=True),
                memory_bytes=memory,
                network=link("client.network"),
                copy_write_Bps=profile.number("client.copy_write_Bps", positive=True),
                copy_read_Bps=profile.number("client.copy_read_Bps", positive=True),
                call_overhead_s=profile.number("client.call_overhead_s", 0.0, minimum=0),
                # The page pool is the node's whole write-behind buffer (module docstring).
                dirty_ratio=pagepool / memory,
            )
            server = ServerSpec(
                network=link("nsd_server.network"),
                cpu_Bps=profile.number("nsd_server.cpu_Bps", positive=True),
                threads=profile.number("nsd_server.worker_threads", integer=True, positive=True),
                rpc_service_s=profile.number("nsd_server.request_service_s", 0.0, minimum=0),
            )
            drive_kind = profile.string("nsd.drive", choices={"hdd", "ssd"})
            nsd = _nsd(profile, block, drive_kind)
            controller, controller_count, attached = controller_spec(profile)
        except ValueError as exc:  # a spec's own check, naming its field
            raise ProfileError(f"{origin}: {exc}") from None

        prefetch_threads = profile.number("gpfs.prefetch_threads", integer=True, positive=True)
        round_trip = 2 * client.network.latency_s
        latencies = {
            key: profile.number(f"gpfs.{key}", positive=True)
            for key in ("request_latency_s", "metadata_latency_s", "token_latency_s")
        }
        for key, value in latencies.items():
            if value < round_trip:
                raise ProfileError(
                    f"{origin}: gpfs.{key}: {value:g} s is less than a round trip over client.network ({round_trip:g} s)"
                )
        client_count = profile.number("client.count", integer=True, positive=True)
        token_managers = profile.number(
            "gpfs.token_managers", integer=True, positive=True, maximum=client_count + server_count
        )
        io = ClientIo(
            stripe_count=nsd_count,  # every file over every NSD of the pool
            stripe_size_bytes=block,
            stripe_offset=-1,  # round robin from where the allocator is
            max_rpcs_in_flight=profile.number("gpfs.requests_in_flight_per_nsd", integer=True, positive=True),
            rpc_size_bytes=block,
            # The page pool is not divided among NSDs: only the node's whole pool limits a writer.
            max_dirty_bytes_per_osc=pagepool,
            rpc_latency_s=latencies["request_latency_s"],
            metadata_latency_s=latencies["metadata_latency_s"],
            max_read_ahead_bytes=min(prefetch_threads * block, pagepool),
        )
        visit = block / nsd.data_disks  # one strip (GNR) or one chunk of a full-stripe block
        visits = {}
        if isinstance(nsd.drive, HddSpec):
            visit = profile.number("nsd.hdd.visit_bytes", visit, positive=True)
            visits = {"read_visit_bytes": visit, "write_visit_bytes": visit}
        system = cls(
            **shared_fields(profile),
            client=client,
            metadata=metadata_spec(profile, "metadata"),
            server=server,
            server_count=server_count,
            targets_per_server=nsds_per_server,
            target=nsd,
            controller=controller,
            controller_count=controller_count,
            controller_attached=attached,
            io=io,
            block_size_bytes=block,
            pagepool_bytes=pagepool,
            prefetch_threads=prefetch_threads,
            token_managers=token_managers,
            token_latency_s=latencies["token_latency_s"],
            **visits,
        )
        profile.string("system.filesystem", choices={"gpfs"})
        # The table of the drive kind not in use may stay (a what-if swaps nsd.drive).
        unused_drive = "nsd.ssd" if drive_kind == "hdd" else "nsd.hdd"
        profile.check_all_read(ignore=("system.sources", "calibration", unused_drive))
        return system

    # -- what the mapping implies ---------------------------------------------------------
    def streaming_ceiling_Bps(self) -> float:
        """Server-side streaming ceiling: the NSDs, the controllers and the NSD servers'
        links and CPUs, whichever carries least (drives at their streaming rate)."""
        nsds = self.target_count * min(self.target.bandwidth_Bps("write"), self.target.bandwidth_Bps("read"))
        servers = self.server_count * min(self.server.network.bandwidth_Bps, self.server.cpu_Bps)
        ceiling = min(nsds, servers)
        if self.controller is not None:
            ceiling = min(ceiling, self.controller_total * self.controller.bandwidth_Bps)
        return ceiling

    def thrashed_nsd_Bps(self) -> float:
        """All NSDs together when each drive serves many interleaved streams, one visit of
        ``write_visit_bytes`` per stream (``hdd_seek``); their streaming rate without it."""
        nsds = self.target_count * self.target.bandwidth_Bps("write")
        drive = self.target.drive
        if not (isinstance(drive, HddSpec) and self.mechanisms["hdd_seek"]):
            return nsds
        return nsds * interleaved_stream_factor(
            math.inf, drive.sustained_Bps, drive.positioning_s, self.write_visit_bytes
        )

    # -- description --------------------------------------------------------------------
    def describe(self) -> str:
        c, t, nsd, meta = self.client, self.io, self.target, self.metadata
        code = (
            f"{nsd.level} vdisk over a declustered array of {nsd.disk_count} {drive_name(nsd.drive)}"
            if isinstance(nsd, DeclusteredArray)
            else f"{nsd.level} LUN of {nsd.disk_count} {drive_name(nsd.drive)}"
        )
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.summary()}, "
            f"copy {c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s per core write/read)",
            f"  page pool: {format_bytes(self.pagepool_bytes)} per node (write-behind); prefetch "
            f"{self.prefetch_threads} threads x {format_bytes(self.block_size_bytes)} blocks = "
            f"{format_bytes(t.max_read_ahead_bytes)} read ahead per node",
            f"  fabric: blocking factor {self.fabric_blocking_factor:g}",
            f"  metadata (no metadata server; clients under tokens, logged to metadata NSDs): "
            f"{meta.describe()}; {t.metadata_latency_s * 1e6:.3g} us per operation",
            f"  byte-range tokens: {self.token_managers} token manager(s), {self.token_latency_s * 1e6:.3g} us "
            f"per token request; 4 KiB sectors, grown upwards without a cap",
            f"  NSD servers: {self.server_count} x ({self.server.network.summary()}, CPU {self.server.cpu_Bps / 1e9:.3g} GB/s, "
            f"{self.server.threads} NSD worker threads), {self.targets_per_server} NSD(s) each",
            f"  NSDs: {self.target_count} x {code} = {nsd.bandwidth_Bps('write') / 1e9:.3g}/"
            f"{nsd.bandwidth_Bps('read') / 1e9:.3g} GB/s write/read",
        ]
        if self.controller is not None:
            lines.append(
                f"  controllers: {self.controller_total} x {self.controller.bandwidth_Bps / 1e9:.3g} GB/s, "
                f"cache {format_bytes(self.controller.cache_bytes)} each"
            )
        lines.append(
            f"  striping: every file over all {t.stripe_count} NSDs in {format_bytes(t.stripe_size_bytes)} blocks, "
            f"round robin; {t.max_rpcs_in_flight} block request(s) in flight per NSD, "
            f"{t.rpc_latency_s * 1e3:.3g} ms round trip"
        )
        if isinstance(nsd.drive, HddSpec):
            lines.append(
                f"  seek thrashing: positioning {nsd.drive.positioning_s * 1e3:.3g} ms, "
                f"visits {format_bytes(self.write_visit_bytes)} per drive"
            )
        lines.append(self.mechanisms_line())
        ceiling = f"  server-side streaming ceiling: {self.streaming_ceiling_Bps() / 1e9:.4g} GB/s"
        thrashed = self.thrashed_nsd_Bps()
        if thrashed < self.streaming_ceiling_Bps():
            ceiling += f"; {thrashed / 1e9:.4g} GB/s when many streams thrash the drives"
        lines.append(ceiling)
        return "\n".join(lines)


def _nsd(profile: Profile, block: int, drive_kind: str) -> RaidSet:
    """``[nsd]``: a GNR vdisk (strips of a block over the code's data strips) or a
    hardware RAID LUN (its own chunk size)."""
    code = profile.string("nsd.raid", choices=set(ERASURE_CODES) | set(PARITY_DISKS))
    # A track's strips lie on distinct drives; a RAID set needs a data drive beyond its parity.
    least = sum(ERASURE_CODES[code]) if code in ERASURE_CODES else PARITY_DISKS[code] + 1
    drives = profile.number("nsd.drives", integer=True, minimum=least)
    drive = hdd_spec(profile, "nsd.hdd") if drive_kind == "hdd" else ssd_spec(profile, "nsd.ssd")
    if code in ERASURE_CODES:
        if profile.has("nsd.chunk_bytes"):
            raise ProfileError(
                f"{profile.origin}: nsd.chunk_bytes: a {code} vdisk's strip is the block over its data strips, not a field"
            )
        return DeclusteredArray(level=code, disk_count=drives, drive=drive, chunk_bytes=block // ERASURE_CODES[code][0])
    chunk = profile.number("nsd.chunk_bytes", 0, integer=True, minimum=0)
    return RaidSet(level=code, disk_count=drives, drive=drive, chunk_bytes=chunk)
