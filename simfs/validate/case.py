"""Validation cases: a system, a workload, measured values with their source, a tolerance.

A case is one TOML file::

    [case]
    name = "lfs3: dd read peak over 1-64 nodes"
    system = "crtdc-lfs3-fitted"          # built-in name, or a profile path relative to the case
    workload = "dd bs=1024000 count=50000"
    phase = "read"
    metric = "agg_bw"                     # agg_bw | per_node_bw | rank_bw
    split = "held-out"                    # "calibration" if these values trained the system
    tolerance = 0.25                      # pass when |predicted / measured - 1| <= tolerance
    source = "seed 000_cd5f2d1d7b196eec.txt, 'dd writing/reading a 50GB file on 1 to 64 nodes'"
    settings = { ppn = 1, stripe_count = 4 }  # profile overrides too: "cxfs.volume" = "all"
    curve = "nodes=1,2,4,8,16,32,64"      # optional: the sweep plotted and checked for peak/collapse
    data = "runs/"                        # optional: measured points from result files (runner
                                          # records, IOR output, ...) of this workload, phase and metric

    [[points]]                            # measured values (optional if [expect] is given)
    over = "nodes=1,2,4,8,16,32,64"       # the value is the peak of this sweep (or give nodes = 16)
    value = 3.6e9                         # SI: B/s
    uncertainty = 0.1                     # optional, relative 1 sigma

    [expect]                              # optional, what the source says of the curve's shape
    peak_at = 4                           # where the measured curve peaks (a value of the curve's key)
    collapse = true                       # the curve falls after its peak (>= 10% below it at the end)
    relative_to = "lfs3-dd-nodes-write"   # another case (file stem) whose curve this one is compared with
    peak_lower = true                     # this peak is >1% below that case's (false: >1% above)
    peak_earlier = true                   # ... and comes at a smaller value of the curve's key
    peak_ratio = 3.5                      # this peak / that case's peak, within case.tolerance
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simfs.errors import SimfsError
from simfs.experiment import EXPERIMENT_KEYS
from simfs.predict import SIMULATED_METRICS
from simfs.textinput import read_text_file

SPLITS = ("calibration", "held-out")
#: A curve "collapses" when its last point is at least this much below its peak.
COLLAPSE_DROP = 0.10


@dataclass(frozen=True)
class MeasuredPoint:
    value: float
    settings: dict[str, int]
    over: str = ""
    uncertainty: float = math.nan
    note: str = ""


@dataclass(frozen=True)
class ValidationCase:
    path: Path
    name: str
    system: str
    workload: str
    phase: str
    metric: str
    split: str
    tolerance: float
    source: str
    settings: dict[str, Any]
    points: tuple[MeasuredPoint, ...]
    curve: str = ""
    expect_peak_at: int | None = None
    expect_collapse: bool | None = None
    relative_to: str = ""
    expect_peak_lower: bool | None = None
    expect_peak_earlier: bool | None = None
    expect_peak_ratio: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def identifier(self) -> str:
        return self.path.stem


def load_case(path: str | Path) -> ValidationCase:
    path = Path(path)
    text = read_text_file(path, what="a validation case (TOML)", kind="a validation case", limit_bytes=1024 * 1024)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SimfsError(f"{path}: invalid TOML: {exc}") from None
    unknown = set(data) - {"case", "points", "expect"}
    if unknown:
        raise SimfsError(f"{path}: unknown table {sorted(unknown)[0]!r} (expected case, points, expect)")
    case = data.get("case")
    if not isinstance(case, dict):
        raise SimfsError(f"{path}: missing [case] table")

    def need(key: str, kind: type) -> Any:
        if key not in case:
            raise SimfsError(f"{path}: case.{key}: missing")
        value = case[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind):
            raise SimfsError(f"{path}: case.{key}: expected a {kind.__name__}, got {value!r}")
        return value

    allowed = {
        "name",
        "system",
        "workload",
        "phase",
        "metric",
        "split",
        "tolerance",
        "source",
        "settings",
        "curve",
        "data",
    }
    extra = set(case) - allowed
    if extra:
        raise SimfsError(f"{path}: case.{sorted(extra)[0]}: unknown field")
    split = need("split", str)
    if split not in SPLITS:
        raise SimfsError(f"{path}: case.split: expected one of {', '.join(SPLITS)}, got {split!r}")
    metric = need("metric", str)
    if metric not in SIMULATED_METRICS:
        raise SimfsError(f"{path}: case.metric: expected one of {', '.join(SIMULATED_METRICS)}, got {metric!r}")
    tolerance = need("tolerance", float)
    if not tolerance > 0:
        raise SimfsError(f"{path}: case.tolerance: expected a positive fraction, got {tolerance!r}")
    settings = case.get("settings", {})
    if not isinstance(settings, dict) or {k for k in settings if "." not in k} - set(EXPERIMENT_KEYS):
        raise SimfsError(
            f"{path}: case.settings: expected a table of experiment settings ({', '.join(EXPERIMENT_KEYS)}) "
            'or profile overrides ("cxfs.volume" = "all")'
        )
    system = need("system", str)
    if system.endswith(".toml"):
        system = str((path.parent / system).resolve())

    raw_points = data.get("points", [])
    data_points = _data_points(path, case) if "data" in case else []
    if not isinstance(raw_points, list) or (not raw_points and not data_points and "expect" not in data):
        raise SimfsError(f"{path}: no [[points]] and no [expect]: a case needs a measured value or a stated shape")
    points = []
    for i, point in enumerate(raw_points):
        where = f"{path}: points[{i}]"
        value = point.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise SimfsError(f"{where}.value: expected a positive number, got {value!r}")
        uncertainty = point.get("uncertainty", math.nan)
        if "uncertainty" in point and (
            isinstance(uncertainty, bool)
            or not isinstance(uncertainty, (int, float))
            or not 0 <= uncertainty < math.inf
        ):
            raise SimfsError(f"{where}.uncertainty: expected a finite number at least 0, got {uncertainty!r}")
        extra_keys = set(point) - {"value", "over", "uncertainty", "note", *EXPERIMENT_KEYS}
        if extra_keys:
            raise SimfsError(f"{where}.{sorted(extra_keys)[0]}: unknown field")
        point_settings = {k: point[k] for k in EXPERIMENT_KEYS if k in point}
        points.append(
            MeasuredPoint(
                value=float(point["value"]),
                settings=point_settings,
                over=str(point.get("over", "")),
                uncertainty=float(uncertainty),
                note=str(point.get("note", "")),
            )
        )
    expect = data.get("expect", {})
    known = {"peak_at", "collapse", "relative_to", "peak_lower", "peak_earlier", "peak_ratio"}
    if set(expect) - known:
        raise SimfsError(f"{path}: expect.{sorted(set(expect) - known)[0]}: unknown field")
    if {"peak_lower", "peak_earlier", "peak_ratio"} & set(expect) and "relative_to" not in expect:
        raise SimfsError(f"{path}: expect.peak_lower/peak_earlier/peak_ratio need expect.relative_to (another case)")
    ratio = expect.get("peak_ratio")
    if ratio is not None and (
        isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio < math.inf
    ):
        raise SimfsError(f"{path}: expect.peak_ratio: expected a positive number, got {ratio!r}")
    curve = str(case.get("curve", ""))
    if expect and not curve:
        raise SimfsError(f"{path}: [expect] needs case.curve (the sweep to check)")
    return ValidationCase(
        path=path,
        name=need("name", str),
        system=system,
        workload=need("workload", str),
        phase=need("phase", str),
        metric=metric,
        split=split,
        tolerance=tolerance,
        source=need("source", str),
        settings=dict(settings),
        points=tuple(points + data_points),
        curve=curve,
        expect_peak_at=expect.get("peak_at"),
        expect_collapse=expect.get("collapse"),
        relative_to=str(expect.get("relative_to", "")),
        expect_peak_lower=expect.get("peak_lower"),
        expect_peak_earlier=expect.get("peak_earlier"),
        expect_peak_ratio=None if ratio is None else float(ratio),
    )


def _data_points(path: Path, case: dict[str, Any]) -> list[MeasuredPoint]:
    """``case.data``: every measurement in those files of the case's workload, phase and
    metric, one point each at its nodes and processes per node, and on the system its
    record describes (a testbed run's shape: ``brick.count``, ...), so one folder may
    hold runs of several shapes."""
    import pandas as pd

    from simfs.ingest import read_measurements
    from simfs.ingest.measurements import settings_of
    from simfs.predict import MDTEST_PHASES

    text = case["data"]
    if not isinstance(text, str):
        raise SimfsError(f"{path}: case.data: expected a path (file or folder), got {text!r}")
    frame = read_measurements(path.parent / text)
    phases = frame["phase"].map(lambda name: MDTEST_PHASES.get(name, name))
    chosen = frame[
        (frame["workload"] == case.get("workload"))
        & (phases == case.get("phase"))
        & (frame["metric"] == case.get("metric"))
    ]
    if chosen.empty:
        # The workload is matched as the file's reader wrote it (fio's job as its IOR
        # command, options in IOR's order): say what there is.
        there = sorted(set(frame["workload"].astype(str)))
        shown = "; ".join(repr(workload) for workload in there[:3]) + ("; ..." if len(there) > 3 else "")
        raise SimfsError(
            f"{path}: case.data: no {case.get('metric')} of phase {case.get('phase')!r} of {case.get('workload')!r} "
            f"in {text} (its workloads: {shown})"
        )
    points = []
    for _, row in chosen.sort_values(["settings", "nodes", "ppn"]).iterrows():
        settings = settings_of(row)
        settings.update({key: int(row[key]) for key in ("nodes", "ppn") if not pd.isna(row[key])})
        points.append(
            MeasuredPoint(
                value=float(row["value"]),
                settings=settings,
                uncertainty=float(row["uncertainty"]),
                note=str(row["source"]),
            )
        )
    return points


def find_cases(paths: list[str | Path]) -> list[ValidationCase]:
    cases = []
    for path in map(Path, paths):
        if path.is_dir():
            cases += [load_case(p) for p in sorted(path.rglob("*.toml"))]
        elif path.exists():
            cases.append(load_case(path))
        else:
            raise SimfsError(f"{path}: no such file or directory")
    if not cases:
        raise SimfsError(f"no validation cases (*.toml) in {', '.join(map(str, paths))}")
    return cases
