"""File layouts: striping over targets, and the choice of targets for a new file.

A file with stripe count ``c`` and stripe size ``S`` stores byte ``x`` in stripe object
``(x // S) % c`` (Lustre's RAID-0 layout of objects; PanFS's parity groups and CXFS's
XVM stripes are the same arithmetic over blades and LUNs, GPFS's blocks over NSDs with
``S`` the block size).  The metadata service picks the ``c`` targets when the file is
created:

* default (``stripe_offset = -1``): round robin over a list that interleaves targets by
  server, starting at a random position and advancing by ``c`` per file, as Lustre's RR
  allocator does when space is balanced (Lustre Operations Manual, "Managing free space":
  round-robin allocator; lov_qos.c);
* fixed (``stripe_offset = i``): stripes on targets ``i, i+1, ...`` in index order for
  every file (``lfs setstripe -i i``), so all files start on the same target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    """Where one file's stripes live: ``targets[k]`` holds stripe object ``k``."""

    targets: tuple[int, ...]
    stripe_size_bytes: int

    @property
    def stripe_count(self) -> int:
        return len(self.targets)


class TargetAllocator:
    """Chooses targets for new files (one allocator per metadata service, per run).

    Parameters
    ----------
    server_of_target: for each target index, the index of the server that serves it.
    stripe_offset: -1 for round robin from a random start, or a fixed first target.
    rng: the run's random generator (only the random start uses it).
    excluded: targets no new file may use (a failed PanFS blade).
    """

    def __init__(
        self,
        server_of_target: list[int],
        stripe_offset: int,
        rng: np.random.Generator,
        excluded: tuple[int, ...] = (),
    ) -> None:
        usable = [i for i in range(len(server_of_target)) if i not in excluded]
        if not usable:
            raise ValueError("excluded: every target is excluded; no file can be placed")
        if not -1 <= stripe_offset < len(server_of_target) or stripe_offset in excluded:
            raise ValueError(
                f"stripe_offset: expected -1 or a usable target in 0..{len(server_of_target) - 1}, got {stripe_offset}"
            )
        self._target_count = len(usable)
        self._offset = stripe_offset
        # Interleave by server: first target of every server, then the second of every server, ...
        rank_in_server = {
            i: sum(1 for j in usable if j < i and server_of_target[j] == server_of_target[i]) for i in usable
        }
        self._rr_order = sorted(usable, key=lambda i: (rank_in_server[i], server_of_target[i]))
        self._usable = usable  # in index order
        self._next = int(rng.integers(self._target_count)) if stripe_offset == -1 else 0

    @property
    def target_count(self) -> int:
        return self._target_count

    def allocate(self, stripe_count: int, stripe_size_bytes: int) -> Layout:
        if stripe_count == -1:
            stripe_count = self._target_count
        if not 1 <= stripe_count <= self._target_count:
            raise ValueError(
                f"stripe_count: expected 1..{self._target_count} (or -1 for all targets), got {stripe_count}"
            )
        if self._offset >= 0:
            first = self._usable.index(self._offset)
            targets = tuple(self._usable[(first + k) % self._target_count] for k in range(stripe_count))
        else:
            targets = tuple(self._rr_order[(self._next + k) % self._target_count] for k in range(stripe_count))
            self._next = (self._next + stripe_count) % self._target_count
        return Layout(targets, stripe_size_bytes)


def stripe_bytes(offset: int, length: int, stripe_size: int, stripe_count: int) -> np.ndarray:
    """Bytes of ``[offset, offset + length)`` that land in each of the stripe objects."""
    result = np.zeros(stripe_count)
    if length <= 0:
        return result
    first_unit = offset // stripe_size
    last_unit = (offset + length - 1) // stripe_size
    k = np.arange(stripe_count)
    # Units u in [first_unit, last_unit] with u % stripe_count == k.
    units = (last_unit - k) // stripe_count - (first_unit - 1 - k) // stripe_count
    result += units * stripe_size
    result[first_unit % stripe_count] -= offset - first_unit * stripe_size
    result[last_unit % stripe_count] -= (last_unit + 1) * stripe_size - (offset + length)
    return result


def segmented_stripe_bytes(
    first_offset: int, block: int, stride: int, segments: int, stripe_size: int, stripe_count: int
) -> np.ndarray:
    """Bytes per stripe object of ``segments`` blocks at ``first_offset + k * stride``.

    Offsets modulo one stripe cycle repeat with period ``cycle / gcd(stride, cycle)``, so
    only one period is computed however many segments there are.
    """
    cycle = stripe_size * stripe_count
    period = cycle // math.gcd(stride % cycle or cycle, cycle)
    counted = min(segments, period)
    one_pass = np.zeros(stripe_count)
    for seg in range(counted):
        one_pass += stripe_bytes(first_offset + seg * stride, block, stripe_size, stripe_count)
    if segments <= period:
        return one_pass
    full, rest = divmod(segments, period)
    tail = np.zeros(stripe_count)
    for seg in range(rest):
        tail += stripe_bytes(first_offset + seg * stride, block, stripe_size, stripe_count)
    return one_pass * full + tail
