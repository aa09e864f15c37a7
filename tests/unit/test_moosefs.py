"""The MooseFS model and the shared-host CPU: chained writes, chunk placement and a
machine's cores shared by every daemon, against hand-computed rates; the host CPU fit
against the committed calibration runs."""

import json
import tomllib
from pathlib import Path

import pytest

import simfs
from simfs.errors import ProfileError, SimfsError
from simfs.filesystems import MooseFsSystem
from simfs.hardware import SharedHost
from simfs.systems.profile import load_profile
from simfs.testbed.host_cpu import BusyGrowthFit, HostCpuFit, main, read_records
from simfs.testbed.metadata_cpu import MetadataCpuFit
from simfs.testbed.metadata_cpu import main as metadata_main
from tests.unit.phases import phase
from tests.unit.records import assert_probed_on_these_cores, mdtest_record

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION_RUNS = ROOT / "calibration" / "testbed" / "runs"
LOAD_RUNS = ROOT / "calibration" / "testbed" / "load-runs"
METADATA_RUNS = ROOT / "calibration" / "testbed" / "metadata-runs"
#: The smallest TCP round trip of a client's connection to the master (``ss -tin``).
ROUND_TRIP_S = 1.2e-5
MDTEST = "mdtest -n 200 -F -C -T -r"
IOR = "ior -a POSIX -F -t 1m -b 64m -w -r -C -e"
#: 100 Mbit/s of 1514-byte frames carrying 1448 B of TCP payload each.
LINK_Bps = 12.5e6 * 1448 / 1514
NO_HOST = {"mechanisms.shared_host_cpu": False}


def rates(nodes: int, **overrides: object) -> tuple[float, float, str, str]:
    result = simfs.simulate("testbed-moosefs", IOR, nodes=nodes, overrides={"client.count": 8, **overrides})
    write, read = phase(result, "write"), phase(result, "read")
    return write["agg_bw_Bps"], read["agg_bw_Bps"], write["bottleneck"], read["bottleneck"]


def test_profile_assembles_the_testbed_and_explains_itself():
    system = simfs.load_system("testbed-moosefs")
    assert isinstance(system, MooseFsSystem)
    assert (system.server_count, system.target_count, system.client_count, system.chain_copies) == (2, 2, 2, 2)
    assert system.io.stripe_size_bytes == 64 << 20 and system.io.rpc_size_bytes == 64 << 10
    assert system.client.network.bandwidth_Bps == pytest.approx(LINK_Bps, abs=1)
    text = system.describe()
    assert "goal 2 (chained writes)" in text and "shared host: 2 cores" in text


def test_one_client_is_link_bound_both_ways():
    write, read, write_neck, read_neck = rates(1, **{"chunkserver.count": 4})
    assert write == pytest.approx(LINK_Bps, rel=0.01) and read == pytest.approx(LINK_Bps, rel=0.01)
    assert write_neck == read_neck == "client-nic"


def test_a_chained_write_stores_every_byte_twice_on_the_chunkservers_links():
    # 4 clients on 2 chunkservers with goal 2: each chunkserver receives a copy of every
    # byte (from a client or down the chain), so together they take one link's worth.
    write, read, write_neck, _ = rates(4, **{"chunkserver.count": 2, **NO_HOST})
    assert write == pytest.approx(2 * LINK_Bps / 2, rel=0.01)
    assert write_neck == "chunkserver-nic"
    assert read == pytest.approx(2 * LINK_Bps, rel=0.01)
    one_copy, *_ = rates(4, **{"chunkserver.count": 2, "moosefs.goal": 1, **NO_HOST})
    assert one_copy == pytest.approx(2 * LINK_Bps, rel=0.01)


def test_a_goal_beyond_the_servers_stores_one_copy_per_server():
    lone, *_ = rates(1, **{"chunkserver.count": 1, "moosefs.goal": 3, **NO_HOST})
    assert lone == pytest.approx(LINK_Bps, rel=0.01)


