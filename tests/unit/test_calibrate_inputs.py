"""simfs calibrate on inputs it must refuse (issue 17): each refusal is exit status 2,
one ``simfs: error:`` line naming what is wrong, no traceback, and no file written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

from simfs.calibrate import ProfileCalibrator
from simfs.calibrate.calibrator import MIN_BOOTSTRAP, percentile_interval
from simfs.cli import main
from simfs.errors import ImplausibleValueWarning, SimfsError
from simfs.ingest import MAX_TEXT_BYTES
from simfs.ingest.measurements import Measurement, to_frame
from simfs.systems.profile import Profile
from tests.property.test_calibration_properties import PROFILE, synthetic

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "ingest"


def _synthetic_csv(path: Path) -> Path:
    """The synthetic runs of the tiny profile as a measurements CSV at ``path``."""
    lines = ["system,tool,workload,nodes,ppn,settings,over,phase,metric,value,unit,uncertainty,source"]
    for row in synthetic(2e8, 1.2e8).itertuples():
        lines.append(f"tiny,dd,{row.workload},{row.nodes},{row.ppn},,,{row.phase},agg_bw,{row.value},B/s,,synthetic")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def tiny(tmp_path):
    """A small Lustre profile, calibration data that fits it, and where --out goes."""
    profile = tmp_path / "tiny.toml"
    profile.write_text(PROFILE)
    data = tmp_path / "data"
    data.mkdir()
    _synthetic_csv(data / "runs.csv")
    return profile, data, tmp_path / "fitted.toml"


def calibrate(profile: Path, data: list[str | Path], out: Path, *options: str) -> list[str]:
    return ["calibrate", "--system", str(profile), *map(str, data), "--out", str(out), *options]


def refused(capsys, argv: list[str], out: Path, message: str, *, warnings_first: bool = False) -> list[str]:
    """Run the CLI and check the refusal; returns stderr's lines."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    errors = [line for line in lines if line.startswith("simfs: error:")]
    assert errors == [lines[-1]], captured.err  # exactly one error line, and it is the last
    assert message in lines[-1], lines[-1]
    assert "Traceback" not in captured.err
    if not warnings_first:
        assert len(lines) == 1, captured.err
    assert all(line.startswith("simfs: warning:") for line in lines[:-1]), captured.err
    assert not out.exists()
    return lines


def _ior_with(value: str) -> str:
    return (DATA / "ior-fpp-text.txt").read_text().replace("write     1387.98", f"write     {value}")


def _fio_with(field: str, value: float) -> str:
    document = json.loads((DATA / "fio-write-direct.json").read_text())
    document["jobs"][0]["write"][field] = value
    return json.dumps(document)


# -- 1. measured values that cannot be real ---------------------------------------------
@pytest.mark.parametrize(
    "name, text, message",
    [
        ("ior.txt", _ior_with("-1387.98"), "ior.txt:35: bw(MiB/s): expected a positive finite number, got -1387.98"),
        ("ior.txt", _ior_with("nan    "), "ior.txt:35: bw(MiB/s): expected a positive finite number, got nan"),
        ("ior.txt", _ior_with("inf    "), "ior.txt:35: bw(MiB/s): expected a positive finite number, got inf"),
        ("fio.json", _fio_with("bw_bytes", -1542732505), "fio.json: jobs[0].write.bw_bytes: expected a positive"),
        ("fio.json", _fio_with("bw_bytes", float("nan")), "fio.json: jobs[0].write.bw_bytes: expected a positive"),
        ("fio.json", _fio_with("iops", -1.0), "fio.json: jobs[0].write.iops: expected a positive"),
        ("fio.json", _fio_with("runtime", float("nan")), "fio.json: jobs[0].write.runtime: expected a positive"),
    ],
    ids=["ior-negative", "ior-nan", "ior-inf", "fio-negative-bw", "fio-nan-bw", "fio-negative-iops", "fio-nan-runtime"],
)
def test_impossible_measured_values_are_located_errors(tiny, capsys, name, text, message):
    profile, _, out = tiny
    path = out.parent / name
    path.write_text(text)
    refused(capsys, calibrate(profile, [path], out, "--bootstrap", "0"), out, message)


