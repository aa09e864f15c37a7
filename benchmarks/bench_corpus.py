"""Read every IOR and mdtest output of the public IO500 archive and check what was read.

Not part of the test run: it needs the corpus (``../shared/corpus/io500`` beside the
repository, or ``--corpus``), about 5,300 files of which about 1,330 are IOR outputs
(IOR 3.1 to 4.1).  For each IOR output (a file with an ``IOR-<version>: MPI Coordinated
Test`` line) it reports, per IOR version:

* ``read``: :func:`simfs.ingest.read_file` returned its measurements;
* ``wrong``: a bandwidth read from a results row falls outside the ``Min(MiB)`` to
  ``Max(MiB)`` of the file's own ``Summary of all tests`` row for that access (checked
  with a separate reader here, not the parser's; rows print fewer digits, so 0.1% slack);
* files without a summary table (IOR 3.4 and 4.1 as the IO500 runs them) are checked
  another way: the rows read
  must be, in order, the bandwidths of the file's results rows as this script finds them,
  and each of those must agree within 1% with the bytes moved (``Using actual aggregate
  bytes moved`` or ``aggregate filesize``) over the row's ``total(s)``, which is how IOR
  computes it; a file that fails this is ``wrong`` too;
* ``refused``: the reader raised, with the reason counted.

For each mdtest output (a ``mdtest-<version> was launched`` line and a ``SUMMARY`` table),
per mdtest version: ``read`` when the rates read are, in order, every rate row of the
file's rate tables (``SUMMARY rate``, or ``SUMMARY:`` in mdtest 1.9.3; never ``SUMMARY
time``) whose numbers are not all zero, each mean inside its row's min and max, and the
``(stonewall)`` rows' means; else ``wrong``.  A file with IOR output in it as well (the
IO500 harness's whole log) is counted as IOR.

IO500 harness results (``result_summary.txt``, ``result.txt``, the bash harness's
``io-500-summary.*.txt`` log): read or refused per kind; where a folder has both a
``result_summary.txt`` and a ``result.txt`` of the same run, every phase's value must
agree between the two (0.1%: the two print different digits), else ``wrong``.

Target (issue 19): at least 99% read, none wrong.  Usage::

    python benchmarks/bench_corpus.py [--corpus PATH] [--show-refused N]
"""

from __future__ import annotations

import collections
import re
import sys
import warnings
from pathlib import Path

from corpus_args import corpus_found, corpus_parser

from simfs.ingest import read_file
from simfs.ingest.common import MIB, IngestError
from simfs.ingest.measurements import Measurement

VERSION = re.compile(r"^IOR-(\S+?):? MPI Coordinated Test", re.M)
MDTEST_VERSION = re.compile(r"^mdtest-(\S+) was launched with", re.M)
# Written apart from the parser's pattern on purpose: a shared mistake would pass.
RATE_TABLES = ("SUMMARY rate: (of ", "SUMMARY rate (in ops/sec): (of ", "SUMMARY: (of ")
RATE_ROW = re.compile(r"^\s+([A-Za-z][A-Za-z ]+?)\s*:?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
STONEWALL_ROW = re.compile(r"^\s+([A-Za-z][A-Za-z ]+?) \(stonewall\)\s*:?\s+NA\s+NA\s+([\d.]+)\s+NA\s*$")
SUMMARY_ROW = re.compile(r"^(write|read)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s")
SLACK = 1e-3
ROW = re.compile(r"^(write|read)\s+([\d.]+)\s+(?:[\d.]+\s+){5,7}([\d.]+)\s+\d+\s*$")
MOVED = re.compile(r"^WARNING: Using actual aggregate bytes moved = (\d+)")
AGGREGATE = re.compile(r"^aggregate filesize\s*:\s*([\d.]+) (bytes|KiB|MiB|GiB|TiB|PiB)\s*$")
UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}


