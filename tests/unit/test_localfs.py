"""The local file-system model, live validation inputs, and the IOR options added for the
runner as the simulator sees them."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

import simfs
from simfs.cli import main
from simfs.errors import ProfileError, SimfsError, WorkloadError
from simfs.validate import load_case

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "calibration" / "live"
TMPFS = str(LIVE / "vm-tmpfs.toml")
DISK = str(LIVE / "vm-disk.toml")


def test_tmpfs_writes_and_reads_are_the_cores_copy_shared_by_more_processes():
    system = simfs.load_system(TMPFS)
    copy_write, copy_read = system.client.copy_write_Bps, system.client.copy_read_Bps
    per_call = system.client.call_overhead_s
    workload = "ior -F -t 1m -b 64m -w -r"
    for ppn, cores_used in ((1, 1), (2, 2), (8, 2)):
        phases = simfs.simulate(TMPFS, workload, ppn=ppn).phases.set_index("phase")
        for op, copy in (("write", copy_write), ("read", copy_read)):
            one_core = 1 / (1 / copy + per_call / (1 << 20))
            # All bytes on `cores_used` cores (metadata round trips add microseconds).
            assert phases.loc[op, "agg_bw_Bps"] == pytest.approx(cores_used * one_core, rel=0.01), (op, ppn)


def test_direct_io_costs_a_round_trip_plus_the_transfer_per_request():
    system = simfs.load_system(DISK)
    latency, device = system.io.rpc_latency_s, system.target.drive.write_Bps
    one = simfs.simulate(DISK, "ior -F -t 64k -b 16m -w --posix.odirect", ppn=1).phases.iloc[0]
    request = 65536 / (latency + 65536 / device)
    assert one["agg_bw_Bps"] == pytest.approx(request, rel=0.01)
    many = simfs.simulate(DISK, "ior -F -t 4m -b 64m -w --posix.odirect", ppn=8).phases.iloc[0]
    assert many["agg_bw_Bps"] == pytest.approx(device, rel=0.01)  # the device is shared


def test_reads_of_data_the_run_wrote_come_from_the_page_cache_when_they_fit():
    system = simfs.load_system(DISK)
    assert system.cached_read(1 << 30, direct=False)
    assert not system.cached_read(1 << 30, direct=True)
    assert not system.cached_read(system.client.memory_bytes, direct=False)
    cached = simfs.simulate(DISK, "ior -F -t 1m -b 64m -w -r", ppn=1).phases.set_index("phase")
    assert cached.loc["read", "bottleneck"] == "client-core"
    assert not simfs.load_system("crtdc-lfs3").cached_read(1, direct=False)


def test_a_buffered_write_is_bound_by_the_copy_unless_it_waits_for_the_write_back():
    # 64 MiB fit under the dirty limit: the ranks copy into the page cache at a core's
    # rate and close; the write-back runs on at the device's rate, behind them.
    system = simfs.load_system(DISK)
    assert system.client.copy_write_Bps > system.target.drive.write_Bps
    buffered = simfs.simulate(DISK, "ior -F -t 1m -b 64m -w", ppn=1).phases.iloc[0]
    assert buffered["agg_bw_Bps"] > system.target.drive.write_Bps  # faster than the device takes it
    assert buffered["bottleneck"] == "client-core"
    synced = simfs.simulate(DISK, "ior -F -t 1m -b 64m -w -e", ppn=1).phases.iloc[0]
    assert synced["agg_bw_Bps"] < system.target.drive.write_Bps
    assert synced["bottleneck"] == "device"


def test_tmpfs_refuses_o_direct_and_a_local_profile_refuses_rpc_mechanisms(tmp_path):
    with pytest.raises(WorkloadError, match="O_DIRECT"):
        simfs.simulate(TMPFS, "ior -F -t 1m -b 4m -w --posix.odirect")
    text = Path(DISK).read_text().replace("rpc_window = false", "rpc_window = true")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(ProfileError, match="mechanisms.rpc_window"):
        simfs.load_system(str(bad))


def test_a_local_profile_refuses_a_fabric_it_would_ignore():
    with pytest.raises(ProfileError, match="fabric: a local file system has no network fabric"):
        simfs.load_system(DISK, {"fabric.blocking_factor": 2})


def test_intra_phase_barriers_and_the_reorder_distance():
    workload = simfs.parse_workload("ior -F -t 1m -b 4m -w -r -C -Q 2 -g")
    assert workload.intra_phase_barriers and workload.phases[1].task_offset == 2
    plain = simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 64m -w -r -C", nodes=4).phases
    synced = simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 64m -w -r -C -g", nodes=4).phases
    # The MDS serves the four opens (and closes) one after another, so without -g the
    # ranks start their data that far apart; with -g they wait for the last.  Beyond that
    # queue the barriers cost nothing: the phases differ by less than it.
    mds = simfs.load_system("crtdc-lfs3").metadata
    queue = 4 / mds.create_per_s + 4 / mds.open_per_s + 4 / mds.close_per_s
    differences = (synced["time_s"] - plain["time_s"]).abs()
    assert (differences < queue).all() and (differences > 0).any()


def test_a_case_takes_its_points_from_run_records(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("tmpfs-buffered-np1.json", "tmpfs-buffered-np2.json"):
        shutil.copy(ROOT / "validation" / "live" / "runs" / name, runs)
    record = json.loads((runs / "tmpfs-buffered-np2.json").read_text())
    case = tmp_path / "case.toml"
    case.write_text(
        f"""[case]
