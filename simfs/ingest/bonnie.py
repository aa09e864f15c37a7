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

bonnie++ 1.0x (1.00 to 1.03e, 2000-2008) prints a CSV line with no format version: 0
name, 1 file size (``2G``, or ``1G:32k`` with the chunk size), 2 putc, 4 put_block, 6
rewrite, 8 getc, 10 get_block (KiB/s, CPU % after each), 12 seeks/s, 14 number of files
(x1024, or ``16:max:min:dirs``), 15..25 sequential/random create, stat ("Read"), delete
(files/s): 27 fields (the 1.03 source, ``bon_time.cpp``, and ``bon_csv2txt``'s reading
of it; every real 1.03 line checked has that layout).  A run's whole standard output (the
text tables, then the CSV line, as bonnie++ prints without ``-q``) is read for its CSV
lines; the tables round their values (``1.0g``), the CSV lines do not.
"""

from __future__ import annotations

import csv
import io
import re

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
#: bonnie++ 1.0x: the CSV line's fields (no format version).
_BANDWIDTH_10X = {2: "write_char", 4: "write_block", 6: "rewrite", 8: "read_char", 10: "read_block"}
_RATES_10X = {
    12: "random_seek",
    15: "sequential_create",
    17: "sequential_stat",
    19: "sequential_delete",
    21: "random_create",
    23: "random_stat",
    25: "random_delete",
}
_FIELDS_10X = 27
#: A line of a whole output that is a CSV record (the tables have no commas).
_CSV_LINE = re.compile(r"^[^,\s]*(?:,[^,]*){20,}$")
#: A 1.0x line's size field: ``2G``, ``6552M``, ``1G:32k``; and its files field: ``16``, ``16:1000:0:10``.
_SIZE_10X = re.compile(r"\d+[KMGT]?(?::\d+[kKmM]?)?")
_FILES_10X = re.compile(r"\d+(?::\d+)*")
#: The first line of the text tables bonnie++ prints without -q.
_TABLE = re.compile(r"^Version\s+\S+\s+-+Sequential (?:Output|Create)", re.M)


def _is_10x(fields: list[str]) -> bool:
    return (
        len(fields) >= _FIELDS_10X
        and fields[0] not in _SHIFT
        and _SIZE_10X.fullmatch(fields[1]) is not None
        and _FILES_10X.fullmatch(fields[14]) is not None
    )


def _first_line(text: str) -> str:
    return text.lstrip().split("\n", 1)[0]


def looks_like(text: str) -> bool:
    first = _first_line(text)
    if first.startswith(tuple(f"{version}," for version in _SHIFT)) and first.count(",") >= 10:
        return True
    if _TABLE.search(text[:4096]):
        return True
    return _is_10x(next(csv.reader([first]), []))


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements = []
    stdout = _TABLE.search(text[:4096]) is not None
    for number_, fields in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not fields or not any(fields):
            continue
        if stdout and len(fields) < 10:
            continue  # progress and the text tables (values rounded): the CSV line has them exactly
        if _is_10x(fields):
            measurements += _parse_10x(fields, origin, number_, context)
            continue
        if fields[0] not in _SHIFT:
            raise fail(origin, number_, f"bonnie++ CSV format {fields[0]!r}: expected 1.96-1.98, or a 1.0x line")
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
        bandwidth = {index + shift: phase for index, phase in _BANDWIDTH.items()}
        rates = {index + shift: phase for index, phase in _RATES.items()}
        measurements += _line(
            fields, origin, number_, context, fields[2], fields[5], int(concurrency), bandwidth, rates
        )
    if not measurements:
        if stdout and not any(_CSV_LINE.search(line) for line in text.splitlines()):
            raise fail(origin, None, "bonnie++ output without its CSV line (the text tables alone are not read)")
        raise fail(origin, None, "no timed bonnie++ results (every field empty or +++++)")
    return measurements


def _parse_10x(fields: list[str], origin: str, number_: int, context: FileContext) -> list[Measurement]:
    """One CSV line of bonnie++ 1.0x (module docstring)."""
    size = fields[1].split(":")[0]
    return _line(fields, origin, number_, context, fields[0], size, 1, _BANDWIDTH_10X, _RATES_10X)


def _line(
    fields: list[str],
    origin: str,
    number_: int,
    context: FileContext,
    name: str,
    size: str,
    concurrency: int,
    bandwidth: dict[int, str],
    rates: dict[int, str],
) -> list[Measurement]:
    """The timed results of one CSV line whose bandwidths (KiB/s) and rates sit at the
    given field positions."""
    common = dict(
        tool="bonnie++",
        workload=context.workload or f"bonnie++ -s {size}",
        nodes=context.nodes,
        ppn=context.ppn,
        settings={"file_size": size, "concurrency": concurrency, **context.settings},
        system=context.system or name,
        uncertainty=context.uncertainty,
        source=f"{origin}:{number_}",
    )
    measurements = []
    for positions, metric, scale in ((bandwidth, "agg_bw", KIB), (rates, "ops_rate", 1)):
        for index, phase in positions.items():
            if fields[index] not in _MISSING:
                value = positive_number(fields[index], origin, number_, f"field {index} ({phase})") * scale
                measurements.append(Measurement(phase=phase, metric=metric, value=value, **common))
    return measurements
