"""The live runner: real files, real processes, real MPI ranks.

Sizes are small (a few MiB) so the suite stays fast; what is checked is the arithmetic
(IOR's makespan, the late rank, the stonewall, the fsync inside the close), the output
shapes (parsed by simfs's own IOR/mdtest/bonnie++ readers) and that every way a run can
fail leaves the target as it was.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simfs.errors import SimfsError, WorkloadError
from simfs.ingest import bonnie, ior, mdtest, read_measurements
from simfs.ingest.context import FileContext
from simfs.runner import measure, plan_workload, write_outputs
from simfs.runner.phase_watch import PHASE_SOCKET_ENV, PhaseListener, PhaseMark, phase_notifier
from simfs.runner.run import block_placement
from simfs.runner.target import footprint_bytes
from simfs.workloads import parse_workload

IOR_SMALL = "ior -a POSIX -F -t 64k -b 2m -w -r -C -e"


def _run(command: str, directory: Path, processes: int = 2, **options):
    out = io.StringIO()
    measured = measure(command, directory, processes=processes, out=out, **options)
    return measured, out.getvalue()


def _left(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- output and arithmetic ------------------------------------------------------------------
def test_ior_run_prints_ior_tables_that_the_ior_reader_parses(tmp_path):
    measured, text = _run(IOR_SMALL + " -i 2", tmp_path)
    assert measured.status == "ok" and measured.exit_code == 0
    assert _left(tmp_path) == []  # the run directory is gone
    rows = ior.parse_text(text, "run.txt", FileContext())
    assert [(m.phase, m.iteration) for m in rows] == [("write", 0), ("read", 0), ("write", 1), ("read", 1)]
    by_iteration = {(r.op, r.iteration): r for r in measured.results}
    for m in rows:
        # The table prints MiB/s to two decimals; the record keeps B/s.
        assert m.value == pytest.approx(by_iteration[(m.phase, m.iteration)].bandwidth_Bps, rel=1e-4)
    assert "Max Write:" in text and "MB/sec" in text and "Summary of all tests:" in text


def test_bandwidth_is_all_bytes_over_first_open_to_last_close(tmp_path):
    measured, _ = _run("ior -F -t 64k -b 1m -w", tmp_path, processes=3)
    (write,) = measured.results
    records = [r for r in measured.records if r.op == "write"]
    span = max(r.close_end for r in records) - min(r.open_start for r in records)
    assert write.bytes == 3 * (1 << 20)
    assert write.makespan_s == pytest.approx(span)
    assert write.bandwidth_Bps == pytest.approx(3 * (1 << 20) / span)


def test_phase_boundaries_reach_the_caller_in_order_while_the_ranks_wait(tmp_path):
    seen = []

    def on_phase(event, record):
        seen.append((event, None if record is None else (record.iteration, record.phase)))
        if event == "start" and len(seen) > 1:
            time.sleep(0.2)  # the ranks wait in the barrier meanwhile

    measured, _ = _run(IOR_SMALL + " -i 2", tmp_path, on_phase=on_phase)
    assert measured.status == "ok"
    assert seen == [
        ("start", None),
        ("end", (0, "write")),
        ("start", None),
        ("end", (0, "read")),
        ("start", None),
        ("end", (1, "write")),
        ("start", None),
        ("end", (1, "read")),
    ]
    # A lower bound, whatever the machine's speed: no rank opened its file of the next
    # phase before the call at that phase's start returned.
    phases = [(0, "write"), (0, "read"), (1, "write"), (1, "read")]
    for before, after in zip(phases, phases[1:]):
        ended = max(r.close_end for r in measured.records if (r.iteration, r.phase) == before)
        opened = min(r.open_start for r in measured.records if (r.iteration, r.phase) == after)
        assert opened - ended >= 0.2


def test_barriers_inside_a_phase_are_not_phase_boundaries(tmp_path):
    # IOR -g adds a barrier after the opens and one before the closes.
    seen = []
    measured, _ = _run(IOR_SMALL + " -g", tmp_path, on_phase=lambda event, record: seen.append(event))
    assert measured.status == "ok" and seen == ["start", "end", "start", "end"]


def test_a_phase_a_rank_failed_in_ends_as_failed(tmp_path, monkeypatch):
    # The fault hook fails rank 1's third write (ENOSPC); the phase ends at its barrier.
    monkeypatch.setenv("SIMFS_RUNNER_FAULT", "1:write:2:ENOSPC")
    seen = []
    measured, _ = _run("ior -F -t 64k -b 1m -w -r", tmp_path, on_phase=lambda event, record: seen.append(event))
    assert measured.status != "ok" and seen[:2] == ["start", "failed"] and "end" not in seen


def test_an_unsynchronised_run_has_no_phase_boundaries(tmp_path):
    # bonnie++ ranks meet only at the start and report at the end: no phase has barriers.
    seen = []
    measured, _ = _run("bonnie++ -d /tmp -s 2m:64k -n 0 -f", tmp_path, on_phase=lambda *args: seen.append(args))
    assert measured.status == "ok" and seen == []


def test_a_rank_that_starts_late_lengthens_the_phase(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMFS_RUNNER_DELAY", "1:0.4")
    measured, _ = _run("ior -F -t 64k -b 1m -w", tmp_path)
    (write,) = measured.results
    late = next(r for r in measured.records if r.rank == 1)
    early = next(r for r in measured.records if r.rank == 0)
    # The hook worked: the ranks' clock starts at rank 0's reading before the first
    # barrier, and rank 1 slept 0.4 s after leaving it, so its open comes 0.4 s or more in.
    assert late.open_start >= 0.4
    # Identities, not timings (a loaded machine may delay either rank by any amount):
    # the phase runs from the first open to the last close, so a late rank's start is
    # inside it, while each rank's own rate leaves the other's time out.
    first_open = min(early.open_start, late.open_start)
    last_close = max(early.close_end, late.close_end)
    assert write.makespan_s == pytest.approx(last_close - first_open)
    assert write.makespan_s >= (late.close_end - late.open_start) + (late.open_start - first_open) - 1e-9
    assert write.bandwidth_Bps == pytest.approx((early.bytes + late.bytes) / write.makespan_s)
    own = [r.bytes / (r.close_end - r.open_start) for r in (early, late)]
    assert write.sum_of_ranks_Bps == pytest.approx(sum(own))
    assert write.sum_of_ranks_Bps >= write.bandwidth_Bps * (1 - 1e-9)  # each own time <= the makespan


def test_fsync_is_inside_the_timed_close(tmp_path, monkeypatch):
    real_fsync = os.fsync
    marks = tmp_path / "fsync-calls"
    marks.mkdir()

    def slow_fsync(fd):  # the ranks are forked: they inherit this, and leave a mark
        time.sleep(0.3)
        (marks / f"{os.getpid()}-{fd}-{time.monotonic_ns()}").touch()
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    with_fsync, _ = _run("ior -F -t 64k -b 1m -w -e", tmp_path, processes=1)
    synced_calls = len(list(marks.iterdir()))
    without, _ = _run("ior -F -t 64k -b 1m -w", tmp_path, processes=1)
    (synced,) = with_fsync.records
    # Lower bounds only (a sleep lasts at least its time; a loaded machine adds, never
    # takes away): the fsync is inside the timed close and the phase.
    assert synced_calls >= 1
    assert synced.close_end - synced.close_start >= 0.3
    assert with_fsync.results[0].makespan_s >= 0.3
    assert len(list(marks.iterdir())) == synced_calls  # without -e, no fsync at all


def test_stonewall_stops_at_the_deadline_and_wear_out_evens_the_ranks(tmp_path, monkeypatch):
    # As in IOR, each rank's deadline runs from the start of its own transfers.  Each
    # transfer waits 1 ms first (the runner's pace hook), so the 16,384 transfers of the
    # block take at least 16 s on any machine and the 1 s deadline always falls inside it.
    monkeypatch.setenv("SIMFS_RUNNER_PACE", "0.001")
    command = "ior -F -t 1k -b 16m -w -D 1"
    walled, _ = _run(command, tmp_path)
    for record in walled.records:
        assert 0 < record.pairs_at_deadline <= 1000
        # Not before the deadline; how long after it depends on the machine's load.
        assert record.xfer_end - record.xfer_start >= 1.0
    worn, text = _run(command + " -O stoneWallingWearOut=1", tmp_path)
    counts = {r.rank: r.ops for r in worn.records}
    at_deadline = {r.rank: r.pairs_at_deadline for r in worn.records}
    assert counts[0] == counts[1] == max(at_deadline.values())
    assert min(at_deadline.values()) <= counts[0]
    assert "stonewalling pairs accessed min:" in text


def test_offsets_follow_ior_layout():
    from simfs.workloads.spec import transfer_offsets

    def offsets(command: str, iteration: int = 0) -> list[int]:
        count, generated = transfer_offsets(parse_workload(command).phases[0], 1, 3, iteration)
        listed = list(generated)
        assert len(listed) == count
        return listed

    # 3 ranks, a shared file, 2 segments of 1 MiB blocks in 256 KiB transfers: rank 1's
    # segment s starts at (s * 3 + 1) MiB.
    kib = 1024
    assert offsets("ior -t 256k -b 1m -s 2 -w") == [
        (s * 3 + 1) * 1024 * kib + i * 256 * kib for s in range(2) for i in range(4)
    ]
    assert offsets("ior -F -t 256k -b 1m -s 2 -w") == [i * 256 * kib for i in range(8)]
    order = offsets("ior -F -t 256k -b 1m -s 2 -w -z")
    assert sorted(order) == offsets("ior -F -t 256k -b 1m -s 2 -w") and order != sorted(order)
    assert order == offsets("ior -F -t 256k -b 1m -s 2 -w -z") != offsets("ior -F -t 256k -b 1m -s 2 -w -z", 1)


def test_random_offsets_and_shared_file_write_every_byte_once(tmp_path):
    measured, _ = _run("ior -t 64k -b 1m -s 2 -w -r -z", tmp_path, keep=True)
    assert measured.status == "ok"
    run_dir = Path(measured.record["run_directory"])
    assert run_dir.exists() and measured.record["kept"]
    shutil.rmtree(run_dir)
    assert {r.bytes for r in measured.records} == {2 << 20}


def test_mdtest_dd_and_bonnie_outputs_parse(tmp_path):
    measured, text = _run("mdtest -n 50 -F -u -i 2", tmp_path)
    rates = mdtest.parse(text, "md.txt", FileContext())
    assert [m.phase for m in rates] == ["file_creation", "file_stat", "file_read", "file_removal"]
    assert all(m.value > 0 for m in rates)
    measured, text = _run("dd if=/dev/zero of=out bs=64k count=16 conv=fsync", tmp_path)
    assert text.count("bytes (") == 2 and "16+0 records out" in text
    measured, text = _run("bonnie++ -d /tmp -s 2m:64k -n 0 -f", tmp_path)
    rows = bonnie.parse(text, "b.csv", FileContext())
    assert {m.phase for m in rows} == {"write_block", "rewrite", "read_block"}
    assert _left(tmp_path) == []


def test_mdtest_directories_and_single_steps(tmp_path):
    measured, text = _run("mdtest -n 20 -D -i 2", tmp_path)
    assert [m.phase for m in mdtest.parse(text, "md.txt", FileContext())] == [
        "directory_creation",
        "directory_stat",
        "directory_removal",
    ]
    # A stat-only run creates its items untimed first, and its rate counts only the stats.
    measured, _ = _run("mdtest -n 30 -F -T", tmp_path)
    assert [(r.phase, r.ops) for r in measured.results] == [("file stat", 60)]
    assert _left(tmp_path) == []


def test_read_only_workloads_write_their_data_untimed_first(tmp_path):
    measured, _ = _run("dd if=data of=/dev/null bs=64k count=16", tmp_path)
    assert [r.op for r in measured.results] == ["read"]
    assert measured.results[0].bytes == 2 * 16 * 65536


def test_json_record_and_traces(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    measured, _ = _run("ior -F -t 64k -b 1m -w -r", target, trace_ops=True)
    write_outputs(measured, json_path=tmp_path / "run.json", trace_path=tmp_path / "trace.csv", ops=True)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["simfs_run"] == 1 and record["status"] == "ok"
    assert record["machine"]["target"]["fs_type"] and record["machine"]["cores"] >= 1
    load = record["machine"]["load"]  # what else the machine did meanwhile, to read a miss by
    # The CPU counters tick at 100 Hz: a run shorter than a tick reads a zero window.
    assert len(load["loadavg_at_start"]) == 3 and load["cpu_window_s"] >= 0 and load["runner_nice"] == os.nice(0)
    # busy <= cpus x window in ticks; in seconds the product may round an ulp below (cpus 3, 6, 12).
    assert load["cpus"] == os.cpu_count() and 0 <= load["cpu_busy_s"] <= load["cpus"] * load["cpu_window_s"] * (
        1 + 1e-9
    )
    assert 0 <= load["cpu_nice_s"] + load["cpu_steal_s"] <= load["cpu_busy_s"]
    assert record["workload"] == "ior -F -t 64k -b 1m -w -r"
    trace = (tmp_path / "trace.csv").read_text().splitlines()
    assert trace[0].startswith("rank,host,iteration,phase,op,open_start")
    assert len(trace) == 1 + 2 * 2  # ranks x phases
    ops = (tmp_path / "trace.ops.csv").read_text().splitlines()
    assert len(ops) == 1 + 2 * 2 * 16  # ranks x phases x transfers
    frame = read_measurements(tmp_path / "run.json")  # issue 3's readers take the record
    assert sorted(frame["phase"]) == ["read", "write"] and set(frame["ppn"]) == {2}


def test_parquet_traces_hold_what_the_csv_holds(tmp_path):
    import pandas as pd

    target = tmp_path / "target"
    target.mkdir()
    measured, _ = _run("ior -F -t 64k -b 1m -w -r", target, trace_ops=True)
    write_outputs(measured, trace_path=tmp_path / "trace.csv", ops=True)
    write_outputs(measured, trace_path=tmp_path / "trace.parquet", ops=True)
    for stem in ("trace", "trace.ops"):
        from_csv = pd.read_csv(tmp_path / f"{stem}.csv")
        from_parquet = pd.read_parquet(tmp_path / f"{stem}.parquet")
        assert list(from_parquet.columns) == list(from_csv.columns)
        pd.testing.assert_frame_equal(from_parquet, from_csv, check_dtype=False)
    assert measured.record["trace_ops"] == str(tmp_path / "trace.ops.parquet")
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no partial files left


def test_parquet_without_pyarrow_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    from simfs.cli import main

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    trace = tmp_path / "ranks.parquet"
    argv = ["measure", "--dir", str(tmp_path), "--np", "1", "--trace", str(trace), "--", "dd", "bs=4k", "count=4"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"simfs: error: --trace {trace}: Parquet needs pyarrow (pip install 'simfs[parquet]'); use .csv"
    )
    assert captured.out == ""  # refused before dd ran (it would have printed its summary)
    assert _left(tmp_path) == []


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (["--json", "same.csv", "--trace", "same.csv"], "--trace {dir}/same.csv: --json writes that file too"),
        (["--json", "t.ops.csv", "--trace", "t.csv", "--trace-ops"], "--trace-ops {dir}/t.ops.csv: --json writes"),
    ],
)
def test_two_outputs_naming_one_file_are_refused_before_the_run(tmp_path, capsys, outputs, message):
    # The record was written over the trace (exit 0, the trace lost).
    from simfs.cli import main

    target = tmp_path / "target"
    target.mkdir()
    named = [str(tmp_path / word) if word.endswith(".csv") else word for word in outputs]
    argv = ["measure", "--dir", str(target), "--np", "1", *named, "--", "dd", "bs=4k", "count=4"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"simfs: error: {message.format(dir=tmp_path)}") and captured.err.count("\n") == 1
    assert captured.out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["target"]


def test_a_rank_stopped_by_an_unexpected_error_names_it(tmp_path, monkeypatch):
    # The buffer's view, kept alive by the exception's traceback, made closing the buffer
    # raise BufferError, which the record named in place of the error that stopped the rank.
    import simfs.runner.rank as rank

    def broken(self, *args, **kwargs):
        raise RuntimeError("a transfer broke")

    monkeypatch.setattr(rank._RankProgram, "_transfers", broken)
    measured, _ = _run("ior -F -t 64k -b 1m -w", tmp_path, processes=1)
    assert measured.record["status"] == "failed"
    assert (
        "RuntimeError: a transfer broke" in measured.record["reason"] and "BufferError" not in measured.record["reason"]
    )
    assert _left(tmp_path) == []


# -- refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("obdfilter-survey size=1024", "not run live"),
        # No NFS load generator in the runner: SPECsfs2008 is simulated only.
        ("specsfs2008 --load 1000", "specsfs2008 is not run live"),
        ("ior -t 1000 -b 4000 --posix.odirect", "multiples of 512"),
        # A typo would run buffered I/O where O_DIRECT was meant; IOR itself refuses it.
        ("ior -t 1m -b 16m -w --posix.odirectt", r"unknown option --posix.odirectt \(did you mean --posix.odirect\?\)"),
        ("mdtest -n 10 --posix.odirekt", r"did you mean --posix.odirect\?"),
        # Hints the runner cannot apply: the run would be of another workload.
        ("ior -t 1m -b 16m -w --posix.gpfs.finegrainwritesharing", "applies no backend hints"),
        ("mdtest -n 10 --dfs.oclass=SX", "applies no backend hints"),
    ],
)
def test_workloads_the_runner_refuses(command, message):
    with pytest.raises(WorkloadError, match=message):
        plan_workload(command)


def test_a_posix_option_far_from_every_known_one_is_a_hint_not_a_typo():
    from simfs.workloads import parse_workload

    # Six edits from --posix.gpfs.hintaccess: GPFS's hints file, noted as any hint.
    notes = parse_workload("ior -t 1m -b 16m -w --posix.gpfs.hintsFile=/etc/hints").notes
    assert any("--posix.gpfs.hintsFile: POSIX backend hints, not modelled" in note for note in notes)


def test_the_runner_takes_posix_odirect_as_its_one_backend_option():
    spec = plan_workload("ior -t 1m -b 16m -w --posix.odirect")
    assert spec.phases[0].direct and spec.options["backend_options"] == ()


def test_refuses_root_missing_and_too_large(tmp_path):
    with pytest.raises(SimfsError, match="refusing to write into /"):
        measure("dd bs=1k count=1", "/", processes=1)
    with pytest.raises(SimfsError, match="no such directory"):
        measure("dd bs=1k count=1", tmp_path / "absent", processes=1)
    with pytest.raises(SimfsError, match="only .* is free"):
        measure("ior -F -t 1m -b 64t -w", tmp_path, processes=2)
    assert _left(tmp_path) == []


def test_footprint_rounds_files_to_blocks():
    spec = parse_workload("mdtest -n 10 -F -w 1")
    assert footprint_bytes(spec, 2, 4096) == 2 * 10 * 4096
    assert footprint_bytes(parse_workload("ior -F -t 1m -b 4m"), 3, 4096) == 3 * (4 << 20)


# -- failures: every kind leaves nothing behind -------------------------------------------
@pytest.mark.parametrize(("fault", "kind"), [("1:write:3:EIO", "EIO"), ("0:read:2:EACCES", "EACCES")])
def test_io_error_stops_every_rank_and_removes_the_files(tmp_path, monkeypatch, fault, kind):
    monkeypatch.setenv("SIMFS_RUNNER_FAULT", fault)
    measured, _ = _run("ior -F -t 64k -b 1m -w -r", tmp_path, processes=3)
    assert measured.status == "failed" and measured.exit_code == 1
    assert kind in measured.reason and measured.reason.startswith("rank ")
    assert _left(tmp_path) == []
    completed = [r["op"] for r in measured.record["phases"]]
    assert completed == ([] if kind == "EIO" else ["write"])  # what completed is kept


def test_a_killed_rank_stops_the_others_and_its_files_are_removed(tmp_path, monkeypatch):
    # Rank 1 is SIGKILLed in its 3rd write: no Python cleanup runs in it; the coordinator
    # must notice the death, release ranks 0 and 2 from the next barrier and remove all files.
    monkeypatch.setenv("SIMFS_RUNNER_FAULT", "1:write:3:SIGKILL")
    measured, _ = _run("ior -F -t 64k -b 1m -w -r", tmp_path, processes=3)
    assert measured.status == "failed" and measured.exit_code == 1
    assert measured.reason.startswith("rank 1 ") and "-9" in measured.reason
    assert _left(tmp_path) == []
    assert measured.record["phases"] == []


def _mount_tmpfs(where: Path, options: str) -> None:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")


def test_enospc_on_a_full_file_system(tmp_path):
    tiny = tmp_path / "tiny"
    _mount_tmpfs(tiny, "size=4m,nr_inodes=60")
    try:
        measured, _ = _run("mdtest -n 100 -F", tiny)
        assert measured.status == "failed" and "ENOSPC" in measured.reason
        assert _left(tiny) == []
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_read_only_target_is_refused_before_anything_is_written(tmp_path):
    frozen = tmp_path / "ro"
    _mount_tmpfs(frozen, "size=1m,ro")
    try:
        with pytest.raises(SimfsError, match="cannot write here"):
            measure("dd bs=1k count=1", frozen, processes=1)
    finally:
        subprocess.run(["umount", str(frozen)], check=False)


def _cli(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "simfs.cli", *args], stderr=subprocess.PIPE, text=True, **popen)


def test_ctrl_c_stops_the_ranks_writes_what_completed_and_cleans_up(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    flag = tmp_path / "flag"
    args = ["measure", "--dir", str(target), "--np", "2", "--json", str(record), "--"]
    # Rank 0 pauses in its reads (the runner's test hook) until the stop reaches it, so
    # the Ctrl-C lands in the middle of the run however loaded the machine is.
    environment = {**os.environ, "SIMFS_RUNNER_FAULT": "0:read:2:PAUSE", "SIMFS_RUNNER_FLAG": str(flag)}
    process = _cli(*args, "ior", "-F", "-t", "64k", "-b", "1m", "-w", "-r", stdout=subprocess.DEVNULL, env=environment)
    deadline = time.monotonic() + 120  # a hang guard, not a timing
    while not flag.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the rank never reached its reads"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 130
    assert "simfs: interrupted:" in errors and len(errors.strip().splitlines()) == 1
    assert _left(target) == []
    saved = json.loads(record.read_text())
    assert saved["status"] == "interrupted"
    assert [phase["phase"] for phase in saved["phases"]] == ["write"]  # what completed is kept


# -- MPI ------------------------------------------------------------------------------------
def _mpirun_command(ranks: int, *args: str) -> tuple[list[str], dict[str, str]]:
    if shutil.which("mpirun") is None:
        pytest.skip("Open MPI's mpirun is not installed (apt-get install openmpi-bin)")
    pytest.importorskip("mpi4py")
    environment = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return ["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable, "-m", "simfs.cli", *args], environment


def _mpirun(ranks: int, *args: str) -> subprocess.CompletedProcess:
    command, environment = _mpirun_command(ranks, *args)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


@pytest.mark.parametrize("ranks", [2, 4])
def test_mpi_backend_runs_the_ranks_and_reports_once(tmp_path, ranks):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    done = _mpirun(ranks, "measure", "--dir", str(target), "--json", str(record), "--", *IOR_SMALL.split())
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Summary of all tests:") == 1  # rank 0 alone prints
    saved = json.loads(record.read_text())
    assert saved["backend"] == "mpi" and saved["ranks"] == ranks and saved["status"] == "ok"
    load = saved["machine"]["load"]  # the reporter's host (a run under a 100 Hz tick reads a zero window)
    assert len(load["loadavg_at_start"]) == 3 and load["cpus"] == os.cpu_count() and load["cpu_window_s"] >= 0
    assert [p["op"] for p in saved["phases"]] == ["write", "read"]
    assert all(p["bytes"] == ranks * (2 << 20) for p in saved["phases"])
    assert _left(target) == []


@pytest.mark.parametrize("intra", ["", " -g"])
def test_an_mpi_job_tells_a_listener_each_phase_boundary_while_the_ranks_wait(tmp_path, intra):
    target = tmp_path / "target"
    target.mkdir()
    seen = []

    def on_phase(event, mark):
        seen.append((event, None if mark is None else tuple(mark)))
        if event == "start" and len(seen) > 1:
            time.sleep(0.2)  # every rank waits meanwhile

    record, trace = tmp_path / "run.json", tmp_path / "trace.csv"
    command, environment = _mpirun_command(
        3, "measure", "--dir", str(target), "--json", str(record), "--trace", str(trace)
    )
    with PhaseListener(tmp_path / "phases.sock", on_phase) as listener:
        environment[PHASE_SOCKET_ENV] = str(listener.path)
        done = subprocess.run(
            [*command, "--", *(IOR_SMALL + intra).split()], capture_output=True, text=True, timeout=300, env=environment
        )
    assert done.returncode == 0, done.stderr
    assert listener.error is None
    # IOR -g's barriers inside a phase are not boundaries.
    assert seen == [("start", None), ("end", (0, "write")), ("start", None), ("end", (0, "read"))]
    assert [p["op"] for p in json.loads(record.read_text())["phases"]] == ["write", "read"]
    # A lower bound, whatever the machine's speed: no rank opened its file to read before
    # the listener answered the read's start.
    import pandas as pd

    ranks = pd.read_csv(trace)
    ended = ranks.loc[ranks["phase"] == "write", "close_end"].max()
    opened = ranks.loc[ranks["phase"] == "read", "open_start"].min()
    assert opened - ended >= 0.2
    assert _left(target) == []


def test_rank_0_decides_for_every_rank_whether_the_run_is_watched(tmp_path):
    # The second application context is not given the socket (as ranks on another node
    # are not, without mpirun -x): rank 0's environment decides, and no rank hangs.
    target = tmp_path / "target"
    target.mkdir()
    seen = []
    workload = ["--", *IOR_SMALL.split()]
    command, environment = _mpirun_command(1, "measure", "--dir", str(target), *workload)
    command += [":", "-n", "2", "env", "-u", PHASE_SOCKET_ENV, sys.executable, "-m", "simfs.cli", "measure"]
    command += ["--dir", str(target), *workload]
    with PhaseListener(tmp_path / "phases.sock", lambda event, mark: seen.append(event)) as listener:
        environment[PHASE_SOCKET_ENV] = str(listener.path)
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
    assert done.returncode == 0, done.stderr
    assert seen == ["start", "end", "start", "end"]
    assert _left(target) == []


def test_an_mpi_job_goes_on_when_its_listener_fails(tmp_path):
    target = tmp_path / "target"
    target.mkdir()

    def on_phase(event, mark):
        raise RuntimeError("counters unreadable")

    command, environment = _mpirun_command(2, "measure", "--dir", str(target))
    with PhaseListener(tmp_path / "phases.sock", on_phase) as listener:
        environment[PHASE_SOCKET_ENV] = str(listener.path)
        done = subprocess.run(
            [*command, "--", *IOR_SMALL.split()], capture_output=True, text=True, timeout=300, env=environment
        )
    assert done.returncode == 0, done.stderr
    assert isinstance(listener.error, RuntimeError)
    assert _left(target) == []


def test_an_mpi_job_goes_on_when_its_listener_is_not_there(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    command, environment = _mpirun_command(2, "measure", "--dir", str(target))
    environment[PHASE_SOCKET_ENV] = str(tmp_path / "nobody.sock")
    done = subprocess.run(
        [*command, "--", *IOR_SMALL.split()], capture_output=True, text=True, timeout=300, env=environment
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Summary of all tests:") == 1
    assert _left(target) == []


def test_a_listener_keeps_the_first_error_of_its_caller_and_answers_anyway(tmp_path):
    calls = []

    def on_phase(event, mark):
        calls.append((event, mark))
        if event == "end":
            raise RuntimeError("counters unreadable")

    class Record:
        iteration, phase = 1, "read"

    with PhaseListener(tmp_path / "p.sock", on_phase) as listener:
        notify = phase_notifier(str(listener.path))
        notify("start", None)
        notify("end", Record())
        notify("start", None)
    assert calls == [("start", None), ("end", PhaseMark(1, "read")), ("start", None)]
    assert isinstance(listener.error, RuntimeError)
    assert not (tmp_path / "p.sock").exists()
    # A listener gone: notes stop, nothing is raised.
    notify("end", Record())


@pytest.mark.parametrize(
    ("processes", "clients", "placement"),
    [(5, 4, [0, 0, 1, 1, 2]), (4, 2, [0, 0, 1, 1]), (3, 8, [0, 1, 2]), (1, 1, [0])],
)
def test_ranks_are_placed_on_clients_by_block(processes, clients, placement):
    assert block_placement(processes, clients) == placement


def _mpmd(directories: list[Path], *args: str) -> subprocess.CompletedProcess:
    """One rank per directory, each given its own --dir (mpirun's application contexts)."""
    command, environment = _mpirun_command(1, "measure", "--dir", str(directories[0]), *args)
    for directory in directories[1:]:
        command += [":", "-n", "1", sys.executable, "-m", "simfs.cli", "measure", "--dir", str(directory), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


def test_mpi_ranks_may_reach_one_file_system_through_different_paths(tmp_path):
    # Two paths to one directory, as the testbed's clients mount one file system twice.
    target = tmp_path / "target"
    target.mkdir()
    other_view = tmp_path / "view"
    other_view.symlink_to(target)
    record = tmp_path / "run.json"
    done = _mpmd(
        [target, other_view], "--json", str(record), "--", "ior", "-a", "POSIX", "-t", "64k", "-b", "1m", "-w", "-r"
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads(record.read_text())
    assert saved["status"] == "ok" and saved["ranks"] == 2
    assert all(p["bytes"] == 2 * (1 << 20) for p in saved["phases"])  # one shared file, both ranks' blocks
    assert _left(target) == []


def test_mpi_ranks_given_unrelated_directories_are_refused_in_one_line(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    done = _mpmd([first, second], "--", "ior", "-t", "64k", "-b", "1m", "-w")
    assert done.returncode == 2
    assert "the ranks were given different directories" in done.stderr
    assert _left(first) == [] and _left(second) == []


def test_mpi_backend_failure_stops_all_ranks_and_cleans_up(tmp_path, monkeypatch):
    target = tmp_path / "target"
    target.mkdir()
    monkeypatch.setenv("SIMFS_RUNNER_FAULT", "2:write:2:ENOSPC")  # mpirun passes it to the ranks
    done = _mpirun(3, "measure", "--dir", str(target), "--", "ior", "-F", "-t", "64k", "-b", "1m", "-w", "-r")
    assert done.returncode != 0
    assert "rank 2" in done.stderr and "ENOSPC" in done.stderr
    assert _left(target) == []


def test_mpi_ctrl_c_stops_the_ranks_writes_the_record_and_cleans_up(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    flag = tmp_path / "flag"
    # Rank 0 pauses in its reads (the runner's test hook) until the stop reaches it:
    # Ctrl-C lands in the middle of the run however loaded the machine is.
    workload = ["ior", "-F", "-t", "64k", "-b", "1m", "-w", "-r"]
    command, environment = _mpirun_command(2, "measure", "--dir", str(target), "--json", str(record), "--", *workload)
    environment.update(SIMFS_RUNNER_FAULT="0:read:2:PAUSE", SIMFS_RUNNER_FLAG=str(flag))
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # a hang guard, not a timing
    while not flag.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "rank 0 never reached its reads"
        time.sleep(0.02)
    # Ctrl-C at a terminal: mpirun forwards it to the ranks as SIGTERM, then kills them 1 s later.
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=120)
    assert process.returncode != 0
    assert _left(target) == []
    saved = json.loads(record.read_text())  # written before the summary that mpirun may cut off
    assert saved["backend"] == "mpi" and saved["status"] == "interrupted", errors
    assert saved["reason"].startswith("rank ") and "interrupted" in saved["reason"]
    assert [phase["phase"] for phase in saved["phases"]] == ["write"]  # what completed is kept


def test_mdtest_stonewall_and_its_wear_out(tmp_path):
    # mdtest -W 1: no rank can make 2 million files in a second; after the deadline every
    # rank goes on to the most any made, and the stat phase stats that many.
    measured, text = _run("mdtest -n 2000000 -F -C -T -u -W 1", tmp_path)
    creates = {r.rank: r.ops for r in measured.records if r.phase == "file create"}
    stats = {r.rank: r.ops for r in measured.records if r.phase == "file stat"}
    assert creates[0] == creates[1] == stats[0] == stats[1]
    assert 0 < creates[0] < 2_000_000
    rates = {m.phase: m.value for m in mdtest.parse(text, "md.txt", FileContext())}
    assert list(rates) == ["file_creation", "file_create_stonewall", "file_stat"]
    # mdtest's stonewall row: the items made by the deadline over the time to it.
    (create,) = [r for r in measured.results if r.phase == "file create"]
    assert create.pairs_total == sum(r.pairs_at_deadline for r in measured.records if r.phase == "file create")
    assert rates["file_create_stonewall"] == pytest.approx(create.pairs_total / create.stonewall_s, rel=1e-6)
    assert _left(tmp_path) == []
