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
every flow keeps a bottleneck (max-min fairness's own test), and if one that unreached
flows cross would, it joins its flows too and the component is solved again (a few times
at most, then every flow).
A run of flows that end at their own times on their own OSTs re-solves one OST's flows
per completion instead of all of them (docs/background/fluid-model.md, "Partial solves").

What a change costs is kept proportional to the change (docs/background/fluid-model.md,
"How flows are kept"): flows live in fixed slots (a flow that ends frees its slot; nothing
is compacted), each resource keeps the set of slots crossing it (the component search
walks from a changed resource to its flows and on, not over every path entry), each
flow's end time is set when its rate changes (the next wake-up is one minimum), and the
served work and the time each phase's flows spend held by each limiter are banked only
when the flows or loads they count change, not at every event.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
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

# Partial solves tried for one change: the first, then a widening of its component (a
# resource outside it would fill) each time, before the whole network is solved.
_PARTIAL_ATTEMPTS = 4


def _distinct(values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``values`` without repeats, in no particular order, in time linear in their count
    (``np.unique`` sorts): ``scratch`` is an integer array indexed by value, left as it is."""
    if len(values) < 2:
        return values
    order = np.arange(len(values))
    scratch[values] = order
    return values[scratch[values] == order]


@dataclass(frozen=True)
class _Widen:
    """A partial solve's answer when unsaturated ``resources`` would fill: solve again
    with them joining their flows."""

    resources: np.ndarray


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
    completion_tolerance:
        When a flow ends, every other flow that would end within this fraction of its own
        duration so far ends with it (its last bytes counted as moved): one solve for a
        run of completions a few microseconds apart instead of one each.  0 (default):
        every flow ends at its exact time.  A flow it ends had at most this fraction of
        its duration left; the bandwidth it frees early moves the others' ends by about as
        much, measured, not bounded (docs/background/fluid-model.md, "Completion
        tolerance").
    """

    def __init__(
        self,
        env: simpy.Environment,
        *,
        record_timeline: bool = False,
        partial_solves: bool = True,
        completion_tolerance: float = 0.0,
    ) -> None:
        if isinstance(completion_tolerance, bool) or not (
            isinstance(completion_tolerance, numbers.Real) and 0.0 <= completion_tolerance < 1.0
        ):
            raise ValueError(f"completion_tolerance: expected a fraction in [0, 1), got {completion_tolerance!r}")
        self.env = env
        self._partial_solves = partial_solves
        self._completion_tolerance = float(completion_tolerance)
        self._resources: list[Resource] = []
        self._capacity = np.zeros(0)
        # Per resource: saturated at the last solve (None before the first); the capacity
        # under the present load (kept up to date for the resources whose load or nominal
        # capacity changed: ``_dirty_rows``, ``_renominated``), and the resources whose
        # capacity changed since the last solve.
        self._saturated: np.ndarray | None = None
        self._effective = np.zeros(0)
        self._dirty_rows: set[int] = set()
        self._renominated: set[int] = set()
        self._capacity_changes: list[np.ndarray] = []
        self._changed_mark = np.zeros(0, dtype=bool)
        # Resources a flow started or ended on since the last solve.
        self._touched: set[int] = set()
        # Per resource, the load of the flows in flight at their present rates: set by a
        # solve, lowered when flows end (new flows have no rate until the next solve).
        self._load_now = np.zeros(0)
        # Flows live in fixed slots: a flow that ends frees its slot for the next one, so
        # an end costs its own path, not a compaction of every array (module docstring).
        # Per slot: the flow (None: free), remaining work, rate, limiter, tag, kind, the
        # work below which it is complete (``_done_work``), cap, share, 1.0 while occupied
        # (0.0 while free), the order it started in, and its path padded to
        # ``_path_width`` entries (weight 0 past its length).
        self._slot_flow: list[Flow | None] = []
        self._free_slots: list[int] = []
        self._flow_count = 0
        self._started = 0
        self._remaining = np.zeros(0)
        self._slot_rate = np.zeros(0)
        self._limiter = np.zeros(0, dtype=np.int64)
        self._tag = np.zeros(0, dtype=np.int64)
        self._kind = np.zeros(0, dtype=np.int64)
        self._done_work = np.zeros(0)  # _DONE_REL x work: below it a flow is complete
        self._cap = np.zeros(0)
        self._share = np.zeros(0)
        self._live = np.zeros(0)
        # Per slot, when its flow ends at its present rate (inf: free, or no rate yet):
        # set when a solve gives it a rate, so the next wake-up is one minimum.
        self._end_time = np.zeros(0)
        self._start_time = np.zeros(0)
        self._order = np.zeros(0, dtype=np.int64)
        self._path_length = np.zeros(0, dtype=np.int64)
        self._path_width = 1
        self._entry_resource = np.zeros((0, 1), dtype=np.int64)
        self._entry_weight = np.zeros((0, 1))
        # Per entry, the mechanism that raised its weight (a code into
        # ``_mechanism_names``; 0: none); ``_raised_flows`` counts the flows in flight with one
        # (no work on the hot path when none has).
        self._entry_mechanism = np.zeros((0, 1), dtype=np.int64)
        self._raised_flows = 0
        # Per resource, the slots of the flows crossing it, kept as flows start and end;
        # and the marks the component search leaves on slots and resources (cleared after).
        self._flows_on: list[set[int]] = []
        self._reached_mark = np.zeros(0, dtype=bool)
        self._component_mark = np.zeros(0, dtype=bool)
        # Scratch space for _distinct, per slot and per resource.
        self._slot_scratch = np.zeros(0, dtype=np.int64)
        self._resource_scratch = np.zeros(0, dtype=np.int64)
        # Slots whose flow started since the last solve (it has no rate yet).
        self._unsolved: list[int] = []
        self._cached_paths: tuple[np.ndarray, PathEntries] | None = None
        self._last_advance = env.now
        self._checked_at = -math.inf  # when _complete_finished last scanned the slots
        self._solve_pending = False
        self._wakeup_generation = 0
        self._record_timeline = record_timeline
        self._timeline: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self._tags: dict[str, int] = {}
        self._unawaited: set[int] = set()
        self._pending: list[Flow] = []
        self._load_dependent: list[Resource] = []
        self._load_rows = np.zeros(0, dtype=np.int64)
        # Per resource, its row among the load-dependent ones (-1: none), and per row the
        # path entries on it by kind, kept as flows start and end (not counted per solve).
        self._load_position = np.zeros(0, dtype=np.int64)
        self._load_kinds = np.zeros((0, KIND_COUNT), dtype=np.int64)
        self._load_key = np.zeros((0, 5))
        # Per resource, which mechanism lowered its capacity at the last solve (a code into
        # ``_mechanism_names``; 0: none).
        self._lowered_by = np.zeros(0, dtype=np.int64)
        self._mechanism_names: list[str] = [""]
        self._lowered_count = 0  # load-dependent resources whose capacity a mechanism lowers now
        self._stats = NetworkStats()
        # Attribution kept lazily (module docstring): per resource, when its served work
        # was last brought up to date; per cell (tag x (limiter + 1)), the flows in it now,
        # since when, and the flow-seconds banked before.
        self._served_since = np.zeros(0)
        self._cell_count = np.zeros(0)
        self._cell_since = np.zeros(0)
        self._cell_seconds = np.zeros(0)

    # -- construction -------------------------------------------------------------------
    @property
    def resources(self) -> list[Resource]:
        return self._resources

    def add(self, resource: Resource) -> Resource:
        """Adopt ``resource``; names must be unique within a network."""
        if resource.index >= 0:
            raise ValueError(f"resource {resource.name!r} already belongs to a network")
        if self._flow_count or self._pending:
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
        self._effective = self._capacity.copy()
        self._dirty_rows = set(range(len(self._load_rows)))
        self._changed_mark = np.zeros(count, dtype=bool)
        self._stats.served = np.zeros(count)
        self._served_since = np.full(count, float(self.env.now))
        cells = (count + 1) * max(4, len(self._tags))
        self._cell_count = np.zeros(cells)
        self._cell_since = np.zeros(cells)
        self._cell_seconds = np.zeros(cells)
        self._flows_on = [set() for _ in range(count)]
        self._component_mark = np.zeros(count, dtype=bool)
        self._resource_scratch = np.zeros(count, dtype=np.int64)
        self._saturated = None
        self._load_now = np.zeros(count)
        self._lowered_by = np.zeros(count, dtype=np.int64)
        self._lowered_count = 0
        for tag in self._stats.limited_time:
            self._stats.limited_time[tag] = np.zeros(count + 1)

    def served_work(self) -> np.ndarray:
        """Work served per resource so far (units), in resource index order."""
        self._ensure_resource_arrays()
        return self.stats.served

    @property
    def stats(self) -> NetworkStats:
        """The run's counters, with the served work and limiter attribution up to now
        (read it again after running further: the attribution is brought up to date when
        it is read)."""
        self._ensure_resource_arrays()
        self._advance()  # the flows' work and the mechanisms' attribution up to now too
        self._cell_room(len(self._tags))
        self._bank_served(slice(None))
        self._bank_cells(np.arange(len(self._cell_count)))
        width = len(self._resources) + 1
        for tag, seconds in self._stats.limited_time.items():
            seconds[:] = self._cell_seconds[tag * width : (tag + 1) * width]
        return self._stats

    def _bank_served(self, resources) -> None:
        """Bring the served work of ``resources`` up to now, before their load changes."""
        now = self.env.now
        self._stats.served[resources] += self._load_now[resources] * (now - self._served_since[resources])
        self._served_since[resources] = now

    def _bank_cells(self, cells: np.ndarray) -> None:
        now = self.env.now
        self._cell_seconds[cells] += self._cell_count[cells] * (now - self._cell_since[cells])
        self._cell_since[cells] = now

    def _cell_room(self, tag_count: int) -> None:
        """Size the attribution cells for tags ``0 .. tag_count - 1`` (doubling)."""
        needed = tag_count * (len(self._resources) + 1)
        if needed > len(self._cell_count):
            extra = max(needed, 2 * len(self._cell_count)) - len(self._cell_count)
            self._cell_count = np.concatenate([self._cell_count, np.zeros(extra)])
            self._cell_since = np.concatenate([self._cell_since, np.zeros(extra)])
            self._cell_seconds = np.concatenate([self._cell_seconds, np.zeros(extra)])

    def _cells_of(self, slots: np.ndarray) -> np.ndarray:
        return self._tag[slots] * (len(self._resources) + 1) + (self._limiter[slots] + 1)

    def _move_cells(self, slots: np.ndarray, sign: float) -> None:
        """Count the flows in ``slots`` into (+1) or out of (-1) their present cells,
        banking those cells' time first: time is charged per (tag, limiter) only when
        the flows in a cell change, not at every event.  Time, not bytes: a copy into the
        page cache and the write-back behind it move the same bytes, but the phase waits
        on whichever takes longer."""
        cells = self._cells_of(slots)
        # A cell listed twice is banked once: fancy-index assignment keeps one write.
        self._bank_cells(cells)
        np.add.at(self._cell_count, cells, sign)

    def _set_limiters(self, slots: np.ndarray, limiter: np.ndarray) -> None:
        """Move the flows in ``slots`` to the cells of their new ``limiter``: both the
        old and the new cells are banked first (as :meth:`_move_cells` out and in would,
        in one pass: a cell banked twice at one instant gains nothing the second time)."""
        before = self._cells_of(slots)
        self._limiter[slots] = limiter
        after = self._cells_of(slots)
        self._bank_cells(np.concatenate([before, after]))
        np.add.at(self._cell_count, before, -1.0)
        np.add.at(self._cell_count, after, 1.0)

    def add_all(self, resources: Iterable[Resource]) -> None:
        for resource in resources:
            self.add(resource)

    def tag(self, label: str, *, awaited: bool = True) -> int:
        """A small integer for ``label``; flows with a tag are attributed together.  Flows
        whose processes nobody waits for (a write-back without fsync, a destage) are tagged
        ``awaited=False``: simulated alike, listed in :attr:`unawaited_tags`."""
        if label not in self._tags:
            self._tags[label] = len(self._tags)
            self._stats.limited_time[self._tags[label]] = np.zeros(len(self._capacity) + 1)
            if not awaited:
                self._unawaited.add(self._tags[label])
        return self._tags[label]

    @property
    def tags(self) -> dict[str, int]:
        return dict(self._tags)

    @property
    def unawaited_tags(self) -> frozenset[int]:
        return frozenset(self._unawaited)

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
            slot = flow.slot
            moved = flow.work - float(self._remaining[slot])
            self._release(np.array([slot], dtype=np.int64))
            self._request_solve()
        else:
            return flow.work  # already complete
        flow.end_time = self.env.now
        return moved

    def set_capacity(self, resource: Resource, capacity: float) -> None:
        """Change a resource's nominal capacity from now on (failure, rebuild, drain)."""
        if not (math.isfinite(capacity) and capacity > 0):
            raise ValueError(f"capacity: {resource.name!r} needs a positive finite value")
        # A resource of no network has index -1, which would name this network's last one.
        if not (0 <= resource.index < len(self._resources) and self._resources[resource.index] is resource):
            raise ValueError(f"resource: {resource.name!r} is not in this network")
        self._ensure_resource_arrays()
        self._advance()
        self._capacity[resource.index] = capacity
        self._renominated.add(resource.index)
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
        if elapsed <= 0 or not self._flow_count:
            return
        # Free slots have rate 0 and infinite remaining work: they move nothing.
        moved = self._slot_rate * elapsed
        np.minimum(moved, self._remaining, out=moved)
        self._remaining -= moved
        if not (self._lowered_count or self._raised_flows):
            return  # the common case: no mechanism costs any resource capacity now
        live = self._live > 0
        tags = self._tag
        width = len(self._resources) + 1
        cells = tags * width + (self._limiter + 1)
        codes = np.zeros(len(self._live), dtype=np.int64)
        if self._lowered_count:
            codes = np.where(live & (self._limiter >= 0), self._lowered_by[np.maximum(self._limiter, 0)], 0)
        if self._raised_flows:
            # A flow held by a resource on which a mechanism raised its weight: that
            # mechanism costs it capacity there (named after a lowering one, if both).
            holding = (self._entry_resource == self._limiter[:, None]) & (self._entry_weight > 0) & live[:, None]
            raised_by = np.where(holding, self._entry_mechanism, 0).max(axis=1)
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
                if key not in self._stats.reduced_time:
                    self._stats.reduced_time[key] = np.zeros(width)
                self._stats.reduced_time[key] += by_tag[tag * width : (tag + 1) * width]

    @property
    def _flows(self) -> np.ndarray:
        """The flows in flight, in slot order (the order of :meth:`_paths` and :attr:`_rate`;
        for inspection and tests)."""
        flows = np.empty(self._flow_count, dtype=object)
        flows[:] = [self._slot_flow[slot] for slot in self._live_slots()]
        return flows

    @property
    def _rate(self) -> np.ndarray:
        """The rates of the flows in flight, in slot order."""
        return self._slot_rate[self._live_slots()]

    def _live_slots(self) -> np.ndarray:
        return np.flatnonzero(self._live)

    def _entries_of(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The path entries of the flows in ``slots``, flow after flow: (resource, weight,
        path length per flow)."""
        weight = self._entry_weight[slots]
        used = weight > 0
        return self._entry_resource[slots][used], weight[used], self._path_length[slots]

    def _paths(self) -> PathEntries:
        """The flows in flight as path entries (the weight matrix by columns), in slot
        order; rebuilt only after the set of flows changes."""
        if self._cached_paths is None:
            slots = self._live_slots()
            self._cached_paths = (slots, PathEntries(*self._entries_of(slots)))
        return self._cached_paths[1]

    def _matrix(self) -> sp.csc_array | None:
        """The R x F weight matrix of the active flows, in slot order (for inspection and
        tests; the solver works on :meth:`_paths`)."""
        if not self._flow_count:
            return None
        import scipy.sparse as sp

        paths = self._paths()
        indptr = np.zeros(len(paths.path_length) + 1, dtype=np.int64)
        np.cumsum(paths.path_length, out=indptr[1:])
        return sp.csc_array((paths.weight, paths.resource, indptr), shape=(len(self._resources), self._flow_count))

    def _release(self, slots: np.ndarray) -> None:
        """Take the flows in ``slots`` out of flight: their load, kinds and index entries
        go, and the slots are free for the next flows."""
        resource, weight, length = self._entries_of(slots)
        self._touched.update(resource.tolist())
        self._move_cells(slots, -1.0)
        self._bank_served(resource)  # a resource listed twice is banked once, as in _move_cells
        np.subtract.at(self._load_now, resource, weight * np.repeat(self._slot_rate[slots], length))
        self._count_load_kinds(resource, np.repeat(self._kind[slots], length), -1)
        if self._raised_flows:
            self._raised_flows -= int(np.count_nonzero(self._entry_mechanism[slots].any(axis=1)))
            self._entry_mechanism[slots] = 0
        for slot in slots.tolist():
            flow = self._slot_flow[slot]
            flow.slot = -1
            self._slot_flow[slot] = None
            flows_on = self._flows_on
            for index in flow.resource_index.tolist():
                flows_on[index].discard(slot)
        self._free_slots.extend(slots.tolist())
        self._flow_count -= len(slots)
        self._remaining[slots] = np.inf
        self._slot_rate[slots] = 0.0
        self._end_time[slots] = np.inf
        self._live[slots] = 0.0
        self._limiter[slots] = CAP
        self._tag[slots] = 0
        self._entry_weight[slots] = 0.0
        self._cached_paths = None

    def _complete_finished(self) -> None:
        now = self.env.now
        if not self._flow_count or now == self._checked_at:
            # Nothing moved and no rate changed since the last check at this instant (a
            # wake-up checks, then the solve it asks for would check again); new flows are
            # never done at once.
            return
        self._checked_at = now
        # A flow whose rest would take less than the clock can resolve at ``now`` is done:
        # otherwise, late in a long run, its wakeup lands at ``now`` again and never ends.
        # (remaining <= a) | (remaining <= b) as remaining <= max(a, b): fewer passes.
        threshold = self._slot_rate * clock_resolution(now)
        np.maximum(threshold, self._done_work, out=threshold)
        done = self._remaining <= threshold
        slots = np.flatnonzero(done)
        if not len(slots):
            return
        if self._completion_tolerance:
            # Only at a completion, so a flow is never ended by the tolerance alone: the
            # ones close behind the flow that ended join it.
            done |= self._end_time - now <= self._completion_tolerance * (now - self._start_time)
            slots = np.flatnonzero(done)
        # In the order they started, as when flows were kept in a list.
        slots = slots[np.argsort(self._order[slots], kind="stable")]
        if self._completion_tolerance:
            # The bytes a flow ended early had left count as served now, so every byte of
            # its work is served somewhere (only then: an exact end leaves round-off).
            resource, weight, length = self._entries_of(slots)
            np.add.at(self._stats.served, resource, weight * np.repeat(self._remaining[slots], length))
        finished = [self._slot_flow[slot] for slot in slots.tolist()]
        self._release(slots)
        for flow in finished:
            flow.end_time = now
            flow.succeed(flow)

    def _grow(self, slots_needed: int, width_needed: int) -> None:
        """Make room for ``slots_needed`` more slots and paths of ``width_needed`` entries
        (doubling, so growth is amortised)."""
        old = len(self._live)
        size = old
        if len(self._free_slots) < slots_needed:
            size = max(2 * old, old + slots_needed - len(self._free_slots), 16)
        width = max(self._path_width, width_needed)
        if size == old and width == self._path_width:
            return
        extra = size - old

        def widened(array: np.ndarray, fill) -> np.ndarray:
            grown = np.full((size, width), fill, dtype=array.dtype)
            grown[:old, : array.shape[1]] = array
            return grown

        self._entry_resource = widened(self._entry_resource, 0)
        self._entry_weight = widened(self._entry_weight, 0.0)
        self._entry_mechanism = widened(self._entry_mechanism, 0)
        self._path_width = width
        if not extra:
            return
        for name, fill in (
            ("_remaining", np.inf),
            ("_slot_rate", 0.0),
            ("_limiter", CAP),
            ("_tag", 0),
            ("_kind", 0),
            ("_done_work", 0.0),
            ("_cap", np.inf),
            ("_share", 1.0),
            ("_live", 0.0),
            ("_end_time", np.inf),
            ("_start_time", 0.0),
            ("_order", 0),
            ("_path_length", 0),
        ):
            array = getattr(self, name)
            setattr(self, name, np.concatenate([array, np.full(extra, fill, dtype=array.dtype)]))
        self._slot_flow.extend([None] * extra)
        self._reached_mark = np.concatenate([self._reached_mark, np.zeros(extra, dtype=bool)])
        self._slot_scratch = np.zeros(size, dtype=np.int64)
        # Popped from the end: the new slots are taken lowest first, before any released one.
        self._free_slots.extend(range(size - 1, old - 1, -1))

    def _merge_pending(self) -> None:
        if not self._pending:
            return
        new = self._pending
        self._pending = []
        count = len(new)
        lengths = [len(f.resource_index) for f in new]
        self._grow(count, max(lengths))
        free = self._free_slots
        slots = np.array([free.pop() for _ in range(count)], dtype=np.int64)
        flows_on = self._flows_on
        raised = 0
        for flow, slot, length in zip(new, slots.tolist(), lengths):
            flow.slot = slot
            self._slot_flow[slot] = flow
            for index in flow.resource_index.tolist():
                flows_on[index].add(slot)
            self._entry_resource[slot, :length] = flow.resource_index
            self._entry_weight[slot, :length] = flow.resource_weight
            if flow.resource_mechanism is not None and flow.resource_mechanism.any():
                self._entry_mechanism[slot, :length] = flow.resource_mechanism
                raised += 1
        self._raised_flows += raised
        kinds = np.fromiter((f.kind for f in new), dtype=np.int64, count=count)
        length_array = np.array(lengths, dtype=np.int64)
        resource = np.concatenate([f.resource_index for f in new])
        self._touched.update(resource.tolist())
        self._count_load_kinds(resource, np.repeat(kinds, length_array), +1)
        works = np.fromiter((f.work for f in new), dtype=float, count=count)
        self._path_length[slots] = length_array
        self._remaining[slots] = works
        self._done_work[slots] = _DONE_REL * works
        self._slot_rate[slots] = 0.0
        self._end_time[slots] = np.inf
        self._start_time[slots] = self.env.now
        self._limiter[slots] = CAP
        self._tag[slots] = np.fromiter((f.tag for f in new), dtype=np.int64, count=count)
        self._kind[slots] = kinds
        self._cap[slots] = np.fromiter((f.rate_cap for f in new), dtype=float, count=count)
        self._share[slots] = np.fromiter((f.share for f in new), dtype=float, count=count)
        self._live[slots] = 1.0
        # Any integer tag counts (transfer takes one), not only those tag() handed out.
        self._cell_room(int(self._tag[slots].max()) + 1)
        self._move_cells(slots, +1.0)
        self._order[slots] = np.arange(self._started, self._started + count)
        self._started += count
        self._flow_count += count
        self._unsolved.extend(slots.tolist())
        self._cached_paths = None

    def _solve(self, _event: Event) -> None:
        self._solve_pending = False
        self._advance()
        self._merge_pending()
        self._complete_finished()
        self._stats.solves += 1
        resource_count = len(self._resources)
        if not self._flow_count:
            self._touched.clear()
            self._unsolved.clear()
            self._saturated = None
            self._bank_served(slice(None))
            self._load_now = np.zeros(resource_count)
            self._record(np.zeros(resource_count), np.zeros(resource_count), np.ones(resource_count))
            return
        self._update_capacities()
        capacity = self._effective
        changed = np.concatenate(self._capacity_changes) if self._capacity_changes else np.zeros(0, dtype=np.int64)
        self._capacity_changes = []
        rechecked = self._solve_reached(capacity, changed) if self._partial_solves else None
        if rechecked is None:
            paths = self._paths()
            slots = self._cached_paths[0]
            rate, limiter = max_min_rates_of_paths(paths, capacity, self._cap[slots], self._share[slots])
            self._slot_rate[slots] = rate
            self._set_end_times(slots)
            self._set_limiters(slots, limiter)
            self._stats.flows_solved += len(slots)
            self._bank_served(slice(None))
            # float even when no flow crosses a resource (bincount of nothing gives ints).
            self._load_now = paths.load(rate, resource_count).astype(float, copy=False)
            self._saturated = self._load_now >= capacity * (1 - _SATURATED_REL)
        else:
            # Only these resources' loads or capacities moved: the rest keep their state.
            self._saturated[rechecked] = self._load_now[rechecked] >= capacity[rechecked] * (1 - _SATURATED_REL)
        self._touched.clear()
        self._unsolved.clear()
        if self._record_timeline:
            paths = self._paths()
            flow_count = np.bincount(paths.resource, minlength=resource_count)
            self._record(self._load_now / capacity, flow_count, capacity / self._capacity)
        self._schedule_wakeup()

    def _renumber(self, resource: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct ``resource`` indices in increasing order, and each entry's position
        among them (``np.unique(..., return_inverse=True)``).  Increasing, so that a tie
        between resources in the sub-problem goes the way it would in a full solve.  For
        many entries, marking them on the resources is cheaper than sorting them."""
        if len(resource) * 256 < len(self._resources):
            return np.unique(resource, return_inverse=True)
        mark = self._component_mark  # clear outside a search
        mark[resource] = True
        used = np.flatnonzero(mark)
        mark[used] = False
        position = self._resource_scratch
        position[used] = np.arange(len(used))
        return used, position[resource]

    def _search(self, seeds: np.ndarray) -> np.ndarray | None:
        """The slots the changes reach, in slot order: the new flows, the flows on the
        ``seeds`` resources, and every flow joined to those through a connecting resource
        (saturated at the last solve, or its capacity changed since); ``None`` once that
        is more than ``_PARTIAL_MAX_SHARE`` of the flows.

        Breadth first, a level at a time: the resources a level's flows cross, then the
        flows on those (from the index of flows per resource), so it costs what it
        reaches, not every flow in flight."""
        limit = _PARTIAL_MAX_SHARE * self._flow_count
        flows_on = self._flows_on
        reached_mark, component_mark = self._reached_mark, self._component_mark
        frontier = np.array(self._unsolved, dtype=np.int64)
        reached_mark[frontier] = True
        new_resources = _distinct(seeds, self._resource_scratch)
        component_mark[new_resources] = True
        found, joined = [frontier], [new_resources]
        reached_count = len(frontier)
        while True:
            if len(new_resources):
                on = np.fromiter(chain.from_iterable(flows_on[index] for index in new_resources.tolist()), np.int64)
                fresh = _distinct(on[~reached_mark[on]], self._slot_scratch)
                reached_mark[fresh] = True
                found.append(fresh)
                reached_count += len(fresh)
                if reached_count > limit:
                    break
                frontier = np.concatenate([frontier, fresh]) if len(frontier) else fresh
            if not len(frontier):
                break
            rows = self._entry_resource[frontier]
            connecting = self._saturated[rows] | self._changed_mark[rows]
            crossing = rows[(self._entry_weight[frontier] > 0) & connecting & ~component_mark[rows]]
            frontier = frontier[:0]
            new_resources = _distinct(crossing, self._resource_scratch)
            if not len(new_resources):
                break
            component_mark[new_resources] = True
            joined.append(new_resources)
        slots = np.concatenate(found)
        reached_mark[slots] = False
        component_mark[np.concatenate(joined)] = False
        if reached_count > limit:
            return None
        return np.sort(slots)

    def _solve_reached(self, capacity: np.ndarray, changed: np.ndarray) -> np.ndarray | None:
        """Re-solve the flows the changes since the last solve reach (module docstring),
        update the loads, and return the resources whose saturation must be checked again;
        ``None`` if the whole network must be solved instead (no solve yet, the changes
        reach most flows, or an unsaturated shared resource would saturate).

        The search walks the flows from the resources' index of the flows crossing them,
        so it costs what it reaches, not every flow in flight."""
        if self._saturated is None:
            return None
        # A capacity that changed (set_capacity, or a load model answering a new load) may
        # bind anywhere: its resource joins its flows whether it was saturated or not.
        joining = changed
        for _ in range(_PARTIAL_ATTEMPTS):
            self._changed_mark[joining] = True
            try:
                outcome = self._solve_component(capacity, joining)
            finally:
                self._changed_mark[joining] = False
            if outcome is None:
                return None
            if not isinstance(outcome, _Widen):
                self._stats.partial_solves += 1
                return outcome
            # A resource outside the component would fill (or has no room left): it joins
            # its flows too, and the component is searched and solved again.
            joining = np.concatenate([joining, outcome.resources])
        return None

    def _solve_component(self, capacity: np.ndarray, changed: np.ndarray) -> np.ndarray | _Widen | None:
        """One partial solve over the component the changes reach through the saturated
        resources and ``changed`` (marked in ``_changed_mark``): the resources to recheck,
        ``None`` if it reaches most flows, or the unsaturated resources shared with
        unreached flows that the sub-problem would fill, or that have no room left
        (``_Widen``)."""
        touched = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
        slots = self._search(np.concatenate([touched[self._saturated[touched]], changed]))
        if slots is None:
            return None
        if not len(slots):
            # The changes left no flow behind them (their resources emptied).
            return np.concatenate([touched, changed])
        inside_resource, inside_weight, lengths = self._entries_of(slots)
        used, local_resource = self._renumber(inside_resource)
        sub_paths = PathEntries(local_resource, inside_weight, lengths)
        used_capacity = capacity[used]
        # The unreached flows' load on these resources: the load now less the reached flows'.
        outside_load = self._load_now[used] - sub_paths.load(self._slot_rate[slots], len(used))
        room = used_capacity - outside_load
        full = room <= _SATURATED_REL * used_capacity
        if full.any():
            return _Widen(used[full])
        rate, limiter = max_min_rates_of_paths(sub_paths, room, self._cap[slots], self._share[slots])
        load = outside_load + sub_paths.load(rate, len(used))
        unsaturated = ~(self._saturated[used] | self._changed_mark[used])
        filled = np.flatnonzero(unsaturated & (load >= used_capacity * (1 - _SATURATED_REL)))
        if len(filled):
            # Filling a resource whose flows are all in the component is the sub-problem's
            # own answer; one that unreached flows share needs them in the solve too.
            inside = np.bincount(local_resource, minlength=len(used))[filled]
            on = np.array([len(self._flows_on[index]) for index in used[filled].tolist()])
            shared = filled[on > inside]
            if len(shared):
                return _Widen(used[shared])
        self._bank_served(used)
        self._load_now[used] = load
        self._slot_rate[slots] = rate
        self._set_end_times(slots)
        held = limiter >= 0
        limiter[held] = used[limiter[held]]
        self._set_limiters(slots, limiter)
        self._stats.flows_solved += len(slots)
        return np.concatenate([used, touched, changed])

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
        self._dirty_rows.update(position[on_model].tolist())

    def _effective_capacity(self) -> np.ndarray:
        """Each resource's capacity under its present load (a copy)."""
        self._ensure_resource_arrays()
        self._update_capacities()
        return self._effective.copy()

    def _update_capacities(self) -> None:
        """Bring the effective capacities up to date and note the resources whose value
        changed (for the next solve).  A load model is called again only for a resource
        whose load or nominal capacity changed since it was last asked (load models are
        pure): most solves change a few of hundreds."""
        changed: list[int] = []
        for index in self._renominated:
            if self._load_position[index] >= 0:
                self._dirty_rows.add(int(self._load_position[index]))
            elif self._effective[index] != self._capacity[index]:
                self._effective[index] = self._capacity[index]
                changed.append(index)
        self._renominated.clear()
        if self._dirty_rows:
            positions = np.fromiter(self._dirty_rows, dtype=np.int64, count=len(self._dirty_rows))
            self._dirty_rows.clear()
            rows, kinds = self._load_rows[positions], self._load_kinds[positions]
            random = kinds[:, RANDOM_READ] + kinds[:, RANDOM_WRITE]
            key = np.column_stack((kinds.sum(axis=1), kinds[:, READ], kinds[:, WRITE], random, self._capacity[rows]))
            differs = (key != self._load_key[positions]).any(axis=1)
            for position, row, row_key in zip(positions[differs].tolist(), rows[differs].tolist(), key[differs]):
                resource = self._load_dependent[position]
                load = ResourceLoad(*(int(count) for count in row_key[:4]))
                nominal = float(row_key[4])
                effective = resource.capacity_at(load, nominal=nominal)
                if effective != self._effective[row]:
                    self._effective[row] = effective
                    changed.append(row)
                lowered = lowering_mechanism(resource.load_model, nominal, load) if load.flow_count else ""
                code = self.mechanism_code(lowered)
                self._lowered_count += int(code > 0) - int(self._lowered_by[row] > 0)
                self._lowered_by[row] = code
                self._load_key[position] = row_key
        if changed:
            self._capacity_changes.append(np.array(changed, dtype=np.int64))

    def _set_end_times(self, slots: np.ndarray) -> None:
        self._checked_at = -math.inf  # new rates: a flow may now be within a clock tick of its end
        rate = self._slot_rate[slots]
        with np.errstate(divide="ignore"):
            self._end_time[slots] = np.where(rate > 0, self.env.now + self._remaining[slots] / rate, np.inf)

    def _schedule_wakeup(self) -> None:
        earliest = float(self._end_time.min())
        if math.isinf(earliest):
            stuck = self._slot_flow[int(self._live_slots()[0])]
            raise RuntimeError(f"flow {stuck.name!r} cannot progress: every rate is zero")
        now = self.env.now
        delay = max(earliest - now, clock_resolution(now))
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
