"""The GlusterFS model: dispersed writes carry their redundancy, reads ask K bricks,
files land on subvolumes by hash, against hand-computed rates; its profile's checks; the
testbed's run records read as settings."""

import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import simpy

import simfs
from simfs.engine import FluidNetwork
from simfs.errors import ProfileError, SimfsError
from simfs.filesystems import GlusterFsSystem
from simfs.filesystems.core import FileSystemInstance
from simfs.filesystems.glusterfs import HOST_COSTS, host_cpu_s_per_byte
from simfs.ingest import read_file
from simfs.report.tables import wide_rows
from simfs.systems import load_profile
from simfs.testbed.gluster_cpu import GlusterCpuFit, main, run_rows
from simfs.testbed.host_cpu import BusyGrowthFit, read_records
from simfs.testbed.metadata_cpu import MetadataCpuFit
from tests.unit.phases import phase
from tests.unit.records import assert_probed_on_these_cores, mdtest_record

#: 100 Mbit/s of 1514-byte frames carrying 1448 B of TCP payload each.
LINK_Bps = 12.5e6 * 1448 / 1514
IOR = "ior -a POSIX -F -t 1m -b 64m -w -r -C -e"
ROOT = Path(__file__).resolve().parents[2]
CALIBRATION_RUNS = ROOT / "calibration" / "testbed" / "gluster-runs"
LOAD_RUNS = ROOT / "calibration" / "testbed" / "gluster-load-runs"
NO_HOST = {"mechanisms.shared_host_cpu": False}


def volume(data: int, redundancy: int, bricks: int, **more: object) -> dict[str, object]:
    return {
        "brick.count": bricks,
        "glusterfs.disperse_data": data,
        "glusterfs.redundancy": redundancy,
        "client.count": 8,
        **more,
    }


def rates(nodes: int, settings: dict[str, object], workload: str = IOR) -> tuple[float, float, str, str]:
    result = simfs.simulate("testbed-glusterfs", workload, nodes=nodes, overrides=settings)
    write, read = phase(result, "write"), phase(result, "read")
    return write["agg_bw_Bps"], read["agg_bw_Bps"], write["bottleneck"], read["bottleneck"]


def test_profile_assembles_a_dispersed_volume_and_explains_itself():
    system = simfs.load_system("testbed-glusterfs")
    assert isinstance(system, GlusterFsSystem)
    assert (system.disperse_data, system.redundancy, system.server_count, system.subvolume_count) == (2, 1, 3, 1)
    assert system.write_redundancy == pytest.approx(1.5)
    text = system.describe()
    assert "disperse 2+1" in text and "reads ask 2 of 3 bricks" in text
    assert "holds its directory's lock to its reply, 1.43 ms of CPU when the lock passes between clients" in text


def test_a_dispersed_write_sends_the_redundancy_over_the_client_link():
    # One client on a 6+2 volume: its link carries 8/6 of what it writes.
    write, read, write_neck, read_neck = rates(1, volume(6, 2, 8))
    assert write == pytest.approx(LINK_Bps * 6 / 8, rel=0.01)
    assert read == pytest.approx(LINK_Bps, rel=0.01)
    assert write_neck == read_neck == "client-nic"


def test_every_brick_of_a_subvolume_takes_a_kth_of_what_is_written_and_reads_ask_k():
    system = simfs.load_system("testbed-glusterfs", volume(4, 2, 12))
    instance = FileSystemInstance(system, FluidNetwork(simpy.Environment()), 1, np.random.default_rng(3))
    layouts = [instance.allocate(1, 1 << 20) for _ in range(200)]
    for layout in layouts:
        subvolume = layout.targets[0] // 6
        # K consecutive bricks of one subvolume, from a start the GFID hash chose.
        assert len(layout.targets) == 4
        assert all(target // 6 == subvolume for target in layout.targets)
        assert all((b - a) % 6 == 1 for a, b in zip(layout.targets, layout.targets[1:]))
        placements = system.data_placements(layout, np.full(4, 0.25), "write")
        assert sorted(target for target, _ in placements) == list(range(subvolume * 6, subvolume * 6 + 6))
        assert sum(share for _, share in placements) * system.write_redundancy == pytest.approx(6 / 4)
        assert system.data_placements(layout, np.full(4, 0.25), "read") is None
    # The hash spreads files over both subvolumes and every start.
    assert {layout.targets[0] for layout in layouts} == set(range(12))


def test_a_distributed_volume_keeps_each_file_whole_on_one_brick():
    write, read, *_ = rates(1, volume(1, 0, 4))
    assert write == pytest.approx(LINK_Bps, rel=0.01) and read == pytest.approx(LINK_Bps, rel=0.01)
    system = simfs.load_system("testbed-glusterfs", volume(1, 0, 4))
    assert system.volume_kind == "distribute over 4 bricks" and system.write_redundancy == 1.0


def test_readers_of_one_subvolume_share_its_k_bricks_links():
    # Eight clients on one 2+1 subvolume: every file's reads ask two of its three
    # bricks, so the bricks' three links carry all of it, and each client's at most one.
    _, read, _, neck = rates(8, volume(2, 1, 3))
    assert read <= 3 * LINK_Bps * 1.001
    assert neck.startswith("brick-nic")


def test_synchronous_reads_from_many_bricks_through_a_shallow_port_collapse():
    shallow = volume(6, 2, 8, **{"fabric.port_buffer_bytes": 16384})
    workload = "ior -a POSIX -t 64k -b 64m -w -r -e"
    result = simfs.simulate("testbed-glusterfs", workload, nodes=1, overrides=shallow)
    collapsed = phase(result, "read")
    _, deep, *_ = rates(1, volume(6, 2, 8, **{"fabric.port_buffer_bytes": 1 << 20}), workload)
    assert deep == pytest.approx(LINK_Bps, rel=0.01)
    assert collapsed["agg_bw_Bps"] < 0.6 * deep
    assert (collapsed["bottleneck"], collapsed["bottleneck_mechanism"]) == ("client-nic", "tcp_incast")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (volume(2, 1, 4), "brick.count: 4 bricks are not a whole number of disperse 2+1 subvolumes"),
        (volume(2, 2, 4), "glusterfs.redundancy: 2 must be less than half of 4 bricks"),
        (volume(3, 0, 3), "glusterfs.disperse_data: 3 data bricks need a redundancy of at least 1"),
    ],
)
def test_impossible_volumes_are_refused_naming_the_field(settings, message):
    with pytest.raises(ProfileError, match=re.escape(message)):
        simfs.load_system("testbed-glusterfs", settings)


