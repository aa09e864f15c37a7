"""Predict the hard phases of IO500 submissions from their easy phases (issue 19).

For every submission of the public IO500 archive (``../shared/corpus/io500``, laid out
``<institution>/<system>/<file system>/<year>/submission-<n>/``) whose IOR and mdtest
outputs are there:

1. its file system is named by its folder and, where there is one, its
   ``system-information`` file; a type simfs models gets a profile: Lustre (and DDN
   EXAScaler, a Lustre) the generic Lustre of ``calibration/io500/generic-lustre.toml``,
   Spectrum Scale (GPFS, Storage Scale) the generic one of ``generic-gpfs.toml``, with
   the client nodes and processes per node its outputs state and the data-server count
   its system-information gives (``ds_nodes``); the rest of the profile is generic and
   marked so.  Other types (DAOS, BeeGFS, WekaFS, ...) are listed with why they were not
   built;
2. the profile's free parameters (``MODELS``) are fitted to the submission's ior-easy write
   and read and mdtest-easy write, stat and delete only, with ``simfs.ProfileCalibrator``
   (no bootstrap);
3. its ior-hard write and read and mdtest-hard write, stat, read and delete are predicted
   and compared with what it measured.  On Lustre, the ior-hard file gets the layout the
   submission's scripts set on its directory (``io500.sh`` first, then the others:
   ``io500-ai400x2.sh``, ``io500.10node.sh``; ``lfs setstripe -C $((osts * 4))
   $workdir/ior-hard``: ``simfs.workloads.setstripe``), in the model's OSTs; where it
   states none, Lustre's default (one stripe).  The easy phases keep the generic layout:
   their files are one per process, and the fit absorbs what their stripes change.

``--repredict`` predicts the hard phases of the submissions ``study.csv`` already has
again, from the fitted parameters recorded there (no refit): for a change to the hard
phases' model or inputs, minutes instead of hours.

No per-submission tuning of anything but the easy-phase free parameters: this is a
prediction, not a fit.  Results go to ``study.csv`` (one row per predicted phase, written
as each submission finishes, so an interrupted run keeps what it did; within a submission
its fit and each hard phase are kept in ``study-progress/`` as they are done, so that
``--resume`` goes on from there) and ``study.md``
(error distribution per phase and file-system type, share within 2x, and the submissions
not built and why).

    python validation/io500/study.py [--corpus DIR] [--only TEXT] [--limit N] [--jobs N]
    python validation/io500/study.py --out DIR --compare OTHER/study.csv

``--compare`` says, per submission in both tables, how far apart their predictions are:
whether two runs (two commits, or a rerun and the committed rows) made the same rows
(exit status 0 only if every one did).

Without the corpus (a user's clone has none) it says so and exits 1.  A submission takes
minutes (every fit simulates its easy phases at the submission's scale some hundred
times); ``--jobs`` runs submissions in parallel processes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "io500"
sys.path.insert(0, str(ROOT))

#: Per model: its generic profile, the parameters fitted on the easy phases (each is what
#: one easy phase mostly measures) and the profile field a stated data-server count sets.
MODELS = {
    "lustre": (
        "generic-lustre.toml",
        ["ost.ssd.write_Bps", "ost.ssd.read_Bps", "mds.create_per_s", "mds.stat_per_s", "mds.remove_per_s"],
        "oss.count",
    ),
    "gpfs": (
        "generic-gpfs.toml",
        [
            "nsd.ssd.write_Bps",
            "nsd.ssd.read_Bps",
            "metadata.create_per_s",
            "metadata.stat_per_s",
            "metadata.remove_per_s",
        ],
        "nsd_server.count",
    ),
}
NOT_MODELLED = "a file system simfs does not model"
EASY = ("ior-easy-write", "ior-easy-read", "mdtest-easy-write", "mdtest-easy-stat", "mdtest-easy-delete")
HARD = (
    "ior-hard-write",
    "ior-hard-read",
    "mdtest-hard-write",
    "mdtest-hard-stat",
    "mdtest-hard-read",
    "mdtest-hard-delete",
)
#: The row of each phase's output that the IO500 scores.
_SCORED = {
    "ior": {"write": "write", "read": "read"},
    "mdtest": {"write": "file_creation", "stat": "file_stat", "read": "file_read", "delete": "file_removal"},
}


def _stated(submission: Path, key: str) -> str:
    """``io500_info_<key>`` of the submission's system-information file ("" if none)."""
    for info in submission.rglob("system-information*"):
        match = re.search(rf'{key}="([^"]*)"', info.read_text(errors="replace"))
        if match:
            return match[1]
    return ""