def test_the_shared_host_binds_when_the_links_would_carry_more():
    system = simfs.load_system("testbed-moosefs")
    host = system.shared_host
    write, read, write_neck, read_neck = rates(8, **{"chunkserver.count": 8, "moosefs.goal": 1})
    # Links would carry 8 x 11.96 MB/s each way; two cores carry less.
    assert host.ceiling_Bps("write") < 8 * LINK_Bps and host.ceiling_Bps("read") < 8 * LINK_Bps
    assert write == pytest.approx(host.ceiling_Bps("write"), rel=0.01)
    assert read == pytest.approx(host.ceiling_Bps("read"), rel=0.01)
    assert write_neck == read_neck == "host-cpu"
    unshared, *_ = rates(8, **{"chunkserver.count": 8, "moosefs.goal": 1, **NO_HOST})
    assert unshared == pytest.approx(8 * LINK_Bps, rel=0.01)


def test_shared_host_costs_per_copy_and_checks_its_fields():
    host = SharedHost(cores=2, write_cpu_s_per_byte=4e-8, read_cpu_s_per_byte=3e-8, copy_cpu_s_per_byte=2e-8)
    assert host.cpu_s_per_byte("write", copies=3) == pytest.approx(8e-8)
    assert host.ceiling_Bps("read") == pytest.approx(2 / 3e-8)
    with pytest.raises(ValueError, match="cores"):
        SharedHost(cores=0, write_cpu_s_per_byte=1e-8, read_cpu_s_per_byte=1e-8)
    with pytest.raises(ValueError, match="read_cpu_s_per_byte"):
        SharedHost(cores=1, write_cpu_s_per_byte=1e-8, read_cpu_s_per_byte=float("nan"))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"moosefs.chunk_bytes": 1 << 20}, "moosefs.chunk_bytes: MooseFS chunks are 67108864 bytes"),
        ({"host.cores": 0}, "host.cores"),
        ({"chunkserver.store.kind": "tape"}, "chunkserver.store.kind"),
        ({"moosefs.metadata_latency_s": 1e-6}, "moosefs.metadata_latency_s"),
        ({"master.cores": 3}, "master.cores: 3 on a shared host of 2 cores"),
        ({"master.request_parallelism": 3}, r"master.request_parallelism: expected between 1 and cores \(2\)"),
        ({"master.request_parallelism": 0.5}, "master.request_parallelism"),
    ],
)
def test_bad_profile_fields_are_named(override, message):
    with pytest.raises(ProfileError, match=message):
        simfs.load_system("testbed-moosefs", override)


def test_the_profile_host_costs_are_the_fit_of_the_committed_calibration_runs():
    fit = HostCpuFit().fit(read_records([CALIBRATION_RUNS]))
    host = load_profile("testbed-moosefs").data["host"]
    for name in ("write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte"):
        assert host[name] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3), name
    # The fit explains every run's busy time to a few percent.
    for busy, residual in zip(fit.busy_s_, fit.residuals_):
        assert abs(residual) < 0.05 * busy


def test_the_xeon_cases_host_costs_are_the_fit_of_the_xeon_calibration_runs():
    # The VM became an Intel Xeon on 2026-11-28: its own one-client runs, refitted, are
    # what the Xeon cases override (validation/testbed/xeon/).
    records = read_records([ROOT / "calibration" / "testbed" / "xeon" / "runs"])
    assert {record["machine"]["cpu_model"] for _, record in records} == {"Intel(R) Xeon(R) Processor"}
    fit = HostCpuFit().fit(records)
    cases = sorted((ROOT / "validation" / "testbed" / "xeon").glob("xeon-moosefs-clients-*.toml"))
    assert len(cases) == 4
    for case in cases:
        settings = tomllib.loads(case.read_text())["case"]["settings"]
        for name in ("write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte"):
            assert settings[f"host.{name}"] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3), (case.name, name)
    # The built-in profile lists them for runs recorded on the Xeon (validate --live).
    (listed,) = [
        entry
        for entry in load_profile("testbed-moosefs").data["host"]["other_cpu"]
        if entry["cpu_model"] == "Intel(R) Xeon(R) Processor"
    ]
    # (its [master] and [moosefs] tables: test_the_xeon_metadata_cases_hold_the_fit_of_the_xeon_runs)
    assert set(listed) == {
        "cpu_model",
        "write_cpu_s_per_byte",
        "copy_cpu_s_per_byte",
        "read_cpu_s_per_byte",
        "master",
        "moosefs",
    }
    for name in ("write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte"):
        assert listed[name] == pytest.approx(getattr(fit, f"{name}_"), rel=1e-3), name
    # A byte written or read costs this Xeon under half what it cost the EPYC; a chained
    # copy about the same.
    epyc = load_profile("testbed-moosefs").data["host"]
    assert fit.write_cpu_s_per_byte_ < 0.5 * epyc["write_cpu_s_per_byte"]
    assert fit.read_cpu_s_per_byte_ < 0.5 * epyc["read_cpu_s_per_byte"]
    assert fit.copy_cpu_s_per_byte_ == pytest.approx(epyc["copy_cpu_s_per_byte"], rel=0.15)