def test_a_testbed_record_sets_the_volume_it_ran_on(tmp_path):
    record = {
        "simfs_run": 1,
        "tool": "ior",
        "workload": "ior -a POSIX -t 64k -b 64m -w -r -e",
        "nodes": 1,
        "ppn": 1,
        "phases": [{"phase": "read", "bandwidth_Bps": 4.0e6}],
        "testbed": {
            "file_system": "glusterfs",
            "servers": 8,
            "clients": 1,
            "volume": "disperse 6+2",
            "link": {"port_buffer_bytes": 16384},
        },
    }
    path = tmp_path / "r1.json"
    path.write_text(json.dumps(record))
    (measurement,) = read_file(path)
    assert measurement.settings == {
        "client.count": 1,
        "brick.count": 8,
        "glusterfs.disperse_data": 6,
        "glusterfs.redundancy": 2,
        "fabric.port_buffer_bytes": 16384,
    }
    record["testbed"]["volume"] = "replica 3"
    path.write_text(json.dumps(record))
    with pytest.raises(SimfsError, match="testbed.volume: expected 'disperse K\\+M' or 'distribute'"):
        read_file(path)


def test_the_profile_host_costs_are_the_fit_of_the_committed_calibration_runs():
    host = load_profile("testbed-glusterfs").data["host"]
    busy = BusyGrowthFit().fit(read_records([LOAD_RUNS]))
    assert host["busy_cpu_growth"] == pytest.approx(busy.busy_cpu_growth_, rel=1e-3)
    # One workload at 1, 2, 4 and 8 clients: the cores from under a fifth to nearly all busy.
    assert min(busy.utilisation_) < 0.2 and max(busy.utilisation_) > 0.85
    assert max(map(abs, busy.residuals_)) < 0.1
    records = read_records([CALIBRATION_RUNS])
    fit = GlusterCpuFit(busy_cpu_growth=host["busy_cpu_growth"]).fit(records)
    for name in HOST_COSTS:
        assert host[name] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3, abs=1e-12), name
    # Every calibration record has each phase's CPU time: the fit's rows are phases.
    assert len(fit.runs_) == sum(len(record["testbed"]["cpu_by_phase"]) for _, record in records)
    # One client on 2+1, 3+2 and 4+1 volumes: link-bound, three numbers of bricks per
    # write and per read.
    shapes = set()
    for origin, record in records:
        testbed = record["testbed"]
        assert testbed["file_system"] == "glusterfs" and testbed["clients"] == 1, origin
        assert testbed["cpu_utilisation"] < 0.5, origin
        shapes.add(testbed["volume"])
    assert shapes == {"disperse 2+1", "disperse 3+2", "disperse 4+1"}


def run_record(volume: str, written: float, read: float, clients: float, bricks: float, busy: float) -> dict:
    phases = [{"op": "write", "bytes": written}] + ([{"op": "read", "bytes": read}] if read else [])
    return {
        "status": "ok",
        "phases": phases,
        "testbed": {
            "file_system": "glusterfs",
            "volume": volume,
            "cpu_busy_s": busy,
            "cpu_by_process_s": {"gs1": 0.01, "gs1.brick": bricks / 2, "gs2.brick": bricks / 2, "c1": clients},
        },
    }


def test_the_xeon_cases_host_costs_are_the_fit_of_the_xeon_calibration_runs():
    # The VM became an Intel Xeon on 2026-11-28: its own runs, refitted as the built-in
    # profile's were, are what the Xeon cases override (validation/testbed/xeon/).
    xeon = ROOT / "calibration" / "testbed" / "xeon"
    busy = BusyGrowthFit().fit(read_records([xeon / "gluster-load-runs"]))
    fit = GlusterCpuFit(busy_cpu_growth=busy.busy_cpu_growth_).fit(read_records([xeon / "gluster-runs"]))
    cases = sorted((ROOT / "validation" / "testbed" / "xeon").glob("xeon-glusterfs-d6p2-*.toml"))
    assert len(cases) == 2
    for case in cases:
        settings = tomllib.loads(case.read_text())["case"]["settings"]
        assert settings["host.busy_cpu_growth"] == pytest.approx(busy.busy_cpu_growth_, abs=1e-3)
        for name in HOST_COSTS:
            assert settings[f"host.{name}"] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3, abs=1e-12), (
                case.name,
                name,
            )
    # The built-in profile lists them for runs recorded on the Xeon (validate --live).
    (listed,) = [
        entry
        for entry in load_profile("testbed-glusterfs").data["host"]["other_cpu"]
        if entry["cpu_model"] == "Intel(R) Xeon(R) Processor"
    ]
    # (its [dht] table: test_the_xeon_metadata_cases_hold_the_fit_of_the_xeon_runs)
    assert set(listed) == {"cpu_model", "busy_cpu_growth", *HOST_COSTS, "dht"}
    assert listed["busy_cpu_growth"] == pytest.approx(busy.busy_cpu_growth_, abs=1e-3)
    for name in HOST_COSTS:
        assert listed[name] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3, abs=1e-12), name