#: Products whose names say which file system they run, as their makers describe them:
#: DDN's AI400 and AI400X are EXAScaler (Lustre) appliances; DDN's GS7K is a GRIDScaler
#: (Spectrum Scale) appliance; IBM's Elastic Storage System is Spectrum Scale's.
PRODUCTS = {"ai400": "lustre", "gs7k": "gpfs", "gridscaler": "gpfs", "elastic storage system": "gpfs"}


def file_system_type(submission: Path, corpus: Path) -> tuple[str, str]:
    """The model simfs builds for a submission ("" if none) and the name it goes by: the
    file-system folder, the system-information file's type, the system folder (``Google /
    Exascaler-on-GCP / lgcp``) or a product name (:data:`PRODUCTS`) saying it."""
    parts = submission.relative_to(corpus).parts
    system, folder = parts[1], parts[2]
    stated = _stated(submission, "filesystem_type")
    name = f"{folder} ({stated})" if stated and stated.lower() not in folder.lower() else folder
    text = f"{folder} {stated} {system}".lower()
    if "lustre" in text or "exascaler" in text:
        return "lustre", name
    if "gpfs" in text or "spectrum scale" in text or "storage scale" in text or "spectrumscale" in text:
        return "gpfs", name
    for product, model in PRODUCTS.items():
        if product in text:
            return model, f"{name} ({product}: {model})"
    return "", name


def stated_counts(submission: Path, field: str) -> dict[str, int]:
    """``ds_nodes`` from the submission's system-information, where it gives one above 0,
    as the model's data-server count ``field``."""
    count = _stated(submission, "ds_nodes")
    return {field: int(count)} if count.isdigit() and int(count) > 0 else {}


def runs(submission: Path) -> list[Path]:
    """Folders of a submission holding one run's IOR and mdtest outputs."""
    found = {p.parent for p in submission.rglob("ior-easy-write.txt")} | {
        p.parent for p in submission.rglob("ior_easy_write.txt")
    }
    return sorted(found)


def launched_ranks(submission: Path) -> int:
    """The ranks the submission's first run launched its easy phases with, as the outputs'
    own parser reads them (nodes x processes per node; 0 where none says): the scale every
    simulation of its fit runs at, and so what its study costs."""
    from simfs.errors import SimfsError
    from simfs.ingest import read_file

    for run in runs(submission):
        for name in ("mdtest-easy-write.txt", "mdtest_easy_write.txt", "ior-easy-write.txt", "ior_easy_write.txt"):
            path = run / name
            if not path.is_file():
                continue
            try:
                measurements = read_file(path)
            except (SimfsError, ValueError, OSError):
                continue
            for measurement in measurements:
                if measurement.nodes and measurement.ppn:
                    return measurement.nodes * measurement.ppn
    return 0


def stated_layout(submission: Path, target_count: int) -> tuple[dict[str, int], str]:
    """Experiment settings for the ior-hard file from the ``lfs setstripe`` commands of the
    submission's scripts (``io500.sh`` first, then the others: see
    :func:`simfs.workloads.setstripe.folder_layouts`; the ior-hard directory's, or else
    the working directory's),
    for a model of ``target_count`` OSTs; and what was stated, with notes ("" if nothing)."""
    from simfs.workloads.setstripe import folder_layouts

    layouts, _script = folder_layouts(submission, recursive=True)
    layout = layouts.get("ior-hard") or layouts.get("")
    if layout is None:
        return {}, ""
    settings, notes = layout.settings(target_count)
    return settings, "; ".join([layout.command, *notes])


