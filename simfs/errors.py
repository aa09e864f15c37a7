"""Errors a user can cause.

Every error that bad input can provoke is a :class:`SimfsError`.  Its message is one line
that names the file, line or field at fault and what was expected, so that the command
line can print it as it is and exit non-zero without a traceback.
"""

from __future__ import annotations


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
