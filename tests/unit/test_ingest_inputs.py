"""What the readers refuse: values no measurement can have, files that are not results,
and folders with a bad file in them (issue 17)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from simfs.errors import SimfsError
from simfs.ingest import MAX_TEXT_BYTES, SkippedFileWarning, read_measurements
from simfs.ingest.fio import BYTES_REASON, ior_equivalent, why_not_simulated

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
ROOT = Path(__file__).resolve().parents[2]


def edited(name: str, old: str, new: str, count: int = 1) -> str:
    text = (DATA / name).read_text() if (DATA / name).exists() else (ROOT / name).read_text()
    assert old in text, (name, old)
    return text.replace(old, new, count)


def fio_edited(name: str, path: tuple, value) -> str:
    document = json.loads((DATA / name).read_text())
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(document, indent=1)  # NaN and Infinity as Python's json writes them


# -- 1. values that cannot be measurements --------------------------------------------
IOR = "ior-fpp-text.txt"
BAD_VALUES = [
    # (file name, text, error: file:line or file: JSON path, then what was expected)
    (
        "ior.txt",
        edited(IOR, "write     1387.98", "write     -1387.98"),
        r"ior\.txt:35: bw\(MiB/s\): expected a positive finite number, got -1387\.98",
    ),
    (
        "ior.txt",
        edited(IOR, "write     1387.98", "write     nan    "),
        r"ior\.txt:35: bw\(MiB/s\): expected a positive finite number, got nan",
    ),
    (
        "ior.txt",
        edited(IOR, "write     1387.98", "write     inf    "),
        r"ior\.txt:35: bw\(MiB/s\): expected a positive finite number, got inf",
    ),
    (
        "ior.txt",
        edited(IOR, "write     1387.98", "write     0      "),
        r"ior\.txt:35: bw\(MiB/s\): expected a positive finite number, got 0\.0",
    ),
    (
        "ior.txt",
        edited(IOR, "1409.55      21.57", "nan      21.57"),
        r"ior\.txt:\d+: Mean\(MiB\): expected a positive finite number, got nan",
    ),
    (
        "ior.json",
        edited("ior-shared.json", '"bwMiB": 1000.5347', '"bwMiB": -1000.5347'),
        r"ior\.json: tests\[0\]\.Results\[0\]\.bwMiB: expected a positive finite number, got -1000\.5347",
    ),
    (
        "ior.json",
        edited("ior-shared.json", '"bwMiB": 1000.5347', '"bwMiB": NaN'),
        r"ior\.json: tests\[0\]\.Results\[0\]\.bwMiB: expected a positive finite number, got nan",
    ),
    (
        "ior.json",
        edited("ior-shared.json", '"bwMiB": 1000.5347', '"bwMiB": "fast"'),
        r"ior\.json: tests\[0\]\.Results\[0\]\.bwMiB: expected a number, got 'fast'",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "bw_bytes"), -5),
        r"fio\.json: jobs\[0\]\.write\.bw_bytes: expected a positive finite number, got -5\.0",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "bw_bytes"), float("nan")),
        r"fio\.json: jobs\[0\]\.write\.bw_bytes: expected a positive finite number, got nan",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "bw_bytes"), float("inf")),
        r"fio\.json: jobs\[0\]\.write\.bw_bytes: expected a positive finite number, got inf",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "bw_bytes"), 0),
        r"fio\.json: jobs\[0\]\.write\.bw_bytes: expected a positive finite number, got 0\.0",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "iops"), float("nan")),
        r"fio\.json: jobs\[0\]\.write\.iops: expected a positive finite number, got nan",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "runtime"), -87),
        r"fio\.json: jobs\[0\]\.write\.runtime: expected a positive finite number, got -87\.0",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "runtime"), 0),
        r"fio\.json: jobs\[0\]\.write\.runtime: 0 ms",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "io_bytes"), -1),
        r"fio\.json: jobs\[0\]\.write\.io_bytes: expected a non-negative count",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "write", "clat_ns", "mean"), -1.0),
        r"fio\.json: jobs\[0\]\.write\.clat_ns\.mean: expected a positive finite number",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "error"), 28),
        r"fio\.json: jobs\[0\]\.error: fio reported error 28",
    ),
    (
        "fio.json",
        fio_edited("fio-write-direct.json", ("jobs", 0, "job options", "numjobs"), "0"),
        r"fio\.json: jobs\[0\]\.job options\.numjobs: expected a positive integer",
    ),
    (
        "dd.txt",
        edited("dd-write.txt", "209715200 bytes", "0 bytes"),
        r"dd\.txt:3: bytes copied: expected a positive finite number, got 0",
    ),
    ("dd.txt", edited("dd-write.txt", "0.0666834 s", "1e- s"), r"dd\.txt:3: seconds: expected a number, got '1e-'"),
    ("dd.txt", edited("dd-write.txt", "0.0666834 s", "0 s"), r"dd\.txt:3: dd reported 0 s"),
    (
        "mdtest.txt",
        edited("mdtest-files.txt", "4260.376", "0.000"),
        r"mdtest\.txt:\d+: Mean: expected a positive finite number, got 0\.0",
    ),
    (
        "bonnie.csv",
        edited("bonnie-small.csv", ",493753,", ",-493753,"),
        r"bonnie\.csv:1: field 11 \(write_block\): expected a positive finite number, got -493753\.0",
    ),
    (
        "bonnie.csv",
        edited("bonnie-small.csv", ",493753,", ",nan,"),
        r"bonnie\.csv:1: field 11 \(write_block\): expected a positive finite number, got nan",
    ),
    (
        "bonnie.csv",
        edited("bonnie-small.csv", "simfs-ci,1,", "simfs-ci,x,"),
        r"bonnie\.csv:1: field 3 \(concurrency\): expected a positive integer",
    ),
    (
        "bonnie.txt",
        edited("bonnie-1.03e.txt", ",2981975,", ",inf,"),
        r"bonnie\.txt:22: field 10 \(read_block\): expected a positive finite number, got inf",
    ),
    (
        "bonnie.csv",
        edited("bonnie-1.03b.csv", ",311.3,", ",0,"),
        r"bonnie\.csv:1: field 12 \(random_seek\): expected a positive finite number, got 0",
    ),
    (
        "iozone.txt",
        edited("iozone-throughput.txt", "2950211.62", "0.00"),
        r"iozone\.txt:24: initial writers throughput: expected a positive finite number, got 0\.0",
    ),
    (
        "iozone.txt",
        edited("iozone-auto.txt", "  2882138", "        0"),
        r"iozone\.txt:29: rewrite at 4096 kB, record 4 kB: expected a positive finite number, got 0\.0",
    ),
    (
        "iozone.txt",
        edited("iozone-auto.txt", "  2882138", "      nan"),
        r"iozone\.txt:29: rewrite at 4096 kB, record 4 kB: expected a positive finite number, got nan",
    ),
    (
        "iozone.txt",
        edited("iozone-auto.txt", "  6669706", "  6669706      17"),
        r"iozone\.txt:29: iozone value '17' is under no test's column",
    ),
    (
        "iozone.txt",
        edited("iozone-throughput.txt", "2950211.62", "2.9.5"),
        r"iozone\.txt:24: initial writers throughput: expected a number, got '2\.9\.5'",
    ),
    (
        "io500.txt",
        edited("io500-result_summary.txt", "3.421534 GiB/s", "0.000000 GiB/s"),
        r"io500\.txt:2: ior-easy-write: expected a positive finite number, got 0\.0",
    ),
    (
        "obdfilter.txt",
        edited("calibration/xyratex-cs6000/obdfilter-survey.txt", "write 3032.89", "write 0.00"),
        r"obdfilter\.txt:1: write total: expected a positive finite number, got 0\.0",
    ),
    (
        "published.csv",
        edited("calibration/crtdc-lfs3/published.csv", "write,agg_bw,5.7,", "write,agg_bw,-5.7,"),
        r"published\.csv:4: value: expected a positive finite number, got -5\.7",
    ),
    (
        "published.csv",
        edited("calibration/crtdc-lfs3/published.csv", "write,agg_bw,5.7,", "write,agg_bw,nan,"),
        r"published\.csv:4: value: expected a positive finite number, got nan",
    ),
    (
        "published.csv",
        edited("calibration/crtdc-lfs3/published.csv", "write,agg_bw,5.7,GB/s,,", "write,agg_bw,5.7,GB/s,-0.1,"),
        r"published\.csv:4: uncertainty: expected a non-negative finite number, got -0\.1",
    ),
    (
        "run.json",
        edited("validation/live/runs/disk-direct-np1.json", '"bandwidth_Bps": ', '"bandwidth_Bps": -'),
        r"run\.json: phases\[0\]\.bandwidth_Bps: expected a positive finite number",
    ),
    (
        "run.json",
        edited("validation/live/runs/disk-direct-np1.json", '"nodes": 1', '"nodes": 0'),
        r"run\.json: nodes: expected a positive integer, got 0",
    ),
]


@pytest.mark.parametrize("name, text, message", BAD_VALUES, ids=[f"{n}:{i}" for i, (n, _, _) in enumerate(BAD_VALUES)])
def test_values_no_measurement_can_have_are_located_errors(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SimfsError, match=message) as error:
        read_measurements(path)
    assert "\n" not in str(error.value)


def test_zeros_that_mean_not_run_give_no_row(tmp_path):
    # Older mdtest prints every operation, zeros for the ones it did not run.
    (tmp_path / "mdtest.txt").write_text(
        edited("mdtest-files.txt", "4687.905       3832.847       4260.376        604.617", "0.000 0.000 0.000 0.000")
    )
    assert "file_creation" not in set(read_measurements(tmp_path / "mdtest.txt")["phase"])
    # An IO500 phase that failed: [INVALID] with a zero.
    (tmp_path / "io500.txt").write_text(edited("io500-result_summary.txt", "5.733170 kIOPS", "0.000000 kIOPS"))
    assert "mdtest-hard-delete" not in set(read_measurements(tmp_path / "io500.txt")["phase"])


# -- 5. files that are not results ------------------------------------------------------
def test_a_fifo_is_refused_without_being_opened(tmp_path):
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    # Opening a FIFO for reading would wait for a writer: stat says what it is first.
    with pytest.raises(SimfsError, match=r"results\.fifo: not a regular file \(a FIFO\)"):
        read_measurements(fifo)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: Path(os.devnull), r"/dev/null: not a regular file \(a character device\)"),
        (lambda d: d / "missing.txt", r"missing\.txt: no such file or directory"),
        (
            lambda d: _write(d / "binary.txt", b"IOR-4\n\xff\xfe garbage"),
            r"binary\.txt:2: not UTF-8 text \(byte 0xff\)",
        ),
        (lambda d: _write(d / "empty.txt", b""), r"empty\.txt: empty file"),
        (
            lambda d: _sparse(d / "huge.txt", MAX_TEXT_BYTES + 1),
            rf"huge\.txt: {MAX_TEXT_BYTES + 1} bytes: more than the 64 MiB limit",
        ),
    ],
    ids=["dev-null", "missing", "not-utf8", "empty", "huge"],
)
def test_files_that_are_not_results_are_one_line_errors(tmp_path, make, message):
    with pytest.raises(SimfsError, match=message) as error:
        read_measurements(make(tmp_path))
    assert "\n" not in str(error.value)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # no blocks written: instant and takes no space
    return path


def test_a_manifest_that_is_not_utf8_is_a_located_error(tmp_path):
    (tmp_path / "dd.txt").write_text((DATA / "dd-write.txt").read_text())
    (tmp_path / "manifest.toml").write_bytes(b"[defaults]\nsystem = '\xff'\n")
    with pytest.raises(SimfsError, match=r"manifest\.toml:2: not UTF-8 text"):
        read_measurements(tmp_path)


# -- 6. a folder with bad files ---------------------------------------------------------
@pytest.fixture
def mixed_folder(tmp_path):
    folder = tmp_path / "runs"
    (folder / "sub").mkdir(parents=True)
    (folder / "ior.txt").write_text((DATA / IOR).read_text())
    (folder / "sub" / "mdtest.txt").write_text((DATA / "mdtest-files.txt").read_text())
    (folder / "bad-ior.txt").write_text(edited(IOR, "write     1387.98", "write     nan    "))
    (folder / "binary.dat").write_bytes(b"\x00\xff\xfe")
    os.mkfifo(folder / "pipe")
    (folder / "README").write_text("notes\n")  # documentation: passed over silently
    return folder


def test_a_folder_skips_bad_files_with_a_warning_each(mixed_folder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_measurements(mixed_folder)
    skipped = sorted(str(w.message) for w in caught if issubclass(w.category, SkippedFileWarning))
    assert len(skipped) == 3 and len(caught) == 3
    assert skipped[0].startswith(f"{mixed_folder}/bad-ior.txt:35: bw(MiB/s): expected a positive finite number")
    assert skipped[1].startswith(f"{mixed_folder}/binary.dat:1: not UTF-8 text")
    assert skipped[2] == f"{mixed_folder}/pipe: not a regular file (a FIFO): expected a results file (skipped)"
    assert all(message.endswith("(skipped)") and "\n" not in message for message in skipped)
    assert set(frame["tool"]) == {"ior", "mdtest"}  # the rest was read, subfolders too


def test_strict_stops_at_the_first_bad_file(mixed_folder):
    with pytest.raises(SimfsError, match=r"bad-ior\.txt:35: bw\(MiB/s\)"):
        read_measurements(mixed_folder, strict=True)


def test_a_folder_where_nothing_reads_is_an_error(tmp_path):
    (tmp_path / "binary.dat").write_bytes(b"\xff")
    os.mkfifo(tmp_path / "pipe")
    with pytest.warns(SkippedFileWarning):
        with pytest.raises(SimfsError, match=r"no measurement file could be read \(2 skipped: see the warnings\)"):
            read_measurements(tmp_path)


# -- 7. fio jobs simfs simulates as IOR runs -------------------------------------------
def test_real_fio_job_file_sample_maps_sequential_jobs_to_ior():
    frame = read_measurements(DATA / "fio-jobfile-seq.json")
    bandwidth = frame[frame["metric"] == "agg_bw"].set_index("source")
    workloads = {source.rsplit(":", 1)[1]: w for source, w in bandwidth["workload"].items()}
    assert workloads == {
        "jobs[0].write": "ior -a POSIX -F -w -t 1m -b 32m -e",  # end_fsync=1
        "jobs[1].read": "ior -a POSIX -F -r -t 1m -b 32m --posix.odirect",  # direct=1
        # randread: every 4 KiB block once in a random order, IOR -z.
        "jobs[2].read": "ior -a POSIX -F -r -t 4k -b 32m -z",
    }
    assert list(bandwidth["ppn"]) == [2, 2, 1] and set(bandwidth["tool"]) == {"fio"}


def test_fio_clones_without_group_reporting_are_rank_rates(tmp_path):
    document = json.loads((DATA / "fio-jobfile-seq.json").read_text())
    # What fio prints without group_reporting: numjobs entries, each one process's I/O.
    write = document["jobs"][0]
    clone = json.loads(json.dumps(write))
    for entry in (write, clone):
        entry["write"]["io_bytes"] //= 2
    document["jobs"].insert(1, clone)
    (tmp_path / "fio.json").write_text(json.dumps(document))
    frame = read_measurements(tmp_path / "fio.json")
    writes = frame[(frame["phase"] == "write") & frame["metric"].str.endswith("_bw")]
    assert list(writes["metric"]) == ["rank_bw", "rank_bw"] and set(writes["ppn"]) == {2}
    assert set(writes["workload"]) == {"ior -a POSIX -F -w -t 1m -b 32m -e"}


def test_a_fio_job_that_moved_other_bytes_is_not_mapped(tmp_path):
    # time_based does not appear among fio's job options; the byte count gives it away.
    text = fio_edited("fio-jobfile-seq.json", ("jobs", 0, "write", "io_bytes"), 3 * 67108864)
    (tmp_path / "fio.json").write_text(text)
    row = read_measurements(tmp_path / "fio.json").iloc[0]
    assert row["workload"].startswith("fio ")
    assert why_not_simulated(row["workload"], "write") == BYTES_REASON


BASE = {"rw": "write", "bs": "1m", "size": "64m", "numjobs": "2", "directory": "/scratch"}


@pytest.mark.parametrize(
    "changes, direction, expected",
    [
        ({}, "write", "ior -a POSIX -F -w -t 1m -b 64m"),
        (
            {"direct": "1", "ioengine": "libaio", "iodepth": "1"},
            "write",
            "ior -a POSIX -F -w -t 1m -b 64m --posix.odirect",
        ),
        ({"buffered": "0", "ioengine": "sync"}, "write", "ior -a POSIX -F -w -t 1m -b 64m --posix.odirect"),
        ({"fsync_on_close": "1", "size": "1g"}, "write", "ior -a POSIX -F -w -t 1m -b 1g -e"),
        ({"rw": "read", "bs": "4096", "size": "8m"}, "read", "ior -a POSIX -F -r -t 4k -b 8m"),
        ({"rw": "read", "end_fsync": "1"}, "read", "ior -a POSIX -F -r -t 1m -b 64m"),  # no fsync in a read
        ({"filename": "/scratch/one", "numjobs": "1"}, "write", "ior -a POSIX -F -w -t 1m -b 64m"),
        ({"rw": "randwrite"}, "write", "ior -a POSIX -F -w -t 1m -b 64m -z"),
        ({"rw": "randrw"}, "write", "rw=randrw: simulated are rw=read, write, randread and randwrite"),
        ({"rw": "rw"}, "write", "rw=rw: simulated are"),
        ({"rw": "write:4k"}, "write", "rw=write:4k: simulated are"),
        ({"rw": "randwrite"}, "read", "a read in a rw=randwrite job"),
        ({"ioengine": "libaio", "iodepth": "16"}, "write", "ioengine=libaio with iodepth=16"),
        ({"ioengine": "mmap"}, "write", "ioengine=mmap: simulated are libaio, psync, pvsync, pvsync2, sync, vsync"),
        ({"filename": "/scratch/one"}, "write", "filename=/scratch/one with numjobs=2: the processes share a file"),
        ({"size": "50%"}, "write", "size=50%: expected a size"),
        ({"bs": "4k-64k"}, "write", "bs=4k-64k: expected one size"),
        ({"size": "65m", "bs": "2m"}, "write", "size=65m is not a multiple of bs=2m"),
        ({"rate": "10m"}, "write", "option rate=10m has no IOR equivalent"),
        ({"time_based": "1"}, "write", "option time_based=1 has no IOR equivalent"),
        ({"loops": "3"}, "write", "loops=3: simulated is loops=1"),
        ({"overwrite": "1"}, "write", "overwrite=1: simulated writes go to new files"),
        ({"rw": "read", "invalidate": "0"}, "read", "invalidate=0: a buffered read"),
        ({"kb_base": "1000"}, "write", "kb_base=1000"),
        ({"size": None}, "write", "no size="),
    ],
)
def test_which_fio_jobs_have_an_ior_equivalent(changes, direction, expected):
    options = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    command, reason = ior_equivalent(options, direction)
    assert (command or reason).startswith(expected), (command, reason)
    assert (command is None) != (reason is None)


def test_folders_that_cannot_be_listed(tmp_path, monkeypatch):
    # chmod 000 does not stop root (the CI user here): the listing is made to fail instead.
    (tmp_path / "locked").mkdir()
    (tmp_path / "dd.txt").write_text((DATA / "dd-write.txt").read_text())
    (tmp_path / "manifest.toml").write_text('[defaults]\nworkload = "dd if=/dev/zero of=f bs=1M count=200"\n')
    listing = os.scandir

    def scandir(path):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.warns(SkippedFileWarning, match=r"locked: cannot list the folder \(Permission denied\) \(skipped\)"):
        assert len(read_measurements(tmp_path)) == 2
    with pytest.raises(SimfsError, match=r"locked: cannot list the folder \(Permission denied\)$"):
        read_measurements(tmp_path / "locked")  # the folder named: an error
    with pytest.raises(SimfsError, match=r"locked: cannot list the folder"):
        read_measurements(tmp_path, strict=True)


def test_a_file_named_darshan_that_is_not_a_darshan_log_is_refused_before_the_library(tmp_path, capfd):
    not_a_log = tmp_path / "job.darshan"
    not_a_log.write_text("IOR-3.3.0: MPI Coordinated Test of Parallel I/O\n")
    with pytest.raises(SimfsError, match=r"job\.darshan: not a readable Darshan log \(no Darshan version header\)"):
        read_measurements(not_a_log)
    assert capfd.readouterr().err == ""  # darshan's C library never saw it


@pytest.mark.parametrize("kept", [300, 600, 1000, 1200, 1600, 3395])
def test_a_truncated_darshan_log_is_refused_before_the_library_reads_past_its_end(tmp_path, capfd, kept):
    # Cut at 1,000 bytes this log crashed the process inside the C library (a segmentation
    # fault); every cut is now named from the header's region map.
    pytest.importorskip("darshan")
    whole = (DATA / "darshan" / "mpi-io-test.darshan").read_bytes()
    cut = tmp_path / "cut.darshan"
    cut.write_bytes(whole[:kept])
    with pytest.raises(SimfsError, match=rf"cut\.darshan: truncated Darshan log: .*{kept:,}"):
        read_measurements(cut)
    assert capfd.readouterr().err == ""
    assert len(read_measurements(DATA / "darshan" / "mpi-io-test.darshan")) >= 1  # the whole log reads


def test_a_darshan_header_of_another_magic_number_is_not_called_truncated(tmp_path, capfd):
    pytest.importorskip("darshan")
    whole = (DATA / "darshan" / "mpi-io-test.darshan").read_bytes()
    garbled = tmp_path / "garbled.darshan"
    garbled.write_bytes(whole[:8] + bytes(range(256)) * 16)  # the version, then not a header
    with pytest.raises(SimfsError, match=r"garbled\.darshan: not a readable Darshan log \(its header's magic number"):
        read_measurements(garbled)
    assert capfd.readouterr().err == ""
