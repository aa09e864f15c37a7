"""Partial solves (FluidNetwork, module docstring): re-solving only the flows a change
reaches gives the rates a solve over every flow gives, on random networks, and re-solves
one OST's flows per completion where flows end at their own times on their own OSTs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from simfs.engine import FluidNetwork, Resource


def _thrash(nominal: float, load) -> float:
    # Capacity falls with every flow past the second (seek thrashing in miniature): the
    # capacity of a resource changes when a flow starts or ends on it.
    return nominal / (1 + 0.25 * max(0, load.flow_count - 2))


def _run(scenario: dict, partial: bool) -> tuple[list[float], list[float], FluidNetwork]:
    env = simpy.Environment()
    network = FluidNetwork(env, partial_solves=partial)
    resources = [
        network.add(Resource(f"r{i}", capacity, load_model=_thrash if thrashing else None))
        for i, (capacity, thrashing) in enumerate(scenario["resources"])
    ]
    tag = network.tag("all")
    ends = [math.nan] * len(scenario["flows"])
    moved = [math.nan] * len(scenario["flows"])

    def process(index: int, flow: dict):
        yield env.timeout(flow["start"])
        transfer = network.transfer(
            flow["work"], [(resources[j], w) for j, w in flow["path"]], rate_cap=flow["cap"], tag=tag
        )
        if flow["stop_after"] is None:
            done = yield transfer
            ends[index], moved[index] = done.end_time, flow["work"]
        else:
            result = yield transfer | env.timeout(flow["stop_after"])
            if transfer in result:
                ends[index], moved[index] = transfer.end_time, flow["work"]
            else:
                moved[index] = network.stop(transfer)
                ends[index] = env.now

    def degrade(change: tuple[float, int, float]):
        when, which, capacity = change
        yield env.timeout(when)
        network.set_capacity(resources[which], capacity)

    for index, flow in enumerate(scenario["flows"]):
        env.process(process(index, flow))
    for change in scenario["changes"]:
        env.process(degrade(change))
    env.run()
    return ends, moved, network


@st.composite
def scenarios(draw) -> dict:
    resource_count = draw(st.integers(2, 10))
    resources = [
        (draw(st.sampled_from([50.0, 100.0, 400.0, 1000.0])), draw(st.booleans())) for _ in range(resource_count)
    ]
    flows = []
    for _ in range(draw(st.integers(1, 24))):
        on = draw(st.lists(st.integers(0, resource_count - 1), min_size=0, max_size=3, unique=True))
        cap = draw(st.sampled_from([math.inf, math.inf, 20.0, 75.0]))
        if not on:
            cap = 30.0  # a flow on no resource needs a cap
        flows.append(
            {
                "path": [(j, draw(st.sampled_from([1.0, 0.5, 0.25]))) for j in on],
                "work": draw(st.sampled_from([10.0, 37.0, 100.0, 260.0])),
                "start": draw(st.sampled_from([0.0, 0.0, 0.3, 1.0, 2.5])),
                "cap": cap,
                "stop_after": draw(st.sampled_from([None, None, None, 0.7])),
            }
        )
    changes = [
        (
            draw(st.sampled_from([0.5, 1.5])),
            draw(st.integers(0, resource_count - 1)),
            draw(st.sampled_from([30.0, 500.0])),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    return {"resources": resources, "flows": flows, "changes": changes}


@given(scenarios())
def test_partial_solves_give_the_rates_a_full_solve_gives(scenario):
    ends, moved, partial = _run(scenario, partial=True)
    full_ends, full_moved, full = _run(scenario, partial=False)
    assert ends == pytest.approx(full_ends, rel=1e-7, abs=1e-9)
    assert moved == pytest.approx(full_moved, rel=1e-7, abs=1e-9)
    assert partial.stats.served == pytest.approx(full.stats.served, rel=1e-7, abs=1e-9)
    tag = partial.tags["all"]
    assert partial.stats.limited_time[tag] == pytest.approx(full.stats.limited_time[tag], rel=1e-7, abs=1e-9)
    assert partial.stats.partial_solves <= partial.stats.solves
    assert full.stats.partial_solves == 0


def test_flows_ending_on_their_own_osts_re_solve_one_ost_at_a_time():
    # 40 clients, each with its own 1GbE NIC (125 MB/s), write files of distinct sizes
    # onto 4 OSTs (10 files each) of 200 MB/s: every OST is the bottleneck of its 10
    # files, and each completion changes only its own OST's share.
    def run(partial: bool) -> tuple[FluidNetwork, list]:
        env = simpy.Environment()
        network = FluidNetwork(env, partial_solves=partial)
        osts = [network.add(Resource(f"ost{i}", 200e6)) for i in range(4)]
        nics = [network.add(Resource(f"nic{i}", 125e6)) for i in range(40)]
        flows = [network.transfer(size, [(nics[i], 1.0), (osts[i % 4], 1.0)]) for i, size in enumerate(sizes)]
        env.run()
        return network, flows

    sizes = [(1 + index) * 16e6 for index in range(40)]
    network, flows = run(partial=True)
    full, full_flows = run(partial=False)
    assert [f.end_time for f in flows] == pytest.approx([f.end_time for f in full_flows], rel=1e-9)
    # The same solves (one per distinct completion time), most of them partial, each over
    # the 10 or fewer files of one OST: under a third of the flows a full solve handles.
    assert network.stats.solves == full.stats.solves
    assert network.stats.partial_solves >= 0.75 * network.stats.solves
    assert network.stats.flows_solved < full.stats.flows_solved / 3
    # Hand check of the first completion: OST 0 shares 200 MB/s among 10 files, so the
    # 16 MB file ends at 16e6 / 20e6 = 0.8 s.
    assert flows[0].end_time == pytest.approx(0.8)
    # Each OST moves its files' bytes at 200 MB/s, with nothing idle until its last
    # file, which runs alone, limited by its 125 MB/s NIC.
    for ost_index in range(4):
        own = [flows[i] for i in range(ost_index, 40, 4)]
        total = sum(sizes[ost_index::4])
        last, before = own[-1], own[-2]
        assert last.end_time > before.end_time
        # Until the second-to-last file ends the OST was full: bytes moved by then.
        moved_by_then = before.end_time * 200e6
        rest = total - moved_by_then
        assert last.end_time == pytest.approx(before.end_time + rest / 125e6)


def test_a_shared_link_the_new_flow_would_fill_joins_the_solve_instead_of_every_flow():
    # A1 and A2 share ost0 (150), B has ost1 (50), all three cross a fabric link of 210
    # that they leave 10 short of full; six other flows run on links of their own.  C
    # starts on ost2 (100) and the fabric: alone, the sub-problem would give C the 10 left
    # and fill the fabric, so the fabric joins its four flows and they are solved again
    # (4 of 10 flows): the fabric's fair share is 52.5, B keeps its 50, the others share
    # the remaining 160 (53.33 each).
    def run(partial: bool) -> tuple[FluidNetwork, dict]:
        env = simpy.Environment()
        network = FluidNetwork(env, partial_solves=partial)
        ost0, ost1, ost2 = (
            network.add(Resource(name, capacity))
            for name, capacity in (("ost0", 150.0), ("ost1", 50.0), ("ost2", 100.0))
        )
        fabric = network.add(Resource("fabric", 210.0))
        own = [network.add(Resource(f"own{index}", 10.0)) for index in range(6)]
        flows = {
            "A1": network.transfer(1e4, [(ost0, 1.0), (fabric, 1.0)]),
            "A2": network.transfer(1e4, [(ost0, 1.0), (fabric, 1.0)]),
            "B": network.transfer(1e4, [(ost1, 1.0), (fabric, 1.0)]),
            **{f"D{index}": network.transfer(1e4, [(link, 1.0)]) for index, link in enumerate(own)},
        }

        def later():
            yield env.timeout(1.0)
            flows["C"] = network.transfer(1e4, [(ost2, 1.0), (fabric, 1.0)])

        env.process(later())
        env.run(until=2.0)
        by_slot = {key: float(network._slot_rate[flow.slot]) for key, flow in flows.items()}
        return network, by_slot

    partial, rates = run(partial=True)
    full, full_rates = run(partial=False)
    assert rates["C"] == pytest.approx(160 / 3) and rates["A1"] == pytest.approx(160 / 3)
    assert rates["B"] == pytest.approx(50.0)
    assert rates == pytest.approx(full_rates, rel=1e-9)
    # Two solves: the first has no earlier state to start from and solves all nine flows;
    # the second, partial, the four on the fabric.
    assert partial.stats.solves == 2 and partial.stats.partial_solves == 1
    assert partial.stats.flows_solved == 9 + 4


@given(st.lists(st.integers(0, 30), max_size=60))
def test_distinct_keeps_each_value_once(values):
    from simfs.engine.network import _distinct

    scratch = np.zeros(31, dtype=np.int64)
    distinct = _distinct(np.array(values, dtype=np.int64), scratch)
    assert sorted(distinct.tolist()) == sorted(set(values))


@given(st.lists(st.integers(0, 999), min_size=1, max_size=80))
def test_renumbering_a_sub_problem_s_resources_is_np_unique(resources):
    env = simpy.Environment()
    network = FluidNetwork(env)
    for index in range(1000):
        network.add(Resource(f"r{index}", 1.0))
    network._ensure_resource_arrays()
    values = np.array(resources, dtype=np.int64)
    used, position = network._renumber(values)
    expected_used, expected_position = np.unique(values, return_inverse=True)
    assert used.tolist() == expected_used.tolist() and position.tolist() == expected_position.tolist()
    assert not network._component_mark.any()  # left clear for the next search
