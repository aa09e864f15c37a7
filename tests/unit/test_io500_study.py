"""validation/io500/study.py: which submissions it builds, and its report (the study
itself reads the whole archive and runs for hours: not a test)."""

from __future__ import annotations

import concurrent.futures
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("io500_study", ROOT / "validation" / "io500" / "study.py")
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


def _submission(corpus: Path, file_system: str, info: str = "") -> Path:
    folder = corpus / "Site" / "System" / file_system / "2024" / "submission-1"
    folder.mkdir(parents=True)
    if info:
        (folder / "system-information.txt").write_text(info)
    return folder


def test_the_file_system_is_named_by_the_folder_or_the_system_information(tmp_path):
    assert study.file_system_type(_submission(tmp_path / "a", "EXAScaler"), tmp_path / "a")[0] == "lustre"
    assert study.file_system_type(_submission(tmp_path / "b", "IBM Storage Scale"), tmp_path / "b")[0] == "gpfs"
    assert study.file_system_type(_submission(tmp_path / "c", "DAOS"), tmp_path / "c") == ("", "DAOS")
    scratch = _submission(tmp_path / "d", "scratch", 'io500_info_filesystem_type="Lustre"\nio500_info_ds_nodes="12"\n')
    assert study.file_system_type(scratch, tmp_path / "d") == ("lustre", "scratch (Lustre)")
    assert study.stated_counts(scratch, "oss.count") == {"oss.count": 12}


def test_a_system_folder_or_a_product_name_can_say_the_file_system(tmp_path):
    on_gcp = tmp_path / "e" / "Google" / "Exascaler-on-GCP" / "lgcp" / "2019" / "submission-99"
    on_gcp.mkdir(parents=True)
    assert study.file_system_type(on_gcp, tmp_path / "e") == ("lustre", "lgcp")
    appliance = study.file_system_type(_submission(tmp_path / "f", "GS7K"), tmp_path / "f")
    assert appliance == ("gpfs", "GS7K (gs7k: gpfs)")


def test_a_partial_report_says_how_much_it_covers():
    assert study.coverage(10, 80).startswith("10 of the 80 buildable submissions studied so far; the other 70")
    assert study.coverage(80, 80) == "All 80 buildable submissions studied."
    text = study.report(pd.DataFrame(), pd.DataFrame(), study.coverage(1, 2))
    assert "1 of the 2 buildable submissions" in text


def test_the_report_separates_fitted_predicted_and_unsimulated_phases():
    rows = pd.DataFrame(
        [
            {"role": "fitted", "submission": "s", "model": "lustre", "phase": "ior-easy-write", "ratio": 1.0},
            {"role": "predicted", "submission": "s", "model": "lustre", "phase": "ior-hard-write", "ratio": 0.2},
            {"role": "predicted", "submission": "s", "model": "lustre", "phase": "mdtest-hard-stat", "ratio": 1.5},
            {"role": "not simulated", "submission": "s", "model": "lustre", "phase": "ior-hard-read", "reason": "why"},
        ]
    )
    skipped = pd.DataFrame([{"submission": "t", "file_system": "DAOS", "reason": "a file system simfs does not model"}])
    text = study.report(rows, skipped)
    assert "| lustre | ior-easy-write | 1 | 1.00 | 100% |" in text
    assert "| lustre | ior-hard-write | 1 | 0.20 | 0% |" in text
    assert "All predicted phases: 2, within 2x: 50%." in text
    assert "| s | ior-hard-read | why |" in text and "| t | DAOS | a file system simfs does not model |" in text


def test_a_submission_that_cannot_be_built_stays_in_the_report_after_a_resume(tmp_path, monkeypatch):
    # The module is loaded from its path, so its functions cannot be pickled to a process.
    monkeypatch.setattr(study, "ProcessPoolExecutor", concurrent.futures.ThreadPoolExecutor)
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    out.mkdir()
    _submission(corpus, "EXAScaler")  # a modelled file system, but no IOR or mdtest output
    assert study.main(["--corpus", str(corpus), "--out", str(out)]) == 0
    assert (
        "| Site/System/EXAScaler/2024/submission-1 | EXAScaler | no IOR/mdtest outputs |"
        in (out / "study.md").read_text()
    )
    (out / "study.md").unlink()
    assert study.main(["--corpus", str(corpus), "--out", str(out), "--report-only"]) == 0
    text = (out / "study.md").read_text()
    assert "| Site/System/EXAScaler/2024/submission-1 | EXAScaler | no IOR/mdtest outputs |" in text
    assert "All 0 buildable submissions studied." in text


def test_without_the_corpus_the_study_says_so(tmp_path, capsys):
    assert study.main(["--corpus", str(tmp_path / "none"), "--out", str(tmp_path)]) == 1
    assert "no IO500 corpus" in capsys.readouterr().out


