"""IOR output: the text report and ``-O summaryFormat=JSON``.

Text (IOR 3.1 to 4.1): the ``Options:`` block gives ``nodes``, ``tasks`` and ``clients per
node`` (IOR 3.1: ``clients = 64 (4 per node)``); each row of the ``Results:`` table is one
iteration of one access (9 columns before IOR 3.3, 11 since)::

    access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter
    ------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----
    write     1387.98    1402.22    0.001426    16384      1024.00    0.000456   0.022821   0.000131   0.023055   0

A file with only the ``Summary of all tests`` table (older runs, ``-q``) gives the mean
over iterations with the standard deviation as uncertainty.  JSON: ``tests[].Results``
(one entry per iteration and access) and ``summary``.  IOR writes log lines into the same
stream as its JSON (e.g. ``Using Time Stamp ... for Data Signature`` at ``-vv``); lines
that are not JSON are dropped before decoding, and whatever remains must decode whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from simfs.ingest.common import MIB, fail, json_positive, non_negative, number, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement
from simfs.units import BINARY_UNITS

_SUMMARY_ROW = re.compile(r"^(write|read)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+")
_JSON_LINE = re.compile(r'^\s*([{}\[\],"]|$)')
_VERSION = re.compile(r"^IOR-(\S+?):? MPI Coordinated Test", re.M)
# IOR 3.3 and later print IOPS and latency; 3.1 and 3.2 do not.  The header says which.
_HEADERS = {
    ("access", "bw(MiB/s)", "IOPS", "Latency(s)", "block(KiB)", "xfer(KiB)", "open(s)", "wr/rd(s)", "close(s)",
     "total(s)", "iter"): 11,
    ("access", "bw(MiB/s)", "block(KiB)", "xfer(KiB)", "open(s)", "wr/rd(s)", "close(s)", "total(s)", "iter"): 9,
}  # fmt: skip
_ACCESS = re.compile(r"^(write|read|remove)\s")
# With -D (stonewalling), rank 0 prints the fewest and most transfers a rank made before
# the deadline (IOR 3.2 and later) and, for reads, the count it was told to reach.
_STONEWALL = re.compile(
    r"^stonewalling pairs accessed min: (\d+) max: (\d+) -- min data: ([\d.]+) GiB mean data: ([\d.]+) GiB "
    r"time: ([\d.]+)s\s*$"
)
_SIZE = re.compile(r"^([\d.]+) (bytes|KiB|MiB|GiB|TiB)$")


def looks_like_text(text: str) -> bool:
    # MPI start-up noise can come first: megabytes of it in some IO500 submissions.
    return _VERSION.search(text) is not None or "\nCommand line        : " in text[:65536]


def looks_like_json(text: str) -> bool:
    head = text.lstrip()[:400]
    return head.startswith("{") and '"Version"' in head and '"tests"' in text


def _workload(command: str) -> str:
    """The IOR command without the binary's path (``/opt/ior/bin/ior -a POSIX`` -> ``ior -a POSIX``)."""
    words = command.split()
    if words and words[0].endswith("ior"):
        words[0] = "ior"
    return " ".join(words)


