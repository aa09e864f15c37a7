"""GlusterFS: bricks, no metadata server, distributed and dispersed (erasure-coded) volumes.

GlusterFS (10.3 as Debian bookworm packages it; the testbed's, ``simfs testbed up
glusterfs``) has no metadata server: a client's translator stack (``glusterfs`` FUSE)
finds a file by hashing its name over the volume's subvolumes (DHT) and moves its bytes to
and from the bricks (``glusterfsd``) directly.  The model maps these onto the core's parts
(:class:`~simfs.filesystems.core.FileSystem`):

=========================  ===============================  ==========================
GlusterFS                  model part                       profile section
=========================  ===============================  ==========================
``glusterfs`` FUSE client  client node                      ``[client]``
brick server               server (``brick``)               ``[brick]``
its brick folder           target (``brick-store``), one    ``[brick.store]``
                           per server
a subvolume's bricks       a file's layout                  ``[glusterfs]``
lookups and creates        metadata service (``dht``)       ``[dht]``
=========================  ===============================  ==========================

What differs from an object store such as Lustre, and why:

* **A file lives on one subvolume, chosen by a hash.**  DHT gives each subvolume a range
  of a 32-bit hash and puts a file on the subvolume whose range holds the hash of its
  name; files do not stripe over subvolumes ("Distribute", GlusterFS Administrator Guide,
  "Setting up GlusterFS Volumes").  The hash of a name is, for placement, a uniform
  random choice: the model draws each file's subvolume from the run's random stream
  (``HASHED_PLACEMENT``), so two files may share one, as they do on a real volume.
  A plain distributed volume is a dispersed one with one data brick and no redundancy:
  each subvolume is one brick.
* **Dispersed subvolumes encode on the client.**  A disperse ``K+M`` subvolume cuts each
  stripe of ``K x 512`` bytes into ``K`` fragments and adds ``M`` redundancy fragments,
  one fragment per brick ("Dispersed volumes", same guide; ``ec`` translator,
  ``EC_METHOD_CHUNK_SIZE`` 512).  A client writing ``B`` bytes sends and the bricks store
  ``B x (K+M)/K`` (``write_redundancy``), every brick of the subvolume taking ``B/K``.
* **Reads ask K bricks, always the same ones for a file.**  A read needs ``K`` fragments
  of each stripe; with ``disperse.read-policy`` at its default ``gfid-hash`` the ``K``
  are the bricks from a start chosen by a hash of the file's GFID, for every read of
  that file (``gluster volume set help``: "'gfid-hash' selects read subvolume based on
  hash of the gfid of that file").  The testbed's records show it: a 6+2 volume's reads
  came from six bricks, the other two sent nothing.  The model's layout of a file is
  those ``K`` bricks (``shape_layout``), so reads load them and writes load all ``K+M``
  (``data_placements``); several readers of files on one subvolume may all read from
  the same bricks, or from other ones, as their GFIDs fall.
* **A read's fragments arrive at once (incast).**  The ``K`` bricks answer each FUSE
  request at the same moment into the client's switch port: a round of
  ``glusterfs.request_bytes / K`` (``fragment_bytes``) from each.  A sequential reader's
  requests are the kernel's 128 KiB readahead windows whatever the application's
  ``read()`` size: on the testbed a 6+2 volume read through a 16 KiB port lost 9.2-9.5
  frames, 1.95-2.05 tail-loss probes and 0.06-0.10 RTOs per 128 KiB with reads of
  32 KiB, 64 KiB, 128 KiB and 1 MiB alike (``validation/testbed/runs/gluster-fanin-b16k/
  d6p2/``).  How the port's overflow is recovered from is ``hardware/loss_recovery.py``.
* **No locks between writers.**  The ``ec`` translator's eager lock orders one file's
  writes per subvolume, and ``write-behind`` gathers a client's small writes; writers of
  different files share bandwidth only.  The model has no lock policy for data.
* **Entry operations lock their directory.**  A create or unlink on a dispersed
  subvolume takes an inode lock on the parent directory on every brick of it first (the
  ``ec`` translator's ``ec_lock_prepare_parent_inode``) and gives it up after the
  operation, so processes creating files in one directory take turns, whatever their
  number: mdtest's creates on the testbed ran at 278-387 per second from 2 to 8
  processes (``[dht] directory_lock = "operation"``, ``core/metadata.py``).  Stats take
  no lock and scale until the cores bind.  ``ec`` keeps the lock after an operation
  (eager lock) until another client asks for it: one process alone locks once, while
  processes on several clients pass it at every create and unlink (the holder writes the
  directory's version back and unlocks, the next one locks and reads it).  That pass
  costs CPU time (``[dht] lock_handover_cpu_s``, fitted from two-process runs by
  ``testbed/metadata_cpu.py``), paid while the lock is held: removes from several
  clients ran at 355-552 a second in two recordings, where one process alone did
  766-1,215 (the calibration runs).
* **On one machine, CPU time goes by request.**  On the testbed every brick and client
  shares two cores (``[host]``, ``hardware/shared_host.py``).  A FUSE request of 128 KiB
  costs its client a fixed time, and one request to each brick it involves costs the
  client and that brick a time that hardly depends on the fragment's size; so a byte
  written costs a 6+2 volume more than twice what it costs a 2+1 one, a byte read 1.4
  times (:func:`host_cpu_s_per_byte`, fitted by ``testbed/gluster_cpu.py``).  A request
  costs more on a busy machine than on an idle one: from 1 to 8 clients on a 4+1 volume
  the CPU time per request grew by a third as the cores went from 17% to 88-97% busy
  (the clients' +18-63%, the bricks' +25-33%), with the bricks' involuntary context
  switches (preemptions) per request growing 2.7-6.3 fold; the costs are those of an idle
  machine, times ``1 + host.busy_cpu_growth`` where the host binds (every core busy).

Not modelled: self-heal, the read-modify-write of writes that do not cover whole
``K x 512`` stripes (write-behind makes IOR's sequential writes whole), the few per cent
a read rounds up to whole stripes, replicated (AFR) volumes, sharding.

A metadata request on a dispersed subvolume goes to every brick of it, and the FUSE
client's ``ec`` translator sends and answers one RPC per brick: so on a volume of ``K+M``
bricks the part of its CPU time that the clients and bricks spend (``[dht]
per_brick_cpu_fraction``, their share of the machine's busy time in the calibration runs)
is taken to grow as ``(K+M)`` over the bricks of the volume the rates were measured on
(``measured_bricks``), and so is the lock's hand-over; the rest of the machine's time
(kernel FUSE and TCP, the calling process, glusterd) is taken not to.  An assumption,
checked on a 4+2 volume (``validation/testbed/``: from 2+1 to 4+2 the bricks' time per
item grew 2.1-2.3 times, the clients' 1.6-1.75, the whole machine's 1.9-2.05).  Not
modelled: that a lone request's per-brick work spreads over more cores on a wider volume
(its parallelism is the measured volume's), and what a request costs on a distributed
volume (no ``ec`` translator; its ``[dht]`` rates stand as given).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

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
from simfs.hardware import RaidSet, ServerSpec, SharedHost
from simfs.hardware.ssd import TMPFS_PAGES
from simfs.systems.other_cpu import check_other_cpus
from simfs.systems.profile import Profile
from simfs.units import format_bytes

if TYPE_CHECKING:
    import numpy as np


#: Bytes of one fragment of a dispersed stripe (the ``ec`` translator's chunk size).
FRAGMENT_BYTES = 512
#: Bytes of one FUSE request: Linux's FUSE_DEFAULT_MAX_PAGES_PER_REQ, 32 pages (the
#: profile's ``glusterfs.request_bytes``).
FUSE_REQUEST_BYTES = 131072
#: The ``[host]`` fields, in the order of the fits.
HOST_COSTS = (
    "write_request_cpu_s",
    "read_request_cpu_s",
    "fragment_request_cpu_s",
    "brick_write_cpu_s",
    "brick_read_cpu_s",
    "wire_cpu_s_per_byte",
)


def host_cpu_s_per_byte(
    costs: Mapping[str, float], op: str, data: int, redundancy: int, request_bytes: int = FUSE_REQUEST_BYTES
) -> float:
    """Core-seconds a shared host spends per byte a client writes or reads on a disperse
    ``data+redundancy`` volume (``1+0``: distribute), from the ``[host]`` costs per
    request (fitted by ``testbed/gluster_cpu.py``): a request's own cost, one per brick
    it involves at the client and at the brick, and the kernel's per byte on the wire."""
    if op == "write":
        bricks = data + redundancy
        per_request = costs["write_request_cpu_s"] + bricks * (
            costs["fragment_request_cpu_s"] + costs["brick_write_cpu_s"]
        )
        return per_request / request_bytes + costs["wire_cpu_s_per_byte"] * bricks / data
    per_request = costs["read_request_cpu_s"] + data * (costs["fragment_request_cpu_s"] + costs["brick_read_cpu_s"])
    return per_request / request_bytes + costs["wire_cpu_s_per_byte"]


