"""Simulate an IO500 run phase by phase, and score it as the harness does.

Each phase is its own simulated job on the same system, as each is its own MPI job in
the harness (:mod:`simfs.workloads.io500` has the command lines).  A read, stat or delete
phase redoes what its write phase did in the real run: the harness passes the stonewall
count on (``stoneWallingStatusFile``, mdtest ``-x``), so a rank reads, stats or deletes
``rate x stonewall`` of what its write phase did (at most what the command line asks).
The request-level part of every phase is simulated on a bounded sample
(:mod:`simfs.workloads.steady_state`); each such phase says so in :attr:`Io500Result.notes`.

On Lustre, a phase's files get the layout the submission's ``io500.sh`` sets on its
directory with ``lfs setstripe`` (:mod:`simfs.workloads.setstripe`), unless the
experiment sets stripes itself; the notes say which.

Scores, as ``io500`` ``src/main.c`` computes them: bandwidth is the geometric mean of
the four IOR phases in GiB/s; IOPS (the metadata score) the geometric mean of the
metadata phases in kIOPS; the total is the square root of their product.  ``find`` is
not simulated, so the metadata score here is over the eight mdtest phases, and the
notes say so.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Any

import pandas as pd

from simfs import simulation
from simfs.errors import WorkloadError
from simfs.experiment import Experiment
from simfs.filesystems import FileSystem
from simfs.units import GIB
from simfs.workloads import parse_workload
from simfs.workloads.io500 import Io500Plan
from simfs.workloads.spec import WorkloadSpec


@dataclasses.dataclass(frozen=True)
class Io500Result:
    """Per phase (``phases``: phase, value, unit, time_s, rate in bytes/s or ops/s,
    bottleneck, command) and the scores (``scores``: bandwidth in GiB/s, iops in kIOPS,
    total), with one note per phase not simulated or simulated on a sample."""

    phases: pd.DataFrame
    scores: dict[str, float]
    notes: tuple[str, ...]


def simulate_io500(system: FileSystem, plan: Io500Plan, experiment: Experiment, *, force: bool = False) -> Io500Result:
    rows: list[dict[str, Any]] = []
    notes = list(plan.skipped)
    # Per write phase: what one rank did per second of it (bytes or items).
    per_rank_rate: dict[str, float] = {}
    for phase in plan.phases:
        try:
            spec = parse_workload(phase.command)
        except WorkloadError as exc:
            # The user wrote the configuration, not this command line: name both.
            made_from = "its io500_* settings" if plan.from_script else f"[{phase.name.rsplit('-', 1)[0]}]"
            raise WorkloadError(f"io500: {plan.source}: {phase.name} (from {made_from}): {exc}") from None
        if phase.bounded_by and plan.stonewall_s:  # a timer of 0: no stonewall, the command's own size
            spec = _bounded(spec, per_rank_rate.get(phase.bounded_by), plan.stonewall_s)
        phase_experiment = _laid_out(system, plan, phase.name, experiment, notes)
        result = simulation.run(system, spec, phase_experiment, force=force)
        for note in result.notes:
            if note in spec.notes:  # what the command line leaves out: once for the run
                if note not in notes:
                    notes.append(note)
            else:  # a sampled phase: "file create: bounded by ..." under the IO500's name
                notes.append(f"{phase.name}: {note.split(': ', 1)[1]}")
        row = result.phases.iloc[-1]  # each IO500 command runs one phase
        if phase.score == "bandwidth":
            rate, value, unit = float(row["agg_bw_Bps"]), float(row["agg_bw_Bps"]) / GIB, "GiB/s"
            done = float(row["bytes"])
        else:
            rate, value, unit = float(row["ops_per_s"]), float(row["ops_per_s"]) / 1000.0, "kIOPS"
            done = float(row["ops"])
        if not phase.bounded_by:
            per_rank_rate[phase.name] = done / experiment.ranks / float(row["time_s"])
        rows.append(
            {
                "phase": phase.name,
                "value": value,
                "unit": unit,
                "time_s": float(row["time_s"]),
                "rate": rate,
                "bottleneck": row["bottleneck"],
                "command": phase.command,
            }
        )
    frame = pd.DataFrame(rows)
    scores = _scores(frame)
    if any(line.startswith("find:") for line in plan.skipped):
        notes.append("the IOPS score is over the mdtest phases only: find is not simulated")
    return Io500Result(frame, scores, tuple(notes))


#: Experiment settings a script's layout gives, and a user's own --set of them overrides.
_LAYOUT_SETTINGS = ("stripe_count", "overstripe_count", "stripe_size")


def _laid_out(system: FileSystem, plan: Io500Plan, phase: str, experiment: Experiment, notes: list[str]) -> Experiment:
    """The experiment of ``phase`` with the layout the submission's script sets on its
    directory (Lustre only; a user's own stripe settings win), noting once per directory
    what was used."""
    layout = plan.layout_of(phase)
    if layout is None:
        return experiment
    directory = phase.rsplit("-", 1)[0]
    if not system.OVERSTRIPING:  # lfs setstripe is Lustre's
        note = f"the lfs setstripe layouts of {plan.layout_source} are Lustre's: not used on {system.FILESYSTEM}"
        if note not in notes:
            notes.append(note)
        return experiment
    settings, layout_notes = layout.settings(system.target_count)
    own = [key for key in _LAYOUT_SETTINGS if getattr(experiment, key) is not None]
    if own:
        note = f"{directory}: {', '.join(own)} as set, not as {plan.layout_source} sets it ({layout.command})"
    else:
        stated = ", ".join(f"{key}={value}" for key, value in settings.items()) or "no stripe setting"
        note = f"{directory}: laid out as {plan.layout_source} sets it ({layout.command}): {stated}"
        experiment = dataclasses.replace(experiment, **settings)
    for line in (note, *(f"{directory}: {each}" for each in layout_notes)):
        if line not in notes:
            notes.append(line)
    return experiment


def _bounded(spec: WorkloadSpec, rate_per_rank: float | None, stonewall_s: float) -> WorkloadSpec:
    """The later phase sized to what its write phase did in ``stonewall_s`` seconds."""
    if rate_per_rank is None:
        return spec  # its write phase did not run: the command line's own size
    phases = []
    for phase in spec.phases:
        if phase.is_metadata:
            phase = phase.with_items(max(1, min(phase.items_per_rank, int(rate_per_rank * stonewall_s))))
        else:
            block = phase.block_size_bytes
            if phase.segment_count > 1:
                phase = phase.with_segments(max(1, min(phase.segment_count, int(rate_per_rank * stonewall_s // block))))
            else:
                transfer = phase.transfer_size_bytes
                size = max(transfer, min(block, int(rate_per_rank * stonewall_s // transfer) * transfer))
                phase = dataclasses.replace(phase, bytes_per_rank=size)
        phases.append(phase)
    return dataclasses.replace(spec, phases=tuple(phases))


def _scores(frame: pd.DataFrame) -> dict[str, float]:
    def mean(unit: str) -> float:
        values = frame.loc[frame["unit"] == unit, "value"]
        return statistics.geometric_mean(values) if len(values) and (values > 0).all() else math.nan

    bandwidth, iops = mean("GiB/s"), mean("kIOPS")
    return {"bandwidth": bandwidth, "iops": iops, "total": math.sqrt(bandwidth * iops)}