def test_the_committed_load_runs_grow_in_writes_not_reads_and_keep_no_common_growth(capsys):
    # 1, 2, 4 and 8 clients on 6 chunkservers: the cores from a fifth to nine tenths busy.
    busy = BusyGrowthFit().fit(read_records([LOAD_RUNS]))
    assert min(busy.utilisation_) < 0.25 and max(busy.utilisation_) > 0.85
    # Writes alone grow, whichever run is left out; reads alone do not.
    assert 0.2 < busy.growth_by_operation_["write"] < 0.4
    assert min(busy.leave_one_out_by_operation_["write"].values()) > 0.2
    assert busy.growth_by_operation_["read"] < 0.01
    assert max(busy.leave_one_out_by_operation_["read"].values()) < 0.1
    # One growth for both is small, gone without the one-client run and outside what
    # writes admit: not kept, and the profile's value is what the fit keeps.
    assert 0.02 < busy.growth_fitted_ < 0.2 and min(busy.leave_one_out_.values()) == 0.0
    assert not busy.identified_ and not busy.operations_agree_ and busy.busy_cpu_growth_ == 0.0
    assert load_profile("testbed-moosefs").data["host"]["busy_cpu_growth"] == busy.busy_cpu_growth_
    # With no growth every phase is within 10% of its operation's one cost per byte.
    assert max(map(abs, busy.residuals_)) < 0.1
    assert main([str(CALIBRATION_RUNS), "--load", str(LOAD_RUNS)]) == 0
    out = capsys.readouterr().out
    assert "# write alone: growth 0.285" in out and "# read alone: growth 0," in out
    assert "do not admit one growth (0 used)" in out and "busy_cpu_growth = 0\n" in out
    assert "write_cpu_s_per_byte = 3.945e-08" in out


def test_the_repeated_load_runs_keep_no_growth_of_either_operation():
    # The same series the next day (2026-11-28): the writes' growth rested on the first
    # day's one-client run and does not come back.
    busy = BusyGrowthFit().fit(read_records([LOAD_RUNS.parent / "load-runs-repeat"]))
    assert min(busy.utilisation_) < 0.25 and max(busy.utilisation_) > 0.85
    assert busy.growth_by_operation_["write"] < 0.1 and min(busy.leave_one_out_by_operation_["write"].values()) == 0
    assert busy.growth_by_operation_["read"] < 0.01
    assert busy.growth_fitted_ < 0.01 and busy.busy_cpu_growth_ == 0.0
    # Every record says how fast the machine was: the same cores as the day before.
    assert_probed_on_these_cores(LOAD_RUNS.parent / "load-runs-repeat")


def _load_record(clients: int, utilisation: float, costs: dict[str, float]) -> tuple[str, dict]:
    """A run record of one write and one read phase at ``utilisation``, costing
    ``costs[op]`` core-seconds per byte."""
    phases = [{"iteration": 0, "phase": op, "op": op, "bytes": 1 << 26} for op in costs]
    by_phase = [
        {"iteration": 0, "phase": op, "cpu_utilisation": utilisation, "cpu_busy_s": cost * (1 << 26)}
        for op, cost in costs.items()
    ]
    testbed = {"file_system": "moosefs", "servers": 6, "goal": 2, "cpu_busy_s": 1.0, "cpu_by_phase": by_phase}
    return f"c{clients}.json", {"status": "ok", "backend": "local", "phases": phases, "testbed": testbed}


