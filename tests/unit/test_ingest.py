"""Every parser on real tool output (tests/data/ingest/README.md says how each was made)."""

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.errors import SimfsError
from simfs.ingest import SkippedFileWarning, detect_format, read_measurements, settings_of
from simfs.predict import NotSimulatedWarning, Predictor, plan
from tests.unit.phases import open_close_s

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def test_dd_summary_lines():
    frame = read_measurements(DATA / "dd-write.txt")
    assert list(frame["metric"]) == ["rank_bw", "rank_bw"]
    # "209715200 bytes (210 MB, 200 MiB) copied, 0.0666834 s, 3.1 GB/s": rate from bytes/seconds.
    assert frame["value"].iloc[0] == pytest.approx(209715200 / 0.0666834)
    assert frame["source"].iloc[0].endswith("dd-write.txt:3")
    assert frame["value"].iloc[1] == pytest.approx(307200000 / 0.237156)


def test_ior_text_rows_are_iterations():
    frame = read_measurements(DATA / "ior-fpp-text.txt")
    assert list(frame["phase"]) == ["write", "read", "write", "read"]
    assert list(frame["iteration"]) == [0, 0, 1, 1]
    assert frame["value"].iloc[0] == pytest.approx(1387.98 * MIB)
    assert (frame["nodes"] == 1).all() and (frame["ppn"] == 2).all()
    assert frame["workload"].iloc[0] == "ior -a POSIX -F -t 1m -b 16m -w -r -C -e -i 2 -o /tmp/iortest/f"


def test_ior_summary_table_alone_gives_the_mean_with_its_spread(tmp_path):
    text = (DATA / "ior-fpp-text.txt").read_text()
    start = text.index("Results:")
    summary_only = text[:start] + text[text.index("Summary of all tests:") :]
    (tmp_path / "ior-q.txt").write_text(summary_only)
    frame = read_measurements(tmp_path / "ior-q.txt")
    write = frame[frame["phase"] == "write"].iloc[0]
    assert write["value"] == pytest.approx(1409.55 * MIB)
    assert write["uncertainty"] == pytest.approx(21.57 / 1409.55)


def test_ior_json_and_the_mixed_log_line_case():
    shared = read_measurements(DATA / "ior-shared.json")
    assert list(shared["phase"]) == ["write", "read"]
    mixed = read_measurements(DATA / "ior-json-mixed-log.txt")
    assert mixed["value"].iloc[0] == pytest.approx(3545.8556 * MIB)
    assert mixed["value"].iloc[1] == pytest.approx(13678.9368 * MIB)
    assert detect_format((DATA / "ior-json-mixed-log.txt").read_text()) == "ior-json"


def test_mdtest_summary_rates():
    frame = read_measurements(DATA / "mdtest-files.txt")
    assert list(frame["phase"])[:4] == ["file_creation", "file_stat", "file_read", "file_removal"]
    creation = frame.iloc[0]
    assert creation["value"] == pytest.approx(4260.376)
    assert creation["uncertainty"] == pytest.approx(604.617 / 4260.376)
    assert creation["nodes"] == 1 and creation["ppn"] == 2


def test_fio_json_bandwidth_iops_and_latency_in_seconds():
    frame = read_measurements(DATA / "fio-write-direct.json").set_index("metric")
    assert frame.loc["agg_bw", "value"] == pytest.approx(1542732505)
    assert frame.loc["iops", "value"] == pytest.approx(1471.264368)
    assert 1e-4 < frame.loc["clat_mean", "value"] < 1e-1  # nanoseconds converted to seconds
    assert frame.loc["agg_bw", "ppn"] == 2  # numjobs


def test_bonnie_csv_skips_plus_fields():
    frame = read_measurements(DATA / "bonnie-small.csv")
    phases = dict(zip(frame["phase"], frame["value"]))
    assert phases["write_block"] == pytest.approx(493753 * 1024)
    assert phases["write_char"] == pytest.approx(898 * 1024)
    assert "rewrite" not in phases  # "+++++": too fast to time, no measurement


def test_bonnie_formats_196_and_197_have_every_field_two_places_earlier(tmp_path):
    # bonnie-1.97.csv is bonnie-small.csv's line without the two fields format 1.98 added.
    new = read_measurements(DATA / "bonnie-small.csv")
    old = read_measurements(DATA / "bonnie-1.97.csv")
    columns = ["phase", "metric", "value"]
    assert len(old) == len(new) == 3 and old[columns].equals(new[columns])
    one_nine_six = tmp_path / "b196.csv"
    one_nine_six.write_text((DATA / "bonnie-1.97.csv").read_text().replace("1.97,1.97,", "1.96,1.96,"))
    assert read_measurements(one_nine_six)[columns].equals(new[columns])
    short = tmp_path / "short.csv"
    short.write_text(",".join((DATA / "bonnie-1.97.csv").read_text().split(",")[:30]) + "\n")
    with pytest.raises(SimfsError, match=r"short\.csv:1: bonnie\+\+ CSV format 1\.97 line has 30 fields, expected"):
        read_measurements(short)


