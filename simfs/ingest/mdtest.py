"""mdtest's ``SUMMARY rate`` table (mdtest 1.9.3 to 4.1)::

    mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)
    Command line used: /usr/bin/mdtest '-n' '200' '-F' '-u' '-i' '2' '-d' '/tmp/mdt'
    SUMMARY rate (in ops/sec): (of 2 iterations)
       Operation                     Max            Min           Mean        Std Dev
       ---------                     ---            ---           ----        -------
       File creation                4687.905       3832.847       4260.376        604.617

Each operation row gives ``ops_rate`` (the mean) with the standard deviation as
uncertainty where the table is ``of`` two or more iterations; ``phase`` is the operation
in snake case (``file_creation``).  Of one iteration the standard deviation is no
run-to-run spread: mdtest 1.9.3 and 4 print 0, and mdtest 3.x the spread of every
rank's copy of the one rate (``summarize_results`` over ranks and iterations: 0.195 op/s
of 253,930 in DDN's AI400 IO500 run, a relative 8e-7 that would weigh a fit a million
times more than an unstated one), so such a row states no uncertainty.  A row of
zeros is an operation mdtest did not run (older mdtest prints every operation): no
measurement, not a zero.  Any other row with a mean that is not above zero is an error.
mdtest before 3.4 writes ``File creation     :`` (a colon after the name) and 1.9.3 heads
the table ``SUMMARY: (of N iterations)``; the ``SUMMARY time`` table that 3.3 and later add
is not read.  With ``-W`` (stonewall), a ``File create (stonewall)`` row (mean only) is the
rate up to the deadline: ``ops_rate`` of phase ``file_create_stonewall``, kept beside the
phase's own rate.  MPI start-up messages before mdtest's first line are passed over.
"""

from __future__ import annotations

import math
import re

from simfs.ingest.common import fail, non_negative, number, positive
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_LAUNCH = re.compile(r"(?:mdtest-(\S+) was )?launched with (\d+) total task\(s\) on (\d+) node\(s\)")
_COLUMNS = ("Max", "Min", "Mean", "Std Dev")
# mdtest 1.9 to 3.3 put a colon after the operation's name.
_ROW = re.compile(r"^\s+([A-Za-z][A-Za-z ]+?)\s*:?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
# The rate table: ``SUMMARY rate (in ops/sec):`` (3.4, 4.x), ``SUMMARY rate: (of N
# iterations)`` (3.3), ``SUMMARY: (of N iterations)`` (1.9.3).  ``SUMMARY time`` is not rates.
_RATE_TABLE = re.compile(r"^SUMMARY(?: rate(?: \(in ops/sec\))?)?: ", re.M)
# With -W (stonewall), mdtest 3.3 and later add the rate up to the deadline: mean only.
_STONEWALL_ROW = re.compile(r"^\s+([A-Za-z][A-Za-z ]+?) \(stonewall\)\s*:?\s+NA\s+NA\s+([\d.]+)\s+NA\s*$")
_LAUNCHED = re.compile(r"^mdtest-\S+ was launched with", re.M)
_ITERATIONS = re.compile(r"\(of (\d+) iterations?\)")


def looks_like(text: str) -> bool:
    # MPI start-up messages can come before mdtest's first line.
    return _LAUNCHED.search(text) is not None and _RATE_TABLE.search(text) is not None


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    tasks = nodes = None
    version = ""
    command = context.workload
    measurements = []
    in_table = False
    saw_table = False
    spread_stated = True
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        launch = _LAUNCH.search(line)
        if launch:
            # Zero tasks or nodes is not a count a run can have: unknown, not zero.
            tasks, nodes = int(launch[2]) or None, int(launch[3]) or None
            version = launch[1] or ""
        if line.startswith("Command line used:"):
            words = [w.strip("'\"") for w in line.split(":", 1)[1].split()]
            words[0] = "mdtest"
            command = " ".join(words)
        if _RATE_TABLE.match(line):
            in_table = saw_table = True
            iterations = _ITERATIONS.search(line)
            spread_stated = iterations is None or int(iterations[1]) >= 2
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
        # Every rate row of this run shares these.
        run = dict(origin=origin, line=number_, version=version, command=command, tasks=tasks, nodes=nodes)
        stonewall = _STONEWALL_ROW.match(line)
        if stonewall:
            rate = positive(number(stonewall[2], origin, number_, "Mean"), origin, number_, "Mean")
            measurements.append(_rate(stonewall[1], "_stonewall", rate, math.nan, context, **run))
            continue
        match = _ROW.match(line)
        if not match:
            raise fail(origin, number_, f"not an mdtest SUMMARY row: {stripped[:80]!r}")
        values = [number(match[i], origin, number_, name) for i, name in enumerate(_COLUMNS, start=2)]
        if not any(values):
            continue  # an operation this run did not do
        mean = positive(values[2], origin, number_, "Mean")
        std = non_negative(values[3], origin, number_, "Std Dev")
        measurements.append(_rate(match[1], "", mean, std / mean if spread_stated else math.nan, context, **run))
    if not measurements and saw_table:
        raise fail(origin, None, "every rate in the SUMMARY rate table is zero: the run measured no operation")
    if not measurements:
        raise fail(origin, None, "no mdtest 'SUMMARY rate' rows: the run did not finish or the file is truncated")
    return measurements


def _rate(
    operation, suffix, mean, uncertainty, context, *, origin, line, version, command, tasks, nodes
) -> Measurement:
    """One row of the rate table: ``ops_rate`` of phase ``file_creation`` (+ ``suffix``)."""
    return Measurement(
        source=f"{origin}:{line}",
        tool="mdtest",
        tool_version=version,
        phase=operation.strip().lower().replace(" ", "_") + suffix,
        metric="ops_rate",
        value=mean,
        # A row without a spread (the stonewall row, NaN here) keeps the context's.
        **context.fields(
            workload=command,
            nodes=nodes,
            ppn=(tasks // nodes) if tasks and nodes else None,
            uncertainty=None if math.isnan(uncertainty) else uncertainty,
        ),
    )
