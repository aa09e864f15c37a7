"""The fluid network: flows share resources by weighted max-min fairness over time.

Between two events every active flow moves at a constant rate.  Rates are re-solved
(:func:`simfs.engine.maxmin.max_min_rates`) whenever a flow starts or ends or a capacity
changes.  All changes at one simulated instant are coalesced into a single solve: the
solve is a SimPy event scheduled at the current time with a priority below SimPy's own,
so it runs after every other event of that instant (64 clients starting together cost
one solve, not 64).  After a solve a single wake-up is scheduled for the earliest
completion; a later solve supersedes it.

A solve re-solves only what the changes since the last one can reach (``partial_solves``):
the flows that started, the flows on a saturated resource where a flow ended or whose
capacity changed, and every flow joined to those through a saturated resource.  A resource
that was not saturated does not join its flows: the flows it shares with the rest keep
their rates while it stays unsaturated, and it is handed to the sub-problem with the
capacity the others leave.  This is exact: if no unsaturated shared resource saturates,
every flow keeps a bottleneck (max-min fairness's own test), and if one would, the solve
is done again over all flows.  A run of flows that end at their own times on their own
OSTs re-solves one OST's flows per completion instead of all of them
(docs/background/fluid-model.md, "Partial solves").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import simpy
from simpy.events import Event

from simfs.engine.clock import clock_resolution
from simfs.engine.flow import Flow, Path
from simfs.engine.maxmin import CAP, PathEntries, max_min_rates_of_paths
from simfs.engine.resource import (
    KIND_COUNT,
    OTHER,
    RANDOM_READ,
    RANDOM_WRITE,
    READ,
    WRITE,
    Resource,
    ResourceLoad,
    lowering_mechanism,
)

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

#: SimPy processes URGENT (0) then NORMAL (1) events; LATE runs after both at one instant.
LATE = 2

# A flow is complete when less than this fraction of its work remains; float round-off in
# ``remaining -= rate * dt`` is many orders of magnitude below it.
_DONE_REL = 1e-9

# A resource loaded to within this fraction of its capacity counts as saturated for the
# partial solve: looser than the solver's own 1e-9, so a resource the solver left a hair
# short of full still joins its flows (a bigger sub-problem, never a wrong one).
_SATURATED_REL = 1e-6

# Above this fraction of the flows a partial solve costs more than it saves: solve them all.
_PARTIAL_MAX_SHARE = 0.5


class _Deferred(Event):
    """An event that triggers itself at ``now + delay`` with a chosen priority.

    SimPy's public ``succeed`` always uses NORMAL priority; the solve must come after
    every NORMAL event of its instant, so this sets the triggered state itself exactly
    as :class:`simpy.events.Timeout` does.
    """

    def __init__(self, env: simpy.Environment, delay: float, priority: int) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay)


@dataclass
class NetworkStats:
    """Counters a run accumulates; read them after ``env.run()``."""

    solves: int = 0
    #: Of ``solves``, those that re-solved only the flows a change reached.
    partial_solves: int = 0
    #: Flows handed to the max-min solver, summed over solves: the engine's work.
    flows_solved: int = 0
    #: Work served per resource (units), in resource index order.
    served: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: Per tag, flow-seconds spent limited by each resource (index ``j + 1``) or by the
    #: flow's own cap (index 0): where the flows of a phase spent their time waiting.
    limited_time: dict[int, np.ndarray] = field(default_factory=dict)
    #: The part of ``limited_time`` spent held by a resource whose load model had lowered
    #: its capacity (seek thrashing, prefetch thrash) or on which a mechanism had raised
    #: the flow's weight (a path entry naming it: TCP incast, RAID read-modify-write), per
    #: (tag, mechanism): which mechanism made it bind.
    reduced_time: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)


class FluidNetwork:
    """Resources plus the flows in flight through them, driven by a SimPy environment.

    Parameters
    ----------
    env:
        The SimPy environment whose clock the flows follow.
    record_timeline:
        Keep, at every solve, each resource's utilisation and flow count
        (:meth:`timeline`).  Costs memory proportional to solves × resources.
    partial_solves:
        Re-solve only the flows a change reaches (module docstring); ``False`` solves
        every flow at every change (the same rates, to float round-off; for comparison).
    """

    def __init__(self, env: simpy.Environment, *, record_timeline: bool = False, partial_solves: bool = True) -> None:
        self.env = env
        self._partial_solves = partial_solves
        # Per resource: a flow on it started or ended since the last solve; saturated at the
        # last solve (None before the first); the capacity that solve used.
        self._touched = np.zeros(0, dtype=bool)
        self._saturated: np.ndarray | None = None
        self._solved_capacity = np.zeros(0)
        # Per resource, the load of the flows in flight at their present rates: set by a
        # solve, lowered when flows end (new flows have no rate until the next solve).
        self._load_now = np.zeros(0)
        self._resources: list[Resource] = []
        self._capacity = np.zeros(0)
        # An object array, not a list: dropping the finished flows is one mask, not a loop.
        self._flows = np.empty(0, dtype=object)
        self._remaining = np.zeros(0)
        self._rate = np.zeros(0)
        self._limiter = np.zeros(0, dtype=np.int64)
        self._tag = np.zeros(0, dtype=np.int64)
        self._kind = np.zeros(0, dtype=np.int64)
        self._work = np.zeros(0)
        self._cap = np.zeros(0)
        self._share = np.zeros(0)
        self._last_advance = env.now
        self._solve_pending = False
        self._wakeup_generation = 0
        self._record_timeline = record_timeline
        self._timeline: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self._tags: dict[str, int] = {}
        # The weight matrix by columns: each flow's (resource, weight) entries in slot
        # order, so adding and removing flows is array work, not a loop over flows.
        self._entry_resource = np.zeros(0, dtype=np.int64)
        self._entry_weight = np.zeros(0)
        # Per entry, the mechanism that raised its weight (a code into
        # ``_mechanism_names``; 0: none); kept aligned with the entries only while
        # ``_any_raised`` (no work on the hot path when no entry names a mechanism).
        self._entry_mechanism = np.zeros(0, dtype=np.int64)
        self._any_raised = False
        self._path_length = np.zeros(0, dtype=np.int64)
        # Per flow: started since the last solve (it has no rate yet).
        self._unsolved = np.zeros(0, dtype=bool)
        self._cached_paths: PathEntries | None = None
        self._pending: list[Flow] = []
        self._load_dependent: list[Resource] = []
        self._load_rows = np.zeros(0, dtype=np.int64)
        # Per resource, its row among the load-dependent ones (-1: none), and per row the
        # path entries on it by kind, kept as flows start and end (not counted per solve).
        self._load_position = np.zeros(0, dtype=np.int64)
        self._load_kinds = np.zeros((0, KIND_COUNT), dtype=np.int64)
        self._load_key = np.zeros((0, 5))
        self._load_capacity = np.zeros(0)
        # Per resource, which mechanism lowered its capacity at the last solve (a code into
        # ``_mechanism_names``; 0: none).
        self._lowered_by = np.zeros(0, dtype=np.int64)
        self._load_lowered_by = np.zeros(0, dtype=np.int64)
        self._mechanism_names: list[str] = [""]
        self._any_lowered = False
        self.stats = NetworkStats()

    # -- construction -------------------------------------------------------------------
    @property
    def resources(self) -> list[Resource]:
        return self._resources

    def add(self, resource: Resource) -> Resource:
        """Adopt ``resource``; names must be unique within a network."""
        if resource.index >= 0:
            raise ValueError(f"resource {resource.name!r} already belongs to a network")
        if len(self._flows) or self._pending:
            raise RuntimeError("add resources before the first transfer")
        resource.index = len(self._resources)
        self._resources.append(resource)
        return resource

    def _ensure_resource_arrays(self) -> None:
        """Size the per-resource arrays once resources stop being added (amortised)."""
        count = len(self._resources)
        if len(self._capacity) == count:
            return
        self._capacity = np.array([r.capacity for r in self._resources])
        self._load_dependent = [r for r in self._resources if r.load_model is not None]
        self._load_rows = np.array([r.index for r in self._load_dependent], dtype=np.int64)
        self._load_position = np.full(count, -1, dtype=np.int64)
        self._load_position[self._load_rows] = np.arange(len(self._load_rows))
        self._load_kinds = np.zeros((len(self._load_rows), KIND_COUNT), dtype=np.int64)
        # (flow count, reads, writes, random flows, nominal capacity) each load model last saw, and what
        # it answered; -1 flows means never asked.
        self._load_key = np.full((len(self._load_dependent), 5), -1.0)
        self._load_capacity = self._capacity[self._load_rows].copy()
        self.stats.served = np.zeros(count)
        self._touched = np.zeros(count, dtype=bool)
        self._saturated = None
        self._load_now = np.zeros(count)
        self._lowered_by = np.zeros(count, dtype=np.int64)
        self._load_lowered_by = np.zeros(len(self._load_dependent), dtype=np.int64)
        for tag in self.stats.limited_time:
            self.stats.limited_time[tag] = np.zeros(count + 1)

    def served_work(self) -> np.ndarray:
        """Work served per resource so far (units), in resource index order."""
        self._ensure_resource_arrays()
        return self.stats.served

    def add_all(self, resources: Iterable[Resource]) -> None:
        for resource in resources:
            self.add(resource)

    def tag(self, label: str) -> int:
        """A small integer for ``label``; flows with a tag are attributed together."""
        if label not in self._tags:
            self._tags[label] = len(self._tags)
            self.stats.limited_time[self._tags[label]] = np.zeros(len(self._capacity) + 1)
        return self._tags[label]

    @property
    def tags(self) -> dict[str, int]:
        return dict(self._tags)

    # -- the process-facing API ---------------------------------------------------------
    def transfer(
        self,
        work: float,
        path: Path,
        *,
        rate_cap: float = math.inf,
        share: float = 1.0,
        name: str = "",
        tag: int = 0,
        kind: int = OTHER,
    ) -> Flow:
        """Start moving ``work`` units over ``path``; returns the flow (a SimPy event).

        ``kind`` (``READ``, ``WRITE``, ``RANDOM_READ``, ``RANDOM_WRITE``, ``OTHER``) is what
        load-dependent resources see of it.
        """
        self._ensure_resource_arrays()
        flow = Flow(self, work, path, rate_cap=rate_cap, share=share, name=name, tag=tag, kind=kind)
        if flow.work == 0:
            flow.end_time = self.env.now
            flow.succeed(flow)
            return flow
        self._advance()
        # Staged until the coalesced solve merges them in one concatenation: appending to
        # the arrays here would cost O(F) per flow, O(F^2) for F flows starting at once.
        self._pending.append(flow)
        self._request_solve()
        return flow

    def stop(self, flow: Flow) -> float:
        """End ``flow`` now, however much it has left (a phase cut at a stonewall deadline);
        return the work it moved.  Its event is not triggered: the caller has moved on."""
        self._advance()
        if flow in self._pending:
            self._pending.remove(flow)
            moved = 0.0
        elif flow.slot >= 0:
            slot = next(slot for slot, other in enumerate(self._flows) if other is flow)
            moved = flow.work - float(self._remaining[slot])
            keep = np.ones(len(self._flows), dtype=bool)
            keep[slot] = False
            self._keep_flows(keep)
            flow.slot = -1
            self._request_solve()
        else:
            return flow.work  # already complete
        flow.end_time = self.env.now
        return moved

    def set_capacity(self, resource: Resource, capacity: float) -> None:
        """Change a resource's nominal capacity from now on (failure, rebuild, drain)."""
        if not (math.isfinite(capacity) and capacity > 0):
            raise ValueError(f"capacity: {resource.name!r} needs a positive finite value")
        self._ensure_resource_arrays()
        self._advance()
        self._capacity[resource.index] = capacity
        self._request_solve()

    # -- internals ----------------------------------------------------------------------
    def _request_solve(self) -> None:
        if self._solve_pending:
            return
        self._solve_pending = True
        self._wakeup_generation += 1
        _Deferred(self.env, 0, LATE).callbacks.append(self._solve)

    def _advance(self) -> None:
        """Move every active flow forward to ``now`` at its current rate."""
        now = self.env.now
        elapsed = now - self._last_advance
        self._last_advance = now
        if elapsed <= 0 or not len(self._flows):
            return
        moved = np.minimum(self._rate * elapsed, self._remaining)
        self._remaining -= moved
        # Per-resource served work and per-tag limiter attribution, vectorised.
        self.stats.served += self._load_now * elapsed
        tags = self._tag
        width = len(self._resources) + 1
        # Time, not bytes: a copy into the page cache and the write-back behind it move the
        # same bytes, but the phase waits on whichever takes longer.
        cells = tags * width + (self._limiter + 1)
        size = width * (tags.max() + 1)
        by_tag_limiter = np.bincount(cells, minlength=size) * elapsed
        for tag, seconds in self.stats.limited_time.items():
            segment = by_tag_limiter[tag * width : (tag + 1) * width]
            if segment.size:
                seconds += segment
        if not (self._any_lowered or self._any_raised):
            return  # the common case: no mechanism costs any resource capacity now
        codes = np.zeros(len(self._flows), dtype=np.int64)
        if self._any_lowered:
            codes = np.where(self._limiter >= 0, self._lowered_by[np.maximum(self._limiter, 0)], 0)
        if self._any_raised:
            # A flow held by a resource on which a mechanism raised its weight: that
            # mechanism costs it capacity there (named after a lowering one, if both).
            flow_of_entry = np.repeat(np.arange(len(self._flows)), self._path_length)
            holding = self._entry_resource == self._limiter[flow_of_entry]
            raised_by = np.zeros(len(self._flows), dtype=np.int64)
            raised_by[flow_of_entry[holding]] = self._entry_mechanism[holding]
            both = (codes > 0) & (raised_by > 0)
            for lowered, raised in {(int(a), int(b)) for a, b in zip(codes[both], raised_by[both])}:
                joined = f"{self._mechanism_names[lowered]}+{self._mechanism_names[raised]}"
                codes[both & (codes == lowered) & (raised_by == raised)] = self.mechanism_code(joined)
            codes = np.where(codes > 0, codes, raised_by)
        self._attribute_mechanisms(codes, cells, tags, elapsed)

    def _attribute_mechanisms(self, codes: np.ndarray, cells: np.ndarray, tags: np.ndarray, elapsed: float) -> None:
        """Add ``elapsed`` to ``stats.reduced_time`` for each flow whose mechanism code
        is non-zero, by (tag, mechanism) and limiting resource."""
        width = len(self._resources) + 1
        size = width * (tags.max() + 1)
        for code in np.unique(codes[codes > 0]):
            held = codes == code
            by_tag = np.bincount(cells[held], minlength=size) * elapsed
            mechanism = self._mechanism_names[code]
            for tag in np.unique(tags[held]):
                key = (int(tag), mechanism)
                if key not in self.stats.reduced_time:
                    self.stats.reduced_time[key] = np.zeros(width)
                self.stats.reduced_time[key] += by_tag[tag * width : (tag + 1) * width]

    def _resource_load(self, rate: np.ndarray) -> np.ndarray:
        if not len(self._flows):
            return np.zeros(len(self._resources))
        return self._paths().load(rate, len(self._resources))

    def _paths(self) -> PathEntries:
        """The active flows' path entries (the weight matrix by columns), rebuilt only
        after the set of flows changes."""
        if self._cached_paths is None:
            self._cached_paths = PathEntries(self._entry_resource, self._entry_weight, self._path_length)
        return self._cached_paths

    def _matrix(self) -> sp.csc_array | None:
        """The R x F weight matrix of the active flows (for inspection and tests; the
        solver works on :meth:`_paths`)."""
        if not len(self._flows):
            return None
        import scipy.sparse as sp

        indptr = np.zeros(len(self._flows) + 1, dtype=np.int64)
        np.cumsum(self._path_length, out=indptr[1:])
        return sp.csc_array(
            (self._entry_weight, self._entry_resource, indptr), shape=(len(self._resources), len(self._flows))
        )

    def _keep_flows(self, keep: np.ndarray) -> None:
        """Drop the flows whose ``keep`` is False from the list and every per-flow array."""
        self._flows = self._flows[keep]
        entries = np.repeat(keep, self._path_length)
        dropped, gone = ~entries, ~keep
        dropped_resource, dropped_length = self._entry_resource[dropped], self._path_length[gone]
        self._touched[dropped_resource] = True
        self._load_now -= np.bincount(
            dropped_resource,
            weights=self._entry_weight[dropped] * np.repeat(self._rate[gone], dropped_length),
            minlength=len(self._load_now),
        )
        self._count_load_kinds(dropped_resource, np.repeat(self._kind[gone], dropped_length), -1)
        self._entry_resource = self._entry_resource[entries]
        self._entry_weight = self._entry_weight[entries]
        if self._any_raised:
            self._entry_mechanism = self._entry_mechanism[entries]
            self._any_raised = bool(self._entry_mechanism.any())
        for name in (
            "_remaining",
            "_rate",
            "_limiter",
            "_tag",
            "_kind",
            "_work",
            "_cap",
            "_share",
            "_path_length",
            "_unsolved",
        ):
            setattr(self, name, getattr(self, name)[keep])
        self._cached_paths = None

    def _complete_finished(self) -> None:
        if not len(self._flows):
            return
        now = self.env.now
        # A flow whose rest would take less than the clock can resolve at ``now`` is done:
        # otherwise, late in a long run, its wakeup lands at ``now`` again and never ends.
        done = (self._remaining <= _DONE_REL * self._work) | (self._remaining <= self._rate * clock_resolution(now))
        if not done.any():
            return
        finished = self._flows[done]
        self._keep_flows(~done)
        for flow in finished:
            flow.slot = -1
            flow.end_time = now
            flow.succeed(flow)

    def _merge_pending(self) -> None:
        if not self._pending:
            return
        new = self._pending
        self._pending = []
        for flow in new:
            flow.slot = 0  # in flight; its position is its index in ``_flows``
        count = len(new)
        added = np.empty(count, dtype=object)
        added[:] = new
        self._flows = np.concatenate([self._flows, added])
        entries_before = len(self._entry_resource)
        self._entry_resource = np.concatenate([self._entry_resource, *(f.resource_index for f in new)])
        kinds = np.fromiter((f.kind for f in new), dtype=np.int64, count=count)
        lengths = np.fromiter((len(f.resource_index) for f in new), dtype=np.int64, count=count)
        self._touched[self._entry_resource[entries_before:]] = True
        self._count_load_kinds(self._entry_resource[entries_before:], np.repeat(kinds, lengths), +1)
        self._entry_weight = np.concatenate([self._entry_weight, *(f.resource_weight for f in new)])
        if self._any_raised or any(f.resource_mechanism is not None for f in new):
            self._entry_mechanism = np.concatenate(
                [
                    self._entry_mechanism if self._any_raised else np.zeros(entries_before, dtype=np.int64),
                    *(
                        f.resource_mechanism
                        if f.resource_mechanism is not None
                        else np.zeros(len(f.resource_index), np.int64)
                        for f in new
                    ),
                ]
            )
            self._any_raised = bool(self._entry_mechanism.any())
        self._path_length = np.concatenate([self._path_length, lengths])
        works = np.fromiter((f.work for f in new), dtype=float, count=count)
        self._remaining = np.concatenate([self._remaining, works])
        self._rate = np.concatenate([self._rate, np.zeros(count)])
        self._unsolved = np.concatenate([self._unsolved, np.ones(count, dtype=bool)])
        self._limiter = np.concatenate([self._limiter, np.full(count, CAP, dtype=np.int64)])
        self._tag = np.concatenate([self._tag, np.fromiter((f.tag for f in new), dtype=np.int64, count=count)])
        self._kind = np.concatenate([self._kind, kinds])
        self._work = np.concatenate([self._work, works])
        self._cap = np.concatenate([self._cap, [f.rate_cap for f in new]])
        self._share = np.concatenate([self._share, [f.share for f in new]])
        self._cached_paths = None

    def _solve(self, _event: Event) -> None:
        self._solve_pending = False
        self._advance()
        self._merge_pending()
        self._complete_finished()
        self.stats.solves += 1
        if not len(self._flows):
            self._rate = np.zeros(0)
            self._touched[:] = False
            self._saturated = None
            self._load_now = np.zeros(len(self._resources))
            self._record(np.zeros(len(self._resources)), np.zeros(len(self._resources)), np.ones(len(self._resources)))
            return
        capacity = self._effective_capacity()
        load = self._solve_reached(capacity) if self._partial_solves else None
        if load is None:
            self._rate, self._limiter = max_min_rates_of_paths(self._paths(), capacity, self._cap, self._share)
            self.stats.flows_solved += len(self._flows)
            load = self._resource_load(self._rate)
        self._touched[:] = False
        self._unsolved[:] = False
        self._saturated = load >= capacity * (1 - _SATURATED_REL)
        self._solved_capacity = capacity
        self._load_now = load
        if self._record_timeline:
            flow_count = np.bincount(self._entry_resource, minlength=len(self._resources))
            self._record(load / capacity, flow_count, capacity / self._capacity)
        self._schedule_wakeup()

    def _solve_reached(self, capacity: np.ndarray) -> np.ndarray | None:
        """Re-solve the flows the changes since the last solve reach (module docstring)
        and return every resource's load; ``None`` if the whole network must be solved
        instead (no solve yet, the changes reach most flows, or an unsaturated shared
        resource would saturate)."""
        if self._saturated is None:
            return None
        paths = self._paths()
        entry_resource, entry_flow = paths.resource, paths.flow
        flow_count, resource_count = len(self._flows), len(self._resources)
        # A capacity that changed (set_capacity, or a load model answering a new load) may
        # bind anywhere: its resource joins its flows whether it was saturated or not.
        changed = capacity != self._solved_capacity
        connecting = self._saturated | changed
        # Only entries on joining resources carry the search: gather them once (most
        # entries are on resources that never fill: a client's core and NIC, the fabric).
        joining = np.flatnonzero(connecting[entry_resource])
        joining_resource, joining_flow = entry_resource[joining], entry_flow[joining]
        component = (self._touched & self._saturated) | changed
        reached = self._unsolved.copy()
        while True:
            component[joining_resource[reached[joining_flow]]] = True
            hit = joining_flow[component[joining_resource]]
            if reached[hit].all():
                break
            reached[hit] = True
        reached_count = int(np.count_nonzero(reached))
        if reached_count > _PARTIAL_MAX_SHARE * flow_count:
            return None
        inside = reached[entry_flow]
        # The unreached flows' load: the load now less the reached flows' (few entries).
        inside_entries = np.flatnonzero(inside)
        inside_resource = entry_resource[inside_entries]
        inside_weight = paths.weight[inside_entries]
        outside_load = self._load_now - np.bincount(
            inside_resource, weights=inside_weight * self._rate[entry_flow[inside_entries]], minlength=resource_count
        )
        self.stats.partial_solves += 1
        if not reached_count:
            return outside_load  # the changes left no flow behind them (their resources emptied)
        crossed = np.zeros(resource_count, dtype=bool)
        crossed[inside_resource] = True
        used = np.flatnonzero(crossed)
        local_resource = (np.cumsum(crossed) - 1)[inside_resource]
        room = capacity[used] - outside_load[used]
        if (room <= _SATURATED_REL * capacity[used]).any():
            self.stats.partial_solves -= 1
            return None
        sub_paths = PathEntries(local_resource, inside_weight, self._path_length[reached])
        rate, limiter = max_min_rates_of_paths(sub_paths, room, self._cap[reached], self._share[reached])
        shared = ~connecting[used]
        outside_load[used] += sub_paths.load(rate, len(used))
        if (outside_load[used][shared] >= capacity[used][shared] * (1 - _SATURATED_REL)).any():
            self.stats.partial_solves -= 1
            return None
        self._rate[reached] = rate
        held = limiter >= 0
        limiter[held] = used[limiter[held]]
        self._limiter[reached] = limiter
        self.stats.flows_solved += reached_count
        return outside_load

    def mechanism_code(self, mechanism: str) -> int:
        if mechanism not in self._mechanism_names:
            self._mechanism_names.append(mechanism)
        return self._mechanism_names.index(mechanism)

    def _count_load_kinds(self, resource: np.ndarray, kind: np.ndarray, sign: int) -> None:
        """Add (``sign`` +1) or remove (-1) path entries on ``resource`` of flows of
        ``kind`` from the counts the load models see."""
        if not len(self._load_rows) or not len(resource):
            return
        position = self._load_position[resource]
        on_model = position >= 0
        np.add.at(self._load_kinds, (position[on_model], kind[on_model]), sign)

    def _effective_capacity(self) -> np.ndarray:
        """Each resource's capacity under its present load.  A load model is called again
        only for a resource whose load or nominal capacity changed since the last solve
        (load models are pure): most solves change a few of hundreds."""
        capacity = self._capacity.copy()
        if not self._load_dependent:
            return capacity
        rows, kinds = self._load_rows, self._load_kinds
        random = kinds[:, RANDOM_READ] + kinds[:, RANDOM_WRITE]
        key = np.column_stack((kinds.sum(axis=1), kinds[:, READ], kinds[:, WRITE], random, self._capacity[rows]))
        for position in np.flatnonzero((key != self._load_key).any(axis=1)):
            resource = self._load_dependent[position]
            load = ResourceLoad(*(int(count) for count in key[position, :4]))
            self._load_capacity[position] = resource.capacity_at(load, nominal=float(key[position, 4]))
            lowered = lowering_mechanism(resource.load_model, float(key[position, 4]), load) if load.flow_count else ""
            self._load_lowered_by[position] = self.mechanism_code(lowered)
        self._load_key = key
        capacity[rows] = self._load_capacity
        self._lowered_by[rows] = self._load_lowered_by
        self._any_lowered = bool(self._load_lowered_by.any())
        return capacity

    def _schedule_wakeup(self) -> None:
        moving = self._rate > 0
        if not moving.any():
            stuck = self._flows[0]
            raise RuntimeError(f"flow {stuck.name!r} cannot progress: every rate is zero")
        delay = max(float(np.min(self._remaining[moving] / self._rate[moving])), clock_resolution(self.env.now))
        self._wakeup_generation += 1
        generation = self._wakeup_generation
        wakeup = _Deferred(self.env, delay, simpy.events.NORMAL)
        wakeup.callbacks.append(lambda _event: self._on_wakeup(generation))

    def _on_wakeup(self, generation: int) -> None:
        if generation != self._wakeup_generation:
            return  # superseded by a later solve
        self._advance()
        self._complete_finished()
        self._request_solve()

    def _record(self, utilisation: np.ndarray, flow_count: np.ndarray, capacity_fraction: np.ndarray) -> None:
        if self._record_timeline:
            self._timeline.append((self.env.now, utilisation.copy(), flow_count.copy(), capacity_fraction.copy()))

    # -- results ------------------------------------------------------------------------
    def timeline(self) -> pd.DataFrame:
        """One row per (solve, resource): ``time_s``, ``resource``, ``kind``,
        ``utilisation`` (0..1 of the effective capacity), ``flow_count`` and
        ``capacity_fraction`` (effective / nominal capacity: below 1 where a load-dependent
        mechanism such as seek thrashing is costing capacity), from that instant until the
        next row."""
        if not self._record_timeline:
            raise RuntimeError("this network was created without record_timeline=True")
        import pandas as pd

        names = [r.name for r in self._resources]
        kinds = [r.kind for r in self._resources]
        frames = [
            pd.DataFrame(
                {
                    "time_s": time,
                    "resource": names,
                    "kind": kinds,
                    "utilisation": util,
                    "flow_count": count.astype(int),
                    "capacity_fraction": fraction,
                }
            )
            for time, util, count, fraction in self._timeline
        ]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