def test_the_fit_recovers_known_request_costs():
    costs = dict(zip(HOST_COSTS, (1e-4, 2e-3, 1.5e-4, 9e-4, 2e-4, 4e-9)))
    fixed, request = 0.3, 131072
    records = []
    for volume, data, redundancy in (("disperse 2+1", 2, 1), ("disperse 3+2", 3, 2), ("disperse 4+1", 4, 1)):
        for written, read in ((64 << 20, 0), (64 << 20, 64 << 20), (128 << 20, 128 << 20)):
            writes, reads = written / request, read / request
            clients = (
                writes * costs["write_request_cpu_s"]
                + reads * costs["read_request_cpu_s"]
                + (writes * (data + redundancy) + reads * data) * costs["fragment_request_cpu_s"]
            )
            bricks = (
                writes * (data + redundancy) * costs["brick_write_cpu_s"] + reads * data * costs["brick_read_cpu_s"]
            )
            wire = written * (data + redundancy) / data + read
            busy = clients + bricks + fixed + wire * costs["wire_cpu_s_per_byte"]
            records.append((f"{volume}-{written}-{read}", run_record(volume, written, read, clients, bricks, busy)))
    fit = GlusterCpuFit().fit(records)
    assert fit.costs == pytest.approx(costs, rel=1e-6)
    assert fit.fixed_cpu_s_ == pytest.approx(fixed)
    assert max(map(abs, fit.residuals_)) < 1e-9
    # A byte's cost on a volume: its request's share, and its bytes on the wire.
    write = (1e-4 + 8 * (1.5e-4 + 9e-4)) / request + 4e-9 * 8 / 6
    assert host_cpu_s_per_byte(costs, "write", 6, 2) == pytest.approx(write)
    assert host_cpu_s_per_byte(costs, "read", 6, 2) == pytest.approx((2e-3 + 6 * (1.5e-4 + 2e-4)) / request + 4e-9)


def phased_record(volume: str, data: int, redundancy: int, mib: int, costs: dict, growth: float, loads: tuple) -> dict:
    """A write-read record with each phase's CPU time as ``costs`` (idle) and ``growth``
    make it at the phase's utilisation ``loads``."""
    request, fixed = 131072, 0.2
    size = mib << 20
    record = {"status": "ok", "phases": [], "testbed": {"file_system": "glusterfs", "volume": volume}}
    phases = []
    for op, utilisation in zip(("write", "read"), loads):
        requests = size / request
        bricks_per = data + redundancy if op == "write" else data
        clients = requests * costs[f"{op}_request_cpu_s"] + requests * bricks_per * costs["fragment_request_cpu_s"]
        bricks = requests * bricks_per * costs[f"brick_{op}_cpu_s"]
        wire = size * (bricks_per / data if op == "write" else 1)
        scale = 1 + growth * utilisation
        busy = scale * (clients + bricks + fixed + wire * costs["wire_cpu_s_per_byte"])
        record["phases"].append({"iteration": 0, "phase": op, "op": op, "bytes": size})
        phases.append(
            {
                "iteration": 0,
                "phase": op,
                "cpu_busy_s": busy,
                "cpu_utilisation": utilisation,
                "cpu_by_process_s": {"gs1.brick": scale * bricks, "c1": scale * clients},
            }
        )
    record["testbed"].update(
        cpu_by_phase=phases,
        cpu_busy_s=sum(p["cpu_busy_s"] for p in phases),
        cpu_by_process_s={"gs1.brick": 0.0, "c1": 0.0},
    )
    return record


def test_phase_by_phase_rows_recover_idle_costs_and_the_busy_growth():
    costs = dict(zip(HOST_COSTS, (1e-4, 2e-3, 1.5e-4, 9e-4, 2e-4, 4e-9)))
    growth = 0.4
    calibration = [
        (f"{volume}-{mib}", phased_record(volume, data, redundancy, mib, costs, growth, (0.1 + 0.01 * mib / 64, 0.12)))
        for volume, data, redundancy in (("disperse 2+1", 2, 1), ("disperse 3+2", 3, 2), ("disperse 4+1", 4, 1))
        for mib in (64, 128)
    ]
    load = [
        (f"load-{index}", phased_record("disperse 4+1", 4, 1, 64, costs, growth, (u, u)))
        for index, u in enumerate((0.2, 0.4, 0.8, 1.0))
    ]
    # The load runs' phases differ only by utilisation: busy time per request is
    # base x (1 + growth x utilisation), up to the fixed cost per phase.
    busy = BusyGrowthFit().fit(load)
    assert busy.busy_cpu_growth_ == pytest.approx(growth, rel=0.05)
    assert len(busy.runs_) == 8 and busy.runs_[0] == "load-0 write"
    fit = GlusterCpuFit(busy_cpu_growth=growth).fit(calibration)
    assert fit.costs == pytest.approx(costs, rel=1e-6)
    assert fit.fixed_cpu_s_ == pytest.approx(0.2)
    assert [name.rsplit(" ", 1)[1] for name in fit.runs_] == ["write", "read"] * 6
    # Without the growth the same records read as dearer requests.
    assert GlusterCpuFit().fit(calibration).brick_write_cpu_s_ > costs["brick_write_cpu_s"] * 1.03
    # One load only identifies nothing; records without phases cannot be used.
    with pytest.raises(SimfsError, match="no operation was run at two loads"):
        BusyGrowthFit().fit(load[:1])
    whole = json.loads(json.dumps(load[0][1]))
    del whole["testbed"]["cpu_by_phase"]
    with pytest.raises(SimfsError, match="w.json: testbed.cpu_by_phase not recorded"):
        BusyGrowthFit().fit([("w.json", whole)])
    # A phase's CPU time must belong to a phase of the record, and it must have moved bytes.
    stray = json.loads(json.dumps(load[0][1]))
    stray["testbed"]["cpu_by_phase"][1]["phase"] = "reread"
    with pytest.raises(SimfsError, match=r"s.json: testbed.cpu_by_phase\[1\]: iteration 0, phase 'reread' is not"):
        BusyGrowthFit().fit([("s.json", stray)])
    empty = json.loads(json.dumps(load[0][1]))
    empty["phases"][0]["bytes"] = 0
    with pytest.raises(SimfsError, match=r"e.json: testbed.cpu_by_phase\[0\]: phase 'write' moved 0 bytes"):
        GlusterCpuFit().fit([("e.json", empty)])


