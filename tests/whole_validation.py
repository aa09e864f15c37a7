"""The whole validation, run once per test process for every test that needs it.

Three slow tests need ``simfs validate validation/ --report REPORT.md``: the README's
example, docs/guides/validation.md's (the same command) and the check that the committed
``validation/REPORT.md`` is what that command writes.  One run takes about half an hour
of one core (1,653 s on the development VM, 2026-11-29); running the command once and
checking all three against that run keeps the slow suite inside CI's time.  The tests
that share it carry ``xdist_group(GROUP)`` so that ``pytest -n`` sends them to one
worker."""

from __future__ import annotations

import contextlib
import functools
import io
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The command, as the README and docs/guides/validation.md give it (without ``simfs``).
ARGV = ("validate", "validation/", "--report", "REPORT.md")
#: The xdist group of the tests that share the run.
GROUP = "whole-validation"
#: The repository's folders an example sees from its scratch folder, as in the docs
#: examples (docs/images.py ``DATA_FOLDERS``, a script this module does not import).
DATA_FOLDERS = ("calibration", "validation", "tests")


@dataclass(frozen=True)
class WholeValidation:
    """What the command did: its exit status (-1: it raised; the traceback is in
    ``stderr``), what it printed and the report it wrote."""

    status: int
    stdout: str
    stderr: str
    report: str


@functools.cache
def whole_validation() -> WholeValidation:
    """Run the command in a scratch folder that sees the repository's data folders, as
    the docs examples run; the folder is removed afterwards."""
    from simfs.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory(prefix="simfs-whole-validation-") as folder:
        scratch = Path(folder)
        for name in DATA_FOLDERS:
            (scratch / name).symlink_to(ROOT / name)
        with contextlib.chdir(scratch), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                status = main(list(ARGV))
            except Exception:
                # Kept like a failed exit: the next test must not run the half hour again.
                traceback.print_exc()
                status = -1
        report_path = scratch / "REPORT.md"
        report = report_path.read_text() if report_path.exists() else ""
    return WholeValidation(status, stdout.getvalue(), stderr.getvalue(), report)
