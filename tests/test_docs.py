"""Every example in the docs and the README runs: ``python`` blocks are executed (one
namespace per page), ``$ simfs ...`` lines are run through the CLI and must exit 0."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import io
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from simfs.cli import main
from tests.whole_validation import ARGV as WHOLE_VALIDATION
from tests.whole_validation import DATA_FOLDERS as WHOLE_VALIDATION_FOLDERS
from tests.whole_validation import GROUP as WHOLE_VALIDATION_GROUP
from tests.whole_validation import whole_validation

ROOT = Path(__file__).resolve().parent.parent


def _load_images_module():
    """``docs/images.py``: the docs' own list of images and what draws them (a script
    users run, so it lives with the docs, not in the tests)."""
    spec = importlib.util.spec_from_file_location("docs_images", ROOT / "docs" / "images.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


images = _load_images_module()
PAGES = images.PAGES
blocks = images.blocks
simfs_lines = images.simfs_lines


def in_scratch(tmp_path: Path, monkeypatch) -> None:
    """Run examples in a scratch folder that sees the repository's data folders."""
    for name in images.DATA_FOLDERS:
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)


def python_blocks(page: Path) -> list[tuple[str, str | None]]:
    """The page's ``python`` blocks, each with the ``text`` block that follows it directly
    (what the page says it prints), or ``None``."""
    found = list(images.BLOCK.finditer(page.read_text()))
    pairs = []
    for index, block in enumerate(found):
        if block.group(1) != "python":
            continue
        after = found[index + 1] if index + 1 < len(found) else None
        between = page.read_text()[block.end() : after.start()] if after else "x"
        printed = after.group(2) if after and after.group(1) == "text" and not between.strip() else None
        pairs.append((block.group(2), printed))
    return pairs


#: Pages whose python blocks fit a profile (a calibration: 20 s), run in the slow suite
#: with the ``simfs calibrate`` examples.
SLOW_PAGES = {ROOT / "docs" / "guides" / "calibration.md"}


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(page, marks=[pytest.mark.slow] if page in SLOW_PAGES else [])
        for page in PAGES
        if blocks(page, "python")
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_python_examples_run(page, tmp_path, monkeypatch, capsys):
    in_scratch(tmp_path, monkeypatch)
    namespace: dict = {"__name__": "__docs__"}
    for number, (code, printed) in enumerate(python_blocks(page), start=1):
        capsys.readouterr()
        exec(compile(code, str(page), "exec"), namespace)
        if printed is not None:
            # The output the page shows under a block is what the block prints now.
            actual = [line.rstrip() for line in capsys.readouterr().out.strip("\n").splitlines()]
            shown = [line.rstrip() for line in printed.strip("\n").splitlines()]
            assert actual == shown, f"{page.relative_to(ROOT)}: python block {number} now prints:\n" + "\n".join(actual)


COMMANDS = [(page, line) for page in PAGES for line in simfs_lines(page)]
#: The output a page shows under an example, by (page, example).
SHOWN_OUTPUT = {(page, line): shown for page in PAGES for line, shown in images.console_examples(page)}


def shown_output_differs(shown: list[str], printed: str) -> str | None:
    """Why the output a page shows is not what the command printed (``None``: it is).
    The shown lines must appear in the printed output, in order; a line ``...`` stands
    for lines the page leaves out."""
    actual = [line.rstrip() for line in printed.splitlines()]
    position = 0
    skipping = False
    for line in (line.rstrip() for line in shown):
        if line.strip() == "...":
            skipping = True
            continue
        if skipping:
            found = next((i for i in range(position, len(actual)) if actual[i] == line), None)
        else:
            found = position if position < len(actual) and actual[position] == line else None
        if found is None:
            return f"the page shows {line!r}, the command prints:\n" + "\n".join(actual)
        position, skipping = found + 1, False
    return None


#: Examples that run the whole validation or a calibration: minutes each, so they run in
#: the slow suite (``pytest -m slow``, which .ci/run runs too), not the default one.
SLOW = (
    "simfs validate validation/",
    "simfs calibrate ",
    # tcp-incast.md: TCP loss recovery played out at eight points, 44 s.
    'simfs sweep --system crtdc-lfs5 --workload "dd if=f of=/dev/null bs=1M count=2000" --vary stripe_count=1,2,4,8',
)


def example_group(argv) -> str:
    """The xdist group of the tests that need one example's run: ``pytest -n`` sends them
    to one worker, where the run is made once (``EXAMPLES``, ``whole_validation``).  A
    digest of the command line, not the line itself: xdist reads the group after the
    test id's last ``@`` only when no ``]`` follows it, and ``--set x=[0]`` has one."""
    argv = tuple(argv)
    if argv == WHOLE_VALIDATION:
        return WHOLE_VALIDATION_GROUP
    return "example-" + hashlib.sha1(shlex.join(argv).encode()).hexdigest()[:12]


@functools.cache
def _testbed_unavailable(file_system: str) -> str | None:
    from tests.unit.test_testbed import why_no_testbed

    return why_no_testbed(file_system)


