"""A local file system on one machine: the target of the live runner's own validation.

``simfs measure`` runs on a real directory; to check the simulator against those runs on
the machine at hand, this model describes that machine with the same core parts as the
cluster file systems (:class:`~simfs.filesystems.core.FileSystem`):

==========================  ==================================  ======================
the machine                 model part                          profile section
==========================  ==================================  ======================
its cores and page cache    the one client node (copy rates,    ``[machine]``
                            per-call time, dirty limit)
the block layer             the one server (``block-layer``):
                            no network, no CPU limit of its own
the device (or tmpfs pages)  the one target (``device``)         ``[device]``
the local file system's     the metadata service (``fs-meta``)   ``[fs]``
namespace operations
==========================  ==================================  ======================

What differs from a cluster file system, and why:

* **No network.**  Client and server are the same kernel: the link between them is a
  pass-through (``local``), so only the cores, the page cache and the device bind.
* **Written pages stay cached.**  A buffered read of data written in the same run comes
  from the page cache when the run's data fit in half the RAM (an estimate of the page
  cache a benchmark gets).  A Lustre client drops the pages of a file another client
  opens, and the seeds' files outsize memory; a local file system keeps them.
* **tmpfs has no device.**  With ``device.kind = "tmpfs"`` the pages are the storage:
  every read is a page-cache read, every write a copy, and nothing is written back.
  O_DIRECT on tmpfs fails (``EINVAL``) in the runner, so the model refuses it too.
* **O_DIRECT** is one request in flight per process: each transfer costs the device's
  round trip (``device.request_latency_s``) plus its own transfer at the device's rate
  (``FileSystemInstance.lone_request_Bps``), and the device's bandwidth is shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfs.errors import ProfileError, WorkloadError
from simfs.filesystems.core.readers import core_fields, metadata_spec, shared_fields
from simfs.filesystems.core.system import ClientIo, FileSystem
from simfs.hardware import ClientSpec, LinkSpec, RaidSet, ServerSpec
from simfs.hardware.ssd import TMPFS_PAGES, SsdSpec
from simfs.systems.profile import Profile
from simfs.units import format_bytes
from simfs.workloads.spec import WorkloadSpec

#: The kernel-internal "link" between page cache and block layer: never the bottleneck.
LOCAL_LINK = LinkSpec("local", 1e15, 0.0, "no network: client and block layer are one kernel")
#: Half the RAM as the page cache a benchmark gets (estimate; see the module docstring).
CACHEABLE_FRACTION = 0.5


@dataclass(frozen=True)
class LocalSystem(FileSystem):
    """One machine's local file system; see the module docstring."""

    NAMES: ClassVar[dict[str, str]] = {
        "server": "block-layer",
        "target": "device",
        "controller": "controller",
        "metadata": "fs-meta",
    }
    FILESYSTEM: ClassVar[str] = "local"

    device_kind: str = "ssd"
    fs_type: str = ""

    @property
    def pages_are_storage(self) -> bool:
        return self.device_kind == "tmpfs"

    def cached_read(self, total_bytes: float, direct: bool) -> bool:
        """Whether a read of ``total_bytes`` written in this run comes from the page cache."""
        if direct:
            return False
        return self.pages_are_storage or total_bytes <= CACHEABLE_FRACTION * self.client.memory_bytes

    def check_workload(self, workload: WorkloadSpec) -> None:
        if self.pages_are_storage and any(phase.direct for phase in workload.phases):
            raise WorkloadError(f"{workload.tool}: O_DIRECT: {self.fs_type} has no device to do direct I/O to (EINVAL)")

    @classmethod
    def from_profile(cls, profile: Profile) -> LocalSystem:
        if profile.has("fabric"):
            # shared_fields reads [fabric] with defaults; a value given here would be read
            # and silently do nothing.
            raise ProfileError(f"{profile.origin}: fabric: a local file system has no network fabric; remove [fabric]")
        kind = profile.string("device.kind", choices={"tmpfs", "ssd"})
        try:
            machine = ClientSpec(
                cores=profile.number("machine.cores", integer=True, positive=True),
                memory_bytes=profile.number("machine.memory_bytes", positive=True),
                network=LOCAL_LINK,
                **core_fields(profile, "machine"),
            )
            if kind == "tmpfs":
                drive = TMPFS_PAGES
                latency = 1e-9  # unused: O_DIRECT is refused on tmpfs
            else:
                drive = SsdSpec(
                    read_Bps=profile.number("device.read_Bps", positive=True),
                    write_Bps=profile.number("device.write_Bps", positive=True),
                )
                latency = profile.number("device.request_latency_s", positive=True)
            device = RaidSet(level="raid0", disk_count=1, drive=drive)
        except ValueError as exc:
            raise ProfileError(f"{profile.origin}: {exc}") from None
        io = ClientIo(
            stripe_count=1,
            stripe_size_bytes=1 << 20,
            stripe_offset=0,
            max_rpcs_in_flight=1,
            rpc_size_bytes=1 << 20,
            max_dirty_bytes_per_osc=int(machine.memory_bytes),  # the kernel's dirty limit binds
            rpc_latency_s=latency,
            metadata_latency_s=profile.number("fs.call_latency_s", positive=True),
            max_read_ahead_bytes=1 << 30,
        )
        system = cls(
            **shared_fields(profile, client_count=1),
            client=machine,
            metadata=metadata_spec(profile, "fs"),
            server=ServerSpec(network=LOCAL_LINK, cpu_Bps=1e15),
            server_count=1,
            targets_per_server=1,
            target=device,
            controller=None,
            controller_count=1,
            controller_attached="shared",
            io=io,
            device_kind=kind,
            fs_type=profile.string("fs.type"),
        )
        for name in ("rpc_window", "readahead_window", "tcp_incast"):
            if system.mechanisms[name]:
                raise ProfileError(
                    f"{profile.origin}: mechanisms.{name}: a local file system has no RPCs or network; set it false"
                )
        profile.string("system.filesystem", choices={"local"})
        profile.check_all_read(ignore=("system.sources", "calibration", "machine.recorded"))
        return system

    def describe(self) -> str:
        c, fs = self.client, self.metadata
        lines = [
            f"{self.name}: {self.description}",
            f"  profile: {self.origin}",
            f"  machine: {c.cores} cores, {format_bytes(c.memory_bytes)} RAM; per core copy "
            f"{c.copy_write_Bps / 1e9:.3g}/{c.copy_read_Bps / 1e9:.3g} GB/s write/read, "
            f"{c.call_overhead_s * 1e6:.3g} us per call; dirty ratio {c.dirty_ratio:g}",
        ]
        if self.pages_are_storage:
            lines.append(f"  device: none ({self.fs_type}: the page cache is the storage)")
        else:
            drive = self.target.drive
            lines.append(
                f"  device: {drive.write_Bps / 1e9:.3g}/{drive.read_Bps / 1e9:.3g} GB/s write/read, "
                f"{self.io.rpc_latency_s * 1e6:.3g} us per O_DIRECT request; file system {self.fs_type}"
            )
        lines.append(f"  metadata: {fs.describe()}; {self.io.metadata_latency_s * 1e6:.3g} us per call")
        lines.append(self.mechanisms_line())
        return "\n".join(lines)
