"""IO500 ``result_summary.txt``::

    IO500 version io500-isc24_v1 (standard)
    [RESULT]       ior-easy-write        3.421534 GiB/s : time 312.006 seconds
    [RESULT]    mdtest-easy-write       21.548770 kIOPS : time 305.171 seconds
    [      ]            timestamp        0.000000 kIOPS : time 0.000 seconds
    [SCORE ] Bandwidth 1.218402 GiB/s : IOPS 17.341120 kiops : TOTAL 4.596609

(format of io500 ``src/main.c``).  ``ior-*`` phases give ``agg_bw``, the others
``ops_rate``; the score line gives ``score`` entries (``[SCOREX]``, the extended score,
as ``bandwidth-extended``, ``iops-extended``, ``total-extended``).  A ``[      ]`` line is
a phase run but left out of the score (``mdworkbench-create``, extended phases): read
like the others, except the ``timestamp`` phase's zero.  The bash harness before it (2017
to 2020, ``io500.sh``) wrote::

    [RESULT] BW   phase 1            ior_easy_write              114.583 GiB/s : time 461.11 seconds
    [RESULT] IOPS phase 1         mdtest_easy_write             4386.200 kiops : time 305.97 seconds
    [SCORE] Bandwidth 108.188 GiB/s : IOPS 2668.57 kiops : TOTAL 537.315

with phase names in snake case (read here as ``ior-easy-write``) and, until 2019, ``GB/s``
for what is GiB/s: the harness divided IOR's ``Max Write`` MiB/s by 1024 (checked on the
archive: 218.322 "GB/s" beside ``Max Write: 223562.21 MiB/sec``).  Its whole log
(``io-500-summary.*.txt``: settings, ``[Exec]`` command lines, ``[RESULT]`` lines) is read
the same way, each result with the command line the harness ran for it.  The C harness's
``result.txt`` (an INI file: a section per phase with ``score``, ``exe`` and
``t_delta``, ``[SCORE]`` with ``BW``, ``MD``, ``SCORE``) gives the same measurements with
each phase's command line.  Its ``throughput-stonewall`` and ``rate-stonewall`` are not
read: their unit is not stated and is not the score's (42,271.79 beside a 101.04 GiB/s
score in io500-isc20, 403.55 beside 352.80 in io500-isc24).  ``[SCORE-invalid]`` (the
bash harness) and ``; ERROR INVALID`` (``result.txt``) mark every value invalid.  A phase marked ``[INVALID]`` is
kept but its uncertainty is infinite, so a calibrator gives it no weight; an
``[INVALID]`` value of zero (a phase that failed) gives no row.  Any other value must be
above zero.
"""

from __future__ import annotations

import math
import re

from simfs.ingest.common import GIB, fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_RESULT = re.compile(
    r"^\[(RESULT|      )\]\s+(\S+)\s+([\d.]+)\s+(GiB/s|kIOPS)\s+: time ([\d.]+) seconds( \[INVALID\])?$"
)
_OLD_RESULT = re.compile(
    r"^\[(RESULT)\] (?:BW|IOPS)\s+phase \d+\s+(\S+)\s+([\d.]+) (GiB/s|GB/s|kiops) : time\s+([\d.]+) seconds"
    r"( \[INVALID\])?\s*$"
)
# ``[SCOREX]``: the extended score of an "extended" run; ``[SCORE-invalid]``: the bash harness.
_SCORE = re.compile(
    r"^\[SCORE(?P<kind> ?|-invalid|X)\] Bandwidth (?P<bandwidth>[\d.]+) Gi?B/s : IOPS (?P<iops>[\d.]+) kiops : "
    r"TOTAL (?P<total>[\d.]+)(?P<invalid> \[INVALID\])?\s*$"
)
_LOG_START = "Running the IO500 Benchmark now"


def looks_like(text: str) -> bool:
    return (
        text.lstrip().startswith("IO500 version")
        or "[RESULT]" in text[:2000]
        or _LOG_START in text
        or looks_like_ini(text)
    )


def looks_like_ini(text: str) -> bool:
    return re.search(r"^\[(ior|mdtest)-easy-write\]\s*$", text, re.M) is not None and "\nscore " in text


