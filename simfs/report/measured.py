"""Measured points beside a predicted scaling curve (``simfs sweep --measured CASE``).

A validation case (``validation/**/*.toml``) carries measured values with their source:
single points (``nodes = 16``) or the peak of a curve (``over = "nodes=1,...,64"``), and
what the source says of the curve's shape (``[expect] peak_at``, ``collapse``).  Here
they become rows to plot and a comparison to print with the predicted curve.

A case is of one command line.  A sweep whose command line names values in braces
(``"specsfs2008 --load {load}"``) takes the cases of any of the command lines it runs:
each case is matched to the swept values that give its workload, so the ActiveStor 9
load curve, one case per requested load, is drawn by one sweep over ``load``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from simfs.errors import SimfsError
from simfs.predict import SIMULATED_METRICS
from simfs.validate.case import ValidationCase, load_case
from simfs.workloads import parse_workload
from simfs.workloads.spec import PhaseSpec


class Panel(NamedTuple):
    """Where a scaling plot draws a metric: its panel (0: the aggregate rate, 1: per
    node, or an open-loop phase's response time), what the plot multiplies the metric's
    SI value by, the unit it then shows and its format, and the kind of phase it
    measures."""

    index: int
    scale: float
    unit: str
    digits: str
    kind: str


#: Metrics a scaling plot has a panel for.
PLOTTED_METRICS = {
    "agg_bw": Panel(0, 1e-9, "GB/s", ".2f", "data"),
    "ost_bw": Panel(0, 1e-9, "GB/s", ".2f", "data"),
    "per_node_bw": Panel(1, 1e-6, "MB/s", ".1f", "data"),
    "ops_rate": Panel(0, 1.0, "ops/s", ",.0f", "metadata"),
    "clat_mean": Panel(1, 1e3, "ms", ".3g", "open-loop"),
}


_A = {"data": "a data", "metadata": "a metadata", "open-loop": "an open-loop"}


def phase_kind(phase: PhaseSpec) -> str:
    """``open-loop`` (SPECsfs2008), ``metadata`` (mdtest) or ``data``."""
    return "open-loop" if phase.is_open_loop else "metadata" if phase.is_metadata else "data"


def shown(value: float, metric: str) -> str:
    """``value`` (SI) as a scaling plot shows ``metric``: ``5.70 GB/s``, ``0.8 ms``."""
    panel = PLOTTED_METRICS[metric]
    return f"{value * panel.scale:{panel.digits}} {panel.unit}"


@dataclass(frozen=True)
class Measured:
    """One measured value (SI units of its metric): at ``x`` (a value of the sweep's
    first key), or a curve's peak (``x`` is None) over the sweep, on the predicted curve
    where the sweep's other keys have the values ``where`` gives."""

    phase: str
    metric: str
    x: object
    value: float
    label: str
    source: str
    where: tuple[tuple[str, Any], ...] = ()
    case: str = ""


def load_measured(
    paths: Sequence[str], workload: str, vary: Mapping[str, Sequence[Any]]
) -> tuple[list[Measured], list[ValidationCase]]:
    """The measured values of the cases at ``paths`` for a sweep of ``workload`` over
    ``vary`` (its first key is the plot's x axis); a case of another workload, metric or
    curve is refused."""
    from simfs.api import sweep_workloads, workload_names

    keys = list(vary)
    x_key = keys[0]
    names = workload_names(workload)
    swept = sweep_workloads(workload, {name: list(vary[name]) for name in names})
    rows: list[Measured] = []
    cases = []
    for text in paths:
        case = load_case(Path(text))
        case_phases = parse_workload(case.workload).phases
        matching = [values for values, spec in swept.items() if spec.phases == case_phases]
        if not matching:
            runs = f"any of the command lines {workload!r} runs with the --vary values" if names else repr(workload)
            raise SimfsError(f"--measured {text}: the case measures {case.workload!r}, not {runs}")
        setting = dict(zip(names, matching[0]))
        phases = {phase.label: phase for phase in case_phases}
        if case.phase not in phases:
            raise SimfsError(f"--measured {text}: phase {case.phase!r} is not a phase of {case.workload!r}")
        panel = PLOTTED_METRICS.get(case.metric)
        if panel is None:
            raise SimfsError(
                f"--measured {text}: metric {case.metric!r}: a scaling plot shows {', '.join(PLOTTED_METRICS)}"
            )
        if panel.kind != phase_kind(phases[case.phase]):
            raise SimfsError(
                f"--measured {text}: metric {case.metric!r} is of {_A[panel.kind]} phase; "
                f"{case.phase!r} is {_A[phase_kind(phases[case.phase])]} phase"
            )
        cases.append(case)
        for point in case.points:
            known = {**case.settings, **point.settings, **setting}
            where = tuple((key, known[key]) for key in keys[1:] if key in known)
            if point.over:
                if point.over.partition("=")[0].strip() != x_key:
                    raise SimfsError(f"--measured {text}: its peak is over {point.over!r}, the sweep varies {x_key}")
                label = point.note or "peak"
                rows.append(
                    Measured(case.phase, case.metric, None, point.value, label, case.source, where, str(case.path))
                )
            elif x_key in known:
                x = known[x_key]
                rows.append(
                    Measured(case.phase, case.metric, x, point.value, point.note, case.source, where, str(case.path))
                )
    return rows, cases


def setting_notes(
    cases: Sequence[ValidationCase], system: str, vary: Mapping[str, Sequence[Any]], overrides: Mapping[str, Any]
) -> list[str]:
    """What the sweep runs otherwise than a case measured: another system, or a setting
    the case gives (``ppn = 150``, ``stripe_count = 4``) that the sweep neither varies nor
    sets to the same value (nodes and ppn are 1 where not given).  Notes, not errors: a
    what-if beside a measurement is a comparison a user may mean."""
    notes = []
    for case in cases:
        if case.system != system:
            notes.append(f"{case.path}: measured on {case.system}; the sweep runs {system}")
        given = dict(case.settings)
        for point in case.points:
            given.update(point.settings)
        for key, value in given.items():
            if key in vary:
                continue
            ran = overrides.get(key, 1 if key in ("nodes", "ppn") else None)
            if ran is None:
                notes.append(f"{case.path}: measured with {key}={value}; the sweep does not set {key}")
            elif str(ran) != str(value):
                notes.append(f"{case.path}: measured with {key}={value}; the sweep runs {key}={ran}")
    return notes


def _curve(phases: pd.DataFrame, x_key: str, phase: str, metric: str, where: tuple[tuple[str, Any], ...]) -> pd.Series:
    """The predicted ``metric`` of ``phase`` along ``x_key``, where the other keys are
    ``where`` (averaged over those ``where`` does not fix)."""
    selected = phases["phase"] == phase
    for key, value in where:
        if key in phases:
            selected &= phases[key] == value
    return phases[selected].groupby(x_key, sort=True)[SIMULATED_METRICS[metric]].mean()


def _along_x(member: tuple[ValidationCase, list[Measured]]) -> tuple:
    """Cases in the order of their first point along the x axis (a peak last)."""
    own = member[1]
    x = own[0].x if own else None
    return (0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x))


