"""Flows: an amount of work crossing an ordered path of resources.

A :class:`Flow` is a SimPy event that succeeds when its last byte (or operation) has
crossed its path, so a process simply ``yield``\\ s it::

    yield network.transfer(50e9, [(client_nic, 1.0), (ost, 1.0)])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from simpy.events import Event

from simfs.engine.resource import OTHER, RANDOM_READ, RANDOM_WRITE, READ, WRITE
from simfs.errors import check_whole

if TYPE_CHECKING:
    from simfs.engine.network import FluidNetwork
    from simfs.engine.resource import Resource

#: A path: (resource, weight) pairs; the flow loads a resource with ``weight * rate``.
#: A flow's path: (resource, weight) per resource it crosses (units of the resource's
#: capacity per unit of work), or (resource, weight, mechanism) where a mechanism raised
#: the weight above the plain cost (TCP incast on a NIC, RAID read-modify-write on a
#: target): when that resource limits the flow, the mechanism is named beside it.
Path = Sequence[tuple["Resource", float] | tuple["Resource", float, str]]


#: The kinds of load a flow puts on the resources it crosses (``simfs.engine.resource``).
_KINDS = (OTHER, READ, WRITE, RANDOM_READ, RANDOM_WRITE)


class Flow(Event):
    """Work in flight through a :class:`~simfs.engine.network.FluidNetwork`.

    Create flows with :meth:`FluidNetwork.transfer`, not directly.  The event's value is
    the flow itself, so ``flow = yield network.transfer(...)`` gives access to its
    :attr:`start_time` and :attr:`end_time`.
    """

    __slots__ = (
        "name",
        "tag",
        "kind",
        "work",
        "rate_cap",
        "share",
        "resource_index",
        "resource_weight",
        "resource_mechanism",
        "start_time",
        "end_time",
        "slot",
    )

    def __init__(
        self,
        network: FluidNetwork,
        work: float,
        path: Path,
        *,
        rate_cap: float = math.inf,
        share: float = 1.0,
        name: str = "",
        tag: int = 0,
        kind: int = 0,
    ) -> None:
        super().__init__(network.env)
        if not (math.isfinite(work) and work >= 0):
            raise ValueError(f"work: flow {name!r} needs a finite non-negative amount, got {work!r}")
        if not rate_cap > 0:
            raise ValueError(f"rate_cap: flow {name!r} needs a positive cap, got {rate_cap!r}")
        if not (math.isfinite(share) and share > 0):
            raise ValueError(f"share: flow {name!r} needs a positive share, got {share!r}")
        # Both index arrays (a kind's load column, a tag's attribution cells): out of range,
        # one crashes at the solve and the other loses the flow's attribution unseen.
        if isinstance(kind, bool) or kind not in _KINDS:
            raise ValueError(
                f"kind: flow {name!r}: expected OTHER, READ, WRITE, RANDOM_READ or RANDOM_WRITE (0-4), got {kind!r}"
            )
        check_whole(f"flow {name!r}", "tag", tag, 0)
        resources = network.resources
        indices = []
        weights = []
        mechanisms: dict[int, str] = {}
        for entry in path:
            resource, weight = entry[0], entry[1]
            index = resource.index
            if index < 0 or index >= len(resources) or resources[index] is not resource:
                raise ValueError(f"path: resource {resource.name!r} is not in this network")
            indices.append(index)
            weights.append(weight)
            if len(entry) > 2 and entry[2]:
                mechanisms[index] = entry[2]
        if len(set(indices)) < len(indices):
            # A path that crosses a resource twice loads it with the sum of its weights.
            merged: dict[int, float] = {}
            for index, weight in zip(indices, weights):
                merged[index] = merged.get(index, 0.0) + weight
            indices, weights = list(merged), list(merged.values())
        self.resource_index = np.array(indices, dtype=np.int64)
        self.resource_weight = np.array(weights, dtype=float)
        # Which mechanism raised the weight of each entry (a network code; 0: none), or
        # None when no entry names one (the common case, kept cheap).
        self.resource_mechanism = (
            np.array([network.mechanism_code(mechanisms.get(index, "")) for index in indices], dtype=np.int64)
            if mechanisms
            else None
        )
        if not (np.isfinite(self.resource_weight).all() and (self.resource_weight > 0).all()):
            bad = next(w for w in weights if not (math.isfinite(w) and w > 0))
            raise ValueError(f"path: flow {name!r} has weight {bad!r}; weights must be positive and finite")
        if not path and math.isinf(rate_cap):
            raise ValueError(f"path: flow {name!r} crosses no resource and has no rate cap")
        self.name = name
        self.tag = tag
        self.kind = kind
        self.work = float(work)
        self.rate_cap = float(rate_cap)
        self.share = float(share)
        self.start_time = network.env.now
        self.end_time = math.nan
        self.slot = -1

    @property
    def duration(self) -> float:
        """Seconds from start to completion (NaN while in flight)."""
        return self.end_time - self.start_time

    def __repr__(self) -> str:
        return f"Flow({self.name!r}, work={self.work:.6g})"
