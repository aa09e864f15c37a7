"""Weighted max-min fair sharing by progressive filling, vectorised with numpy/scipy.

Problem.  Flows ``i`` cross resources ``j``; flow ``i`` consumes ``A[j, i] * rate[i]``
of resource ``j`` (``A[j, i]`` is the path weight: a file striped over 4 OSTs loads each
OST with 1/4 of its rate).  Each resource has capacity ``c[j]``, each flow an optional
rate cap ``b[i]`` and a share ``s[i]`` (its relative claim; 1 for all flows in simfs
models today).  The weighted max-min fair allocation is the unique one in which no flow's
``rate/share`` can grow without lowering that of a flow whose ``rate/share`` is no larger.

Method.  Progressive filling (Bertsekas & Gallager, *Data Networks*, 6.5.2), as in
SimGrid's LMM solver: raise ``rate[i] = level * s[i]`` for every unfrozen flow until a
resource saturates or a flow reaches its cap; freeze the flows on saturated resources and
the capped flows; repeat.  Each round is two sparse matrix-vector products, and the
number of rounds is the number of distinct bottleneck levels, not the number of flows.

The result also names each flow's limiter, which is how a simulation attributes a phase
to its bottleneck: the resource that froze the flow, or ``CAP`` for its own rate cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Limiter value for a flow held by its own rate cap rather than by a resource.
CAP = -1

# Relative slack under which a resource counts as saturated / a flow as at its cap.  Float
# round-off in ``residual -= delta * demand`` is ~1e-16 relative per round, so 1e-9
# leaves room for thousands of rounds without freezing anything early.
_REL_TOL = 1e-9


def max_min_rates(
    weights: sp.csr_array,
    capacity: np.ndarray,
    rate_cap: np.ndarray,
    share: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rate, limiter)`` for the weighted max-min fair allocation.

    Parameters
    ----------
    weights:
        ``R x F`` sparse matrix of non-negative path weights.
    capacity:
        ``R`` positive capacities (units/s).
    rate_cap:
        ``F`` per-flow caps (units/s); ``np.inf`` where a flow has none.
    share:
        ``F`` positive shares; defaults to 1 for every flow.

    Raises
    ------
    ValueError
        If a flow crosses no resource and has no finite cap: its rate would be unbounded.
    """
    resource_count, flow_count = weights.shape
    if share is None:
        share = np.ones(flow_count)
    rate = np.zeros(flow_count)
    limiter = np.full(flow_count, CAP, dtype=np.int64)
    if flow_count == 0:
        return rate, limiter

    weights_t = weights.T.tocsr()
    residual = capacity.astype(float).copy()
    active = np.ones(flow_count, dtype=bool)
    saturated = np.zeros(resource_count, dtype=bool)
    # The round in which each resource saturated and each flow froze on one: who limits
    # whom is worked out once at the end, not round by round.
    saturated_round = np.full(resource_count, -1, dtype=np.int64)
    frozen_round = np.full(flow_count, -1, dtype=np.int64)
    level = 0.0
    # Every round freezes at least one flow, so this bound is never reached in exact
    # arithmetic; it turns a numerical stall into an error instead of a hang.
    for round_number in range(flow_count + 1):
        active_share = np.where(active, share, 0.0)
        demand = weights @ active_share
        growing = (demand > 0) & ~saturated
        with np.errstate(divide="ignore", invalid="ignore"):
            step_resource = np.where(growing, residual / demand, np.inf)
            step_cap = np.where(active, rate_cap / share - level, np.inf)
        step = min(step_resource.min(initial=np.inf), step_cap.min(initial=np.inf))
        if not np.isfinite(step):
            unbounded = int(np.flatnonzero(active)[0])
            raise ValueError(f"flow {unbounded} crosses no resource and has no rate cap")
        step = max(step, 0.0)
        level += step
        rate[active] = level * share[active]
        residual -= step * demand
        newly_saturated = growing & (residual <= _REL_TOL * capacity)
        residual[newly_saturated] = 0.0
        saturated |= newly_saturated

        at_cap = active & (rate >= rate_cap * (1 - _REL_TOL))
        if newly_saturated.any():
            saturated_round[newly_saturated] = round_number
            blocked = weights_t @ newly_saturated.astype(float)
            on_saturated = active & ~at_cap & (blocked > 0)
            frozen_round[on_saturated] = round_number
            active &= ~on_saturated
        active &= ~at_cap
        if not active.any():
            frozen = np.flatnonzero(frozen_round >= 0)
            if frozen.size:
                limiter[frozen] = _heaviest_saturated(weights_t, frozen, frozen_round[frozen], saturated_round)
            return rate, limiter
    raise RuntimeError("max-min solver did not converge")  # pragma: no cover


def _heaviest_saturated(
    weights_t: sp.csr_array, flows: np.ndarray, frozen_round: np.ndarray, saturated_round: np.ndarray
) -> np.ndarray:
    """For each of ``flows``, of the resources that saturated in the round the flow froze
    (``frozen_round``), the one with the largest weight on its path: the one it leans on
    hardest.  Ties go to the lowest resource index."""
    indptr = weights_t.indptr
    starts = indptr[flows]
    lengths = indptr[flows + 1] - starts
    first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # The positions of the selected flows' entries in the F x R arrays, row by row: this
    # gathers without scipy's fancy indexing, which costs more than the rest of a round.
    positions = np.repeat(starts - first, lengths) + np.arange(int(lengths.sum()))
    resources = weights_t.indices[positions].astype(np.int64)
    same_round = saturated_round[resources] == np.repeat(frozen_round, lengths)
    data = np.where(same_round, weights_t.data[positions], 0.0)
    # Every selected flow crosses a resource that saturated as it froze, so no row is
    # empty: reduceat's per-row maximum, then the lowest resource index that reaches it.
    heaviest = np.maximum.reduceat(data, first)
    rows = np.repeat(np.arange(len(flows)), lengths)
    candidate = np.where(data == heaviest[rows], resources, np.iinfo(np.int64).max)
    return np.minimum.reduceat(candidate, first)
