"""Sets of byte ranges: the dirty and cached extents of a client's pages in one object."""

from __future__ import annotations

import bisect
from collections.abc import Iterator


class IntervalSet:
    """Disjoint half-open byte ranges ``[start, end)``, kept sorted and merged.

    Operations cost ``O(log n + k)`` for ``k`` ranges touched; the ranges a client holds
    dirty in one object are few (its records since the last flush), so this stays cheap.
    """

    __slots__ = ("_starts", "_ends", "_total")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._total = 0

    @property
    def total(self) -> int:
        """Bytes covered."""
        return self._total

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(zip(self._starts, self._ends))

    def add(self, start: int, end: int) -> None:
        """Cover ``[start, end)`` (merging with the ranges it touches)."""
        if end <= start:
            return
        starts, ends = self._starts, self._ends
        # First range that ends at or after start, last that starts at or before end.
        first = bisect.bisect_left(ends, start)
        last = bisect.bisect_right(starts, end)
        if first < last:
            start = min(start, starts[first])
            end = max(end, ends[last - 1])
            self._total -= sum(e - s for s, e in zip(starts[first:last], ends[first:last]))
        starts[first:last] = [start]
        ends[first:last] = [end]
        self._total += end - start

    def remove(self, start: int, end: int) -> int:
        """Uncover ``[start, end)``; return the bytes removed."""
        if end <= start:
            return 0
        starts, ends = self._starts, self._ends
        first = bisect.bisect_right(ends, start)
        last = bisect.bisect_left(starts, end)
        if first >= last:
            return 0
        keep_starts: list[int] = []
        keep_ends: list[int] = []
        removed = 0
        for s, e in zip(starts[first:last], ends[first:last]):
            removed += min(e, end) - max(s, start)
            if s < start:
                keep_starts.append(s)
                keep_ends.append(start)
            if e > end:
                keep_starts.append(end)
                keep_ends.append(e)
        starts[first:last] = keep_starts
        ends[first:last] = keep_ends
        self._total -= removed
        return removed

    def within(self, start: int, end: int) -> list[tuple[int, int]]:
        """The covered pieces of ``[start, end)``, in order."""
        starts, ends = self._starts, self._ends
        first = bisect.bisect_right(ends, start)
        last = bisect.bisect_left(starts, end)
        return [(max(s, start), min(e, end)) for s, e in zip(starts[first:last], ends[first:last])]

    def covers(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` is covered entirely."""
        index = bisect.bisect_right(self._starts, start) - 1
        return index >= 0 and self._ends[index] >= end

    def intersects(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self._ends, start)
        return index < len(self._starts) and self._starts[index] < end

    def first(self) -> tuple[int, int]:
        return self._starts[0], self._ends[0]

    def clear(self) -> None:
        self._starts.clear()
        self._ends.clear()
        self._total = 0