def test_bonnie_stdout_is_read_from_its_csv_line_not_its_rounded_tables(tmp_path):
    # bonnie++ 2.00a without -q: the tables say "1.0g" for the block write; the CSV line
    # on line 11 says 1024138 KiB/s.
    frame = read_measurements(DATA / "bonnie-2.00a-stdout.txt")
    phases = dict(zip(frame["phase"], frame["value"]))
    assert phases == {"write_char": 1225 * 1024, "write_block": 1024138 * 1024, "read_char": 2158 * 1024}
    assert set(frame["source"]) == {f"{DATA / 'bonnie-2.00a-stdout.txt'}:11"}
    tables = tmp_path / "tables.txt"
    tables.write_text("".join((DATA / "bonnie-2.00a-stdout.txt").read_text().splitlines(True)[:10]))
    with pytest.raises(SimfsError, match=r"tables\.txt: bonnie\+\+ output without its CSV line"):
        read_measurements(tables)


def test_bonnie_103_lines_have_no_format_version():
    # A 1.03e stdout (progress, tables, CSV line) and a 1.03b CSV line, as their users
    # posted them; the values are the tables' K/sec and /sec.
    frame = read_measurements(DATA / "bonnie-1.03e.txt")
    phases = dict(zip(frame["phase"], frame["value"]))
    assert phases == {
        "write_char": 87919 * 1024,
        "write_block": 55024 * 1024,
        "rewrite": 56396 * 1024,
        "read_char": 88632 * 1024,
        "read_block": 2981975 * 1024,
        "sequential_create": 319,
        "sequential_delete": 266,
        "random_create": 307,
        "random_delete": 269,
    }  # seeks and the stats were "+++++"
    assert set(frame["system"]) == {"raid0"} and set(frame["workload"]) == {"bonnie++ -s 2G"}
    line = read_measurements(DATA / "bonnie-1.03b.csv").set_index("phase")["value"]
    assert line["random_seek"] == 311.3 and line["read_block"] == 193807 * 1024 and len(line) == 6


def test_obdfilter_survey_as_published():
    frame = read_measurements(ROOT / "calibration" / "xyratex-cs6000" / "obdfilter-survey.txt")
    write = frame[(frame["phase"] == "write") & (frame["metric"] == "ost_bw")]
    assert list(write["value"] / MIB) == pytest.approx([3032.89, 3022.43])
    low = frame[(frame["phase"] == "read") & (frame["metric"] == "ost_bw_max")]
    assert low["value"].iloc[0] / MIB == pytest.approx(1112.82)
    assert frame["system"].iloc[0] == "cstor01n04"


def test_iozone_children_see_throughput():
    frame = read_measurements(DATA / "iozone-throughput.txt")
    assert list(frame["phase"]) == ["write", "rewrite", "read", "reread"]
    assert frame["value"].iloc[0] == pytest.approx(2950211.62 * 1024)
    assert frame["ppn"].iloc[0] == 4


def test_iozone_automatic_mode_reads_every_cell_under_its_column():
    frame = read_measurements(DATA / "iozone-auto.txt")
    # 7 record lengths x 13 tests; the first row as iozone printed it (kB/s of 1024 B).
    assert len(frame) == 7 * 13 and set(frame["metric"]) == {"agg_bw"}
    first = frame[frame["source"].str.endswith(":29")]
    assert list(first["phase"]) == [
        "write", "rewrite", "read", "reread", "random_read", "random_write", "reverse_read",
        "record_rewrite", "stride_read", "fwrite", "frewrite", "fread", "freread",
    ]  # fmt: skip
    assert first["value"].iloc[0] == 1138055 * 1024 and first["value"].iloc[-1] == 6669706 * 1024
    assert settings_of(first.iloc[0]) == {"file_size_bytes": 4096 * 1024, "record_bytes": 4 * 1024}
    assert frame["tool_version"].iloc[0] == "3.489" and frame["ppn"].iloc[0] == 1
    # -i 0 -i 2: only write, rewrite and the random tests ran; their columns are the ones read.
    selected = read_measurements(DATA / "iozone-auto-selected.txt")
    assert set(selected["phase"]) == {"write", "rewrite", "random_read", "random_write"}
    assert selected[selected["phase"] == "random_write"]["value"].iloc[-1] == 18763275 * 1024
    # -O: operations per second, two file sizes.
    ops = read_measurements(DATA / "iozone-auto-ops.txt")
    assert set(ops["metric"]) == {"ops_rate"} and len(ops) == 10 * 4
    assert {settings_of(row)["file_size_bytes"] for _, row in ops.iterrows()} == {1 << 20, 2 << 20}