def test_the_shared_host_charges_the_busy_machine_cost():
    idle = simfs.load_system("testbed-glusterfs", {**volume(6, 2, 8), "host.busy_cpu_growth": 0.0})
    busy = simfs.load_system("testbed-glusterfs", {**volume(6, 2, 8), "host.busy_cpu_growth": 0.5})
    for op in ("write", "read"):
        assert busy.shared_host.cpu_s_per_byte(op) == pytest.approx(1.5 * idle.shared_host.cpu_s_per_byte(op))
    assert "1.5 x an idle machine's" in busy.describe()
    with pytest.raises(ProfileError, match="host.busy_cpu_growth: expected >= 0, got -0.1"):
        simfs.load_system("testbed-glusterfs", {"host.busy_cpu_growth": -0.1})


def test_a_phase_says_how_busy_the_shared_cores_were():
    # One client on 6+2, link-bound: the cores' busy share is what its bytes cost an idle
    # machine, raised by the growth at that share (u = u_idle (1 + growth u)).
    result = simfs.simulate("testbed-glusterfs", IOR, nodes=1, overrides=volume(6, 2, 8))
    host = result_system(6, 2).shared_host
    growth = host.busy_cpu_growth
    assert growth == load_profile("testbed-glusterfs").data["host"]["busy_cpu_growth"]
    for op in ("write", "read"):
        row = phase(result, op)
        idle = row["bytes"] * host.cpu_s_per_byte(op) / (1 + growth) / (host.cores * row["time_s"])
        # The barriers' window also holds the opens and the closes (milliseconds of seconds).
        assert row["host_cpu_busy"] == pytest.approx(idle / (1 - growth * idle), rel=0.01), op
        assert 0.1 < row["host_cpu_busy"] < 0.3
    # Eight clients: every core busy in both phases.
    busy = simfs.simulate("testbed-glusterfs", IOR, nodes=8, overrides=volume(6, 2, 8))
    assert all(phase(busy, op)["host_cpu_busy"] == pytest.approx(1.0, abs=0.01) for op in ("write", "read"))
    # The table a user reads shows it beside the bottleneck.
    (shown,) = wide_rows(busy.phase_rows(), ["nodes", "ppn"])
    assert shown["write host CPU busy"] == pytest.approx(phase(busy, "write")["host_cpu_busy"])
    # Without a shared host the rows have no such column.
    alone = simfs.simulate("testbed-glusterfs", IOR, nodes=1, overrides={**volume(6, 2, 8), **NO_HOST})
    assert "host_cpu_busy" not in alone.phases.columns


def test_a_live_comparison_sets_each_phase_s_cpu_beside_its_prediction(capsys):
    from simfs.cli import main as cli
    from simfs.validate.live import compare_live

    runs = ROOT / "validation" / "testbed" / "runs" / "gluster-d6p2-clients"
    phased, whole = runs / "c4-r2.json", runs / "c4.json"
    table = compare_live([phased, whole], "testbed-glusterfs")
    recorded = json.loads(phased.read_text())["testbed"]["cpu_by_phase"]
    for op in ("write", "read"):
        rows = table[table["phase"] == op].set_index("run")
        expected = next(entry["cpu_utilisation"] for entry in recorded if entry["phase"] == op)
        assert rows.loc[str(phased), "cpu_busy_measured"] == pytest.approx(expected)
        assert np.isnan(rows.loc[str(whole), "cpu_busy_measured"])  # a record of whole runs only
        simulated = phase(simfs.simulate("testbed-glusterfs", IOR, nodes=4, overrides=volume(6, 2, 8)), op)
        assert rows["cpu_busy_predicted"].tolist() == pytest.approx([simulated["host_cpu_busy"]] * 2)
    assert cli(["validate", "--live", str(phased), "--system", "testbed-glusterfs"]) == 0
    printed = capsys.readouterr().out
    assert "cpu_busy_measured" in printed and "93%" in printed