def parse_text(text: str, origin: str, context: FileContext) -> list[Measurement]:
    """Every results row of every test in the file.

    Inside a results table a line that starts with an access name must be a row of the
    table's layout (or it is an error naming the line); IOR and MPI print their warnings
    into the same stream (``WARNING: Expected aggregate file size``, ``Max Write:``, MPI
    help messages), and those lines are not results.  A ``stonewalling pairs accessed``
    line (``-D``) adds the slowest rank's rate before the deadline, times the number of
    ranks, as ``min_rank_agg_bw``: its transfers times the transfer size over the time.
    """
    lines = text.splitlines()
    info: dict[str, str] = {}
    rows: list[Measurement] = []
    summary: list[Measurement] = []
    state = "header"
    columns = 0
    stonewall: tuple[int, re.Match[str]] | None = None
    for number_, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        version = _VERSION.match(line)
        if version:
            info["version"] = version[1]
        key, sep, value = line.partition(":")
        if sep and state in ("header", "after") and key.strip() in _HEADER_KEYS:
            info[_HEADER_KEYS[key.strip()]] = value.strip()
        old_style = _OLD_HEADER.match(line) if state in ("header", "after") else None
        if old_style:
            _read_old_header(old_style[1], old_style[2].strip(), info)
        if line.startswith("access") and "bw(MiB/s)" in line:
            columns = _HEADERS.get(tuple(line.split()), 0)
            if not columns:
                raise fail(origin, number_, f"unknown IOR results header: {line[:100]!r}")
            state = "results"
            continue
        if line.startswith("Summary of all tests:"):
            state = "summary"
            continue
        if state == "results":
            if not line.strip() or line.startswith("---"):
                if not line.strip() and rows:
                    state = "after"
                continue
            wall = _STONEWALL.match(line)
            if wall:
                stonewall = (number_, wall)
                continue
            if not _ACCESS.match(line):
                continue  # a warning or an MPI message printed into the table
            fields = line.split()
            if len(fields) != columns or not fields[-1].isdigit():
                raise fail(origin, number_, f"not an IOR results row of {columns} columns: {line[:80]!r}")
            if fields[0] == "remove":
                continue  # IOR 4 can time the removal; it moves no data
            rows.append(
                _measurement(
                    origin,
                    number_,
                    fields[0],
                    positive_number(fields[1], origin, number_, "bw(MiB/s)"),
                    context,
                    info,
                    int(fields[-1]),
                )
            )
            if stonewall is not None:
                rows.append(_stonewall_measurement(origin, stonewall, fields[0], context, info))
                stonewall = None
        elif state == "summary":
            if line.startswith("Operation") or not line.strip():
                continue
            if line.startswith("Finished"):
                state = "after"
                continue
            match = _SUMMARY_ROW.match(line)
            if not match:
                raise fail(origin, number_, f"not an IOR summary row: {line[:80]!r}")
            mean = positive_number(match[4], origin, number_, "Mean(MiB)")
            std = non_negative(number(match[5], origin, number_, "StdDev"), origin, number_, "StdDev")
            m = _measurement(origin, number_, match[1], mean, context, info, None)
            m.uncertainty = std / mean
            summary.append(m)
    if "Command line" not in info:
        raise fail(origin, None, "no 'Command line' in the IOR header: not IOR output, or truncated")
    measurements = rows or summary
    if not measurements:
        raise fail(origin, None, "no IOR results rows: the run did not finish or the file is truncated")
    return measurements


# Header lines kept (IOR 3.2 and later: ``key : value``; 3.1 says ``Command line used:``).
_HEADER_KEYS = {
    "Command line": "Command line",
    "Command line used": "Command line",
    "nodes": "nodes",
    "tasks": "tasks",
    "clients per node": "clients per node",
    "xfersize": "xfersize",
}
# IOR 3.1's test summary: tab-indented ``key = value`` (``clients = 64 (1 per node)``).
_OLD_HEADER = re.compile(r"^\t(clients|xfersize)\s*= (.*)$")
_OLD_CLIENTS = re.compile(r"^(\d+) \((\d+) per node\)$")


def _read_old_header(key: str, value: str, info: dict[str, str]) -> None:
    if key == "xfersize":
        info["xfersize"] = value
        return
    clients = _OLD_CLIENTS.match(value)
    if clients:
        info["tasks"] = clients[1]
        info["clients per node"] = clients[2]


def _stonewall_measurement(
    origin: str, stonewall: tuple[int, re.Match[str]], access: str, context: FileContext, info: dict[str, str]
) -> Measurement:
    number_, match = stonewall
    tasks = _text_count(info, "tasks")
    size = _SIZE.match(info.get("xfersize", ""))
    if tasks is None or size is None:
        raise fail(origin, number_, "a stonewalling line without the header's 'tasks' and 'xfersize' to scale it")
    seconds = positive_number(match[5], origin, number_, "stonewalling time")
    slowest_bytes = int(match[1]) * float(size[1]) * BINARY_UNITS[size[2]]
    measurement = _measurement(origin, number_, access, slowest_bytes * tasks / seconds / MIB, context, info, None)
    measurement.metric = "min_rank_agg_bw"
    return measurement