def test_the_ior_hard_layout_is_what_the_submission_script_sets(tmp_path):
    # io500.sh lines of CMKL Apex, submission 587 (the public IO500 archive).
    submission = _submission(tmp_path / "g", "Lustre")
    (submission / "io500.sh").write_text(
        "  lfs setstripe -S 1M -c 8 $workdir\n  lfs setstripe -C $((osts * 4)) $workdir/ior-hard\n"
        "  #lfs setstripe -c -1 $workdir/ior-hard\n"
    )
    settings, stated = study.stated_layout(submission, target_count=8)
    assert settings == {"overstripe_count": 32}
    assert stated == "lfs setstripe -C $((osts * 4)) $workdir/ior-hard"
    # Without an ior-hard line the working directory's layout is inherited.
    (submission / "io500.sh").write_text("lfs setstripe -c -1 $workdir\n")
    assert study.stated_layout(submission, target_count=8) == ({"stripe_count": -1}, "lfs setstripe -c -1 $workdir")
    (submission / "io500.sh").unlink()
    assert study.stated_layout(submission, target_count=8) == ({}, "")


def test_a_script_named_as_the_site_likes_states_the_layout_too(tmp_path):
    # DDN AI400X2 (submission 657) prepares ior-hard in io500-ai400x2.sh; a copy sits in
    # its results folder.  A cleanup script that sets only the working directory loses to
    # the one that lays out ior-hard, whatever their names.
    submission = _submission(tmp_path / "g", "Lustre")
    (submission / "aaa-cleanup.sh").write_text("lfs setstripe -c 1 $workdir\n")
    (submission / "results").mkdir(exist_ok=True)
    (submission / "results" / "io500-ai400x2.sh").write_text(
        "  #lfs setstripe -C $((osts * 4)) $workdir/ior-hard ||\n  lfs setstripe -C 320 $workdir/ior-hard\n"
    )
    settings, stated = study.stated_layout(submission, target_count=8)
    assert stated.startswith("lfs setstripe -C 320 $workdir/ior-hard")
    assert settings == {"overstripe_count": 320}


def test_a_recorded_fit_is_read_back_as_it_was_written():
    recorded = pd.DataFrame(
        [{"fitted_parameters": "mds.create_per_s=117700 mds.stat_per_s=564100.5", "held_followers": float("nan")}]
    )
    assert study._recorded_fit(recorded) == ({"mds.create_per_s": 117700.0, "mds.stat_per_s": 564100.5}, {})
    recorded["held_followers"] = "metadata.open_per_s<-metadata.create_per_s"
    assert study._recorded_fit(recorded)[1] == {"metadata.open_per_s": "metadata.create_per_s"}


def test_the_report_splits_ior_hard_by_whether_the_layout_was_stated():
    rows = pd.DataFrame(
        [
            {"role": "predicted", "submission": "a", "model": "lustre", "phase": "ior-hard-write", "ratio": 0.8,
             "layout": "lfs setstripe -C $((osts * 4)) $workdir/ior-hard"},
            {"role": "predicted", "submission": "b", "model": "lustre", "phase": "ior-hard-write", "ratio": 0.2,
             "layout": float("nan")},
        ]
    )  # fmt: skip
    text = study.report(rows, pd.DataFrame())
    assert "| stated (lfs setstripe) | 1 | 0.80 | 100% |" in text
    assert "| not stated (one stripe) | 1 | 0.20 | 0% |" in text


def test_a_submission_s_scale_is_the_ranks_its_easy_phases_launched(tmp_path):
    # Real outputs from the IO500 archive (tests/data/ingest/README.md), read by the
    # ingest parsers: mdtest's header where there is one, else IOR's.
    import shutil

    data = ROOT / "tests" / "data" / "ingest"
    submission = _submission(tmp_path / "g", "Lustre")
    assert study.launched_ranks(submission) == 0  # no run: nothing says
    run = submission / "results" / "2020.01.01-00.00.00"
    run.mkdir(parents=True)
    shutil.copy(data / "io500-ior" / "ior-3.3.0-easy-read.txt", run / "ior-easy-write.txt")
    assert study.launched_ranks(submission) == 160  # its "tasks : 160"
    shutil.copy(data / "io500-mdtest" / "mdtest-3.3.0-easy-write-stonewall.txt", run / "mdtest-easy-write.txt")
    assert study.launched_ranks(submission) == 96  # "launched with 96 total task(s) on 8 node(s)"


