"""A GlusterFS cluster on the testbed network: one brick server per host, FUSE clients.

Each server host runs its own ``glusterd`` (the management daemon), which starts the
host's brick process (``glusterfsd``, storing the brick in a folder on tmpfs, so its link,
not a disk, is what limits it) and, for a dispersed volume, a self-heal daemon; each
client is a ``glusterfs`` FUSE mount in its own network namespace, mounted at
``<state>/mnt/<client>`` in this machine's mount namespace.  The first server is where
the volume is defined and where clients fetch its description.  Debian bookworm's
packages (GlusterFS 10.3): ``glusterfs-server``, ``glusterfs-client``.

The volume is ``simfs``: distributed over every brick (files placed whole by hash of
their name), or dispersed (``disperse K+M``: every file erasure coded over K + M bricks,
K data fragments and M redundancy; a read needs K of them, a write sends all), one brick
per server, in groups of K + M servers where there are more.

Several ``glusterd`` on one machine, each in a namespace of its own, need their own
state (issue 18; found by trying): a working directory (its UUID, peers and volumes), a
run directory (brick PID files), a logging directory, a Unix socket for the ``gluster``
command (``glusterd-sockfile``, and ``--glusterd-sock`` on the command line) and a bind
address; with one of them shared, the second ``glusterd`` does not start, or a peer
probe waits on the wrong daemon.  Bricks and self-heal daemons put their sockets in
``/var/run/gluster`` whatever the options say: the testbed records the files that appear
under ``/var/run/gluster``, ``/var/log/glusterfs`` and ``/var/lib/glusterd`` while it
comes up and removes exactly those on the way down.

Settings chosen for measuring, each for a reason:

* ``--fopen-keep-cache=off`` on every mount, and the client-side ``io-cache`` and
  ``quick-read`` translators off: a re-read must come over the network, not from the
  client's memory (the runner measures the file system, not a cache).
* Every daemon binds its own testbed address (``transport.socket.bind-address``),
  ``glusterd`` its usual port 24007.

Left as GlusterFS sets it, and worth knowing: a dispersed volume's writer keeps its lock on
the file (``disperse.eager-lock``) until the file has seen no operation for a second
(``disperse.eager-lock-timeout``), and only then, or at an ``fsync``, does the file's new
size reach the bricks; another client that looks sooner sees the old size (found by the
test, which read an empty file about one time in fifteen).  IOR's ``-e`` (fsync at the end
of the write phase) makes a read phase on another client (``-C``) see the whole file.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from simfs.testbed.moosefs import Recorder
from simfs.testbed.network import TestbedNetwork, check_host_counts, namespace_pids, numbered_hosts, run_command
from simfs.testbed.processes import Started, start, start_ticks, wait_until

PACKAGES = {"glusterd": "glusterfs-server", "gluster": "glusterfs-server", "glusterfs": "glusterfs-client"}
VOLUME = "simfs"
#: Where GlusterFS's daemons write outside their configured folders (sockets, logs,
#: state); what appears there while the testbed comes up is the testbed's.
SYSTEM_FOLDERS = (Path("/var/run/gluster"), Path("/var/log/glusterfs"), Path("/var/lib/glusterd"))
DISPERSE = re.compile(r"^(\d+)\+(\d+)$")


def missing_packages() -> list[str]:
    """Debian packages whose commands are missing."""
    return sorted({package for command, package in PACKAGES.items() if shutil.which(command) is None})


def parse_disperse(text: str) -> tuple[int, int]:
    """``"K+M"`` as ``(K, M)``; a one-line error otherwise."""
    match = DISPERSE.match(text.strip())
    if not match:
        raise ValueError(f"disperse: expected K+M (data and redundancy bricks, e.g. 2+1), got {text!r}")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class GlusterFsLayout:
    """Host names of the cluster, ``gs1..gsK`` and ``c1..cC``, and the volume's shape:
    ``disperse`` (data, redundancy) bricks per group, or None for a distributed volume."""

    servers: int
    clients: int
    disperse: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        check_host_counts(self.servers, self.clients, "brick servers")
        if self.disperse is not None:
            data, redundancy = self.disperse
            width = data + redundancy
            # GlusterFS's own rule: fewer redundancy bricks than data bricks.
            if not (data >= 1 and 1 <= redundancy < data):
                raise ValueError(
                    f"disperse: expected K+M with 1 <= M < K (redundancy below data), got {data}+{redundancy}"
                )
            if self.servers % width:
                raise ValueError(
                    f"disperse: {data}+{redundancy} needs a multiple of {width} servers (one brick each), "
                    f"got {self.servers}"
                )

    @property
    def brick_servers(self) -> list[str]:
        return numbered_hosts("gs", self.servers)

    @property
    def client_hosts(self) -> list[str]:
        return numbered_hosts("c", self.clients)

    @property
    def hosts(self) -> list[str]:
        return [*self.brick_servers, *self.client_hosts]

    @property
    def volume_type(self) -> str:
        if self.disperse is None:
            return "distribute"
        return f"disperse {self.disperse[0]}+{self.disperse[1]}"


def glusterd_volfile(folder: Path, address: str) -> str:
    """The management daemon's configuration: all its state under ``folder``."""
    return "\n".join(
        [
            "volume management",
            "    type mgmt/glusterd",
            f"    option working-directory {folder / 'lib'}",
            f"    option run-directory {folder / 'run'}",
            f"    option logging-directory {folder / 'log'}",
            f"    option glusterd-sockfile {folder / 'glusterd.socket'}",
            "    option transport-type socket",
            f"    option transport.socket.bind-address {address}",
            "    option transport.socket.listen-port 24007",
            "    option transport.socket.keepalive-time 10",
            "    option transport.socket.keepalive-interval 2",
            "    option transport.socket.read-fail-log off",
            "    option ping-timeout 0",
            "    option event-threads 1",
            "end-volume",
            "",
        ]
    )