def phase_measurements(run: Path) -> pd.DataFrame:
    """The scored value of each phase output of a run, labelled by IO500 phase."""
    from simfs.ingest import read_file
    from simfs.ingest.measurements import to_frame

    rows = []
    for phase in EASY + HARD:
        path = run / f"{phase}.txt"
        if not path.exists():
            path = run / f"{phase.replace('-', '_')}.txt"
        if not path.exists():
            continue
        tool = phase.split("-")[0]
        wanted = _SCORED[tool][phase.rsplit("-", 1)[1]]
        metric = "agg_bw" if tool == "ior" else "ops_rate"
        for measurement in read_file(path):
            if measurement.phase == wanted and measurement.metric == metric:
                rows.append(measurement)
                break
    frame = to_frame(rows)
    frame["io500_phase"] = [_phase_of(source) for source in frame["source"]]
    return frame


def _phase_of(source: str) -> str:
    return Path(source.rsplit(":", 1)[0]).stem.replace("_", "-")


class Progress:
    """What the study of one submission has done so far, in a file of its own
    (``study-progress/``): the fit of its easy phases, then each hard phase as it is
    predicted, so that a study stopped part way (a large submission takes hours) goes on
    from there with ``--resume`` instead of starting the submission again.  The file goes
    once the submission's rows are in ``study.csv``.  Without a path it keeps nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.fit: dict | None = None
        self.predicted: dict[str, float] = {}
        self.cpu_s = 0.0
        if path is not None and path.is_file():
            try:
                saved = json.loads(path.read_text())
                self.fit, self.predicted, self.cpu_s = saved["fit"], saved["predicted"], float(saved["cpu_s"])
            except (ValueError, KeyError, TypeError):
                print(f"study: {path}: not a progress file of this study; starting the submission again")

    def save(self, cpu_s: float) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps({"fit": self.fit, "predicted": self.predicted, "cpu_s": cpu_s}))
        partial.replace(self.path)  # whole or not at all, should the study be stopped here


def progress_path(progress_dir: Path | None, where: str) -> Path | None:
    """The progress file of the submission at ``where`` (its path in the corpus)."""
    if progress_dir is None:
        return None
    return progress_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", where) + ".json")


def study_one(
    submission: Path, corpus: Path, recorded: pd.DataFrame | None = None, progress_dir: Path | None = None
) -> tuple[list[dict], dict | None]:
    """Predicted rows of one submission, or why it was not built.  With ``recorded`` (its
    rows of an earlier run), the easy phases are not fitted again: their rows and fitted
    parameters are kept, and only the hard phases are predicted.  With ``progress_dir``,
    what is done is kept there as it is done, and what was kept is not done again
    (:class:`Progress`)."""
    from simfs.calibrate import ProfileCalibrator
    from simfs.filesystems import system_from_profile
    from simfs.systems.profile import load_profile

    model, name = file_system_type(submission, corpus)
    where = str(submission.relative_to(corpus))
    if not model:
        return [], {"submission": where, "file_system": name, "reason": NOT_MODELLED}
    found = runs(submission)
    if not found:
        return [], {"submission": where, "file_system": name, "reason": "no IOR/mdtest outputs"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            measured = phase_measurements(found[0])
    except Exception as exc:  # noqa: BLE001 - one line per submission in the report
        return [], {"submission": where, "file_system": name, "reason": f"outputs not read: {exc}"}
    easy = measured[measured["io500_phase"].isin(EASY)]
    hard = measured[measured["io500_phase"].isin(HARD)]
    if len(easy) < len(EASY) or hard.empty:
        return [], {"submission": where, "file_system": name, "reason": "easy or hard phase outputs missing"}
    nodes, ppn = easy["nodes"].dropna(), easy["ppn"].dropna()
    if nodes.empty or ppn.empty:
        return [], {"submission": where, "file_system": name, "reason": "nodes or processes per node not stated"}
    ppn_value = int(ppn.max())
    profile_name, free, server_field = MODELS[model]
    overrides: dict = dict(stated_counts(submission, server_field))
    if ppn_value > 128:
        overrides["client.cores"] = ppn_value
    profile = load_profile(ROOT / "calibration" / "io500" / profile_name).with_overrides(overrides)
    layout, layout_stated = {}, ""
    if model == "lustre":
        layout, layout_stated = stated_layout(submission, system_from_profile(profile).target_count)
        if layout:
            hard = hard.copy()
            hard.loc[hard["io500_phase"].str.startswith("ior-"), "settings"] = json.dumps(layout)
    started = time.process_time()
    progress = Progress(progress_path(progress_dir, where) if recorded is None else None)

    def spent() -> float:
        return progress.cpu_s + time.process_time() - started

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if recorded is None:
                if progress.fit is None:
                    calibrator = ProfileCalibrator(profile, free=free, bootstrap=0, scan_points=5).fit(easy)
                    fitted = calibrator.residuals_.assign(
                        io500_phase=easy.loc[calibrator.residuals_.index, "io500_phase"]
                    )
                    progress.fit = {
                        "params": dict(calibrator.params_),
                        "held": dict(calibrator.held_followers_),
                        "rms": float(calibrator.rms_log_error_),
                        "rows": fitted[["nodes", "ppn", "measured", "predicted", "io500_phase"]].to_dict("records"),
                    }
                    progress.save(spent())
                params, held = progress.fit["params"], progress.fit["held"]
                predicted = _predict_again(profile, params, held, hard, progress, spent)
            else:
                params, held = _recorded_fit(recorded)
                predicted = _predict_again(profile, params, held, hard)
    except Exception as exc:  # noqa: BLE001
        return [], {"submission": where, "file_system": name, "reason": f"calibration or prediction failed: {exc}"}
    cpu_s = spent()
    from simfs.predict import plan

    _, unsimulated = plan(hard, warn=False)
    rows = [
        {"role": "not simulated", "submission": where, "file_system": name, "model": model,
         "phase": row["io500_phase"], "reason": row["reason"]}
        for _, row in unsimulated.iterrows()
    ]  # fmt: skip
    if recorded is not None:
        kept = recorded[recorded["role"] == "fitted"].to_dict("records")
        rows += [{**row, "layout": layout_stated} for row in kept]
        both = [("predicted", r, r["predicted"]) for _, r in predicted.iterrows()]
        rms, cpu_s = float(kept[0]["easy_rms_log_error"]), float(kept[0]["cpu_s"])
    else:
        both = [("fitted", r, r["predicted"]) for r in progress.fit["rows"]]
        both += [("predicted", r, r["predicted"]) for _, r in predicted.iterrows()]
        rms = progress.fit["rms"]
    for role, row, value in both:
        measured_value = float(row["measured"] if role == "fitted" else row["value"])
        rows.append(
            {
                "role": role,
                "submission": where,
                "file_system": name,
                "model": model,
                "nodes": int(row["nodes"]),
                "ppn": int(row["ppn"]),
                "stated": f"{server_field}={overrides[server_field]}" if server_field in overrides else "",
                "phase": row["io500_phase"],
                "measured": measured_value,
                "predicted": float(value),
                "ratio": float(value) / measured_value,
                "easy_rms_log_error": rms,
                "fitted_parameters": " ".join(f"{k}={v:.12g}" for k, v in params.items()),
                # Followers kept at the generic value because the fit did not identify their leader.
                "held_followers": " ".join(f"{f}<-{leader}" for f, leader in held.items()),
                "layout": layout_stated,
                "cpu_s": cpu_s,
            }
        )
    return rows, None


def _recorded_fit(recorded: pd.DataFrame) -> tuple[dict[str, float], dict[str, str]]:
    """The fitted parameters and held followers an earlier run recorded."""
    first = recorded.iloc[0]
    params = {k: float(v) for k, v in (pair.split("=") for pair in str(first["fitted_parameters"]).split())}
    held_text = first.get("held_followers", "")
    held = dict(pair.split("<-") for pair in held_text.split()) if isinstance(held_text, str) else {}
    return params, held


def _predict_again(
    profile,
    params: dict[str, float],
    held: dict[str, str],
    hard: pd.DataFrame,
    progress: Progress | None = None,
    spent: Callable[[], float] = lambda: 0.0,
) -> pd.DataFrame:
    """Hard phases predicted with fitted parameters, as ``ProfileCalibrator.predict`` does
    with its own (followers of held leaders keep their profile value); with ``progress``,
    each one kept as it is predicted, and those it kept not predicted again."""
    from simfs.filesystems import system_from_profile
    from simfs.predict import Predictor, plan
    from simfs.systems.free_parameters import followed_values

    fitted = profile.with_overrides(params | followed_values(profile, params, frozenset(held.values())))
    points, _ = plan(hard, warn=False)
    predictor = Predictor(system_from_profile(fitted), fitted)
    table = hard.loc[[p.index for p in points]].copy()
    values = []
    for point in points:
        key = str(point.index)
        if progress is not None and key in progress.predicted:
            values.append(progress.predicted[key])
            continue
        values.append(predictor.predict(point))
        if progress is not None:
            progress.predicted[key] = values[-1]
            progress.save(spent())
    table["predicted"] = values
    return table


def coverage(studied: int, buildable: int) -> str:
    """How much of the archive's buildable submissions the report covers."""
    if studied >= buildable:
        return f"All {buildable} buildable submissions studied."
    return (
        f"{studied} of the {buildable} buildable submissions studied so far; the other {buildable - studied} are "
        "not in these tables (`python validation/io500/study.py --resume` goes on where this stopped)."
    )


