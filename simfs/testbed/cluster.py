"""``simfs testbed``: bring a live cluster file system up on this machine, describe it,
take it down.

Everything the testbed makes is recorded in its state folder before or as it is made
(``testbed.json``: processes with their start times, mounts, folders; ``network.json``:
namespaces), so ``down`` removes exactly that, from any process, after a failure or a
Ctrl-C; a failed ``up`` takes down what it had made before it reports the error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from simfs.errors import SimfsError
from simfs.testbed import glusterfs, moosefs
from simfs.testbed.network import Link, TestbedNetwork, leftover_namespaces, missing_tools, run_command
from simfs.testbed.processes import Started, alive, stop

#: Where the testbed keeps its state unless told otherwise (one testbed per machine):
#: under /run, which only root can write, so nobody can plant a symlink or a record
#: there for a root process to follow.
DEFAULT_STATE = Path("/run/simfs-testbed")
#: Where chunkservers keep their chunks: tmpfs, so the links are the only throttle.
STORAGE = Path("/dev/shm")
PREFIX = "sfstb"
FILE_SYSTEMS = ("moosefs", "glusterfs")


@dataclass(frozen=True)
class TestbedSpec:
    """What ``simfs testbed up`` was asked for."""

    __test__ = False

    file_system: str
    servers: int
    clients: int
    link: Link
    #: Copies of each chunk (MooseFS's goal; None: MooseFS's default, 2; fewer servers
    #: store fewer).  GlusterFS has none.
    goal: int | None = None
    #: GlusterFS: (data, redundancy) bricks of a dispersed volume; None: distributed.
    disperse: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.file_system not in FILE_SYSTEMS:
            raise SimfsError(f"testbed: file system {self.file_system!r} is not one of {', '.join(FILE_SYSTEMS)}")
        if self.goal is not None:
            if self.file_system != "moosefs":
                raise SimfsError("testbed: --goal: MooseFS only (a GlusterFS volume's copies: --disperse)")
            if not (isinstance(self.goal, int) and 1 <= self.goal <= 9):
                raise SimfsError(f"testbed: --goal: expected 1 to 9 copies of each chunk, got {self.goal!r}")
        if self.disperse is not None and self.file_system != "glusterfs":
            raise SimfsError("testbed: --disperse: GlusterFS volumes only (MooseFS keeps --goal copies)")
        try:
            self.layout()
        except ValueError as error:
            raise SimfsError(f"testbed: --{error}") from None

    @property
    def chunk_copies(self) -> int | None:
        """MooseFS's goal as the testbed sets it; None for GlusterFS."""
        if self.file_system != "moosefs":
            return None
        return 2 if self.goal is None else self.goal

    def layout(self) -> moosefs.MooseFsLayout | glusterfs.GlusterFsLayout:
        """The hosts and daemons this testbed runs."""
        if self.file_system == "glusterfs":
            return glusterfs.GlusterFsLayout(self.servers, self.clients, self.disperse)
        return moosefs.MooseFsLayout(self.servers, self.clients)


def check_root() -> None:
    if os.geteuid() != 0:
        raise SimfsError("testbed: needs root (it creates network namespaces and FUSE mounts)")


def check_machine(file_system: str) -> None:
    """Refuse, in one line, on a machine where the testbed cannot run."""
    check_root()
    if not Path("/dev/fuse").exists():
        raise SimfsError("testbed: /dev/fuse is missing (the clients are FUSE mounts)")
    module = glusterfs if file_system == "glusterfs" else moosefs
    lacking = missing_tools() + [f"Debian package {p}" for p in module.missing_packages()]
    if lacking:
        raise SimfsError(f"testbed: missing {', '.join(lacking)} (apt-get install them; simfs installs nothing)")


