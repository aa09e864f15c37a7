"""``simfs validate --live run.json --system PROFILE``: a live run against its prediction.

Each run record (``simfs measure --json``) is read as measurements (the median over its
iterations, ``simfs.ingest.simfs_run``) and every phase is simulated on ``system`` with
the run's nodes and processes per node: one row per run and phase, predicted against
measured, with the error.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from simfs.errors import SimfsError
from simfs.filesystems import system_from_profile
from simfs.ingest import read_measurements
from simfs.ingest.measurements import METRIC_UNITS
from simfs.predict import NotSimulatedWarning, Predictor, plan
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
    predictor = Predictor(system_from_profile(profile), profile)
    rows = []
    for point in points:
        row = measurements.loc[point.index]
        predicted = predictor.predict(point)
        rows.append(
            {
                "run": str(row["source"]).rsplit(":", 1)[0],
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
            }
        )
    return pd.DataFrame(rows)
