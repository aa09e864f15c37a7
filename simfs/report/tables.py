"""Tables for people: the tidy phase table pivoted to one row per configuration.

Aggregate bandwidth prints in GB/s and per-node bandwidth in MB/s (10^9 and 10^6 bytes/s,
the units of the CRT-DC seed) unless ``units`` asks for IOR's (MiB/s for both) or the
IO500's (GiB/s aggregate, MiB/s per node); the column headers say which.  Tidy CSV/JSON
keep SI bytes/s.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from simfs.workloads.spec import OPEN_LOOP_OP

if TYPE_CHECKING:
    import pandas as pd

#: ``units`` -> ((aggregate unit, bytes), (per-node unit, bytes)).
UNITS = {
    "decimal": (("GB/s", 1e9), ("MB/s", 1e6)),
    "MiB": (("MiB/s", 2.0**20), ("MiB/s", 2.0**20)),  # what IOR prints
    "GiB": (("GiB/s", 2.0**30), ("MiB/s", 2.0**20)),  # what the IO500 prints
}
_AGGREGATE_SUFFIXES = tuple(f" agg {unit}" for (unit, _), _ in UNITS.values())


def wide_table(phases: pd.DataFrame, keys: Sequence[str], units: str = "decimal") -> pd.DataFrame:
    """One row per combination of ``keys``; per phase: aggregate, per node, bottleneck
    (operations per second for metadata phases, bandwidth for phases that move data).

    Iterations are averaged (bandwidths) or the most frequent bottleneck is kept.
    ``units``: one of :data:`UNITS`.
    """
    import pandas as pd

    return pd.DataFrame(wide_rows(phases.to_dict("records"), keys, units))


def wide_rows(phases: Sequence[dict[str, Any]], keys: Sequence[str], units: str = "decimal") -> list[dict[str, Any]]:
    """:func:`wide_table` on the phase rows as dicts, without pandas (a one-point
    ``simfs simulate`` prints its table without importing it)."""
    if units not in UNITS:
        raise ValueError(f"units: expected one of {', '.join(UNITS)}, got {units!r}")
    (aggregate_unit, aggregate_bytes), (node_unit, node_bytes) = UNITS[units]
    order = list(dict.fromkeys(row["phase"] for row in phases))
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in phases:
        groups.setdefault(tuple(row[key] for key in keys), []).append(row)
    table = []
    for values, group in groups.items():
        out = dict(zip(keys, values))
        for phase in order:
            sub = [row for row in group if row["phase"] == phase]
            if not sub:
                continue
            # A metadata phase: items per second, as mdtest reports; an open-loop one (its op
            # "mix") shows its rate even when no operation ended in its interval.
            if all(row["ops"] > 0 or row.get("op") == OPEN_LOOP_OP for row in sub):
                out[f"{phase} ops/s"] = _mean(row["ops_per_s"] for row in sub)
                out[f"{phase} per-node ops/s"] = _mean(row["ops_per_s"] / row["nodes"] for row in sub)
            responses = [row.get("response_time_s") for row in sub]
            if all(value is not None for value in responses):
                # An open-loop phase (SPECsfs2008): what it reports beside the load it achieved.
                out[f"{phase} response ms"] = _mean(responses) * 1e3
            if all(row["bytes"] > 0 for row in sub):
                out[f"{phase} agg {aggregate_unit}"] = _mean(row["agg_bw_Bps"] for row in sub) / aggregate_bytes
                out[f"{phase} per-node {node_unit}"] = _mean(row["per_node_bw_Bps"] for row in sub) / node_bytes
            out[f"{phase} bottleneck"] = _bottleneck_label(sub)
            busy = [row.get("host_cpu_busy") for row in sub]
            if all(value is not None and not math.isnan(value) for value in busy):
                # A testbed's shared cores: how near the phase came to being CPU-bound.
                out[f"{phase} host CPU busy"] = _mean(busy)
        table.append(out)
    return table


def _mean(values: Iterable[float]) -> float:
    values = [float(value) for value in values]
    return sum(values) / len(values)


def _bottleneck_label(sub: Sequence[dict[str, Any]]) -> str:
    """The most frequent bottleneck, with the mechanism that made it bind: ``ost
    (hdd_seek)`` where seek thrashing lowered the OSTs' capacity, ``ost`` at nominal.
    Ties go to the first in sort order (as pandas' ``mode``)."""
    labels = []
    for row in sub:
        label, mechanism = str(row["bottleneck"]), row.get("bottleneck_mechanism")
        if isinstance(mechanism, float) and math.isnan(mechanism):
            mechanism = ""
        labels.append(f"{label} ({mechanism})" if mechanism not in (None, "") else label)
    counts = Counter(labels)
    most = max(counts.values())
    return min(label for label, count in counts.items() if count == most)


#: A fall after the peak smaller than this (relative) is a plateau, not a collapse.
COLLAPSE_THRESHOLD = 0.10


def mark_peaks(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Add, per phase, a ``<phase> vs peak`` column along the first key (a scaling
    curve): ``peak`` at the highest rate, and after it the change from the peak where
    the rate fell by more than :data:`COLLAPSE_THRESHOLD` (``-32%``), the collapse a
    scaling study looks for.  Curves of fewer than three points are left unmarked."""
    import pandas as pd

    first, others = keys[0], list(keys[1:])
    table = table.copy()
    rates = [
        c for c in table.columns if c.endswith(_AGGREGATE_SUFFIXES) or (c.endswith(" ops/s") and "per-node" not in c)
    ]
    for column in rates:
        phase = column.rsplit(" ", 2)[0] if column.endswith(_AGGREGATE_SUFFIXES) else column.rsplit(" ", 1)[0]
        notes = pd.Series("", index=table.index, dtype=object)
        groups = table.groupby(others, sort=False) if others else [((), table)]
        for _, group in groups:
            curve = group.sort_values(first)[column].dropna()
            if len(curve) < 3:
                continue
            peak_at = curve.idxmax()
            peak = curve[peak_at]
            notes[peak_at] = "peak"
            after = curve.loc[curve.index[list(curve.index).index(peak_at) + 1 :]]
            for index, value in after.items():
                change = value / peak - 1 if peak > 0 else 0.0
                if change < -COLLAPSE_THRESHOLD:
                    notes[index] = f"{change:+.0%}"
        if (notes != "").any():
            position = table.columns.get_loc(column) + 1
            table.insert(position, f"{phase} vs peak", notes)
    return table


def render_text(frame: pd.DataFrame | Sequence[dict[str, Any]]) -> str:
    """Aligned plain text, numbers with three significant decimals; ``frame`` a table or
    its rows as dicts (every key of any row, in the order first seen; a row without one
    shows ``nan`` there, as a DataFrame built from the rows would)."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 1e5 else f"{value:.4g}"
        return str(value)

    if isinstance(frame, (list, tuple)):
        columns = list(dict.fromkeys(key for row in frame for key in row))
        rows = [[row.get(column, math.nan) for column in columns] for row in frame]
    else:
        columns = list(frame.columns)
        rows = list(frame.itertuples(index=False))
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(str(c)), *(len(r[i]) for r in cells)) if cells else len(str(c)) for i, c in enumerate(columns)]
    lines = ["  ".join(str(c).rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def to_json(frame: pd.DataFrame) -> str:
    """Strict JSON (no NaN/Infinity tokens): a list of row objects."""
    return json.dumps(strict(frame.to_dict(orient="records")), indent=1)


def strict(value: object) -> object:
    """``value`` made strict-JSON-safe, recursively: numpy scalars become Python numbers,
    NaN and infinities ``None``."""
    if isinstance(value, dict):
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()  # numpy scalar -> Python
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
