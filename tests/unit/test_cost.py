"""simfs.cost: the estimate that decides whether a run is refused before it starts."""

from __future__ import annotations

import pytest

import simfs
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
    with pytest.raises(ValueError, match="node_copy_Bps and node_link_Bps"):
        cost.estimate(4, 1, [], 1, 10, False, node_link_Bps=0.0)
    with pytest.raises(ValueError, match="node_copy_Bps and node_link_Bps"):
        cost.estimate(4, 1, [], 1, 10, False, node_copy_Bps=float("nan"))


STRIDED_10MB = "ior -a MPIIO -w -t 10000000 -b 10000000 -s 100000"


def _request_writes(workload: str, nodes: int, ppn: int = 4, system: str = "roadrunner-panfs-fitted") -> int:
    built = load_system(system, {})
    return estimate_cost(built, load_workload(workload), Experiment(nodes=nodes, ppn=ppn)).request_writes


def test_a_deadline_bounds_the_request_level_writes_by_what_a_node_can_move():
    # LANL MPI-IO Test, N-1 strided 10 MB records for 2 minutes: 75 nodes x 4 ranks took
    # 14 s of CPU, where 100,000 records per rank were estimated at 3 hours.
    client = load_system("roadrunner-panfs-fitted", {}).client
    copied = int(client.cores * client.copy_write_Bps * 2 * 120 // 10_000_000)  # buffered: the copy
    sent = int(client.network.bandwidth_Bps * 2 * 120 // 10_000_000)  # O_DIRECT: the link
    assert _request_writes(STRIDED_10MB, 75) == 300 * 100_000  # no deadline: every record
    assert _request_writes(STRIDED_10MB + " -D 120", 75) == 75 * copied + 300
    assert _request_writes(STRIDED_10MB + " -D 120 --posix.odirect", 75) == 75 * sent + 300
    # A deadline longer than every record takes changes nothing.
    assert _request_writes("ior -a MPIIO -w -t 10000000 -b 10000000 -s 10 -D 120", 75) == 300 * 10
    estimate = estimate_cost(
        load_system("roadrunner-panfs-fitted", {}), load_workload(STRIDED_10MB + " -D 120"), Experiment(nodes=75, ppn=4)
    )
    cost.check(estimate)  # was refused (about 3 hours)


@pytest.mark.parametrize("direct", ["", " --posix.odirect"])
def test_the_deadline_bound_holds_on_a_run(direct):
    # What the run does, against the bound: a shared file of 4 MiB records from 2 nodes of
    # crtdc-lfs3 for 1 s.
    workload = "ior -a POSIX -w -t 4m -b 4m -s 100000 -D 1" + direct
    result = simfs.simulate("crtdc-lfs3", workload, nodes=2, ppn=4)
    made = int(result.phases.iloc[0]["bytes"]) // 4_194_304
    bound = _request_writes(workload, 2, system="crtdc-lfs3")
    assert result.phases.iloc[0]["mode"] == "request"
    assert 0 < made <= bound < 8 * 100_000
