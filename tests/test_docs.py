"""Every example in the docs and the README runs: ``python`` blocks are executed (one
namespace per page), ``$ simfs ...`` lines are run through the CLI and must exit 0."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from simfs.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md")])
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(page.read_text()) if lang == language]


def in_scratch(tmp_path: Path, monkeypatch) -> None:
    """Run examples in a scratch folder that sees the repository's data folders."""
    for name in ("calibration", "validation"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)


def simfs_lines(page: Path) -> list[str]:
    lines = []
    for body in blocks(page, "console"):
        lines += [line[2:] for line in body.splitlines() if line.startswith("$ simfs ")]
    return lines


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page, tmp_path, monkeypatch):
    in_scratch(tmp_path, monkeypatch)
    namespace: dict = {"__name__": "__docs__"}
    for code in blocks(page, "python"):
        exec(compile(code, str(page), "exec"), namespace)


COMMANDS = [(page, line) for page in PAGES for line in simfs_lines(page)]
#: Examples that run the whole validation or a calibration: minutes each, so they run in
#: the slow suite (``pytest -m slow``, which .ci/run runs too), not the default one.
SLOW = ("simfs validate validation/", "simfs calibrate ")


def _marked(page: Path, line: str):
    marks = [pytest.mark.slow] if line.startswith(SLOW) else []
    return pytest.param(page, line, marks=marks, id=f"{page.name}:{line[:60]}")


@pytest.mark.parametrize("page, line", [_marked(page, line) for page, line in COMMANDS])
def test_console_examples_run(page, line, tmp_path, monkeypatch, capsys):
    in_scratch(tmp_path, monkeypatch)
    argv = shlex.split(line)[1:]
    if argv == ["--help"]:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        return
    assert main(argv) == 0, capsys.readouterr().err


def test_the_docs_have_examples():
    assert len(COMMANDS) >= 8
    assert sum(len(blocks(p, "python")) for p in PAGES) >= 8
