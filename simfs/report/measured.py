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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from simfs.errors import SimfsError
from simfs.experiment import Experiment
from simfs.predict import SIMULATED_METRICS
from simfs.validate.case import ValidationCase, load_case
from simfs.workloads import parse_workload
from simfs.workloads.spec import PhaseSpec, WorkloadSpec


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
    "clat_mean": Panel(1, 1e3, "ms", ".3f", "open-loop"),
}


#: Settings every run has, at the values a run takes where nothing sets them.
_EXPERIMENT_DEFAULTS = {name: getattr(Experiment, name) for name in ("nodes", "ppn")}

_A = {"data": "a data", "metadata": "a metadata", "open-loop": "an open-loop"}


def phase_kind(phase: PhaseSpec) -> str:
    """``open-loop`` (SPECsfs2008), ``metadata`` (mdtest) or ``data``."""
    return "open-loop" if phase.is_open_loop else "metadata" if phase.is_metadata else "data"


def shown(value: float, metric: str, units: str = "decimal") -> str:
    """``value`` (SI) as a scaling plot shows ``metric``: ``5.70 GB/s``, ``0.800 ms``
    (three significant digits where the format's would leave fewer: ``0.0112 GB/s``).
    ``units`` (one of :data:`simfs.report.tables.UNITS`) gives a bandwidth in the units
    the sweep's table prints it in."""
    from simfs.report.tables import UNITS

    panel = PLOTTED_METRICS[metric]
    scale, unit = panel.scale, panel.unit
    if panel.kind == "data":
        unit, size = UNITS[units][panel.index]
        scale = 1 / size
    scaled = value * scale
    digits = panel.digits
    if digits.endswith("f") and 0 < abs(scaled) < 10 ** (1 - int(digits.strip(".,f"))):
        digits = ".3g"  # two decimals of 0.0112 GB/s would leave one digit
    return f"{scaled:{digits}} {unit}"


def signed_percent(fraction: float, decimals: int) -> str:
    """``fraction`` as a signed percentage, ``+4.2%``; one that rounds to nothing is
    ``0%`` or ``0.0%``, not ``-0.0%``."""
    text = f"{fraction:+.{decimals}%}"
    return text[1:] if float(text[1:-1]) == 0 else text


@dataclass(frozen=True)
class Measured:
    """One measured value (SI units of its metric): at ``x`` (a value of the sweep's
    first key), or a curve's peak (``x`` is None) over the sweep, on the predicted curve
    where the sweep's other keys have the values ``where`` gives."""

    phase: str
    metric: str
    x: object
    value: float
    where: tuple[tuple[str, Any], ...] = ()
    case: str = ""


@dataclass(frozen=True)
class MeasuredCases:
    """What ``--measured`` puts beside a sweep: the measured values on it (``rows``), the
    cases they come from, the cases whose stated shape (peak, collapse) the sweep spans
    (``shaped``: their curve's key is the swept one and its values are all swept), and
    notes on what was left out or measured otherwise."""

    rows: list[Measured]
    cases: list[ValidationCase]
    shaped: frozenset[str]
    notes: list[str]


def _same_workload(swept: WorkloadSpec, measured: WorkloadSpec) -> bool:
    """The same runs, however the command lines are spelt: phases and every option
    (obdfilter-survey's ``thr`` is an option, not a phase)."""
    return replace(swept, command="") == replace(measured, command="") and swept.options == measured.options


def _curve_values(curve: str) -> tuple[str, list[str]]:
    key, _, values = curve.partition("=")
    return key.strip(), [value.strip() for value in values.split(",") if value.strip()]