def test_a_growth_is_kept_only_where_every_run_and_every_operation_support_it():
    loads = (0.2, 0.4, 0.7, 0.9)
    growing = [
        _load_record(index, u, {"write": 5e-8 * (1 + 0.5 * u), "read": 3e-8 * (1 + 0.5 * u)})
        for index, u in enumerate(loads)
    ]
    fit = BusyGrowthFit().fit(growing)
    assert fit.identified_ and fit.operations_agree_ and fit.held_ == "kept"
    assert fit.busy_cpu_growth_ == pytest.approx(0.5, rel=1e-3)
    assert all(value == pytest.approx(0.5, rel=1e-3) for value in fit.leave_one_out_.values())
    assert fit.growth_by_operation_ == pytest.approx({"write": 0.5, "read": 0.5}, rel=1e-3)
    # One cheap run at low load makes a growth that leaving it out takes away.
    cheap = [_load_record(index, u, {"write": 5e-8 * (0.9 if index == 0 else 1.0)}) for index, u in enumerate(loads)]
    fit = BusyGrowthFit().fit(cheap)
    assert fit.growth_fitted_ > 0.05 and not fit.identified_ and fit.busy_cpu_growth_ == 0.0
    assert fit.leave_one_out_["c0.json"] == 0.0
    # Writes that grow and reads that do not: the common growth survives every run left
    # out, but neither operation admits it.
    split = [_load_record(index, u, {"write": 5e-8 * (1 + 0.6 * u), "read": 3e-8}) for index, u in enumerate(loads)]
    fit = BusyGrowthFit().fit(split)
    assert fit.identified_ and not fit.operations_agree_ and fit.busy_cpu_growth_ == 0.0
    assert fit.held_ == "not kept: the operations, each fitted alone, do not admit one growth (0 used)"
    assert fit.growth_by_operation_ == pytest.approx({"write": 0.6, "read": 0.0}, abs=1e-3)
    # The calibration runs are then divided by 1 + growth x their utilisation, which a
    # record must then give.
    runs = read_records([CALIBRATION_RUNS])
    plain, divided = HostCpuFit().fit(runs), HostCpuFit(busy_cpu_growth=0.5).fit(runs)
    assert divided.write_cpu_s_per_byte_ < plain.write_cpu_s_per_byte_ / 1.1
    assert divided.busy_label_ == "core-s on an idle machine"
    unknown = json.loads(json.dumps(runs[0][1]))
    del unknown["testbed"]["cpu_utilisation"]
    with pytest.raises(SimfsError, match="u.json: testbed.cpu_utilisation: expected a finite number, got None"):
        HostCpuFit(busy_cpu_growth=0.5).fit([("u.json", unknown), *runs[1:]])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cpu_busy_s", None, r"c0.json: testbed.cpu_by_phase\[0\].cpu_busy_s: expected a finite number, got None"),
        ("cpu_utilisation", "high", r"testbed.cpu_by_phase\[0\].cpu_utilisation: expected a finite number, got 'high'"),
        ("cpu_utilisation", 1.5, r"testbed.cpu_by_phase\[0\].cpu_utilisation: expected a share of the cores, 0 to 1"),
        ("phase", "reread", r"testbed.cpu_by_phase\[0\]: iteration 0, phase 'reread' is not a phase of the record"),
    ],
)
def test_each_phase_cpu_entry_is_checked_field_by_field(field, value, message):
    origin, record = _load_record(0, 0.5, {"write": 5e-8})
    record["testbed"]["cpu_by_phase"][0][field] = value
    with pytest.raises(SimfsError, match=message):
        BusyGrowthFit().fit([(origin, record)])


def test_the_profile_growth_reaches_the_shared_host():
    idle = simfs.load_system("testbed-moosefs", {"chunkserver.count": 8, "moosefs.goal": 2})
    busy = simfs.load_system(
        "testbed-moosefs", {"chunkserver.count": 8, "moosefs.goal": 2, "host.busy_cpu_growth": 0.5}
    )
    assert busy.shared_host.busy_cpu_growth == 0.5
    assert busy.shared_host.ceiling_Bps("write", 2) == pytest.approx(idle.shared_host.ceiling_Bps("write", 2) / 1.5)


