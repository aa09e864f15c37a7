"""Every image the docs show, what draws it, and the numbers it draws.

An image ``img/NAME.png`` shown on a page is drawn either by one of the page's own
``$ simfs`` examples (its ``--plot NAME.png`` or ``--timeline NAME.png``) or by a script
in the same ``img/`` folder (``IMAGE = ...``, with ``data()`` and ``draw()``).  Beside
each image sits ``img/NAME.csv``: the numbers it draws, as the same command writes them
for ``--plot NAME.csv`` (``--timeline NAME.csv``), or as the script's ``data()`` returns
them.  ``tests/test_docs_images.py`` and ``tests/test_docs.py`` recompute those numbers
and fail when a committed image is stale; PNG bytes are not compared, because they change
with the matplotlib version pip installs.

Regenerate every image and its numbers (or only those named), from the repository root::

    python docs/images.py
    python docs/images.py extent-locks-lfs3.png
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md")])
#: The repository's folders that page examples name by relative paths (a profile, a case,
#: a sample log), seen from the scratch folder the examples run in.
DATA_FOLDERS = ("calibration", "validation", "tests")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
SHOWN = re.compile(r"!\[[^\]]*\]\((img/[^)\s]+)\)")
#: Options of ``simfs simulate`` / ``sweep`` that draw a figure and, for ``.csv``, write
#: the numbers drawn.
DRAWING_OPTIONS = ("--plot", "--timeline")
#: Numbers are compared to this relative precision: far below any change a model makes,
#: above the last-bit differences between numpy and BLAS builds.
RELATIVE_PRECISION = 1e-6


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(page.read_text()) if lang == language]


def console_examples(page: Path) -> list[tuple[str, list[str]]]:
    """The page's ``$ simfs ...`` examples in order (without the ``$ ``), each with the
    output the page shows under it (the lines up to the next ``$``; often none)."""
    examples: list[tuple[str, list[str]]] = []
    for body in blocks(page, "console"):
        shown: list[str] | None = None
        for line in body.splitlines():
            if line.startswith("$ "):
                shown = None
                if line.startswith("$ simfs "):
                    shown = []
                    examples.append((line[2:], shown))
            elif shown is not None and line.strip():
                shown.append(line)
    return examples


def simfs_lines(page: Path) -> list[str]:
    """The page's ``$ simfs ...`` examples, in order (without the ``$ ``)."""
    return [line for line, _ in console_examples(page)]


@dataclass(frozen=True)
class Image:
    """One image a page shows and what draws it: a page command (``argv``, drawing it
    with ``option``) or a ``script``."""

    page: Path
    path: Path
    argv: tuple[str, ...] | None = None
    option: str | None = None
    script: Path | None = None

    @property
    def numbers(self) -> Path:
        """The committed numbers the image draws."""
        return self.path.with_suffix(".csv")

    @property
    def name(self) -> str:
        return self.path.name


def drawn_by(argv: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """(option, file) for each figure a command line draws."""
    return [(argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i] in DRAWING_OPTIONS]


def _script_for(path: Path) -> Path | None:
    for script in sorted(path.parent.glob("*.py")):
        if f'"{path.name}"' in script.read_text():
            return script
    return None


def images() -> list[Image]:
    """Every image shown on a page, with what draws it (``argv`` and ``script`` both
    ``None`` when nothing does: a test fails on that)."""
    found = []
    for page in PAGES:
        commands = [tuple(shlex.split(line)[1:]) for line in simfs_lines(page)]
        for shown in SHOWN.findall(page.read_text()):
            path = (page.parent / shown).resolve()
            makers = [
                (argv, option) for argv in commands for option, file in drawn_by(argv) if Path(file).name == path.name
            ]
            if makers:
                argv, option = makers[0]
                found.append(Image(page, path, argv=argv, option=option))
            else:
                found.append(Image(page, path, script=_script_for(path)))
    return found


def image_drawn_by(page: Path, argv: list[str] | tuple[str, ...]) -> Image | None:
    """The committed image a page's command draws, if it draws one."""
    for image in images():
        if image.page == page and image.argv == tuple(argv):
            return image
    return None


def with_numbers(image: Image, folder: Path) -> list[str]:
    """The image's command, also writing the numbers it draws into ``folder``."""
    assert image.argv is not None and image.option is not None
    return [*image.argv, image.option, str(folder / image.numbers.name)]


def load_script(script: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_docs_image_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def differences(actual: Path, committed: Path) -> list[str]:
    """How two tables of plotted numbers differ (empty when they agree): same columns
    and rows, words equal, numbers equal to :data:`RELATIVE_PRECISION`."""
    import pandas as pd

    if not committed.exists():
        return [f"{committed} does not exist (python docs/images.py {committed.with_suffix('.png').name})"]
    new, old = (pd.read_csv(path, dtype=str, keep_default_na=False) for path in (actual, committed))
    if list(new.columns) != list(old.columns):
        return [f"columns {list(new.columns)} now, {list(old.columns)} committed"]
    if len(new) != len(old):
        return [f"{len(new)} rows now, {len(old)} committed"]
    found = []
    for column in new.columns:
        for row, (now, then) in enumerate(zip(new[column], old[column])):
            if now == then:
                continue
            try:
                close = math.isclose(float(now), float(then), rel_tol=RELATIVE_PRECISION, abs_tol=1e-12)
            except ValueError:
                close = False
            if not close:
                found.append(f"row {row + 2}, {column}: {now} now, {then} committed")
    return found


@contextlib.contextmanager
def _scratch():
    """A scratch working directory that sees the repository's data folders."""
    with tempfile.TemporaryDirectory() as folder:
        for name in DATA_FOLDERS:
            (Path(folder) / name).symlink_to(ROOT / name)
        previous = Path.cwd()
        os.chdir(folder)
        try:
            yield Path(folder)
        finally:
            os.chdir(previous)


def regenerate(image: Image) -> None:
    """Draw the image and write its numbers, into the page's ``img/`` folder."""
    if image.script is not None:
        module = load_script(image.script)
        numbers = module.data()
        numbers.to_csv(image.numbers, index=False)
        module.draw(numbers, image.path)
        return
    if image.argv is None:
        raise SystemExit(f"{image.page.relative_to(ROOT)}: nothing on the page draws {image.name}")
    from simfs.cli import main

    argv = with_numbers(image, Path("."))
    with _scratch() as folder, open(os.devnull, "w") as quiet:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            failed = main([*argv, "--no-progress"] if argv[0] == "sweep" else argv)
        if failed:
            raise SystemExit(f"simfs {shlex.join(image.argv)} failed")
        shutil.copyfile(folder / Path(dict(drawn_by(image.argv))[image.option]).name, image.path)
        shutil.copyfile(folder / image.numbers.name, image.numbers)


def main(names: list[str]) -> int:
    chosen = [image for image in images() if not names or image.name in names]
    unknown = set(names) - {image.name for image in chosen}
    if unknown:
        print(f"images.py: no page shows {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for image in chosen:
        regenerate(image)
        print(f"wrote {image.path.relative_to(ROOT)} and {image.numbers.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
