"""iozone throughput mode (``-t N``)::

    Command line used: iozone -s 25000000 -r 1024 -I -c -o -l 4 -u 4 -t 4
    Children see throughput for  4 initial writers  =  2950211.62 kB/sec

"Children see" (the sum of every child's rate) is the figure the CRT-DC seed used; the
test name becomes the phase (``initial writers`` -> ``write``).  kB and KB are 1024
bytes in iozone; ``ops/sec`` (with ``-O``) is an operation rate.

Automatic mode (``-a``, and ``-s``/``-r`` runs without ``-t``): one row per file size and
record length, one column per test, right-aligned under the header iozone prints::

                                                          random    random     bkwd ...
          kB  reclen    write  rewrite    read    reread    read     write     read ...
        4096       4  1138055  2882138  6178018  5244471  5125556  3258820  4964124 ...

Each number is one measurement of the test whose header it ends under (a test not run,
``-i``, leaves its column blank); its file size and record length go into ``settings``
(``file_size_bytes``, ``record_bytes``), one process.  The rows are kB/s ("Output is in
kBytes/sec") or operations per second ("OPS Mode", ``-O``).  The Excel report ``-R``
appends repeats the same numbers and is not read again.
"""

from __future__ import annotations

import re

from simfs.ingest.common import KIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_CHILDREN = re.compile(r"Children see throughput for\s+(\d+)\s+(.+?)\s*=\s*([\d.]+)\s+(kB|KB|ops)/sec")
_PHASES = {
    "initial writers": "write",
    "rewriters": "rewrite",
    "readers": "read",
    "re-readers": "reread",
    "reverse readers": "reverse_read",
    "stride readers": "stride_read",
    "random readers": "random_read",
    "mixed workload": "mixed",
    "random writers": "random_write",
    "pwrite writers": "pwrite",
    "pread readers": "pread",
    "fwriters": "fwrite",
    "freaders": "fread",
}


#: Automatic mode's columns, in iozone's order.
_AUTO_TESTS = (
    "write",
    "rewrite",
    "read",
    "reread",
    "random_read",
    "random_write",
    "reverse_read",
    "record_rewrite",
    "stride_read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
)
_AUTO_HEADER = re.compile(r"^\s+kB\s+reclen\s+write\s+rewrite\s+read\s+reread\s+read\s+write\s+read\s+rewrite\s+read")
_AUTO_ROW = re.compile(r"^\s+(\d+)\s+(\d+)(\s+.*)?$")
_VERSION = re.compile(r"Version \$Revision: ([\d.]+) \$")
# Numbers sit right-aligned under their header, one character either way (iozone 3.489).
_ALIGNMENT = 2


def looks_like(text: str) -> bool:
    return "Children see throughput for" in text or any(_AUTO_HEADER.match(line) for line in text.splitlines())


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    if "Children see throughput for" not in text:
        return _parse_auto(text, origin, context)
    command = context.workload
    measurements = []
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("Command line used:"):
            command = line.split(":", 1)[1].strip()
        if "Children see throughput" not in line:
            continue
        match = _CHILDREN.search(line)
        if not match:
            raise fail(origin, number_, f"unreadable iozone throughput line: {line[:80]!r}")
        test = match[2].strip()
        if test not in _PHASES:
            raise fail(origin, number_, f"unknown iozone test {test!r}")
        rate = positive_number(match[3], origin, number_, f"{test} throughput")
        is_ops = match[4] == "ops"
        measurements.append(
            Measurement(
                source=f"{origin}:{number_}",
                tool="iozone",
                phase=_PHASES[test],
                metric="ops_rate" if is_ops else "agg_bw",
                value=rate if is_ops else rate * KIB,
                **context.fields(workload=command, ppn=context.ppn or int(match[1]) or None),
            )
        )
    if not measurements:
        raise fail(origin, None, "no 'Children see throughput' lines")
    return measurements


def _parse_auto(text: str, origin: str, context: FileContext) -> list[Measurement]:
    command, version, ops, ends = context.workload, "", False, None
    measurements = []
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("Command line used:"):
            command = line.split(":", 1)[1].strip()
        elif match := _VERSION.search(line):
            version = match[1]
        elif line.startswith("OPS Mode"):
            ops = True
        elif _AUTO_HEADER.match(raw):
            ends = [match.end() for match in re.finditer(r"\S+", raw)][2:]
        elif line.startswith(("iozone test complete", "Excel output")):
            break
        elif ends is not None and (row := _AUTO_ROW.match(raw)):
            size_kib, record_kib = int(row[1]), int(row[2])
            found = 0
            for value in re.finditer(r"\S+", raw[row.start(3) :] if row[3] else ""):
                end = value.end() + row.start(3)
                column = min(range(len(ends)), key=lambda index: abs(ends[index] - end))
                if abs(ends[column] - end) > _ALIGNMENT or column >= len(_AUTO_TESTS):
                    raise fail(origin, number_, f"iozone value {value[0]!r} is under no test's column")
                test = _AUTO_TESTS[column]
                rate = positive_number(value[0], origin, number_, f"{test} at {size_kib} kB, record {record_kib} kB")
                found += 1
                measurements.append(
                    Measurement(
                        source=f"{origin}:{number_}",
                        tool="iozone",
                        phase=test,
                        metric="ops_rate" if ops else "agg_bw",
                        value=rate if ops else rate * KIB,
                        tool_version=version,
                        **context.fields(
                            workload=command,
                            ppn=context.ppn or 1,
                            settings={
                                **context.settings,
                                "file_size_bytes": size_kib * KIB,
                                "record_bytes": record_kib * KIB,
                            },
                        ),
                    )
                )
            if not found:
                raise fail(origin, number_, f"iozone row {size_kib} kB, record {record_kib} kB has no results")
    if ends is None:
        raise fail(origin, None, "no 'Children see throughput' lines and no automatic-mode table")
    if not measurements:
        raise fail(origin, None, "iozone automatic-mode table with no rows")
    return measurements
