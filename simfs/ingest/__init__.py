"""Ingest measured results into one Measurements table (see ``measurements.py``).

``read_measurements(path)`` reads a file or a folder.  The format of each file is
recognised from its content; ``manifest.toml`` in a folder adds what files do not say
about themselves (``context.py``).  Every data line must parse: a line that does not is
an error naming the file and line, never a silent skip.  Every value must be one a
measurement can have (finite, above zero).  In a folder, a file that does not read is
left out with a warning naming it and why (``strict``: an error); a file named directly
must read.  Text results are read up to :data:`MAX_TEXT_BYTES`.
"""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from simfs.ingest import (
    bonnie,
    darshan_log,
    dd,
    elbencho,
    fio,
    fio_text,
    io500,
    ior,
    iozone,
    mdtest,
    obdfilter,
    published,
    simfs_run,
)
from simfs.ingest.common import MAX_TEXT_BYTES, IngestError, SkippedFileWarning, fail, file_kind, positive, read_text
from simfs.ingest.context import MANIFEST, FileContext, context_for, read_manifest
from simfs.ingest.measurements import COLUMNS, Measurement, settings_of, to_frame

Parser = Callable[[str, str, FileContext], list[Measurement]]

# Order matters: the more specific signatures first.
FORMATS: list[tuple[str, Callable[[str], bool], Parser]] = [
    ("published", published.looks_like, published.parse),
    ("simfs-run", simfs_run.looks_like, simfs_run.parse),
    ("fio", fio.looks_like, fio.parse),
    ("fio-text", fio_text.looks_like, fio_text.parse),
    ("elbencho", elbencho.looks_like, elbencho.parse),
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
    """The measurements of one results file (an :class:`IngestError` naming the file,
    and the line where there is one, if it cannot be read)."""
    path = Path(path)
    context = context or FileContext()
    _check_regular(path)
    if path.suffix == ".darshan":
        measurements = darshan_log.parse_file(str(path), context)
    else:
        text = read_text(path)
        if not text.strip():
            raise fail(str(path), None, "empty file")
        name = detect_format(text)
        if name is None and (why := io500.not_results(text)):
            raise fail(str(path), None, why)
        if name is None:
            raise fail(
                str(path),
                None,
                "unrecognised format (expected output of dd, IOR, mdtest, fio, elbencho, a simfs run record, obdfilter-survey, bonnie++, iozone, IO500, a Darshan log, or the published-results CSV)",
            )
        parser = next(p for n, _, p in FORMATS if n == name)
        measurements = parser(text, str(path), context)
    for measurement in measurements:
        # The parsers check each value where they read it; this is the net under them,
        # so that no reader can hand a calibration a value that is not a measurement.
        positive(measurement.value, measurement.source, None, f"{measurement.phase} {measurement.metric}")
    return measurements


def read_measurements(path: str | Path, *, strict: bool = False) -> pd.DataFrame:
    """The Measurements table of a file, or of every results file in a folder (recursively).

    A file named directly must read.  In a folder, a file that cannot be read (not a
    regular file, not UTF-8, too large, an unknown format, a line that does not parse) is
    left out with a :class:`SkippedFileWarning` naming it and why, and the others are
    read; with ``strict``, the first such file is an error instead.  A folder where no
    file reads is an error.  ``manifest.toml`` errors always are: every file of its
    folder depends on it."""
    path = Path(path)
    info = _stat(path)
    if not stat.S_ISDIR(info.st_mode):
        _check_regular(path)  # before the manifest: /dev/null's folder is no measurement folder
        contexts = read_manifest(path.parent)
        return to_frame(read_file(path, context_for(contexts, path.name)))
    measurements: list[Measurement] = []
    folders, skipped = _walk(path, strict)
    for folder, files in folders:
        contexts = read_manifest(folder)
        for file in files:
            try:
                measurements += read_file(file, context_for(contexts, file.name))
            except IngestError as exc:
                if strict:
                    raise
                skipped += 1
                warnings.warn(f"{exc} (skipped)", SkippedFileWarning, stacklevel=2)
    if not measurements:
        if skipped:
            raise IngestError(f"{path}: no measurement file could be read ({skipped} skipped: see the warnings)")
        raise IngestError(f"{path}: no measurement files found")
    return to_frame(measurements)


def _stat(path: Path) -> os.stat_result:
    """``os.stat`` (following links) without opening: a FIFO is never opened, so never waited on."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise IngestError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})") from None


def _check_regular(path: Path) -> None:
    mode = _stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise fail(str(path), None, "is a directory, not a results file")
    if not stat.S_ISREG(mode):
        raise fail(str(path), None, f"not a regular file ({file_kind(mode)}): expected a results file")


def _walk(root: Path, strict: bool) -> tuple[list[tuple[Path, list[Path]]], int]:
    """Each folder under ``root`` (itself included) with its candidate results files,
    sorted, and the number of subfolders left out because they cannot be listed (each
    with a warning; an error with ``strict``).  Documentation, manifests and hidden
    entries are not results and are passed over silently.  A folder reached twice
    through links is walked once."""
    found: list[tuple[Path, list[Path]]] = []
    seen: set[tuple[int, int]] = set()
    skipped = 0

    def problem(message: str) -> None:
        nonlocal skipped
        if strict:
            raise IngestError(message)
        skipped += 1
        warnings.warn(f"{message} (skipped)", SkippedFileWarning, stacklevel=4)

    def visit(folder: Path) -> None:
        try:
            info = os.stat(folder)
            if (info.st_dev, info.st_ino) in seen:
                return
            seen.add((info.st_dev, info.st_ino))
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:
            if folder == root:  # the folder the user named: nothing to fall back on
                raise IngestError(f"{folder}: cannot list the folder ({exc.strerror})") from None
            problem(f"{folder}: cannot list the folder ({exc.strerror})")
            return
        files: list[Path] = []
        folders: list[Path] = []
        for entry in entries:
            child = Path(entry.path)
            if entry.name.startswith("."):
                continue
            if _is_dir(entry):
                folders.append(child)
            elif entry.name not in _SKIP and child.suffix != ".md":
                # Anything else is a candidate, a FIFO or a dangling link included:
                # read_file refuses it in its turn, so that strict stops at the first
                # bad file in reading order.
                files.append(child)
        found.append((folder, files))
        for sub in folders:
            visit(sub)

    visit(root)
    return sorted(found), skipped


def _is_dir(entry: os.DirEntry) -> bool:
    """Through a link too; False for a dangling link or one that cannot be looked at
    (read_file then says why)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


__all__ = [
    "COLUMNS",
    "FORMATS",
    "IngestError",
    "MAX_TEXT_BYTES",
    "Measurement",
    "detect_format",
    "read_file",
    "read_measurements",
    "SkippedFileWarning",
    "settings_of",
    "to_frame",
]
