"""The Python API, mirroring the command line.

>>> import simfs
>>> result = simfs.simulate("crtdc-lfs5", "dd bs=1024000 count=5000", nodes=4)
>>> result.phases[["phase", "agg_bw_Bps"]]  # doctest: +SKIP

``overrides`` takes the same ``KEY=VALUE`` pairs as ``--set``: experiment settings
(``nodes``, ``ppn``, ``stripe_count``, ``stripe_size``, ``stripe_offset``, ``seed``) or
any profile field by its dotted name (``oss.count``, ``client.network``).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simfs.errors import SimfsError
from simfs.experiment import EXPERIMENT_KEYS, Experiment
from simfs.filesystems import FileSystem, system_from_profile
from simfs.systems.profile import Profile, load_profile, parse_override_value
from simfs.workloads import WorkloadSpec, parse_workload

if TYPE_CHECKING:
    import pandas as pd

    from simfs.results import Result

SystemLike = str | Path | Profile | FileSystem
WorkloadLike = str | WorkloadSpec


def split_overrides(overrides: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Separate experiment settings from profile fields; string values are parsed."""
    experiment: dict[str, Any] = {}
    profile: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if key in EXPERIMENT_KEYS:
            experiment[key] = value
        else:
            profile[key] = parse_override_value(value) if isinstance(value, str) else value
    return experiment, profile


def load_system(system: SystemLike, overrides: Mapping[str, Any] | None = None) -> FileSystem:
    """A built-in name, a TOML path, a :class:`Profile` or a ready system, with overrides."""
    if isinstance(system, FileSystem):
        if overrides:
            raise SimfsError("overrides need a profile: pass the system's name or TOML path, not a built system")
        return system
    profile = system if isinstance(system, Profile) else load_profile(system)
    if overrides:
        profile = profile.with_overrides(dict(overrides))
    return system_from_profile(profile)


def load_workload(workload: WorkloadLike) -> WorkloadSpec:
    return workload if isinstance(workload, WorkloadSpec) else parse_workload(workload)


