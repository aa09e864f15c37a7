"""Imbalance and variability: distributions know their means, seeds decide everything,
and unsynchronised starts exaggerate summed rates as the CRT-DC seed saw."""

import math

import numpy as np
import pytest

import simfs
from simfs.errors import ProfileError, SimfsError
from simfs.filesystems.core.variability import LogNormalFactor, Variability


@pytest.mark.parametrize("cv", [0.05, 0.3, 1.0])
def test_lognormal_factor_has_mean_one_and_the_asked_spread(cv):
    factor = LogNormalFactor(cv)
    assert factor.mean == 1.0
    samples = factor.sample(np.random.default_rng(5), 400_000)
    standard_error = samples.std() / math.sqrt(len(samples))
    assert abs(samples.mean() - 1.0) < 4 * standard_error
    assert samples.std() / samples.mean() == pytest.approx(cv, rel=0.05)


def test_no_variability_is_exactly_one():
    rng = np.random.default_rng(0)
    assert LogNormalFactor(0.0).sample(rng) == 1.0
    assert (Variability().node_factors(rng, 8) == 1.0).all()
    assert not Variability().any


def test_stragglers_are_the_asked_fraction_and_slowdown():
    factors = Variability(straggler_fraction=0.25, straggler_slowdown=4).node_factors(np.random.default_rng(2), 4000)
    slow = factors < 0.5
    assert slow.mean() == pytest.approx(0.25, abs=0.03)
    assert factors[slow] == pytest.approx(0.25)


def test_the_same_seed_gives_the_same_spread_and_another_seed_another():
    spread = {"variability.node_cv": 0.3, "variability.target_cv": 0.2}
    run = lambda seed: simfs.simulate(  # noqa: E731
        "crtdc-lfs3", "ior -F -w -e -t 1m -b 256m", nodes=8, overrides=spread, seed=seed
    ).ranks["close_s"]
    assert run(1).equals(run(1))
    assert not run(1).equals(run(2))


def test_unsynchronised_starts_exaggerate_summed_rates():
    # bonnie++ has no barriers and its aggregate is each rank's own rate summed: ranks that
    # start apart find the servers emptier, and the sum grows while the makespan rate falls
    # (seed 000: "a grossly overestimated aggregate bandwidth").
    workload = "bonnie++ -s 2000 -n 0 -f"
    together = simfs.simulate("crtdc-lfs3-fitted", workload, nodes=16).phases.iloc[0]
    apart = simfs.simulate(
        "crtdc-lfs3-fitted", workload, nodes=16, overrides={"variability.start_jitter_s": 5.0}, seed=1
    ).phases.iloc[0]
    assert apart["agg_bw_Bps"] > 1.3 * together["agg_bw_Bps"]
    assert apart["bw_Bps"] < together["bw_Bps"]


def test_repeat_reports_min_median_max_over_seeds():
    table = simfs.repeat("crtdc-lfs3", "ior -F -w -e -t 1m -b 128m", 5, nodes=4, overrides={"variability.node_cv": 0.3})
    row = table.iloc[0]
    assert row["repeats"] == 5
    assert row["agg_bw_Bps_min"] < row["agg_bw_Bps_median"] < row["agg_bw_Bps_max"]
    with pytest.raises(SimfsError, match="repeats"):
        simfs.repeat("crtdc-lfs3", "ior -F -w -t 1m -b 1m", 0)


@pytest.mark.parametrize(
    "field, value",
    [
        ("variability.node_cv", -0.1),
        ("variability.straggler_fraction", 1.5),
        ("variability.straggler_slowdown", 0.5),
        ("variability.start_jitter_s", -1.0),
        ("variability.service_cv", "big"),
    ],
)
def test_bad_variability_fields_are_named(field, value):
    with pytest.raises(ProfileError, match=field):
        simfs.load_system("crtdc-lfs3", {field: value})
