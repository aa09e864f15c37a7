"""The max-min solver against hand-computed allocations."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from simfs.engine.maxmin import CAP, PathEntries, _heaviest_saturated, max_min_rates


def solve(matrix, capacity, caps=None, share=None):
    matrix = sp.csr_array(np.array(matrix, dtype=float))
    caps = np.full(matrix.shape[1], math.inf) if caps is None else np.array(caps, dtype=float)
    return max_min_rates(matrix, np.array(capacity, dtype=float), caps, None if share is None else np.array(share))


def test_two_flows_on_one_link_share_it_equally():
    rate, limiter = solve([[1, 1]], [100])
    assert rate == pytest.approx([50, 50])
    assert list(limiter) == [0, 0]


def test_per_flow_cap_leaves_the_rest_to_the_other_flow():
    rate, limiter = solve([[1, 1]], [100], caps=[10, math.inf])
    assert rate == pytest.approx([10, 90])
    assert list(limiter) == [CAP, 0]


def test_classic_three_link_example():
    # Bertsekas & Gallager 6.5: flow 0 crosses links A and B (cap 1 each); flow 1 uses A,
    # flow 2 uses B, flow 3 uses link C (cap 2) alone.
    rate, _ = solve([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 1]], [1, 1, 2])
    assert rate == pytest.approx([0.5, 0.5, 0.5, 2.0])


def test_weights_scale_consumption():
    # Striped over 4 OSTs (weight 1/4 each, 100 MB/s each) behind one NIC of 300 MB/s:
    # the OSTs together could give 400, so the NIC limits at 300.
    matrix = [[1], [0.25], [0.25], [0.25], [0.25]]
    rate, limiter = solve(matrix, [300, 100, 100, 100, 100])
    assert rate == pytest.approx([300])
    assert list(limiter) == [0]


def test_shares_weight_the_fair_split():
    rate, _ = solve([[1, 1]], [90], share=[1, 2])
    assert rate == pytest.approx([30, 60])


def test_unbounded_flow_is_an_error():
    with pytest.raises(ValueError, match="no rate cap"):
        solve([[0]], [1])


def test_limiter_is_the_heavier_of_two_resources_saturating_together():
    # One flow, both resources full at 100: the one it loads with weight 1 limits it.
    _, limiter = solve([[0.5], [1.0]], [50, 100])
    assert list(limiter) == [1]
    # Equal weights: the lower index.
    _, limiter = solve([[1.0], [1.0]], [100, 100])
    assert list(limiter) == [0]


def _heaviest_by_hand(resource, weight, path_length, frozen_round, saturated_round):
    """Per frozen flow, of its resources that saturated in its round, the heaviest
    (lowest index on a tie): a loop over each flow's entries."""
    answer = {}
    start = 0
    for flow, length in enumerate(path_length):
        entries = range(start, start + length)
        start += length
        if frozen_round[flow] < 0:
            continue
        in_round = [k for k in entries if saturated_round[resource[k]] == frozen_round[flow]]
        answer[flow] = min(in_round, key=lambda k: (-weight[k], resource[k]))
        answer[flow] = int(resource[answer[flow]])
    return answer


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_heaviest_saturated_matches_a_loop_over_each_path(data):
    resource_count = data.draw(st.integers(1, 6))
    flow_count = data.draw(st.integers(1, 8))
    path_length = np.array([data.draw(st.integers(0, resource_count)) for _ in range(flow_count)], dtype=np.int64)
    resource = np.concatenate(
        [np.array(data.draw(st.permutations(range(resource_count))))[:length] for length in path_length]
    ).astype(np.int64)
    # Few distinct weights and rounds, so that ties and several resources per round occur.
    weight = np.array([data.draw(st.sampled_from([0.25, 0.5, 1.0])) for _ in resource])
    saturated_round = np.array([data.draw(st.integers(-1, 2)) for _ in range(resource_count)])
    # A flow froze in a round in which one of its resources saturated (or not at all).
    frozen_round = np.full(flow_count, -1)
    start = 0
    for flow, length in enumerate(path_length):
        rounds = sorted({int(saturated_round[r]) for r in resource[start : start + length]} - {-1})
        start += length
        if rounds and data.draw(st.booleans()):
            frozen_round[flow] = data.draw(st.sampled_from(rounds))
    paths = PathEntries(resource, weight, path_length)
    found = _heaviest_saturated(paths, frozen_round, saturated_round)
    expected = _heaviest_by_hand(resource, weight, path_length, frozen_round, saturated_round)
    assert {flow: int(found[flow]) for flow in expected} == expected
