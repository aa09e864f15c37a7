"""The testbed's network: shaped links between host namespaces behind one switch, no
route out, and nothing left behind after ``down`` or a failed ``up``.

The tests that build a network need root, iproute2 and namespaces; they skip elsewhere
and say why.  Nothing here measures a rate (no test depends on the machine's speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from simfs.testbed.network import Link, TestbedNetwork, leftover_namespaces, missing_tools

# One testbed per machine (a second is refused): `pytest -n` runs these tests on one worker.
pytestmark = pytest.mark.xdist_group("live-testbed")


def _network_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if missing_tools():
        return f"missing {', '.join(missing_tools())}"
    probe = f"simfsprobe-{uuid.uuid4().hex[:6]}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


UNAVAILABLE = _network_unavailable()
needs_namespaces = pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))


@pytest.fixture
def prefix() -> str:
    name = f"t{uuid.uuid4().hex[:8]}"
    yield name
    assert leftover_namespaces(name) == [], "namespaces left behind"


# -- arguments ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rate_bits_per_s": 0}, "rate_bits_per_s"),
        ({"rate_bits_per_s": 1.5e8}, "rate_bits_per_s"),
        ({"port_buffer_bytes": 100}, "port_buffer_bytes: expected at least one frame"),
        ({"mtu_bytes": 100_000}, "mtu_bytes"),
    ],
)
def test_a_bad_link_names_its_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Link(**kwargs)


@pytest.mark.parametrize(
    "prefix, hosts, message",
    [
        ("Bad", ["a"], "prefix"),
        ("tb", [], "hosts: expected 1 to 254"),
        ("tb", ["a"] * 255, "hosts: expected 1 to 254"),
        ("tb", ["a", "a"], r"\['a'\] given twice"),
        ("tb", ["sw"], "not a host name"),
        ("tb", ["client_1"], "not a host name"),
        ("tb", ["a-very-long-hostname"], "not a host name"),
    ],
)
def test_a_bad_testbed_names_its_argument(prefix, hosts, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        TestbedNetwork(prefix, hosts, Link(), tmp_path)


def test_addresses_come_from_the_benchmarking_range(tmp_path):
    network = TestbedNetwork("tb", ["master", "cs1", "client1"], Link(), tmp_path)
    assert [network.address(h) for h in network.hosts] == ["198.18.0.1", "198.18.0.2", "198.18.0.3"]
    assert network.namespace("cs1") == "tb-cs1" and network.switch_namespace == "tb-sw"
    assert network.enter("cs1") == ["nsenter", "--net=/run/netns/tb-cs1", "--"]
    with pytest.raises(ValueError, match="not a host of this testbed"):
        network.address("nobody")


def test_a_failed_up_removes_what_it_made(tmp_path):
    """Without touching the machine: the bridge cannot be made; no host namespace is
    created after it, the error is raised, and the state file goes (the live tests
    below check that real namespaces are removed)."""
    issued: list[list[str]] = []

    def run(argv: list[str]) -> None:
        issued.append(argv)
        if argv[:3] == ["ip", "-n", "tb-sw"] and "bridge" in argv:
            raise subprocess.CalledProcessError(2, argv, "", "RTNETLINK answers: Operation not supported")

    network = TestbedNetwork("tb", ["a", "b"], Link(), tmp_path, run=run)
    with pytest.raises(subprocess.CalledProcessError):
        network.up()
    assert ["ip", "netns", "add", "tb-sw"] in issued
    assert not (tmp_path / "network.json").exists()
    assert not any(argv[:3] == ["ip", "netns", "add"] and argv[3] != "tb-sw" for argv in issued)


# -- live ------------------------------------------------------------------------------------
@needs_namespaces
def test_hosts_reach_each_other_through_shaped_ports_and_nothing_is_left(prefix, tmp_path):
    link = Link(rate_bits_per_s=100_000_000, port_buffer_bytes=32_768)
    network = TestbedNetwork(prefix, ["srv", "cli"], link, tmp_path)
    network.up()
    try:
        shown = subprocess.run(
            ["tc", "-j", "-n", network.switch_namespace, "qdisc", "show", "dev", "cli"], capture_output=True, text=True
        ).stdout
        (port,) = json.loads(shown)
        assert port["kind"] == "tbf" and port["options"]["rate"] == 100_000_000 // 8
        # tc reports the queue as the time it takes to drain past the bucket (us).
        queued = port["options"]["burst"] + port["options"]["lat"] * 1e-6 * port["options"]["rate"]
        assert queued == pytest.approx(32_768, rel=0.001)
        routes = subprocess.run(
            ["ip", "-n", network.namespace("cli"), "route", "show"], capture_output=True, text=True
        ).stdout.strip()
        assert routes.splitlines() == ["198.18.0.0/24 dev eth0 proto kernel scope link src 198.18.0.2 congctl cubic"], (
            "the testbed's subnet must be the only route (nothing leaves it)"
        )
        # 4 MiB from the server to the client across the switch.
        server = subprocess.Popen(
            network.enter("srv") + [sys.executable, "-c", _SEND, network.address("srv")],
            stdout=subprocess.PIPE,
            text=True,
        )
        received = subprocess.run(
            network.enter("cli") + [sys.executable, "-c", _RECEIVE, network.address("srv")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        server.wait(timeout=120)
        assert received.stdout.strip() == str(4 << 20), received.stderr
    finally:
        removed = network.down()
    assert removed == [network.switch_namespace, network.namespace("srv"), network.namespace("cli")]
    assert not (tmp_path / "network.json").exists()


@needs_namespaces
def test_down_from_another_process_removes_an_up_network(prefix, tmp_path):
    TestbedNetwork(prefix, ["a"], Link(), tmp_path).up()
    assert leftover_namespaces(prefix) == [f"{prefix}-a", f"{prefix}-sw"]
    # Another process knows only the state folder (e.g. `simfs testbed down` after a crash).
    subprocess.run(
        [sys.executable, "-c", _DOWN, prefix, str(tmp_path)], check=True, capture_output=True, text=True, timeout=60
    )
    assert leftover_namespaces(prefix) == []


_SEND = """
import socket, sys
listener = socket.create_server((sys.argv[1], 5001))
print("ready", flush=True)
connection, _ = listener.accept()
connection.sendall(b"x" * (4 << 20))
connection.close()
"""
_RECEIVE = """
import socket, sys, time
for attempt in range(200):
    try:
        connection = socket.create_connection((sys.argv[1], 5001), timeout=60)
        break
    except OSError:
        time.sleep(0.05)
total = 0
while chunk := connection.recv(1 << 16):
    total += len(chunk)
print(total)
"""
_DOWN = """
import sys
from simfs.testbed.network import Link, TestbedNetwork
TestbedNetwork(sys.argv[1], ["a"], Link(), sys.argv[2]).down()
"""