def report(rows: pd.DataFrame, skipped: pd.DataFrame, covered: str = "") -> str:
    lines = ["# IO500 archive: hard phases predicted from easy phases", ""]
    lines.append(
        "Generated by `python validation/io500/study.py` (validation/io500/README.md).  ratio = predicted / "
        "measured; within 2x means 0.5 <= ratio <= 2."
    )
    lines.append("")
    if covered:
        lines += [covered, ""]
    header = [
        "| file system | phase | submissions | median ratio | within 2x | min | max |",
        "|---|---|---|---|---|---|---|",
    ]
    if not rows.empty:
        fitted, predicted = rows[rows["role"] == "fitted"], rows[rows["role"] == "predicted"]
        lines += ["Easy phases, fitted (the calibration's own error, not a prediction):", "", *header]
        lines += [*_table(fitted), "", "Hard phases, predicted:", "", *header, *_table(predicted)]
        inside = ((predicted["ratio"] >= 0.5) & (predicted["ratio"] <= 2.0)).mean()
        lines += ["", f"All predicted phases: {len(predicted)}, within 2x: {inside:.0%}.", ""]
        lines += _layout_lines(predicted)
        missing = rows[rows["role"] == "not simulated"]
        if not missing.empty:
            lines += ["## Hard phases not simulated", "", "| submission | phase | why |", "|---|---|---|"]
            for _, row in missing.iterrows():
                lines.append(f"| {row['submission']} | {row['phase']} | {row['reason']} |")
            lines.append("")
    if not skipped.empty:
        lines += ["## Not built", "", "| submission | file system | why |", "|---|---|---|"]
        for _, row in skipped.iterrows():
            lines.append(f"| {row['submission']} | {row['file_system']} | {row['reason']} |")
    return "\n".join(lines) + "\n"