@pytest.mark.parametrize("value", [-1.0, 0.0, float("nan"), float("inf")])
def test_the_calibrator_names_the_source_of_an_impossible_value(value):
    # A table built in Python does not pass through the readers' checks.
    frame = synthetic(2e8, 1.2e8)
    frame.loc[1, "value"] = value
    frame.loc[1, "source"] = "my-table:7"
    calibrator = ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=0)
    with pytest.raises(
        SimfsError, match=r"calibrate: my-table:7: measured value .*: expected a positive finite number"
    ):
        calibrator.fit(frame)


# -- 2. nothing simulatable: the reasons come before the error ---------------------------
def test_when_nothing_can_be_simulated_the_warnings_are_printed_first(tiny, capsys):
    profile, _, out = tiny
    lines = refused(
        capsys,
        calibrate(profile, [DATA / "iozone-throughput.txt"], out),
        out,
        "none of the 4 measurements can be simulated (the warnings say why for each)",
        warnings_first=True,
    )
    assert len(lines) == 5
    assert all("iozone-throughput.txt:" in line and "tool 'iozone' is not modelled" in line for line in lines[:-1])


# -- 3. bootstrap: no intervals, or enough refits for one --------------------------------
@pytest.mark.parametrize(
    "value, message",
    [
        ("1", f"--bootstrap 1: expected 0 (no intervals) or at least {MIN_BOOTSTRAP} refits"),
        ("2", f"--bootstrap 2: expected 0 (no intervals) or at least {MIN_BOOTSTRAP} refits"),
        (str(MIN_BOOTSTRAP - 1), f"at least {MIN_BOOTSTRAP} refits"),
        ("-1", "--bootstrap -1: expected 0 (no intervals)"),
        ("many", "--bootstrap 'many': expected an integer"),
    ],
)
def test_bootstrap_counts_that_cannot_give_an_interval_are_refused(tiny, capsys, value, message):
    profile, data, out = tiny
    refused(capsys, calibrate(profile, [data], out, "--bootstrap", value), out, message)


@pytest.mark.parametrize("starts", [0, True, 1.5, "2"])
def test_a_calibrator_refuses_a_start_count_that_is_not_a_positive_integer(starts):
    message = f"starts {starts!r}: expected a positive integer number of starting points"
    with pytest.raises(SimfsError, match=re.escape(message)):
        ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=0, starts=starts).fit(
            synthetic(2e8, 1.2e8)
        )


def test_bootstrap_zero_writes_no_interval_and_claims_no_identifiability(tiny, tmp_path, capsys):
    profile, data, out = tiny
    report = tmp_path / "fit.md"
    assert main(calibrate(profile, [data], out, "--bootstrap", "0", "--report", str(report))) == 0
    stdout = capsys.readouterr().out
    assert "nan" not in stdout.lower() and "no interval  (identifiability not assessed)" in stdout
    text = out.read_text()
    assert "nan" not in text.lower()
    fitted = tomllib.loads(text)["calibration"]["fitted"]["client.copy_read_Bps"]
    assert set(fitted) == {"value", "prior"}  # no bounds, no identifiability claim
    assert "(no interval; identifiability not assessed)" in text
    table_row = next(line for line in report.read_text().splitlines() if line.startswith("| `client.copy_read_Bps`"))
    assert "| no interval |" in table_row and table_row.endswith("| not assessed |")
    # The default search starts twice; the report says what each start reached.
    assert tomllib.loads(text)["calibration"]["fit"]["starts"] == 2
    search = next(line for line in report.read_text().splitlines() if line.startswith("Search: 2 starting points"))
    # "... from each: <origin> <cost>; <origin> <cost>; kept: <origin>." names the cheaper.
    reached = search.split("from each: ")[1].split("; kept")[0].split("; ")
    costs = {part.rsplit(" ", 1)[0]: float(part.rsplit(" ", 1)[1]) for part in reached}
    assert list(costs) == ["the profile's values", "every free parameter near its upper bound"]
    assert search.endswith(f"; kept: {min(costs, key=costs.__getitem__)}.")


