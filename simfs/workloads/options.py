"""Option values shared by the workload parsers: sizes with k/m/g/t suffixes and counts,
each failure a WorkloadError naming the tool and the option as the user wrote it."""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.units import parse_ior_size


def parse_size(tool: str, shown: str, text: str, *, allow_zero: bool = False) -> int:
    """``text`` as bytes (``4k``, ``1m``, ``4096``); ``shown`` is the option as written
    (``"-t 4q"``, ``"rsz=4q"``)."""
    try:
        size = parse_ior_size(text)
    except ValueError as exc:
        raise WorkloadError(f"{tool}: {shown}: {exc}") from None
    if size < 0 or (size == 0 and not allow_zero):
        raise WorkloadError(f"{tool}: {shown}: expected a {'non-negative' if allow_zero else 'positive'} size")
    return size


def parse_count(tool: str, shown: str, text: str) -> int:
    """``text`` as a positive integer."""
    if not text.isdigit() or int(text) < 1:
        raise WorkloadError(f"{tool}: {shown}: expected a positive integer")
    return int(text)
