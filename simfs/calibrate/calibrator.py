"""Fit a system profile's free parameters to measurements.

Follows the scikit-learn estimator contract: the constructor only stores settings;
``fit(measurements)`` returns ``self`` and sets the trailing-underscore attributes;
``predict`` uses what ``fit`` found.

Method.  Parameters live on a log scale.  The residual of a measurement is
``log(predicted / measured)``, divided by its relative uncertainty when one is given,
and ``scipy.optimize.least_squares`` (trust region reflective, bounded) minimises their
sum of squares.  Uncertainty comes from a parametric bootstrap: every measurement is
redrawn ``bootstrap`` times as ``measured x exp(N(0, sigma))`` and the fit repeated, with
``sigma`` its stated uncertainty or, where none is stated, the fit's RMS log residual
(at least ``min_sigma``); the interval is the 2.5-97.5 percentile range, widened to take
in the fitted value itself (a few refits can all land on one side of it, and an interval
that excludes its own estimate says nothing about it).  ``bootstrap`` is 0 (no
intervals, and then no claim that a parameter is identifiable) or at least
:data:`MIN_BOOTSTRAP`: on average ``n`` draws span only ``(n - 1) / (n + 1)`` of their
distribution, under 90% below 19 draws, which would make "95%" a misnomer.  With a handful
of published points (the usual case) resampling the points themselves would drop the only
point that informs a parameter; perturbing values keeps every point and asks how far the
noise in them moves the answer.

The model is piecewise smooth (a rate is the minimum of several limits), so a gradient
method started where a parameter is not the binding limit sees no slope at all.  The fit
therefore starts with a coordinate scan: each parameter in turn over ``scan_points``
log-spaced values between its bounds, the others held, keeping the best; a second sweep
over the midpoints of that grid.  The local refinement starts from there; a parameter
that still has no slope at its solution is searched alone over its bounds once more, and
the refinement restarted from a better point if there is one.

Where two limits can each explain one measurement (a create rate bounded either by the
create service or by the close that follows the stat rate), a scan that moves one
parameter at a time keeps whichever it met first, and the refinement cannot leave that
basin.  So the whole search (scan, refinement, release) is run from ``starts`` points
and the lowest cost kept: the profile's values; then every free parameter just below
its upper bound (no limit binds until the scan lowers it to the measurement it governs,
so each measurement is taken by the limit that can reach it); then points of a
scrambled Sobol design over the bounds, drawn from ``seed``.  ``starts_`` maps each
starting point, by name, to the cost its search reached.

A weak prior (``prior_weight``, a log-scale ridge towards the profile's value) is added to
the residuals: it does not move a parameter the data inform, but it stops one they barely
touch from drifting along a nearly flat valley to an absurd value.

Identifiability.  A parameter whose largest sensitivity ``|d log(prediction) / d log(p)|``
over the measurements is below ``min_sensitivity`` (no measurement really depends on it)
keeps about its prior and raises :class:`IdentifiabilityWarning`; so does one whose
interval spans more than a factor ``max_interval_ratio`` or that ends on a bound.  Without
intervals (``bootstrap=0``) a parameter that passes the other checks is not assessed
(``identifiable_`` None), not declared identifiable.

fio results are simulated as the IOR run that does the same I/O (``simfs.ingest.fio``:
their workload is that IOR command); a fio job that has none, or a buffered fio read on a
system where simfs would serve the read from the page cache (fio drops the file's pages
first), is left out with a :class:`NotSimulatedWarning` saying why.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeResult, least_squares

from simfs.calibrate.free import FreeParameter, declared_followers, declared_free_parameters, followed_values
from simfs.errors import ImplausibleValueWarning, ProfileError, SimfsError, check_finite, check_whole
from simfs.filesystems import system_from_profile
from simfs.ingest import fio
from simfs.parallel import check_jobs, map_ordered
from simfs.predict import SIMULATED_METRICS, NotSimulatedWarning, Point, Predictor, plan
from simfs.systems.profile import Profile, load_profile
from simfs.workloads import parse_workload

#: Fewest bootstrap refits behind an interval (0 means no intervals); see the module docstring.
MIN_BOOTSTRAP = 20


#: The constructor's settings, in its order (get_params, set_params).
_SETTINGS = (
    "system",
    "free",
    "bootstrap",
    "seed",
    "min_sigma",
    "max_interval_ratio",
    "max_evaluations",
    "scan_points",
    "starts",
    "prior_weight",
    "min_sensitivity",
    "progress",
    "jobs",
    "scheduler",
)


def _warn_of_other_systems(measurements: pd.DataFrame, profile: Profile) -> None:
    """Warn where measurements name another built-in system than the one fitted (a
    folder of the wrong system is the likely mistake; a what-if fitted on purpose is
    still fitted).  The column is free text elsewhere (a host's name, a site's label)."""
    if "system" not in measurements:
        return
    from simfs.systems.profile import builtin_names

    name = str(profile.data.get("system", {}).get("name", ""))
    own = {name, name.removesuffix("-fitted")}
    builtins = set(builtin_names())
    named = measurements["system"].astype(str)
    for other in sorted(set(named) & builtins - own - {f"{base}-fitted" for base in own}):
        count = int((named == other).sum())
        warnings.warn(
            f"calibrate: {count} measurement{'s' * (count > 1)} name{'s' * (count == 1)} the system {other}; "
            f"the profile fitted is {name}",
            ImplausibleValueWarning,
            stacklevel=3,
        )


class NotFittedError(SimfsError, AttributeError):
    """A fitted attribute asked for before :meth:`ProfileCalibrator.fit` (an
    AttributeError too, so that ``hasattr(calibrator, "summary_")`` is False, as in
    scikit-learn)."""


def check_bootstrap(count: object, option: str) -> int:
    """``count`` if it is 0 or at least :data:`MIN_BOOTSTRAP` refits."""
    if isinstance(count, bool) or not isinstance(count, Integral) or count < 0 or 0 < count < MIN_BOOTSTRAP:
        raise SimfsError(
            f"{option} {count!r}: expected 0 (no intervals) or at least {MIN_BOOTSTRAP} refits "
            "(fewer cannot support a 95% interval)"
        )
    return int(count)


def check_starts(count: object, option: str) -> int:
    """``count`` if it is a positive integer number of starting points."""
    if isinstance(count, bool) or not isinstance(count, Integral) or count < 1:
        raise SimfsError(f"{option} {count!r}: expected a positive integer number of starting points")
    return int(count)


def check_seed(seed: object, option: str) -> int:
    """``seed`` if numpy can seed a generator with it: a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise SimfsError(f"{option} {seed!r}: expected a non-negative integer")
    return int(seed)


