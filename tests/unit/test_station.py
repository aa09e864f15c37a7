"""Request-level stations against hand timelines and queueing theory (M/M/c, Little's law)."""

import math

import numpy as np
import pytest
import simpy

from simfs.engine.station import SharedStation, Station


def erlang_c_wait(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Mean time in queue of an M/M/c queue (Erlang C)."""
    load = arrival_rate / service_rate
    rho = load / servers
    top = load**servers / math.factorial(servers) / (1 - rho)
    bottom = sum(load**k / math.factorial(k) for k in range(servers)) + top
    return top / bottom / (servers * service_rate - arrival_rate)


def test_hand_timeline_two_servers_fifo():
    env = simpy.Environment()
    station = Station(env, "s", servers=2)
    finished = {}

    def request(name, at, demand):
        yield env.timeout(at)
        done = yield station.serve(demand)
        finished[name] = done

    # a and b start at once; c waits for a (free at 3), d for b (free at 5).
    for name, at, demand in (("a", 0, 3), ("b", 0, 5), ("c", 1, 4), ("d", 2, 1)):
        env.process(request(name, at, demand))
    env.run()
    assert finished == {"a": 3, "b": 5, "c": 7, "d": 6}
    assert station.completed == 4
    assert station.wait_s == pytest.approx(2 + 3)
    assert station.busy_s == pytest.approx(13)


@pytest.mark.parametrize("servers, rho", [(1, 0.5), (1, 0.8), (4, 0.7), (16, 0.8)])
def test_mm_c_waiting_time_and_littles_law(servers, rho):
    env = simpy.Environment()
    station = Station(env, "mm", servers=servers, record=True)
    rng = np.random.default_rng(7)
    service_rate = 1.0
    arrival_rate = rho * servers * service_rate
    count = 200_000
    gaps = rng.exponential(1 / arrival_rate, count)
    demands = rng.exponential(1 / service_rate, count)
    sojourns = []

    def source():
        for gap, demand in zip(gaps, demands):
            yield env.timeout(gap)
            sojourns.append(station.reserve(demand) - env.now)

    env.process(source())
    env.run()
    # Waits after a warm-up, in 40 batches: the batch means give the statistical error
    # of the estimate (waits of neighbouring requests are correlated).
    waits = (np.array(sojourns) - demands)[count // 10 :]
    batches = waits[: len(waits) // 40 * 40].reshape(40, -1).mean(axis=1)
    standard_error = batches.std(ddof=1) / math.sqrt(len(batches))
    expected = erlang_c_wait(arrival_rate, service_rate, servers)
    assert abs(waits.mean() - expected) < 4 * standard_error
    assert standard_error < 0.08 * expected  # the check has power: the estimate is tight
    # Little's law, L = lambda x W, with L measured apart from the sojourns: Poisson
    # arrivals see time averages (PASTA), so the requests already in the station when one
    # arrives (the station's count at that arrival, less the arrival itself), averaged over
    # arrivals, estimate the time-average number in the station.
    seen = np.array([in_station for _, in_station in station.queue_samples()])[count // 10 :] - 1
    little = arrival_rate * (np.array(sojourns)[count // 10 :])
    difference = (seen - little)[: len(seen) // 40 * 40].reshape(40, -1).mean(axis=1)
    difference_error = difference.std(ddof=1) / math.sqrt(len(difference))
    assert abs(seen.mean() - little.mean()) < 4 * difference_error
    assert difference_error < 0.05 * little.mean()  # the check has power
    # The station's own time average is the same quantity, over the whole run.
    horizon = station.last_departure_s
    assert station.mean_in_station(horizon) == pytest.approx(seen.mean(), rel=0.1)
    assert station.utilisation(horizon) == pytest.approx(rho, rel=0.03)


def test_queue_samples_count_requests_in_the_station():
    env = simpy.Environment()
    station = Station(env, "q", record=True)

    def burst():
        for _ in range(3):
            station.serve(1.0)
        yield env.timeout(2.5)
        station.serve(1.0)

    env.process(burst())
    env.run()
    assert station.queue_samples() == [(0, 1), (0, 2), (0, 3), (2.5, 2)]


def test_bad_arguments_are_named():
    env = simpy.Environment()
    with pytest.raises(ValueError, match="servers"):
        Station(env, "x", servers=0)
    with pytest.raises(ValueError, match="demand_s"):
        Station(env, "x").serve(-1.0)
    with pytest.raises(RuntimeError, match="record=True"):
        Station(env, "x").queue_samples()


def test_shared_station_finishes_simultaneous_arrivals_together():
    env = simpy.Environment()
    station = SharedStation(env, "cores", servers=2)
    done = []

    def request(demand):
        finished = yield station.serve(demand)
        done.append(finished)

    for _ in range(4):
        env.process(request(1.0))
    env.run()
    # Four requests of one second on two servers: each gets half a server, all end at 2 s.
    assert done == pytest.approx([2.0] * 4)
    assert station.busy_s == pytest.approx(4.0)


def test_shared_station_lets_a_request_use_several_servers():
    env = simpy.Environment()
    station = SharedStation(env, "host", servers=2, per_request=1.5)
    done = {}

    def request(name, at, demand):
        yield env.timeout(at)
        done[name] = yield station.serve(demand)

    env.process(request("a", 0.0, 3.0))
    env.process(request("b", 1.0, 1.0))
    env.process(request("c", 1.0, 1.0))
    env.run()
    # a alone at 1.5 servers for 1 s (1.5 s of work left); then three share 2 servers,
    # 2/3 each: b and c finish their 1 s at 1 + 1.5 = 2.5 s, when a has 0.5 s left,
    # which it does alone at 1.5 servers: 2.5 + 1/3 s.
    assert done == {"a": pytest.approx(2.5 + 1 / 3), "b": pytest.approx(2.5), "c": pytest.approx(2.5)}
    # Every second of work was done, never more than two servers' worth at once.
    assert station.busy_s == pytest.approx(5.0)
    assert station.per_request == 1.5


@pytest.mark.parametrize("per_request", [0.5, 3.0, "2"])
def test_shared_station_refuses_servers_per_request_it_cannot_give(per_request):
    with pytest.raises(ValueError, match="per_request: station 'host' needs servers per request between 1 and 2"):
        SharedStation(simpy.Environment(), "host", servers=2, per_request=per_request)


def test_shared_station_hand_timeline_with_a_late_arrival():
    env = simpy.Environment()
    station = SharedStation(env, "cpu")
    done = {}

    def request(name, at, demand):
        yield env.timeout(at)
        done[name] = yield station.serve(demand)

    env.process(request("a", 0.0, 2.0))
    env.process(request("b", 1.0, 0.5))
    env.run()
    # a alone for 1 s (1 s of work left), then both at half speed: b's 0.5 s takes 1 s
    # (ends at 2 s), a has 0.5 s left at full speed: 2.5 s.
    assert done == {"a": pytest.approx(2.5), "b": pytest.approx(2.0)}


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_mm1_processor_sharing_mean_sojourn(rho):
    env = simpy.Environment()
    station = SharedStation(env, "ps")
    rng = np.random.default_rng(11)
    count = 100_000
    gaps = rng.exponential(1 / rho, count)
    demands = rng.exponential(1.0, count)
    sojourns = []

    def request(demand):
        arrived = env.now
        yield station.serve(demand)
        sojourns.append(env.now - arrived)

    def source():
        for gap, demand in zip(gaps, demands):
            yield env.timeout(gap)
            env.process(request(demand))

    env.process(source())
    env.run()
    values = np.array(sojourns[count // 10 :])
    batches = values[: len(values) // 40 * 40].reshape(40, -1).mean(axis=1)
    standard_error = batches.std(ddof=1) / math.sqrt(len(batches))
    expected = 1 / (1 - rho)  # M/M/1-PS: the M/M/1 mean sojourn
    assert abs(values.mean() - expected) < 4 * standard_error
    assert standard_error < 0.1 * expected