def test_an_interval_always_contains_its_estimate():
    # Refits that all land above the estimate (two of them, say) must not exclude it.
    assert percentile_interval(np.array([1.1, 1.2]), 1.0) == (1.0, pytest.approx(1.1975))
    assert percentile_interval(np.array([0.7, 0.8]), 1.0) == (pytest.approx(0.7025), 1.0)
    low, high = percentile_interval(np.array([0.9, 1.0, 1.1]), 1.0)
    assert low < 1.0 < high
    fitted = ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=MIN_BOOTSTRAP, seed=3).fit(
        synthetic(2e8, 1.2e8)
    )
    for name, value in fitted.params_.items():
        low, high = fitted.intervals_[name]
        assert low <= value <= high, (name, low, value, high)


# -- 4. the seed and the starting points ------------------------------------------------
@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--seed", "-1", "--seed -1: expected a non-negative integer"),
        ("--seed", "1.5", "--seed '1.5': expected an integer"),
        ("--seed", "x", "--seed 'x': expected an integer"),
        ("--starts", "0", "--starts 0: expected a positive integer number of starting points"),
        ("--starts", "-2", "--starts -2: expected a positive integer number of starting points"),
        ("--starts", "two", "--starts 'two': expected an integer"),
    ],
)
def test_seed_and_starts_must_be_integers_in_range(tiny, capsys, option, value, message):
    profile, data, out = tiny
    refused(capsys, calibrate(profile, [data], out, option, value), out, message)


# -- 5. files that are not results -------------------------------------------------------
def _non_utf8(d: Path) -> Path:
    (d / "latin1.txt").write_bytes("IOR-4.0\nCommand line        : ior -o /tmp/\xe9t\xe9\n".encode("latin-1"))
    return d / "latin1.txt"


def _huge(d: Path) -> Path:
    with (d / "huge.txt").open("wb") as handle:
        handle.truncate(MAX_TEXT_BYTES + 1)  # sparse: nothing is written
    return d / "huge.txt"


def _nothing_readable(d: Path) -> Path:
    (d / "empty-dir").mkdir()
    (d / "empty-dir" / "blob.bin").write_bytes(b"\xff\xfe\x00")
    os.mkfifo(d / "empty-dir" / "pipe")
    return d / "empty-dir"


@pytest.mark.parametrize(
    "make, message, warned",
    [
        (lambda d: Path(os.devnull), "/dev/null: not a regular file (a character device)", False),
        (_non_utf8, "latin1.txt:2: not UTF-8 text (byte 0xe9)", False),
        (_huge, f"huge.txt: {MAX_TEXT_BYTES + 1} bytes: more than the 64 MiB limit for a text result", False),
        (_nothing_readable, "empty-dir: no measurement file could be read (2 skipped: see the warnings)", True),
        (lambda d: d / "nope", "nope: no such file or directory", False),
    ],
    ids=["dev-null", "non-utf8", "huge", "nothing-readable", "missing"],
)
def test_inputs_that_are_not_results_files(tiny, capsys, make, message, warned):
    profile, _, out = tiny
    refused(capsys, calibrate(profile, [make(out.parent)], out), out, message, warnings_first=warned)


def test_a_fifo_is_refused_without_blocking(tiny):
    # In a child process with a timeout: a reader that opened the FIFO would wait forever.
    profile, _, out = tiny
    fifo = out.parent / "results.fifo"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "simfs.cli", *calibrate(profile, [fifo], out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"simfs: error: {fifo}: not a regular file (a FIFO): expected a results file"]
    assert not out.exists()


# -- 6. a folder with a bad file -----------------------------------------------------------
def test_a_bad_file_in_a_folder_is_skipped_with_a_warning_and_strict_stops(tiny, capsys):
    profile, data, out = tiny
    (data / "broken.txt").write_text(_ior_with("nan    "))
    assert main(calibrate(profile, [data], out, "--bootstrap", "0")) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"simfs: warning: SkippedFileWarning: {data}/broken.txt:35: bw(MiB/s): expected a positive finite number, "
        "got nan (skipped)"
    )
    out.unlink()
    refused(capsys, calibrate(profile, [data], out, "--strict"), out, "broken.txt:35: bw(MiB/s)")
    # Named on the command line, a bad file is an error with or without --strict.
    refused(capsys, calibrate(profile, [data / "runs.csv", data / "broken.txt"], out), out, "broken.txt:35")