def rows_and_rates(text: str) -> list[tuple[str, float, float]]:
    """Each results row as (access, bw MiB/s, bytes moved / total(s) in MiB/s)."""
    found = []
    aggregate = moved = None
    for line in text.splitlines():
        if (match := AGGREGATE.match(line)) is not None:
            aggregate = float(match[1]) * UNITS[match[2]]
            moved = None
        elif (match := MOVED.match(line)) is not None:
            moved = float(match[1])
        elif (match := ROW.match(line)) is not None and aggregate is not None:
            found.append((match[1], float(match[2]), (moved or aggregate) / MIB / float(match[3])))
            moved = None
    return found


def read_or_refusal(path: Path) -> list[Measurement] | str:
    """What simfs reads from ``path``, or ``refused: <why>`` (quoted values elided, so
    that the same refusal counts once)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_file(path)
    except IngestError as exc:
        reason = str(exc).removeprefix(f"{path}").lstrip(":0123456789 ")
        return "refused: " + re.sub(r"'[^']*'", "'...'", reason)[:90]


def summary_bounds(text: str) -> dict[str, list[tuple[float, float]]]:
    """Per access, the (min, max) MiB/s of each row of every ``Summary of all tests``."""
    bounds: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    in_summary = False
    for line in text.splitlines():
        if line.startswith("Summary of all tests:"):
            in_summary = True
            continue
        if in_summary:
            if line.startswith("Finished") or line.startswith("IOR-"):
                in_summary = False
                continue
            match = SUMMARY_ROW.match(line)
            if match:
                bounds[match[1]].append((float(match[3]), float(match[2])))
    return bounds


def check(path: Path, text: str) -> str:
    """``read``, ``wrong: ...`` or ``refused: <reason>`` for one IOR output."""
    measurements = read_or_refusal(path)
    if isinstance(measurements, str):
        return measurements
    bounds = summary_bounds(text)
    if not bounds:  # IOR 3.4 and 4.1 as the IO500 runs them (-q): no summary table
        read = [(m.phase, m.value / MIB) for m in measurements if m.metric == "agg_bw"]
        rows = rows_and_rates(text)
        if [(access, bw) for access, bw, _ in rows] != read:
            return f"wrong: rows read {read[:3]} are not the file's rows {[r[:2] for r in rows[:3]]}"
        for access, bw, rate in rows:
            if abs(bw / rate - 1) > 0.01:
                return f"wrong: {access} {bw} MiB/s but bytes over total(s) give {rate:.2f}"
        return "read"
    for measurement in measurements:
        if measurement.metric != "agg_bw":
            continue
        mib = measurement.value / MIB
        rows = bounds.get(measurement.phase, [])
        if not any(low * (1 - SLACK) <= mib <= high * (1 + SLACK) for low, high in rows):
            return f"wrong: {measurement.source} {measurement.phase} {mib:.2f} MiB/s not in the summary {rows}"
    return "read"


def mdtest_rates(text: str) -> list[tuple[float, float, float]] | None:
    """(min, mean, max) of each non-zero rate row, in file order; None if a mean is out
    of its row's range.  A stonewall row's min and max are its mean."""
    rates: list[tuple[float, float, float]] = []
    in_table = False
    for line in text.splitlines():
        if line.startswith(RATE_TABLES):
            in_table = True
            continue
        if line.startswith(("SUMMARY", "-- finished")):
            in_table = False
            continue
        if not in_table:
            continue
        if (match := STONEWALL_ROW.match(line)) is not None:
            rates.append((float(match[2]),) * 3)
        elif (match := RATE_ROW.match(line)) is not None:
            high, low, mean = float(match[2]), float(match[3]), float(match[4])
            if high or low or mean:
                if not low <= mean <= high:
                    return None
                rates.append((low, mean, high))
    return rates


def check_mdtest(path: Path, text: str) -> str:
    measurements = read_or_refusal(path)
    if isinstance(measurements, str):
        return measurements
    rates = mdtest_rates(text)
    read = [m.value for m in measurements]
    if rates is None or [mean for _, mean, _ in rates] != read:
        return f"wrong: read {read[:4]}, the file's rate rows {rates[:4] if rates else rates}"
    return "read"


def report(title: str, counts: dict[str, collections.Counter], reasons: collections.Counter, listed: list[str]) -> None:
    total: collections.Counter = collections.Counter()
    print(f"| {title} version | files | read and checked | wrong | refused |")
    print("|---|---:|---:|---:|---:|")
    for version in sorted(counts):
        c = counts[version]
        total.update(c)
        files = sum(c.values())
        print(f"| {version} | {files} | {c['read']} | {c['wrong']} | {c['refused']} |")
    files = sum(total.values())
    read = total["read"]
    print(f"| all | {files} | {read} | {total['wrong']} | {total['refused']} |")
    print(f"\n{title}: read {read} of {files} ({100 * read / max(files, 1):.1f}%), {total['wrong']} wrong")
    for reason, count in reasons.most_common(10):
        print(f"  {count} x {reason}")
    for line in listed:
        print(f"  e.g. {line}")
    print()


def io500_kind(path: Path) -> str | None:
    if path.name in ("result_summary.txt", "result.txt"):
        return path.name
    if path.name.startswith("io-500-summary") and path.suffix == ".txt":
        return "io-500-summary.*.txt"
    return None


def check_io500(paths: list[Path]) -> tuple[dict[str, collections.Counter], collections.Counter]:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter = collections.Counter()
    values: dict[Path, dict[str, dict[str, float]]] = collections.defaultdict(dict)
    for path in paths:
        kind = io500_kind(path)
        measurements = read_or_refusal(path)
        if isinstance(measurements, str):
            counts[kind]["refused"] += 1
            reasons[measurements] += 1
            continue
        counts[kind]["read"] += 1
        values[path.parent][path.name] = {m.phase: m.value for m in measurements if m.metric != "score"}
    for folder, by_name in values.items():
        if len(by_name) < 2 or "result.txt" not in by_name or "result_summary.txt" not in by_name:
            continue
        ini, summary = by_name["result.txt"], by_name["result_summary.txt"]
        agree = set(ini) == set(summary) and all(abs(ini[p] / summary[p] - 1) <= SLACK for p in ini)
        counts["result.txt"]["pairs agreeing" if agree else "wrong"] += 1
        if not agree:
            reasons[f"result.txt and result_summary.txt disagree in {folder}"] += 1
    return counts, reasons


def main() -> int:
    parser = corpus_parser(__doc__, "io500")
    parser.add_argument("--show-refused", type=int, default=5, metavar="N", help="list up to N refused files")
    args = parser.parse_args()
    if not corpus_found(args.corpus):
        return 2
    tools = {"IOR": (VERSION, check), "mdtest": (MDTEST_VERSION, check_mdtest)}
    counts = {tool: collections.defaultdict(collections.Counter) for tool in tools}
    reasons = {tool: collections.Counter() for tool in tools}
    listed: dict[str, list[str]] = {tool: [] for tool in tools}
    for path in sorted(p for p in args.corpus.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        for tool, (version_line, checker) in tools.items():
            version = version_line.search(text)
            if version is None:
                continue
            outcome = checker(path, text)
            kind = outcome.split(":")[0]
            counts[tool][version[1]][kind] += 1
            if kind != "read":
                reasons[tool][outcome] += 1
                if len(listed[tool]) < args.show_refused:
                    listed[tool].append(f"{path.relative_to(args.corpus)}: {outcome}")
            break  # the IO500 harness's whole log has both; its IOR parts are what it reads
    for tool in tools:
        report(tool, counts[tool], reasons[tool], listed[tool])
    harness = sorted(p for p in args.corpus.rglob("*") if p.is_file() and io500_kind(p))
    io500_counts, io500_reasons = check_io500(harness)
    print("| IO500 harness file | read | refused | result.txt = result_summary.txt | wrong |")
    print("|---|---:|---:|---:|---:|")
    for kind, c in sorted(io500_counts.items()):
        print(f"| {kind} | {c['read']} | {c['refused']} | {c['pairs agreeing'] or ''} | {c['wrong']} |")
    for reason, count in io500_reasons.most_common(10):
        print(f"  {count} x {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