def _layout_lines(predicted: pd.DataFrame) -> list[str]:
    """ior-hard on Lustre, with and without the layout the submission's scripts state."""
    if "layout" not in predicted.columns:
        return []
    hard = predicted[(predicted["model"] == "lustre") & predicted["phase"].str.startswith("ior-hard")]
    if hard.empty:
        return []
    stated = hard["layout"].fillna("").astype(str).str.len() > 0
    lines = [
        "Lustre ior-hard phases by whether the submission's scripts (io500.sh, io500-*.sh, ...) state the file's layout:",
        "",
    ]
    lines += ["| layout | phases | median ratio | within 2x |", "|---|---|---|---|"]
    for label, group in (("stated (lfs setstripe)", hard[stated]), ("not stated (one stripe)", hard[~stated])):
        if len(group):
            ratio = group["ratio"]
            inside = ((ratio >= 0.5) & (ratio <= 2.0)).mean()
            lines.append(f"| {label} | {len(group)} | {np.median(ratio):.2f} | {inside:.0%} |")
    return [*lines, ""]


def _table(rows: pd.DataFrame) -> list[str]:
    lines = []
    for (model, phase), group in rows.groupby(["model", "phase"]):
        ratio = group["ratio"]
        inside = ((ratio >= 0.5) & (ratio <= 2.0)).mean()
        lines.append(
            f"| {model} | {phase} | {len(group)} | {np.median(ratio):.2f} | {inside:.0%} | "
            f"{ratio.min():.2f} | {ratio.max():.2f} |"
        )
    return lines