def load_measured(
    paths: Sequence[str],
    workload: str,
    vary: Mapping[str, Sequence[Any]],
    *,
    system: str = "",
    fixed: Mapping[str, Any] | None = None,
) -> MeasuredCases:
    """The measured values of the cases at ``paths`` that are on a sweep of ``workload``
    over ``vary`` (its first key is the plot's x axis) on ``system`` with the settings
    ``fixed`` (``--nodes``, ``--ppn``, ``--set``: nodes and ppn are 1 where not given).

    A case of another workload, metric or curve is refused.  A point measured where a
    setting that differs between the case's points has another value than the sweep's
    (a point at 8 nodes beside a sweep at 2) is left out with a note; a setting of the
    whole case that the sweep runs otherwise (another system, ``ppn``, ``stripe_count``)
    is noted, and its points kept: a what-if beside a measurement is a comparison a user
    may mean."""
    from simfs.api import sweep_workloads, workload_names

    # What the sweep runs where it sets nothing: the experiment's own defaults.
    fixed = {**_EXPERIMENT_DEFAULTS, **(fixed or {})}
    keys = list(vary)
    x_key = keys[0]
    swept_values = {key: {str(value) for value in values} for key, values in vary.items()}
    names = workload_names(workload)
    swept = sweep_workloads(workload, {name: list(vary[name]) for name in names})
    rows: list[Measured] = []
    cases: list[ValidationCase] = []
    shaped: set[str] = set()
    notes: list[str] = []
    seen: set[Path] = set()
    for text in paths:
        try:
            case = load_case(Path(text))
        except SimfsError as exc:
            # Name the option as the other refusals of a case do ("--measured FILE: ..."),
            # and the case where the message is about a file it reads (its case.data).
            message = str(exc)
            raise type(exc)(f"--measured {message if message.startswith(text) else f'{text}: {message}'}") from None
        if case.path.resolve() in seen:
            continue  # given twice: once is enough
        seen.add(case.path.resolve())
        case_spec = parse_workload(case.workload)
        matching = [values for values, spec in swept.items() if _same_workload(spec, case_spec)]
        if not matching:
            runs = f"any of the command lines {workload!r} runs with the --vary values" if names else repr(workload)
            raise SimfsError(f"--measured {text}: the case measures {case.workload!r}, not {runs}")
        setting = dict(zip(names, matching[0]))
        phases = {phase.label: phase for phase in case_spec.phases}
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
        if system and case.system != system:
            notes.append(f"{case.path}: measured on {case.system}; the sweep runs {system}")
        # Settings of the whole case (nodes and ppn 1 where it gives none), then those that
        # differ between its points.
        whole = {**_EXPERIMENT_DEFAULTS, **case.settings}
        per_point = {key for point in case.points for key in point.settings}
        for key, value in whole.items():
            if key in vary or key in per_point:
                continue
            ran = fixed.get(key)
            if ran is None:
                notes.append(f"{case.path}: measured with {key}={value}; the sweep does not set {key}")
            elif str(ran) != str(value):
                notes.append(f"{case.path}: measured with {key}={value}; the sweep runs {key}={ran}")
        curve_key, curve_values = _curve_values(case.curve or next((p.over for p in case.points if p.over), ""))
        if curve_key == x_key and curve_values and set(curve_values) <= swept_values[x_key]:
            shaped.add(str(case.path))
        elif case.expect_peak_at is not None or case.expect_collapse is not None or curve_key:
            notes.append(
                f"{case.path}: its curve is {case.curve or curve_key + '=' + ','.join(curve_values)}, "
                f"the sweep's {x_key}={','.join(map(str, vary[x_key]))}: its peak and shape are not compared"
            )
        off: list[str] = []
        for point in case.points:
            known = {**whole, **point.settings, **setting}
            # A point at another value of a setting that the case varies, or of a swept
            # key than the sweep runs, is not on this sweep.
            # (One the sweep neither varies nor sets is not known to be the sweep's.)
            away = [
                f"{key}={value}"
                for key, value in point.settings.items()
                if key != x_key
                and (str(value) not in swept_values[key] if key in vary else str(value) != str(fixed.get(key)))
            ]
            if point.over:
                if point.over.partition("=")[0].strip() != x_key:
                    raise SimfsError(f"--measured {text}: its peak is over {point.over!r}, the sweep varies {x_key}")
                if str(case.path) not in shaped:
                    continue  # a peak over values the sweep does not run: noted above
            elif x_key not in known:
                continue
            elif str(known[x_key]) not in swept_values[x_key]:
                away.insert(0, f"{x_key}={known[x_key]}")
            if away:
                off.append(", ".join(away))
                continue
            where = tuple((key, known[key]) for key in keys[1:] if key in known)
            x = None if point.over else known[x_key]
            rows.append(Measured(case.phase, case.metric, x, point.value, where, str(case.path)))
        if off:
            notes.append(f"{case.path}: points not on this sweep left out ({'; '.join(dict.fromkeys(off))})")
    return MeasuredCases(rows, cases, frozenset(shaped), notes)


def _curve(
    phases: pd.DataFrame, keys: Sequence[str], phase: str, metric: str, where: tuple[tuple[str, Any], ...]
) -> tuple[pd.Series, list[str]]:
    """The predicted ``metric`` of ``phase`` along ``keys[0]`` where the other keys are
    ``where``, in the order of ``keys[0]``'s values; and the other keys it is averaged
    over (those the sweep varies and ``where`` does not fix)."""
    x_key = keys[0]
    selected = phases["phase"] == phase
    for key, value in where:
        if key in phases:
            selected &= phases[key] == value
    chosen = phases[selected]
    fixed = {key for key, _ in where}
    averaged = [key for key in keys[1:] if key not in fixed and key in chosen and chosen[key].nunique() > 1]
    curve = chosen.groupby(x_key, sort=False)[SIMULATED_METRICS[metric]].mean()
    if pd.api.types.is_numeric_dtype(chosen[x_key]):
        curve = curve.sort_index()  # a text axis keeps the order the values were given in
    return curve, averaged