def percentile_interval(samples: np.ndarray, estimate: float) -> tuple[float, float]:
    """The 2.5-97.5 percentile range of bootstrap ``samples``, widened to take in the
    ``estimate``: refits that all land on one side of the fitted value must not yield an
    interval that excludes it."""
    low, high = np.percentile(samples, [2.5, 97.5])
    return float(min(low, estimate)), float(max(high, estimate))


def _fio_as_ior(measurements: pd.DataFrame, profile: Profile, warn: bool) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """fio rows whose workload is an IOR command (``simfs.ingest.fio``) become rows of
    that IOR run; the others are taken out, each with the reason."""
    is_fio = measurements["tool"] == "fio"
    if not is_fio.any():
        return measurements, []
    frame = measurements.copy()
    skipped: list[dict[str, Any]] = []
    system = None
    for index, row in measurements[is_fio].iterrows():
        workload = str(row["workload"])
        if row["metric"] not in SIMULATED_METRICS:
            # Said first, as for any tool: a latency is not simulated whatever the job.
            reason = f"metric {row['metric']!r} is not simulated (expected {', '.join(SIMULATED_METRICS)})"
        elif not workload.startswith("ior "):
            reason = fio.why_not_simulated(workload, str(row["phase"]))
        else:
            reason = None
            try:
                phase = parse_workload(workload).phases[0]
            except SimfsError as exc:  # a fio row written by hand, not by the ingest
                phase, reason = None, str(exc)
            if phase is not None and phase.op == "read" and not phase.direct:
                system = system or system_from_profile(profile)
                ranks = (1 if pd.isna(row["nodes"]) else int(row["nodes"])) * (
                    1 if pd.isna(row["ppn"]) else int(row["ppn"])
                )
                # tmpfs keeps the data in the page cache, so there fio reads it from
                # memory too; elsewhere fio has dropped the pages (invalidate=1).
                if system.cached_read(phase.bytes_per_rank * ranks, False) and not getattr(
                    system, "pages_are_storage", False
                ):
                    reason = (
                        "a buffered read: fio drops the file's cached pages first (invalidate=1), while simfs "
                        "serves a read of this size on this system from the page cache; use direct=1 results"
                    )
        if reason is None:
            frame.loc[index, "tool"] = "ior"
            continue
        frame = frame.drop(index)
        if row["metric"] in SIMULATED_METRICS:
            reason = f"fio job: {reason}"
        skipped.append({**row.to_dict(), "reason": reason})
        if warn:
            warnings.warn(f"{row['source']}: not simulated: {reason}", NotSimulatedWarning, stacklevel=4)
    return frame, skipped


