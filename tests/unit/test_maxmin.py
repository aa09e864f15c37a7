"""The max-min solver against hand-computed allocations."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from simfs.engine.maxmin import CAP, max_min_rates


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