def test_a_stopped_submission_goes_on_from_the_phases_it_kept(tmp_path, monkeypatch, capsys):
    import simfs.filesystems
    import simfs.predict
    import simfs.systems.free_parameters

    class Point:
        def __init__(self, index):
            self.index = index

    predicted = []

    class Predictor:
        def __init__(self, system, profile):
            pass

        def predict(self, point):
            if fail_at == point.index:
                raise RuntimeError("stopped")  # as a study killed in the middle of this phase
            predicted.append(point.index)
            return 10.0 * point.index

    class Profile:
        def with_overrides(self, values):
            return self

    hard = pd.DataFrame({"io500_phase": ["ior-hard-write", "mdtest-hard-write", "mdtest-hard-stat"]}, index=[3, 5, 7])
    monkeypatch.setattr(simfs.predict, "plan", lambda frame, warn: ([Point(i) for i in frame.index], pd.DataFrame()))
    monkeypatch.setattr(simfs.predict, "Predictor", Predictor)
    monkeypatch.setattr(simfs.filesystems, "system_from_profile", lambda profile: None)
    monkeypatch.setattr(simfs.systems.free_parameters, "followed_values", lambda *args: {})
    path = study.progress_path(tmp_path, "Site/System/Lustre/2024/submission-1")
    assert path.name == "Site_System_Lustre_2024_submission-1.json"
    fail_at = 5
    progress = study.Progress(path)
    progress.fit = {"params": {"ost.count": 4.0}, "held": {}, "rms": 0.1, "rows": []}
    try:
        study._predict_again(Profile(), {}, {}, hard, progress, lambda: 12.5)
    except RuntimeError:
        pass
    assert predicted == [3]
    # A new process reads what was kept: the fit, the first phase and the CPU time so far.
    fail_at = None
    again = study.Progress(path)
    assert again.fit["params"] == {"ost.count": 4.0} and again.predicted == {"3": 30.0} and again.cpu_s == 12.5
    table = study._predict_again(Profile(), {}, {}, hard, again, lambda: 20.0)
    assert predicted == [3, 5, 7]  # the first phase was not predicted again
    assert list(table["predicted"]) == [30.0, 50.0, 70.0]
    assert not path.with_suffix(".partial").exists()
    # A file that is not one of these starts the submission again, saying so.
    path.write_text("{")
    assert study.Progress(path).fit is None
    assert "not a progress file of this study" in capsys.readouterr().out
    assert study.Progress(None).fit is None and study.progress_path(None, "x") is None


def test_two_runs_compared_by_their_largest_difference_per_submission(tmp_path, capsys):
    def row(submission, role, phase, predicted):
        return {"role": role, "submission": submission, "phase": phase, "predicted": predicted}

    nan = float("nan")
    ours = pd.DataFrame(
        [
            row("a", "fitted", "ior-easy-write", 100.0),
            row("a", "predicted", "ior-hard-write", 10.0),
            row("b", "predicted", "mdtest-hard-stat", 5.0),
            row("b", "not simulated", "ior-hard-read", nan),
            row("c", "predicted", "ior-hard-write", 1.0),  # only here: not compared
            row("d", "predicted", "ior-hard-write", nan),
            row("e", "predicted", "ior-hard-write", 3.0),
            row("e", "predicted", "ior-hard-read", 4.0),
            row("f", "predicted", "ior-hard-read", 4.0),
        ]
    )
    theirs = pd.DataFrame(
        [
            row("a", "fitted", "ior-easy-write", 100.0),
            row("a", "predicted", "ior-hard-write", 8.0),
            row("b", "predicted", "mdtest-hard-stat", 5.0),
            row("b", "not simulated", "ior-hard-read", nan),
            row("d", "predicted", "ior-hard-write", 2.0),
            row("e", "predicted", "ior-hard-write", 3.0),  # its ior-hard-read is missing here
            row("f", "fitted", "ior-easy-read", 4.0),  # no phase in common
        ]
    )
    worst = study.compare(ours, theirs).set_index("submission")
    assert list(worst.index) == ["a", "b", "d", "e", "f"]
    assert worst.loc["a", "phase"] == "ior-hard-write" and worst.loc["a", "difference"] == pytest.approx(0.2)
    assert worst.loc["b", "difference"] == 0.0 and worst.loc["b", "only_one"] == 0
    assert worst.loc["d", "difference"] == float("inf")  # a prediction against none
    assert worst.loc["e", "difference"] == 0.0 and worst.loc["e", "only_one"] == 1
    assert worst.loc["f", "difference"] == float("inf") and worst.loc["f", "only_one"] == 2
    # A phase listed twice cannot be compared.
    with pytest.raises(ValueError, match="a predicted ior-hard-write more than once"):
        study.compare(pd.concat([ours, ours.iloc[[1]]]), theirs)
    # From the command line: the study's table against another run's; 0 only if all agree.
    ours.to_csv(tmp_path / "study.csv", index=False)
    theirs.to_csv(tmp_path / "other.csv", index=False)
    assert study.main(["--out", str(tmp_path), "--compare", str(tmp_path / "other.csv")]) == 1
    assert "5 submissions in both tables, 1 with the same predictions" in capsys.readouterr().out
    ours.to_csv(tmp_path / "same.csv", index=False)
    assert study.main(["--out", str(tmp_path), "--compare", str(tmp_path / "same.csv")]) == 0
    assert "6 submissions in both tables, 6 with the same predictions" in capsys.readouterr().out
    assert study.main(["--out", str(tmp_path), "--compare", str(tmp_path / "missing.csv")]) == 1
