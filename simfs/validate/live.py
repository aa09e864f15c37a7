"""``simfs validate --live run.json --system PROFILE``: a live run against its prediction.

Each run record (``simfs measure --json``) is read as measurements (the median over its
iterations, ``simfs.ingest.simfs_run``) and every phase is simulated on ``system`` with
the run's nodes and processes per node: one row per run and phase, predicted against
measured, with the error.  For a testbed run, whose record holds each phase's CPU
utilisation (``testbed.cpu_by_phase``), and a profile whose daemons share one machine's
cores, the simulated utilisation stands beside it: a run the cores limit should be
predicted as one.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pandas as pd

from simfs.errors import SimfsError
from simfs.filesystems import system_from_profile
from simfs.ingest import read_measurements
from simfs.ingest.measurements import METRIC_UNITS
from simfs.predict import NotSimulatedWarning, Point, Predictor, plan
from simfs.runner.machine import shared_machine
from simfs.systems.other_cpu import host_costs_for, recorded_cpu
from simfs.systems.profile import load_profile


def compare_live(runs: list[str | Path], system: str) -> pd.DataFrame:
    """Predicted against measured for every phase of every run record in ``runs``."""
    frames = [read_measurements(path) for path in runs]
    measurements = pd.concat(frames, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotSimulatedWarning)
        try:
            points, _ = plan(measurements)
        except NotSimulatedWarning as exc:
            raise SimfsError(f"--live: {exc}") from None
    profile = load_profile(system)
    measured_on = recorded_cpu(profile)
    built = system_from_profile(profile)  # checks every [[host.other_cpu]] entry too
    machines = {path: _machine(path) for path in runs}
    # A run whose CPU cannot be read (no machine section, a folder) counts as unknown.
    ran_on = {_cpu_of(machine) for machine in machines.values()}
    # Runs all made on one CPU whose costs the profile also lists: predict with those.
    other = None
    if len(ran_on) == 1 and None not in ran_on:
        other = host_costs_for(profile, next(iter(ran_on)), getattr(type(built), "OTHER_CPU_FIELDS", {}))
    if other is not None:
        profile = other.profile
        built = system_from_profile(profile)
    cpu_costs_of = recorded_cpu(profile)
    for path, machine in machines.items():
        if machine is None:
            continue
        for mismatch in (
            _other_file_system(machine, built),
            _other_cpu(machine, cpu_costs_of, built),
            _shared(machine),
        ):
            if mismatch:
                warnings.warn(f"{path}: {mismatch}", LiveMismatchWarning, stacklevel=2)
    if other is not None:
        # What the entry does not list stays the first CPU's.
        warnings.warn(
            f"{system}: the runs were on {cpu_costs_of} and are predicted with that CPU's costs from "
            f"host.other_cpu[{other.number}] ({_by_table(other.fields)}); the rest of the profile's CPU-bound rates were measured "
            f"on {measured_on}",
            LiveMismatchWarning,
            stacklevel=2,
        )
    predictor = Predictor(built, profile)
    rows, records = [], {}
    for point in points:
        row = measurements.loc[point.index]
        predicted = predictor.predict(point)
        run = str(row["source"]).rsplit(":", 1)[0]
        rows.append(
            {
                "run": run,
                "workload": point.workload,
                "nodes": int(row["nodes"]),
                "ppn": int(row["ppn"]),
                "phase": point.phase,
                "metric": point.metric,
                "unit": METRIC_UNITS[point.metric],
                "measured": point.measured,
                "spread_pct": 100 * point.uncertainty,
                "predicted": predicted,
                "error_pct": 100 * (predicted / point.measured - 1),
                "cpu_busy_measured": _measured_cpu_busy(records, run, point.phase),
                "cpu_busy_predicted": _predicted_cpu_busy(predictor, point),
            }
        )
    table = pd.DataFrame(rows)
    # Whose CPU costs predicted the runs (None: the profile does not say).
    table.attrs["cpu_costs_of"] = cpu_costs_of
    return table


def _machine(path: str | Path) -> dict | None:
    """A run record's ``machine`` section, or None (read_measurements has already refused
    what cannot be read; a folder of records has no one machine)."""
    try:
        machine = json.loads(Path(path).read_text(encoding="utf-8"))["machine"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return machine if isinstance(machine, dict) else None


def _cpu_of(machine: dict | None) -> str | None:
    cpu = machine.get("cpu_model") if machine is not None else None
    return cpu if isinstance(cpu, str) and cpu else None


class LiveMismatchWarning(UserWarning):
    """A run record is not of what the profile describes: another file system, another
    CPU, or a machine other jobs shared."""


#: The ``fs_type`` (``/proc/mounts``) a run on each modelled file system reports; a local
#: profile names its own (``fs.type``).  The testbed's MooseFS mounts say ``fuse``.
_MOUNT_TYPES = {
    "lustre": {"lustre"},
    "gpfs": {"gpfs"},
    "panfs": {"panfs"},
    "cxfs": {"cxfs"},
    "moosefs": {"fuse", "fuse.mfs", "fuse.mfsmount"},
    "glusterfs": {"fuse.glusterfs"},
}


def _other_file_system(machine: dict, system: object) -> str | None:
    """Why a run record's ``machine`` is not on the file system ``system`` models, or
    None where it is (or the record does not say)."""
    target = machine.get("target")
    mounted = target.get("fs_type") if isinstance(target, dict) else None
    kind = getattr(system, "FILESYSTEM", "")
    expected = {getattr(system, "fs_type", "")} if kind == "local" else _MOUNT_TYPES.get(kind, set())
    if not expected or not mounted or mounted in expected:
        return None
    models = f"{kind} ({getattr(system, 'fs_type', '')})" if kind == "local" else kind
    return f"the run was on {mounted} (machine.target.fs_type) and {system.name} models {models}: this compares two different systems"


def _by_table(fields: tuple[str, ...]) -> str:
    """``[host] a, b; [master] c`` from an entry's replaced fields (``[host]``'s bare, the
    other tables' as ``table.field``)."""
    tables: dict[str, list[str]] = {}
    for field in fields:
        table, _, name = field.rpartition(".")
        tables.setdefault(table or "host", []).append(name)
    return "; ".join(f"[{table}] {', '.join(names)}" for table, names in tables.items())