def system_files() -> set[str]:
    """Every path under :data:`SYSTEM_FOLDERS` now."""
    found = set()
    for folder in SYSTEM_FOLDERS:
        if folder.exists():
            found.update(str(path) for path in folder.rglob("*"))
    return found


def start_cluster(
    network: TestbedNetwork, layout: GlusterFsLayout, state: Path, storage: Path, record: Recorder
) -> list[Path]:
    """Start a ``glusterd`` per server, join them, create and start the volume, record
    its brick and self-heal processes, and mount it on every client; record every
    process as soon as it runs and every mount point before its client starts; return
    the mount points."""
    for host in layout.brick_servers:
        folder = state / host
        for part in ("lib", "run", "log"):
            (folder / part).mkdir(parents=True)
        (folder / "glusterd.vol").write_text(glusterd_volfile(folder, network.address(host)))
        argv = ["glusterd", "-N", "-f", str(folder / "glusterd.vol"), "-l", str(folder / "log" / "glusterd.log")]
        record.append(start(host, network.enter(host) + argv, folder / "glusterd.out"))
        socket = folder / "glusterd.socket"
        wait_until(socket.exists, record[-1], f"glusterd on {host}")
    first = layout.brick_servers[0]

    def gluster(*words: str) -> str:
        socket, log = state / first / "glusterd.socket", state / "gluster-cli.log"
        argv = ["gluster", "--mode=script", f"--glusterd-sock={socket}", f"--log-file={log}", *words]
        return run_command(network.enter(first) + argv)

    for host in layout.brick_servers[1:]:
        gluster("peer", "probe", network.address(host))
    wait_until(
        lambda: gluster("pool", "list").count("Connected") == layout.servers,
        record[0],
        "the brick servers joining one pool",
    )
    bricks = []
    for host in layout.brick_servers:
        folder = storage / host
        folder.mkdir(parents=True)
        bricks.append(f"{network.address(host)}:{folder / 'brick'}")
    shape = (
        []
        if layout.disperse is None
        else ["disperse", str(sum(layout.disperse)), "redundancy", str(layout.disperse[1])]
    )
    # force: the bricks are folders of one file system (tmpfs), which gluster asks to confirm.
    gluster("volume", "create", VOLUME, *shape, "transport", "tcp", *bricks, "force")
    for option in ("performance.io-cache", "performance.quick-read"):
        gluster("volume", "set", VOLUME, option, "off")
    gluster("volume", "start", VOLUME)
    _record_spawned(network, layout, state, record)
    address = network.address(first)
    mounts = []
    for host in layout.client_hosts:
        mount = state / "mnt" / host
        mount.mkdir(parents=True)
        record.mount(mount)
        argv = [
            "glusterfs",
            "-N",
            f"--volfile-server={address}",
            f"--volfile-id={VOLUME}",
            "--fopen-keep-cache=off",
            "-l",
            str(state / f"{host}.log"),
            str(mount),
        ]
        record.append(start(host, network.enter(host) + argv, state / f"{host}.out"))
        wait_until(lambda mount=mount: mount.is_mount(), record[-1], f"the mount of client {host}")
        mounts.append(mount)
    return mounts


def _record_spawned(network: TestbedNetwork, layout: GlusterFsLayout, state: Path, record: Recorder) -> None:
    """The processes each ``glusterd`` started (its brick, a self-heal daemon), found in
    the server's namespace and recorded as ``<host>.brick`` and ``<host>.shd``: they run
    in sessions of their own, so stopping ``glusterd`` does not stop them."""
    known = {started.pid for started in record}
    for host in layout.brick_servers:
        glusterd = next(started for started in record if started.name == host)
        # A brick always; a self-heal daemon for a dispersed volume (it heals fragments).
        for command in ("glusterfsd", "glusterfs") if layout.disperse is not None else ("glusterfsd",):
            wait_until(
                lambda host=host, command=command: bool(_running(network, host, command)),
                glusterd,
                f"{command} on {host}",
            )
        for command, role in (("glusterfsd", "brick"), ("glusterfs", "shd")):
            for pid in _running(network, host, command):
                ticks = start_ticks(pid)
                if pid in known or ticks is None:
                    continue
                known.add(pid)
                record.append(Started(f"{host}.{role}", pid, ticks, str(state / host / "log")))


def _running(network: TestbedNetwork, host: str, command: str) -> list[int]:
    """The processes of ``command`` in ``host``'s namespace."""
    pids = []
    for pid in namespace_pids(network.namespace(host)):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == command:
                pids.append(pid)
        except OSError:
            continue  # ended since it was listed
    return sorted(pids)


def version() -> str:
    completed = subprocess.run(["glusterd", "--version"], capture_output=True, text=True)
    lines = completed.stdout.strip().splitlines()
    return lines[0] if lines else completed.stderr.strip()