#: ``{transfer}`` in a swept workload's command line: filled from ``--vary transfer=...``.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def workload_names(workload: WorkloadLike) -> list[str]:
    """The names a swept workload's command line gives in braces, in order."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(workload))) if isinstance(workload, str) else []


def sweep_workloads(workload: WorkloadLike, vary: Mapping[str, list[Any]]) -> dict[tuple, WorkloadSpec]:
    """The swept workload for each combination of values of the names its command line
    gives in braces (``"ior -t {transfer} -b 64m"`` with ``vary={"transfer": ["64k",
    "1m"]}``), keyed by those values in :func:`workload_names` order (``()`` where it names
    none), each parsed, so a bad value is refused before any point runs.  A name in braces
    that is not varied is an error."""
    names = workload_names(workload)
    missing = [name for name in names if name not in vary]
    if missing:
        raise SimfsError(
            f"sweep: the workload names {{{missing[0]}}}: give its values with --vary {missing[0]}=V1,V2,..."
        )
    specs = {}
    for values in itertools.product(*(vary[name] for name in names)):
        setting = dict(zip(names, values))
        try:
            specs[values] = load_workload(_fill(workload, setting) if names else workload)
        except SimfsError as exc:
            if not names:  # the command line itself, not a swept value of it
                raise
            shown = ", ".join(f"{name}={value}" for name, value in setting.items())
            raise type(exc)(f"{exc} (--vary {shown})") from None
    return specs


def _fill(workload: str, setting: Mapping[str, Any]) -> str:
    return _PLACEHOLDER.sub(lambda match: str(setting[match.group(1)]), workload)


def simulate(
    system: SystemLike,
    workload: WorkloadLike,
    *,
    nodes: int = 1,
    ppn: int = 1,
    overrides: Mapping[str, Any] | None = None,
    record_timeline: bool = False,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    **settings: Any,
) -> Result:
    """Simulate one configuration.

    ``settings`` are further experiment settings (``stripe_count=8``, ``seed=3``).  A run
    estimated beyond :mod:`simfs.cost`'s limits (an hour of CPU, half the memory) raises
    :class:`~simfs.errors.ExperimentError` with the estimate unless ``force``.
    ``progress(done, total)`` is called as ranks finish phases.
    """
    experiment_overrides, profile_overrides = split_overrides(overrides)
    built = load_system(system, profile_overrides)
    experiment = Experiment.from_settings({"nodes": nodes, "ppn": ppn, **settings, **experiment_overrides})
    from simfs import simulation  # numpy, scipy and pandas: only when something runs

    return simulation.run(
        built, load_workload(workload), experiment, record_timeline=record_timeline, force=force, progress=progress
    )


#: Columns summarised over repeats (min, median, max).
SPREAD_COLUMNS = ("agg_bw_Bps", "ops_per_s", "time_s")


def repeat(
    system: SystemLike,
    workload: WorkloadLike,
    repeats: int,
    *,
    nodes: int = 1,
    ppn: int = 1,
    overrides: Mapping[str, Any] | None = None,
    force: bool = False,
    **settings: Any,
) -> pd.DataFrame:
    """Simulate one configuration ``repeats`` times with seeds ``seed .. seed + repeats -
    1`` and return each phase's spread: one row per (iteration, phase) with the min, median
    and max of ``agg_bw_Bps``, ``ops_per_s`` and ``time_s`` (and an open-loop phase's
    ``response_time_s``) over the seeds (only the
    profile's ``[variability]`` and the random choices of a run differ between seeds).
    The runs' notes are in ``attrs["notes"]``, each once, with how many of the repeats
    it is of unless it is of all."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise SimfsError(f"repeats: expected a positive integer, got {repeats!r}")
    experiment_overrides, profile_overrides = split_overrides(overrides)
    built = load_system(system, profile_overrides)
    spec = load_workload(workload)
    base = Experiment.from_settings({"nodes": nodes, "ppn": ppn, **settings, **experiment_overrides})
    from simfs import cost, simulation

    if not force:
        once = simulation.estimate_cost(built, spec, base)
        cost.check(replace(once, seconds=once.seconds * repeats))
    frames, notes = [], []
    for offset in range(repeats):
        experiment = Experiment.from_settings({**base.as_dict(), "seed": base.seed + offset})
        result = simulation.run(built, spec, experiment, force=True)
        frames.append(result.phases)
        notes.extend(result.notes)
    import pandas as pd

    table = spread(pd.concat(frames, ignore_index=True))
    counts = Counter(notes)
    table.attrs["notes"] = tuple(
        note if count == repeats else f"{note} (in {count} of {repeats} repeats)" for note, count in counts.items()
    )
    return table


def spread(phases: pd.DataFrame, by: Iterable[str] = ()) -> pd.DataFrame:
    """Min, median and max over seeds of each phase's rates (``repeat``)."""
    keys = [*by, "iteration", "phase"]
    grouped = phases.groupby(keys, sort=False)
    # A SPECsfs2008 run's response time is what it measures beside its load.
    columns = [*SPREAD_COLUMNS, *(["response_time_s"] if "response_time_s" in phases else [])]
    table = grouped[columns].agg(["min", "median", "max"])
    table.columns = [f"{column}_{stat}" for column, stat in table.columns]
    table.insert(0, "repeats", grouped.size())
    return table.reset_index()


def sweep(
    system: SystemLike,
    workload: WorkloadLike,
    vary: Mapping[str, Iterable[Any]],
    *,
    overrides: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
    jobs: int = 1,
    scheduler: str | None = None,
    **settings: Any,
) -> pd.DataFrame:
    """Simulate the Cartesian product of ``vary`` and return one tidy phase table.

    ``vary`` maps a setting or profile field to its values, e.g.
    ``{"nodes": [1, 2, 4], "oss.count": [8, 16]}``, or a name the workload's command line
    gives in braces to its values (``"ior -t {transfer} -b 64m"``, ``{"transfer": ["64k",
    "1m"]}``); each varied key is a column of the result.  ``progress(done, total)`` is
    called after every point.

    The points are independent simulations: ``jobs`` runs them in that many local
    processes, ``scheduler`` (``tcp://host:8786``, or a ``dask.distributed.Client``) on a
    Dask cluster (``pip install 'simfs[dask]'``).  Either way the table is the serial
    one, row for row: every point is deterministic (its experiment's seed) and the
    rows are put back in the points' order.

    The runs' notes (a sampled steady state, a phase with nothing to report) are in
    ``attrs["notes"]``, each once, with the points it is of unless it is of all.
    """
    from simfs.parallel import check_jobs

    check_jobs(jobs, scheduler, "sweep")
    if not vary:
        raise SimfsError("sweep: nothing to vary (give at least one KEY=V1,V2,...)")
    keys = list(vary)
    value_lists = [list(vary[key]) for key in keys]
    for key, values in zip(keys, value_lists):
        if not values:
            raise SimfsError(f"sweep: --vary {key}: no values")
    specs = sweep_workloads(workload, dict(zip(keys, value_lists)))
    names = workload_names(workload)
    # A setting named in braces (-o /scratch/{nodes}/f) is filled in and still set.
    workload_only = {name for name in names if name not in EXPERIMENT_KEYS}
    base_experiment, base_profile = split_overrides(overrides)
    profile = system if isinstance(system, (Profile, FileSystem)) else load_profile(system)
    systems: dict[tuple, FileSystem] = {}
    points = list(itertools.product(*value_lists))
    from simfs import cost, simulation

    # Every point is built and checked before the first one runs: a bad value or a
    # point far too large for the machine is refused now, not after an hour of sweep.
    planned = []
    # stripe_count -1 is every target: beside the count itself it is the same point, and
    # the table (keyed by the count the run used) would show one of them.
    resolved_points: dict[tuple, tuple] = {}
    for point in points:
        setting = dict(zip(keys, point))
        spec = specs[tuple(setting[name] for name in names)]
        experiment_part, profile_part = split_overrides({k: v for k, v in setting.items() if k not in workload_only})
        profile_overrides = {**base_profile, **profile_part}
        cache_key = tuple(sorted((k, repr(v)) for k, v in profile_overrides.items()))
        if cache_key not in systems:
            try:
                systems[cache_key] = load_system(profile, profile_overrides)
            except SimfsError as exc:
                unknown = next((key for key in profile_part if f": {key}: unknown field" in str(exc)), None)
                if unknown is None or not unknown.isidentifier() or "did you mean" in str(exc):
                    raise
                raise type(exc)(
                    f"{exc}; a workload option is varied by naming it in braces in the command line "
                    f"(ior -t {{{unknown}}} ... --vary {unknown}=...)"
                ) from None
        experiment = Experiment.from_settings({**settings, **base_experiment, **experiment_part})
        if "stripe_count" in setting:
            built = systems[cache_key]
            resolved = simulation.resolved_stripe_count(built, experiment)
            same = resolved_points.setdefault(
                tuple(resolved if k == "stripe_count" else v for k, v in setting.items()), point
            )
            if same != point:
                raise SimfsError(
                    f"sweep: --vary stripe_count: {setting['stripe_count']} and "
                    f"{dict(zip(keys, same))['stripe_count']} are both {resolved} stripes on {built.name}: give it once"
                )
        planned.append((systems[cache_key], spec, experiment))
    if not force:
        costs = [simulation.estimate_cost(built, spec, experiment) for built, spec, experiment in planned]
        total = replace(max(costs, key=lambda c: c.memory_bytes), seconds=sum(c.seconds for c in costs))
        cost.check(total)
    from simfs.parallel import map_ordered, run_point

    tasks = planned
    frames = map_ordered(run_point, tasks, jobs, scheduler, progress)
    notes_at: dict[str, list[tuple]] = {}
    for frame, point in zip(frames, points):
        for note in frame.attrs.pop("notes", ()):
            notes_at.setdefault(note, []).append(point)
        for key, value in zip(keys, point):
            if key not in frame.columns:
                frame.insert(0, key, value)
    import pandas as pd

    table = pd.concat(frames, ignore_index=True)
    table.attrs["notes"] = tuple(_where_said(note, at, keys, len(points)) for note, at in notes_at.items())
    return table


def _where_said(note: str, points: list[tuple], keys: list[str], point_count: int) -> str:
    """A sweep's note, with the points it is of unless it is of every one."""
    if len(points) == point_count:
        return note
    return f"{note} ({'; '.join(', '.join(f'{k}={v}' for k, v in zip(keys, point)) for point in points)})"