def test_the_fit_refuses_what_cannot_identify_it(tmp_path, capsys):
    records = read_records([CALIBRATION_RUNS])
    with pytest.raises(SimfsError, match="do not identify"):
        HostCpuFit().fit(records[:3])
    older = json.loads(json.dumps(records[0][1]))
    older["testbed"]["goal"] = None  # as a testbed of an older simfs is recorded now
    with pytest.raises(SimfsError, match="testbed.goal not recorded"):
        HostCpuFit().fit([("older.json", older)])
    plain = dict(records[0][1])
    plain.pop("testbed")
    with pytest.raises(SimfsError, match="not a testbed run record"):
        HostCpuFit().fit([("plain.json", plain)])
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"simfs: {bad}:1: not a run record")


def test_calibration_runs_name_their_testbed():
    for path in sorted(CALIBRATION_RUNS.glob("*.json")):
        testbed = json.loads(path.read_text())["testbed"]
        assert testbed["file_system"] == "moosefs" and testbed["clients"] == 1
        assert testbed["cpu_busy_s"] > 0 and testbed["cpu_window_s"] > 0


@pytest.mark.parametrize("block", ["64m", "128m", "256m"])
def test_files_written_at_once_put_their_new_chunks_on_distinct_servers(block):
    # Two writers on 4 chunkservers with goal 2: each chunk takes two servers, and the
    # chunks the two files create at the same time take the other two (the master's
    # turn), whatever the files' sizes: every server link carries one copy stream.
    workload = f"ior -a POSIX -F -t 1m -b {block} -w -e"
    overrides = {"client.count": 2, "chunkserver.count": 4, **NO_HOST}
    result = simfs.simulate("testbed-moosefs", workload, nodes=2, overrides=overrides)
    assert phase(result, "write")["agg_bw_Bps"] == pytest.approx(2 * LINK_Bps, rel=0.01)


def test_a_testbed_record_is_predicted_for_the_cluster_it_ran_on():
    # The record says 8 chunkservers, 4 clients, goal 2; the profile's default shape is
    # 2 and 2: the prediction must be for the record's (CPU-bound writes, link-bound reads).
    from simfs.ingest import read_measurements
    from simfs.validate.live import compare_live

    record = ROOT / "validation" / "testbed" / "runs" / "servers-s8" / "c4.json"
    settings = json.loads(read_measurements(record)["settings"].iloc[0])
    assert settings == {
        "client.count": 4,
        "chunkserver.count": 8,
        "moosefs.goal": 2,
        "fabric.port_buffer_bytes": 131072,
    }
    table = compare_live([record], "testbed-moosefs").set_index("phase")
    host = simfs.load_system("testbed-moosefs").shared_host
    assert table.loc["write", "predicted"] == pytest.approx(host.ceiling_Bps("write", copies=2), rel=0.01)
    assert table.loc["read", "predicted"] == pytest.approx(4 * LINK_Bps, rel=0.01)


def test_the_metadata_fit_recovers_known_costs():
    # Requests of a known CPU time, worked by 1.25 cores at once, after a 20 us round
    # trip; a create item is a create (0.25 ms) and a close (0.15 ms).
    parallelism, round_trip, fixed = 1.25, 2e-5, 0.2
    cpu = {"create": 0.25e-3 + 0.15e-3, "stat": 0.15e-3, "remove": 0.3e-3}
    walls = {op: {"create": 2, "stat": 1, "remove": 1}[op] * round_trip + cpu[op] / parallelism for op in cpu}
    records = [
        (f"n{items}.json", mdtest_record(items, walls, fixed + items * sum(cpu.values()))) for items in (500, 2000)
    ]
    fit = MetadataCpuFit(round_trip).fit(records)
    assert fit.request_parallelism_ == pytest.approx(parallelism)
    assert fit.fixed_cpu_s_ == pytest.approx(fixed)
    assert fit.cpu_s_per_request_ == pytest.approx(
        {"create": 0.25e-3, "close": 0.15e-3, "stat": 0.15e-3, "remove": 0.3e-3}
    )
    assert fit.rate_per_s("remove") == pytest.approx(2 / 0.3e-3)
    assert "request_parallelism = 1.250" in fit.table()


