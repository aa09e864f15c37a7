"""The Measurements table: every measured number, in SI units, with where it came from.

One row per measured value.  Columns:

=================  ===========================================================================
``source``         ``path:line`` of the value (or the citation of a published number)
``system``         system it was measured on, if known (a built-in name or a profile path)
``tool``           ``dd``, ``ior``, ``mdtest``, ``fio``, ``elbencho``, ``obdfilter-survey``,
                   ``bonnie++``, ``iozone``, ``io500``, ``darshan``, or the tool a published
                   number came from
``workload``       the command line, if known (what the simulator would run)
``nodes``, ``ppn`` client nodes and processes per node (empty when unknown)
``settings``       further experiment settings as JSON (``{"stripe_count": 4}``)
``over``           for a peak: the sweep it is the maximum of (``nodes=1,2,4,8,16,32,64``)
``phase``          ``write``, ``read``, ``file_create``, ... (the tool's operation)
``metric``         ``agg_bw`` (the tool's aggregate), ``rank_bw`` (one process), ``per_node_bw``,
                   ``ops_rate``, ``iops``, ``ost_bw``, ``ost_bw_min``, ``ost_bw_max``,
                   ``clat_mean``, ``clat_p50``, ``clat_p95``, ``clat_p99``, ``score``
``value``          in SI units: B/s, op/s, s
``unit``           ``B/s``, ``op/s``, ``s`` or ``1`` (dimensionless)
``uncertainty``    relative 1-sigma uncertainty of the value, if known
``iteration``      repetition index within the source, if the tool reports one
``tool_version``   the tool's version as its output states it (``3.2.0``, ``4.1.0+dev``,
                   ``io500-isc24_v1``), if it does
=================  ===========================================================================
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

COLUMNS = [
    "source",
    "system",
    "tool",
    "workload",
    "nodes",
    "ppn",
    "settings",
    "over",
    "phase",
    "metric",
    "value",
    "unit",
    "uncertainty",
    "iteration",
    "tool_version",
]
METRIC_UNITS = {
    "agg_bw": "B/s",
    "rank_bw": "B/s",
    "per_node_bw": "B/s",
    "min_rank_agg_bw": "B/s",
    "ost_bw": "B/s",
    "ost_bw_min": "B/s",
    "ost_bw_max": "B/s",
    "ops_rate": "op/s",
    "iops": "op/s",
    "clat_mean": "s",
    "clat_p50": "s",
    "clat_p95": "s",
    "clat_p99": "s",
    "score": "1",
}


@dataclass
class Measurement:
    source: str
    tool: str
    phase: str
    metric: str
    value: float
    workload: str = ""
    nodes: int | None = None
    ppn: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    over: str = ""
    system: str = ""
    uncertainty: float = math.nan
    iteration: int | None = None
    tool_version: str = ""

    def row(self) -> dict[str, Any]:
        row = asdict(self)
        row["settings"] = json.dumps(self.settings, sort_keys=True) if self.settings else ""
        row["unit"] = METRIC_UNITS[self.metric]
        return row


def to_frame(measurements: list[Measurement]) -> pd.DataFrame:
    """Records to the Measurements DataFrame (columns in the order above)."""
    frame = pd.DataFrame([m.row() for m in measurements], columns=COLUMNS)
    for column in ("nodes", "ppn", "iteration"):
        frame[column] = frame[column].astype("Int64")
    frame["value"] = frame["value"].astype(float)
    frame["uncertainty"] = frame["uncertainty"].astype(float)
    return frame


def settings_of(row: Any) -> dict[str, Any]:
    text = row["settings"] if isinstance(row, (dict, pd.Series)) else row
    if not isinstance(text, str) or not text:
        return {}
    return json.loads(text)