def _along_x(member: tuple[ValidationCase, list[Measured]]) -> tuple:
    """Cases in the order of their first point along the x axis (a peak last)."""
    own = member[1]
    x = own[0].x if own else None
    return (0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x))


def comparison(phases: pd.DataFrame, keys: Sequence[str], measured: MeasuredCases, units: str = "decimal") -> str:
    """Lines comparing each measured value and stated shape with the predicted curve: a
    line per predicted curve (a phase and metric where the other keys have one setting),
    then each case's points on it and what its source says of its shape (where the
    sweep spans its curve).  A curve that several cases measure (one per requested load)
    is summarised once.  Bandwidths are in ``units``, as the sweep's table prints them."""
    x_key = keys[0]
    by_case: dict[str, list[Measured]] = {}
    for row in measured.rows:
        by_case.setdefault(row.case, []).append(row)
    curves: dict[tuple, list[tuple[ValidationCase, list[Measured]]]] = {}
    for case in measured.cases:
        own = by_case.get(str(case.path), [])
        shaped = str(case.path) in measured.shaped
        if not own and not shaped:
            continue  # nothing of it on this sweep (the notes say why)
        where = own[0].where if own else ()
        curves.setdefault((case.phase, case.metric, where), []).append((case, own))
    lines = []
    for (phase, metric, where), members in curves.items():
        curve, averaged = _curve(phases, keys, phase, metric, where)
        if curve.empty:
            continue
        peak_x, peak = curve.idxmax(), float(curve.max())
        first, last = float(curve.iloc[0]), float(curve.iloc[-1])
        fall = last / peak - 1
        setting = "".join(f", {key}={value}" for key, value in where)
        mean = f" (mean over {', '.join(averaged)})" if averaged else ""
        if metric == "clat_mean" or not pd.api.types.is_numeric_dtype(curve.index):
            # A response time has no peak to speak of, nor has an axis of words.
            summary = (
                f"predicted {shown(first, metric, units)} at {x_key}={curve.index[0]} to "
                f"{shown(last, metric, units)} at {x_key}={curve.index[-1]}"
            )
        elif peak_x == curve.index[-1]:
            summary = f"predicted peak {shown(peak, metric, units)} at {x_key}={peak_x}, the last point"
        else:
            summary = (
                f"predicted peak {shown(peak, metric, units)} at {x_key}={peak_x}, "
                f"{signed_percent(fall, 0)} from it at {x_key}={curve.index[-1]}"
            )
        lines.append(f"{phase}{setting}: {summary}{mean}")
        for case, own in sorted(members, key=_along_x):
            fitted = "the profile was fitted to it" if case.split == "calibration" else "not used in the fit"
            said_of_case = []
            for row in own:
                # A case's points at other settings of the other keys are on their own curves.
                on = curve if row.where == where else _curve(phases, keys, phase, metric, row.where)[0]
                if row.x is None:
                    error = float(on.max()) / row.value - 1
                    said = f"measured peak {shown(row.value, metric, units)}"
                elif row.x in on.index:
                    error = float(on[row.x]) / row.value - 1
                    said = f"measured {shown(row.value, metric, units)} at {x_key}={row.x}"
                else:
                    continue
                said_of_case.append(f"{said}: predicted {signed_percent(error, 1)}")
            if str(case.path) in measured.shaped:
                if case.expect_peak_at is not None:
                    said_of_case.append(f"source: peak at {x_key}={case.expect_peak_at}; predicted at {x_key}={peak_x}")
                if case.expect_collapse is not None:
                    said = "falls after its peak" if case.expect_collapse else "does not fall"
                    predicted = "falls" if fall < -0.10 else "does not fall"
                    said_of_case.append(f"source: the curve {said}; predicted: {predicted} ({signed_percent(fall, 0)})")
            named = f"case {case.path.stem}, {case.split}: {fitted}"
            if len(said_of_case) == 1:
                lines.append(f"  {said_of_case[0]} ({named})")
            elif said_of_case:
                lines.append(f"  {named}")
                lines.extend(f"    {line}" for line in said_of_case)
    return "\n".join(lines)
