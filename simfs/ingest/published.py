"""Numbers read off papers and reports: a documented CSV.

Header (any order; ``workload`` to ``over`` may be empty)::

    system,tool,workload,nodes,ppn,settings,over,phase,metric,value,unit,uncertainty,source

* ``value`` in ``unit``: ``B/s``, ``kB/s``, ``MB/s``, ``GB/s`` (powers of 1000),
  ``KiB/s``, ``MiB/s``, ``GiB/s`` (powers of 1024), ``op/s``, ``kop/s``, ``s``, ``ms``, ``us``;
* ``settings``: ``key=value`` pairs separated by ``;`` (``stripe_count=4;stripe_size=1m``);
* ``over``: the sweep a peak was taken over (``nodes=1,2,4,8,16,32,64``);
* ``uncertainty``: relative, 1 sigma (``0.05``);
* ``source``: the citation (``seed 000_cd5f2d1d7b196eec.txt, "Aggregated peak values"``).

Lines starting with ``#`` are comments.
"""

from __future__ import annotations

import csv
import io
import math
import re

from simfs.ingest.common import fail, non_negative, number, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import COLUMNS, METRIC_UNITS, Measurement
from simfs.textinput import edit_distance

# Columns a published-results CSV must have (iteration and tool version are optional).
HEADER = [column for column in COLUMNS if column not in ("iteration", "tool_version")]
_UNITS = {
    "B/s": ("B/s", 1.0),
    "kB/s": ("B/s", 1e3),
    "MB/s": ("B/s", 1e6),
    "GB/s": ("B/s", 1e9),
    "KiB/s": ("B/s", 1024.0),
    "MiB/s": ("B/s", 1024.0**2),
    "GiB/s": ("B/s", 1024.0**3),
    "op/s": ("op/s", 1.0),
    "kop/s": ("op/s", 1e3),
    "s": ("s", 1.0),
    "ms": ("s", 1e-3),
    "us": ("s", 1e-6),
    "1": ("1", 1.0),
}


def looks_like(text: str) -> bool:
    """Most of :data:`HEADER` in the first line (whatever separates it), so that a file
    with a column missing, misspelt or separated by ``;`` is told so by :func:`parse`
    rather than called a format simfs does not know."""
    for line in text.lstrip("\ufeff").splitlines():
        if line.strip() and not line.startswith("#"):
            cells = {cell.strip() for cell in re.split(r"[,;\t]", line)}
            return len(set(HEADER) & cells) > len(HEADER) // 2
    return False


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    lines = [
        (n, line)
        for n, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1)  # a spreadsheet's byte-order mark
        if line.strip() and not line.startswith("#")
    ]
    if not lines:
        raise fail(origin, None, "empty published-results CSV")
    reader = csv.reader(io.StringIO("\n".join(line for _, line in lines)))
    header = [c.strip() for c in next(reader)]
    if len(header) == 1 and re.search(r"[;\t]", header[0]):
        raise fail(origin, lines[0][0], "columns separated by ';' or tabs: expected commas")
    missing = set(HEADER) - set(header)
    if missing:
        unknown = [column for column in header if column not in HEADER]
        typos = [
            column for column in unknown if len([name for name in missing if edit_distance(column, name) <= 2]) == 1
        ]
        hint = f" (the header has {', '.join(typos)}: a typo?)" if typos else ""
        raise fail(origin, lines[0][0], f"missing columns: {', '.join(sorted(missing))}{hint}")
    measurements = []
    while True:
        # The record's first line (a quoted field may span several).
        first = reader.line_num
        fields = next(reader, None)
        if fields is None:
            break
        number_ = lines[first][0]
        if len(fields) != len(header):
            raise fail(origin, number_, f"{len(fields)} fields, header has {len(header)}")
        row = dict(zip(header, (f.strip() for f in fields)))
        metric = row["metric"]
        if metric not in METRIC_UNITS:
            raise fail(origin, number_, f"metric {metric!r}: expected one of {', '.join(METRIC_UNITS)}")
        if row["unit"] not in _UNITS:
            raise fail(origin, number_, f"unit {row['unit']!r}: expected one of {', '.join(_UNITS)}")
        si_unit, scale = _UNITS[row["unit"]]
        if si_unit != METRIC_UNITS[metric]:
            raise fail(origin, number_, f"unit {row['unit']} does not fit metric {metric} ({METRIC_UNITS[metric]})")
        value = positive_number(row["value"], origin, number_, "value") * scale
        uncertainty = math.nan  # empty: not stated
        if row["uncertainty"]:
            stated = number(row["uncertainty"], origin, number_, "uncertainty")
            uncertainty = non_negative(stated, origin, number_, "uncertainty")
        measurements.append(
            Measurement(
                source=f"{origin}:{number_}: {row['source']}" if row["source"] else f"{origin}:{number_}",
                tool=row["tool"],
                phase=row["phase"],
                metric=metric,
                value=value,
                workload=row["workload"] or context.workload,
                nodes=_count(row["nodes"], origin, number_, "nodes") or context.nodes,
                ppn=_count(row["ppn"], origin, number_, "ppn") or context.ppn,
                settings={**context.settings, **_settings(row["settings"], origin, number_)},
                over=row["over"],
                system=row["system"] or context.system,
                uncertainty=uncertainty if not math.isnan(uncertainty) else context.uncertainty,
            )
        )
    return measurements


def _count(text: str, origin: str, line: int, name: str) -> int | None:
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise fail(origin, line, f"{name} {text!r}: expected a positive integer")
    return int(text)


def _settings(text: str, origin: str, line: int) -> dict[str, object]:
    settings: dict[str, object] = {}
    for pair in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, value = pair.partition("=")
        if not sep:
            raise fail(origin, line, f"settings {pair!r}: expected key=value")
        settings[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
    return settings
