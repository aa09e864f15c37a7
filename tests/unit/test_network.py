"""The fluid network over time, against hand-computed completion times."""

import math

import pytest
import simpy

from simfs.engine import FluidNetwork, Resource
from tests.conftest import run_flows


def test_two_flows_on_one_link():
    # 100 B/s link; 100 B and 300 B start together: both at 50 B/s until the first ends at
    # t=2, then the second alone at 100 B/s for its last 200 B: t = 2 + 2 = 4.
    ends, _ = run_flows([100.0], [{"work": 100, "path": [(0, 1.0)]}, {"work": 300, "path": [(0, 1.0)]}])
    assert ends == pytest.approx([2.0, 4.0])


def test_late_arrival_resolves_rates():
    # First flow alone for 1 s (100 B done), then both share: 200 B left each side at 50.
    ends, _ = run_flows(
        [100.0],
        [{"work": 500, "path": [(0, 1.0)]}, {"work": 200, "path": [(0, 1.0)]}],
        starts=[0.0, 1.0],
    )
    # t=1: first has 400 left, second 200; both at 50 -> second ends at t=5 (first has 200
    # left), then first at 100 -> ends at t=7.
    assert ends == pytest.approx([7.0, 5.0])


def test_striped_file_across_four_osts_behind_one_oss_nic():
    # OSTs 200 B/s each, OSS NIC 500 B/s.  One client writes 1000 B striped over 4 OSTs:
    # OSTs could take 800 B/s, the NIC limits to 500 -> 2 s.  With a second identical
    # client the NIC splits 250 each -> both end at 4 s.
    stripe = [(1, 0.25), (2, 0.25), (3, 0.25), (4, 0.25)]
    capacities = [500.0, 200.0, 200.0, 200.0, 200.0]
    ends, _ = run_flows(capacities, [{"work": 1000, "path": [(0, 1.0), *stripe]}])
    assert ends == pytest.approx([2.0])
    ends, _ = run_flows(capacities, [{"work": 1000, "path": [(0, 1.0), *stripe]}] * 2)
    assert ends == pytest.approx([4.0, 4.0])


def test_striped_file_limited_by_its_osts():
    # Same, NIC 1000 B/s: 4 OSTs x 200 = 800 B/s -> 1000 B in 1.25 s.
    stripe = [(1, 0.25), (2, 0.25), (3, 0.25), (4, 0.25)]
    ends, _ = run_flows([1000.0, 200, 200, 200, 200], [{"work": 1000, "path": [(0, 1.0), *stripe]}])
    assert ends == pytest.approx([1.25])


def test_per_flow_cap():
    ends, _ = run_flows([100.0], [{"work": 100, "path": [(0, 1.0)], "cap": 10.0}, {"work": 450, "path": [(0, 1.0)]}])
    # Capped flow: 10 B/s -> 10 s.  Other: 90 B/s for 450 B -> 5 s.
    assert ends == pytest.approx([10.0, 5.0])


def test_flows_starting_together_cost_one_solve():
    ends, network = run_flows([1000.0], [{"work": 10, "path": [(0, 1.0)]}] * 64)
    # One solve when all 64 start, one when all end together.
    assert network.stats.solves == 2
    assert ends == pytest.approx([0.64] * 64)


def test_zero_work_completes_at_once():
    ends, network = run_flows([1.0], [{"work": 0, "path": [(0, 1.0)]}])
    assert ends == [0.0]
    assert network.stats.solves == 0


def test_capacity_change_midway():
    env = simpy.Environment()
    network = FluidNetwork(env)
    link = network.add(Resource("link", 100.0))
    flow = network.transfer(300, [(link, 1.0)])

    def degrade():
        yield env.timeout(1.0)
        network.set_capacity(link, 50.0)

    env.process(degrade())
    env.run()
    # 100 B in the first second, 200 B at 50 B/s -> 5 s.
    assert flow.end_time == pytest.approx(5.0)


def test_served_work_and_attribution():
    env = simpy.Environment()
    network = FluidNetwork(env)
    link = network.add(Resource("link", 100.0, kind="nic"))
    tag = network.tag("phase")
    network.transfer(100, [(link, 1.0)], tag=tag, rate_cap=20.0)
    network.transfer(100, [(link, 1.0)], tag=tag)
    env.run()
    assert network.stats.served[link.index] == pytest.approx(200)
    # Capped flow: 20 B/s for 5 s, held by its cap (index 0).  The other: 80 B/s for
    # 1.25 s, held by the link.
    limited = network.stats.limited_time[tag]
    assert limited[0] == pytest.approx(5.0)
    assert limited[link.index + 1] == pytest.approx(1.25)


