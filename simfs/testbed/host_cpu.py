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

Whether a byte costs more on a busy machine is measured apart, from phases of one workload
at several loads (1-8 clients; records with each phase's CPU time):
:class:`BusyGrowthFit`, shared with GlusterFS (``gluster_cpu.py``).  Given
``--load RECORDS``, the main program fits it first and divides each calibration run's
busy time by ``1 + growth x utilisation`` (the profile's ``host.busy_cpu_growth``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from simfs.errors import SimfsError
from simfs.textinput import read_text_file

UNKNOWNS = ("fixed_cpu_s", "write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte")
#: The largest growth the busy-machine fit considers: a byte costing 11 times as much on a
#: busy machine as on an idle one would be another machine.
MAX_GROWTH = 10.0
#: Below this a fitted growth is none (a bounded search does not reach 0 itself).
NO_GROWTH = 1e-3


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


class PhaseCpu(NamedTuple):
    """One phase of a run record and the CPU time the machine spent in it."""

    label: str
    op: str
    bytes: float
    utilisation: float
    busy_s: float
    #: The record's ``testbed.cpu_by_phase`` entry (each process's CPU seconds and more).
    cost: dict


def phase_cpu(record: dict, origin: str = "record") -> list[PhaseCpu]:
    """Each phase of a testbed run record with its CPU time (``testbed.cpu_by_phase``,
    matched to its phase by iteration and label); empty where the record has none.  A
    phase's CPU time that matches no phase, lacks a field, or is not a number in range, or
    a phase that moved nothing or cost no CPU time, is refused in one line naming
    ``origin`` and the entry."""
    costs = measured_testbed(record, origin).get("cpu_by_phase") or []
    if not costs:
        return []
    by_phase = {(phase.get("iteration"), phase.get("phase")): phase for phase in record.get("phases") or []}
    rows = []
    for index, cost in enumerate(costs):
        where = f"{origin}: testbed.cpu_by_phase[{index}]"
        if not isinstance(cost, dict):
            raise SimfsError(f"{where}: expected an object with a phase's CPU time, got {cost!r}")
        phase = by_phase.get((cost.get("iteration"), cost.get("phase")))
        if phase is None:
            raise SimfsError(
                f"{where}: iteration {cost.get('iteration')!r}, phase {cost.get('phase')!r} is not a phase of the record"
            )
        moved = _number(phase.get("bytes"), f"{where}: the phase's bytes")
        busy = _number(cost.get("cpu_busy_s"), f"{where}.cpu_busy_s")
        utilisation = _number(cost.get("cpu_utilisation"), f"{where}.cpu_utilisation")
        if not moved > 0 or not busy > 0:
            raise SimfsError(
                f"{where}: phase {cost['phase']!r} moved {moved:g} bytes in {busy:g} busy core-s; expected both positive"
            )
        if not 0 <= utilisation <= 1:
            raise SimfsError(f"{where}.cpu_utilisation: expected a share of the cores, 0 to 1, got {utilisation:g}")
        rows.append(PhaseCpu(f"{origin} {cost['phase']}", str(phase.get("op")), moved, utilisation, busy, cost))
    return rows


def _number(value: Any, what: str) -> float:
    """``value`` as a finite number, or a one-line error naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SimfsError(f"{what}: expected a finite number, got {value!r}")
    return float(value)


def testbed_shape(record: dict) -> str:
    """What sets the CPU time of a byte besides load: the file system and its layout
    (a GlusterFS volume; MooseFS's servers and copies), and how the ranks ran (MPI ranks
    poll while they wait, and that polling is in a phase's CPU time)."""
    testbed = record["testbed"]
    if testbed.get("file_system") == "glusterfs":
        shape = f"glusterfs {testbed.get('volume')}"
    else:
        shape = f"{testbed.get('file_system')} servers={testbed.get('servers')} goal={testbed.get('goal')}"
    return f"{shape} backend={record.get('backend')}"


class _OneLoadError(SimfsError):
    """No operation of the rows was run at two loads: nothing identifies a growth."""


class BusyGrowthFit:
    """How much more a byte costs on a busy machine: from phases of one workload at
    several loads (1-8 clients), each phase's busy core-seconds per byte is
    ``base x (1 + growth x utilisation)``, one base per operation and testbed shape,
    fitted by least squares on relative errors (bounded to 0..``MAX_GROWTH``: the shared
    host charges a busy machine's costs, which a growth below 0 would make the cheapest).
    Needs each phase's CPU time (``testbed.cpu_by_phase``).

    The shared host takes one growth for every operation (``busy_cpu_growth_``).  The fit
    keeps a growth only where it survives leaving out any one run, and where each
    operation's runs, fitted alone with one run left out, admit it:

    * ``growth_fitted_``: one growth for all operations, and ``leave_one_out_`` (run ->
      that growth refitted without it);
    * ``growth_by_operation_`` and ``leave_one_out_by_operation_``: the same for each
      operation alone;
    * ``identified_``: every refit of the common growth is above ``NO_GROWTH``;
    * ``operations_agree_``: the common growth lies within each operation's refits.

    ``busy_cpu_growth_`` is ``growth_fitted_`` where both hold, else 0 (``held_``
    says why).  A run left out must leave two loads: keeping a growth takes runs at three
    loads or more."""

    def fit(self, records: Iterable[tuple[str, dict]]) -> BusyGrowthFit:
        groups: dict[tuple[str, str], list[tuple[str, str, float, float]]] = {}
        for origin, record in records:
            phases = phase_cpu(record, origin)
            if not phases:
                raise SimfsError(f"{origin}: testbed.cpu_by_phase not recorded: each phase's CPU time is needed")
            shape = testbed_shape(record)
            for row in phases:
                groups.setdefault((row.op, shape), []).append(
                    (origin, row.label, row.utilisation, row.busy_s / row.bytes)
                )
        self.growth_fitted_, self.leave_one_out_ = _growth_and_refits(groups)
        self.growth_by_operation_, self.leave_one_out_by_operation_ = {}, {}
        for op in dict.fromkeys(op for op, _ in groups):
            alone = {key: rows for key, rows in groups.items() if key[0] == op}
            try:
                growth, refits = _growth_and_refits(alone)
            except _OneLoadError:
                continue  # this operation ran at one load: it says nothing of a growth
            self.growth_by_operation_[op], self.leave_one_out_by_operation_[op] = growth, refits
        self.identified_ = self.growth_fitted_ > NO_GROWTH and all(
            value > NO_GROWTH for value in self.leave_one_out_.values()
        )
        self.operations_agree_ = all(
            min(refits.values()) <= self.growth_fitted_ <= max(refits.values())
            for refits in self.leave_one_out_by_operation_.values()
        )
        reasons = []
        if not self.identified_:
            reasons.append("without one of the runs it falls to 0, so it rests on that run")
        if not self.operations_agree_:
            reasons.append("the operations, each fitted alone, do not admit one growth")
        if not self.growth_fitted_:
            self.held_ = "none"
        else:
            self.held_ = f"not kept: {'; '.join(reasons)} (0 used)" if reasons else "kept"
        self.busy_cpu_growth_ = self.growth_fitted_ if self.held_ == "kept" else 0.0
        bases = _bases(groups, self.busy_cpu_growth_)
        self.runs_, self.utilisation_, self.cpu_s_per_byte_, self.residuals_ = [], [], [], []
        for key, rows in groups.items():
            for _, label, utilisation, cost in rows:
                self.runs_.append(label)
                self.utilisation_.append(utilisation)
                self.cpu_s_per_byte_.append(cost)
                self.residuals_.append(bases[key] * (1 + self.busy_cpu_growth_ * utilisation) / cost - 1)
        return self

    def summary(self, request_bytes: float | None = None) -> list[str]:
        """The fit as comment lines: each phase (its CPU time per byte, or per request of
        ``request_bytes``), then the growth and how it holds up."""

        def cost_text(cost: float) -> str:
            if request_bytes is None:
                return f"{cost * 1e9:.3g} ns per byte"
            return f"{cost * request_bytes * 1e3:.3g} core-ms per request"

        def refitted(growth: float, refits: dict[str, float]) -> str:
            spread = sorted(refits.values())
            return f"{growth:.3g}, {spread[0]:.3g} to {spread[-1]:.3g} without one of the {len(spread)} runs"

        lines = [
            f"# {Path(label).name}: {utilisation:.0%} busy, {cost_text(cost)}, fit {residual:+.1%}"
            for label, utilisation, cost, residual in zip(
                self.runs_, self.utilisation_, self.cpu_s_per_byte_, self.residuals_
            )
        ]
        lines += [
            f"# {op} alone: growth {refitted(growth, self.leave_one_out_by_operation_[op])}"
            for op, growth in self.growth_by_operation_.items()
        ]
        lines.append(f"# growth {refitted(self.growth_fitted_, self.leave_one_out_)}: {self.held_}")
        return lines


def _bases(groups: dict[tuple[str, str], list], growth: float) -> dict[tuple[str, str], float]:
    """Each group's cost on an idle machine for ``growth`` (weighted least squares on
    relative errors, in closed form)."""
    import numpy as np

    fitted = {}
    for key, rows in groups.items():
        scale = np.array([1 + growth * u for _, _, u, _ in rows])
        cost = np.array([c for *_, c in rows])
        weights = 1 / cost**2
        fitted[key] = float((weights * scale * cost).sum() / (weights * scale**2).sum())
    return fitted


def _growth_and_refits(groups: dict[tuple[str, str], list]) -> tuple[float, dict[str, float]]:
    """The growth of ``groups`` and, for each run, the growth without it (0 where what is
    left was run at one load)."""
    growth = _fit_growth(groups)
    refits = {}
    for left_out in dict.fromkeys(origin for rows in groups.values() for origin, *_ in rows):
        rest = {key: [row for row in rows if row[0] != left_out] for key, rows in groups.items()}
        try:
            refits[left_out] = _fit_growth({key: rows for key, rows in rest.items() if rows})
        except _OneLoadError:
            refits[left_out] = 0.0
    return growth, refits


def _fit_growth(groups: dict[tuple[str, str], list]) -> float:
    """The growth that best explains every group's cost per byte against utilisation."""
    from scipy.optimize import minimize_scalar

    if not any(len({round(u, 2) for _, _, u, _ in rows}) > 1 for rows in groups.values()):
        raise _OneLoadError("busy CPU growth fit: no operation was run at two loads (give runs of 1 to 8 clients)")

    def loss(growth: float) -> float:
        fitted = _bases(groups, growth)
        return sum(((fitted[key] * (1 + growth * u) - c) / c) ** 2 for key, rows in groups.items() for *_, u, c in rows)

    growth = float(minimize_scalar(loss, bounds=(0.0, MAX_GROWTH), method="bounded").x)
    if growth > MAX_GROWTH * 0.999:
        raise SimfsError(f"busy CPU growth fit: the growth reached its bound ({MAX_GROWTH}): the runs disagree")
    return growth if growth > NO_GROWTH else 0.0


class HostCpuFit:
    """Least-squares CPU costs from testbed run records (scikit-learn style: ``fit``
    returns self and sets the trailing-underscore attributes).

    ``busy_cpu_growth`` (:class:`BusyGrowthFit`): each run's busy time is divided by
    ``1 + busy_cpu_growth x utilisation`` first, so the costs are an idle machine's."""

    def __init__(self, busy_cpu_growth: float = 0.0) -> None:
        self.busy_cpu_growth = busy_cpu_growth

    def fit(self, records: Iterable[tuple[str, dict]]) -> HostCpuFit:
        import numpy as np

        rows, busy, names = [], [], []
        for origin, record in records:
            terms, seconds = run_terms(record, origin)
            idle = 1.0
            if self.busy_cpu_growth:
                utilisation = _number(record["testbed"].get("cpu_utilisation"), f"{origin}: testbed.cpu_utilisation")
                idle += self.busy_cpu_growth * utilisation
            rows.append(terms)
            busy.append(seconds / idle)
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
        self.busy_label_ = "core-s on an idle machine" if self.busy_cpu_growth else "core-s busy"
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
    add_load_option(parser)
    args = parser.parse_args(argv)
    growth = fit_load_and_print(args.load)
    if growth is None:
        return 2
    return 0 if fit_and_print(HostCpuFit(busy_cpu_growth=growth), args.records) is not None else 2


def add_load_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--load",
        nargs="+",
        default=[],
        metavar="RECORD",
        help="records of one workload at several loads (1-8 clients), with each phase's CPU time: "
        "fit host.busy_cpu_growth from them first",
    )


def fit_load_and_print(paths: list[str], request_bytes: float | None = None) -> float | None:
    """The busy-machine growth fitted from the records at ``paths`` (0 without any),
    printed with each phase (per byte, or per request of ``request_bytes``) as the
    profile's ``busy_cpu_growth`` line; None, after one line on stderr, where they cannot
    be read or fitted."""
    if not paths:
        return 0.0
    try:
        busy = BusyGrowthFit().fit(read_records(paths))
    except SimfsError as error:
        print(f"simfs: {error}", file=sys.stderr)
        return None
    print("\n".join(busy.summary(request_bytes)))
    # The profile's value, as printed, is the one the costs are fitted with.
    growth = round(busy.busy_cpu_growth_, 3)
    print(f"busy_cpu_growth = {growth:g}")
    return growth


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