#: Examples that use the live testbed (root, /dev/fuse, the file system's packages):
#: skipped, with the reason, where the machine cannot run it.
TESTBED = ("simfs testbed",)


def _marked_commands() -> list:
    """Every console example, marked: slow, or skipped where the live testbed it uses
    cannot run here.  A testbed example needs the file system of the page's last
    ``testbed up`` before it (a ``run`` or ``down`` needs what its ``up`` needed).  Under
    ``pytest -n`` the testbed examples run on one worker, in the page's order, and an
    example run once for several tests is run on the worker of its group."""
    params, current = [], {}
    for page, line in COMMANDS:
        marks = [pytest.mark.slow] if line.startswith(SLOW) else []
        if line.startswith(TESTBED):
            words = line.split()
            if words[2:3] == ["up"] and len(words) > 3:
                current[page] = words[3]
            unavailable = _testbed_unavailable(current.get(page, "moosefs"))
            if unavailable:
                marks.append(pytest.mark.skip(reason=f"testbed: {unavailable}"))
            marks.append(pytest.mark.xdist_group("live-testbed"))
        argv = shlex.split(line)[1:]
        if _as_csv(argv) or tuple(argv) == WHOLE_VALIDATION:
            marks.append(pytest.mark.xdist_group(example_group(argv)))
        params.append(pytest.param(page, line, marks=marks, id=f"{page.name}:{line[:60]}"))
    return params


@dataclass(frozen=True)
class Example:
    """What a ``simulate`` or ``sweep`` example printed as CSV, and, if it draws a
    committed image, how the numbers it draws differ from the committed ones."""

    frame: pd.DataFrame
    stale: tuple[str, ...]


#: Each example's run, by argv: an example runs once per session, for whichever test
#: needs it first (the example tests here, the quoted-number checks of
#: ``tests/test_docs_numbers.py``), which keeps the default run within its budget.
EXAMPLES: dict[tuple[str, ...], Example] = {}
IMAGES = images.images()


def run_example(argv: tuple[str, ...], scratch: Path, monkeypatch) -> Example:
    """Run a ``simulate``/``sweep`` example with ``--format csv`` (and ``--no-progress``
    for sweeps), writing the numbers of the image it draws, if any; exit 0 or fail."""
    if argv not in EXAMPLES:
        in_scratch(scratch, monkeypatch)
        image = next((image for image in IMAGES if image.argv == argv), None)
        full = images.with_numbers(image, scratch) if image else list(argv)
        full += ["--format", "csv"] + (["--no-progress"] if argv[0] == "sweep" else [])
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(full)
        assert code == 0, f"simfs {shlex.join(argv)} failed: {stderr.getvalue()}"
        stale = images.differences(scratch / image.numbers.name, image.numbers) if image else []
        if stale:
            stale = [f"{image.path.relative_to(ROOT)} is stale: python docs/images.py {image.name}", *stale[:10]]
        frame = pd.read_csv(io.StringIO(stdout.getvalue()), dtype=str, keep_default_na=False)
        EXAMPLES[argv] = Example(frame, tuple(stale))
    return EXAMPLES[argv]


def _as_csv(argv: list[str]) -> bool:
    """Whether an example can run as :func:`run_example` runs it: a phase table whose
    printed form the page does not show."""
    return argv[0] in ("simulate", "sweep") and not {"--format", "--per-rank", "--repeats"} & set(argv)


@pytest.mark.parametrize("page, line", _marked_commands())
def test_console_examples_run(page, line, tmp_path, monkeypatch, capsys):
    argv = shlex.split(line)[1:]
    shown = SHOWN_OUTPUT[(page, line)]
    if _as_csv(argv) and not shown:
        # A command that draws a committed image also writes the numbers it draws, which
        # must be the committed ones: the image is not stale.
        stale = run_example(tuple(argv), tmp_path, monkeypatch).stale
        assert not stale, "\n  ".join(stale)
        return
    in_scratch(tmp_path, monkeypatch)
    if shown and shown[0].startswith("simfs: error:"):
        # A refusal the page shows: the exit status for bad input, and that line.
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == "\n".join(shown).strip()
        return
    if argv == ["--help"]:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        return
    assert images.image_drawn_by(page, argv) is None, f"{line}: an example that draws an image shows no output"
    if tuple(argv) == WHOLE_VALIDATION:
        # The same command on the same cases as another page's and the report check's:
        # one run, shared (tests/whole_validation.py).
        run = whole_validation()
        assert run.status == 0, run.stderr
        printed = run.stdout
    else:
        assert main(argv) == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
    if shown:
        why = shown_output_differs(shown, printed)
        assert why is None, f"{page.relative_to(ROOT)}: $ {line}\n  {why}"


def test_the_whole_validation_sees_the_folders_the_examples_see():
    assert WHOLE_VALIDATION_FOLDERS == images.DATA_FOLDERS


def test_the_docs_have_examples():
    assert len(COMMANDS) >= 8
    assert sum(len(blocks(p, "python")) for p in PAGES) >= 8
