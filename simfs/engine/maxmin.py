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
the capped flows; repeat.  Each round is one weighted ``np.bincount`` over the path
entries (the matrix-vector product) and a gather of the flows that touch a saturated
resource, and the number of rounds is the number of distinct bottleneck levels, not the
number of flows.

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
    weights: sp.sparray,
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
    capacity = np.asarray(capacity, dtype=float)
    rate_cap = np.asarray(rate_cap, dtype=float)
    # Checked here, at the public entry (the fluid network checks its own inputs as it
    # adopts them): a NaN or non-positive value otherwise gives silent zero rates or an
    # error about unbounded flows that is not the problem.
    if capacity.shape != (resource_count,) or not (np.isfinite(capacity).all() and (capacity > 0).all()):
        raise ValueError(f"capacity: expected {resource_count} positive finite values, got {capacity!r}")
    if rate_cap.shape != (flow_count,) or not (rate_cap > 0).all():
        raise ValueError(f"rate_cap: expected {flow_count} positive values (inf: no cap), got {rate_cap!r}")
    if share is not None:
        share = np.asarray(share, dtype=float)
        if share.shape != (flow_count,) or not (np.isfinite(share).all() and (share > 0).all()):
            raise ValueError(f"share: expected {flow_count} positive finite values, got {share!r}")
    by_flow = weights.tocsc(copy=True)
    by_flow.sum_duplicates()
    if not (np.isfinite(by_flow.data).all() and (by_flow.data >= 0).all()):
        raise ValueError("weights: expected finite non-negative path weights")
    path_length = np.diff(by_flow.indptr)
    return max_min_rates_of_paths(
        PathEntries(by_flow.indices.astype(np.int64), by_flow.data.astype(float), path_length),
        capacity,
        rate_cap,
        share,
    )


class PathEntries:
    """The weight matrix as every flow's path entries, flow after flow (``R x F`` in
    compressed columns without scipy): ``resource[k]`` and ``weight[k]`` of entry ``k``,
    ``path_length[i]`` entries for flow ``i``.

    The solver works on these directly: a matrix-vector product is one ``np.bincount``,
    which at a thousand flows costs less than building the scipy matrix it would need."""

    __slots__ = ("resource", "weight", "path_length", "flow")

    def __init__(self, resource: np.ndarray, weight: np.ndarray, path_length: np.ndarray) -> None:
        self.resource = resource
        self.weight = weight
        self.path_length = path_length
        self.flow = np.repeat(np.arange(len(path_length)), path_length)

    def load(self, flow_values: np.ndarray, resource_count: int) -> np.ndarray:
        """``W @ flow_values``: per resource, the sum of weight x value over its flows."""
        return np.bincount(self.resource, weights=self.weight * flow_values[self.flow], minlength=resource_count)


def max_min_rates_of_paths(
    paths: PathEntries,
    capacity: np.ndarray,
    rate_cap: np.ndarray,
    share: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`max_min_rates` on path entries (how the fluid network keeps its flows)."""
    resource_count = len(capacity)
    flow_count = len(paths.path_length)
    if share is None:
        share = np.ones(flow_count)
    rate = np.zeros(flow_count)
    limiter = np.full(flow_count, CAP, dtype=np.int64)
    if flow_count == 0:
        return rate, limiter

    residual = capacity.astype(float).copy()
    active = np.ones(flow_count, dtype=bool)
    saturated = np.zeros(resource_count, dtype=bool)
    # The round in which each resource saturated and each flow froze on one: who limits
    # whom is worked out once at the end, not round by round.
    saturated_round = np.full(resource_count, -1, dtype=np.int64)
    frozen_round = np.full(flow_count, -1, dtype=np.int64)
    fair_share = rate_cap / share
    # The thresholds of the round's tests, the same every round.
    full_below = _REL_TOL * capacity
    cap_reached = rate_cap * (1 - _REL_TOL)
    level = 0.0
    # Every round freezes at least one flow, so this bound is never reached in exact
    # arithmetic; it turns a numerical stall into an error instead of a hang.
    for round_number in range(flow_count + 1):
        demand = paths.load(np.where(active, share, 0.0), resource_count)
        growing = (demand > 0) & ~saturated
        with np.errstate(divide="ignore", invalid="ignore"):
            step_resource = residual[growing] / demand[growing]
        step = min(step_resource.min(initial=np.inf), (fair_share[active] - level).min(initial=np.inf))
        if not np.isfinite(step):
            unbounded = int(np.flatnonzero(active)[0])
            raise ValueError(f"flow {unbounded} crosses no resource and has no rate cap")
        step = max(step, 0.0)
        level += step
        rate[active] = level * share[active]
        residual -= step * demand
        newly_saturated = growing & (residual <= full_below)
        residual[newly_saturated] = 0.0
        saturated |= newly_saturated

        at_cap = active & (rate >= cap_reached)
        if newly_saturated.any():
            saturated_round[newly_saturated] = round_number
            blocked = np.zeros(flow_count, dtype=bool)
            blocked[paths.flow[newly_saturated[paths.resource]]] = True
            on_saturated = active & ~at_cap & blocked
            frozen_round[on_saturated] = round_number
            active &= ~on_saturated
        active &= ~at_cap
        if not active.any():
            frozen = frozen_round >= 0
            if frozen.any():
                limiter[frozen] = _heaviest_saturated(paths, frozen_round, saturated_round)[frozen]
            return rate, limiter
    raise RuntimeError("max-min solver did not converge")  # pragma: no cover


def _heaviest_saturated(paths: PathEntries, frozen_round: np.ndarray, saturated_round: np.ndarray) -> np.ndarray:
    """For each flow, of the resources that saturated in the round the flow froze
    (``frozen_round``), the one with the largest weight on its path: the one it leans on
    hardest.  Ties go to the lowest resource index.  Meaningful only for frozen flows."""
    resource = paths.resource
    froze_in = frozen_round[paths.flow]
    in_round = np.flatnonzero((saturated_round[resource] == froze_in) & (froze_in >= 0))
    lowest = np.full(len(paths.path_length), np.iinfo(np.int64).max)
    flow = paths.flow[in_round]
    candidate = resource[in_round]
    # Entries come flow after flow, so the ones that count do too: a segment per flow.
    first = np.flatnonzero(np.concatenate([[True], flow[1:] != flow[:-1]])) if len(flow) else flow
    if len(first) == len(flow):
        # The common case: one resource of each flow's path saturated in its round (a
        # client's file on its OST); it is the limiter, no weights to compare.
        lowest[flow] = candidate
        return lowest
    # Several in a flow's round (a file's stripes filling their OSTs together): the
    # heaviest entry, then the lowest index among the heaviest.
    weight = paths.weight[in_round]
    heaviest = np.maximum.reduceat(weight, first)
    segment_length = np.diff(np.append(first, len(flow)))
    candidate = np.where(weight == np.repeat(heaviest, segment_length), candidate, np.iinfo(np.int64).max)
    lowest[flow[first]] = np.minimum.reduceat(candidate, first)
    return lowest
