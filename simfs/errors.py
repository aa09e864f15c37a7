"""Errors a user can cause.

Every error that bad input can provoke is a :class:`SimfsError`.  Its message is one line
that names the file, line or field at fault and what was expected, so that the command
line can print it as it is and exit non-zero without a traceback.
"""

from __future__ import annotations

import math
import numbers


class SimfsError(Exception):
    """A problem with the user's input: a profile, a workload, a setting."""


class ProfileError(SimfsError):
    """A system profile is malformed or describes impossible hardware."""


class WorkloadError(SimfsError):
    """A workload command line uses an unknown or unsupported option, or a bad value."""


class ExperimentError(SimfsError):
    """An experiment setting (nodes, processes per node, striping, ...) is invalid."""


class ImplausibleValueWarning(UserWarning):
    """A value that is allowed but unlikely to be meant (a rate of 150 B/s, more
    processes than cores); the ``simfs`` command prints it as one line."""


def check_whole(owner: str, name: str, value: object, minimum: int, error: type[Exception] = ValueError) -> None:
    """``value`` must be a whole number (an integer, not a bool or a float) of at least
    ``minimum``: a fractional or NaN count otherwise ends far from its cause (an
    IndexError in numpy, a loop that never ends)."""
    if type(value) is int and value >= minimum:
        return  # the common case, without the ABC check's cost (a layout per file)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise error(f"{owner}: {name}: expected a whole number of at least {minimum}, got {value!r}")


def check_finite(
    owner: str, name: str, value: object, minimum: float, *, above: bool = False, error: type[Exception] = ValueError
) -> None:
    """``value`` must be a finite real number of at least ``minimum`` (greater than it
    with ``above``); NaN fails, where ``value < minimum`` would let it through."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        ok = False
    else:
        ok = math.isfinite(value) and (value > minimum if above else value >= minimum)
    if not ok:
        bound = f"greater than {minimum:g}" if above else f"of at least {minimum:g}"
        raise error(f"{owner}: {name}: expected a finite number {bound}, got {value!r}")
