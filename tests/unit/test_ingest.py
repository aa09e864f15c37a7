"""Every parser on real tool output (tests/data/ingest/README.md says how each was made)."""

import math
import warnings
from pathlib import Path

import pytest

import simfs
from simfs.errors import SimfsError
from simfs.ingest import SkippedFileWarning, detect_format, read_measurements
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
    assert row["phase"] == "write" and row["ppn"] == 2048
    assert row["value"] == pytest.approx(2199023259968 / 85.47495, rel=1e-4)


def test_published_csv():
    frame = read_measurements(ROOT / "calibration" / "crtdc-lfs3" / "published.csv")
    peak = frame.iloc[0]
    assert peak["value"] == pytest.approx(5.7e9)
    assert peak["over"] == "nodes=1,2,4,8,16,32,64"
    assert "seed 000" in peak["source"]


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
        ("bad/fio2-usec.json", r"fio2-usec\.json: fio-2\.2\.10 JSON has microsecond latency keys"),
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