# -- 7. fio results ----------------------------------------------------------------------
def test_fio_sequential_jobs_are_calibrated_on(tiny, capsys):
    profile, _, out = tiny
    assert main(calibrate(profile, [DATA / "fio-jobfile-seq.json"], out, "--bootstrap", "0")) == 0
    captured = capsys.readouterr()
    # The write with end_fsync, the O_DIRECT read and the 4 KiB random read (IOR -z).
    assert "fit: 3 points" in captured.out
    assert "jobs[2].read: not simulated: fio job" not in captured.err
    assert "tool 'fio' is not modelled" not in captured.err


def test_fio_jobs_without_an_ior_equivalent_are_named(tiny, capsys):
    profile, _, out = tiny
    lines = refused(
        capsys,
        calibrate(profile, [DATA / "fio-randread.json"], out),
        out,
        "none of the 6 measurements can be simulated",
        warnings_first=True,
    )
    # runtime=3 let fio read the 32 MiB file three times over: not what the IOR run would do.
    assert "jobs[0].read: not simulated: fio job: the job moved a different number of bytes" in lines[0]


def test_a_buffered_fio_read_is_left_out_where_simfs_would_read_the_page_cache(tmp_path):
    # On a local disk simfs serves a read of data that fits memory from the page cache,
    # but fio drops the pages first (invalidate=1); on tmpfs the pages are the data.
    rows = [
        Measurement("f:jobs[0].read", "fio", "read", "agg_bw", 1e9, "ior -a POSIX -F -r -t 1m -b 64m", 1, 2),
        Measurement(
            "f:jobs[1].read", "fio", "read", "agg_bw", 5e8, "ior -a POSIX -F -r -t 1m -b 64m --posix.odirect", 1, 2
        ),
    ]
    live = ROOT / "calibration" / "live"
    with pytest.warns(UserWarning):
        disk = ProfileCalibrator(str(live / "vm-disk.toml"), bootstrap=0).fit(to_frame(rows))
    assert [p.index for p in disk.points_] == [1]
    assert "fio job: a buffered read: fio drops the file's cached pages first" in disk.skipped_["reason"].iloc[0]
    with pytest.warns(UserWarning):
        tmpfs = ProfileCalibrator(str(live / "vm-tmpfs.toml"), bootstrap=0).fit(to_frame(rows[:1]))
    assert len(tmpfs.points_) == 1


# -- 7. fields that follow a free parameter ([calibration.follow]) ---------------------------
FOLLOWING = PROFILE + '\n[calibration.follow]\n"client.copy_write_Bps" = "client.copy_read_Bps"\n'


def test_a_follower_keeps_its_ratio_to_the_fitted_parameter(tmp_path, capsys):
    fitted = ProfileCalibrator(Profile.from_text(FOLLOWING, "tiny.toml"), bootstrap=0).fit(synthetic(2e8, 1.2e8))
    # copy_write_Bps and copy_read_Bps are both 1e9 in the profile: the follower moves 1:1.
    assert fitted.followed_ == {"client.copy_write_Bps": pytest.approx(fitted.params_["client.copy_read_Bps"])}
    profile = fitted.fitted_profile()
    assert profile.number("client.copy_write_Bps") == pytest.approx(fitted.params_["client.copy_read_Bps"])
    # The calibrated profile says so beside the value.
    source, out = tmp_path / "tiny.toml", tmp_path / "fitted.toml"
    source.write_text(FOLLOWING)
    data = _synthetic_csv(tmp_path / "runs.csv")
    assert main(calibrate(source, [data], out, "--bootstrap", "0")) == 0
    capsys.readouterr()
    text = out.read_text()
    assert "follows client.copy_read_Bps (calibration.follow), as fitted" in text
    written = tomllib.loads(text)["client"]
    assert written["copy_write_Bps"] == pytest.approx(written["copy_read_Bps"], rel=1e-3)


