"""``simfs testbed``: a live MooseFS cluster brought up, used and taken down, leaving
nothing behind; and its refusals, one line each.

The live tests need root, ``/dev/fuse``, network namespaces and Debian's MooseFS
packages (``moosefs-master``, ``moosefs-chunkserver``, ``moosefs-client``); they skip
elsewhere and say which is missing.  No test depends on a rate: the links' speed is
never asserted.  The default run brings a testbed up and down once (and refuses two);
the other live tests run in the slow suite, which ``.ci/run`` runs too."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from simfs.cli import _mpi_missing, main
from simfs.errors import SimfsError
from simfs.testbed import cluster
from simfs.testbed.cluster import PREFIX, Testbed, TestbedSpec
from simfs.testbed.counters import _switches_between, process_switches
from simfs.testbed.network import Link, leftover_namespaces
from simfs.testbed.probe import machine_probe
from simfs.testbed.processes import Started, alive, start_ticks
from tests.unit.test_testbed_network import UNAVAILABLE

# One testbed per machine (a second is refused): `pytest -n` runs these tests on one worker.
pytestmark = pytest.mark.xdist_group("live-testbed")


def why_no_testbed(file_system: str) -> str | None:
    """Why a live testbed of ``file_system`` cannot run here, or None."""
    if UNAVAILABLE:
        return UNAVAILABLE
    try:
        cluster.check_machine(file_system)
    except Exception as error:  # noqa: BLE001 (the reason to skip, whatever it is)
        return str(error)
    if leftover_namespaces(PREFIX):
        return "a testbed is up on this machine (simfs testbed down first)"
    return None


UNAVAILABLE_TESTBED = why_no_testbed("moosefs")
needs_testbed = pytest.mark.skipif(UNAVAILABLE_TESTBED is not None, reason=str(UNAVAILABLE_TESTBED))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["testbed", "up"], "the following arguments are required: file_system"),
        (["testbed", "up", "lustre"], "invalid choice: 'lustre'"),
        (["testbed", "up", "moosefs", "--rate", "fast"], "--rate fast: expected a rate"),
        (["testbed", "up", "moosefs", "--rate", "10bit"], "rate_bits_per_s: expected 1e6 to 1e11"),
        (["testbed", "up", "moosefs", "--port-buffer", "100"], "port_buffer_bytes: expected at least one frame"),
        (["testbed", "up", "moosefs", "--servers", "17"], "servers: expected 1 to 16"),
        (["testbed", "up", "moosefs", "--clients", "65"], "clients: expected 1 to 64"),
        (["testbed", "up", "moosefs", "--goal", "10"], "--goal: expected 1 to 9 copies"),
        (["testbed", "status", "moosefs"], "unrecognized arguments: moosefs"),
        (["testbed", "run"], "give the workload after --"),
        (["testbed", "run", "--", "ior", "-F"], "no testbed is up"),
        (["testbed", "run", "--json", "x.txt", "--", "ior", "-F"], "--json x.txt: expected a file ending in .json"),
    ],
)
def test_a_wrong_testbed_command_is_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    words = [*argv[:2], "--state", str(tmp_path / "state"), *argv[2:]]
    try:
        code = main(words)
    except SystemExit as exit_info:  # argparse's own refusals
        code = exit_info.code
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "state").exists()


@needs_testbed
def test_a_state_folder_that_cannot_be_made_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["testbed", "up", "moosefs", "--state", str(blocker / "state")]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"simfs: error: testbed: --state {blocker / 'state'}: cannot make it (File exists)"
    assert leftover_namespaces(PREFIX) == []


def test_the_status_of_a_testbed_from_an_older_simfs_says_what_it_lacks():
    from simfs.cli import _testbed_text

    older = {  # as simfs recorded a testbed before it recorded the goal
        "file_system": "moosefs",
        "version": "version: 3.0.117-1",
        "servers": 1,
        "clients": 1,
        "link": {"rate_bits_per_s": 100_000_000, "port_buffer_bytes": 131072, "mtu_bytes": 1500},
        "hosts": {"master": "198.18.0.1"},
        "processes": [{"name": "master", "pid": 1, "running": True}],
        "mounts": [],
        "mounted": [],
    }
    assert "1 client(s), goal not recorded; links 100 Mbit/s" in _testbed_text(older)


def test_status_and_down_with_nothing_up(tmp_path, capsys):
    assert main(["testbed", "status", "--state", str(tmp_path / "none")]) == 0
    assert capsys.readouterr().out.strip() == "no testbed is up"
    assert main(["testbed", "down", "--state", str(tmp_path / "none")]) == 0
    assert capsys.readouterr().out.strip() == ""


@pytest.mark.parametrize("action", [["up", "moosefs"], ["status"], ["down"], ["run", "--", "ior", "-F"]])
def test_without_root_every_action_is_refused_in_one_line(action, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["testbed", *action[:1], "--state", str(tmp_path / "state"), *action[1:]]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "simfs: error: testbed: needs root (it creates network namespaces and FUSE mounts)"
    )


def test_down_leaves_a_folder_that_is_not_a_testbeds_alone(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "run.json").write_text("{}")
    assert Testbed(results).down() == []
    assert (results / "run.json").read_text() == "{}"


@needs_testbed
def test_up_refuses_an_existing_state_folder(tmp_path):
    (tmp_path / "state").mkdir()
    with pytest.raises(SimfsError, match="exists; give a folder the testbed can make"):
        Testbed(tmp_path / "state").up(TestbedSpec("moosefs", 1, 1, Link()))
    assert leftover_namespaces(PREFIX) == []


def _nothing_left(state: Path, status: dict) -> None:
    assert leftover_namespaces(PREFIX) == []
    assert not state.exists()
    for folder in status["folders"]:
        assert not Path(folder).exists()
    mounts = Path("/proc/self/mounts").read_text()
    assert str(state) not in mounts
    for process in status["processes"]:
        assert not alive(Started(process["name"], process["pid"], process["start_ticks"], process["log"]))


@needs_testbed
def test_up_write_on_one_client_read_on_another_down_leaves_nothing(tmp_path):
    state = tmp_path / "state"
    testbed = Testbed(state, storage=tmp_path / "storage")
    status = testbed.up(TestbedSpec("moosefs", 2, 2, Link()))
    try:
        assert [p["name"] for p in status["processes"]] == ["master", "cs1", "cs2", "c1", "c2"]
        assert all(p["running"] for p in status["processes"])
        assert status["hosts"]["master"] == "198.18.0.1" and status["version"].startswith("version: 3.")
        # Each client is a host of its own to the ranks placed on it.
        names = [
            subprocess.run(
                ["nsenter", f"--uts={status['uts'][client]}", "hostname"], capture_output=True, text=True
            ).stdout.strip()
            for client in ("c1", "c2")
        ]
        assert names == ["c1", "c2"]
        first, second = (Path(mount) for mount in status["mounts"])
        data = os.urandom(3 << 20)
        (first / "shared").write_bytes(data)
        assert (second / "shared").read_bytes() == data  # through the master and chunkservers
    finally:
        done = testbed.down()
    assert "removed namespace sfstb-sw" in done
    _nothing_left(state, status)


@needs_testbed
@pytest.mark.slow  # a testbed up and down: seconds each; the default run keeps one
@pytest.mark.parametrize("backend", ["mpi", "local"])
def test_a_run_goes_through_every_client_and_its_record_names_the_testbed(tmp_path, capsys, backend):
    if backend == "mpi" and _mpi_missing():
        pytest.skip(_mpi_missing())
    state = tmp_path / "state"
    testbed = Testbed(state, storage=tmp_path / "storage")
    status = testbed.up(TestbedSpec("moosefs", 2, 2, Link()))
    record_path = tmp_path / "run.json"
    try:
        code = main(
            ["testbed", "run", "--state", str(state), "--np", "4", "--json", str(record_path)]
            + (["--mpi"] if backend == "mpi" else [])
            + ["--", "ior", "-a", "POSIX", "-F", "-t", "1m", "-b", "2m", "-w", "-r", "-C", "-e"]
        )
        assert code == 0, capsys.readouterr().err
        mounted_during = testbed.status()["mounted"]
        printed = capsys.readouterr().err
        by_phase = [line for line in printed.splitlines() if line.startswith("testbed: CPU by phase: ")]
        assert len(by_phase) == 1 and re.search(r"write \d+% busy .*, read \d+% busy", by_phase[0]), printed
        # A command line the runner refuses: one line, before any rank starts.
        bad = ["testbed", "run", "--state", str(state)] + (["--mpi"] if backend == "mpi" else [])
        assert main([*bad, "--", "ior", "-F", "--bogus"]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            "simfs: error: ior: unsupported option '--bogus' (see simfs.workloads.ior for the subset)"
        ]
    finally:
        testbed.down()
    _nothing_left(state, status)
    record = json.loads(record_path.read_text())
    assert record["status"] == "ok" and record["nodes"] == 2 and record["ppn"] == 2
    assert record["backend"] == backend and record["command"].startswith("simfs testbed run -- ior")
    if backend == "mpi":  # rank 0 ran inside the first client's host name
        assert record["machine"]["hostname"] == "c1"
    bed = record["testbed"]
    assert bed["file_system"] == "moosefs" and bed["servers"] == 2 and bed["clients"] == 2
    assert bed["rank_clients"] == ["c1", "c1", "c2", "c2"]
    assert bed["link"]["rate_bits_per_s"] == 100_000_000
    # The bytes crossed the testbed's TCP connections: 4 ranks x 2 MiB written and read.
    assert bed["tcp"]["segments_sent"] > (16 << 20) // 1500
    assert set(bed["tcp"]) == {"segments_sent", "retransmitted_segments", "rtos", "tail_loss_probes"}
    assert set(bed["switch_port_drops"]) == {"master", "cs1", "cs2", "c1", "c2"}
    assert 0 <= bed["cpu_utilisation"] <= 1
    assert bed["goal"] == 2 and bed["cpus"] >= 1
    assert 0 < bed["cpu_busy_s"] <= bed["cpus"] * bed["cpu_window_s"]
    assert 0 <= bed["cpu_nice_s"] + bed["cpu_steal_s"] <= bed["cpu_busy_s"]
    # How fast the machine was: fixed work timed before the run.
    assert set(bed["machine_probe"]) == set(PROBE_KEYS)
    # Each daemon's own CPU time: every one worked (the clients and chunkservers moved
    # the bytes), and together no more than the machine was busy (one tick of slack each).
    daemons = bed["cpu_by_process_s"]
    assert set(daemons) == {"master", "cs1", "cs2", "c1", "c2"}
    assert all(daemons[name] > 0 for name in ("cs1", "cs2", "c1", "c2"))
    assert sum(daemons.values()) <= bed["cpu_busy_s"] + 5 * 0.01
    # Every daemon waited for requests: voluntary context switches, many per request.
    switches = bed["context_switches_by_process"]
    assert set(switches) == set(daemons) and all(switches[name][0] > 0 for name in ("cs1", "c1"))
    # Each phase's CPU time too, sampled at its barriers (under mpirun, rank 0 tells the
    # run through its socket), inside the run's.
    phases = bed["cpu_by_phase"]
    assert [(p["iteration"], p["phase"]) for p in phases] == [(0, "write"), (0, "read")]
    assert all(0 < p["cpu_busy_s"] for p in phases)
    assert sum(p["cpu_busy_s"] for p in phases) <= bed["cpu_busy_s"] + 0.01
    assert sum(p["cpu_window_s"] for p in phases) <= bed["cpu_window_s"]
    assert all(p["cpu_by_process_s"]["c1"] > 0 for p in phases)
    assert len(mounted_during) == 2


@needs_testbed
@pytest.mark.slow  # a testbed up and down: seconds each; the default run keeps one
def test_a_second_testbed_is_refused_and_the_first_keeps_running(tmp_path):
    first = Testbed(tmp_path / "first", storage=tmp_path / "storage")
    status = first.up(TestbedSpec("moosefs", 1, 1, Link()))
    try:
        with pytest.raises(SimfsError, match="one is up already on this machine"):
            Testbed(tmp_path / "second").up(TestbedSpec("moosefs", 1, 1, Link()))
        assert not (tmp_path / "second").exists()
        again = first.status()
        assert all(p["running"] for p in again["processes"]) and again["mounted"] == again["mounts"]
    finally:
        first.down()
    _nothing_left(tmp_path / "first", status)


@needs_testbed
@pytest.mark.slow  # a testbed up and down: seconds each; the default run keeps one
def test_a_crashed_client_s_dead_mount_is_still_unmounted(tmp_path):
    state = tmp_path / "state"
    testbed = Testbed(state, storage=tmp_path / "storage")
    status = testbed.up(TestbedSpec("moosefs", 1, 1, Link()))
    client = next(p for p in status["processes"] if p["name"] == "c1")
    os.kill(client["pid"], signal.SIGKILL)  # the FUSE daemon dies: its mount answers ENOTCONN
    try:
        os.waitpid(client["pid"], 0)  # this process started it: collect it
    finally:
        done = testbed.down()
    assert f"unmounted {status['mounts'][0]}" in done
    _nothing_left(state, status)


@needs_testbed
def test_a_failed_up_takes_down_what_it_had_made(tmp_path, monkeypatch):
    started = []

    def master_then_fail(network, layout, state, storage, record):  # noqa: ANN001
        started.append(
            cluster.moosefs.start("master", network.enter("master") + ["sleep", "300"], state / "master.log")
        )
        record.append(started[-1])
        raise RuntimeError("chunkserver cs1 exited at start-up")

    monkeypatch.setattr(cluster.moosefs, "start_cluster", master_then_fail)
    state = tmp_path / "state"
    testbed = Testbed(state, storage=tmp_path / "storage")
    with pytest.raises(SimfsError, match="cs1 exited"):
        testbed.up(TestbedSpec("moosefs", 1, 1, Link()))
    assert leftover_namespaces(PREFIX) == []
    assert not state.exists()
    assert not alive(started[0]), "the process started before the failure was left running"


def test_context_switches_are_counted_thread_by_thread():
    before = {"10": (100, 5), "11": (40, 2)}
    # Thread 11 ended, thread 12 started: 10's growth plus 12's whole count.
    after = {"10": (130, 9), "12": (7, 1)}
    assert _switches_between(before, after) == [30 + 7, 4 + 1]
    # An id used again by a new thread: its counts start from nothing.
    assert _switches_between({"10": (100, 5)}, {"10": (3, 1)}) == [3, 1]
    # This process: its threads are read from /proc, and a PID that is not the recorded
    # process (another start time) is left out.
    me = Started("me", os.getpid(), start_ticks(os.getpid()), "")
    stranger = Started("stranger", os.getpid(), start_ticks(os.getpid()) + 1, "")
    counts = process_switches({"me": me, "stranger": stranger})
    assert set(counts) == {"me"} and str(os.getpid()) in counts["me"]


PROBE_KEYS = (
    "sha256_cpu_s_per_gib",
    "zero_read_cpu_s_per_gib",
    "pipe_round_trip_cpu_us",
    "pipe_round_trip_two_cores_cpu_us",
)


def test_the_machine_probe_times_fixed_work_in_cpu_seconds():
    allowed = os.sched_getaffinity(0)
    probe = machine_probe()
    assert tuple(probe) == PROBE_KEYS
    # Plausible for any machine of this century: hashing at 0.05-20 s per GiB, the kernel
    # filling memory faster than that, a round trip between 0.5 us and 1 ms of CPU.
    assert 0.05 < probe["sha256_cpu_s_per_gib"] < 20
    assert 0 < probe["zero_read_cpu_s_per_gib"] < probe["sha256_cpu_s_per_gib"]
    assert 0.5 < probe["pipe_round_trip_cpu_us"] < 1000
    two_cores = probe["pipe_round_trip_two_cores_cpu_us"]
    assert two_cores is None if len(os.sched_getaffinity(0)) == 1 else 0.5 < two_cores < 1000
    # The probe pins itself to one core at a time and then leaves this process where it
    # was allowed to run.
    assert os.sched_getaffinity(0) == allowed


def test_a_probe_whose_child_fails_raises_and_leaves_the_process_as_it_was():
    from simfs.testbed.probe import _round_trips

    allowed = os.sched_getaffinity(0)
    with pytest.raises(OSError):
        _round_trips(min(allowed), 4096)  # the child cannot be pinned to a core that is not there
    assert os.sched_getaffinity(0) == allowed


@pytest.mark.parametrize(
    ("nice_s", "steal_s", "runner_niced", "shared"),
    [(0.0, 0.0, False, False), (1.9, 0.0, False, False), (0.0, 2.1, False, True), (15.0, 0.3, False, True)]
    + [(15.0, 0.3, True, False), (15.0, 2.1, True, True)],  # a niced run's own processes are niced
)
def test_a_run_says_when_its_machine_was_shared(nice_s, steal_s, runner_niced, shared):
    from simfs.runner.machine import shared_machine

    # 20 s on 2 cores: 40 core-s, of which 5% is 2 core-s.
    line = shared_machine(40.0, nice_s, steal_s, runner_niced=runner_niced)
    assert (line is not None) == shared
    if shared:
        assert f"the hypervisor took {steal_s:.1f} s of the 40.0 core-s" in line
        assert ("niced processes" in line) != runner_niced