def comparison(phases: pd.DataFrame, x_key: str, measured: list[Measured], cases: list[ValidationCase]) -> str:
    """Lines comparing each measured value and stated shape with the predicted curve: a
    line per predicted curve (a phase and metric where the other keys have one setting),
    then each case's points on it and what its source says of its shape.  A curve that
    several cases measure (one per requested load) is summarised once."""
    by_case: dict[str, list[Measured]] = {}
    for row in measured:
        by_case.setdefault(row.case, []).append(row)
    curves: dict[tuple, list[tuple[ValidationCase, list[Measured]]]] = {}
    for case in cases:
        own = [row for row in by_case.get(str(case.path), []) if row.phase == case.phase]
        where = own[0].where if own else ()
        curves.setdefault((case.phase, case.metric, where), []).append((case, own))
    lines = []
    for (phase, metric, where), members in curves.items():
        curve = _curve(phases, x_key, phase, metric, where)
        if curve.empty:
            continue
        peak_x, peak = curve.idxmax(), float(curve.max())
        first, last = float(curve.iloc[0]), float(curve.iloc[-1])
        fall = last / peak - 1
        setting = "".join(f", {key}={value}" for key, value in where)
        if metric == "clat_mean":  # a response time: no peak to speak of
            summary = (
                f"predicted {shown(first, metric)} at {x_key}={curve.index[0]} to "
                f"{shown(last, metric)} at {x_key}={curve.index[-1]}"
            )
        else:
            summary = (
                f"predicted peak {shown(peak, metric)} at {x_key}={peak_x}, "
                f"{fall:+.0%} from it at {x_key}={curve.index[-1]}"
            )
        lines.append(f"{phase}{setting}: {summary}")
        for case, own in sorted(members, key=_along_x):
            fitted = "the profile was fitted to it" if case.split == "calibration" else "not used in the fit"
            said_of_case = []
            for row in own:
                # A case's points at other settings of the other keys are on their own curves.
                on = curve if row.where == where else _curve(phases, x_key, phase, metric, row.where)
                if row.x is None:
                    error = float(on.max()) / row.value - 1
                    said = f"measured peak {shown(row.value, metric)}"
                elif row.x in on.index:
                    error = float(on[row.x]) / row.value - 1
                    said = f"measured {shown(row.value, metric)} at {x_key}={row.x}"
                else:
                    continue
                said_of_case.append(f"{said}: predicted {error:+.1%}")
            if case.expect_peak_at is not None:
                said_of_case.append(f"source: peak at {x_key}={case.expect_peak_at}; predicted at {x_key}={peak_x}")
            if case.expect_collapse is not None:
                said = "falls after its peak" if case.expect_collapse else "does not fall"
                predicted = "falls" if fall < -0.10 else "does not fall"
                said_of_case.append(f"source: the curve {said}; predicted: {predicted} ({fall:+.0%})")
            named = f"case {case.path.stem}, {case.split}: {fitted}"
            if len(said_of_case) == 1:
                lines.append(f"  {said_of_case[0]} ({named})")
            else:
                lines.append(f"  {named}")
                lines.extend(f"    {line}" for line in said_of_case)
    return "\n".join(lines)
