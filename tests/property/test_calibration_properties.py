"""Calibration round trips: data simulated by simfs with known parameters are fitted back.

A small system keeps each fit to about a second: 2 OSS x 2 single-disk OSTs, 10GbE
clients.  The measurement design makes both free parameters matter: a single-node read
over all 4 OSTs is bound by one core's read copy rate (copy_read < 4 x disk), and a
16-rank write is bound by the disks.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import simfs
from simfs.calibrate import ProfileCalibrator
from simfs.calibrate.calibrator import MIN_BOOTSTRAP
from simfs.filesystems import system_from_profile
from simfs.ingest.measurements import Measurement, to_frame
from simfs.predict import Predictor, plan
from simfs.systems.profile import Profile, load_profile

ROOT = Path(__file__).resolve().parents[2]

PROFILE = """
[system]
name = "tiny"
description = "2 OSS, 4 single-disk OSTs, 10GbE clients"
filesystem = "lustre"
[client]
count = 8
cores = 8
memory_bytes = 8e9
network = "10gbe"
copy_write_Bps = 1e9
copy_read_Bps = 1e9
[mds]
create_per_s = 1000.0
open_per_s = 2000.0
close_per_s = 4000.0
[oss]
count = 2
osts_per_oss = 2
network = "10gbe"
cpu_Bps = 5e9
[ost]
raid_level = "raid0"
disks = 1
drive = "hdd"
[ost.hdd]
sustained_Bps = 1.5e8
[lustre]
stripe_count = -1
stripe_size_bytes = 1048576
max_rpcs_in_flight = 8
rpc_size_bytes = 1048576
max_dirty_bytes_per_osc = 33554432
rpc_latency_s = 1e-3
metadata_latency_s = 2e-4
[calibration.free]
"client.copy_read_Bps" = [5.0e7, 2.0e9]
"ost.hdd.sustained_Bps" = [3.0e7, 5.0e8]
"""
DESIGN = [
    ("dd if=f of=/dev/null bs=1M count=400", "read", 1, 1),
    ("dd if=f of=/dev/null bs=1M count=400", "read", 2, 1),
    ("dd if=/dev/zero of=f bs=1M count=400 conv=fsync", "write", 4, 4),
]


def synthetic(copy_read: float, disk: float) -> pd.DataFrame:
    truth = Profile.from_text(PROFILE, "tiny.toml").with_overrides(
        {"client.copy_read_Bps": copy_read, "ost.hdd.sustained_Bps": disk}
    )
    rows = []
    for workload, phase, nodes, ppn in DESIGN:
        value = simfs.simulate(truth, workload, nodes=nodes, ppn=ppn).phases["agg_bw_Bps"].iloc[0]
        rows.append(Measurement("synthetic", "dd", phase, "agg_bw", float(value), workload, nodes, ppn))
    return to_frame(rows)


def calibrator(**kwargs) -> ProfileCalibrator:
    bootstrap = kwargs.pop("bootstrap", MIN_BOOTSTRAP)
    return ProfileCalibrator(Profile.from_text(PROFILE, "tiny.toml"), bootstrap=bootstrap, **kwargs)


@pytest.mark.slow  # four whole fits of 20 refits each: 35 s (the default run's budget, README)
# Three drawn examples (and the one below): each is a whole fit with 20 bootstrap refits.
@settings(max_examples=3, deadline=None)
@given(copy_read=st.floats(8e7, 3.5e8), disk=st.floats(1e8, 3e8))
# Found by hypothesis: the copy rate started at its prior above the disks' rate, where it
# has no gradient, and stayed there (fixed by ProfileCalibrator._release_flat).
@example(copy_read=349979519.0, disk=1e8)
def test_round_trip_recovers_known_parameters(copy_read, disk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrator().fit(synthetic(copy_read, disk))
    truth = {"client.copy_read_Bps": copy_read, "ost.hdd.sustained_Bps": disk}
    for name, value in truth.items():
        low, high = fitted.intervals_[name]
        assert low <= value <= high, (name, value, low, high)
        assert fitted.params_[name] == pytest.approx(value, rel=0.02)
        assert fitted.identifiable_[name]
    assert fitted.rms_log_error_ < 0.01


def test_fit_twice_gives_the_same_result():
    # Without the bootstrap, whose repeatability the next test checks (its samples are
    # the intervals), so that three whole fits stay cheap.
    data = synthetic(2e8, 1.2e8)
    first = calibrator(bootstrap=0).fit(data)
    second = calibrator(bootstrap=0).fit(data)
    assert first.params_ == second.params_
    assert first.intervals_ == second.intervals_
    refit = first.fit(data)  # fitting the same estimator again
    assert refit.params_ == second.params_


def test_a_fit_simulates_each_parameter_point_once(monkeypatch):
    # The searches come back to points they simulated; those answers are remembered, and
    # a fit with the memory is the fit without it: the same parameters, cost and
    # predictions, from fewer simulations.
    from simfs.calibrate import calibrator as calibrator_module

    simulated = []
    real = calibrator_module.predict_points

    def counted(profile, parameters, values, points):
        simulated.append(np.asarray(values).tobytes())
        return real(profile, parameters, values, points)

    monkeypatch.setattr(calibrator_module, "predict_points", counted)
    data = synthetic(2e8, 1.2e8)
    fitted = calibrator(bootstrap=0).fit(data)
    assert len(simulated) == len(set(simulated)) > 10
    remembered = len(simulated)

    simulated.clear()
    monkeypatch.setattr(ProfileCalibrator, "_remember_simulations", False)
    forgetful = calibrator(bootstrap=0).fit(data)
    assert len(simulated) > remembered  # the same search, every point simulated again
    assert forgetful.params_ == fitted.params_
    assert forgetful.result_.cost == fitted.result_.cost
    assert forgetful.starts_ == fitted.starts_
    assert np.array_equal(forgetful.residuals_["predicted"], fitted.residuals_["predicted"])


@pytest.mark.slow  # three bootstraps: 18 s
def test_same_seed_same_bootstrap_and_seed_matters():
    data = synthetic(2e8, 1.2e8)
    a = calibrator(seed=4).fit(data).bootstrap_samples_
    b = calibrator(seed=4).fit(data).bootstrap_samples_
    c = calibrator(seed=5).fit(data).bootstrap_samples_
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.slow  # a Dask cluster and processes: 16 s
def test_bootstrap_refits_in_processes_or_on_dask_give_the_same_intervals():
    # The noise is drawn up front from the seed; each refit is independent, so where it
    # runs changes nothing.
    data = synthetic(2e8, 1.2e8)
    serial = calibrator(seed=4).fit(data)
    done = []
    two = calibrator(seed=4, jobs=2, progress=lambda stage, n: done.append((stage, n))).fit(data)
    assert np.array_equal(two.bootstrap_samples_, serial.bootstrap_samples_)
    assert two.intervals_ == serial.intervals_
    assert [n for stage, n in done if stage == "bootstrap"] == list(range(1, MIN_BOOTSTRAP + 1))
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = calibrator(seed=4, scheduler=client).fit(data)
    assert np.array_equal(on_dask.bootstrap_samples_, serial.bootstrap_samples_)


def test_a_parameter_no_measurement_touches_is_flagged():
    from simfs.calibrate import IdentifiabilityWarning

    data = synthetic(2e8, 1.2e8)
    writes_only = data[data["phase"] == "write"].reset_index(drop=True)
    with pytest.warns(IdentifiabilityWarning, match="client.copy_read_Bps is not identifiable"):
        fitted = calibrator().fit(writes_only)
    assert not fitted.identifiable_["client.copy_read_Bps"]
    assert fitted.intervals_["client.copy_read_Bps"] == (5.0e7, 2.0e9)
    assert fitted.identifiable_["ost.hdd.sustained_Bps"]


def test_predict_needs_a_fit_and_then_uses_it():
    data = synthetic(2e8, 1.2e8)
    unfitted = calibrator()
    with pytest.raises(simfs.SimfsError, match="not fitted"):
        unfitted.predict(data)
    predicted = calibrator(bootstrap=0).fit(data).predict(data)
    assert np.allclose(predicted["predicted"], data["value"], rtol=0.01)


# -- several starting points ---------------------------------------------------------------
def _create_and_stat_runs(profile: Profile) -> pd.DataFrame:
    """mdtest creates and stats of 4 nodes x 8 ranks, as the IO500 study's generic Lustre
    gives them at 2.5e5 creates/s and 1e7 stats/s (the close of a create follows the stat
    rate), with the stat rate measured 1.3 times what the model's clients can issue (as
    DDN's AI400, IO500 submission 44, measured more stats than the generic clients
    reach), and the spreads of runs of several iterations: creates steady (1%), stats
    not (20%)."""
    ratio = profile.number("mds.close_per_s") / profile.number("mds.stat_per_s")
    truth = profile.with_overrides({"mds.create_per_s": 2.5e5, "mds.stat_per_s": 1e7, "mds.close_per_s": 1e7 * ratio})
    rows = [
        ("file_creation", "mdtest -C -F -n 20 -u -L", 1.0, 0.01),
        ("file_stat", "mdtest -T -F -n 20 -u -L", 1.3, 0.2),
    ]
    table = pd.DataFrame(
        [
            dict(
                source=f"ai400-like:{i}",
                system="",
                tool="mdtest",
                workload=workload,
                nodes=4,
                ppn=8,
                settings="",
                over="",
                phase=phase,
                metric="ops_rate",
                value=1.0,
                unit="op/s",
                uncertainty=uncertainty,
            )
            for i, (phase, workload, _, uncertainty) in enumerate(rows)
        ]
    )
    predictor = Predictor(system_from_profile(truth), truth)
    points, _ = plan(table, warn=False)
    table["value"] = [predictor.predict(point) * factor for point, (_, _, factor, _) in zip(points, rows)]
    return table


def test_a_second_start_leaves_the_basin_where_another_limit_took_the_measurement():
    profile = load_profile(ROOT / "calibration" / "io500" / "generic-lustre.toml")
    runs = _create_and_stat_runs(profile)
    free = ["mds.create_per_s", "mds.stat_per_s"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = ProfileCalibrator(profile, free=free, bootstrap=0, scan_points=5, starts=1).fit(runs)
        two = ProfileCalibrator(profile, free=free, bootstrap=0, scan_points=5, starts=2).fit(runs)
    # From the profile's values the scan raises the create rate first, and the creates (the
    # steadier, weightier row) are then matched by the close at a stat rate far below the
    # measured stats: more than twice the miss of the fit from two starts.  (Where the
    # first search stops depends on the machine: below -70% on the Intel Xeon this test
    # was written on, -66.9% on an AMD EPYC without AVX-512, the same with numpy 2.3 and
    # 2.4 and scipy 1.16 and 1.17, so not the packages; numpy's AVX-512 exp and log are
    # the likely difference.)
    one_errors = dict(zip(one.residuals_["phase"], one.residuals_["error_pct"]))
    # From near the upper bounds each rate takes its own measurement: the stats as far
    # as the clients allow (1 / 1.3 of the measured: -23%), the creates by the create rate.
    two_errors = dict(zip(two.residuals_["phase"], two.residuals_["error_pct"]))
    assert one.params_["mds.stat_per_s"] < 1e6 and one_errors["file_stat"] < 2 * two_errors["file_stat"]
    profile_start, upper_start = "the profile's values", "every free parameter near its upper bound"
    assert list(two.starts_) == [profile_start, upper_start] and list(one.starts_) == [profile_start]
    assert two.starts_[upper_start] < two.starts_[profile_start] == pytest.approx(one.starts_[profile_start])
    assert two.params_["mds.stat_per_s"] > 5e6 and -30 < two_errors["file_stat"] < -20
    assert abs(two_errors["file_creation"]) < 5
    assert two.params_["mds.create_per_s"] == pytest.approx(2.5e5, rel=0.1)


def test_sobol_starts_are_inside_the_bounds_and_drawn_from_the_seed():
    profile = Profile.from_text(PROFILE, "tiny.toml")
    lower, upper, prior = np.log([1e2, 1e3]), np.log([1e6, 1e9]), np.log([1e4, 1e5])

    def origins(seed: int) -> list[np.ndarray]:
        return list(ProfileCalibrator(profile, starts=5, seed=seed)._origins(prior, lower, upper).values())

    first = origins(0)
    assert len(first) == 5 and np.array_equal(first[0], prior) and np.allclose(first[1], upper)
    assert all(np.all(lower < origin) and np.all(origin < upper) for origin in first)
    assert all(np.array_equal(a, b) for a, b in zip(first, origins(0)))
    assert not np.array_equal(first[2], origins(1)[2])
