"""A Darshan log as a workload (simfs.workloads.darshan), on the two public logs in
tests/data/ingest/darshan (README there)."""

from pathlib import Path

import pytest

import simfs
from simfs.cli import main
from simfs.errors import WorkloadError
from simfs.workloads import parse_workload

darshan = pytest.importorskip("darshan")
LOGS = Path(__file__).parents[1] / "data" / "ingest" / "darshan"


def _posix_totals(path: Path) -> dict[str, float]:
    # Read apart from the workload's reader, through the accumulator the ingest uses.
    from darshan.backend.cffi_backend import accumulate_records

    report = darshan.DarshanReport(str(path), read_all=False)
    report.mod_read_all_records("POSIX", dtype="pandas")
    nprocs = int(report.metadata["job"]["nprocs"])
    counters = accumulate_records(report.records["POSIX"][0], "POSIX", nprocs).summary_record["counters"]
    return {name: float(counters[name].iloc[0]) for name in counters.columns if name.startswith("POSIX_")}


def test_each_direction_and_kind_of_file_is_a_phase_that_moves_the_logs_bytes():
    log = LOGS / "mpi-io-test.darshan"
    spec = parse_workload(f"darshan {log}")
    totals = _posix_totals(log)
    phases = {p.label: p for p in spec.phases}
    assert list(phases) == ["write (shared files)", "read (shared files)"]  # the log's order
    write, read = phases["write (shared files)"], phases["read (shared files)"]
    assert write.shared_file and not write.random_offsets
    # 4 processes: each moves a quarter of the file's bytes, in the log's mean access size.
    assert 4 * write.bytes_per_rank == totals["POSIX_BYTES_WRITTEN"]
    assert 4 * read.bytes_per_rank == totals["POSIX_BYTES_READ"]
    assert write.transfer_size_bytes == totals["POSIX_BYTES_WRITTEN"] / totals["POSIX_WRITES"]
    assert spec.options["processes"] == 4
    assert any("modules APMPI, APXC are not replayed" in note for note in spec.notes)


def test_what_the_mean_process_cannot_carry_is_noted():
    spec = parse_workload(f"darshan {LOGS / 'hdf5_diagonal_write_1_byte_dxt.darshan'}")
    write = next(p for p in spec.phases if p.op == "write")
    # HDF5's small metadata writes land anywhere: fewer than half are sequential.
    assert not write.shared_file and write.random_offsets
    assert any("files per process, simulated as one" in note for note in spec.notes)
    assert any("opened or stat'ed without data: not simulated" in note for note in spec.notes)


def test_a_log_replays_on_a_system_with_its_notes(capsys):
    log = LOGS / "mpi-io-test.darshan"
    result = simfs.simulate("crtdc-lfs3", f"darshan {log}", nodes=1, ppn=4)
    assert list(result.phases["phase"]) == ["write (shared files)", "read (shared files)"]
    assert (result.phases["bytes"] == [16 << 22, 16 << 22]).all()
    assert result.notes[0].startswith("darshan mpi-io-test.darshan")
    assert main(["simulate", "--system", "crtdc-lfs3", "--workload", f"darshan {log}", "--ppn", "4"]) == 0
    assert "note: darshan mpi-io-test.darshan" in capsys.readouterr().err


def test_a_log_without_posix_data_replays_its_stdio_streams_not_its_standard_ones():
    # MILC on Theta: 128 processes, STDIO records only.  Rank 0 read two input files
    # through C streams (12,886 bytes); every process printed to <STDOUT> (489,948 bytes),
    # which is not the file system.
    log = LOGS / "darshan-apmpi-2nodes-64mpi.darshan"
    spec = parse_workload(f"darshan {log}")
    assert [p.label for p in spec.phases] == ["read (files per process, STDIO)"]
    read = spec.phases[0]
    # A stream reads its buffer: at least 4 KiB, whatever the mean fread asked.
    assert read.transfer_size_bytes == 4096 and read.bytes_per_rank == 4096 and not read.random_offsets
    assert spec.options["module"] == "STDIO"
    assert any("no POSIX data: the STDIO streams are replayed" in note for note in spec.notes)
    assert any("127 of 128 processes moved none" in note for note in spec.notes)
    result = simfs.simulate("crtdc-lfs3", f"darshan {log}", nodes=1, ppn=2)
    assert list(result.phases["phase"]) == ["read (files per process, STDIO)"]
    # Where POSIX moved data, the POSIX records are replayed: mpi-io-test's STDIO is <STDOUT> only.
    assert parse_workload(f"darshan {LOGS / 'mpi-io-test.darshan'}").options["module"] == "POSIX"


@pytest.mark.parametrize(
    ("args", "message"),
    [("", "give one Darshan log"), ("/no/such.darshan", "no such file"), (__file__, "not a readable Darshan log")],
)
def test_bad_logs_are_refused_in_one_line(args, message):
    with pytest.raises(WorkloadError, match=message) as caught:
        parse_workload(f"darshan {args}")
    assert "\n" not in str(caught.value)
