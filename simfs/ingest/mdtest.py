"""mdtest's ``SUMMARY rate`` table (mdtest 3.x/4.x)::

    mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)
    Command line used: /usr/bin/mdtest '-n' '200' '-F' '-u' '-i' '2' '-d' '/tmp/mdt'
    SUMMARY rate (in ops/sec): (of 2 iterations)
       Operation                     Max            Min           Mean        Std Dev
       ---------                     ---            ---           ----        -------
       File creation                4687.905       3832.847       4260.376        604.617

Each operation row gives ``ops_rate`` (the mean) with the standard deviation as
uncertainty; ``phase`` is the operation in snake case (``file_creation``).  A row of
zeros is an operation mdtest did not run (older mdtest prints every operation): no
measurement, not a zero.  Any other row with a mean that is not above zero is an error.
"""

from __future__ import annotations

import re

from simfs.ingest.common import fail, non_negative, number, positive
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_LAUNCH = re.compile(r"launched with (\d+) total task\(s\) on (\d+) node\(s\)")
_COLUMNS = ("Max", "Min", "Mean", "Std Dev")
_ROW = re.compile(r"^\s+([A-Za-z][A-Za-z ]+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def looks_like(text: str) -> bool:
    return "SUMMARY rate" in text and "mdtest" in text[:2000]


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    tasks = nodes = None
    command = context.workload
    measurements = []
    in_table = False
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        launch = _LAUNCH.search(line)
        if launch:
            # Zero tasks or nodes is not a count a run can have: unknown, not zero.
            tasks, nodes = int(launch[1]) or None, int(launch[2]) or None
        if line.startswith("Command line used:"):
            words = [w.strip("'") for w in line.split(":", 1)[1].split()]
            words[0] = "mdtest"
            command = " ".join(words)
        if line.startswith("SUMMARY rate"):
            in_table = True
            continue
        if not in_table:
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith(("Operation", "---------")):
            if not stripped and measurements:
                in_table = False
            continue
        if stripped.startswith(("-- finished", "SUMMARY")):
            in_table = False
            continue
        match = _ROW.match(line)
        if not match:
            raise fail(origin, number_, f"not an mdtest SUMMARY row: {stripped[:80]!r}")
        values = [number(match[i], origin, number_, name) for i, name in enumerate(_COLUMNS, start=2)]
        if not any(values):
            continue  # an operation this run did not do
        mean = positive(values[2], origin, number_, "Mean")
        std = non_negative(values[3], origin, number_, "Std Dev")
        measurements.append(
            Measurement(
                source=f"{origin}:{number_}",
                tool="mdtest",
                phase=match[1].strip().lower().replace(" ", "_"),
                metric="ops_rate",
                value=mean,
                **context.fields(
                    workload=command,
                    nodes=nodes,
                    ppn=(tasks // nodes) if tasks and nodes else None,
                    uncertainty=std / mean,
                ),
            )
        )
    if not measurements:
        raise fail(origin, None, "no mdtest 'SUMMARY rate' rows: the run did not finish or the file is truncated")
    return measurements
