"""bonnie++ CSV (format 1.98, as ``bonnie++ -q`` prints and ``bon_csv2txt`` reads).

Field positions (0-based): 2 name, 3 concurrency, 5 file size, 9 putc, 11 put_block,
13 rewrite, 15 getc, 17 get_block (KiB/s each, CPU % after each), 19 seeks/s, 21 number
of files (x1024), 26..36 sequential/random create, stat, delete (files/s).  ``+++++``
means the test ran too fast to time: no measurement, not a zero.  An empty field means
the test was not run.
"""

from __future__ import annotations

import csv
import io

from simfs.ingest.common import KIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_BANDWIDTH = {9: "write_char", 11: "write_block", 13: "rewrite", 15: "read_char", 17: "read_block"}
_RATES = {
    19: "random_seek",
    26: "sequential_create",
    28: "sequential_stat",
    30: "sequential_delete",
    32: "random_create",
    34: "random_stat",
    36: "random_delete",
}
_MISSING = {"+++++", "++++", "+++", ""}


def looks_like(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    return first.startswith(("1.98,", "1.97,", "1.96,")) and first.count(",") >= 36


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements = []
    for number_, fields in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not fields or not any(fields):
            continue
        if fields[0] not in ("1.98", "1.97", "1.96"):
            raise fail(origin, number_, f"bonnie++ CSV format {fields[0]!r}: expected 1.96-1.98")
        if len(fields) < 37:
            raise fail(origin, number_, f"bonnie++ CSV line has {len(fields)} fields, expected at least 37")
        concurrency = fields[3] or "1"
        if not concurrency.isdigit() or int(concurrency) < 1:
            raise fail(origin, number_, f"field 3 (concurrency): expected a positive integer, got {concurrency!r}")
        settings = {"file_size": fields[5], "concurrency": int(concurrency), **context.settings}
        common = dict(
            tool="bonnie++",
            workload=context.workload or f"bonnie++ -s {fields[5]}",
            nodes=context.nodes,
            ppn=context.ppn,
            settings=settings,
            system=context.system or fields[2],
            uncertainty=context.uncertainty,
            source=f"{origin}:{number_}",
        )
        for index, phase in _BANDWIDTH.items():
            if fields[index] not in _MISSING:
                value = positive_number(fields[index], origin, number_, f"field {index} ({phase})") * KIB
                measurements.append(Measurement(phase=phase, metric="agg_bw", value=value, **common))
        for index, phase in _RATES.items():
            if fields[index] not in _MISSING:
                value = positive_number(fields[index], origin, number_, f"field {index} ({phase})")
                measurements.append(Measurement(phase=phase, metric="ops_rate", value=value, **common))
    if not measurements:
        raise fail(origin, None, "no timed bonnie++ results (every field empty or +++++)")
    return measurements