def test_io500_results_and_invalid_flag():
    frame = read_measurements(DATA / "io500-result_summary.txt")
    easy = frame[frame["phase"] == "ior-easy-write"].iloc[0]
    assert easy["value"] == pytest.approx(3.421534 * (1 << 30))
    hard_delete = frame[frame["phase"] == "mdtest-hard-delete"].iloc[0]
    assert hard_delete["value"] == pytest.approx(5733.170) and math.isinf(hard_delete["uncertainty"])
    assert "timestamp" not in set(frame["phase"])
    assert len(frame[frame["metric"] == "score"]) == 3


def test_darshan_example_log():
    darshan = pytest.importorskip("darshan")
    log = Path(darshan.__file__).parent / "examples" / "example_logs" / "example.darshan"
    frame = read_measurements(log)
    row = frame.iloc[0]
    # 2,199,023,259,968 bytes written by 2048 ranks; slowest rank's I/O 85.47 s.
    assert row["phase"] == "write" and row["source"].endswith(":POSIX")
    assert row["value"] == pytest.approx(2199023259968 / 85.47495, rel=1e-4)
    # The log says 2048 processes, not on how many nodes: neither is guessed.
    assert pd.isna(row["nodes"]) and pd.isna(row["ppn"]) and settings_of(row)["processes"] == 2048


def test_darshan_modules_and_hosts():
    pytest.importorskip("darshan")
    frame = read_measurements(DATA / "darshan" / "mpi-io-test.darshan")
    modules = {row["source"].rsplit(":", 1)[1]: row for _, row in frame.iterrows()}
    assert set(modules) == {"POSIX", "MPI-IO", "STDIO"}
    # MPI-IO moved its 64 MiB each way through POSIX; STDIO wrote 321 bytes of text.
    assert settings_of(modules["MPI-IO"])["bytes_written"] == settings_of(modules["POSIX"])["bytes_written"] == 1 << 26
    assert (modules["STDIO"]["phase"], settings_of(modules["STDIO"])["bytes_written"]) == ("write", 321)
    traced = read_measurements(DATA / "darshan" / "hdf5_diagonal_write_1_byte_dxt.darshan").iloc[0]
    # Its DXT records name one host: 10 processes on 1 node.
    assert (traced["nodes"], traced["ppn"]) == (1, 10)


def test_published_csv():
    frame = read_measurements(ROOT / "calibration" / "crtdc-lfs3" / "published.csv")
    peak = frame.iloc[0]
    assert peak["value"] == pytest.approx(5.7e9)
    assert peak["over"] == "nodes=1,2,4,8,16,32,64"
    assert "seed 000" in peak["source"]


PUBLISHED_HEADER = "system,tool,workload,nodes,ppn,settings,over,phase,metric,value,unit,uncertainty,source"
PUBLISHED_ROW = "x,ior,ior -F -t 1m -b 256m -w,1,1,,,write,agg_bw,1,GB/s,0.1,"


@pytest.mark.parametrize(
    "text, message",
    [
        # A column missing or misspelt is named (it was "unrecognised format").
        (PUBLISHED_HEADER.replace(",unit", "") + "\n", r"p\.csv:1: missing columns: unit$"),
        (PUBLISHED_HEADER.replace("metric", "metirc") + "\n", r"missing columns: metric \(the header has metirc"),
        (PUBLISHED_HEADER.replace(",", ";") + "\n", r"p\.csv:1: columns separated by ';' or tabs: expected commas"),
        # A spreadsheet's byte-order mark is not part of the first column's name.
        ("\ufeff" + PUBLISHED_HEADER + "\n" + PUBLISHED_ROW.replace("GB/s", "GBps") + "s\n", r"p\.csv:2: unit 'GBps'"),
        # A quoted source over two lines: the next record's line is its own.
        (
            PUBLISHED_HEADER + "\n" + PUBLISHED_ROW + '"a\nb"\n' + PUBLISHED_ROW.replace("GB/s", "GBps") + "s\n",
            r"p\.csv:4: unit 'GBps'",
        ),
    ],
)
def test_published_csv_errors_name_the_column_and_line(tmp_path, text, message):
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SimfsError, match=message):
        read_measurements(path)


