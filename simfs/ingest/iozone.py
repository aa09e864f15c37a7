"""iozone throughput mode (``-t N``)::

    Command line used: iozone -s 25000000 -r 1024 -I -c -o -l 4 -u 4 -t 4
    Children see throughput for  4 initial writers  =  2950211.62 kB/sec

"Children see" (the sum of every child's rate) is the figure the CRT-DC seed used; the
test name becomes the phase (``initial writers`` -> ``write``).  kB and KB are 1024
bytes in iozone; ``ops/sec`` (with ``-O``) is an operation rate.
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


def looks_like(text: str) -> bool:
    return "Children see throughput for" in text


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
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
