"""Lustre obdfilter-survey summary lines (lustre-iokit).

::

    Sun Nov 22 12:00:00 UTC 2026 Obdfilter-survey for case=disk from oss01
    ost  4 sz 134217728K rsz 1024K obj    4 thr 1024 write 3032.89 [ 713.86, 926.89] rewrite 3064.15 [ 722.83, 848.93] read 3944.49 [ 912.83,1112.82]

Optionally prefixed by ``host:`` (pdsh).  The first number after a test is the total
over all OSTs in MiB/s (total KiB / (seconds x 1024)); the bracket is the slowest and
fastest OST.  ``ERROR`` (an OST failed) or ``SHORT`` (a short transfer) in place of the
bracket makes the line an error: its total is not a measurement of a healthy system.
"""

from __future__ import annotations

import re

from simfs.ingest.common import MIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_HEADER = re.compile(r"Obdfilter-survey for case=")
_CONFIG = re.compile(
    r"^(?:(?P<host>[\w.-]+):\s*)?ost\s+(?P<ost>\d+)\s+sz\s+(?P<sz>\d+)K\s+rsz\s+(?P<rsz>\d+)K?\s+"
    r"obj\s+(?P<obj>\d+)\s+thr\s+(?P<thr>\d+)\s*(?P<rest>.*)$"
)
_TEST = re.compile(
    r"(?P<test>write|rewrite|read)\s+(?:(?P<total>[\d.]+)\s+)?"
    r"(?:\[\s*(?P<min>[\d.]+),\s*(?P<max>[\d.]+)\]|(?P<flag>ERROR|SHORT))"
)


def looks_like(text: str) -> bool:
    return any(_CONFIG.match(line.strip()) for line in text.splitlines()[:20])


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements = []
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or _HEADER.search(line):
            continue
        match = _CONFIG.match(line)
        if not match:
            raise fail(origin, number_, f"not an obdfilter-survey line: {line[:80]!r}")
        rest = match["rest"]
        if "Too much buffer space" in rest:
            continue  # the survey skipped this configuration itself
        # The configuration is the workload (simfs.workloads.obdfilter parses it back);
        # only the context's experiment settings ride along.
        settings = dict(context.settings)
        workload = (
            f"obdfilter-survey ost={match['ost']} sz={match['sz']}K rsz={match['rsz']}K "
            f"obj={match['obj']} thr={match['thr']}"
        )
        position = 0
        found = 0
        for test in _TEST.finditer(rest):
            if rest[position : test.start()].strip():
                raise fail(origin, number_, f"unexpected text {rest[position : test.start()].strip()!r}")
            position = test.end()
            found += 1
            if test["flag"]:
                raise fail(
                    origin,
                    number_,
                    f"obdfilter-survey reported {test['flag']} for {test['test']}: not a valid measurement",
                )
            common = dict(
                tool="obdfilter-survey",
                phase=test["test"],
                workload=workload,
                settings=settings,
                system=context.system or (match["host"] or ""),
                uncertainty=context.uncertainty,
                source=f"{origin}:{number_}",
            )
            for metric, key in (("ost_bw", "total"), ("ost_bw_min", "min"), ("ost_bw_max", "max")):
                if test[key] is not None:  # the total is missing in some survey versions
                    value = positive_number(test[key], origin, number_, f"{test['test']} {key}") * MIB
                    measurements.append(Measurement(metric=metric, value=value, **common))
        if rest[position:].strip() or not found:
            raise fail(origin, number_, f"cannot read the test results {rest[position:].strip() or rest!r}")
    if not measurements:
        raise fail(origin, None, "no obdfilter-survey result lines")
    return measurements
