"""elbencho results: the ``--resfile`` text and the ``--csvfile`` CSV (elbencho 2.x).

Text::

    COMMAND LINE: "/path/elbencho" "--hosts" "cgpu03,cgpu04," "--threads" "4" ... "--write" ...

    OPERATION RESULT TYPE        FIRST DONE  LAST DONE
    ========= ================   ==========  =========
    WRITE     Elapsed ms       :      45248      45252
              IOPS             :       3486       3514
              Throughput MiB/s :       3486       3514

Per operation, the ``LAST DONE`` column: the whole run's amount over the time until the
last worker finished, elbencho's makespan aggregate (``FIRST DONE`` is the rate while
every worker was still running).  ``WRITE``/``READ`` give ``agg_bw`` (``Throughput
MiB/s``) and ``iops``; operations on entries (``MKDIRS``, ``DELFILES``, a ``WRITE`` of many
small files) give ``ops_rate`` from their ``Dirs/s`` or ``Files/s`` line.  ``SYNC`` and
``DROPCACHES`` move nothing: no row.  ``nodes`` is the number of ``--hosts`` (1 without),
``ppn`` is ``--threads``; ``workload`` is the elbencho command line, which simfs does not
simulate.  A result file a run appended to holds several runs: each is read with its own
command line.  The CSV (``--csvfile``) gives the same numbers from its ``[last]``
columns, with elbencho's version.  The live CSV (``--livecsv``: samples taken during a
run) is refused: it is not a result.
"""

from __future__ import annotations

import csv
import io
import re
import shlex

from simfs.ingest.common import MIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_RESULT_LINE = re.compile(r"^(?:([A-Z][A-Z_]*)\s+)?\s*(\S.*?)\s*:\s+(\S+)\s+(\S+)\s*$")
_CSV_HEADER = "ISO date,label,path type,"
_LIVE_HEADER = "Label,Phase,RuntimeMS,Rank,"
_NO_DATA = {"SYNC", "DROPCACHES"}
_ENTRY_RATES = {"Dirs/s", "Files/s", "Entries/s"}


def looks_like(text: str) -> bool:
    head = text.lstrip()[:2000]
    return (
        ("COMMAND LINE:" in head and "elbencho" in head and "OPERATION RESULT TYPE" in text)
        or head.startswith(_CSV_HEADER)
        or head.startswith(_LIVE_HEADER)
    )


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    head = text.lstrip()
    if head.startswith(_LIVE_HEADER):
        raise fail(
            origin,
            1,
            "elbencho live statistics (--livecsv): samples taken during a run, not its result; "
            "read its --resfile or --csvfile",
        )
    if head.startswith(_CSV_HEADER):
        return _parse_csv(text, origin, context)
    return _parse_text(text, origin, context)


def _command(words: list[str]) -> tuple[str, int, int | None]:
    """``(workload, nodes, threads)`` from elbencho's command line as a list of words."""
    if words:
        words = ["elbencho", *words[1:]]
    options = dict(zip(words, words[1:]))
    hosts = [h for h in re.split(r"[,\s]+", options.get("--hosts", "")) if h]
    threads = options.get("--threads", "")
    return " ".join(shlex.quote(w) for w in words), len(hosts) or 1, int(threads) if threads.isdigit() else None


def _measurement(origin, line, op, metric, value, workload, nodes, threads, context, version="") -> Measurement:
    return Measurement(
        source=f"{origin}:{line}",
        tool="elbencho",
        tool_version=version,
        phase=op.lower(),
        metric=metric,
        value=value,
        **context.fields(workload=workload, nodes=nodes, ppn=threads),
    )


def _parse_text(text: str, origin: str, context: FileContext) -> list[Measurement]:
    measurements: list[Measurement] = []
    workload, nodes, threads = context.workload, context.nodes or 1, context.ppn
    op = ""
    in_table = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if line.startswith("COMMAND LINE:"):
            try:
                words = shlex.split(line.partition(":")[2])
            except ValueError as exc:
                raise fail(origin, number, f"COMMAND LINE: {exc}") from None
            workload, nodes, threads = _command(words)
            in_table = False
            continue
        if line.startswith("OPERATION RESULT TYPE"):
            in_table = True
            continue
        if not in_table or not line.strip() or line.startswith(("===", "---")):
            continue
        match = _RESULT_LINE.match(line)
        if not match:
            raise fail(origin, number, f"not an elbencho result line: {line[:80]!r}")
        op = match[1] or op
        kind, last = match[2], match[4]
        if op in _NO_DATA:
            continue
        if kind == "Throughput MiB/s":
            value = positive_number(last, origin, number, f"{op} {kind}") * MIB
            measurements.append(_measurement(origin, number, op, "agg_bw", value, workload, nodes, threads, context))
        elif kind == "IOPS":
            value = positive_number(last, origin, number, f"{op} {kind}")
            measurements.append(_measurement(origin, number, op, "iops", value, workload, nodes, threads, context))
        elif kind in _ENTRY_RATES:
            value = positive_number(last, origin, number, f"{op} {kind}")
            measurements.append(_measurement(origin, number, op, "ops_rate", value, workload, nodes, threads, context))
    if not measurements:
        raise fail(origin, None, "no elbencho results (an OPERATION table with a rate in its LAST DONE column)")
    return measurements


def _parse_csv(text: str, origin: str, context: FileContext) -> list[Measurement]:
    rows = list(csv.reader(io.StringIO(text.lstrip())))
    header = rows[0]
    needed = ["operation", "hosts", "threads", "MiB/s [last]", "IOPS [last]", "entries/s [last]", "command"]
    missing = [column for column in needed if column not in header]
    if missing:
        raise fail(origin, 1, f"elbencho CSV without {', '.join(missing)}")
    measurements = []
    for number, fields in enumerate(rows[1:], start=2):
        if not fields:
            continue
        if len(fields) != len(header):
            raise fail(origin, number, f"{len(fields)} fields, the header has {len(header)}")
        row = dict(zip(header, fields))
        op = row["operation"]
        if op in _NO_DATA:
            continue
        try:
            words = shlex.split(row["command"])
        except ValueError as exc:
            raise fail(origin, number, f"command: {exc}") from None
        workload, nodes, threads = _command(words)
        # The CSV gives the host count itself; its --hosts list may be space-separated.
        if row["hosts"].isdigit():
            nodes = int(row["hosts"])
        if row["threads"].isdigit():
            threads = int(row["threads"])
        version = row.get("version", "")
        for column, metric, scale in (
            ("MiB/s [last]", "agg_bw", MIB),
            ("IOPS [last]", "iops", 1),
            ("entries/s [last]", "ops_rate", 1),
        ):
            if row[column]:
                value = positive_number(row[column], origin, number, f"{op} {column}") * scale
                measurements.append(
                    _measurement(origin, number, op, metric, value, workload, nodes, threads, context, version)
                )
    if not measurements:
        raise fail(origin, None, "no elbencho results (no row with a rate in its [last] columns)")
    return measurements