def test_the_metadata_fit_finds_a_wait_off_the_cores():
    # The Intel Xeon's case: each request's work on one core, one step after another,
    # and 50 us of waiting off the cores where the round trip measures 12 us.  The busy
    # time then falls short of the wall time beyond the round trips (a parallelism under
    # 1), and the fit reads the runs with the work on one core and the wait fitted.
    wait, fixed = 5e-5, 0.15
    cpu = {"create": 0.35e-3 + 0.19e-3, "stat": 0.19e-3, "remove": 0.4e-3}
    walls = {op: {"create": 2, "stat": 1, "remove": 1}[op] * wait + cpu[op] for op in cpu}
    records = [
        (f"n{items}.json", mdtest_record(items, walls, fixed + items * sum(cpu.values()))) for items in (1000, 4000)
    ]
    fit = MetadataCpuFit(ROUND_TRIP_S).fit(records)
    assert fit.latency_fitted_ and fit.latency_s_ == pytest.approx(wait)
    assert fit.request_parallelism_ == 1 and fit.fixed_cpu_s_ == pytest.approx(fixed)
    assert fit.cpu_s_per_request_ == pytest.approx(
        {"create": 0.35e-3, "close": 0.19e-3, "stat": 0.19e-3, "remove": 0.4e-3}
    )
    assert max(abs(residual) for residual in fit.residuals_) < 1e-9
    assert "metadata_latency_s = 5e-05 (fitted" in fit.table()
    # Runs whose phases differ in size can put the wait below the measured round trip:
    # the work would then be on fewer than one core, which nothing explains.
    uneven = []
    for items, busy in (((2632, 2957, 3746), 1.406), ((1712, 1259, 1730), 0.8387), ((3256, 2705, 2879), 2.613)):
        record = mdtest_record(1, walls, busy)
        for entry, count, wall in zip(record["phases"], items, (0.3568e-3, 0.1958e-3, 0.2781e-3)):
            entry["ops"], entry["makespan_s"] = count, count * wall
        uneven.append((f"u{items[0]}.json", record))
    with pytest.raises(SimfsError, match="under one core"):
        MetadataCpuFit(ROUND_TRIP_S).fit(uneven)
    # A wait so long that a cheap phase (the stats here) would have no work left.
    lopsided = {"create": 1e-3, "stat": 1e-4, "remove": 1e-3}
    records = [(f"n{n}.json", mdtest_record(n, lopsided, 0.1 + n * 0.9e-3)) for n in (1000, 4000)]
    with pytest.raises(SimfsError, match="the fitted wait off the cores, 300 us a request, leaves no time"):
        MetadataCpuFit(ROUND_TRIP_S).fit(records)


def test_the_xeon_metadata_cases_hold_the_fit_of_the_xeon_runs():
    fit = MetadataCpuFit(ROUND_TRIP_S).fit(read_records([ROOT / "calibration" / "testbed" / "xeon" / "metadata-runs"]))
    assert fit.latency_fitted_ and fit.request_parallelism_ == 1
    cases = sorted((ROOT / "validation" / "testbed" / "xeon").glob("xeon-moosefs-metadata-*.toml"))
    assert [case.stem for case in cases] == [f"xeon-moosefs-metadata-{op}" for op in ("create", "remove", "stat")]
    for case in cases:
        settings = tomllib.loads(case.read_text())["case"]["settings"]
        assert settings["master.request_parallelism"] == 1.0, case.name
        assert settings["moosefs.metadata_latency_s"] == pytest.approx(fit.latency_s_, rel=2e-3), case.name
        for op in ("create", "close", "stat", "remove"):
            assert settings[f"master.{op}_per_s"] == pytest.approx(fit.rate_per_s(op), rel=1e-4), (case.name, op)
        assert settings["master.open_per_s"] == settings["master.stat_per_s"], case.name
    # The built-in profile lists the same for runs recorded on the Xeon (validate --live).
    (listed,) = load_profile("testbed-moosefs").data["host"]["other_cpu"]
    assert {f"master.{key}": value for key, value in listed["master"].items()} | {
        "moosefs.metadata_latency_s": listed["moosefs"]["metadata_latency_s"]
    } == {key: value for key, value in settings.items() if key.startswith(("master.", "moosefs."))}