def not_results(text: str) -> str:
    """Why an IO500 file that is not results is not read ("" for any other text): a
    ``config.ini`` is a workload, a ``*.stonewall`` file the harness's bookkeeping."""
    if re.search(r"^\[(global|ior-easy|mdtest-easy|debug)\]\s*$", text, re.M) and not looks_like_ini(text):
        return 'an IO500 configuration, not results (a workload: simfs simulate --workload "io500 FILE")'
    if re.fullmatch(r"\s*\d+\s*", text):
        return "a number alone: an IO500 stonewall count file (bookkeeping), not results"
    return ""


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    if looks_like_ini(text):
        return _parse_ini(text, origin, context)
    measurements = []
    # "IO500 version io500-isc24_v1 (standard)"; the bash harness does not say.
    stated = re.search(r"^IO500 version (\S+)", text, re.M)
    common = _common(context, stated[1] if stated else "")
    # The harness's whole log: settings and progress lines around the results; only
    # ``[RESULT]`` and ``[SCORE]`` lines are data there, and each must parse.
    log = _LOG_START in text
    command = ""
    # After "[Summary]" the log prints result_summary.txt, which the harness appends to:
    # it can hold earlier runs' results (and scores) too.  The run's own results come
    # before it; its score is the last score line.
    recap = False
    last_score = max((n for n, line in enumerate(text.splitlines(), start=1) if _SCORE.match(line)), default=0)
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.startswith("IO500 version"):
            continue
        if log and line.startswith("[Exec] "):
            command = _command(line.removeprefix("[Exec] "))
        if log and line.startswith("[Summary]"):
            recap = True
        result = _RESULT.match(line) or _OLD_RESULT.match(line)
        score = _SCORE.match(line)
        if result:
            if result[1] != "RESULT" and _is_zero(result[3]):
                continue  # the timestamp "phase": nothing measured
            # Other "[      ]" lines are phases run but left out of the score (the
            # extended ones, mdworkbench-create): measured all the same.
            bandwidth = result[4] in ("GiB/s", "GB/s")
            if result[6] and _is_zero(result[3]):
                continue  # a failed phase: no measurement, and no weight if it were one
            phase = result[2].replace("_", "-")
            if recap:
                continue
            value = positive_number(result[3], origin, number_, result[2]) * (GIB if bandwidth else 1000.0)
            measurements.append(
                Measurement(
                    source=f"{origin}:{number_}",
                    phase=phase,
                    metric="agg_bw" if bandwidth else "ops_rate",
                    value=value,
                    workload=command or f"io500 {phase}",
                    uncertainty=math.inf if result[6] else context.uncertainty,
                    **common,
                )
            )
            command = ""
        elif score:
            if log and number_ != last_score:
                continue
            invalid = score["kind"] == "-invalid" or bool(score["invalid"])
            suffix = "-extended" if score["kind"] == "X" else ""
            for name in ("bandwidth", "iops", "total"):
                if not (invalid and _is_zero(score[name])):
                    measurements.append(_score(origin, number_, name + suffix, score[name], invalid, common))
        elif not log or line.startswith(("[RESULT]", "[SCORE")):
            raise fail(origin, number_, f"not an IO500 result_summary line: {line[:80]!r}")
    if not measurements:
        raise fail(origin, None, "no IO500 [RESULT] lines (a run that did not finish, or not a results file)")
    return measurements


def _common(context: FileContext, version: str) -> dict:
    return dict(
        tool="io500",
        tool_version=version,
        nodes=context.nodes,
        ppn=context.ppn,
        settings=dict(context.settings),
        system=context.system,
    )


def _score(origin: str, line: int, phase: str, text: str, invalid: bool, common: dict) -> Measurement:
    """One part of the IO500 score; an invalid run's has no weight in a fit."""
    return Measurement(
        source=f"{origin}:{line}",
        phase=phase,
        metric="score",
        value=positive_number(text, origin, line, f"{phase} score"),
        workload="io500 score",
        uncertainty=math.inf if invalid else math.nan,
        **common,
    )


def _is_zero(text: str) -> bool:
    try:
        return float(text) == 0.0
    except ValueError:
        return False


def _command(exe: str) -> str:
    """The benchmark's own command line from what the harness ran: the launcher
    (``mpirun -np 544 ...``) and the binary's path left out."""
    words = exe.split()
    for position, word in enumerate(words):
        name = word.rsplit("/", 1)[-1]
        if name in ("ior", "mdtest", "pfind", "md-workbench", "find"):
            return " ".join([name, *words[position + 1 :]])
    return " ".join(words)


_INI_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_INI_VALUE = re.compile(r"^([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")


def _parse_ini(text: str, origin: str, context: FileContext) -> list[Measurement]:
    """The C harness's ``result.txt``: one section per phase."""
    # io500-isc20 writes the run's keys before any section: an implicit [run].
    sections: list[tuple[str, int, dict[str, tuple[int, str]], bool]] = [("run", 0, {}, False)]
    for number_, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(";"):
            # "; ERROR INVALID stonewall-time < 30s": in [run] the whole run, else the phase.
            if "INVALID" in line and sections:
                name, start, values, _ = sections[-1]
                sections[-1] = (name, start, values, True)
            continue
        section = _INI_SECTION.match(line)
        if section:
            sections.append((section[1], number_, {}, False))
            continue
        value = _INI_VALUE.match(line)
        if not value:
            raise fail(
                origin, number_, f"not an IO500 result.txt line (expected [section] or key = value): {line[:80]!r}"
            )
        sections[-1][2][value[1]] = (number_, value[2])
    run_invalid = any(invalid for name, _, _, invalid in sections if name == "run")
    version = next((values["version"][1] for name, _, values, _ in sections if "version" in values), "")
    common = _common(context, version)
    measurements = []
    for name, _, values, invalid in sections:
        if name in ("run", "timestamp"):
            continue
        uncertainty = math.inf if (invalid or run_invalid) else context.uncertainty
        if name == "SCORE":
            for key, phase in (("BW", "bandwidth"), ("MD", "iops"), ("SCORE", "total")):
                if key in values:
                    line, text_value = values[key]
                    measurements.append(_score(origin, line, phase, text_value, invalid or run_invalid, common))
            continue
        bandwidth = name.startswith("ior-")
        command = _command(values["exe"][1]) if "exe" in values else f"io500 {name}"
        if "score" in values:
            line, text_value = values["score"]
            if _is_zero(text_value) and uncertainty == math.inf:
                continue  # a failed phase of an invalid run
            measurements.append(
                Measurement(
                    source=f"{origin}:{line}",
                    phase=name,
                    metric="agg_bw" if bandwidth else "ops_rate",
                    value=positive_number(text_value, origin, line, f"{name}.score") * (GIB if bandwidth else 1000.0),
                    workload=command,
                    uncertainty=uncertainty,
                    **common,
                )
            )
    if not measurements:
        raise fail(origin, None, "an IO500 result.txt without any phase score")
    return measurements