def test_the_busy_share_ends_with_the_job_and_leaves_metadata_out():
    # A background job writing on after the main job's read: the read's window ends with
    # its own last rank, so the share is the read's, not diluted by the time after it.
    settings = volume(6, 2, 8)
    alone = phase(simfs.simulate("testbed-glusterfs", IOR, nodes=4, overrides=settings), "read")
    beside = simfs.simulate(
        "testbed-glusterfs",
        IOR,
        nodes=4,
        overrides=settings,
        background="ior -a POSIX -F -t 1m -b 512m -w -e",
        background_nodes=1,
    )
    read = phase(beside, "read")
    assert read["agg_bw_Bps"] < alone["agg_bw_Bps"]  # the neighbour took cores from it
    assert read["host_cpu_busy"] == pytest.approx(1.0, abs=0.02)
    assert np.isnan(phase(beside, "background write")["host_cpu_busy"])
    # mdtest's requests reach the cores through the metadata service: no figure here.
    metadata = simfs.simulate("testbed-glusterfs", "mdtest -n 200 -F -C -T -r", nodes=2, overrides=settings)
    assert "host_cpu_busy" not in metadata.phases.columns


def result_system(data: int, redundancy: int) -> GlusterFsSystem:
    return simfs.load_system("testbed-glusterfs", volume(data, redundancy, data + redundancy))


def test_the_busy_share_solves_the_growing_cost():
    from simfs.hardware import SharedHost

    flat = SharedHost(cores=2, write_cpu_s_per_byte=1e-8, read_cpu_s_per_byte=1e-8)
    assert flat.utilisation(0.4) == pytest.approx(0.4)
    growing = SharedHost(cores=2, write_cpu_s_per_byte=1e-8, read_cpu_s_per_byte=1e-8, busy_cpu_growth=0.5)
    assert growing.utilisation(1.0) == pytest.approx(1.0)
    for charged in (0.1, 0.5, 0.9):
        busy = growing.utilisation(charged)
        # Charged at the busy machine's cost (1.5 x idle): u = (charged / 1.5) (1 + 0.5 u).
        assert busy == pytest.approx(charged / 1.5 * (1 + 0.5 * busy))
        assert charged / 1.5 < busy < charged
    with pytest.raises(ValueError, match="busy_cpu_growth: expected a non-negative growth, got -0.5"):
        SharedHost(cores=2, write_cpu_s_per_byte=1e-8, read_cpu_s_per_byte=1e-8, busy_cpu_growth=-0.5)


def test_the_fit_refuses_what_cannot_identify_it(tmp_path, capsys):
    one = run_record("disperse 2+1", 64 << 20, 64 << 20, 1.5, 2.0, 4.0)
    with pytest.raises(SimfsError, match="do not identify"):
        GlusterCpuFit().fit([(f"r{index}.json", one) for index in range(8)])
    moosefs = json.loads(json.dumps(one))
    moosefs["testbed"]["file_system"] = "moosefs"
    with pytest.raises(SimfsError, match="m.json: testbed.file_system 'moosefs': not a GlusterFS run"):
        run_rows(moosefs, "m.json")
    older = json.loads(json.dumps(one))
    older["testbed"].pop("cpu_by_process_s")
    with pytest.raises(SimfsError, match="o.json: testbed.cpu_by_process_s not recorded"):
        run_rows(older, "o.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[")
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"simfs: {bad}:1: not a run record")


def test_eight_clients_on_one_machine_are_cpu_bound_and_say_so():
    # 8 clients on a 6+2 volume: 8 links carry 6 x 11.96 MB/s written, the two cores less.
    system = simfs.load_system("testbed-glusterfs", volume(6, 2, 8))
    host = system.shared_host
    costs = load_profile("testbed-glusterfs").data["host"]
    write_ceiling = host.ceiling_Bps("write")
    # The busy machine's cost: the run is CPU-bound, so every core is busy.
    busy = 1 + costs["busy_cpu_growth"]
    assert write_ceiling == pytest.approx(2 / (busy * host_cpu_s_per_byte(costs, "write", 6, 2)))
    assert write_ceiling < 6 * LINK_Bps
    write, read, write_neck, read_neck = rates(8, volume(6, 2, 8))
    assert write == pytest.approx(write_ceiling, rel=0.01)
    assert write_neck == "host-cpu"
    assert read == pytest.approx(min(host.ceiling_Bps("read"), 6 * LINK_Bps), rel=0.01)
    assert read_neck == ("host-cpu" if host.ceiling_Bps("read") < 6 * LINK_Bps else "client-nic")
    # Without the shared host the links bind: 8 clients send 8/6 of what they write, and
    # the 8 bricks take a sixth of every byte each (both at 6 links' worth).
    write, _, write_neck, _ = rates(8, volume(6, 2, 8, **NO_HOST))
    assert write == pytest.approx(6 * LINK_Bps, rel=0.01)
    assert write_neck.endswith("nic")


def test_one_client_is_link_bound_on_the_shared_host():
    write, read, write_neck, read_neck = rates(1, volume(6, 2, 8))
    assert write_neck == read_neck == "client-nic"


METADATA_RUNS = ROOT / "calibration" / "testbed" / "gluster-metadata-runs"
MDTEST = "mdtest -n 500 -F -C -T -r"


def test_the_profile_dht_is_the_metadata_fit_of_the_committed_runs():
    profile = load_profile("testbed-glusterfs").data
    fit = MetadataCpuFit(profile["glusterfs"]["metadata_latency_s"]).fit(read_records([METADATA_RUNS]))
    assert fit.file_system_ == "glusterfs" and "# [glusterfs] metadata_latency_s" in fit.table()
    dht = profile["dht"]
    assert dht["cores"] == fit.cores_ == 2
    assert dht["request_parallelism"] == pytest.approx(fit.request_parallelism_, rel=1e-3)
    for op in ("create", "close", "stat", "remove"):
        assert dht[f"{op}_per_s"] == pytest.approx(fit.rate_per_s(op), rel=1e-4), op
    assert dht["lock_handover_cpu_s"] == pytest.approx(fit.lock_handover_cpu_s_, rel=1e-3)
    assert dht["measured_bricks"] == fit.measured_bricks_ == 3
    assert dht["per_brick_cpu_fraction"] == pytest.approx(fit.per_brick_cpu_fraction_, abs=5e-4)