def test_the_metadata_fit_refuses_what_it_cannot_read(tmp_path, capsys):
    walls = {"create": 4e-4, "stat": 2e-4, "remove": 3e-4}
    one = mdtest_record(1000, walls, 1.2)
    with pytest.raises(SimfsError, match="do not identify"):
        MetadataCpuFit(ROUND_TRIP_S).fit([("a.json", one), ("b.json", one)])
    # Several processes are read for GlusterFS's directory lock only.
    with pytest.raises(SimfsError, match="2 processes: runs of several processes are read for GlusterFS's"):
        MetadataCpuFit(ROUND_TRIP_S).fit([("a.json", mdtest_record(1000, walls, 1.2, ranks=2))])
    ior = read_records([CALIBRATION_RUNS])[0]
    with pytest.raises(SimfsError, match="tool 'ior'"):
        MetadataCpuFit(ROUND_TRIP_S).fit([ior])
    no_stat = mdtest_record(1000, {"create": 4e-4, "remove": 3e-4}, 1.2)
    with pytest.raises(SimfsError, match="no stat phase"):
        MetadataCpuFit(ROUND_TRIP_S).fit([("c.json", no_stat)])
    # Busy time that grows by more than two cores' worth per wall second: no parallelism
    # within 1..2 cores explains it.
    records = [(f"n{n}.json", mdtest_record(n, walls, n * 3 * sum(walls.values()))) for n in (500, 1000)]
    with pytest.raises(SimfsError, match="outside 1 to 2"):
        MetadataCpuFit(ROUND_TRIP_S).fit(records)
    sized = [(f"n{n}.json", mdtest_record(n, walls, n * 1.2 * sum(walls.values()))) for n in (500, 1000)]
    with pytest.raises(SimfsError, match="leaves no time"):
        MetadataCpuFit(1e-3).fit(sized)
    bad = tmp_path / "bad.json"
    bad.write_text("[")
    assert metadata_main([str(bad), "--round-trip-s", "1e-5"]) == 2
    assert capsys.readouterr().err.startswith(f"simfs: {bad}:1: not a run record")


def test_the_profile_master_is_the_metadata_fit_of_the_committed_runs():
    fit = MetadataCpuFit(ROUND_TRIP_S).fit(read_records([METADATA_RUNS]))
    profile = load_profile("testbed-moosefs").data
    master = profile["master"]
    assert master["cores"] == fit.cores_ == 2
    assert master["request_parallelism"] == pytest.approx(fit.request_parallelism_, rel=1e-3)
    for op in ("create", "close", "stat", "remove"):
        assert master[f"{op}_per_s"] == pytest.approx(fit.rate_per_s(op), rel=1e-4), op
    assert profile["moosefs"]["metadata_latency_s"] == ROUND_TRIP_S
    # The fit explains every run's busy time to a few percent.
    for busy, residual in zip(fit.busy_s_, fit.residuals_):
        assert abs(residual) < 0.05 * busy


def test_metadata_rates_follow_the_shared_cores():
    system = simfs.load_system("testbed-moosefs")
    md, round_trip = system.metadata, system.io.metadata_latency_s
    create_cpu = md.demand_s("create") + md.demand_s("close")
    # One process: two round trips and a created file's CPU time at request_parallelism
    # cores; the bottleneck is that CPU work.
    lone = phase(simfs.simulate("testbed-moosefs", MDTEST, nodes=1), "file create")
    assert lone["ops_per_s"] == pytest.approx(1 / (2 * round_trip + create_cpu / md.request_parallelism), rel=1e-6)
    assert lone["bottleneck"] == "host-cpu"
    # Eight processes: the two cores are the limit, cores / CPU time per created file.
    many = phase(simfs.simulate("testbed-moosefs", MDTEST, nodes=8, overrides={"client.count": 8}), "file create")
    bound = md.cores / create_cpu
    assert 0.97 * bound < many["ops_per_s"] <= bound * (1 + 1e-9)
    assert many["bottleneck"] == "host-cpu"
