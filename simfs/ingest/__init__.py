"""Ingest measured results into one Measurements table (see ``measurements.py``).

``read_measurements(path)`` reads a file or a folder.  The format of each file is
recognised from its content; ``manifest.toml`` in a folder adds what files do not say
about themselves (``context.py``).  Every data line must parse: a line that does not is
an error naming the file and line, never a silent skip.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from simfs.ingest import bonnie, darshan_log, dd, fio, io500, ior, iozone, mdtest, obdfilter, published, simfs_run
from simfs.ingest.common import IngestError, fail
from simfs.ingest.context import MANIFEST, FileContext, context_for, read_manifest
from simfs.ingest.measurements import COLUMNS, Measurement, settings_of, to_frame

Parser = Callable[[str, str, FileContext], list[Measurement]]

# Order matters: the more specific signatures first.
FORMATS: list[tuple[str, Callable[[str], bool], Parser]] = [
    ("published", published.looks_like, published.parse),
    ("simfs-run", simfs_run.looks_like, simfs_run.parse),
    ("fio", fio.looks_like, fio.parse),
    ("ior-json", ior.looks_like_json, ior.parse_json),
    ("ior", ior.looks_like_text, ior.parse_text),
    ("mdtest", mdtest.looks_like, mdtest.parse),
    ("io500", io500.looks_like, io500.parse),
    ("iozone", iozone.looks_like, iozone.parse),
    ("obdfilter-survey", obdfilter.looks_like, obdfilter.parse),
    ("bonnie++", bonnie.looks_like, bonnie.parse),
    ("dd", dd.looks_like, dd.parse),
]
# Documentation and fit reports live beside the data; they are not measurements.
_SKIP = {MANIFEST, "README"}


def detect_format(text: str) -> str | None:
    for name, matches, _ in FORMATS:
        if matches(text):
            return name
    return None


def read_file(path: str | Path, context: FileContext | None = None) -> list[Measurement]:
    path = Path(path)
    context = context or FileContext()
    if path.suffix == ".darshan":
        return darshan_log.parse_file(str(path), context)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise fail(str(path), None, "not a text file (and not a .darshan log)") from None
    except OSError as exc:
        raise fail(str(path), None, f"cannot read ({exc.strerror})") from None
    if not text.strip():
        raise fail(str(path), None, "empty file")
    name = detect_format(text)
    if name is None:
        raise fail(
            str(path),
            None,
            "unrecognised format (expected output of dd, IOR, mdtest, fio, a simfs run record, obdfilter-survey, bonnie++, iozone, IO500, a Darshan log, or the published-results CSV)",
        )
    parser = next(p for n, _, p in FORMATS if n == name)
    return parser(text, str(path), context)


def read_measurements(path: str | Path) -> pd.DataFrame:
    """The Measurements table of a file, or of every results file in a folder (recursively)."""
    path = Path(path)
    if not path.exists():
        raise IngestError(f"{path}: no such file or directory")
    if path.is_file():
        contexts = read_manifest(path.parent)
        return to_frame(read_file(path, context_for(contexts, path.name)))
    measurements: list[Measurement] = []
    for folder in sorted({path, *(p.parent for p in path.rglob("*") if p.is_file())}):
        contexts = read_manifest(folder)
        for file in sorted(folder.iterdir()):
            if file.is_file() and file.name not in _SKIP and file.suffix != ".md" and not file.name.startswith("."):
                measurements += read_file(file, context_for(contexts, file.name))
    if not measurements:
        raise IngestError(f"{path}: no measurement files found")
    return to_frame(measurements)


__all__ = [
    "COLUMNS",
    "FORMATS",
    "IngestError",
    "Measurement",
    "detect_format",
    "read_file",
    "read_measurements",
    "settings_of",
    "to_frame",
]