def test_timeline_records_utilisation_and_flow_count():
    env = simpy.Environment()
    network = FluidNetwork(env, record_timeline=True)
    link = network.add(Resource("link", 100.0))
    network.transfer(100, [(link, 1.0)], rate_cap=50.0)
    env.run()
    timeline = network.timeline()
    first = timeline[timeline["time_s"] == 0].iloc[0]
    assert first["utilisation"] == pytest.approx(0.5)
    assert first["flow_count"] == 1


def test_load_dependent_capacity():
    env = simpy.Environment()
    network = FluidNetwork(env)
    # Capacity halves for every extra flow (a crude thrash): 2 flows -> 50 B/s in all.
    disk = network.add(Resource("disk", 100.0, load_model=lambda c, load: c / load.flow_count))
    a = network.transfer(50, [(disk, 1.0)])
    b = network.transfer(50, [(disk, 1.0)])
    env.run()
    assert a.end_time == pytest.approx(2.0)
    assert b.end_time == pytest.approx(2.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"work": -1}, "work"),
        ({"work": math.nan}, "work"),
        ({"rate_cap": 0}, "rate_cap"),
        ({"weight": 0}, "weight"),
    ],
)
def test_flow_validation_names_the_argument(kwargs, message):
    env = simpy.Environment()
    network = FluidNetwork(env)
    link = network.add(Resource("link", 1.0))
    weight = kwargs.pop("weight", 1.0)
    args = {"work": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        network.transfer(args.pop("work"), [(link, weight)], **args)


def test_resource_validation_names_the_argument():
    with pytest.raises(ValueError, match="capacity"):
        Resource("x", 0)
    with pytest.raises(ValueError, match="name"):
        Resource("", 1)


def test_max_min_makespan_is_not_monotone_in_capacity():
    """A documented fact of max-min sharing, not a defect (docs/background/monotonicity.md).

    r0=2, r1=4, r2=3.  A (9 units) crosses r1 and r2; B (4) crosses r0; C (1) crosses r0
    and r1.  With r0=2, C runs at 1 and leaves A 3 units/s: A ends at 3.0.  With r0=3, C
    runs at 1.5, A gets only 2.5 until C ends at 2/3 s, and ends at 3.111 s.
    """
    flows = [
        {"work": 9, "path": [(1, 1.0), (2, 1.0)]},
        {"work": 4, "path": [(0, 1.0)]},
        {"work": 1, "path": [(0, 1.0), (1, 1.0)]},
    ]
    before, _ = run_flows([2.0, 4.0, 3.0], flows)
    after, _ = run_flows([3.0, 4.0, 3.0], flows)
    assert max(before) == pytest.approx(3.0)
    assert max(after) == pytest.approx(3.0 + 1 / 9)


def test_flows_late_in_a_long_run_finish():
    # At t = 1e7 s the clock resolves ~1e-8 s; rounding leaves a rest the clock cannot
    # schedule.  Such a flow must complete, not wake up at `now` forever.
    starts = [1e7, 1e7 + 0.1]
    ends, _ = run_flows(
        [3.6727e6],
        [{"work": 5.1e10 / 3, "path": [(0, 1.0)]}, {"work": 7.3e9 / 7, "path": [(0, 1.0)]}],
        starts=starts,
    )
    total = 5.1e10 / 3 + 7.3e9 / 7
    assert max(ends) == pytest.approx(1e7 + total / 3.6727e6, rel=1e-9)


def test_a_mechanism_named_on_a_path_entry_is_attributed_where_that_entry_binds():
    env = simpy.Environment()
    network = FluidNetwork(env)
    nic = network.add(Resource("client0.nic", 100.0, kind="client-nic"))
    other_nic = network.add(Resource("client1.nic", 100.0, kind="client-nic"))
    disk = network.add(Resource("ost0", 1000.0, kind="ost"))
    tag = network.tag("read")
    # Incast doubles what each byte costs the NIC: 50 units/s, held by the NIC for 2 s.
    network.transfer(100.0, [(nic, 2.0, "tcp_incast"), (disk, 1.0)], tag=tag)
    # The same mechanism named on an entry that does not bind is not attributed: this
    # flow is held by the disk (10 per unit: 95 units/s beside the first flow's 50).
    other = network.tag("write")
    network.transfer(100.0, [(other_nic, 1.01, "tcp_incast"), (disk, 10.0)], tag=other)
    env.run()
    reduced = network.stats.reduced_time
    assert math.isclose(reduced[(tag, "tcp_incast")][nic.index + 1], 2.0)
    assert reduced[(tag, "tcp_incast")].sum() == pytest.approx(2.0)
    assert (other, "tcp_incast") not in reduced
    assert network.stats.limited_time[other][disk.index + 1] > 0


def test_a_flow_held_only_by_its_cap_runs_on_a_network_without_resources():
    env = simpy.Environment()
    network = FluidNetwork(env)
    tag = network.tag("capped")
    flow = network.transfer(10.0, [], rate_cap=5.0, tag=tag)
    env.run()
    assert flow.end_time == pytest.approx(2.0)
    assert network.stats.limited_time[tag] == pytest.approx([2.0])  # held by its cap for 2 s


def test_any_integer_tag_is_counted_not_only_those_tag_handed_out():
    env = simpy.Environment()
    network = FluidNetwork(env)
    link = network.add(Resource("link", 10.0))
    flow = network.transfer(10.0, [(link, 1.0)], tag=7)
    env.run()
    assert flow.end_time == pytest.approx(1.0)
    assert network.stats.served[link.index] == pytest.approx(10.0)


def test_stats_read_mid_run_are_up_to_that_moment():
    env = simpy.Environment()
    network = FluidNetwork(env)
    link = network.add(Resource("link", 10.0))
    tag = network.tag("phase")
    network.transfer(100.0, [(link, 1.0)], tag=tag)
    env.run(until=2.0)
    assert network.stats.served[link.index] == pytest.approx(20.0)
    assert network.stats.limited_time[tag][link.index + 1] == pytest.approx(2.0)
    env.run()
    assert network.stats.served[link.index] == pytest.approx(100.0)
    assert network.stats.limited_time[tag][link.index + 1] == pytest.approx(10.0)


def test_completion_tolerance_ends_the_flows_close_behind_with_the_first():
    # 3 B/s link, 3000, 3000.05 and 3000.1 B together: all at 1 B/s until the first ends
    # at t=3000 with 0.05 and 0.1 B left; exactly, the second then ends 0.05 / 1.5 s later
    # and the third, alone for its last 0.05 B, 0.05 / 3 s after that.  At t=3000, at their
    # rates then, they would end 0.05 s and 0.1 s later: a tolerance of 1e-4 (0.3 s of
    # 3000) ends both with the first, 1e-5 (0.03 s) neither, 2e-5 (0.06 s) the second only.
    flows = [{"work": work, "path": [(0, 1.0)]} for work in (3000.0, 3000.05, 3000.1)]
    exact, network = run_flows([3.0], flows)
    assert exact == pytest.approx([3000.0, 3000.0 + 0.05 / 1.5, 3000.0 + 0.05 / 1.5 + 0.05 / 3], rel=1e-12)
    assert network.stats.solves == 4  # the start and each completion
    coalesced, network = run_flows([3.0], flows, completion_tolerance=1e-4)
    assert coalesced == pytest.approx([3000.0] * 3, rel=1e-12)
    assert network.stats.solves == 2
    untouched, _ = run_flows([3.0], flows, completion_tolerance=1e-5)
    assert untouched == pytest.approx(exact, rel=1e-12)
    second_only, _ = run_flows([3.0], flows, completion_tolerance=2e-5)
    # The third then has 0.1 B alone at 3 B/s: 3000 + 0.0333.
    assert second_only == pytest.approx([3000.0, 3000.0, 3000.0 + 0.1 / 3], rel=1e-12)


def test_completion_tolerance_ends_flows_only_when_one_ends():
    # A: 100 B alone on a 10 B/s link, ends at t=10.  B: 1 B on another link starting at
    # t=9.95, within 1% of A's 9.95 s so far: B's start is a solve but no completion, so
    # A runs on to t=10; B ends at 10.05, and A is not still running to join it.
    flows = [{"work": 100.0, "path": [(0, 1.0)]}, {"work": 1.0, "path": [(1, 1.0)]}]
    ends, network = run_flows([10.0, 10.0], flows, starts=[0.0, 9.95], completion_tolerance=0.01)
    assert ends == pytest.approx([10.0, 10.05], rel=1e-12)
    # B's last bytes count as served although it ended with the first: 3 flows of about
    # 3000 B, all ended at t=3000, served 9000.15 B on the link.
    work = (3000.0, 3000.05, 3000.1)
    _, network = run_flows([3.0], [{"work": w, "path": [(0, 1.0)]} for w in work], completion_tolerance=1e-4)
    assert network.stats.served[0] == pytest.approx(sum(work), rel=1e-12)


@pytest.mark.parametrize("tolerance", [-1e-4, 1.0, math.nan, math.inf, True, "1e-4"])
def test_completion_tolerance_outside_zero_to_one_is_refused(tolerance):
    with pytest.raises(ValueError, match="completion_tolerance"):
        FluidNetwork(simpy.Environment(), completion_tolerance=tolerance)
