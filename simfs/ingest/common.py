"""Helpers shared by the parsers: located errors and numbers."""

from __future__ import annotations

from simfs.errors import SimfsError

MIB = 1 << 20
KIB = 1 << 10
GIB = 1 << 30


class IngestError(SimfsError):
    """A results file that does not parse; the message names file and line."""


def fail(origin: str, line: int | None, message: str) -> IngestError:
    where = f"{origin}:{line}" if line else origin
    return IngestError(f"{where}: {message}")


def number(text: str, origin: str, line: int, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise fail(origin, line, f"{what}: expected a number, got {text!r}") from None
