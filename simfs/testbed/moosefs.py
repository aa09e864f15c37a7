"""A MooseFS cluster on the testbed network: one master, chunkservers, FUSE clients.

The master (``mfsmaster``) is the metadata server; each chunkserver (``mfschunkserver``)
stores 64 MiB chunks in a folder on tmpfs, so its link, not a disk, is what limits it;
each client is an ``mfsmount`` (FUSE) in its own network namespace, mounted at
``<state>/mnt/<client>`` in this machine's mount namespace, where every process can use
it.  Debian bookworm's packages (MooseFS 3.0.117): ``moosefs-master``,
``moosefs-chunkserver``, ``moosefs-client``.

Settings chosen for measuring, each for a reason:

* ``mfscachemode=NO`` on every mount: a re-read must come over the network, not from the
  client's page cache (the runner measures the file system, not the cache).
* Trash time 0 on the root (``mfssettrashtime -r 0``): MooseFS otherwise keeps deleted
  files for a day, and a series of runs fills the chunkservers' tmpfs.
* The goal (copies of each chunk, ``mfssetgoal -r``) is the testbed's ``--goal``, 2 by
  default as in MooseFS; a chunk has at most as many copies as there are chunkservers.
* Every daemon binds its own testbed address; the master's three ports are MooseFS's
  defaults (9419-9421) on 198.18.0.1.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from simfs.errors import SimfsError
from simfs.testbed.network import TestbedNetwork, check_host_counts, numbered_hosts
from simfs.testbed.processes import Started, start, wait_until

PACKAGES = {
    "mfsmaster": "moosefs-master",
    "mfschunkserver": "moosefs-chunkserver",
    "mfsmount": "moosefs-client",
    "mfssettrashtime": "moosefs-client",
    "mfssetgoal": "moosefs-client",
}
EMPTY_METADATA = Path("/var/lib/mfs/metadata.mfs.empty")


def missing_packages() -> list[str]:
    """Debian packages whose commands are missing (in the order a user installs them)."""
    return sorted({package for command, package in PACKAGES.items() if shutil.which(command) is None})


@dataclass(frozen=True)
class MooseFsLayout:
    """Host names of the cluster: ``master``, ``cs1..csK``, ``c1..cC``."""

    servers: int
    clients: int

    def __post_init__(self) -> None:
        check_host_counts(self.servers, self.clients, "chunkservers")

    @property
    def chunkservers(self) -> list[str]:
        return numbered_hosts("cs", self.servers)

    @property
    def client_hosts(self) -> list[str]:
        return numbered_hosts("c", self.clients)

    @property
    def hosts(self) -> list[str]:
        return ["master", *self.chunkservers, *self.client_hosts]


def master_config(folder: Path, address: str) -> str:
    return "\n".join(
        [
            "WORKING_USER = root",
            "WORKING_GROUP = root",
            f"DATA_PATH = {folder}",
            f"EXPORTS_FILENAME = {folder / 'mfsexports.cfg'}",
            f"MATOML_LISTEN_HOST = {address}",
            f"MATOCS_LISTEN_HOST = {address}",
            f"MATOCL_LISTEN_HOST = {address}",
            # Leave the machine's scheduler and memory alone: the testbed is a guest.
            "NICE_LEVEL = 0",
            "LOCK_MEMORY = 0",
            "DISABLE_OOM_KILLER = 0",
            "",
        ]
    )


def chunkserver_config(folder: Path, master: str, address: str) -> str:
    return "\n".join(
        [
            "WORKING_USER = root",
            "WORKING_GROUP = root",
            f"DATA_PATH = {folder}",
            f"HDD_CONF_FILENAME = {folder / 'mfshdd.cfg'}",
            f"MASTER_HOST = {master}",
            f"BIND_HOST = {address}",
            f"CSSERV_LISTEN_HOST = {address}",
            "NICE_LEVEL = 0",
            "LOCK_MEMORY = 0",
            "",
        ]
    )


class Recorder(Protocol):
    """Where :func:`start_cluster` records what it starts, as it starts it."""

    def append(self, process: Started) -> None: ...
    def mount(self, point: Path) -> None: ...
    def __getitem__(self, index: int) -> Started: ...
    def __iter__(self) -> Iterator[Started]: ...


def start_cluster(
    network: TestbedNetwork, layout: MooseFsLayout, state: Path, storage: Path, record: Recorder
) -> list[Path]:
    """Start the master, the chunkservers and the mounts; record every process as soon
    as it starts and every mount point before its client starts (so a failure part-way
    can stop and unmount them); return the mount points."""
    master_address = network.address("master")
    folder = state / "master"
    folder.mkdir(parents=True)
    if not EMPTY_METADATA.exists():
        raise SimfsError(f"testbed: {EMPTY_METADATA} is missing (reinstall moosefs-master)")
    shutil.copyfile(EMPTY_METADATA, folder / "metadata.mfs")
    (folder / "mfsexports.cfg").write_text("* / rw,alldirs,maproot=0\n")
    (folder / "mfsmaster.cfg").write_text(master_config(folder, master_address))
    record.append(
        start(
            "master",
            network.enter("master") + ["mfsmaster", "-c", str(folder / "mfsmaster.cfg"), "-f", "start"],
            folder / "log",
        )
    )
    _wait_for(record[-1], "listen on", "the master")
    for host in layout.chunkservers:
        folder = state / host
        folder.mkdir()
        disk = storage / host
        disk.mkdir(parents=True)
        (folder / "mfshdd.cfg").write_text(f"{disk}\n")
        (folder / "mfschunkserver.cfg").write_text(chunkserver_config(folder, master_address, network.address(host)))
        record.append(
            start(
                host,
                network.enter(host) + ["mfschunkserver", "-c", str(folder / "mfschunkserver.cfg"), "-f", "start"],
                folder / "log",
            )
        )
    for started in [r for r in record if r.name in layout.chunkservers]:
        _wait_for(started, "connected to Master", f"chunkserver {started.name}")
    mounts = []
    for host in layout.client_hosts:
        mount = state / "mnt" / host
        mount.mkdir(parents=True)
        record.mount(mount)
        record.append(
            start(
                host,
                network.enter(host) + ["mfsmount", str(mount), "-f", "-H", master_address, "-o", "mfscachemode=NO"],
                state / f"{host}.log",
            )
        )
        wait_until(lambda mount=mount: mount.is_mount(), record[-1], f"the mount of client {host}")
        mounts.append(mount)
    # The chunkservers report their space to the master a moment after they connect;
    # until then the file system is 0 bytes and a writer would be refused.
    wait_until(lambda: _free_bytes(mounts[0]) > 0, record[0], "the chunkservers' space")
    return mounts


def _free_bytes(mount: Path) -> int:
    stats = os.statvfs(mount)
    return stats.f_bavail * stats.f_frsize


def _wait_for(started: Started, text: str, what: str) -> None:
    wait_until(lambda: text in Path(started.log).read_text(errors="replace"), started, what)
