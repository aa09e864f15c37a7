"""MooseFS: a master, chunkservers holding 64 MiB chunks, FUSE clients.

MooseFS (3.0.117 as Debian bookworm packages it; the testbed's, ``simfs testbed``) keeps
every file's metadata on one master (``mfsmaster``) and its data in chunks of at most
64 MiB on chunkservers (``mfschunkserver``); a client (``mfsmount``, FUSE) asks the master
where a chunk is and moves its bytes to or from a chunkserver directly, in 64 KiB blocks
(MooseFS 3.0 ``MFSBLOCKSIZE``; "MooseFS 3.0 User's Manual", section 1).  The model maps
these onto the core's parts (:class:`~simfs.filesystems.core.FileSystem`):

=========================  ===============================  ==========================
MooseFS                    model part                       profile section
=========================  ===============================  ==========================
``mfsmount`` client        client node                      ``[client]``
master                     metadata service (``master``)    ``[master]``
chunkserver                server (``chunkserver``)         ``[chunkserver]``
its storage folder         target (``chunk-store``), one    ``[chunkserver.store]``
                           per chunkserver
chunk (64 MiB)             a layout's stripe unit           ``[moosefs]``
goal (copies per chunk)    chained writes                   ``moosefs.goal``
one machine's cores        shared host CPU (testbed only)   ``[host]``
=========================  ===============================  ==========================

What differs from an object store such as Lustre, and why:

* **Chunks are placed one by one.**  A file's chunks go to chunkservers as they are
  created; the master takes, in turn, servers whose usage differs by less than
  ``ACCEPTABLE_PERCENTAGE_DIFFERENCE`` (all of them, when they are equal), so each new
  chunk's copies land on the next servers after the last new chunk's.  The model places
  chunk ``k`` of a file ``k x copies`` servers after the file's first
  (``shape_layout``) and starts each new file ``copies`` servers after the last
  (``allocation_advance``): files written at once, at one pace, then have the chunks
  they create at about the same time on distinct servers, as the master's turn gives.
* **Chained writes.**  With goal ``g`` a chunk has ``g`` copies on distinct
  chunkservers; the client sends each block to the first, which forwards it to the next
  (the chain of ``CSTOCS`` write connections).  The client's link carries one copy,
  the chunkservers' links ``g`` (``chain_copies``).  Reads are spread over the copies,
  as clients choose among them.
* **No locks between writers.**  MooseFS has no byte-range locking of data: concurrent
  writers of one chunk are ordered by the chunkserver (``chunk`` version bumps on the
  master).  The model has no lock policy: a shared file's writers share bandwidth only.
* **A shared machine.**  On the testbed every daemon and client is a process of one
  machine; ``[host]`` gives its cores and the CPU time each byte costs there
  (``hardware/shared_host.py``), so a run that the cores limit is predicted as such.
  Without ``[host]`` each daemon has its own machine.

Not modelled: chunk replication after a failure, storage classes and labels, the
master's metadata logger, the client's write cache as separate from the page cache
(its size is the dirty limit per chunkserver), and the master's CPU for bulk data (it
serves metadata only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError
from simfs.filesystems.core.layout import Layout
from simfs.filesystems.core.readers import (
    check_shared_cores,
    client_spec,
    link_reader,
    metadata_spec,
    one_store_per_server,
    shared_fields,
)
from simfs.filesystems.core.system import METADATA_RATES, ClientIo, FileSystem
from simfs.hardware import RaidSet, ServerSpec, SharedHost, SsdSpec
from simfs.hardware.ssd import TMPFS_PAGES
from simfs.systems.other_cpu import check_other_cpus
from simfs.systems.profile import Profile
from simfs.units import format_bytes

#: A chunk's largest size (MooseFS ``MFSCHUNKSIZE``: 64 MiB); fixed by the file system.
CHUNK_BYTES = 64 << 20
#: The block a client moves per request (``MFSBLOCKSIZE``: 64 KiB).
BLOCK_BYTES = 64 << 10


@dataclass(frozen=True)
class MooseFsSystem(FileSystem):
    """A MooseFS installation; see the module docstring for how its parts map."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "chunkserver",
        "target": "chunk-store",
        "controller": "controller",
        "metadata": "master",
    }
    FILESYSTEM: ClassVar[str] = "moosefs"
    #: What a ``[[host.other_cpu]]`` entry may set: the ``[host]`` fields it reads, the
    #: master's rates (its CPU time per request on the shared cores) and the lone
    #: request's wait (``simfs/testbed/metadata_cpu.py``).
    OTHER_CPU_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "host": ("cores", "write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte", "busy_cpu_growth"),
        "master": ("request_parallelism", *METADATA_RATES),
        "moosefs": ("metadata_latency_s",),
    }

    store_kind: str = "tmpfs"
    version: str = ""

    def shape_layout(self, layout: Layout) -> Layout:
        """Chunk ``k`` of a file on the ``k``-th server after the file's first, counting
        ``copies`` servers per chunk (its chained copies take the ones in between)."""
        first = layout.targets[0]
        count = self.target_count
        return Layout(tuple((first + k * self.stored_copies) % count for k in range(count)), layout.stripe_size_bytes)

    def allocation_advance(self) -> int:
        """The next file starts one chunk's copies on: files written at once then have
        their ``k``-th chunks, created at about the same time, on distinct servers, as
        the master gives each new chunk the next servers in turn."""
        return self.stored_copies % self.target_count

    @classmethod
    def from_profile(cls, profile: Profile) -> MooseFsSystem:
        link = link_reader(profile)
        store_kind = profile.string("chunkserver.store.kind", choices={"tmpfs", "ssd"})
        try:
            client = client_spec(profile, link)
            server = ServerSpec(
                network=link("chunkserver.network"),
                cpu_Bps=profile.number("chunkserver.cpu_Bps", positive=True),
            )
            if store_kind == "tmpfs":
                drive = TMPFS_PAGES
            else:
                drive = SsdSpec(
                    read_Bps=profile.number("chunkserver.store.read_Bps", positive=True),
                    write_Bps=profile.number("chunkserver.store.write_Bps", positive=True),
                )
            store = RaidSet(level="raid0", disk_count=1, drive=drive)
            host = None
            if profile.has("host"):
                host = SharedHost(
                    cores=profile.number("host.cores", integer=True, positive=True),
                    write_cpu_s_per_byte=profile.number("host.write_cpu_s_per_byte", positive=True),
                    read_cpu_s_per_byte=profile.number("host.read_cpu_s_per_byte", positive=True),
                    copy_cpu_s_per_byte=profile.number("host.copy_cpu_s_per_byte", 0.0, minimum=0),
                    busy_cpu_growth=profile.number("host.busy_cpu_growth", 0.0, minimum=0),
                )
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None
        servers = profile.number("chunkserver.count", integer=True, positive=True)
        goal = profile.number("moosefs.goal", 1, integer=True, positive=True, maximum=9)
        chunk = profile.number("moosefs.chunk_bytes", CHUNK_BYTES, integer=True, positive=True)
        if chunk != CHUNK_BYTES:
            raise ProfileError(
                f"{profile.origin}: moosefs.chunk_bytes: MooseFS chunks are {CHUNK_BYTES} bytes (64 MiB), got {chunk}"
            )
        metadata_network = link("master.network")
        metadata_latency = profile.number("moosefs.metadata_latency_s", positive=True)
        if metadata_latency < 2 * metadata_network.latency_s:
            raise ProfileError(
                f"{profile.origin}: moosefs.metadata_latency_s: {metadata_latency:g} s is less than a round trip "
                f"over master.network ({2 * metadata_network.latency_s:g} s)"
            )
        io = ClientIo(
            stripe_count=-1,  # chunk by chunk over every chunkserver (module docstring)
            stripe_size_bytes=chunk,
            stripe_offset=-1,
            max_rpcs_in_flight=profile.number("moosefs.blocks_in_flight", integer=True, positive=True),
            rpc_size_bytes=BLOCK_BYTES,
            max_dirty_bytes_per_osc=profile.number("moosefs.write_cache_bytes", integer=True, positive=True),
            rpc_latency_s=profile.number("moosefs.block_latency_s", positive=True),
            metadata_latency_s=metadata_latency,
            max_read_ahead_bytes=profile.number("moosefs.read_ahead_bytes", integer=True, positive=True),
        )
        metadata = metadata_spec(profile, "master")
        check_shared_cores(profile, metadata, host, "master")
        system = cls(
            **shared_fields(profile),
            client=client,
            metadata=metadata,
            server=server,
            server_count=servers,
            **one_store_per_server(store),
            io=io,
            chain_copies=goal,
            shared_host=host,
            store_kind=store_kind,
            version=profile.string("moosefs.version", ""),
        )
        profile.string("system.filesystem", choices={"moosefs"})
        check_other_cpus(profile, cls.OTHER_CPU_FIELDS, cls.from_profile)  # used by validate --live
        profile.check_all_read(ignore=("system.sources", "calibration", "host.recorded", "host.other_cpu"))
        return system

    # -- description --------------------------------------------------------------------
    def cpu_bound_lines(self) -> list[str]:
        """The lines of :meth:`describe` whose rates the machine's cores set (what a
        ``[[host.other_cpu]]`` entry changes)."""
        return [self._master_line(), *([self._shared_host_line()] if self.shared_host is not None else [])]

    def _master_line(self) -> str:
        md, t = self.metadata, self.io
        return (
            f"  master: {md.describe()}; on {md.cores} core(s), a request using up to "
            f"{md.request_parallelism:.3g} at once; {t.metadata_latency_s * 1e3:.3g} ms round trip"
        )

    def _shared_host_line(self) -> str:
        host, copies = self.shared_host, self.stored_copies
        return (
            f"  shared host: {host.cores} cores for every daemon and client; CPU per byte "
            f"{host.write_cpu_s_per_byte * 1e9:.3g} ns written, {host.copy_cpu_s_per_byte * 1e9:.3g} ns per "
            f"chained copy, {host.read_cpu_s_per_byte * 1e9:.3g} ns read"
            + (
                f" (an idle machine's; {1 + host.busy_cpu_growth:.4g} x with every core busy)"
                if host.busy_cpu_growth
                else ""
            )
            + " = at most "
            f"{host.ceiling_Bps('write', copies) / 1e6:.4g} MB/s written, {host.ceiling_Bps('read') / 1e6:.4g} MB/s read"
        )

    def describe(self) -> str:
        c, t = self.client, self.io
        version = f" {self.version}" if self.version else ""
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  MooseFS{version}: chunks of {format_bytes(t.stripe_size_bytes)} placed one by one over every "
            f"chunkserver, goal {self.chain_copies} (chained writes), blocks of {format_bytes(t.rpc_size_bytes)}",
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.name} {c.network.bandwidth_Bps / 1e6:.4g} MB/s); FUSE copy per core "
            f"{c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s write/read, "
            f"{c.call_overhead_s * 1e6:.3g} us per call",
            self._master_line(),
            f"  chunkservers: {self.server_count} x ({self.server.network.name} "
            f"{self.server.network.bandwidth_Bps / 1e6:.4g} MB/s, store on {self.store_kind})",
            f"  client I/O: {t.max_rpcs_in_flight} blocks in flight per chunkserver, "
            f"{t.rpc_latency_s * 1e3:.3g} ms per block round trip; write cache "
            f"{format_bytes(t.max_dirty_bytes_per_osc)} per chunkserver, readahead {format_bytes(t.max_read_ahead_bytes)}",
        ]
        if self.shared_host is not None:
            lines.append(self._shared_host_line())
        lines.append(self.mechanisms_line())
        clients = self.client_count * c.network.bandwidth_Bps
        servers = self.server_count * self.server.network.bandwidth_Bps
        lines.append(
            f"  link ceiling with every client: {min(clients, servers) / 1e6:.4g} MB/s read, "
            f"{min(clients, servers / self.stored_copies) / 1e6:.4g} MB/s written"
        )
        return "\n".join(lines)
