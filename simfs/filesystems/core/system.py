"""The file-system-neutral description of an installation: what every model is built of.

A cluster file system, whatever its name, is assembled from the same concepts
(DESIGN.md section 3), and each is a part of :class:`FileSystem`:

=====================  ===========================================  =========================
concept                part                                         Lustre / PanFS / CXFS / GPFS
=====================  ===========================================  =========================
clients                ``client`` (:class:`~simfs.hardware.ClientSpec`,  compute nodes / Altix
                       per node: :meth:`FileSystem.client_of`)       partitions
networks               client link, server link, ``fabric_*``       IB, GbE, FC SAN
metadata service       ``metadata`` (:class:`MetadataSpec`)          MDS / DirectorBlade /
                                                                    CXFS MDS / token and
                                                                    metanode services
data servers           ``server`` x ``server_count``                OSS / shelf / RM660 pair /
                                                                    NSD server
targets                ``target`` (:class:`~simfs.hardware.RaidSet`)  OST / blade / LUN / NSD
                       x ``targets_per_server`` per server
controllers            ``controller`` (optional)                    DDN couplet / blade port /
                                                                    none
client I/O settings    ``io`` (:class:`ClientIo`)                    RPCs in flight, dirty
                                                                    limits, readahead
layout policy          ``io.stripe_*`` and the targets a file may   objects round robin /
                       use (``core/layout.py``)                     parity groups / volume
locking policy         :meth:`FileSystem.lock_policy`               extent locks / parity-stripe
                       (``core/locking.py``)                        locks / tokens
=====================  ===========================================  =========================

Each file-system model (``lustre``, ``panfs``, ``cxfs``, ``local``) is a peer
subclass of :class:`FileSystem` that reads its own profile sections into these parts and
says where it differs (how its targets are named, which senders answer a read at once,
which of its targets take new files).  No model subclasses another.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from simfs.errors import check_finite, check_whole
from simfs.filesystems.core.layout import Layout
from simfs.filesystems.core.locking import LockPolicy
from simfs.filesystems.core.variability import Variability
from simfs.hardware import ClientSpec, ControllerSpec, RaidSet, ServerSpec, SharedHost
from simfs.systems.profile import Profile
from simfs.workloads.spec import WorkloadSpec

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ClientIo:
    """How clients move data: layout defaults and the request settings of the client.

    Each model maps its own profile section onto these (Lustre ``[lustre]``, PanFS
    ``[panfs]``, CXFS ``[cxfs]``, GPFS ``[gpfs]``, a local file system fixed values).

    Attributes
    ----------
    stripe_count: default number of targets a file spans (-1: all).
    stripe_size_bytes: default bytes per target before the layout moves to the next.
    stripe_offset: -1 for the metadata service's own placement, or a fixed first target.
    max_rpcs_in_flight: requests a client keeps in flight per target.
    rpc_size_bytes: size of one bulk request (Lustre's max_pages_per_rpc x page size).
    max_dirty_bytes_per_osc: dirty page-cache bytes a client may hold per target.
    rpc_latency_s: round trip of one bulk request without queueing (network + server).
    metadata_latency_s: round trip of one metadata request without queueing, beyond the
        server's work on it (network and request handling at both ends).
    max_read_ahead_bytes: a client's readahead budget, shared by the files it reads.
    max_mod_rpcs_in_flight: modifying metadata requests (create, remove, close) one
        client node keeps in flight, whatever its processes do (Lustre clients before
        2.8 serialise them: one; ``mdc.*.max_mod_rpcs_in_flight`` after), and one close
        beyond them when no other is in flight; 0: no limit.
    max_metadata_rpcs_in_flight: other metadata requests (open, stat) per client node
        (Lustre ``mdc.*.max_rpcs_in_flight``, 8); 0: no limit.
    """

    stripe_count: int
    stripe_size_bytes: int
    stripe_offset: int
    max_rpcs_in_flight: int
    rpc_size_bytes: int
    max_dirty_bytes_per_osc: int
    rpc_latency_s: float
    metadata_latency_s: float
    max_read_ahead_bytes: int = 41_943_040
    max_mod_rpcs_in_flight: int = 0
    max_metadata_rpcs_in_flight: int = 0

    def __post_init__(self) -> None:
        if self.stripe_count != -1:
            check_whole("client io", "stripe_count", self.stripe_count, 1)
        check_whole("client io", "stripe_offset", self.stripe_offset, -1)
        for name in ("stripe_size_bytes", "max_rpcs_in_flight", "rpc_size_bytes", "max_read_ahead_bytes"):
            check_whole("client io", name, getattr(self, name), 1)
        for name in ("max_dirty_bytes_per_osc", "max_mod_rpcs_in_flight", "max_metadata_rpcs_in_flight"):
            check_whole("client io", name, getattr(self, name), 0)
        # A bulk request's round trip sets the rate of an RPC window: it cannot be zero.
        check_finite("client io", "rpc_latency_s", self.rpc_latency_s, 0, above=True)
        check_finite("client io", "metadata_latency_s", self.metadata_latency_s, 0)


#: How updates of one directory are serialised on the metadata server.
DIRECTORY_LOCKS = ("exclusive", "parallel", "operation")


#: A metadata service's rates per operation (requests per second, profile fields of its table).
METADATA_RATES = ("create_per_s", "open_per_s", "close_per_s", "stat_per_s", "remove_per_s", "dir_update_per_s")


@dataclass(frozen=True)
class MetadataSpec:
    """The metadata service: its capacity per operation, its threads and cores, and how it
    serialises directory updates (the request-level model is ``core/metadata.py``).

    Attributes
    ----------
    create_per_s, open_per_s, close_per_s, stat_per_s, remove_per_s:
        what the server sustains of each operation when nothing else limits it
        (operations/s); an operation costs ``cores / rate`` seconds of one core.
    dir_update_per_s:
        entry inserts and deletes per second in one directory under an ``exclusive``
        directory lock: each holds the lock ``1 / dir_update_per_s`` seconds.
    cores:
        CPU cores that serve metadata requests.
    request_parallelism:
        cores one request's work can use at once (1: one handler thread does it; more
        where several processes handle a request side by side, as a FUSE client, its
        daemon and the server on one machine): a lone request takes
        ``cores / rate / request_parallelism`` of the service's time.
    threads:
        service threads; a request holds one from arrival to reply, lock waits included.
    directory_lock:
        ``"exclusive"``: one update at a time per directory (ldiskfs before Lustre 2.2's
        parallel directory operations, "pdirops"; LU-50); ``"parallel"``: updates of
        one directory proceed in parallel (pdirops); ``"operation"``: an update holds
        the directory's lock for its whole service, from its grant to its reply
        (GlusterFS's ``ec`` translator locks the parent directory's inode on every brick
        of the subvolume around a create or unlink), so updates of one directory from
        any number of processes go one at a time, no faster than one lone update
        (``dir_update_per_s`` is not used).  A unique directory per
        process (mdtest ``-u``) never contends in any mode.
    callback_s:
        server CPU time per lock callback it sends (a blocking AST and the cancel it
        waits for).
    lock_handover_cpu_s:
        core seconds an ``"operation"`` lock costs each time it passes from one client
        node to another (GlusterFS: the holder writes the directory's version and dirty
        counters back and unlocks on every brick, the next client locks and reads them;
        a client that keeps the lock, as one process alone does, pays nothing: ``ec``'s
        eager lock).  Spent by the request that receives the lock, while it holds it.
    lookup_callbacks:
        whether a directory update revokes the lookup locks (tokens) that other clients
        cache on that directory, so that each update pays a callback per caching client
        and each of them a lookup before its next operation there (CXFS tokens; not
        Lustre 2.x, whose inodebits keep LOOKUP and UPDATE apart).
    """

    create_per_s: float
    open_per_s: float
    close_per_s: float
    stat_per_s: float
    remove_per_s: float
    dir_update_per_s: float
    cores: int = 1
    threads: int = 512
    directory_lock: str = "exclusive"
    request_parallelism: float = 1.0
    callback_s: float = 0.0
    lock_handover_cpu_s: float = 0.0
    lookup_callbacks: bool = False

    def __post_init__(self) -> None:
        for name in METADATA_RATES:
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: a metadata service needs a positive rate, got {getattr(self, name)!r}")
        if self.cores < 1:
            raise ValueError(f"cores: a metadata service needs at least one core, got {self.cores!r}")
        if self.threads < 1:
            raise ValueError(f"threads: a metadata service needs at least one thread, got {self.threads!r}")
        if not 1 <= self.request_parallelism <= self.cores:
            raise ValueError(
                f"request_parallelism: expected between 1 and cores ({self.cores}), got {self.request_parallelism!r}"
            )
        if self.directory_lock not in DIRECTORY_LOCKS:
            raise ValueError(
                f"directory_lock: expected one of {', '.join(DIRECTORY_LOCKS)}, got {self.directory_lock!r}"
            )
        if self.callback_s < 0:
            raise ValueError(f"callback_s: must be non-negative, got {self.callback_s!r}")
        if not self.lock_handover_cpu_s >= 0:
            raise ValueError(f"lock_handover_cpu_s: must be non-negative, got {self.lock_handover_cpu_s!r}")

    def describe(self) -> str:
        """What the service sustains of each operation and how it treats one directory,
        for ``simfs show`` (every file system's metadata line)."""
        rates = ", ".join(f"{op} {self.rate(op):g}/s" for op in ("create", "open", "close", "stat", "remove"))
        if self.directory_lock == "exclusive":
            rule = f"{self.dir_update_per_s:g} creates or removes/s in one directory"
        elif self.directory_lock == "parallel":
            rule = "creates and removes in one directory in parallel"
        else:
            rule = "each create or remove holds its directory's lock to its reply"
            if self.lock_handover_cpu_s:
                rule += f", {self.lock_handover_cpu_s * 1e3:.3g} ms of CPU when the lock passes between clients"
        return f"{rates}; {rule}"

    def with_cpu_scaled(self, factor: float) -> MetadataSpec:
        """The same service with every request's CPU time (and the lock's hand-over)
        ``factor`` times what it is here: each rate divided by ``factor``.  Locks and
        threads are unchanged (GlusterFS on a volume of another shape than the one its
        rates were measured on)."""
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"factor: expected a positive finite number, got {factor!r}")
        return dataclasses.replace(
            self,
            create_per_s=self.create_per_s / factor,
            open_per_s=self.open_per_s / factor,
            close_per_s=self.close_per_s / factor,
            stat_per_s=self.stat_per_s / factor,
            remove_per_s=self.remove_per_s / factor,
            lock_handover_cpu_s=self.lock_handover_cpu_s * factor,
        )

    def demand_s(self, op: str) -> float:
        """Core seconds one ``op`` costs the server."""
        return self.cores / self.rate(op)

    def rate(self, op: str) -> float:
        return {
            "create": self.create_per_s,
            "open": self.open_per_s,
            "close": self.close_per_s,
            "stat": self.stat_per_s,
            "remove": self.remove_per_s,
        }[op]