def compare(rows: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per submission in both tables, the largest relative difference of its predictions
    (fitted easy phases and predicted hard phases alike, ``|a - b| / max(|a|, |b|)``; a
    value in one table and NaN in the other counts as infinitely different) and the
    phase where it is, and how many of its phases only one table has (``only_one``): for
    telling whether two runs made the same rows (the same model) or not.  A phase listed
    twice in one table is an error."""
    keys = ["submission", "role", "phase"]
    tables = []
    for name, table in (("first", rows), ("second", other)):
        doubled = table[table.duplicated(keys, keep=False)]
        if len(doubled):
            first = doubled.iloc[0]
            raise ValueError(
                f"the {name} table has {first['submission']} {first['role']} {first['phase']} more than once"
            )
        tables.append(table[keys + ["predicted"]])
    joined = tables[0].merge(tables[1], on=keys, how="outer", suffixes=("", "_other"), indicator=True)
    joined = joined[joined["submission"].isin(set(rows["submission"]) & set(other["submission"]))]
    both = joined["_merge"] == "both"
    ours, theirs = joined["predicted"], joined["predicted_other"]
    scale = np.maximum(ours.abs(), theirs.abs())
    difference = ((ours - theirs).abs() / scale.where(scale > 0)).fillna(0.0)  # 0 against 0: the same
    difference[ours.isna() != theirs.isna()] = np.inf
    joined = joined.assign(difference=difference, only_one=~both)
    worst = joined[both].sort_values("difference", ascending=False, kind="stable").drop_duplicates("submission")
    worst = worst.set_index("submission")[["phase", "predicted", "predicted_other", "difference"]]
    # A submission whose phases none match is listed too, as different.
    worst = worst.reindex(sorted(joined["submission"].unique())).fillna({"difference": np.inf})
    worst["only_one"] = joined.groupby("submission")["only_one"].sum()
    return worst.rename_axis("submission").reset_index()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--only", default="", help="study only submissions whose path contains this text")
    parser.add_argument("--limit", type=int, default=0, help="at most this many submissions built")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--smallest-first",
        action="store_true",
        help="study the submissions with the fewest ranks first (a partial run covers the most per CPU hour)",
    )
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--resume", action="store_true", help="keep the submissions study.csv already has and study the rest"
    )
    parser.add_argument("--report-only", action="store_true", help="rewrite study.md from study.csv, studying nothing")
    parser.add_argument(
        "--repredict",
        action="store_true",
        help="predict the hard phases of the submissions in study.csv again from their recorded fits (no refit)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="CSV",
        help="compare study.csv with another run's table (per submission, the largest relative difference)",
    )
    args = parser.parse_args(argv)
    if args.compare:
        csv_path = args.out / "study.csv"
        for table in (csv_path, args.compare):
            if not table.is_file():
                print(f"study: --compare: no table at {table}")
                return 1
        try:
            worst = compare(pd.read_csv(csv_path), pd.read_csv(args.compare))
        except ValueError as exc:
            print(f"study: --compare: {exc}")
            return 1
        with pd.option_context("display.width", 250, "display.max_colwidth", 90):
            print(worst.to_string(index=False) if len(worst) else "study: no submission in both tables")
        same = int(((worst["difference"] <= 1e-9) & (worst["only_one"] == 0)).sum())
        print(
            f"study: {len(worst)} submissions in both tables, {same} with the same predictions "
            "(within 1e-9, the same phases)"
        )
        return 0 if len(worst) and same == len(worst) else 1
    if not args.corpus.is_dir():
        print(f"study: no IO500 corpus at {args.corpus} (a user's clone has none; see validation/io500/README.md)")
        return 1
    submissions = sorted(p for p in args.corpus.glob("*/*/*/*/submission-*") if p.is_dir())
    submissions = [s for s in submissions if args.only in str(s)]
    built, skipped = [], []
    to_build = []
    for submission in submissions:
        model, name = file_system_type(submission, args.corpus)
        if not model:
            skipped.append(
                {"submission": str(submission.relative_to(args.corpus)), "file_system": name,
                 "reason": NOT_MODELLED}
            )  # fmt: skip
        else:
            to_build.append(submission)
    buildable = len(to_build)
    csv_path, md_path = args.out / "study.csv", args.out / "study.md"
    # Submissions an earlier run tried and could not build (no outputs, outputs not read):
    # the reason does not change between runs, so a resumed run reports them and moves on.
    skipped_path = args.out / "study-skipped.csv"
    tried = {}
    if (args.resume or args.report_only) and skipped_path.is_file():
        tried = {row["submission"]: row for row in pd.read_csv(skipped_path).to_dict("records")}
        skipped += [
            tried[str(s.relative_to(args.corpus))] for s in to_build if str(s.relative_to(args.corpus)) in tried
        ]
        to_build = [s for s in to_build if str(s.relative_to(args.corpus)) not in tried]
    recorded: dict[str, pd.DataFrame] = {}
    if (args.resume or args.report_only or args.repredict) and csv_path.is_file():
        # A submission's rows are written when it finishes, all at once: those there are whole.
        try:
            kept = pd.read_csv(csv_path)
        except pd.errors.EmptyDataError:  # an earlier run that built nothing
            kept = pd.DataFrame({"submission": []})
        done_before = set(kept["submission"])
        if args.repredict:
            recorded = {name: rows for name, rows in kept.groupby("submission")}
            to_build = [s for s in to_build if str(s.relative_to(args.corpus)) in done_before]
        else:
            built = kept.to_dict("records")
            to_build = [s for s in to_build if str(s.relative_to(args.corpus)) not in done_before]
        print(f"study: {len(done_before)} submissions {'to predict again' if args.repredict else 'kept'} "
              f"from {csv_path}", flush=True)  # fmt: skip
    elif args.repredict:
        print(f"study: --repredict needs {csv_path} from an earlier run")
        return 1
    if args.smallest_first:
        to_build.sort(key=launched_ranks)
    if args.report_only:
        to_build = []
    elif args.limit:
        to_build = to_build[: args.limit]
    if recorded:
        # Submissions not predicted again this time keep their rows.
        again = {str(s.relative_to(args.corpus)) for s in to_build}
        built = [row for name, rows in recorded.items() if name not in again for row in rows.to_dict("records")]

    def write_report() -> None:
        frame = pd.DataFrame(built)
        frame.to_csv(csv_path, index=False)
        not_built = [row for row in skipped if row["reason"] != NOT_MODELLED]
        if not_built:
            pd.DataFrame(not_built).to_csv(skipped_path, index=False)
        studied = frame["submission"].nunique() if len(frame) else 0
        md_path.write_text(report(frame, pd.DataFrame(skipped), coverage(studied, buildable - len(not_built))))

    # A fresh study starts every submission again; a resumed one goes on from what each kept.
    progress_dir = args.out / "study-progress"
    if not args.resume and not args.repredict and progress_dir.is_dir():
        for stale in progress_dir.glob("*.json"):
            stale.unlink()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {
            pool.submit(study_one, s, args.corpus, recorded.get(str(s.relative_to(args.corpus))), progress_dir): s
            for s in to_build
        }
        for done, future in enumerate(as_completed(futures), start=1):
            rows, why = future.result()
            built += rows
            if why:
                skipped.append(why)
            write_report()
            label = futures[future].relative_to(args.corpus)
            kept = progress_path(progress_dir, str(label))
            if kept is not None:
                kept.unlink(missing_ok=True)  # its rows are in study.csv now
            predicted = sum(row["role"] == "predicted" for row in rows)
            status = why["reason"] if why else f"{predicted} hard phases predicted"
            print(f"[{done}/{len(to_build)}] {label}: {status}", flush=True)
    write_report()
    frame = pd.DataFrame(built)
    print(f"study: {len(frame)} phases of {frame['submission'].nunique() if len(frame) else 0} submissions "
          f"predicted; {len(skipped)} submissions not built; {md_path}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