def test_manifest_gives_dd_its_context(tmp_path):
    (tmp_path / "node1.txt").write_text((DATA / "dd-write.txt").read_text())
    (tmp_path / "manifest.toml").write_text(
        '[defaults]\nsystem = "crtdc-lfs3"\n[files."node1.txt"]\n'
        'workload = "dd if=/dev/zero of=f bs=1M count=200"\nnodes = 1\nppn = 1\nsettings = { stripe_count = 2 }\n'
    )
    frame = read_measurements(tmp_path)
    assert set(frame["phase"]) == {"write"} and set(frame["system"]) == {"crtdc-lfs3"}
    assert frame["settings"].iloc[0] == '{"stripe_count": 2}'


@pytest.mark.parametrize(
    "name, message",
    [
        ("bad/ior-truncated.json", r"ior-truncated\.json:\d+: truncated or invalid IOR JSON"),
        ("bad/obdfilter-error.txt", r"obdfilter-error\.txt:1: obdfilter-survey reported ERROR for rewrite"),
        ("bad/dd-enospc.txt", r"dd-enospc\.txt:4: not a dd summary line"),
    ],
)
def test_bad_inputs_are_located_errors(name, message):
    with pytest.raises(SimfsError, match=message):
        read_measurements(DATA / name)


def test_empty_directory_and_unknown_format(tmp_path):
    with pytest.raises(SimfsError, match="no measurement files found"):
        read_measurements(tmp_path)
    (tmp_path / "notes.txt").write_text("hello\n")
    # In a folder the file is skipped with a warning; nothing else there is an error.
    with pytest.warns(SkippedFileWarning, match=r"notes\.txt: unrecognised format"):
        with pytest.raises(SimfsError, match=r"no measurement file could be read \(1 skipped"):
            read_measurements(tmp_path)
    with pytest.raises(SimfsError, match=r"notes\.txt: unrecognised format"):
        read_measurements(tmp_path / "notes.txt")  # named directly: an error
    with pytest.raises(SimfsError, match=r"notes\.txt: unrecognised format"):
        read_measurements(tmp_path, strict=True)


def test_a_line_that_does_not_parse_inside_a_table_is_an_error(tmp_path):
    text = (DATA / "ior-fpp-text.txt").read_text().replace("read      6008 ", "read      60x8 ")
    (tmp_path / "ior.txt").write_text(text)
    with pytest.raises(SimfsError, match=r"ior\.txt:36: bw\(MiB/s\): expected a number, got '60x8'"):
        read_measurements(tmp_path / "ior.txt")


def test_unknown_workload_is_a_named_warning_not_a_number():
    frame = read_measurements(ROOT / "calibration" / "crtdc-lfs5")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        points, skipped = plan(frame)
    messages = [str(w.message) for w in caught if issubclass(w.category, NotSimulatedWarning)]
    assert any("tool 'iozone' is not modelled" in m for m in messages)
    assert any("tool 'ib' is not modelled" in m for m in messages)
    assert len(points) == 2 and len(skipped) == 2


