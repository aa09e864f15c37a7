"""Measured points beside a predicted scaling curve (``simfs sweep --measured CASE``).

A validation case (``validation/**/*.toml``) carries measured values with their source:
single points (``nodes = 16``) or the peak of a curve (``over = "nodes=1,...,64"``), and
what the source says of the curve's shape (``[expect] peak_at``, ``collapse``).  Here
they become rows to plot and a comparison to print with the predicted curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simfs.errors import SimfsError
from simfs.predict import SIMULATED_METRICS
from simfs.validate.case import ValidationCase, load_case
from simfs.workloads import parse_workload

#: Metrics a scaling plot has a panel for (aggregate and per node).
PLOTTED_METRICS = ("agg_bw", "per_node_bw")


@dataclass(frozen=True)
class Measured:
    """One measured value: at ``x`` (a value of the sweep's first key), or a curve's peak
    (``x`` is None) over the sweep."""

    phase: str
    metric: str
    x: object
    value_Bps: float
    label: str
    source: str


def load_measured(paths: Sequence[str], workload: str, x_key: str) -> tuple[list[Measured], list[ValidationCase]]:
    """The measured values of the cases at ``paths`` for a sweep of ``workload`` over
    ``x_key``; a case of another workload, metric or curve is refused."""
    spec = parse_workload(workload)
    phases = {phase.label for phase in spec.phases}
    rows: list[Measured] = []
    cases = []
    for text in paths:
        case = load_case(Path(text))
        if parse_workload(case.workload).phases != spec.phases:
            raise SimfsError(f"--measured {text}: the case measures {case.workload!r}, the sweep runs {workload!r}")
        if case.phase not in phases:
            raise SimfsError(f"--measured {text}: phase {case.phase!r} is not a phase of {workload!r}")
        if case.metric not in PLOTTED_METRICS:
            raise SimfsError(
                f"--measured {text}: metric {case.metric!r}: a scaling plot shows {', '.join(PLOTTED_METRICS)}"
            )
        cases.append(case)
        for point in case.points:
            if point.over:
                if point.over.partition("=")[0].strip() != x_key:
                    raise SimfsError(f"--measured {text}: its peak is over {point.over!r}, the sweep varies {x_key}")
                rows.append(Measured(case.phase, case.metric, None, point.value, point.note or "peak", case.source))
            elif x_key in point.settings:
                rows.append(
                    Measured(case.phase, case.metric, point.settings[x_key], point.value, point.note, case.source)
                )
    return rows, cases


def comparison(phases: pd.DataFrame, x_key: str, measured: list[Measured], cases: list[ValidationCase]) -> str:
    """Lines comparing each measured value and stated shape with the predicted curve."""
    lines = []
    for case in cases:
        column = SIMULATED_METRICS[case.metric]
        curve = phases[phases["phase"] == case.phase].groupby(x_key, sort=True)[column].mean()
        if curve.empty:
            continue
        peak_x, peak = curve.idxmax(), float(curve.max())
        last = float(curve.iloc[-1])
        fall = last / peak - 1
        lines.append(
            f"{case.phase}: predicted peak {peak / 1e9:.2f} GB/s at {x_key}={peak_x}, "
            f"{fall:+.0%} from it at {x_key}={curve.index[-1]} (case {case.path.stem}, {case.split}: "
            f"{'the profile was fitted to it' if case.split == 'calibration' else 'not used in the fit'})"
        )
        for row in measured:
            if row.phase != case.phase or row.metric != case.metric:
                continue
            if row.x is None:
                error = peak / row.value_Bps - 1
                where = f"measured peak {row.value_Bps / 1e9:.2f} GB/s"
            elif row.x in curve.index:
                error = float(curve[row.x]) / row.value_Bps - 1
                where = f"measured {row.value_Bps / 1e9:.2f} GB/s at {x_key}={row.x}"
            else:
                continue
            lines.append(f"  {where}: predicted {error:+.1%}")
        if case.expect_peak_at is not None:
            lines.append(f"  source: peak at {x_key}={case.expect_peak_at}; predicted at {x_key}={peak_x}")
        if case.expect_collapse is not None:
            said = "falls after its peak" if case.expect_collapse else "does not fall"
            predicted = "falls" if fall < -0.10 else "does not fall"
            lines.append(f"  source: the curve {said}; predicted: {predicted} ({fall:+.0%})")
    return "\n".join(lines)
