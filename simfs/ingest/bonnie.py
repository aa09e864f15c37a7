"""bonnie++ CSV, formats 1.96 to 1.98 (as ``bonnie++ -q`` prints and ``bon_csv2txt`` reads).

Field positions (0-based) in format 1.98 (bonnie++ 1.98 to 2.00): 2 name, 3 concurrency,
5 file size, 9 putc, 11 put_block, 13 rewrite, 15 getc, 17 get_block (KiB/s each, CPU %
after each), 19 seeks/s, 21 number of files (x1024), 26..36 sequential/random create,
stat, delete (files/s), then 12 latencies: 50 fields.  Format 1.98 added two fields after
the size and chunk size, the number of random seeks and of seeker processes (bonnie++'s
debian/changelog, 1.98: "store that in the CSV"; ``bon_time.cpp`` prints ``size, Seeks,
SeekProcCount``); formats 1.96 and 1.97 (bonnie++ 1.96 to 1.97.3) have every later field
two places earlier, 48 fields.  ``+++++`` means the test ran too fast to time: no
measurement, not a zero.  An empty field means the test was not run.
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
#: Format version -> where its fields sit against format 1.98's (the positions above).
_SHIFT = {"1.98": 0, "1.97": -2, "1.96": -2}


def looks_like(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    return first.startswith(tuple(f"{version}," for version in _SHIFT)) and first.count(",") >= 10


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements = []
    for number_, fields in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not fields or not any(fields):
            continue
        if fields[0] not in _SHIFT:
            raise fail(origin, number_, f"bonnie++ CSV format {fields[0]!r}: expected 1.96-1.98")
        shift = _SHIFT[fields[0]]
        if len(fields) < 37 + shift:
            raise fail(
                origin,
                number_,
                f"bonnie++ CSV format {fields[0]} line has {len(fields)} fields, expected at least {37 + shift}",
            )
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
        for index_198, phase in _BANDWIDTH.items():
            index = index_198 + shift
            if fields[index] not in _MISSING:
                value = positive_number(fields[index], origin, number_, f"field {index} ({phase})") * KIB
                measurements.append(Measurement(phase=phase, metric="agg_bw", value=value, **common))
        for index_198, phase in _RATES.items():
            index = index_198 + shift
            if fields[index] not in _MISSING:
                value = positive_number(fields[index], origin, number_, f"field {index} ({phase})")
                measurements.append(Measurement(phase=phase, metric="ops_rate", value=value, **common))
    if not measurements:
        raise fail(origin, None, "no timed bonnie++ results (every field empty or +++++)")
    return measurements