name = "t"
system = "{TMPFS}"
workload = "{record["workload"]}"
phase = "write"
metric = "agg_bw"
split = "held-out"
tolerance = 0.2
source = "test"
curve = "ppn=1,2"
data = "runs/"
"""
    )
    points = load_case(case).points
    assert [p.settings for p in points] == [{"nodes": 1, "ppn": 1}, {"nodes": 1, "ppn": 2}]
    writes = sorted(p["bandwidth_Bps"] for p in record["phases"] if p["op"] == "write")
    assert points[1].value == pytest.approx(writes[len(writes) // 2])  # the median of 5


def test_validate_live_prints_predicted_against_measured(capsys):
    run = str(ROOT / "validation" / "live" / "runs" / "disk-direct-np4.json")
    assert main(["validate", "--live", run, "--system", str(LIVE / "vm-disk-fitted.toml")]) == 0
    out = capsys.readouterr().out
    assert "disk-direct-np4.json" in out and "error_pct" in out and "2 phases" in out
    assert main(["validate", "--live", run]) == 2


def test_validate_live_warns_when_the_run_is_of_another_file_system():
    from simfs.validate.live import LiveMismatchWarning, compare_live

    run = LIVE / "vm-disk" / "disk-buffered.json"  # ext4, buffered (tmpfs refuses O_DIRECT)
    for other, models in ((LIVE / "vm-tmpfs-fitted.toml", "local (tmpfs)"), ("crtdc-lfs3", "lustre")):
        with pytest.warns(LiveMismatchWarning, match=rf"the run was on ext4 .* models {re.escape(models)}"):
            compare_live([run], str(other))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LiveMismatchWarning)
        compare_live([run], str(LIVE / "vm-disk-fitted.toml"))


def test_validate_live_warns_when_the_run_is_of_another_cpu(tmp_path):
    from simfs.validate.live import LiveMismatchWarning, compare_live

    record = json.loads((LIVE / "vm-disk" / "disk-buffered.json").read_text())
    assert record["machine"]["cpu_model"] == "AMD EPYC"  # as the profiles' machine.recorded
    record["machine"]["cpu_model"] = "Intel(R) Xeon(R) Processor"  # this VM on 2026-11-28
    moved = tmp_path / "disk-buffered.json"
    moved.write_text(json.dumps(record))
    with pytest.warns(LiveMismatchWarning, match=r"on Intel\(R\) Xeon\(R\) Processor .* measured on AMD EPYC"):
        compare_live([moved], str(LIVE / "vm-disk-fitted.toml"))


def test_validate_live_says_when_the_run_shared_its_machine(tmp_path):
    from simfs.validate.live import LiveMismatchWarning, compare_live

    record = json.loads((LIVE / "vm-disk" / "disk-buffered.json").read_text())
    # 10 s on 2 cores, of which a niced job took 6 core-s (recorded since 2026-11-28).
    record["machine"]["load"] = {
        "cpu_window_s": 10.0,
        "cpus": 2,
        "cpu_busy_s": 18.0,
        "cpu_nice_s": 6.0,
        "cpu_steal_s": 0.0,
    }
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(record))
    with pytest.warns(LiveMismatchWarning, match=r"shared during the run: niced processes used 6.0 core-s"):
        compare_live([shared], str(LIVE / "vm-disk-fitted.toml"))


def test_a_run_record_of_another_format_is_refused(tmp_path):
    # "simfs_run": 99 was read as if it were format 1.
    from simfs.ingest.simfs_run import READ_FORMAT
    from simfs.runner.output import RECORD_FORMAT
    from simfs.validate.live import compare_live

    assert READ_FORMAT == RECORD_FORMAT  # what the runner writes is what is read
    record = json.loads((LIVE / "vm-disk" / "disk-buffered.json").read_text())
    record["simfs_run"] = 99
    later = tmp_path / "later.json"
    later.write_text(json.dumps(record))
    with pytest.raises(SimfsError, match=r"later\.json: simfs_run: a record of format 1 expected, got 99"):
        compare_live([later], str(LIVE / "vm-disk-fitted.toml"))
