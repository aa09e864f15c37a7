"""The CPU time a byte costs on the testbed's machine, fitted from run records.

Every testbed run record carries the busy core-seconds of the whole machine during the
run (``testbed.cpu_busy_s``, from ``/proc/stat``: every daemon, client, rank and the
kernel's network work together).  Over runs that move different amounts, that is::

    busy = fixed + written x (write + (copies - 1) x copy) + read x read_cost

``fixed`` is what a run costs whatever it moves (starting the ranks, opening, the idle
daemons), ``write`` and ``read_cost`` the core-seconds per byte a client writes or reads
with one stored copy, ``copy`` each further copy a chained write stores
(``copies = min(goal, servers)``).  :class:`HostCpuFit` solves it by least squares (four
unknowns: at least four runs of different shapes; write-only and write-read runs of two
sizes on one and two chunkservers identify them), and the profile's ``[host]`` table is
its output (``python -m simfs.testbed.host_cpu calibration/testbed/runs/``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simfs.errors import SimfsError
from simfs.textinput import read_text_file

UNKNOWNS = ("fixed_cpu_s", "write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte")


def measured_testbed(record: dict, origin: str = "record") -> dict:
    """The ``testbed`` part of a run record that succeeded and carries the machine's CPU
    time; anything else is refused in one line naming ``origin``."""
    testbed = record.get("testbed")
    if not isinstance(testbed, dict) or "cpu_busy_s" not in testbed:
        raise SimfsError(f"{origin}: not a testbed run record with CPU time (testbed.cpu_busy_s)")
    if record.get("status") != "ok":
        raise SimfsError(f"{origin}: status {record.get('status')!r}: only runs that succeeded are fitted")
    return testbed


def run_terms(record: dict, origin: str = "record") -> tuple[list[float], float]:
    """One run's row of the least-squares system: (coefficients of the unknowns, busy s)."""
    testbed = measured_testbed(record, origin)
    written = sum(phase["bytes"] for phase in record["phases"] if phase["op"] == "write")
    read = sum(phase["bytes"] for phase in record["phases"] if phase["op"] == "read")
    if not isinstance(testbed.get("goal"), int):
        raise SimfsError(f"{origin}: testbed.goal not recorded (a testbed of an older simfs): the copies are not known")
    copies = min(testbed["goal"], int(testbed["servers"]))
    return [1.0, float(written), float(written * (copies - 1)), float(read)], float(testbed["cpu_busy_s"])


class HostCpuFit:
    """Least-squares CPU costs from testbed run records (scikit-learn style: ``fit``
    returns self and sets the trailing-underscore attributes)."""

    def fit(self, records: Iterable[tuple[str, dict]]) -> HostCpuFit:
        import numpy as np

        rows, busy, names = [], [], []
        for origin, record in records:
            terms, seconds = run_terms(record, origin)
            rows.append(terms)
            busy.append(seconds)
            names.append(origin)
        matrix = np.array(rows)
        if len(rows) < len(UNKNOWNS) or np.linalg.matrix_rank(matrix) < len(UNKNOWNS):
            raise SimfsError(
                f"host CPU fit: {len(rows)} run(s) do not identify {len(UNKNOWNS)} unknowns: give write-only and "
                "write-read runs of two sizes, on one chunkserver and on two with goal 2"
            )
        solution, *_ = np.linalg.lstsq(matrix, np.array(busy), rcond=None)
        if (solution[1:] < 0).any():
            raise SimfsError(
                f"host CPU fit: a negative cost per byte ({dict(zip(UNKNOWNS, solution))}): the runs disagree"
            )
        self.fixed_cpu_s_, self.write_cpu_s_per_byte_, self.copy_cpu_s_per_byte_, self.read_cpu_s_per_byte_ = (
            float(value) for value in solution
        )
        predicted = matrix @ solution
        self.runs_ = names
        self.residuals_ = [float(value) for value in predicted - np.array(busy)]
        self.busy_s_ = busy
        return self

    def table(self) -> str:
        """The profile's ``[host]`` lines (without ``cores``)."""
        return "\n".join(
            [
                f"write_cpu_s_per_byte = {self.write_cpu_s_per_byte_:.3e}",
                f"copy_cpu_s_per_byte = {self.copy_cpu_s_per_byte_:.3e}",
                f"read_cpu_s_per_byte = {self.read_cpu_s_per_byte_:.3e}",
            ]
        )


def read_records(paths: Iterable[str | Path]) -> list[tuple[str, dict]]:
    """Run records from files and folders (``*.json``, in name order)."""
    records = []
    for path in map(Path, paths):
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        if not files:
            raise SimfsError(f"{path}: no run records (*.json)")
        for file in files:
            text = read_text_file(file, what="a run record (JSON)", kind="a run record")
            try:
                records.append((str(file), json.loads(text)))
            except json.JSONDecodeError as error:
                raise SimfsError(f"{file}:{error.lineno}: not a run record: {error.msg}") from None
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", nargs="+", help="testbed run records (files or folders)")
    args = parser.parse_args(argv)
    return 0 if fit_and_print(HostCpuFit(), args.records) is not None else 2


def fit_and_print(estimator: Any, paths: Iterable[str | Path]) -> Any:
    """Fit ``estimator`` to the run records at ``paths`` and print how well it explains
    each run and its profile lines; None, after one line on stderr, where the records
    cannot be read or fitted."""
    try:
        fit = estimator.fit(read_records(paths))
    except SimfsError as error:
        print(f"simfs: {error}", file=sys.stderr)
        return None
    print_runs(fit)
    print(fit.table())
    return fit


def print_runs(fit: Any) -> None:
    """A fit's fixed cost and how well it explains each run's busy time, as comments
    (any fit with ``fixed_cpu_s_``, ``runs_``, ``busy_s_`` and ``residuals_``)."""
    print(f"# fixed cost per {getattr(fit, 'fixed_per_', 'run')}: {fit.fixed_cpu_s_:.3g} core-s")
    for name, busy, residual in zip(fit.runs_, fit.busy_s_, fit.residuals_):
        print(f"# {Path(name).name}: {busy:.3g} {getattr(fit, 'busy_label_', 'core-s busy')}, fit {residual:+.3g}")


if __name__ == "__main__":
    raise SystemExit(main())
