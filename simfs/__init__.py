"""simfs: a discrete-event simulator of cluster file systems.

The API mirrors the ``simfs`` command: :func:`simulate` one configuration, :func:`repeat`
it over seeds for its spread, :func:`sweep` over settings, :func:`load_system` to inspect
a profile, :func:`parse_workload` to see what a command line means.
"""

from simfs.api import load_system, load_workload, repeat, simulate, sweep
from simfs.errors import SimfsError
from simfs.experiment import Experiment
from simfs.results import Result
from simfs.workloads import parse_workload

__version__ = "0.1.0"

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