def test_mdtest_rates_are_simulated_phase_by_phase():
    measurements = read_measurements(DATA / "mdtest-files.txt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        points, _ = plan(measurements)
    assert [p.phase for p in points] == ["file create", "file stat", "file read", "file remove"]
    # Tree creation and removal are mdtest's own bookkeeping: named, not silently dropped.
    assert sum(issubclass(w.category, NotSimulatedWarning) and "tree_" in str(w.message) for w in caught) == 2
    predictor = Predictor(simfs.load_system("crtdc-lfs3"))
    # Two processes of one node in unique directories: the client keeps one modifying RPC
    # in flight and one close beside it, so the creates take turns in the slot while the
    # other process's close runs; on the MDS's one core (processor sharing) each create's
    # work shares the core with that close's.  An item per round trip plus both works,
    # after the first (which has no close beside it).
    system = predictor.system
    cycle = system.io.metadata_latency_s + system.metadata.demand_s("create") + system.metadata.demand_s("close")
    assert system.metadata.cores == 1
    assert predictor.predict(points[0]) == pytest.approx(1 / cycle, rel=2e-3)
    assert predictor.predict(points[0]) > 1 / open_close_s(system)  # faster than taking turns


IO500_IOR = DATA / "io500-ior"


@pytest.mark.parametrize(
    ("name", "phase", "mib_s", "nodes", "ppn", "line"),
    [
        # Each value is the file's own results row; nodes and ppn from its Options block.
        ("ior-3.1.0-easy-write.txt", "write", 12603, 16, 4, 22),  # "clients = 64 (4 per node)"
        ("ior-3.2.0-hard-read.txt", "read", 28530, 184, 32, 31),  # 9-column table
        ("ior-3.2.1-hard-read.txt", "read", 21362, 96, 1, 31),
        ("ior-3.3.0-easy-read.txt", "read", 110032, 10, 16, 29),
        ("ior-3.3alpha1-easy-read.txt", "read", 42800, 10, 16, 31),
        ("ior-3.4.0-hard-read.txt", "read", 2439401, 10, 960, 32),
        ("ior-3.4.0-easy-read-bytes-moved.txt", "read", 78248, 10, 38, 35),  # WARNING lines in the table
        ("ior-4.1.0-easy-read.txt", "read", 191020, 10, 192, 35),
    ],
)
def test_ior_outputs_of_every_version_in_the_io500_archive(name, phase, mib_s, nodes, ppn, line):
    frame = read_measurements(IO500_IOR / name)
    assert list(frame["metric"]) == ["agg_bw"]
    row = frame.iloc[0]
    assert (row["phase"], row["value"], row["nodes"], row["ppn"]) == (phase, mib_s * MIB, nodes, ppn)
    assert row["source"].endswith(f"{name}:{line}")
    assert row["workload"].startswith("ior ")


def test_ior_stonewalling_line_gives_the_slowest_rank_times_the_ranks():
    frame = read_measurements(IO500_IOR / "ior-3.2.0-hard-write-stonewall.txt")
    by_metric = frame.set_index("metric")["value"]
    # "write 162.04": every rank finished its 9,500 records (wear-out), so the makespan
    # rate; "stonewalling pairs accessed min: 2800 ... time: 300.2s", 160 tasks of 47,008 B.
    assert by_metric["agg_bw"] == pytest.approx(162.04 * MIB)
    assert by_metric["min_rank_agg_bw"] == pytest.approx(2800 * 47008 * 160 / 300.2)
    assert set(frame["nodes"]) == {10}  # 160 tasks at 16 per node: IOR 3.2 prints no node count
    read = read_measurements(IO500_IOR / "ior-3.4.0-hard-read-stonewall.txt").set_index("metric")["value"]
    assert read["min_rank_agg_bw"] == pytest.approx(250000 * 47008 * 756 / 472.1)


def test_ior_output_after_mpi_start_up_noise_is_still_ior(tmp_path):
    noise = "".join(f"[node{i}:1234] help message from btl_openib, line {i}\n" for i in range(3000))
    (tmp_path / "ior.txt").write_text(noise + (IO500_IOR / "ior-3.3.0-easy-read.txt").read_text())
    assert len(noise) > 65536
    frame = read_measurements(tmp_path / "ior.txt")
    assert frame["value"].iloc[0] == 110032 * MIB


def test_ior_table_line_that_starts_like_a_row_must_be_one(tmp_path):
    text = (IO500_IOR / "ior-3.4.0-easy-read-bytes-moved.txt").read_text()
    (tmp_path / "ior.txt").write_text(text.replace("WARNING: Expected aggregate file size       =", "read      "))
    with pytest.raises(
        SimfsError, match=r"ior\.txt:32: not an IOR results row of 11 columns: 'read +3952712089600000'"
    ):
        read_measurements(tmp_path / "ior.txt")


def test_ior_unknown_table_header_is_named(tmp_path):
    text = (IO500_IOR / "ior-4.1.0-easy-read.txt").read_text().replace("Latency(s)", "Lat(s)")
    (tmp_path / "ior.txt").write_text(text)
    with pytest.raises(SimfsError, match=r"ior\.txt:\d+: unknown IOR results header"):
        read_measurements(tmp_path / "ior.txt")


IO500_MDTEST = DATA / "io500-mdtest"


@pytest.mark.parametrize(
    ("name", "rows", "nodes", "ppn"),
    [
        # (phase, mean ops/s, line) of every rate row that is not all zeros; nothing from
        # the SUMMARY time tables (which 3.3 and later print after the rates).
        ("mdtest-1.9.3-easy-write.txt", [("file_creation", 221527.480, 13), ("tree_creation", 3.015, 17)], 184, 32),
        ("mdtest-3.3alpha1-easy-stat.txt", [("file_stat", 2763825.720, 14)], 10, 16),
        (
            "mdtest-3.3.0-easy-write-stonewall.txt",
            [("file_creation", 81877.721, 17), ("file_create_stonewall", 120614.383, 21), ("tree_creation", 1.601, 22)],
            8,
            12,
        ),
        (
            "mdtest-3.4.0-easy-write-stonewall.txt",
            [
                ("file_creation", 46925.092, 17),
                ("file_create_stonewall", 47493.454, 21),
                ("tree_creation", 891.126, 22),
            ],
            1,
            16,
        ),
        ("mdtest-4.1.0-easy-stat.txt", [("file_stat", 428583.077, 15)], 4, 32),
    ],
)
def test_mdtest_outputs_of_every_version_in_the_io500_archive(name, rows, nodes, ppn):
    frame = read_measurements(IO500_MDTEST / name)
    found = [(r.phase, r.value, int(r.source.rsplit(":", 1)[1])) for r in frame.itertuples()]
    assert found == rows
    assert set(frame["metric"]) == {"ops_rate"}
    assert (set(frame["nodes"]), set(frame["ppn"])) == ({nodes}, {ppn})
    assert all(w.startswith("mdtest ") and '"' not in w and "'" not in w for w in frame["workload"])


def test_mdtest_of_one_iteration_states_no_uncertainty():
    # mdtest 3.3alpha1 (DDN AI400, IO500 submission 44): of 1 iteration, the Std Dev
    # (97.337 of 2,763,825.720) is the spread of every rank's copy of the one rate, not a
    # run-to-run spread; mdtest 4.1 prints 0.000 there.  Neither weighs the row in a fit.
    for name in ("mdtest-3.3alpha1-easy-stat.txt", "mdtest-4.1.0-easy-stat.txt"):
        assert read_measurements(IO500_MDTEST / name)["uncertainty"].isna().all(), name
    # Of two iterations it is their spread (test_mdtest_summary_rates).
    assert read_measurements(DATA / "mdtest-files.txt")["uncertainty"].notna().all()


def test_mdtest_table_of_only_zeros_is_refused_in_one_line(tmp_path):
    text = (IO500_MDTEST / "mdtest-4.1.0-easy-stat.txt").read_text()
    (tmp_path / "md.txt").write_text(text.replace("428583.077", "0.000"))
    with pytest.raises(SimfsError, match=r"md\.txt: every rate in the SUMMARY rate table is zero"):
        read_measurements(tmp_path / "md.txt")


IO500_HARNESS = DATA / "io500-harness"
GIB = 1 << 30


def test_io500_bash_harness_summary_in_gb_per_s_is_gib_per_s():
    frame = read_measurements(IO500_HARNESS / "bash-2019-GB-result_summary.txt").set_index("phase")
    # The harness divided IOR's MiB/s by 1024 and printed "GB/s".
    assert frame.loc["ior-easy-write", "value"] == pytest.approx(5.525 * GIB)
    assert frame.loc["mdtest-hard-delete", "value"] == pytest.approx(8860.0)
    assert frame.loc["bandwidth", "value"] == pytest.approx(1.77042)
    assert len(frame) == 12 + 3
    newer = read_measurements(IO500_HARNESS / "bash-2020-result_summary.txt")
    assert len(newer) == 12 + 3 and newer["value"].gt(0).all()


def test_io500_bash_harness_log_gives_each_result_its_command_line():
    frame = read_measurements(IO500_HARNESS / "bash-2020-io-500-summary.txt").set_index("phase")
    # Once each: the log's recap of result_summary.txt after "[Summary]" is not read again.
    assert len(frame) == 12 + 3 and frame.index.is_unique
    easy = frame.loc["ior-easy-write"]
    assert easy["value"] == pytest.approx(9.289 * GIB)
    assert easy["workload"].startswith("ior -w -a POSIX -t 4m -v -b 9920000m -F")
    assert frame.loc["mdtest-hard-write", "workload"].startswith("mdtest -Y -C -t -F -P -w 3901 -e 3901")


def test_io500_extended_score_is_kept_apart():
    frame = read_measurements(IO500_HARNESS / "sc21-extended-result_summary.txt").set_index("phase")
    assert frame.loc["total", "value"] == pytest.approx(21.717851)
    assert frame.loc["total-extended", "value"] == pytest.approx(13.253362)


def test_io500_result_ini_gives_scores_and_command_lines():
    frame = read_measurements(IO500_HARNESS / "isc24-result.txt").set_index("phase")
    assert len(frame) == 12 + 3
    easy = frame.loc["ior-easy-write"]
    assert (easy["metric"], easy["value"]) == ("agg_bw", pytest.approx(24.251707 * GIB))
    assert easy["workload"].startswith("ior --dataPacketType=timestamp -C -Q 1 -g")
    assert frame.loc["mdtest-easy-write", "value"] == pytest.approx(9262.330)
    assert frame.loc["find", "workload"].startswith("pfind ")
    assert frame.loc["total", "value"] == pytest.approx(6.703706)
    isc20 = read_measurements(IO500_HARNESS / "isc20-result.txt").set_index("phase")
    # The stonewall figure beside it (26883.15, unit unstated) is not read.
    assert isc20.loc["ior-easy-write", "value"] == pytest.approx(73.660290 * GIB)
    assert not any(phase.endswith("stonewall") for phase in isc20.index)


def test_io500_result_ini_of_an_invalid_run_has_no_weight():
    frame = read_measurements(IO500_HARNESS / "invalid-result.txt")
    assert len(frame) > 0 and frame["uncertainty"].eq(math.inf).all()


def test_io500_result_ini_bad_line_is_named(tmp_path):
    text = (IO500_HARNESS / "isc24-result.txt").read_text().replace("score           = 9.262330", "score 9.262330")
    (tmp_path / "result.txt").write_text(text)
    with pytest.raises(SimfsError, match=r"result\.txt:17: not an IO500 result\.txt line .*'score 9\.262330'"):
        read_measurements(tmp_path / "result.txt")


@pytest.mark.parametrize(
    ("path", "version"),
    [
        (IO500_IOR / "ior-3.1.0-easy-write.txt", "3.1.0"),
        (IO500_IOR / "ior-3.3alpha1-easy-read.txt", "3.3alpha1"),
        (DATA / "ior-shared.json", "4.1.0+dev"),
        (IO500_MDTEST / "mdtest-1.9.3-easy-write.txt", "1.9.3"),
        (IO500_HARNESS / "sc21-extended-result_summary.txt", "io500-sc21"),
        (IO500_HARNESS / "invalid-result.txt", "io500-sc23_v1"),
        (IO500_HARNESS / "isc20-result.txt", "io500-sc20_v3"),
        (IO500_HARNESS / "bash-2019-GB-result_summary.txt", ""),  # the bash harness does not say
    ],
)
def test_the_tool_version_is_recorded_as_the_output_states_it(path, version):
    assert set(read_measurements(path)["tool_version"]) == {version}


def test_fio_normal_text_agrees_with_fio_json_of_the_same_run():
    from simfs.ingest import fio, fio_text
    from simfs.ingest.context import FileContext

    # One run printed both ways (--output-format=normal,json): the text's rounded numbers
    # must be the JSON's, measurement for measurement.
    text = (DATA / "fio-normal-and-json.txt").read_text()
    # fio writes the job lines, then the JSON, then the normal results after it.
    start = text.index('{\n  "fio version"')
    _, end = json.JSONDecoder().raw_decode(text, start)
    normal = text[:start] + text[end:]
    from_text = fio_text.parse(normal, "t", FileContext())
    from_json = fio.parse(text, "j", FileContext())
    assert [(m.phase, m.metric, m.ppn) for m in from_text] == [(m.phase, m.metric, m.ppn) for m in from_json]
    for t, j in zip(from_text, from_json):
        if t.metric.startswith("clat_p"):
            assert t.value == pytest.approx(j.value, abs=1e-6)  # whole microseconds in the text
        else:
            assert t.value == pytest.approx(j.value, rel=5e-3)  # 3-4 significant digits
    assert read_measurements(DATA / "fio-normal-and-json.txt")["source"].str.contains("jobs\\[").all()


def test_fio_normal_text_alone():
    frame = read_measurements(DATA / "fio-normal.txt")
    assert detect_format((DATA / "fio-normal.txt").read_text()) == "fio-text"
    bandwidth = frame[frame["metric"].isin(["rank_bw", "agg_bw"])]
    # Two clones of seqwrite one by one, seqread's two as one group (group_reporting).
    assert list(bandwidth["metric"]) == ["rank_bw", "rank_bw", "agg_bw"]
    assert list(bandwidth["value"]) == [308 * MIB, 296 * MIB, 2207 * MIB]
    assert set(frame["ppn"]) == {2}
    assert (
        frame["workload"].iloc[0]
        == "fio --name=seqwrite --rw=write --bs=1024k --ioengine=psync --iodepth=1 --numjobs=2"
    )
    # Not simulated, and told why: the text has no size (it had refused fio's own "1024KiB").
    from simfs.ingest import fio

    reason = fio.why_not_simulated(frame["workload"].iloc[0], "write")
    assert reason.startswith("no size= (fio's normal output does not give it") and "--output-format=json" in reason


def test_fio_2_text_and_json_read_in_fio_2_units():
    # fio 2.2.10 (built here from axboe/fio), the same job file as fio-normal.txt's.
    text = read_measurements(DATA / "fio2-normal.txt")
    bandwidth = text[text["metric"].isin(["rank_bw", "agg_bw"])]
    assert list(bandwidth["metric"]) == ["rank_bw", "rank_bw", "agg_bw"]
    # "bw=1185.2MB/s": fio 2's num2str with kb_base=1024.
    assert list(bandwidth["value"]) == [1185.2 * MIB, 1185.2 * MIB, 2285.8 * MIB]
    assert set(text["ppn"]) == {2}
    assert text["workload"].iloc[0] == "fio --name=seqwrite --rw=write --bs=1M --ioengine=psync --iodepth=1 --numjobs=2"
    # "io=65536KB, bw=66065KB/s, ... runt=   992msec": the rate is io over runt, in KiB.
    randread = read_measurements(DATA / "fio2-randread.txt").set_index("metric")["value"]
    assert randread["agg_bw"] == 66065 * 1024 == pytest.approx(65536 * 1024 / 0.992, rel=1e-5)
    assert randread["iops"] == 16516 and randread["clat_mean"] == pytest.approx(59.90e-6)
    assert randread["clat_p99"] == pytest.approx(89e-6)
    # The JSON of another run of the same jobs: bw in KiB/s, clat in microseconds.
    document = json.loads((DATA / "fio2.json").read_text())
    first = document["jobs"][0]["write"]
    frame = read_measurements(DATA / "fio2.json")
    row = frame[(frame["metric"] == "rank_bw")].iloc[0]
    assert row["value"] == first["bw"] * 1024
    assert row["value"] == pytest.approx(first["io_bytes"] * 1024 * 1000 / first["runtime"], rel=1e-3)
    clat = frame[frame["metric"] == "clat_mean"]["value"].iloc[0]
    assert clat == pytest.approx(first["clat"]["mean"] * 1e-6)
    # fio 2.2 prints no job options: seqread's group_reporting entry has no process count.
    assert frame[frame["phase"] == "read"]["ppn"].isna().all()
    assert set(frame[frame["phase"] == "write"]["ppn"]) == {2}


def test_fio_text_with_an_error_is_refused(tmp_path):
    text = (DATA / "fio-normal.txt").read_text().replace("jobs=1): err= 0: pid=13804", "jobs=1): err= 5: pid=13804")
    (tmp_path / "fio.txt").write_text(text)
    with pytest.raises(SimfsError, match=r"fio\.txt:\d+: fio reported err=5 for job 'seqwrite'"):
        read_measurements(tmp_path / "fio.txt")


ELBENCHO = DATA / "elbencho"


def test_elbencho_result_file_and_csv_of_one_run_agree():
    text = read_measurements(ELBENCHO / "bw-direct.04threads.2798687.out")
    table = read_measurements(ELBENCHO / "bw-direct.04threads.2798687.csv")
    key = ["phase", "metric", "value", "nodes", "ppn"]
    assert sorted(map(tuple, text[key].values.tolist())) == sorted(map(tuple, table[key].values.tolist()))
    write = text.set_index(["phase", "metric"])["value"]
    # "Throughput MiB/s : 3486 3514": the LAST DONE column, all 4 hosts x 4 threads.
    assert write[("write", "agg_bw")] == 3514 * MIB
    assert write[("mkdirs", "ops_rate")] == 4379
    assert set(text["nodes"]) == {4} and set(text["ppn"]) == {4}
    assert set(table["tool_version"]) == {"2.1-0"}
    assert text["workload"].iloc[0].startswith("elbencho --hosts cgpu03,cgpu04,cgpu05,cgpu06, --threads 4")


def test_elbencho_live_csv_is_not_a_result():
    with pytest.raises(SimfsError, match=r"live\.csv:1: elbencho live statistics \(--livecsv\)"):
        read_measurements(ELBENCHO / "bw-direct.04threads.2798687.live.csv")


def test_a_folder_of_elbencho_files_reads_the_results_and_warns_for_the_live_csv():
    with pytest.warns(SkippedFileWarning, match="live statistics"):
        frame = read_measurements(ELBENCHO)
    assert len(frame) == 6


def test_fio_text_result_line_that_does_not_parse_is_named(tmp_path):
    text = (DATA / "fio-normal.txt").read_text().replace("BW=296MiB/s", "BW=296 MiB/s")
    (tmp_path / "fio.txt").write_text(text)
    with pytest.raises(SimfsError, match=r"fio\.txt:31: not a fio result line"):
        read_measurements(tmp_path / "fio.txt")


def test_a_fio_result_outside_calibrate_says_where_it_is_compared():
    # simfs calibrate maps fio jobs to IOR runs; plan() (validate --live, case data) does
    # not, and said "tool 'fio' is not modelled" with a list of tools fio was not in.
    frame = read_measurements(DATA / "fio-write-direct.json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        points, skipped = plan(frame)
    assert points == [] and len(skipped) == len(frame)
    assert all("a fio result: simfs calibrate compares it" in reason for reason in skipped["reason"])
    assert not any("is not modelled" in str(w.message) for w in caught)