class Testbed:
    """The testbed whose state lives in ``state`` (default :data:`DEFAULT_STATE`)."""

    __test__ = False

    def __init__(self, state: str | Path = DEFAULT_STATE, storage: str | Path = STORAGE) -> None:
        self._state = Path(state)
        self._storage = Path(storage)

    @property
    def record_path(self) -> Path:
        return self._state / "testbed.json"

    def is_up(self) -> bool:
        return self.record_path.exists() or (self._state / "network.json").exists()

    # -- up -------------------------------------------------------------------------------
    def up(self, spec: TestbedSpec) -> dict:
        """Start the network and the file system; return the description (as ``status``)."""
        check_machine(spec.file_system)
        if self.is_up() or leftover_namespaces(PREFIX):
            raise SimfsError("testbed: one is up already on this machine; take it down first: simfs testbed down")
        if self._state.exists():
            raise SimfsError(f"testbed: --state {self._state} exists; give a folder the testbed can make (and remove)")
        layout = spec.layout()
        network = TestbedNetwork(PREFIX, layout.hosts, spec.link, self._state)
        try:
            self._state.parent.mkdir(parents=True, exist_ok=True)
            self._state.mkdir(mode=0o700)
        except OSError as error:
            raise SimfsError(f"testbed: --state {self._state}: cannot make it ({error.strerror})") from None
        storage = self._storage / f"simfs-testbed-{os.getpid()}"
        gluster = spec.file_system == "glusterfs"
        record = {
            "file_system": spec.file_system,
            "version": glusterfs.version() if gluster else _version(),
            "servers": spec.servers,
            "clients": spec.clients,
            "goal": spec.chunk_copies,
            "volume": layout.volume_type if gluster else None,
            "link": {
                "rate_bits_per_s": spec.link.rate_bits_per_s,
                "port_buffer_bytes": spec.link.port_buffer_bytes,
                "mtu_bytes": spec.link.mtu_bytes,
            },
            "hosts": {host: network.address(host) for host in layout.hosts},
            "processes": [],
            "mounts": [],
            "uts": {},
            "folders": [str(storage)],
            "files": [],
        }
        self._write(record)
        started: list[Started] = []
        recording = _Recording(started, record, self)
        # GlusterFS's daemons also write where no option moves them: what appears there
        # while it comes up is the testbed's to remove (glusterfs.py).
        before = glusterfs.system_files() if gluster else set()
        try:
            network.up()
            self._host_names(layout.client_hosts, record)
            if gluster:
                try:
                    glusterfs.start_cluster(network, layout, self._state, storage, recording)
                finally:
                    record["files"] = sorted(glusterfs.system_files() - before)
                    self._write(record)
            else:
                mounts = moosefs.start_cluster(network, layout, self._state, storage, recording)
                # Deleted files go at once, not after a day in the trash (module docstring).
                first_client = network.enter(layout.client_hosts[0])
                run_command(first_client + ["mfssettrashtime", "-r", "0", str(mounts[0])])
                run_command(first_client + ["mfssetgoal", "-r", str(spec.chunk_copies), str(mounts[0])])
        except BaseException as error:
            try:
                self.down()
            except Exception as cleanup:  # noqa: BLE001 (reported with the first error, which wins)
                raise SimfsError(
                    f"{_one_line(error)}; and taking the testbed down failed: {_one_line(cleanup)}"
                ) from error
            if isinstance(error, Exception) and not isinstance(error, SimfsError):
                raise SimfsError(_one_line(error)) from error
            raise
        return self.status()

    def _host_names(self, clients: list[str], record: dict) -> None:
        """A UTS namespace per client, named after it, kept alive by a bind mount under
        the state folder (``unshare --uts=FILE``; ``down`` unmounts it with the rest): the
        ranks ``run`` places on a client run inside it, so each client is a host of its
        own to the runner and to MPI.  Recorded before it is made."""
        folder = self._state / "uts"
        folder.mkdir()
        for client in clients:
            path = folder / client
            path.touch()
            record["uts"][client] = str(path)
            self._write(record)
            run_command(["unshare", f"--uts={path}", "hostname", client])

    # -- status ---------------------------------------------------------------------------
    def status(self) -> dict:
        """The testbed's description, each process marked running or not."""
        if not self.record_path.exists():
            return {"up": False}
        record = json.loads(self.record_path.read_text())
        for process in record["processes"]:
            process["running"] = alive(Started.from_json(process))
        record["mounted"] = [mount for mount in record["mounts"] if Path(mount).is_mount()]
        record["up"] = True
        return record

    def counters(self):  # noqa: ANN201 (RunCounters, imported where used)
        """The TCP, switch and CPU counters now, to compare with at the end of a run."""
        from simfs.testbed.counters import RunCounters

        record = json.loads(self.record_path.read_text())
        daemons = {process["name"]: Started.from_json(process) for process in record["processes"]}
        return RunCounters(TestbedNetwork(PREFIX, list(record["hosts"]), Link(), self._state), daemons)

    # -- down -----------------------------------------------------------------------------
    def down(self) -> list[str]:
        """Unmount, stop every recorded process, remove the namespaces and folders; return
        what was done, one line each.  Safe to repeat; a no-op when nothing is up (a
        folder without the testbed's record is never touched)."""
        if not self.is_up():
            return []
        check_root()
        done: list[str] = []
        record = json.loads(self.record_path.read_text()) if self.record_path.exists() else None
        # Every FUSE mount under the state folder, dead ones included (a crashed client's
        # mount point answers ENOTCONN, and is_mount() says no).
        for mount in _mounts_under(self._state):
            run_command(["umount", "-l", mount])  # on failure the state stays: down can be repeated
            done.append(f"unmounted {mount}")
        if record is not None:
            processes = [Started.from_json(p) for p in record["processes"]]
            killed = stop(processes)
            done += [f"stopped {p.name} (pid {p.pid})" for p in processes]
            done += [f"killed {name} (it did not stop on SIGTERM)" for name in killed]
        removed = TestbedNetwork(PREFIX, ["down"], Link(), self._state).down()
        done += [f"removed namespace {name}" for name in removed]
        if record is not None:
            for folder in record["folders"]:
                shutil.rmtree(folder, ignore_errors=True)
                done.append(f"removed {folder}")
            # Files first, then the folders they were in, deepest first.
            for path in sorted(map(Path, record.get("files", [])), key=lambda p: (p.is_dir(), -len(p.parts))):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                done.append(f"removed {path}")
        # The state folder was made by up (it refuses an existing one): all of it is ours.
        shutil.rmtree(self._state)
        done.append(f"removed {self._state}")
        return done

    def _write(self, record: dict) -> None:
        partial = self.record_path.with_suffix(".json.partial")
        partial.write_text(json.dumps(record, indent=1))
        os.replace(partial, self.record_path)


class _Recording(list):
    """The list ``start_cluster`` appends processes to, writing the record at each one:
    a process is on disk before the next one starts."""

    def __init__(self, started: list[Started], record: dict, testbed: Testbed) -> None:
        super().__init__()
        self._started, self._record, self._testbed = started, record, testbed

    def append(self, process: Started) -> None:
        super().append(process)
        self._started.append(process)
        self._record["processes"].append(process.to_json())
        self._testbed._write(self._record)

    def mount(self, point: Path) -> None:
        """A mount point, recorded before its client starts."""
        self._record["mounts"].append(str(point))
        self._testbed._write(self._record)


def _mounts_under(folder: Path) -> list[str]:
    """Mount points at or below ``folder`` (``/proc/self/mountinfo``), deepest first."""
    root = str(folder.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == root or point.startswith(root + "/"):
            points.append(point)
    return sorted(points, key=len, reverse=True)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _version() -> str:
    completed = subprocess.run(["mfsmaster", "-v"], capture_output=True, text=True)
    return completed.stdout.strip() or completed.stderr.strip()