def test_the_xeon_metadata_cases_hold_the_fit_of_the_xeon_runs():
    # The Xeon's own one- and two-process runs, fitted as the built-in profile's [dht] was,
    # are what the Xeon metadata cases set and the profile's Xeon entry lists.
    round_trip = load_profile("testbed-glusterfs").data["glusterfs"]["metadata_latency_s"]
    runs = ROOT / "calibration" / "testbed" / "xeon" / "gluster-metadata-runs"
    fit = MetadataCpuFit(round_trip).fit(read_records([runs]))
    assert not fit.latency_fitted_ and fit.measured_bricks_ == 3
    expected = {
        "dht.request_parallelism": fit.request_parallelism_,
        **{f"dht.{op}_per_s": fit.rate_per_s(op) for op in ("create", "close", "stat", "remove")},
        "dht.open_per_s": fit.rate_per_s("stat"),
        "dht.lock_handover_cpu_s": fit.lock_handover_cpu_s_,
        "dht.per_brick_cpu_fraction": fit.per_brick_cpu_fraction_,
    }
    cases = sorted((ROOT / "validation" / "testbed" / "xeon").glob("xeon-glusterfs-metadata-*.toml"))
    assert [case.stem for case in cases] == [
        "xeon-glusterfs-metadata-create",
        "xeon-glusterfs-metadata-d4p2-create",
        "xeon-glusterfs-metadata-d4p2-remove",
        "xeon-glusterfs-metadata-d4p2-stat",
        "xeon-glusterfs-metadata-remove",
        "xeon-glusterfs-metadata-stat",
    ]
    (listed,) = load_profile("testbed-glusterfs").data["host"]["other_cpu"]
    listed = {f"dht.{key}": value for key, value in listed["dht"].items()}
    for settings in [tomllib.loads(case.read_text())["case"]["settings"] for case in cases] + [listed]:
        given = {key: value for key, value in settings.items() if key.startswith("dht.")}
        # The share is printed to three decimals; every other value to four or five digits.
        assert given.pop("dht.per_brick_cpu_fraction") == pytest.approx(
            expected["dht.per_brick_cpu_fraction"], abs=5e-4
        )
        assert given == pytest.approx(
            {key: value for key, value in expected.items() if key != "dht.per_brick_cpu_fraction"}, rel=1e-3
        )


def test_the_fit_recovers_a_known_lock_hand_over():
    # One process: known CPU per request; two and four processes, one per client, pay
    # 1.5 ms more per create and remove, and a fixed cost of their own per run.
    parallelism, round_trip, handover = 1.25, 2e-5, 1.5e-3
    cpu = {"create": 3e-3 + 1e-3, "stat": 1e-3, "remove": 2e-3}
    walls = {op: {"create": 2, "stat": 1, "remove": 1}[op] * round_trip + cpu[op] / parallelism for op in cpu}

    def record(items: int, ranks: int, busy: float) -> dict:
        made = mdtest_record(items, walls, busy, ranks=ranks)
        # The clients and bricks spent 90% of the machine's busy time, the rest 10%.
        # (glusterd and the self-heal daemon are neither.)
        processes = {"c1": 0.3 * busy, "gs1.brick": 0.4 * busy, "gs2.brick": 0.2 * busy, "gs1": 0.05 * busy}
        processes["gs1.shd"] = 0.02 * busy
        made["testbed"].update(
            file_system="glusterfs",
            rank_clients=[f"c{rank + 1}" for rank in range(ranks)],
            volume="disperse 2+1",
            cpu_by_process_s=processes,
        )
        return made

    alone = sum(cpu.values())
    records = [(f"m1-n{n}.json", record(n, 1, 0.2 + n * alone)) for n in (500, 2000)]
    records += [
        (f"m{ranks}-n{n}.json", record(n, ranks, fixed + n * (alone + 2 * handover)))
        for ranks, fixed in ((2, 0.5), (4, 0.9))
        for n in (1000, 4000)
    ]
    fit = MetadataCpuFit(round_trip).fit(records)
    assert fit.lock_handover_cpu_s_ == pytest.approx(handover)
    assert fit.cpu_s_per_request_["remove"] == pytest.approx(2e-3)
    assert "lock_handover_cpu_s = 0.0015" in fit.table()
    assert fit.measured_bricks_ == 3 and fit.per_brick_cpu_fraction_ == pytest.approx(0.9)
    assert "measured_bricks = 3\nper_brick_cpu_fraction = 0.900" in fit.table()
    assert len(fit.runs_) == len(fit.residuals_) == 6 and max(map(abs, fit.residuals_)) < 1e-9
    # What cannot identify it, or is not a hand-over, is refused.
    with pytest.raises(SimfsError, match="runs of 2 processes are of one size"):
        MetadataCpuFit(round_trip).fit(records[:3])
    cheaper = [(name, record(n, 2, 0.5 + n * (alone - handover))) for name, n in (("a", 1000), ("b", 4000))]
    with pytest.raises(SimfsError, match="no hand-over to fit"):
        MetadataCpuFit(round_trip).fit(records[:2] + cheaper)
    # The per-brick share needs each process's CPU time (without it the rates are still
    # fitted, the share is not), and one volume shape.
    unknown = record(1000, 2, 3.0)
    del unknown["testbed"]["cpu_by_process_s"]
    partial = MetadataCpuFit(round_trip).fit([*records, ("u.json", unknown)])
    assert partial.per_brick_cpu_fraction_ is None and "per_brick_cpu_fraction" not in partial.table()
    wider = list(records)
    wider[0] = ("w.json", {**records[0][1], "testbed": {**records[0][1]["testbed"], "volume": "disperse 4+2"}})
    with pytest.raises(SimfsError, match=r"volumes of \[3, 6\] bricks"):
        MetadataCpuFit(round_trip).fit(wider)
    shared_client = record(1000, 2, 3.0)
    shared_client["testbed"]["rank_clients"] = ["c1", "c1"]
    with pytest.raises(SimfsError, match="one process per client"):
        MetadataCpuFit(round_trip).fit([*records[:2], ("c.json", shared_client)])


