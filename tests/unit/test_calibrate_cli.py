"""simfs calibrate and simfs validate from the command line."""

import tomllib
from pathlib import Path

import pytest

from simfs.cli import main
from tests.property.test_calibration_properties import PROFILE, synthetic

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tiny(tmp_path):
    profile = tmp_path / "tiny.toml"
    profile.write_text(
        "# a tiny test system\n"
        + PROFILE.replace("sustained_Bps = 1.5e8", "sustained_Bps = 1.5e8  # estimate: a test value")
    )
    data = tmp_path / "data"
    data.mkdir()
    frame = synthetic(2e8, 1.2e8)
    lines = ["system,tool,workload,nodes,ppn,settings,over,phase,metric,value,unit,uncertainty,source"]
    for row in frame.itertuples():
        lines.append(f"tiny,dd,{row.workload},{row.nodes},{row.ppn},,,{row.phase},agg_bw,{row.value},B/s,,synthetic")
    (data / "runs.csv").write_text("\n".join(lines) + "\n")
    return profile, data


def test_calibrate_writes_a_profile_that_keeps_comments_and_a_report(tiny, tmp_path, capsys):
    profile, data = tiny
    before = profile.read_text()
    out, report = tmp_path / "fitted.toml", tmp_path / "fit.md"
    code = main(
        [
            "calibrate",
            "--system",
            str(profile),
            str(data),
            "--out",
            str(out),
            "--report",
            str(report),
            "--bootstrap",
            "20",
        ]
    )
    assert code == 0
    assert profile.read_text() == before  # the source is untouched
    text = out.read_text()
    assert "# a tiny test system" in text  # the source's comments survive
    fitted_line = next(line for line in text.splitlines() if line.startswith("sustained_Bps"))
    assert "fitted by simfs calibrate" in fitted_line and "prior 1.5e+08: estimate: a test value" in fitted_line
    fitted = tomllib.loads(text)
    assert fitted["system"]["name"] == "tiny-fitted"
    assert fitted["client"]["copy_read_Bps"] == pytest.approx(2e8, rel=0.02)
    assert fitted["calibration"]["fitted"]["ost.hdd.sustained_Bps"]["identifiable"] is True
    assert "fitted by simfs calibrate" in text
    assert "| `client.copy_read_Bps` |" in report.read_text()
    assert "client.copy_read_Bps = 2" in capsys.readouterr().out


def test_calibrate_refuses_to_overwrite_its_source(tiny, capsys):
    profile, data = tiny
    before = profile.read_text()
    code = main(["calibrate", "--system", str(profile), str(data), "--out", str(profile), "--bootstrap", "0"])
    assert code == 2
    assert "refusing to overwrite the source profile" in capsys.readouterr().err
    assert profile.read_text() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["calibrate", "--system", "crtdc-lfs3", "{empty}", "--out", "{out}"], "no measurement files found"),
        (["calibrate", "--system", "crtdc-lfs3", "{missing}", "--out", "{out}"], "no such file or directory"),
        (["validate", "{empty}"], "no validation cases"),
        (["calibrate", "--system", "crtdc-lfs3", "{empty}", "--out", "{out}", "--jobs", "0"], "--jobs: jobs: expected a positive number of processes, got 0"),
        (["calibrate", "--system", "crtdc-lfs3", "{empty}", "--out", "{out}", "--jobs", "two"], "--jobs 'two': expected an integer"),
        (["calibrate", "--system", "crtdc-lfs3", "{empty}", "--out", "{out}", "--jobs", "2", "--scheduler", "tcp://h:1"], "give jobs (local processes) or scheduler"),
        (["calibrate", "--system", "crtdc-lfs3", "{empty}", "--out", "{out}.json"], "o.toml.json: expected a file ending in .toml"),
    ],
)  # fmt: skip
def test_calibrate_and_validate_input_errors(tmp_path, capsys, args, message):
    (tmp_path / "empty").mkdir()
    filled = [a.format(empty=tmp_path / "empty", missing=tmp_path / "nope", out=tmp_path / "o.toml") for a in args]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "o.toml").exists()


def test_validate_a_case_and_its_errors(tmp_path, capsys):
    case = tmp_path / "case.toml"
    case.write_text(
        '[case]\nname = "x"\nsystem = "crtdc-lfs3"\nworkload = "dd bs=1M count=1000"\nphase = "write"\n'
        'metric = "agg_bw"\nsplit = "held-out"\ntolerance = 0.2\nsource = "test"\nsettings = { ppn = 1 }\n'
        'curve = "nodes=1,2,4"\n[[points]]\nnodes = 2\nvalue = 2.0e9\n[expect]\ncollapse = false\n'
    )
    report = tmp_path / "REPORT.md"
    assert main(["validate", str(case), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "held-out: 1 points" in out
    text = report.read_text()
    assert "## Headline: held-out points" in text and (tmp_path / "plots" / "case.png").exists()
    case.write_text(case.read_text().replace('split = "held-out"', 'split = "training"'))
    assert main(["validate", str(case)]) == 2
    assert "case.split: expected one of calibration, held-out" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("bandwidth", "--metric bandwidth: expected one of agg_bw"),
        ("clat_p99", "--metric clat_p99: expected one of"),  # read, but not simulated
        ("ops_rate", "--metric ops_rate: no measurement of these metrics in the data"),
    ],
)
def test_calibrate_metric_filter_errors(tmp_path, capsys, metric, message):
    data = Path(__file__).parents[1] / "data" / "ingest" / "io500-ior"
    sample = next(p for p in sorted(data.iterdir()) if p.suffix == ".txt")
    argv = ["calibrate", "--system", "crtdc-lfs3", str(sample), "--out", str(tmp_path / "o.toml"), "--metric", metric]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "o.toml").exists()
