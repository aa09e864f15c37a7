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
(at least ``min_sigma``); the interval is the 2.5-97.5 percentile range.  With a handful
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

A weak prior (``prior_weight``, a log-scale ridge towards the profile's value) is added to
the residuals: it does not move a parameter the data inform, but it stops one they barely
touch from drifting along a nearly flat valley to an absurd value.

Identifiability.  A parameter whose largest sensitivity ``|d log(prediction) / d log(p)|``
over the measurements is below ``min_sensitivity`` (no measurement really depends on it)
keeps about its prior and raises :class:`IdentifiabilityWarning`; so does one whose
interval spans more than a factor ``max_interval_ratio`` or that ends on a bound.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeResult, least_squares

from simfs.calibrate.free import FreeParameter, declared_free_parameters
from simfs.errors import SimfsError
from simfs.filesystems import system_from_profile
from simfs.predict import Point, Predictor, plan
from simfs.systems.profile import Profile, load_profile


class IdentifiabilityWarning(UserWarning):
    """A free parameter the measurements do not pin down."""


class ProfileCalibrator:
    """Least-squares calibration of a profile's ``[calibration.free]`` parameters.

    Parameters
    ----------
    system: built-in name, profile path, or :class:`Profile`.
    free: names of the free parameters to fit (default: all declared).
    bootstrap: number of bootstrap refits for the intervals (0: no intervals).
    seed: seed of the bootstrap noise.
    min_sigma: floor of the relative noise given to measurements without an uncertainty.
    max_interval_ratio: upper/lower interval ratio above which a parameter is poorly identified.
    max_evaluations: budget of model evaluations per fit.
    scan_points: grid size of the coordinate scan that finds the starting point (0: none).
    prior_weight: weight of the log-scale pull towards the profile's value.
    min_sensitivity: below this largest |d log prediction / d log parameter|, a parameter
        is not identifiable.
    """

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
        prior_weight: float = 0.01,
        min_sensitivity: float = 0.01,
    ) -> None:
        self.system = system
        self.free = free
        self.bootstrap = bootstrap
        self.seed = seed
        self.min_sigma = min_sigma
        self.max_interval_ratio = max_interval_ratio
        self.max_evaluations = max_evaluations
        self.scan_points = scan_points
        self.prior_weight = prior_weight
        self.min_sensitivity = min_sensitivity

    # -- fitting ------------------------------------------------------------------------
    def fit(self, measurements: pd.DataFrame) -> ProfileCalibrator:
        if self.bootstrap < 0:
            raise SimfsError(f"bootstrap: expected a non-negative count, got {self.bootstrap}")
        profile = self.system if isinstance(self.system, Profile) else load_profile(self.system)
        parameters = declared_free_parameters(profile, self.free)
        points, skipped = plan(measurements)
        if not points:
            raise SimfsError("calibrate: none of the measurements can be simulated (see the warnings)")
        measured = np.array([p.measured for p in points])
        if (measured <= 0).any():
            raise SimfsError("calibrate: measured values must be positive")
        stated = np.array([p.uncertainty for p in points])
        weights = np.where(np.isfinite(stated) & (stated > 0), 1.0 / np.where(stated > 0, stated, 1.0), 1.0)
        weights = np.where(np.isinf(stated), 0.0, weights)  # an invalid (infinite-uncertainty) point has no say

        lower = np.log([p.lower for p in parameters])
        upper = np.log([p.upper for p in parameters])
        prior = np.clip(np.log([p.prior for p in parameters]), lower + 1e-6, upper - 1e-6)

        def predict(x: np.ndarray) -> np.ndarray:
            return self._predict(profile, parameters, np.exp(x), points)

        def residuals(x: np.ndarray, target: np.ndarray) -> np.ndarray:
            data = (np.log(predict(x)) - np.log(target)) * weights
            return np.concatenate([data, self.prior_weight * (x - prior)])

        start = self._best_start(residuals, prior, lower, upper, measured)

        def solve(x0: np.ndarray):
            return least_squares(
                residuals, x0, bounds=(lower, upper), args=(measured,), diff_step=1e-3, max_nfev=self.max_evaluations
            )

        def sensitivities(result) -> np.ndarray:
            """Largest |d log prediction / d log parameter| over the data, per parameter."""
            data_jacobian = result.jac[: len(points)] / np.where(weights > 0, weights, 1.0)[:, None]
            return np.abs(data_jacobian).max(axis=0)

        result = solve(start)
        result = self._release_flat(result, solve, residuals, sensitivities, lower, upper, measured)
        fitted = np.exp(result.x)
        predicted = predict(result.x)
        log_ratio = np.log(predicted / measured)
        rms = float(np.sqrt(np.mean(log_ratio**2)))

        sensitivity = sensitivities(result)
        flat = sensitivity < self.min_sensitivity
        samples = self._bootstrap(residuals, result.x, lower, upper, measured, stated, rms)
        intervals = {}
        for i, parameter in enumerate(parameters):
            if flat[i]:
                # The data say nothing about it: anything within its bounds fits as well.
                low, high = parameter.lower, parameter.upper
            elif samples.size:
                low, high = np.percentile(samples[:, i], [2.5, 97.5])
            else:
                low = high = math.nan
            intervals[parameter.name] = (float(low), float(high))

        self.parameters_ = parameters
        self.params_ = {p.name: float(v) for p, v in zip(parameters, fitted)}
        self.intervals_ = intervals
        self.bootstrap_samples_ = samples
        self.result_: OptimizeResult = result
        self.points_ = points
        self.skipped_ = skipped
        self.profile_ = profile
        self.residuals_ = self._residual_table(measurements, points, measured, predicted)
        self.rms_log_error_ = rms
        self.sensitivity_ = {p.name: float(v) for p, v in zip(parameters, sensitivity)}
        self.identifiable_ = self._check_identifiability(parameters, flat, fitted, intervals)
        return self

    def _best_start(self, residuals, prior, lower, upper, measured) -> np.ndarray:
        best = prior.copy()
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
        overrides = {p.name: float(v) for p, v in zip(parameters, values)}
        candidate = profile.with_overrides(overrides)
        predictor = Predictor(system_from_profile(candidate), candidate)
        return np.array([predictor.predict(point) for point in points])

    def _bootstrap(self, residuals, x, lower, upper, measured, stated, rms) -> np.ndarray:
        if self.bootstrap == 0:
            return np.empty((0, len(x)))
        rng = np.random.default_rng(self.seed)
        sigma = np.where(np.isfinite(stated) & (stated > 0), stated, max(rms, self.min_sigma))
        sigma = np.where(np.isinf(stated), 0.0, sigma)
        samples = []
        for _ in range(self.bootstrap):
            noisy = measured * np.exp(rng.normal(0.0, sigma))
            refit = least_squares(
                residuals, x, bounds=(lower, upper), args=(noisy,), diff_step=1e-3, max_nfev=self.max_evaluations
            )
            samples.append(np.exp(refit.x))
        return np.array(samples)

    def _check_identifiability(self, parameters, flat, fitted, intervals) -> dict[str, bool]:
        identifiable = {}

        def sensitivity_of(i: int) -> float:
            return self.sensitivity_[parameters[i].name]

        for i, parameter in enumerate(parameters):
            low, high = intervals[parameter.name]
            reason = None
            if flat[i]:
                reason = (
                    f"no measurement depends on it (largest sensitivity {sensitivity_of(i):.2g}); "
                    "it stays near its prior value"
                )
            elif np.isfinite(low) and low > 0 and high / low > self.max_interval_ratio:
                reason = f"its 95% interval spans a factor {high / low:.1f} ({low:.3g} to {high:.3g})"
            elif fitted[i] <= parameter.lower * 1.001 or fitted[i] >= parameter.upper * 0.999:
                reason = f"the fit ends on a bound ({fitted[i]:.3g} in [{parameter.lower:.3g}, {parameter.upper:.3g}])"
            identifiable[parameter.name] = reason is None
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

    # -- using the fit ------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise SimfsError("this calibrator is not fitted yet: call fit(measurements) first")

    def fitted_profile(self) -> Profile:
        self._check_fitted()
        return self.profile_.with_overrides(self.params_)

    def predict(self, measurements: pd.DataFrame) -> pd.DataFrame:
        """Predicted values for the simulatable rows of ``measurements`` (fitted parameters)."""
        self._check_fitted()
        points, _ = plan(measurements)
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