class IdentifiabilityWarning(UserWarning):
    """A free parameter the measurements do not pin down."""


class MisfitWarning(UserWarning):
    """Training points the fitted parameters do not reach: the model, or the data, leaves
    them apart (two kinds of run that share one parameter and disagree on it)."""


#: A training point is "not reached" when its log error exceeds three of its stated
#: relative uncertainties, and 20% in any case (the CRT-DC seeds' tolerance).
MISFIT_SIGMAS = 3.0
MISFIT_FLOOR = math.log(1.2)


class ProfileCalibrator:
    """Least-squares calibration of a profile's ``[calibration.free]`` parameters.

    Parameters
    ----------
    system: built-in name, profile path, or :class:`Profile`.
    free: names of the free parameters to fit (default: all declared).
    bootstrap: number of bootstrap refits for the intervals: 0 (no intervals) or at least
        :data:`MIN_BOOTSTRAP`.
    seed: seed of the bootstrap noise (a non-negative integer).
    min_sigma: floor of the relative noise given to measurements without an uncertainty.
    max_interval_ratio: upper/lower interval ratio above which a parameter is poorly identified.
    max_evaluations: budget of model evaluations per search (``least_squares``'
        ``max_nfev``: the remembered ones count too).
    scan_points: grid size of the coordinate scan that finds the starting point (0: none).
    starts: points the search is run from, the lowest cost kept: 1 (the profile's
        values), 2 (and every free parameter just below its upper bound), more (and
        points of a Sobol design over the bounds, drawn from ``seed``).
    prior_weight: weight of the log-scale pull towards the profile's value.
    min_sensitivity: below this largest |d log prediction / d log parameter|, a parameter
        is not identifiable.
    progress: called as ``progress(stage, done)`` after every simulation of the fit
        (``stage`` ``"fit"``; a point the fit has simulated before is not simulated again)
        and every bootstrap refit (``"bootstrap"``): a fit runs hundreds of simulations,
        and ``simfs calibrate`` shows them on a terminal.
    jobs: local processes the bootstrap refits run in (1: one after another); the refits
        are independent fits to noise drawn up front from ``seed``, so the intervals are
        the same whatever ``jobs`` is.
    scheduler: a Dask scheduler address or ``dask.distributed.Client`` to run the
        bootstrap refits on instead (``pip install 'simfs[dask]'``).
    """

    #: Whether a fit reuses what it simulated at a point it comes back to (the tests turn
    #: it off to check the fit is the same without it).
    _remember_simulations = True

    def __init__(
        self,
        system: str | Path | Profile,
        *,
        free: list[str] | None = None,
        bootstrap: int = 20,
        seed: int = 0,
        min_sigma: float = 0.05,
        max_interval_ratio: float = 3.0,
        max_evaluations: int = 60,
        scan_points: int = 9,
        starts: int = 2,
        prior_weight: float = 0.01,
        min_sensitivity: float = 0.01,
        progress: Callable[[str, int], None] | None = None,
        jobs: int = 1,
        scheduler: Any = None,
    ) -> None:
        self.system = system
        self.free = free
        self.bootstrap = bootstrap
        self.seed = seed
        self.min_sigma = min_sigma
        self.max_interval_ratio = max_interval_ratio
        self.max_evaluations = max_evaluations
        self.scan_points = scan_points
        self.starts = starts
        self.prior_weight = prior_weight
        self.min_sensitivity = min_sensitivity
        self.progress = progress
        self.jobs = jobs
        self.scheduler = scheduler

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The settings given to the constructor (scikit-learn's estimator contract, so
        that ``sklearn.base.clone`` and parameter searches can copy a calibrator)."""
        return {name: getattr(self, name) for name in _SETTINGS}

    def set_params(self, **settings: Any) -> ProfileCalibrator:
        """Change settings (checked when :meth:`fit` runs, as the constructor's are)."""
        unknown = sorted(set(settings) - set(_SETTINGS))
        if unknown:
            raise SimfsError(f"calibrator: {', '.join(unknown)}: not a setting (expected {', '.join(_SETTINGS)})")
        for name, value in settings.items():
            setattr(self, name, value)
        return self

    # -- fitting ------------------------------------------------------------------------
    def fit(self, measurements: pd.DataFrame) -> ProfileCalibrator:
        check_bootstrap(self.bootstrap, "bootstrap")
        check_seed(self.seed, "seed")
        check_jobs(self.jobs, self.scheduler, "calibrate")
        check_starts(self.starts, "starts")
        self._check_settings()
        self._evaluations = 0
        profile = self.system if isinstance(self.system, Profile) else load_profile(self.system)
        parameters = declared_free_parameters(profile, self.free)
        for parameter in parameters:
            # Checked for a fit only: a what-if (--set) may go beyond the bounds.  A fitted
            # value on a bound is written with 6 significant digits, which may round past it.
            if not parameter.lower * (1 - 1e-5) <= parameter.prior <= parameter.upper * (1 + 1e-5):
                raise ProfileError(
                    f"{profile.origin}: {parameter.name} = {parameter.prior:g} lies outside its bounds in "
                    f"[calibration.free] [{parameter.lower:g}, {parameter.upper:g}]: widen them or change the value"
                )
        # The profile as given is built once first: a mistake in it is then reported against
        # the file, not against the first trial's values (shown as --set overrides).
        system_from_profile(profile)
        _warn_of_other_systems(measurements, profile)
        points, skipped = self._plan(measurements, profile)
        if not points:
            raise SimfsError(
                f"calibrate: none of the {len(measurements)} measurements can be simulated "
                "(the warnings say why for each)"
            )
        measured = np.array([p.measured for p in points])
        for point, value in zip(points, measured):
            # The ingest refuses such values; a table built in Python may still hold one,
            # and its log would be NaN deep inside the solver.
            if not (math.isfinite(value) and value > 0):
                source = measurements.loc[point.index, "source"]
                raise SimfsError(f"calibrate: {source}: measured value {value!r}: expected a positive finite number")
        stated = np.array([p.uncertainty for p in points])
        weights = np.where(np.isfinite(stated) & (stated > 0), 1.0 / np.where(stated > 0, stated, 1.0), 1.0)
        weights = np.where(np.isinf(stated), 0.0, weights)  # an invalid (infinite-uncertainty) point has no say

        lower = np.log([p.lower for p in parameters])
        upper = np.log([p.upper for p in parameters])
        prior = np.clip(np.log([p.prior for p in parameters]), lower + 1e-6, upper - 1e-6)

        # A simulation is deterministic in its parameters, and the searches come back to
        # points they have simulated (each solve starts where a scan ended, the answer is
        # predicted again at the end): about four in ten evaluations of a fit repeat one.
        predicted_at: dict[bytes, np.ndarray] = {}

        def predict(x: np.ndarray) -> np.ndarray:
            key = np.asarray(x, dtype=float).tobytes()
            if key not in predicted_at or not self._remember_simulations:
                predicted_at[key] = self._predict(profile, parameters, np.exp(x), points)
            return predicted_at[key].copy()

        def residuals(x: np.ndarray, target: np.ndarray) -> np.ndarray:
            return _residuals(predict(x), target, weights, x, prior, self.prior_weight)

        def solve(x0: np.ndarray):
            return least_squares(
                residuals, x0, bounds=(lower, upper), args=(measured,), diff_step=1e-3, max_nfev=self.max_evaluations
            )

        def sensitivities(result) -> np.ndarray:
            """Largest |d log prediction / d log parameter| over the data, per parameter."""
            data_jacobian = result.jac[: len(points)] / np.where(weights > 0, weights, 1.0)[:, None]
            return np.abs(data_jacobian).max(axis=0)

        result, start_costs = None, {}
        for name, origin in self._origins(prior, lower, upper).items():
            start = self._best_start(residuals, origin, lower, upper, measured)
            reached = self._release_flat(solve(start), solve, residuals, sensitivities, lower, upper, measured)
            start_costs[name] = float(reached.cost)
            if result is None or reached.cost < result.cost:
                result = reached
        fitted = np.exp(result.x)
        predicted = predict(result.x)
        log_ratio = np.log(predicted / measured)
        rms = float(np.sqrt(np.mean(log_ratio**2)))

        sensitivity = sensitivities(result)
        flat = sensitivity < self.min_sensitivity
        model = _Model(profile, parameters, points, weights, prior, self.prior_weight)
        samples = self._bootstrap(model, result.x, lower, upper, measured, stated, rms)
        intervals: dict[str, tuple[float, float] | None] = {}
        for i, parameter in enumerate(parameters):
            if flat[i]:
                # The data say nothing about it: anything within its bounds fits as well.
                intervals[parameter.name] = (parameter.lower, parameter.upper)
            elif samples.size:
                intervals[parameter.name] = percentile_interval(samples[:, i], float(fitted[i]))
            else:
                intervals[parameter.name] = None  # no bootstrap: no interval, not a NaN one

        self.parameters_ = parameters
        self.params_ = {p.name: float(v) for p, v in zip(parameters, fitted)}
        self.intervals_ = intervals
        self.bootstrap_samples_ = samples
        self.result_: OptimizeResult = result
        #: Starting point (by name, in the order searched) -> the cost its search reached.
        self.starts_ = start_costs
        self.points_ = points
        self.skipped_ = skipped
        self.profile_ = profile
        self.residuals_ = self._residual_table(measurements, points, measured, predicted)
        self.rms_log_error_ = rms
        self.sensitivity_ = {p.name: float(v) for p, v in zip(parameters, sensitivity)}
        self.identifiable_ = self._check_identifiability(parameters, flat, fitted, intervals)
        self._warn_misfit(stated)
        return self

    def _warn_misfit(self, stated: np.ndarray) -> None:
        """One warning naming how many training points the fit leaves beyond their
        uncertainty (:data:`MISFIT_SIGMAS`, at least :data:`MISFIT_FLOOR`), and the worst."""
        sigma = np.where(np.isfinite(stated) & (stated > 0), stated, 0.0)
        log_error = self.residuals_["log_ratio"].to_numpy()
        apart = np.abs(log_error) > np.maximum(MISFIT_SIGMAS * sigma, MISFIT_FLOOR)
        apart &= ~np.isinf(stated)  # a point given no say (infinite uncertainty) is not missed
        if not apart.any():
            return
        worst = int(np.argmax(np.where(apart, np.abs(log_error), -1.0)))
        row = self.residuals_.iloc[worst]
        warnings.warn(
            f"the fit leaves {int(apart.sum())} of {len(apart)} training points beyond their uncertainty and "
            f"20% (worst {row['error_pct']:+.0f}%: {row['source']}): these free parameters cannot match them all; "
            "the residuals are in the report",
            MisfitWarning,
            stacklevel=3,
        )

    @staticmethod
    def _plan(measurements: pd.DataFrame, profile: Profile, *, warn: bool = True) -> tuple[list[Point], pd.DataFrame]:
        """:func:`simfs.predict.plan`, with fio rows planned as the IOR runs they equal
        and those that have none left out with the reason."""
        frame, skipped = _fio_as_ior(measurements, profile, warn)
        points, rest = plan(frame, warn=warn)
        if skipped:
            rest = pd.concat([pd.DataFrame(skipped), rest], ignore_index=True) if len(rest) else pd.DataFrame(skipped)
        return points, rest

    def _origins(self, prior: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> dict[str, np.ndarray]:
        """Where the searches begin, by name (log scale, strictly inside the bounds): see
        ``starts``."""
        origins = {"the profile's values": prior}
        if self.starts >= 2:
            # Inside the bounds, as the prior is kept.
            origins["every free parameter near its upper bound"] = upper - 1e-6
        if self.starts >= 3:
            from scipy.stats import qmc  # only here: scipy.stats takes a while to import

            wanted = self.starts - 2
            # Sobol points come in sets of a power of two: the first ``wanted`` of the smallest.
            sobol = qmc.Sobol(len(prior), scramble=True, seed=self.seed)
            design = sobol.random_base2(max(0, math.ceil(math.log2(wanted))))[:wanted]
            for number, point in enumerate(np.clip(design, 1e-3, 1 - 1e-3), start=1):
                origins[f"Sobol point {number}"] = lower + (upper - lower) * point
        return origins

    def _best_start(self, residuals, origin, lower, upper, measured) -> np.ndarray:
        best = origin.copy()
        best_cost = float(np.sum(residuals(best, measured) ** 2))
        if self.scan_points < 2:
            return best
        for sweep in range(2):
            # The second sweep visits the midpoints of the first one's grid: a limit that
            # binds only between two grid points (e.g. exactly where another one starts
            # to) is not missed.
            for i in range(len(best)):
                grid = np.linspace(lower[i], upper[i], self.scan_points)
                for value in (grid[:-1] + grid[1:]) / 2 if sweep else grid[1:-1]:
                    trial = best.copy()
                    trial[i] = value
                    cost = float(np.sum(residuals(trial, measured) ** 2))
                    if cost < best_cost:
                        best, best_cost = trial, cost
        return best

    def _release_flat(self, result, solve, residuals, sensitivities, lower, upper, measured):
        """A cap that does not bind at the solution has no gradient, so the solver cannot
        find out that it should bind (a copy rate left at a prior above the disks' rate
        when the data say the core limits one node).  For each such parameter, search it
        alone over its bounds with the others held, and solve again from the best point
        if it lowers the cost."""
        for i in np.flatnonzero(sensitivities(result) < self.min_sensitivity):
            best, best_cost = result.x, 2 * result.cost
            for value in np.linspace(lower[i], upper[i], 4 * max(self.scan_points, 2) + 1)[1:-1]:
                trial = result.x.copy()
                trial[i] = value
                cost = float(np.sum(residuals(trial, measured) ** 2))
                if cost < best_cost * (1 - 1e-9):
                    best, best_cost = trial, cost
            if best is not result.x:
                retried = solve(best)
                if retried.cost < result.cost:
                    result = retried
        return result

    def _predict(
        self, profile: Profile, parameters: list[FreeParameter], values: np.ndarray, points: list[Point]
    ) -> np.ndarray:
        if self.progress is not None:
            self._evaluations += 1
            self.progress("fit", self._evaluations)
        return predict_points(profile, parameters, values, points)

    def _bootstrap(self, model: _Model, x, lower, upper, measured, stated, rms) -> np.ndarray:
        if self.bootstrap == 0:
            return np.empty((0, len(x)))
        rng = np.random.default_rng(self.seed)
        sigma = np.where(np.isfinite(stated) & (stated > 0), stated, max(rms, self.min_sigma))
        sigma = np.where(np.isinf(stated), 0.0, sigma)
        # Every draw first, in order: the refits then run anywhere, in any order.
        targets = [measured * np.exp(rng.normal(0.0, sigma)) for _ in range(self.bootstrap)]
        tasks = [(model, x, lower, upper, noisy, self.max_evaluations) for noisy in targets]

        def progress(done: int, total: int) -> None:
            if self.progress is not None:
                self.progress("bootstrap", done)

        return np.array(map_ordered(_refit, tasks, self.jobs, self.scheduler, progress))

    def _check_identifiability(self, parameters, flat, fitted, intervals) -> dict[str, bool | None]:
        identifiable = {}

        def sensitivity_of(i: int) -> float:
            return self.sensitivity_[parameters[i].name]

        for i, parameter in enumerate(parameters):
            interval = intervals[parameter.name]
            reason = None
            if flat[i]:
                reason = (
                    f"no measurement depends on it (largest sensitivity {sensitivity_of(i):.2g}); "
                    "it stays near its prior value"
                )
            elif interval is not None and interval[0] > 0 and interval[1] / interval[0] > self.max_interval_ratio:
                low, high = interval
                reason = f"its 95% interval spans a factor {high / low:.1f} ({low:.3g} to {high:.3g})"
            elif fitted[i] <= parameter.lower * 1.001 or fitted[i] >= parameter.upper * 0.999:
                reason = f"the fit ends on a bound ({fitted[i]:.3g} in [{parameter.lower:.3g}, {parameter.upper:.3g}])"
            # Without an interval nothing says the data pin it down: no verdict either way.
            identifiable[parameter.name] = False if reason else (None if interval is None else True)
            if reason:
                warnings.warn(
                    f"{parameter.name} is not identifiable from these data: {reason}",
                    IdentifiabilityWarning,
                    stacklevel=3,
                )
        return identifiable

    @staticmethod
    def _residual_table(measurements, points, measured, predicted) -> pd.DataFrame:
        rows = measurements.loc[
            [p.index for p in points], ["source", "tool", "workload", "nodes", "ppn", "over", "phase", "metric"]
        ]
        table = rows.reset_index(drop=True)
        table["measured"] = measured
        table["predicted"] = predicted
        table["log_ratio"] = np.log(predicted / measured)
        table["error_pct"] = 100.0 * (predicted / measured - 1.0)
        return table

    def _check_settings(self) -> None:
        """The numeric settings, each named: NaN would switch a check off unseen, a
        fractional evaluation budget left scipy's optimiser spinning."""
        owner = "calibrator"
        check_whole(owner, "max_evaluations", self.max_evaluations, 1, SimfsError)
        check_whole(owner, "scan_points", self.scan_points, 0, SimfsError)  # 0: no scan
        for name in ("min_sigma", "prior_weight", "min_sensitivity"):
            check_finite(owner, name, getattr(self, name), 0, error=SimfsError)
        check_finite(owner, "max_interval_ratio", self.max_interval_ratio, 0, above=True, error=SimfsError)
        if self.free is not None and (
            isinstance(self.free, str) or not self.free or not all(isinstance(name, str) for name in self.free)
        ):
            raise SimfsError(
                f"{owner}: free: expected a list of one or more parameter names (None: every declared one), "
                f"got {self.free!r}"
            )

    # -- using the fit ------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise NotFittedError("this calibrator is not fitted yet: call fit(measurements) first")

    def fitted_profile(self) -> Profile:
        """The profile with the fitted values, and its ``[calibration.follow]`` fields moved with them."""
        self._check_fitted()
        return self.profile_.with_overrides(self.params_ | self.followed_)

    @property
    def followed_(self) -> dict[str, float]:
        """The ``[calibration.follow]`` fields' values for the fitted parameters (those whose
        leader the fit did not find unidentifiable; see :attr:`held_followers_`)."""
        self._check_fitted()
        return followed_values(self.profile_, self.params_, self._unidentified_leaders())

    @property
    def held_followers_(self) -> dict[str, str]:
        """``[calibration.follow]`` fields kept at their profile value -> their leader, which
        the fit found not identifiable: a value the data do not pin down (a create rate run
        far past where the clients' round trips bind) would carry the follower with it."""
        self._check_fitted()
        held = self._unidentified_leaders()
        return {field: leader for field, leader in declared_followers(self.profile_).items() if leader in held}

    def _unidentified_leaders(self) -> frozenset[str]:
        return frozenset(name for name, verdict in self.identifiable_.items() if verdict is False)

    def predict(self, measurements: pd.DataFrame) -> pd.DataFrame:
        """Predicted values for the simulatable rows of ``measurements`` (fitted parameters)."""
        self._check_fitted()
        points, _ = self._plan(measurements, self.profile_, warn=False)
        fitted = self.fitted_profile()
        predictor = Predictor(system_from_profile(fitted), fitted)
        table = measurements.loc[[p.index for p in points]].copy()
        table["predicted"] = [predictor.predict(p) for p in points]
        return table

    @property
    def summary_(self) -> dict[str, Any]:
        self._check_fitted()
        errors = np.abs(self.residuals_["error_pct"])
        return {
            "points": len(self.points_),
            "skipped": len(self.skipped_),
            "rms_log_error": self.rms_log_error_,
            "median_abs_error_pct": float(np.median(errors)),
            "worst_abs_error_pct": float(errors.max()),
        }


def predict_points(profile: Profile, parameters: list[FreeParameter], values: np.ndarray, points: list[Point]):
    """The points' predictions with the free parameters at ``values`` (and their
    ``[calibration.follow]`` fields moved with them)."""
    overrides = {p.name: float(v) for p, v in zip(parameters, values)}
    candidate = profile.with_overrides(overrides | followed_values(profile, overrides))
    predictor = Predictor(system_from_profile(candidate), candidate)
    return np.array([predictor.predict(point) for point in points])


def _residuals(predicted, target, weights, x, prior, prior_weight: float) -> np.ndarray:
    """Weighted log errors, then the weak pull of each parameter towards its prior."""
    data = (np.log(predicted) - np.log(target)) * weights
    return np.concatenate([data, prior_weight * (x - prior)])


class _Model:
    """The fit's residuals as a picklable object: a bootstrap refit may run in another
    process or on a Dask worker."""

    def __init__(self, profile, parameters, points, weights, prior, prior_weight: float) -> None:
        self.profile, self.parameters, self.points = profile, parameters, points
        self.weights, self.prior, self.prior_weight = weights, prior, prior_weight

    def residuals(self, x: np.ndarray, target: np.ndarray) -> np.ndarray:
        predicted = predict_points(self.profile, self.parameters, np.exp(x), self.points)
        return _residuals(predicted, target, self.weights, x, self.prior, self.prior_weight)


def _refit(model: _Model, x, lower, upper, target, max_evaluations: int) -> np.ndarray:
    """One bootstrap refit: the fit to ``target`` from the fitted ``x``; the parameters."""
    refit = least_squares(
        model.residuals, x, bounds=(lower, upper), args=(target,), diff_step=1e-3, max_nfev=max_evaluations
    )
    return np.exp(refit.x)