def _json_count(params: dict[str, Any], key: str, origin: str, test: int) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(origin, None, f"tests[{test}].Parameters.{key}: expected a positive integer, got {value!r}")
    return value


def _text_count(info: dict[str, str], key: str) -> int | None:
    # "0" tasks or nodes is what a header says when IOR could not count them: unknown.
    text = info.get(key, "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def _measurement(origin, line, access, bw_mib, context, info, iteration) -> Measurement:
    tasks = _text_count(info, "tasks")
    nodes = _text_count(info, "nodes")
    ppn = _text_count(info, "clients per node")
    # IOR before 3.3 prints tasks and tasks per node but not nodes.
    if nodes is None and tasks and ppn and tasks % ppn == 0:
        nodes = tasks // ppn
    nodes = nodes or context.nodes
    if ppn is None and tasks and nodes:
        ppn = tasks // nodes
    return Measurement(
        source=f"{origin}:{line}",
        tool="ior",
        phase=access,
        metric="agg_bw",
        value=bw_mib * MIB,
        iteration=iteration,
        tool_version=info.get("version", ""),
        **context.fields(workload=_workload(info.get("Command line", context.workload)), nodes=nodes, ppn=ppn),
    )


def parse_json(text: str, origin: str, context: FileContext) -> list[Measurement]:
    kept = [line if _JSON_LINE.match(line) else "" for line in text.splitlines()]
    try:
        document = json.loads("\n".join(kept))
    except json.JSONDecodeError as exc:
        raise fail(origin, exc.lineno, f"truncated or invalid IOR JSON: {exc.msg}") from None
    if not isinstance(document, dict) or "tests" not in document:
        raise fail(origin, None, "IOR JSON without 'tests'")
    command = _workload(str(document.get("Command line", context.workload)))
    tests = document["tests"]
    if not isinstance(tests, list):
        raise fail(origin, None, f"tests: expected a list, got {type(tests).__name__}")
    measurements = []
    for t, test in enumerate(tests):
        if not isinstance(test, dict):
            raise fail(origin, None, f"tests[{t}]: expected an object")
        params = test.get("Parameters", {})
        if not isinstance(params, dict):
            raise fail(origin, None, f"tests[{t}].Parameters: expected an object")
        nodes = _json_count(params, "nodes", origin, t) or context.nodes
        ppn = _json_count(params, "tasksPerNode", origin, t) or context.ppn
        results = test.get("Results", [])
        if not isinstance(results, list):
            raise fail(origin, None, f"tests[{t}].Results: expected a list")
        # Results is a list per iteration of a list per access (IOR 3.3+) or a flat list
        # (older); each entry's path is kept for the error messages.
        flat: list[tuple[str, Any]] = []
        for i, item in enumerate(results):
            if isinstance(item, list):
                flat += [(f"tests[{t}].Results[{i}][{j}]", entry) for j, entry in enumerate(item)]
            else:
                flat.append((f"tests[{t}].Results[{i}]", item))
        iteration = {"write": 0, "read": 0}
        for path, entry in flat:
            if not isinstance(entry, dict):
                raise fail(origin, None, f"{path}: expected an object")
            access = entry.get("access")
            if access not in ("write", "read"):
                continue
            if "bwMiB" not in entry:
                raise fail(origin, None, f"IOR JSON test {test.get('TestID')}: {access} result without bwMiB")
            measurements.append(
                Measurement(
                    source=f"{origin}:test{test.get('TestID', 0)}/{access}/{iteration[access]}",
                    tool="ior",
                    phase=access,
                    metric="agg_bw",
                    value=json_positive(entry["bwMiB"], origin, f"{path}.bwMiB") * MIB,
                    iteration=iteration[access],
                    tool_version=str(document.get("Version", "")),
                    **context.fields(workload=command, nodes=nodes, ppn=ppn),
                )
            )
            iteration[access] += 1
    if not measurements:
        raise fail(origin, None, "IOR JSON has no write or read results")
    return measurements