@dataclass(frozen=True)
class FileSystem:
    """The parts of a file-system installation, as every model describes them.

    Subclasses set :attr:`NAMES` and :attr:`FILESYSTEM`, read their profile in
    :meth:`from_profile` and explain themselves in :meth:`describe`; the hooks below
    (``client_of``, ``incast_senders``, ...) default to the plain object-storage answer.
    """

    #: What the model's parts are called in resource names and bottleneck columns.
    NAMES: ClassVar[dict[str, str]] = {
        "server": "server",
        "target": "target",
        "controller": "controller",
        "metadata": "metadata",
    }
    #: The file system's name in ``simfs show`` and errors.
    FILESYSTEM: ClassVar[str] = ""
    #: Whether a file may have more stripe objects than targets (Lustre 2.13+'s
    #: ``lfs setstripe -C``: several objects of one file on one OST).
    OVERSTRIPING: ClassVar[bool] = False
    #: Whether each new file's first target is a uniform draw among the usable ones (a
    #: hash of its name: GlusterFS's DHT; ``TargetAllocator.draw``) rather than the
    #: allocator's round robin.
    HASHED_PLACEMENT: ClassVar[bool] = False

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
    metadata: MetadataSpec
    server: ServerSpec
    server_count: int
    targets_per_server: int
    target: RaidSet
    controller: ControllerSpec | None
    controller_count: int
    controller_attached: str
    io: ClientIo
    origin: str
    mechanisms: dict[str, bool]
    #: Bytes one drive transfers per stream visit, for reads and for writes (seek thrashing).
    read_visit_bytes: float = 0.0
    write_visit_bytes: float = 0.0
    #: Clients come in groups of ``client_group_size`` nodes, each group reaching the
    #: servers over its own ``group_uplink_Bps`` (a Roadrunner compute unit's I/O nodes);
    #: 0: no groups.
    client_group_size: int = 0
    group_uplink_Bps: float = 0.0
    #: Seeded imbalance and variability (``core/variability.py``); none by default.
    variability: Variability = Variability()
    #: Targets with one failed drive (what-if), in ``target_state`` "degraded" or "rebuilding".
    failed_drive_targets: tuple[int, ...] = ()
    target_state: str = "degraded"
    rebuild_fraction: float = 0.3
    #: Bytes sent and stored per byte written: 1 where redundancy is inside the target;
    #: components / data components for a file system whose clients write parity (PanFS).
    write_redundancy: float = 1.0
    #: Copies of each written byte stored on consecutive servers, sent along a chain
    #: (MooseFS's goal): the client sends one copy to the first server, each server
    #: forwards it to the next; 1: no replication by the file system.
    chain_copies: int = 1
    #: The machine whose cores every daemon and client shares (the testbed); None: each
    #: has its own (``hardware/shared_host.py``).
    shared_host: SharedHost | None = None

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_profile(cls, profile: Profile) -> FileSystem:
        raise NotImplementedError(f"{cls.__name__} does not read profiles")

    def describe(self) -> str:
        """A human-readable summary of the assembled hardware (``simfs show``)."""
        raise NotImplementedError

    # -- the parts ------------------------------------------------------------------------
    def client_of(self, node: int) -> ClientSpec:
        """Client node ``node``'s hardware: all alike unless a model says otherwise."""
        return self.client

    @property
    def target_count(self) -> int:
        return self.server_count * self.targets_per_server

    def server_of_target(self, target: int) -> int:
        """Targets are numbered consecutively per server (OST0000, OST0001 on OSS 0, ...)."""
        return target // self.targets_per_server

    def controller_of_target(self, target: int) -> int:
        """Which controller serves ``target``.

        ``shared`` controllers (a SAN array such as a DDN couplet) take LUNs alternately
        (LUN i on controller i mod n); ``per-oss`` controllers are HBAs inside each server,
        ``controller_count`` of them per server, taking that server's targets alternately.
        """
        if self.controller_attached == "per-oss":
            server = self.server_of_target(target)
            return server * self.controller_count + (target % self.targets_per_server) % self.controller_count
        return target % self.controller_count

    @property
    def controller_total(self) -> int:
        if self.controller is None:
            return 0
        return self.controller_count * (self.server_count if self.controller_attached == "per-oss" else 1)

    def target_capacity_factor(self, target: int) -> float:
        """Capacity left to ``target`` in the what-if failure state (1 when healthy)."""
        if target not in self.failed_drive_targets:
            return 1.0
        return self.target.state_factor(self.target_state, self.rebuild_fraction)

    @property
    def excluded_targets(self) -> tuple[int, ...]:
        """Targets no new file may use (none unless a model says so: a failed PanFS blade)."""
        return ()

    def incast_senders(self, targets: list[int]) -> int:
        """How many senders answer one round of a read from ``targets`` at once (TCP
        incast): by default a server answers for all its targets."""
        return len({self.server_of_target(target) for target in targets})

    def data_placements(self, layout: Layout, stripe_share: np.ndarray, op: str) -> list[tuple[int, float]] | None:
        """(target, share of what the client sends) where it differs from the layout's
        objects (GlusterFS writes a dispersed file's redundancy to bricks its reads never
        ask); None: the layout's own placement."""
        return None

    def cached_read(self, total_bytes: float, direct: bool) -> bool:
        """Whether a read of data written in the same run comes from the page cache: not
        on a cluster file system, whose clients drop the pages of a file another client
        opens (and the seeds' files outsize memory); a local file system keeps them."""
        return False

    def check_workload(self, workload: WorkloadSpec) -> None:
        """Refuse a workload this file system cannot run (none by default)."""

    def shape_layout(self, layout: Layout) -> Layout:
        """The layout of a new file over the targets the allocator chose (as chosen,
        unless the file system groups them: PanFS)."""
        return layout

    @property
    def stored_copies(self) -> int:
        """Copies of each written byte the servers store: ``chain_copies``, at most one
        per server."""
        return min(self.chain_copies, self.server_count)

    def allocation_advance(self) -> int | None:
        """How many targets the allocator moves on after a new file (None: past the
        file's targets, Lustre's round robin); MooseFS moves on by one chunk's copies."""
        return None

    def lock_policy(self) -> LockPolicy | None:
        """What writers of a shared file lock, and how grants grow (``core/locking.py``);
        None where one client is all there is (a local file system)."""
        return None

    def collective_aggregators(self, nodes: int, stripe_count: int) -> int:
        """MPI-IO collective buffering's aggregators for a file: ROMIO's default, one per
        node (``cb_nodes``)."""
        return nodes

    @property
    def client_parity_width(self) -> int:
        """Components per parity stripe where clients compute parity (PanFS); else 0."""
        return 0

    # -- description ----------------------------------------------------------------------
    def mechanisms_line(self) -> str:
        """The ``describe`` line naming the mechanisms switched off."""
        off = [name for name, on in self.mechanisms.items() if not on]
        return f"  mechanisms off: {', '.join(off)}" if off else "  mechanisms: all on"
