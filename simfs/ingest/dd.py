"""GNU dd's summary on stderr.

::

    200+0 records in
    200+0 records out
    209715200 bytes (210 MB, 200 MiB) copied, 0.0178569 s, 11.7 GB/s

The rate is recomputed from bytes and seconds (dd rounds it to three digits).  Each
summary is one process's rate (``rank_bw``); the direction comes from the manifest's
workload (dd does not say whether it wrote or read).
"""

from __future__ import annotations

import re

from simfs.errors import WorkloadError
from simfs.ingest.common import fail, number, positive
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement
from simfs.workloads import parse_workload

_SUMMARY = re.compile(
    r"^(?P<bytes>\d+) bytes(?: \([^)]*\))? copied, (?P<seconds>[\d.e+-]+) s, (?P<rate>[\d.]+) (?P<unit>[kMGTP]?B)/s$"
)
_RECORDS = re.compile(r"^\d+\+\d+ records (in|out)$")


def looks_like(text: str) -> bool:
    return any(_SUMMARY.match(line.strip()) for line in text.splitlines()[:50])


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    phase = _phase(context, origin)
    measurements = []
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or _RECORDS.match(line):
            continue
        match = _SUMMARY.match(line)
        if not match:
            raise fail(origin, line_number, f"not a dd summary line: {line[:80]!r}")
        seconds = number(match["seconds"], origin, line_number, "seconds")
        if not seconds > 0:
            raise fail(origin, line_number, f"dd reported {match['seconds']} s; the rate is undefined")
        copied = positive(int(match["bytes"]), origin, line_number, "bytes copied")
        measurements.append(
            Measurement(
                source=f"{origin}:{line_number}",
                tool="dd",
                phase=phase,
                metric="rank_bw",
                value=positive(copied / seconds, origin, line_number, "rate"),
                **context.fields(),
            )
        )
    if not measurements:
        raise fail(origin, None, "no dd summary line ('N bytes ... copied, T s, R B/s')")
    return measurements


def _phase(context: FileContext, origin: str) -> str:
    if not context.workload:
        return ""
    try:
        spec = parse_workload(context.workload)
    except WorkloadError as exc:
        raise fail(origin, None, f"manifest workload: {exc}") from None
    if len(spec.phases) != 1:
        raise fail(origin, None, "manifest workload: a dd log holds one direction; give if= and of=")
    return spec.phases[0].op
