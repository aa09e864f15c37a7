"""simfs: a discrete-event simulator of cluster file systems.

The API mirrors the ``simfs`` command: :func:`simulate` one configuration, :func:`repeat`
it over seeds for its spread, :func:`sweep` over settings, :func:`load_system` to inspect
a profile, :func:`parse_workload` to see what a command line means.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from simfs.errors import SimfsError

__version__ = "0.1.0"

# The public names load their modules on first use (PEP 562): numpy, scipy and pandas
# cost about a second of start-up, which `simfs --help` and `simfs systems` never need.
_LAZY = {
    "Experiment": "simfs.experiment",
    "Result": "simfs.results",
    "load_system": "simfs.api",
    "load_workload": "simfs.api",
    "parse_workload": "simfs.workloads",
    "repeat": "simfs.api",
    "simulate": "simfs.api",
    "sweep": "simfs.api",
}

if TYPE_CHECKING:
    from simfs.api import load_system, load_workload, repeat, simulate, sweep
    from simfs.experiment import Experiment
    from simfs.results import Result
    from simfs.workloads import parse_workload


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'simfs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "Experiment",
    "Result",
    "SimfsError",
    "__version__",
    "load_system",
    "load_workload",
    "parse_workload",
    "repeat",
    "simulate",
    "sweep",
]
