"""Predict measurements: simulate what each Measurements row measured.

Shared by the calibrators (which compare predictions with measurements while searching
parameters) and by validation.  A row is simulatable when its tool is one simfs models
(dd, IOR, mdtest, bonnie++, obdfilter-survey, benchio, SPECsfs2008, the access classes), its metric is one the simulator reports, and its nodes and processes
per node are known (directly or through ``over``).  mdtest rates (``ops_rate``) are
compared phase by phase (its "File creation" is simfs's "file create"; tree creation
and removal are not simulated).  Rows that are not get a reason,
reported as a named warning; they are never silently dropped.

Metrics: ``agg_bw`` -> the tool's aggregate (``agg_bw_Bps``); ``clat_mean`` -> an
open-loop SPECsfs2008 run's mean response time (``response_time_s``); ``per_node_bw`` ->
``per_node_bw_Bps``; ``rank_bw`` -> the mean over ranks of each rank's own rate;
``min_rank_agg_bw`` -> the slowest rank's rate times the number of ranks.  A row
with ``over = "nodes=1,2,4"`` is the maximum over that sweep (a published peak).

A setting whose key names a profile field (it has a dot: ``cxfs.volume=all``) is a
profile override for that measurement, as ``--set`` is for a run: the seed measured it
on the system configured that way.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simfs import simulation
from simfs.errors import SimfsError
from simfs.experiment import EXPERIMENT_KEYS, Experiment
from simfs.filesystems import FileSystem, system_from_profile
from simfs.systems.profile import Profile
from simfs.workloads import parse_workload

SIMULATED_TOOLS = {"dd", "ior", "mdtest", "bonnie++", "obdfilter-survey", "access-class", "benchio", "specsfs2008"}
SIMULATED_METRICS = {
    "agg_bw": "agg_bw_Bps",
    "per_node_bw": "per_node_bw_Bps",
    "rank_bw": "rank_mean_bw_Bps",
    # The CRT-DC seed's aggregate for its 12-process runs: the slowest stream x the streams.
    "min_rank_agg_bw": "min_rank_agg_bw_Bps",
    # mdtest's SUMMARY rate: items over the phase's makespan.
    "ops_rate": "ops_per_s",
    # obdfilter-survey: the OSS's total over its OSTs.
    "ost_bw": "agg_bw_Bps",
    # SPECsfs2008's response time: the mean over the measured operations.
    "clat_mean": "response_time_s",
}
#: Metrics only an open-loop workload (SPECsfs2008) reports, and the tools that have them.
OPEN_LOOP_METRICS = {"clat_mean": ("specsfs2008",)}
#: mdtest's SUMMARY operation names (as ingested) -> simfs phase labels.
MDTEST_PHASES = {
    "file_creation": "file create",
    "file_stat": "file stat",
    "file_read": "file read",
    "file_removal": "file remove",
    "directory_creation": "dir create",
    "directory_stat": "dir stat",
    "directory_removal": "dir remove",
}


class NotSimulatedWarning(UserWarning):
    """A measurement simfs cannot simulate; it is left out of a fit or a comparison."""


@dataclass(frozen=True)
class Point:
    """One simulatable measurement: the experiments to run and how to read the result."""

    index: Any
    workload: str
    phase: str
    metric: str
    experiments: tuple[Experiment, ...]
    measured: float
    uncertainty: float
    #: Profile overrides the measurement was taken under (sorted ``(field, value)`` pairs).
    overrides: tuple[tuple[str, Any], ...] = ()


def plan(measurements: pd.DataFrame, *, warn: bool = True) -> tuple[list[Point], pd.DataFrame]:
    """Split rows into simulatable points and the rest (with a ``reason`` column)."""
    points: list[Point] = []
    skipped = []
    for index, row in measurements.iterrows():
        try:
            points.append(_point(index, row))
        except NotSimulated as skip:
            skipped.append({**row.to_dict(), "reason": str(skip)})
            if warn:
                warnings.warn(f"{row['source']}: not simulated: {skip}", NotSimulatedWarning, stacklevel=2)
    return points, pd.DataFrame(skipped)


class NotSimulated(Exception):  # noqa: N818 - it is a verdict, not an error condition
    """Why a measurement cannot be simulated."""


def _point(index: Any, row: pd.Series) -> Point:
    tool = row["tool"]
    if tool == "fio":
        # simfs calibrate maps a fio job to the IOR run doing the same I/O, and checks that
        # its reads are not served from a cache fio dropped; nothing else here does.
        raise NotSimulated(
            "a fio result: simfs calibrate compares it as the IOR run doing the same I/O; "
            "to compare runs with a profile here, record them with simfs measure"
        )
    if tool not in SIMULATED_TOOLS:
        raise NotSimulated(f"tool {tool!r} is not modelled (simfs simulates {', '.join(sorted(SIMULATED_TOOLS))})")
    if row["metric"] not in SIMULATED_METRICS:
        raise NotSimulated(f"metric {row['metric']!r} is not simulated (expected {', '.join(SIMULATED_METRICS)})")
    if not row["workload"]:
        raise NotSimulated("no workload command line (give one in the manifest)")
    try:
        spec = parse_workload(row["workload"])
    except SimfsError as exc:
        raise NotSimulated(str(exc)) from None
    phase = MDTEST_PHASES.get(row["phase"], row["phase"]) if tool == "mdtest" else row["phase"]
    if phase not in {p.label for p in spec.phases}:
        raise NotSimulated(f"phase {row['phase']!r} is not a phase of {row['workload']!r}")
    settings = json.loads(row["settings"]) if isinstance(row["settings"], str) and row["settings"] else {}
    for key in ("nodes", "ppn"):
        if not pd.isna(row[key]):
            settings[key] = int(row[key])
    return make_point(
        index,
        row["workload"],
        phase,
        row["metric"],
        settings,
        row["over"],
        float(row["value"]),
        float(row["uncertainty"]),
    )


def make_point(
    index: Any,
    workload: str,
    phase: str,
    metric: str,
    settings: dict[str, Any],
    over: Any,
    measured: float,
    uncertainty: float,
) -> Point:
    """A point from its parts; raises ``NotSimulated`` with the reason when it cannot be simulated."""
    words = workload.split()
    tool = words[0].rsplit("/", 1)[-1] if words else ""
    if tool not in OPEN_LOOP_METRICS.get(metric, (tool,)):
        raise NotSimulated(
            f"metric {metric!r} of {tool}: simfs simulates it for {', '.join(OPEN_LOOP_METRICS[metric])} only"
        )
    overrides = tuple(sorted((k, v) for k, v in settings.items() if "." in k))
    settings = {k: v for k, v in settings.items() if "." not in k}
    unknown = set(settings) - set(EXPERIMENT_KEYS)
    if unknown:
        raise NotSimulated(f"settings {sorted(unknown)} are not experiment settings (or profile fields, with a dot)")
    base: dict[str, Any] = dict(settings)
    if "obdfilter-survey" in workload.split():
        # The survey runs on a server: no client nodes or processes to give.
        base.setdefault("nodes", 1)
        base.setdefault("ppn", 1)
    sweeps = _over(over)
    if sweeps and metric in OPEN_LOOP_METRICS:
        raise NotSimulated(f"over {over!r}: a {metric} is a mean at one load, not the peak of a sweep")
    missing = [k for k in ("nodes", "ppn") if k not in base and k not in sweeps]
    if missing:
        raise NotSimulated(f"{' and '.join(missing)} unknown")
    grids = [dict(base)]
    for key, values in sweeps.items():
        grids = [{**g, key: v} for g in grids for v in values]
    try:
        experiments = tuple(Experiment.from_settings(g) for g in grids)
    except SimfsError as exc:
        raise NotSimulated(str(exc)) from None
    return Point(index, workload, phase, metric, experiments, measured, uncertainty, overrides)


def _over(text: Any) -> dict[str, list[int]]:
    if not isinstance(text, str) or not text:
        return {}
    key, sep, values = text.partition("=")
    if not sep or key.strip() not in EXPERIMENT_KEYS:
        raise NotSimulated(f"over {text!r}: expected KEY=V1,V2,... with an experiment setting")
    try:
        return {key.strip(): [int(v) for v in values.split(",")]}
    except ValueError:
        raise NotSimulated(f"over {text!r}: values must be integers") from None


class Predictor:
    """Predicts points on one system, simulating each distinct run once.

    ``profile`` is the system's profile, needed for points taken under profile overrides.
    """

    def __init__(self, system: FileSystem, profile: Profile | None = None) -> None:
        self.system = system
        self.profile = profile
        self._runs: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._specs: dict[str, Any] = {}
        self._variants: dict[tuple[tuple[str, Any], ...], FileSystem] = {(): system}

    def _system(self, overrides: tuple[tuple[str, Any], ...]) -> FileSystem:
        if overrides not in self._variants:
            if self.profile is None:
                raise SimfsError(f"profile overrides {dict(overrides)} need the system's profile")
            self._variants[overrides] = system_from_profile(self.profile.with_overrides(dict(overrides)))
        return self._variants[overrides]

    def run(
        self, workload: str, experiment: Experiment, overrides: tuple[tuple[str, Any], ...] = ()
    ) -> list[dict[str, Any]]:
        """Phase metrics of one run (``Result.phase_metrics``), simulated once."""
        key = (workload, experiment, overrides)
        if key not in self._runs:
            spec = self._specs.setdefault(workload, parse_workload(workload))
            # Measured points are runs someone made: their size is not a typo to refuse
            # (simfs.cost guards what a user asks to simulate; its estimate is an upper bound).
            self._runs[key] = simulation.run(self._system(overrides), spec, experiment, force=True).phase_metrics()
        return self._runs[key]

    def value(self, point: Point, experiment: Experiment) -> float:
        column = SIMULATED_METRICS[point.metric]
        rows = self.run(point.workload, experiment, point.overrides)
        values = [row[column] for row in rows if row["phase"] == point.phase]
        return float(np.mean(values))

    def predict(self, point: Point) -> float:
        return max(self.value(point, experiment) for experiment in point.experiments)

    def curve(self, point: Point) -> list[tuple[Experiment, float]]:
        """The prediction at every experiment of a point's sweep (for plots)."""
        return [(experiment, self.value(point, experiment)) for experiment in point.experiments]