@pytest.mark.parametrize(
    ("follow", "message"),
    [
        ('"client.copy_write_Bps" = "client.nope"', "expected the name of a [calibration.free] parameter"),
        ('"client.nope_Bps" = "client.copy_read_Bps"', "client.nope_Bps must be a positive number"),
        ('"ost.hdd.sustained_Bps" = "client.copy_read_Bps"', "a free parameter cannot also follow another"),
    ],
)
def test_a_wrong_follower_is_refused_when_the_profile_loads(tmp_path, follow, message):
    from simfs.errors import ProfileError
    from simfs.filesystems import system_from_profile

    with pytest.raises(ProfileError, match=re.escape(message)):
        system_from_profile(Profile.from_text(PROFILE + f"\n[calibration.follow]\n{follow}\n", "tiny.toml"))


def test_a_follower_of_a_leader_the_data_do_not_identify_keeps_its_value(tmp_path, capsys):
    # No dd run creates a file: the fitted create rate is anything within its bounds, and
    # the open rate following it would carry that arbitrary value into every prediction.
    text = FOLLOWING.replace(
        '"ost.hdd.sustained_Bps" = [3.0e7, 5.0e8]',
        '"ost.hdd.sustained_Bps" = [3.0e7, 5.0e8]\n"mds.create_per_s" = [1.0e2, 1.0e6]',
    )
    text += '"mds.open_per_s" = "mds.create_per_s"\n'
    with pytest.warns(UserWarning, match="mds.create_per_s is not identifiable"):
        fitted = ProfileCalibrator(Profile.from_text(text, "tiny.toml"), bootstrap=0).fit(synthetic(2e8, 1.2e8))
    assert fitted.identifiable_["mds.create_per_s"] is False
    assert fitted.held_followers_ == {"mds.open_per_s": "mds.create_per_s"}
    assert set(fitted.followed_) == {"client.copy_write_Bps"}
    assert fitted.fitted_profile().number("mds.open_per_s") == 2000.0
    source, out, report = tmp_path / "tiny.toml", tmp_path / "fitted.toml", tmp_path / "fit.md"
    source.write_text(text)
    data = _synthetic_csv(tmp_path / "runs.csv")
    assert main(calibrate(source, [data], out, "--bootstrap", "0", "--report", str(report))) == 0
    capsys.readouterr()
    written = out.read_text()
    assert "kept: it follows mds.create_per_s (calibration.follow), which these data do not identify" in written
    assert tomllib.loads(written)["mds"]["open_per_s"] == 2000.0
    assert "`mds.open_per_s` kept at 2000: its leader `mds.create_per_s` is not identifiable" in report.read_text()


def test_the_fit_says_when_it_cannot_reach_some_training_points():
    import warnings

    from simfs.calibrate.calibrator import MisfitWarning

    consistent = synthetic(2e8, 1.2e8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MisfitWarning)
        ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=0).fit(consistent)
    # The two reads disagree by 2x on one node and two: one copy rate cannot carry both
    # (each node reads alone, so the second is twice the first in the model).
    conflicting = consistent.copy()
    conflicting.loc[1, "value"] = conflicting.loc[0, "value"]
    with pytest.warns(MisfitWarning, match=r"leaves [12] of 3 training points beyond their uncertainty"):
        ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=0).fit(conflicting)


def test_measurements_of_another_built_in_system_are_warned_of():
    # The fit stops at the impossible value after the check, so no fit runs here.
    frame = synthetic(2e8, 1.2e8)
    frame.loc[1, "value"] = -1.0
    frame["system"] = ["crtdc-lfs3", "crtdc-lfs3", *["tiny"] * (len(frame) - 2)]
    calibrator = ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=0)
    with (
        pytest.warns(
            ImplausibleValueWarning,
            match="calibrate: 2 measurements name the system crtdc-lfs3; the profile fitted is tiny",
        ),
        pytest.raises(SimfsError, match="expected a positive finite number"),
    ):
        calibrator.fit(frame)
    # Its own name, its fitted twin's and free text (a host) are not.
    frame["system"] = ["tiny-fitted", "cstor01n04", *["tiny"] * (len(frame) - 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImplausibleValueWarning)
        with pytest.raises(SimfsError, match="expected a positive finite number"):
            calibrator.fit(frame)