@dataclass(frozen=True)
class GlusterFsSystem(FileSystem):
    """A GlusterFS volume; see the module docstring for how its parts map."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "brick",
        "target": "brick-store",
        "controller": "controller",
        "metadata": "dht",
    }
    FILESYSTEM: ClassVar[str] = "glusterfs"
    #: What a ``[[host.other_cpu]]`` entry may set: the ``[host]`` fields it reads, the
    #: ``[dht]`` rates (CPU time per request on the shared cores) and the lone request's
    #: wait (``simfs/testbed/metadata_cpu.py``).
    OTHER_CPU_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "host": ("cores", *HOST_COSTS, "busy_cpu_growth"),
        "dht": ("request_parallelism", *METADATA_RATES, "lock_handover_cpu_s", "per_brick_cpu_fraction"),
        "glusterfs": ("metadata_latency_s",),
    }
    HASHED_PLACEMENT: ClassVar[bool] = True

    #: Data fragments (K) and redundancy fragments (M) of a subvolume; 1 and 0: distribute.
    disperse_data: int = 1
    redundancy: int = 0
    store_kind: str = "tmpfs"
    version: str = ""
    #: The bricks per request of the volume the ``[dht]`` rates were measured on, and what
    #: a metadata request's CPU time is on this volume relative to that one (1: as given).
    metadata_measured_bricks: int = 0
    metadata_cpu_scale: float = 1.0

    @property
    def subvolume_bricks(self) -> int:
        return self.disperse_data + self.redundancy

    @property
    def subvolume_count(self) -> int:
        return self.target_count // self.subvolume_bricks

    @property
    def volume_kind(self) -> str:
        if self.redundancy == 0 and self.disperse_data == 1:
            return f"distribute over {self.target_count} bricks"
        shape = f"disperse {self.disperse_data}+{self.redundancy}"
        return shape if self.subvolume_count == 1 else f"{self.subvolume_count} x {shape} (distributed)"

    def shape_layout(self, layout: Layout) -> Layout:
        """The ``K`` bricks a file's reads ask, from the one the placement drew: its
        subvolume, and the GFID-hash start within it."""
        drawn = layout.targets[0]
        width = self.subvolume_bricks
        subvolume, start = divmod(drawn, width)
        bricks = tuple(subvolume * width + (start + k) % width for k in range(self.disperse_data))
        return Layout(bricks, self.fragment_bytes)

    @property
    def fragment_bytes(self) -> int:
        """Bytes of one FUSE request that land on each data brick: the request's whole
        ``K x 512`` stripes, one 512-byte fragment of each per brick."""
        stripe = self.disperse_data * FRAGMENT_BYTES
        return -(-self.io.rpc_size_bytes // stripe) * FRAGMENT_BYTES

    def data_placements(self, layout: Layout, stripe_share: np.ndarray, op: str) -> list[tuple[int, float]] | None:
        """Writes go to every brick of the file's subvolume, ``1/(K+M)`` of what the
        client sends each; reads to the layout's ``K`` bricks (the core's default)."""
        if op != "write" or self.redundancy == 0:
            return None
        width = self.subvolume_bricks
        subvolume = layout.targets[0] // width
        return [(subvolume * width + k, 1.0 / width) for k in range(width)]

    @classmethod
    def from_profile(cls, profile: Profile) -> GlusterFsSystem:
        link = link_reader(profile)
        store_kind = profile.string("brick.store.kind", choices={"tmpfs"})
        try:
            client = client_spec(profile, link)
            server = ServerSpec(
                network=link("brick.network"),
                cpu_Bps=profile.number("brick.cpu_Bps", positive=True),
            )
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None
        bricks = profile.number("brick.count", integer=True, positive=True)
        data = profile.number("glusterfs.disperse_data", 1, integer=True, positive=True)
        redundancy = profile.number("glusterfs.redundancy", 0, integer=True, minimum=0)
        if redundancy and redundancy * 2 >= data + redundancy:
            # gluster volume create refuses it: redundancy must be below half the bricks.
            raise ProfileError(
                f"{profile.origin}: glusterfs.redundancy: {redundancy} must be less than half of "
                f"{data + redundancy} bricks (disperse {data}+{redundancy})"
            )
        if redundancy == 0 and data != 1:
            raise ProfileError(
                f"{profile.origin}: glusterfs.disperse_data: {data} data bricks need a redundancy of at least 1 "
                "(a distributed volume has disperse_data = 1, redundancy = 0)"
            )
        if bricks % (data + redundancy):
            raise ProfileError(
                f"{profile.origin}: brick.count: {bricks} bricks are not a whole number of disperse "
                f"{data}+{redundancy} subvolumes"
            )
        request = profile.number("glusterfs.request_bytes", FUSE_REQUEST_BYTES, integer=True, positive=True)
        busy_growth = profile.number("host.busy_cpu_growth", 0.0, minimum=0) if profile.has("host") else 0.0
        try:
            host = _shared_host(profile, data, redundancy, request, busy_growth)
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None
        in_flight = profile.number("glusterfs.requests_in_flight", integer=True, positive=True)
        io = ClientIo(
            stripe_count=1,  # the subvolume the hash draws; shape_layout widens it
            stripe_size_bytes=request,
            stripe_offset=-1,
            max_rpcs_in_flight=in_flight,
            rpc_size_bytes=request,
            max_dirty_bytes_per_osc=profile.number("glusterfs.write_behind_bytes", integer=True, positive=True),
            rpc_latency_s=profile.number("glusterfs.request_latency_s", positive=True),
            metadata_latency_s=profile.number("glusterfs.metadata_latency_s", positive=True),
            max_read_ahead_bytes=request * in_flight,
        )
        metadata = metadata_spec(profile, "dht")
        check_shared_cores(profile, metadata, host, "dht")
        measured_bricks, metadata_scale = _metadata_cpu_scale(profile, data, redundancy)
        metadata = metadata.with_cpu_scaled(metadata_scale)
        system = cls(
            **shared_fields(profile),
            client=client,
            metadata=metadata,
            server=server,
            server_count=bricks,
            **one_store_per_server(RaidSet(level="raid0", disk_count=1, drive=TMPFS_PAGES)),
            io=io,
            write_redundancy=(data + redundancy) / data,
            shared_host=host,
            disperse_data=data,
            redundancy=redundancy,
            store_kind=store_kind,
            version=profile.string("glusterfs.version", ""),
            metadata_measured_bricks=measured_bricks,
            metadata_cpu_scale=metadata_scale,
        )
        profile.string("system.filesystem", choices={"glusterfs"})
        check_other_cpus(profile, cls.OTHER_CPU_FIELDS, cls.from_profile)  # used by validate --live
        profile.check_all_read(ignore=("system.sources", "calibration", "host.recorded", "host.other_cpu"))
        return system

    # -- description --------------------------------------------------------------------
    def cpu_bound_lines(self) -> list[str]:
        """The lines of :meth:`describe` whose rates the machine's cores set (what a
        ``[[host.other_cpu]]`` entry changes)."""
        lines = []
        if self.shared_host is not None:
            host = self.shared_host
            lines.append(
                f"  shared host: {host.cores} cores for every brick and client; CPU per byte on this volume with "
                f"every core busy {host.cpu_s_per_byte('write') * 1e9:.3g} ns written, "
                f"{host.cpu_s_per_byte('read') * 1e9:.3g} ns read (per-request costs, [host], "
                f"{1 + host.busy_cpu_growth:.4g} x an idle machine's) = at most "
                f"{host.ceiling_Bps('write') / 1e6:.4g} MB/s written, "
                f"{host.ceiling_Bps('read') / 1e6:.4g} MB/s read"
            )
        scaled = (
            f" (CPU per request {self.metadata_cpu_scale:.3g} x the {self.metadata_measured_bricks}-brick "
            f"volume's it was measured on)"
            if self.metadata_cpu_scale != 1
            else ""
        )
        lines.append(
            f"  metadata on the bricks ([dht], {self.metadata.cores} cores){scaled}: {self.metadata.describe()}; "
            f"{self.io.metadata_latency_s * 1e3:.3g} ms round trip"
        )
        return lines

    def describe(self) -> str:
        c, t = self.client, self.io
        version = f" {self.version}" if self.version else ""
        data = self.disperse_data
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  GlusterFS{version}: {self.volume_kind}; each file on one subvolume drawn by the name's hash"
            + (
                f"; clients send {self.write_redundancy:.4g} x what they write, reads ask {data} of "
                f"{self.subvolume_bricks} bricks (GFID hash)"
                if self.redundancy
                else ""
            ),
            f"  clients: {self.client_count} x ({c.cores} cores, {format_bytes(c.memory_bytes)} RAM, "
            f"{c.network.name} {c.network.bandwidth_Bps / 1e6:.4g} MB/s); FUSE requests of "
            f"{format_bytes(t.rpc_size_bytes)}, {t.max_rpcs_in_flight} in flight, "
            f"{t.rpc_latency_s * 1e3:.3g} ms round trip; write-behind {format_bytes(t.max_dirty_bytes_per_osc)}",
            f"  bricks: {self.server_count} x ({self.server.network.name} "
            f"{self.server.network.bandwidth_Bps / 1e6:.4g} MB/s, store on {self.store_kind})",
            f"  switch port buffer {format_bytes(self.port_buffer_bytes)}, minimum RTO {self.rto_min_s * 1e3:.3g} ms",
        ]
        lines.extend(self.cpu_bound_lines())
        lines.append(self.mechanisms_line())
        return "\n".join(lines)


def _metadata_cpu_scale(profile: Profile, data: int, redundancy: int) -> tuple[int, float]:
    """The bricks per request of the volume ``[dht]`` was measured on, and a request's CPU
    time on this dispersed volume of ``data + redundancy`` bricks relative to it: the share
    ``per_brick_cpu_fraction`` of it (the FUSE client's ``ec`` translator and the bricks,
    one RPC per brick) grows with the bricks, the rest does not.  1 without the fraction,
    and on a distributed volume (no ``ec`` translator: what a request costs there is not
    measured, so its rates stand as given)."""
    share = profile.number("dht.per_brick_cpu_fraction", 0.0, minimum=0, maximum=1)
    if not share:
        return profile.number("dht.measured_bricks", data + redundancy, integer=True, positive=True), 1.0
    measured = profile.number("dht.measured_bricks", integer=True, positive=True)
    if not redundancy:
        return measured, 1.0
    return measured, 1 + share * (data + redundancy - measured) / measured


def _shared_host(
    profile: Profile, data: int, redundancy: int, request_bytes: int, busy_growth: float = 0.0
) -> SharedHost | None:
    """``[host]``: the testbed machine's cores and what a request costs them
    (:func:`host_cpu_s_per_byte`), as the cost of a byte on this volume's shape on an idle
    machine, and how much more it costs a busy one (``busy_growth``)."""
    if not profile.has("host"):
        return None
    costs = {name: profile.number(f"host.{name}", minimum=0) for name in HOST_COSTS}
    for op, what in (("write", "written"), ("read", "read")):
        if not host_cpu_s_per_byte(costs, op, data, redundancy, request_bytes) > 0:
            fields = [f"host.{name}" for name in HOST_COSTS if op in name or "fragment" in name or "wire" in name]
            raise ValueError(f"{', '.join(fields)}: all 0, so a byte {what} costs the host no CPU time")
    return SharedHost(
        cores=profile.number("host.cores", integer=True, positive=True),
        write_cpu_s_per_byte=host_cpu_s_per_byte(costs, "write", data, redundancy, request_bytes),
        read_cpu_s_per_byte=host_cpu_s_per_byte(costs, "read", data, redundancy, request_bytes),
        busy_cpu_growth=busy_growth,
    )