#: A 4+2 volume on six bricks: creates, stats and unlinks go to six bricks, not three.
WIDE = {"brick.count": 6, "glusterfs.disperse_data": 4, "glusterfs.redundancy": 2}


def test_a_wider_volume_costs_each_metadata_request_more_cpu_by_its_per_brick_share():
    narrow = simfs.load_system("testbed-glusterfs")
    wide = simfs.load_system("testbed-glusterfs", overrides=WIDE)
    share = load_profile("testbed-glusterfs").data["dht"]["per_brick_cpu_fraction"]
    # 2+1 is the volume the rates were measured on: unchanged.
    assert narrow.metadata_cpu_scale == 1 and narrow.metadata_measured_bricks == 3
    assert narrow.metadata.create_per_s == load_profile("testbed-glusterfs").data["dht"]["create_per_s"]
    # 4+2: each request goes to 6 bricks, not 3; the per-brick share doubles, the rest stays.
    factor = (1 - share) + share * 6 / 3
    assert wide.metadata_cpu_scale == pytest.approx(factor)
    for op in ("create", "open", "close", "stat", "remove"):
        assert wide.metadata.demand_s(op) == pytest.approx(narrow.metadata.demand_s(op) * factor), op
    assert wide.metadata.lock_handover_cpu_s == pytest.approx(narrow.metadata.lock_handover_cpu_s * factor)
    assert wide.metadata.request_parallelism == narrow.metadata.request_parallelism
    assert "CPU per request 1.95 x the 3-brick volume's" in wide.describe()
    assert "CPU per request" not in narrow.describe()
    # A distributed volume has no ec translator: its rates stand as given, as they do in a
    # profile without the fraction.
    spread = simfs.load_system(
        "testbed-glusterfs", overrides={"brick.count": 2, "glusterfs.disperse_data": 1, "glusterfs.redundancy": 0}
    )
    assert spread.metadata_cpu_scale == 1 and spread.metadata.create_per_s == narrow.metadata.create_per_s
    plain = simfs.load_system("testbed-glusterfs", overrides={"dht.per_brick_cpu_fraction": 0, **WIDE})
    assert plain.metadata_cpu_scale == 1 and plain.metadata.create_per_s == narrow.metadata.create_per_s
    # So a wider volume's creates from several clients, bound by the lock, go slower.
    assert mdtest_rates(2, **WIDE)["create"][0] < mdtest_rates(2)["create"][0] / 1.8


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("per_brick_cpu_fraction", 1.5, "dht.per_brick_cpu_fraction: expected <= 1, got 1.5"),
        ("per_brick_cpu_fraction", -0.1, "dht.per_brick_cpu_fraction: expected >= 0, got -0.1"),
        ("measured_bricks", 0, "dht.measured_bricks: expected a positive number, got 0"),
        ("measured_bricks", 2.5, "dht.measured_bricks: expected an integer, got 2.5"),
    ],
)
def test_bad_per_brick_scaling_fields_are_refused_naming_the_field(field: str, value: object, expected: str):
    with pytest.raises(ProfileError, match=re.escape(expected)):
        simfs.load_system("testbed-glusterfs", overrides={f"dht.{field}": value})


def test_a_per_brick_fraction_needs_the_shape_it_was_measured_on(tmp_path: Path):
    text = (ROOT / "simfs" / "systems" / "testbed-glusterfs.toml").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("measured_bricks")]
    profile = tmp_path / "no-shape.toml"
    profile.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProfileError, match=r"dht\.measured_bricks"):
        simfs.load_system(str(profile))


def test_scaling_a_metadata_spec_scales_every_cpu_cost_and_refuses_a_bad_factor():
    spec = simfs.load_system("testbed-glusterfs").metadata
    doubled = spec.with_cpu_scaled(2.0)
    assert doubled.create_per_s == spec.create_per_s / 2 and doubled.stat_per_s == spec.stat_per_s / 2
    assert doubled.lock_handover_cpu_s == spec.lock_handover_cpu_s * 2
    assert doubled.dir_update_per_s == spec.dir_update_per_s and doubled.cores == spec.cores
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="factor: expected a positive finite number"):
            spec.with_cpu_scaled(bad)


def mdtest_rates(processes: int, **settings: object) -> dict[str, tuple[float, str]]:
    result = simfs.simulate("testbed-glusterfs", MDTEST, nodes=processes, overrides={"client.count": 8, **settings})
    return {
        op: (phase(result, f"file {op}")["ops_per_s"], phase(result, f"file {op}")["bottleneck"])
        for op in ("create", "stat", "remove")
    }


