"""IO500 ``result_summary.txt``::

    IO500 version io500-isc24_v1 (standard)
    [RESULT]       ior-easy-write        3.421534 GiB/s : time 312.006 seconds
    [RESULT]    mdtest-easy-write       21.548770 kIOPS : time 305.171 seconds
    [      ]            timestamp        0.000000 kIOPS : time 0.000 seconds
    [SCORE ] Bandwidth 1.218402 GiB/s : IOPS 17.341120 kiops : TOTAL 4.596609

(format of io500 ``src/main.c``).  ``ior-*`` phases give ``agg_bw``, the others
``ops_rate``; the score line gives ``score`` entries.  A phase marked ``[INVALID]`` is
kept but its uncertainty is infinite, so a calibrator gives it no weight; an
``[INVALID]`` value of zero (a phase that failed) gives no row.  Any other value must be
above zero.
"""

from __future__ import annotations

import math
import re

from simfs.ingest.common import GIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_RESULT = re.compile(r"^\[(RESULT|      )\]\s+(\S+)\s+([\d.]+)\s+(GiB/s|kIOPS) : time ([\d.]+) seconds( \[INVALID\])?$")
_SCORE = re.compile(r"^\[SCORE ?\] Bandwidth ([\d.]+) GiB/s : IOPS ([\d.]+) kiops : TOTAL ([\d.]+)( \[INVALID\])?$")


def looks_like(text: str) -> bool:
    return text.lstrip().startswith("IO500 version") or "[RESULT]" in text[:2000]


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements = []
    common = dict(
        tool="io500", nodes=context.nodes, ppn=context.ppn, settings=dict(context.settings), system=context.system
    )
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.startswith("IO500 version"):
            continue
        result = _RESULT.match(line)
        score = _SCORE.match(line)
        if result:
            if result[1] != "RESULT":
                continue  # an unscored phase (timestamp)
            bandwidth = result[4] == "GiB/s"
            if result[6] and _is_zero(result[3]):
                continue  # a failed phase: no measurement, and no weight if it were one
            value = positive_number(result[3], origin, number_, result[2]) * (GIB if bandwidth else 1000.0)
            measurements.append(
                Measurement(
                    source=f"{origin}:{number_}",
                    phase=result[2],
                    metric="agg_bw" if bandwidth else "ops_rate",
                    value=value,
                    workload=f"io500 {result[2]}",
                    uncertainty=math.inf if result[6] else context.uncertainty,
                    **common,
                )
            )
        elif score:
            for phase, value in (("bandwidth", score[1]), ("iops", score[2]), ("total", score[3])):
                if score[4] and _is_zero(value):
                    continue
                measurements.append(
                    Measurement(
                        source=f"{origin}:{number_}",
                        phase=phase,
                        metric="score",
                        value=positive_number(value, origin, number_, f"{phase} score"),
                        workload="io500 score",
                        uncertainty=math.inf if score[4] else math.nan,
                        **common,
                    )
                )
        else:
            raise fail(origin, number_, f"not an IO500 result_summary line: {line[:80]!r}")
    if not measurements:
        raise fail(origin, None, "no IO500 [RESULT] lines")
    return measurements


def _is_zero(text: str) -> bool:
    try:
        return float(text) == 0.0
    except ValueError:
        return False
