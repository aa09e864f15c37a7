"""Run validation cases: predict every measured point and check the curve's shape."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simfs.errors import SimfsError
from simfs.filesystems import system_from_profile
from simfs.predict import NotSimulated, Predictor, make_point
from simfs.systems import load_profile
from simfs.validate.case import COLLAPSE_DROP, ValidationCase
from simfs.workloads import parse_workload

#: Points within this fraction of a curve's maximum count as its peak (first one wins).
PEAK_PLATEAU = 0.01


@dataclass
class CaseOutcome:
    case: ValidationCase
    points: pd.DataFrame
    curve_key: str = ""
    curve: list[tuple[int, float]] | None = None
    peak_at: int | None = None
    collapse: bool | None = None
    system_name: str = ""
    peak_value: float | None = None
    #: Against ``case.relative_to``: (peak lower, peak earlier), None where not stated.
    relation: tuple[bool | None, bool | None] = (None, None)
    #: This curve's peak over ``case.relative_to``'s.
    peak_ratio: float | None = None

    @property
    def peak_ratio_matches(self) -> bool | None:
        """The predicted ratio of peaks is within the case's tolerance of the stated one."""
        expected = self.case.expect_peak_ratio
        if expected is None or self.peak_ratio is None:
            return None
        return abs(self.peak_ratio / expected - 1.0) <= self.case.tolerance

    @property
    def peak_within_one_doubling(self) -> bool | None:
        expected = self.case.expect_peak_at
        if expected is None or self.peak_at is None:
            return None
        return 0.5 <= self.peak_at / expected <= 2.0

    @property
    def collapse_matches(self) -> bool | None:
        if self.case.expect_collapse is None or self.collapse is None:
            return None
        return self.collapse == self.case.expect_collapse


def run_case(case: ValidationCase) -> CaseOutcome:
    try:
        profile = load_profile(case.system)
        system = system_from_profile(profile)
        spec = parse_workload(case.workload)
    except SimfsError as exc:
        raise SimfsError(f"{case.path}: {exc}") from None
    if case.phase not in {p.label for p in spec.phases}:
        raise SimfsError(f"{case.path}: case.phase: {case.phase!r} is not a phase of {case.workload!r}")
    predictor = Predictor(system, profile)
    rows = []
    for i, measured in enumerate(case.points):
        settings = {**case.settings, **measured.settings}
        try:
            point = make_point(
                i, case.workload, case.phase, case.metric, settings, measured.over, measured.value, measured.uncertainty
            )
        except NotSimulated as exc:
            raise SimfsError(f"{case.path}: points[{i}]: {exc}") from None
        predicted = predictor.predict(point)
        # A point is named by what sets it apart from the case (a testbed record repeats
        # the case's own shape).
        label = ", ".join(f"{k}={v}" for k, v in sorted(measured.settings.items()) if case.settings.get(k, None) != v)
        if measured.over:
            label = (label + ", " if label else "") + f"peak over {measured.over}"
        rows.append(
            {
                "case": case.identifier,
                "name": case.name,
                "system": system.name,
                "split": case.split,
                "point": label or "as set",
                "measured": measured.value,
                "predicted": predicted,
                "error_pct": 100.0 * (predicted / measured.value - 1.0),
                "within_tolerance": abs(predicted / measured.value - 1.0) <= case.tolerance,
                "tolerance_pct": 100.0 * case.tolerance,
                "note": measured.note,
            }
        )
    columns = [
        "case",
        "name",
        "system",
        "split",
        "point",
        "measured",
        "predicted",
        "error_pct",
        "within_tolerance",
        "tolerance_pct",
        "note",
    ]
    outcome = CaseOutcome(case, pd.DataFrame(rows, columns=columns), system_name=system.name)
    if case.curve:
        key = case.curve.split("=", 1)[0]
        try:
            curve_point = make_point(
                "curve", case.workload, case.phase, case.metric, dict(case.settings), case.curve, 1.0, np.nan
            )
        except NotSimulated as exc:
            raise SimfsError(f"{case.path}: case.curve: {exc}") from None
        curve = [(getattr(e, key), v) for e, v in predictor.curve(curve_point)]
        values = np.array([v for _, v in curve])
        # On a plateau the argmax is decided by rounding; the peak is where the curve
        # first comes within PEAK_PLATEAU of its maximum.
        peak = int(np.flatnonzero(values >= (1 - PEAK_PLATEAU) * values.max())[0])
        outcome.curve_key = key
        outcome.curve = curve
        outcome.peak_at = curve[peak][0]
        outcome.peak_value = float(values.max())
        outcome.collapse = bool(values[-1] < (1 - COLLAPSE_DROP) * values[peak])
    return outcome


def run_cases(
    cases: list[ValidationCase],
    progress: Callable[[int, int], None] | None = None,
    *,
    jobs: int = 1,
    scheduler: Any = None,
) -> list[CaseOutcome]:
    """Run every case, then resolve the cases that compare their curve with another's;
    ``progress(done, total)`` is called after each.  The cases share nothing: ``jobs``
    local processes or the Dask cluster ``scheduler`` run them (the outcomes are the
    serial run's, in the cases' order)."""
    from simfs.parallel import check_jobs, map_ordered

    check_jobs(jobs, scheduler, "run_cases")
    outcomes = map_ordered(run_case, [(case,) for case in cases], jobs=jobs, scheduler=scheduler, progress=progress)
    by_id = {o.case.identifier: o for o in outcomes}
    for outcome in outcomes:
        case = outcome.case
        if not case.relative_to:
            continue
        other = by_id.get(case.relative_to)
        if other is None or other.peak_value is None or outcome.peak_value is None:
            raise SimfsError(
                f"{case.path}: expect.relative_to: no case {case.relative_to!r} with a curve among those run"
            )
        lower = _lower(outcome.peak_value, other.peak_value) if case.expect_peak_lower is not None else None
        earlier = outcome.peak_at < other.peak_at if case.expect_peak_earlier is not None else None
        outcome.relation = (lower, earlier)
        outcome.peak_ratio = outcome.peak_value / other.peak_value
    return outcomes


def _lower(peak: float, other: float) -> bool | None:
    """Whether ``peak`` is lower than ``other``: True or False when they differ by more
    than the plateau, None when they are equal within it (neither lower nor higher, so a
    stated relation either way is a miss)."""
    if peak < (1 - PEAK_PLATEAU) * other:
        return True
    if peak > (1 + PEAK_PLATEAU) * other:
        return False
    return None


def _error_summary(group: pd.DataFrame) -> dict[str, float]:
    errors = group["error_pct"].abs()
    worst = group.loc[errors.idxmax()]
    return {
        "points": len(group),
        "median_abs_error_pct": float(errors.median()),
        "worst_abs_error_pct": float(errors.max()),
        "worst_case": str(worst["case"]),
        "within_tolerance": int(group["within_tolerance"].sum()),
    }


def summarise(outcomes: list[CaseOutcome], by: tuple[str, ...] = ("split",)) -> dict[Any, dict[str, float]]:
    """Median and worst absolute percentage error per split (or per ``by`` columns, e.g.
    ``("system", "split")``: one system's easy points must not hide another's misses)."""
    frames = [o.points for o in outcomes if len(o.points)]
    if not frames:  # shape-only cases (a seed that publishes no numbers)
        return {}
    points = pd.concat(frames, ignore_index=True)
    keys = by[0] if len(by) == 1 else list(by)
    return {key: _error_summary(group) for key, group in points.groupby(keys)}
