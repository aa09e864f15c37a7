"""The GlusterFS testbed: its layouts and bad input (anywhere), and a live cluster up,
written, read and taken down (root, ``/dev/fuse``, network namespaces and Debian's
``glusterfs-server`` and ``glusterfs-client``; skipped, saying why, without them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from simfs.cli import main
from simfs.errors import SimfsError
from simfs.testbed import cluster, glusterfs
from simfs.testbed.cluster import PREFIX, Testbed, TestbedSpec
from simfs.testbed.network import Link, leftover_namespaces
from simfs.testbed.processes import Started, alive
from tests.unit.test_testbed import why_no_testbed

# One testbed per machine (a second is refused): `pytest -n` runs these tests on one worker.
pytestmark = pytest.mark.xdist_group("live-testbed")

UNAVAILABLE_GLUSTERFS = why_no_testbed("glusterfs")
needs_glusterfs = pytest.mark.skipif(UNAVAILABLE_GLUSTERFS is not None, reason=str(UNAVAILABLE_GLUSTERFS))


def test_hosts_and_volume_types():
    dispersed = glusterfs.GlusterFsLayout(6, 2, (2, 1))
    assert dispersed.hosts == ["gs1", "gs2", "gs3", "gs4", "gs5", "gs6", "c1", "c2"]
    assert dispersed.volume_type == "disperse 2+1"
    assert glusterfs.GlusterFsLayout(4, 1).volume_type == "distribute"
    assert glusterfs.parse_disperse(" 4+2 ") == (4, 2)


@pytest.mark.parametrize(
    "servers, clients, disperse, message",
    [
        (17, 1, None, "servers: expected 1 to 16"),
        (2, 0, None, "clients: expected 1 to 64"),
        (3, 1, (1, 1), "expected K\\+M with 1 <= M < K"),
        (3, 1, (2, 0), "expected K\\+M with 1 <= M < K"),
        (4, 1, (2, 1), "needs a multiple of 3 servers"),
    ],
)
def test_a_layout_gluster_would_refuse_is_refused_first(servers, clients, disperse, message):
    with pytest.raises(ValueError, match=message):
        glusterfs.GlusterFsLayout(servers, clients, disperse)


def test_each_management_daemon_keeps_all_its_state_in_its_own_folder(tmp_path):
    # Two glusterd on one machine must share none of these (module docstring).
    text = glusterfs.glusterd_volfile(tmp_path / "gs2", "198.18.0.2")
    for option, value in [
        ("working-directory", tmp_path / "gs2" / "lib"),
        ("run-directory", tmp_path / "gs2" / "run"),
        ("logging-directory", tmp_path / "gs2" / "log"),
        ("glusterd-sockfile", tmp_path / "gs2" / "glusterd.socket"),
        ("transport.socket.bind-address", "198.18.0.2"),
    ]:
        assert f"    option {option} {value}\n" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["testbed", "up", "glusterfs", "--disperse", "two"], "--disperse: expected K+M"),
        (["testbed", "up", "glusterfs", "--servers", "4", "--disperse", "2+1"], "needs a multiple of 3 servers"),
        (["testbed", "up", "glusterfs", "--goal", "2"], "--goal: MooseFS only"),
        (["testbed", "up", "moosefs", "--disperse", "2+1"], "--disperse: GlusterFS volumes only"),
    ],
)
def test_a_wrong_glusterfs_command_is_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cluster.os, "geteuid", lambda: 0)  # the refusal comes before any root work
    code = main([*argv[:2], "--state", str(tmp_path / "state"), *argv[2:]])
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "state").exists()


def test_spec_refuses_disperse_for_moosefs_and_a_goal_for_glusterfs():
    with pytest.raises(SimfsError, match="GlusterFS volumes only"):
        TestbedSpec("moosefs", 3, 1, Link(), disperse=(2, 1))
    with pytest.raises(SimfsError, match="--goal: MooseFS only"):
        TestbedSpec("glusterfs", 3, 1, Link(), goal=2)
    assert TestbedSpec("moosefs", 3, 1, Link()).chunk_copies == 2  # MooseFS's default
    assert TestbedSpec("glusterfs", 3, 1, Link()).chunk_copies is None


@needs_glusterfs
def test_a_dispersed_volume_up_written_on_one_client_read_on_another_and_down_leaves_nothing(tmp_path):
    state = tmp_path / "state"
    testbed = Testbed(state, storage=tmp_path / "storage")
    before = glusterfs.system_files()
    status = testbed.up(TestbedSpec("glusterfs", 3, 2, Link(), disperse=(2, 1)))
    try:
        names = [p["name"] for p in status["processes"]]
        assert names[:3] == ["gs1", "gs2", "gs3"] and names[-2:] == ["c1", "c2"]
        # Each server's brick and self-heal daemon are recorded, so that down stops them.
        assert sorted(names[3:-2]) == ["gs1.brick", "gs1.shd", "gs2.brick", "gs2.shd", "gs3.brick", "gs3.shd"]
        assert all(p["running"] for p in status["processes"])
        assert status["volume"] == "disperse 2+1" and status["version"].startswith("glusterfs 10")
        first, second = (Path(mount) for mount in status["mounts"])
        data = os.urandom(3 << 20)
        # Synced, as IOR's -e does: a dispersed volume's writer keeps its inode lock (eager
        # lock) until 1 s without operations, and only then, or at a sync, does the new
        # size reach the bricks for another client to see.
        with open(first / "shared", "wb") as written:
            written.write(data)
            written.flush()
            os.fsync(written.fileno())
        assert (second / "shared").read_bytes() == data
        # Erasure coded: each of the three bricks holds half the file (2 data fragments).
        fragments = sorted((tmp_path / "storage").glob("simfs-testbed-*/gs*/brick/shared"))
        assert [path.stat().st_size for path in fragments] == [len(data) // 2] * 3
    finally:
        done = testbed.down()
    assert "removed namespace sfstb-gs1" in done
    assert leftover_namespaces(PREFIX) == []
    assert not state.exists() and not any((tmp_path / "storage").iterdir())
    assert str(state) not in Path("/proc/self/mounts").read_text()
    for process in status["processes"]:
        assert not alive(Started(process["name"], process["pid"], process["start_ticks"], process["log"]))
    # Sockets and state GlusterFS writes outside the testbed's folders: gone with it.
    assert glusterfs.system_files() <= before


@needs_glusterfs
def test_a_failed_up_removes_the_files_gluster_had_made_outside_the_state_folder(tmp_path, monkeypatch):
    system = tmp_path / "var-run-gluster"
    system.mkdir()
    (system / "there-before").write_text("")
    monkeypatch.setattr(glusterfs, "SYSTEM_FOLDERS", (system,))

    def socket_then_fail(network, layout, state, storage, record):  # noqa: ANN001
        (system / "brick.socket").write_text("")
        raise RuntimeError("glusterd on gs2 exited at start-up")

    monkeypatch.setattr(glusterfs, "start_cluster", socket_then_fail)
    state = tmp_path / "state"
    with pytest.raises(SimfsError, match="gs2 exited"):
        Testbed(state, storage=tmp_path / "storage").up(TestbedSpec("glusterfs", 2, 1, Link()))
    assert leftover_namespaces(PREFIX) == [] and not state.exists()
    assert sorted(path.name for path in system.iterdir()) == ["there-before"]
