"""The simulation clock's resolution, which every part that schedules by computed delays
must respect.

SimPy's clock is a float.  Late in a long simulated run (days, as with a mistyped rate
of 150 B/s) a delay computed as "finish minus now" can be smaller than the clock can
represent at ``now``: the wake-up lands at ``now`` again, nothing has advanced, and the
same wake-up is scheduled forever.  Anything that would finish within the resolution
counts as finished, and no computed delay is shorter than it.
"""

from __future__ import annotations

import math


def clock_resolution(now: float) -> float:
    """The smallest delay that still moves a float clock standing at ``now``."""
    return 4.0 * math.ulp(max(now, 1.0))
