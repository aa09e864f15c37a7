"""Helpers shared by the parsers: located errors, numbers, and the checks on measured values."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

from simfs.errors import SimfsError

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


def file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def read_text(path: Path, hint: str = "; a Darshan log must be named *.darshan") -> str:
    """The file's UTF-8 text, refusing what cannot be a text result (a FIFO, a device,
    more than :data:`MAX_TEXT_BYTES`).  Opened without blocking and checked on the open
    descriptor: the path may have become a FIFO since the caller looked at it, and
    reading a FIFO waits for a writer that may never come.  ``hint`` ends the message
    about a file that is not UTF-8."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise fail(str(path), None, f"cannot read ({exc.strerror})") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise fail(str(path), None, f"not a regular file ({file_kind(info.st_mode)}): expected a results file")
        if info.st_size > MAX_TEXT_BYTES:
            raise fail(str(path), None, _too_large(info.st_size))
        try:
            data = handle.read(MAX_TEXT_BYTES + 1)
        except OSError as exc:
            raise fail(str(path), None, f"cannot read ({exc.strerror})") from None
    if len(data) > MAX_TEXT_BYTES:  # it grew while being read
        raise fail(str(path), None, _too_large(len(data)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise fail(str(path), line, f"not UTF-8 text (byte 0x{byte:02x}): not a text result{hint}") from None


def _too_large(size: int) -> str:
    return f"{size} bytes: more than the {MAX_TEXT_BYTES // MIB} MiB limit for a text result"
