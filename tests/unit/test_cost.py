"""simfs.cost: the estimate that decides whether a run is refused before it starts."""

from __future__ import annotations

import pytest

from simfs import cost
from simfs.api import load_system, load_workload
from simfs.errors import ExperimentError
from simfs.experiment import Experiment
from simfs.simulation import estimate_cost

IOR_FPP = "ior -a POSIX -F -t 1m -b 1g"


def lfs5_estimate(clients: int, workload: str = IOR_FPP, **experiment) -> cost.Cost:
    """benchmarks/bench_scale.py's scenario: ten single-rank clients per OST."""
    system = load_system("crtdc-lfs5", {"oss.count": max(1, clients // 40), "client.count": clients})
    return estimate_cost(system, load_workload(workload), Experiment(nodes=clients, **experiment))


def test_file_per_process_runs_cost_what_their_clients_do():
    # Ten clients per OST at every size: a re-solve reaches the flows of a few servers,
    # not every flow in flight, so ten times the clients cost ten times as much.
    small, large = lfs5_estimate(10_000), lfs5_estimate(100_000)
    assert large.seconds == pytest.approx(10 * small.seconds, rel=1e-9)


def test_a_hundred_thousand_clients_are_not_refused(monkeypatch):
    # 196 s of CPU measured (docs/performance.md); the old estimate said 16 hours.
    monkeypatch.setattr(cost, "_memory_bytes", lambda: 25e9)  # this VM's: the run peaked at 1.15 GB
    estimate = lfs5_estimate(100_000)
    assert estimate.seconds < cost.MAX_ESTIMATED_SECONDS / 4
    cost.check(estimate)


def test_one_shared_file_on_a_few_targets_joins_every_flow():
    # Every rank's flow crosses the same four OSTs: a re-solve reaches all of them, so the
    # cost per rank grows with the ranks.
    shared = "ior -a MPIIO -r -t 1m -b 1g"
    small = lfs5_estimate(1_000, shared, stripe_count=4)
    large = lfs5_estimate(10_000, shared, stripe_count=4)
    assert large.seconds > 50 * small.seconds
    assert large.seconds > lfs5_estimate(10_000, IOR_FPP).seconds


def test_a_run_far_beyond_the_limit_is_refused_with_its_estimate():
    estimate = lfs5_estimate(100_000, "ior -a MPIIO -r -t 1m -b 1g", stripe_count=1)
    with pytest.raises(ExperimentError, match=r"this run would take about .* hours .*--force"):
        cost.check(estimate)
    cost.check(estimate, force=True)


def test_the_layout_must_be_at_least_one_stripe_and_server():
    with pytest.raises(ValueError, match="stripe_count and server_count"):
        cost.estimate(4, 1, [], 1, 10, False, stripe_count=0, server_count=2)