def test_creates_in_one_directory_take_turns_no_faster_than_one_lone_create():
    system = simfs.load_system("testbed-glusterfs")
    md, round_trip = system.metadata, system.io.metadata_latency_s
    # One process: each create's round trip and its work (a create and a close).
    lone = round_trip + md.demand_s("create") / md.request_parallelism
    close = round_trip + md.demand_s("close") / md.request_parallelism
    one = mdtest_rates(1)
    assert one["create"][0] == pytest.approx(1 / (lone + close), rel=0.02)
    # More processes: the directory's lock is held for each whole create, so creates go
    # one at a time, whatever their number.  The hand timeline of one turn: the create
    # holding the lock shares the two cores with the close of the process before it (one
    # core each) until that close is done, then has the cores alone (request_parallelism).
    # Processes on one client node keep the lock among them; from one node to another
    # every create first pays the lock's hand-over.
    create, close = md.demand_s("create"), md.demand_s("close")
    shared = min(md.request_parallelism, md.cores / 2)
    overlap = close / shared

    def turn(work: float) -> float:
        return round_trip + overlap + (work - overlap * shared) / md.request_parallelism

    assert md.lock_handover_cpu_s > 0 and turn(create) > lone
    one_node = simfs.simulate("testbed-glusterfs", MDTEST, nodes=1, ppn=2, overrides={"client.count": 8})
    assert phase(one_node, "file create")["ops_per_s"] == pytest.approx(1 / turn(create), rel=0.02)
    for processes in (2, 4, 8):
        rates = mdtest_rates(processes)
        assert rates["create"][0] == pytest.approx(1 / turn(create + md.lock_handover_cpu_s), rel=0.02), processes
        assert rates["stat"][1] == "host-cpu"
        assert rates["stat"][0] == pytest.approx(md.cores / md.demand_s("stat"), rel=0.02)
    assert mdtest_rates(8)["create"][1] == "dht-dir"
    # Without the lock the creates use the cores: CPU-bound, faster.
    free = mdtest_rates(8, **{"mechanisms.mds_directory_lock": False})
    assert free["create"][1] == "host-cpu"
    assert free["create"][0] == pytest.approx(md.cores / (md.demand_s("create") + md.demand_s("close")), rel=0.02)


def test_updates_in_a_directory_of_their_own_or_stats_never_wait_for_the_lock():
    # mdtest -u: a directory per process, so creates and removes use the cores as stats do.
    system = simfs.load_system("testbed-glusterfs")
    md = system.metadata
    result = simfs.simulate("testbed-glusterfs", MDTEST + " -u", nodes=8, overrides={"client.count": 8})
    create, remove = phase(result, "file create"), phase(result, "file remove")
    assert create["bottleneck"] == remove["bottleneck"] == "host-cpu"
    assert create["ops_per_s"] == pytest.approx(md.cores / (md.demand_s("create") + md.demand_s("close")), rel=0.02)
    assert remove["ops_per_s"] == pytest.approx(md.cores / md.demand_s("remove"), rel=0.02)
    # In one shared directory the removes take turns too: a turn is a remove's work and the
    # lock's hand-over on the cores and its reply's way back (the next one waits at the
    # bricks, its way there done).
    shared = mdtest_rates(8)["remove"]
    work = md.demand_s("remove") + md.lock_handover_cpu_s
    turn = work / md.request_parallelism + system.io.metadata_latency_s / 2
    assert shared[1] == "dht-dir" and shared[0] == pytest.approx(1 / turn, rel=0.01)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"dht.cores": 3}, "dht.cores: 3 on a shared host of 2 cores"),
        (
            {
                f"host.{name}": 0.0
                for name in (
                    "write_request_cpu_s",
                    "fragment_request_cpu_s",
                    "brick_write_cpu_s",
                    "wire_cpu_s_per_byte",
                )
            },
            "host.write_request_cpu_s, host.fragment_request_cpu_s, host.brick_write_cpu_s, host.wire_cpu_s_per_byte: all 0",
        ),
        ({"host.brick_read_cpu_s": -1e-4}, "host.brick_read_cpu_s"),
        ({"dht.lock_handover_cpu_s": -1e-3}, "dht.lock_handover_cpu_s"),
    ],
)
def test_bad_host_and_dht_fields_are_named(settings, message):
    with pytest.raises(ProfileError, match=re.escape(message)):
        simfs.load_system("testbed-glusterfs", settings)


def test_the_repeated_load_runs_grow_more_and_their_busiest_writes_cost_the_same():
    # The same series the next day (2026-11-28): a growth is kept again, a larger one than
    # the profile's, because the one-client writes cost less; the eight-client ones cost
    # what they did.
    first = BusyGrowthFit().fit(read_records([LOAD_RUNS]))
    again = BusyGrowthFit().fit(read_records([LOAD_RUNS.parent / "gluster-load-runs-repeat"]))
    assert again.identified_ and 0.6 < again.busy_cpu_growth_ < 0.8
    assert again.busy_cpu_growth_ > load_profile("testbed-glusterfs").data["host"]["busy_cpu_growth"] + 0.15

    def write_cost(fit: BusyGrowthFit, clients: int) -> float:
        return next(
            cost for run, cost in zip(fit.runs_, fit.cpu_s_per_byte_) if run.endswith(f"-c{clients}.json write")
        )

    assert write_cost(again, 8) == pytest.approx(write_cost(first, 8), rel=0.02)
    assert write_cost(again, 1) < 0.9 * write_cost(first, 1)
    assert_probed_on_these_cores(LOAD_RUNS.parent / "gluster-load-runs-repeat")
