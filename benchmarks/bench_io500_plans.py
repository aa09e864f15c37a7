"""Read every IO500 configuration of the public archive as a workload, and check the
commands simfs builds from it against the ones the harness ran.

Not part of the test run: it needs the corpus (``../shared/corpus/io500`` beside the
repository, or ``--corpus``).  For each C-harness ``config.ini`` (``config-orig.ini`` and
other copies are not what the harness read) it reports whether
:func:`simfs.workloads.io500.read_io500_config` reads it, and, where its folder keeps the
``result.txt`` of that run, compares each phase simfs would simulate with the ``exe`` line
of the same phase there, both parsed by :func:`simfs.workloads.parse_workload`: ``same``
when the phases are equal (paths, seeds and output options do not count), ``differs``
otherwise, ``refused alike`` when both commands are refused.  The same for the bash
harness's ``io500.sh`` (:func:`simfs.workloads.io500.parse_io500_script`) against the
``[Exec]`` lines of the harness's log (``io-500-summary.*.txt``) in its folder.

Usage::

    python benchmarks/bench_io500_plans.py [--corpus PATH]
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

from corpus_args import corpus_found, corpus_parser

from simfs.errors import SimfsError
from simfs.ingest.io500 import _command as harness_command
from simfs.workloads import parse_workload
from simfs.workloads.io500 import Io500Plan, parse_io500_script, read_io500_config

SECTION = re.compile(r"^\[([\w-]+)\]\s*$")
EXE = re.compile(r"^exe\s*=\s*(.*?)\s*$")
STARTING = re.compile(r"^\[Starting\] (\w+)")
EXEC = re.compile(r"^\[Exec\] (.*?)\s*$")


def ran_in_result_txt(path: Path) -> dict[str, str]:
    """Phase name -> the command its ``exe`` line records."""
    ran, section = {}, ""
    for line in path.read_text(errors="replace").splitlines():
        if match := SECTION.match(line.strip()):
            section = match[1]
        elif (match := EXE.match(line.strip())) and section:
            ran[section] = harness_command(match[1])
    return ran


def ran_in_bash_log(path: Path) -> dict[str, str]:
    """Phase name (``ior-easy-write``) -> the command its ``[Exec]`` line records."""
    ran, phase = {}, ""
    for line in path.read_text(errors="replace").splitlines():
        if match := STARTING.match(line):
            phase = match[1].replace("_", "-").replace("mdtest-easy-delete", "mdtest-easy-delete")
        elif (match := EXEC.match(line)) and phase:
            ran[phase] = harness_command(match[1])
            phase = ""
    return ran


def compare(plan: Io500Plan, ran: dict[str, str], counts: collections.Counter, reasons: collections.Counter) -> None:
    for phase in plan.phases:
        if phase.name not in ran:
            continue
        outcomes = []
        for command in (phase.command, ran[phase.name]):
            try:
                outcomes.append(parse_workload(command).phases)
            except SimfsError as exc:
                outcomes.append(re.sub(r"\d[\d,]*", "#", str(exc))[:100])
        planned, recorded = outcomes
        if isinstance(planned, str) and isinstance(recorded, str):
            counts["refused alike"] += 1
            reasons[recorded] += 1
        elif planned == recorded:
            counts["same"] += 1
        else:
            counts["differs"] += 1
            reasons[f"{phase.name} differs"] += 1


def main() -> int:
    parser = corpus_parser(__doc__, "io500")
    args = parser.parse_args()
    if not corpus_found(args.corpus):
        return 2
    for kind in ("config.ini", "io500.sh"):
        files = collections.Counter()
        phases: collections.Counter = collections.Counter()
        reasons: collections.Counter = collections.Counter()
        pattern = "config.ini" if kind == "config.ini" else "io500*.sh"
        for path in sorted(args.corpus.rglob(pattern)):
            try:
                if kind == "config.ini":
                    plan = read_io500_config(path)
                else:
                    plan = parse_io500_script(path.read_text(errors="replace"), str(path))
            except SimfsError as exc:
                files["refused"] += 1
                reasons[re.sub(r"^io500: [^:]*: ", "", str(exc))[:90]] += 1
                continue
            files["read"] += 1
            if kind == "config.ini":
                records = [path.parent / "result.txt"]
                ran = ran_in_result_txt(records[0]) if records[0].is_file() else {}
            else:
                ran = {}
                for log in sorted(path.parent.rglob("io-500-summary*.txt")):
                    ran.update(ran_in_bash_log(log))
            compare(plan, ran, phases, reasons)
        print(f"{kind}: {files['read']} read, {files['refused']} refused of {sum(files.values())}")
        print(
            f"  phases against the harness's record: {phases['same']} the same, "
            f"{phases['refused alike']} refused alike, {phases['differs']} differ"
        )
        for reason, count in reasons.most_common(8):
            print(f"    {count} x {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