def _other_cpu(machine: dict, recorded: object, system: object) -> str | None:
    """Why a run record's ``machine`` has another CPU than the one the profile's CPU-bound
    rates were measured on (``machine.recorded.cpu_model``, ``host.recorded.cpu_model``),
    or None."""
    ran_on = machine.get("cpu_model")
    if not isinstance(recorded, str) or not recorded or not isinstance(ran_on, str) or ran_on in ("", recorded):
        return None
    return (
        f"the run was on {ran_on} (machine.cpu_model) and {system.name}'s CPU costs and copy rates "
        f"were measured on {recorded}: whatever the cores bind is another machine's"
    )


def _shared(machine: dict) -> str | None:
    """What else used the machine during the run (``machine.load``, recorded since
    2026-11-28), if it was not idle."""
    load = machine.get("load")
    if not isinstance(load, dict):
        return None
    try:
        return shared_machine(
            load["cpu_window_s"] * load["cpus"],
            load["cpu_nice_s"],
            load["cpu_steal_s"],
            runner_niced=load.get("runner_nice", 0) > 0,
        )
    except (KeyError, TypeError):
        return None


def _measured_cpu_busy(records: dict[str, object], run: str, phase: str) -> float:
    """A testbed record's CPU utilisation in ``phase`` (the mean over its iterations,
    from ``testbed.cpu_by_phase``); NaN for other records.  ``records`` keeps each record
    read in this comparison, so a record of many phases is read once."""
    if run not in records:
        try:
            records[run] = json.loads(Path(run).read_text())
        except (OSError, ValueError):
            records[run] = None  # its rates were read already; it has no CPU time to give
    record = records[run]
    testbed = record.get("testbed") if isinstance(record, dict) else None
    phases = testbed.get("cpu_by_phase") if isinstance(testbed, dict) else None
    busy = [entry["cpu_utilisation"] for entry in phases or () if entry.get("phase") == phase]
    return sum(busy) / len(busy) if busy else math.nan


def _predicted_cpu_busy(predictor: Predictor, point: Point) -> float:
    """The simulated share of a shared host's cores busy in the point's phase (its one
    experiment's run, already simulated for the prediction); NaN without a shared host."""
    if len(point.experiments) != 1:
        return math.nan
    rows = predictor.run(point.workload, point.experiments[0], point.overrides)
    busy = [row["host_cpu_busy"] for row in rows if row["phase"] == point.phase and "host_cpu_busy" in row]
    return sum(busy) / len(busy) if busy else math.nan
