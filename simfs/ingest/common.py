"""Helpers shared by the parsers: located errors, numbers, and the checks on measured values."""

from __future__ import annotations

import math
from pathlib import Path

from simfs.errors import SimfsError
from simfs.textinput import file_kind, read_text_file

__all__ = ["file_kind"]  # re-exported: the folder reader names what it skips with it

MIB = 1 << 20
KIB = 1 << 10
GIB = 1 << 30
#: Largest text result read (bytes).  The outputs of IOR, mdtest, fio and the others run
#: from kilobytes to a few megabytes; a file beyond this is not one of them (a trace, a
#: core dump, a data file), and reading it whole would take the memory of a fit.
MAX_TEXT_BYTES = 64 * MIB


class IngestError(SimfsError):
    """A results file that does not parse; the message names file and line."""


class SkippedFileWarning(UserWarning):
    """A file in a measurement folder that could not be read and was left out."""


def fail(origin: str, line: int | None, message: str) -> IngestError:
    where = f"{origin}:{line}" if line else origin
    return IngestError(f"{where}: {message}")


def number(text: str, origin: str, line: int | None, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise fail(origin, line, f"{what}: expected a number, got {text!r}") from None


def positive(value: float, origin: str, line: int | None, what: str) -> float:
    """``value`` if it can be a measured rate, size or time: finite and above zero.

    A tool prints ``nan``, ``inf``, a negative or a zero rate when its clock or its
    counters went wrong (a timer that wrapped, a phase that moved no bytes); such a value
    is not a measurement, and in a fit it becomes a log of a non-positive number."""
    if not math.isfinite(value) or value <= 0:
        raise fail(origin, line, f"{what}: expected a positive finite number, got {value!r}")
    return value


def non_negative(value: float, origin: str, line: int | None, what: str) -> float:
    """``value`` if it can be a spread (a standard deviation): finite and not below zero."""
    if not math.isfinite(value) or value < 0:
        raise fail(origin, line, f"{what}: expected a non-negative finite number, got {value!r}")
    return value


def positive_number(text: str, origin: str, line: int | None, what: str) -> float:
    return positive(number(text, origin, line, what), origin, line, what)


def json_number(value: object, origin: str, path: str) -> float:
    """A number of a JSON document (``path`` says where: ``jobs[0].write.bw_bytes``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(origin, None, f"{path}: expected a number, got {value!r}")
    return float(value)


def json_positive(value: object, origin: str, path: str) -> float:
    return positive(json_number(value, origin, path), origin, None, path)


def read_text(path: Path, hint: str = "; a Darshan log must be named *.darshan") -> str:
    """The file's UTF-8 text, refusing what cannot be a text result (a FIFO, a device,
    more than :data:`MAX_TEXT_BYTES`) without blocking (:mod:`simfs.textinput`).
    ``hint`` ends the message about a file that is not UTF-8."""
    return read_text_file(
        path, what="a results file", kind="a text result", limit_bytes=MAX_TEXT_BYTES, error=IngestError, hint=hint
    )
