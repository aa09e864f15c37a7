"""The numbers the docs quote from their own ``$ simfs ...`` examples are what those
commands print.

A page states each quoted number as an HTML comment on a line of its own (invisible when
rendered), after the paragraph that quotes it::

    <!-- check: command 1 | nodes=64, oss.count=8 | write | agg_bw_Bps = 2.55e9 ± 0.005e9 -->

The four ``|``-separated fields are:

* the command: ``command N`` is the page's N-th ``$ simfs`` line (counting from 1, in the
  order of the page); ``command N + ARGS`` appends ARGS to it and ``command N - ARGS``
  removes the argument sequence ARGS from it (for variants the prose describes in words);
* the row: ``column=value`` settings of the tidy CSV output, comma-separated (``-`` when
  the command prints a single row per phase);
* the phase (``write``, ``read``, ...; the CSV ``phase`` column);
* ``column = expected``: a number with ``± tolerance``, absolute (``± 0.005e9``, half the
  last digit the prose gives) or relative (``± 1%``); or a word, compared exactly
  (``bottleneck = controller``).

Each command runs once, in-process, with ``--format csv`` (and ``--no-progress`` for
sweeps).  A check whose row, phase or column does not exist fails.  A check written
``<!-- check slow: ... -->`` runs in the slow suite (``pytest -m slow``, which ``.ci/run``
runs too): for commands of a minute or more, which would break the default run's budget.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_docs import ROOT, example_group, run_example, simfs_lines

PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md")])
CHECK = re.compile(r"^<!-- check( slow)?: (.*?) -->\s*$", re.MULTILINE)
#: Anything that looks like a check, so that a misspelt one is an error, not skipped.
LOOSE = re.compile(r"<!--\s*check", re.IGNORECASE)
COMMAND = re.compile(r"^command (\d+)(?: ([+-]) (.+))?$")
EXPECT = re.compile(r"^([\w.]+) = (\S+)(?: ± (\S+?)(%)?)?$")
#: How many checks the pages hold; lower it only when the prose stops quoting a number.
MIN_CHECKS = {
    "README.md": 4,
    "docs/background/controller-cache.md": 12,
    "docs/background/crtdc-datasheet-vs-seed.md": 25,
    "docs/background/extent-locks.md": 31,
    "docs/background/hdd-seek-thrashing.md": 8,
    "docs/background/mds-directory.md": 50,
    "docs/background/mechanisms.md": 4,
    "docs/background/oss-threads-and-readahead.md": 25,
    "docs/background/phase-interference.md": 11,
    "docs/background/raid-parity.md": 16,
    "docs/background/ssd.md": 13,
    "docs/background/tcp-incast.md": 5,
    "docs/guides/gpfs.md": 27,
    "docs/guides/testbed.md": 8,
    "docs/guides/what-if.md": 134,
    "docs/tutorial.md": 16,
}


@dataclass(frozen=True)
class Check:
    page: Path
    text: str
    argv: tuple[str, ...]
    row: tuple[tuple[str, str], ...]
    phase: str
    column: str
    expected: str
    tolerance: str | None
    relative: bool
    slow: bool = False

    @property
    def id(self) -> str:
        return f"{self.page.name}: {self.text}"


def command_argv(page: Path, spec: str) -> tuple[str, ...]:
    match = COMMAND.match(spec)
    if not match:
        raise ValueError(f"{page}: command field {spec!r} is not 'command N [+|- ARGS]'")
    lines = simfs_lines(page)
    number = int(match.group(1))
    if not 1 <= number <= len(lines):
        raise ValueError(f"{page}: 'command {number}' but the page has {len(lines)} simfs commands")
    argv = shlex.split(lines[number - 1])[1:]
    if match.group(2) == "+":
        argv += shlex.split(match.group(3))
    elif match.group(2) == "-":
        drop = shlex.split(match.group(3))
        starts = [i for i in range(len(argv)) if argv[i : i + len(drop)] == drop]
        if not starts:
            raise ValueError(f"{page}: command {number} has no {' '.join(drop)!r} to remove")
        argv = argv[: starts[0]] + argv[starts[0] + len(drop) :]
    return tuple(argv)


def parse(page: Path, text: str, slow: bool = False) -> Check:
    fields = [field.strip() for field in text.split("|")]
    if len(fields) != 4:
        raise ValueError(f"{page}: check {text!r} needs 4 fields: command | row | phase | column = value")
    spec, row, phase, expect = fields
    settings = []
    if row != "-":
        for setting in row.split(","):
            column, sep, value = setting.strip().partition("=")
            if not sep:
                raise ValueError(f"{page}: row setting {setting!r} in {text!r} is not column=value")
            settings.append((column.strip(), value.strip()))
    match = EXPECT.match(expect)
    if not match:
        raise ValueError(f"{page}: {expect!r} in {text!r} is not 'column = value [± tolerance[%]]'")
    column, expected, tolerance, percent = match.groups()
    return Check(
        page, text, command_argv(page, spec), tuple(settings), phase, column, expected, tolerance, bool(percent), slow
    )


def checks(page: Path) -> list[Check]:
    text = page.read_text()
    found = CHECK.findall(text)
    if len(found) != len(LOOSE.findall(text)):
        raise ValueError(f"{page}: a check comment is not on a line of its own as '<!-- check: ... -->'")
    return [parse(page, check, slow=bool(slow)) for slow, check in found]


ALL = [check for page in PAGES for check in checks(page)]


def same(cell: str, wanted: str) -> bool:
    if cell.lower() == wanted.lower():
        return True
    try:
        return math.isclose(float(cell), float(wanted), rel_tol=1e-9)
    except ValueError:
        return False


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(
            check,
            marks=[*([pytest.mark.slow] if check.slow else []), pytest.mark.xdist_group(example_group(check.argv))],
        )
        for check in ALL
    ],
    ids=lambda c: c.id,
)
def test_quoted_number_matches_the_command(check, tmp_path, monkeypatch):
    frame = run_example(check.argv, tmp_path, monkeypatch).frame
    where = f"{check.page.relative_to(ROOT)}: {check.text}\n  simfs {shlex.join(check.argv)}"
    missing = [c for c in ["phase", check.column, *(c for c, _ in check.row)] if c not in frame.columns]
    assert not missing, f"{where}\n  no column(s) {missing} in the output: {list(frame.columns)}"
    selected = frame[frame["phase"] == check.phase]
    for column, value in check.row:
        selected = selected[[same(cell, value) for cell in selected[column]]]
    assert len(selected) == 1, f"{where}\n  selects {len(selected)} rows, not 1, of:\n{frame.iloc[:, :12]}"
    actual = selected[check.column].iloc[0]
    if check.tolerance is None:
        assert same(actual, check.expected), f"{where}\n  the command prints {actual!r}"
        return
    expected, tolerance = float(check.expected), float(check.tolerance)
    if check.relative:
        tolerance = abs(expected) * tolerance / 100
    assert abs(float(actual) - expected) <= tolerance * (1 + 1e-9), (
        f"{where}\n  the command prints {float(actual):.6g}, outside {expected:g} ± {tolerance:g}"
    )


def test_every_example_group_is_one_xdist_reads_whole():
    # xdist takes the group from the test id after its last "@", and only where no "]"
    # follows; a group that broke that rule would scatter its tests over the workers.
    groups = {example_group(check.argv) for check in ALL}
    assert groups and all("@" not in group and "]" not in group for group in groups)
    assert len(groups) == len({check.argv for check in ALL})


@pytest.mark.parametrize("page, minimum", sorted(MIN_CHECKS.items()))
def test_pages_keep_their_checks(page, minimum):
    assert len(checks(ROOT / page)) >= minimum, f"{page} lost checks of its quoted numbers"


@pytest.mark.xdist_group(example_group(command_argv(ROOT / "docs/guides/what-if.md", "command 2")))
def test_a_check_naming_no_row_or_column_fails(tmp_path, monkeypatch):
    page = ROOT / "docs/guides/what-if.md"
    no_row = parse(page, "command 2 | nodes=999 | write | agg_bw_Bps = 1e9 ± 1%")
    with pytest.raises(AssertionError, match="selects 0 rows"):
        test_quoted_number_matches_the_command(no_row, tmp_path, monkeypatch)
    no_column = parse(page, "command 2 | - | write | no_such_Bps = 1e9 ± 1%")
    with pytest.raises(AssertionError, match="no column"):
        test_quoted_number_matches_the_command(no_column, tmp_path, monkeypatch)
