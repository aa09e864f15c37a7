"""The testbed's network: a switch and its hosts, each in a network namespace of its own.

One namespace holds the switch, a Linux bridge; every host (a daemon or a client) has its
own namespace, joined to the switch by a veth pair: ``eth0`` in the host, a port named
after the host on the bridge.  Addresses come from 198.18.0.0/15, the range RFC 2544
sets aside for benchmarking networks, and no namespace has a route out of the testbed:
nothing it sends can leave it.

Links are shaped where real ones are limited.  Each switch port's egress towards its host
is a token bucket at the link rate whose queue holds ``port_buffer_bytes``: the switch's
per-port buffer, where many servers answering one client at once overflow it (incast).
Each host's own egress is a token bucket at the same rate: its NIC.  TCP uses CUBIC, as
on the hosts the testbed stands for (a namespace other than the first may only choose
Reno or BBR as its default, so it is set on the testbed's route).

Every namespace is written to a state file before it is created, so :meth:`down` (from
this process or another one, after a failure or a Ctrl-C) removes exactly what was made.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simfs.errors import SimfsError

#: The benchmarking range (RFC 2544); the testbed uses its first /24.
SUBNET = ipaddress.ip_network("198.18.0.0/24")
#: Host names become bridge port names (at most 15 bytes, IFNAMSIZ) and namespace suffixes.
HOST_NAME = re.compile(r"^[a-z][a-z0-9-]{0,14}$")
PREFIX = re.compile(r"^[a-z][a-z0-9]{0,11}$")
TOOLS = {"ip": "iproute2", "tc": "iproute2", "nsenter": "util-linux", "unshare": "util-linux"}


def check_host_counts(servers: int, clients: int, servers_are: str) -> None:
    """The testbed's limits on its hosts (a 2-core machine's worth of daemons), as a
    one-line ValueError naming the field."""
    if not (isinstance(servers, int) and 1 <= servers <= 16):
        raise ValueError(f"servers: expected 1 to 16 {servers_are}, got {servers!r}")
    if not (isinstance(clients, int) and 1 <= clients <= 64):
        raise ValueError(f"clients: expected 1 to 64 clients, got {clients!r}")


def numbered_hosts(prefix: str, count: int) -> list[str]:
    """``prefix1`` .. ``prefixN``."""
    return [f"{prefix}{index}" for index in range(1, count + 1)]


def missing_tools() -> list[str]:
    """The commands the network needs that this machine lacks, with their Debian package."""
    return [f"{tool} (Debian package {package})" for tool, package in TOOLS.items() if shutil.which(tool) is None]


@dataclass(frozen=True)
class Link:
    """Every link of the testbed: rate, switch port buffer and frame size.

    ``rate_bits_per_s``: bits per second each way (100 Mbit/s keeps a 2-core machine's
    daemons off their CPU limit for a few links); ``port_buffer_bytes``: the queue of a
    switch port towards its host (a commodity switch: 16-128 KiB per port);
    ``mtu_bytes``: Ethernet frames."""

    rate_bits_per_s: int = 100_000_000
    port_buffer_bytes: int = 131_072
    mtu_bytes: int = 1500

    def __post_init__(self) -> None:
        if not (isinstance(self.rate_bits_per_s, int) and 1_000_000 <= self.rate_bits_per_s <= 100_000_000_000):
            raise ValueError(f"rate_bits_per_s: expected 1e6 to 1e11 bits/s, got {self.rate_bits_per_s!r}")
        if not (isinstance(self.mtu_bytes, int) and 576 <= self.mtu_bytes <= 9000):
            raise ValueError(f"mtu_bytes: expected 576 to 9000, got {self.mtu_bytes!r}")
        if not (isinstance(self.port_buffer_bytes, int) and self.mtu_bytes <= self.port_buffer_bytes <= 1 << 30):
            raise ValueError(
                f"port_buffer_bytes: expected at least one frame ({self.mtu_bytes} B) and at most 1 GiB, "
                f"got {self.port_buffer_bytes!r}"
            )


class TestbedNetwork:
    """A switch and ``hosts`` in namespaces named ``<prefix>-sw`` and ``<prefix>-<host>``.

    Parameters
    ----------
    prefix:
        Names the testbed's namespaces (a lowercase word, at most 12 characters); two
        testbeds with different prefixes do not see each other.
    hosts:
        Host names, in address order: the first gets 198.18.0.1.
    link:
        Rate and buffers of every link.
    state_dir:
        Where the state file is kept (``network.json``); created if missing.
    run:
        Runs one command (argv) and raises on failure; for tests.
    """

    __test__ = False  # a class named Test... that pytest must not collect

    def __init__(
        self,
        prefix: str,
        hosts: Sequence[str],
        link: Link,
        state_dir: str | Path,
        run: Callable[[list[str]], None] | None = None,
    ) -> None:
        if not PREFIX.match(prefix):
            raise ValueError(f"prefix: expected a lowercase word of at most 12 characters, got {prefix!r}")
        hosts = list(hosts)
        if not 1 <= len(hosts) <= SUBNET.num_addresses - 2:
            raise ValueError(f"hosts: expected 1 to {SUBNET.num_addresses - 2} hosts, got {len(hosts)}")
        for host in hosts:
            if not HOST_NAME.match(host) or host == "sw":
                raise ValueError(
                    f"hosts: {host!r} is not a host name (lowercase, digits and '-', at most 15 characters, not 'sw')"
                )
        if len(set(hosts)) < len(hosts):
            raise ValueError(f"hosts: {sorted({h for h in hosts if hosts.count(h) > 1})} given twice")
        self._prefix = prefix
        self._hosts = hosts
        self._link = link
        self._state = Path(state_dir) / "network.json"
        self._run = run or run_command

    @property
    def hosts(self) -> list[str]:
        return list(self._hosts)

    @property
    def link(self) -> Link:
        return self._link

    @property
    def switch_namespace(self) -> str:
        return f"{self._prefix}-sw"

    def namespace(self, host: str) -> str:
        self._check_host(host)
        return f"{self._prefix}-{host}"

    def address(self, host: str) -> str:
        self._check_host(host)
        return str(SUBNET[self._hosts.index(host) + 1])

    def enter(self, host: str) -> list[str]:
        """The argv prefix that runs a command in ``host``'s network namespace only
        (``nsenter --net``: unlike ``ip netns exec``, it keeps the caller's mount
        namespace, so FUSE mounts made inside stay visible)."""
        return ["nsenter", f"--net=/run/netns/{self.namespace(host)}", "--"]

    # -- up and down ----------------------------------------------------------------------
    def up(self) -> None:
        """Create the switch, the hosts and their shaped links.  On any failure, what was
        made is removed and the error raised."""
        if self._state.exists():
            raise RuntimeError(f"{self._state}: a testbed network is up already (take it down first)")
        self._state.parent.mkdir(parents=True, exist_ok=True)
        made: list[str] = []
        try:
            self._create_namespace(self.switch_namespace, made)
            switch = self.switch_namespace
            self._run(["ip", "-n", switch, "link", "add", "br0", "type", "bridge"])
            self._run(["ip", "-n", switch, "link", "set", "br0", "up"])
            for host in self._hosts:
                self._add_host(host, made)
        except BaseException:
            self._remove(made)
            raise

    def down(self) -> list[str]:
        """Remove every namespace the state file names (their links go with them); return
        their names.  Nothing to do without a state file."""
        if not self._state.exists():
            return []
        made = json.loads(self._state.read_text())["namespaces"]
        self._remove(made)
        return made

    # -- internals ------------------------------------------------------------------------
    def _check_host(self, host: str) -> None:
        if host not in self._hosts:
            raise ValueError(f"host: {host!r} is not a host of this testbed ({', '.join(self._hosts)})")

    def _create_namespace(self, name: str, made: list[str]) -> None:
        if Path("/run/netns", name).exists():
            raise TestbedError(f"testbed: namespace {name} exists already: another testbed is up (simfs testbed down)")
        # Recorded before it exists: a crash between the two leaves a name down() skips.
        made.append(name)
        self._write_state(made)
        try:
            self._run(["ip", "netns", "add", name])
        except BaseException:
            if not Path("/run/netns", name).exists():
                made.remove(name)  # never made: not ours to remove
                self._write_state(made)
            raise
        self._run(["ip", "-n", name, "link", "set", "lo", "up"])

    def _add_host(self, host: str, made: list[str]) -> None:
        namespace, switch, link = self.namespace(host), self.switch_namespace, self._link
        self._create_namespace(namespace, made)
        address = self.address(host)
        # "name" and "dev" spelt out: ip reads a bare "a" as an abbreviation of "address".
        self._run(
            [
                "ip",
                "-n",
                switch,
                "link",
                "add",
                "name",
                host,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                namespace,
            ]
        )
        for where, device in ((switch, host), (namespace, "eth0")):
            self._run(["ip", "-n", where, "link", "set", "dev", device, "mtu", str(link.mtu_bytes)])
        self._run(["ip", "-n", switch, "link", "set", "dev", host, "master", "br0"])
        self._run(["ip", "-n", switch, "link", "set", "dev", host, "up"])
        self._run(["ip", "-n", namespace, "addr", "add", f"{address}/{SUBNET.prefixlen}", "dev", "eth0"])
        self._run(["ip", "-n", namespace, "link", "set", "dev", "eth0", "up"])
        # The subnet route is the only route: CUBIC on it (see the module docstring).
        self._run(
            ["ip", "-n", namespace, "route", "replace", str(SUBNET), "dev", "eth0"]
            + ["proto", "kernel", "scope", "link", "src", address, "congctl", "cubic"]
        )
        rate = f"{link.rate_bits_per_s}bit"
        # The bucket holds two frames: a link's bursts are frames, not the default 1 s.
        burst = str(2 * link.mtu_bytes)
        self._run(
            ["tc", "-n", switch, "qdisc", "add", "dev", host, "root", "tbf"]
            + ["rate", rate, "burst", burst, "limit", str(link.port_buffer_bytes)]
        )
        # The NIC: its queue is the host's, not the switch's (a driver ring of 1 MiB).
        self._run(
            ["tc", "-n", namespace, "qdisc", "add", "dev", "eth0", "root", "tbf"]
            + ["rate", rate, "burst", burst, "limit", str(1 << 20)]
        )

    def _remove(self, made: list[str]) -> None:
        errors = []
        for name in reversed(made):
            if Path("/run/netns", name).exists():
                try:
                    # A process still in one of our namespaces is ours (started there by
                    # the testbed, recorded or not: a Ctrl-C can fall between the two).
                    _kill_namespace_processes(name)
                    self._run(["ip", "netns", "del", name])
                except (OSError, SimfsError) as error:
                    errors.append(str(error))
        if errors:
            # The state stays, naming what is left, so that down() can be tried again.
            raise TestbedError("testbed: could not remove namespace(s): " + "; ".join(errors))
        self._state.unlink(missing_ok=True)

    def _write_state(self, made: list[str]) -> None:
        partial = self._state.with_suffix(".json.partial")
        partial.write_text(json.dumps({"prefix": self._prefix, "namespaces": made}, indent=1))
        os.replace(partial, self._state)


class TestbedError(SimfsError):
    """A testbed command failed: the command and the first line of what it said."""

    __test__ = False


def run_command(argv: list[str]) -> str:
    """Run ``argv`` and return what it printed; on failure raise a one-line
    TestbedError with what it said."""
    completed = subprocess.run(argv, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        said = (completed.stderr or completed.stdout).strip().splitlines()[:1] or [f"exit {completed.returncode}"]
        raise TestbedError(f"testbed: {' '.join(argv)}: {said[0]}")
    return completed.stdout


def namespace_pids(name: str) -> list[int]:
    """The processes in network namespace ``name`` now (``ip netns pids``)."""
    listed = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=False)
    return [int(pid) for pid in listed.stdout.split() if pid.isdigit()]


def _kill_namespace_processes(name: str) -> None:
    for pid in namespace_pids(name):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def leftover_namespaces(prefix: str) -> list[str]:
    """Namespaces named ``<prefix>-...`` that exist now (a test that nothing is left)."""
    folder = Path("/run/netns")
    return sorted(path.name for path in folder.glob(f"{prefix}-*")) if folder.is_dir() else []
