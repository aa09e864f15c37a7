"""Resources: anything with a capacity that flows share.

A resource is a link direction, a disk, a controller, a server CPU or a metadata service.
Its capacity is in units per second (bytes/s for data, operations/s for metadata).  The
capacity may depend on the load the resource carries at the moment (how many flows cross
it), which is where contention collapse is modelled: an HDD that serves more interleaved
streams seeks more and delivers less.  Load is counted before rates are solved, so the
solver needs no fixed-point iteration.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Protocol

#: Flow kinds a load model can tell apart (``Flow.kind``): random reads and writes go to
#: offsets in no order (IOR ``-z``), so each request of theirs is a visit of its own.
OTHER, READ, WRITE, RANDOM_READ, RANDOM_WRITE = 0, 1, 2, 3, 4
KIND_COUNT = 5


@dataclass(frozen=True)
class ResourceLoad:
    """What crosses a resource at one instant: how many flows, and of which kind."""

    flow_count: int
    read_count: int = 0
    write_count: int = 0
    #: Flows of random offsets (``RANDOM_READ``, ``RANDOM_WRITE``), counted apart from
    #: the sequential ``read_count`` and ``write_count``.
    random_count: int = 0


class LoadModel(Protocol):
    """Capacity as a function of load: ``model(nominal_capacity, load) -> capacity``.

    Implementations live next to the hardware they describe (e.g. seek thrashing in
    ``simfs.hardware.hdd``); they may name the switchable mechanism they model in a
    ``mechanism`` attribute (``"hdd_seek"``), which results report beside a bottleneck
    whose capacity it lowered.  They must return a positive, finite capacity, and depend on
    nothing but their arguments: the network calls a model again only when a resource's
    load or nominal capacity changed.
    """

    def __call__(self, nominal_capacity: float, load: ResourceLoad) -> float: ...


class CombinedLoad:
    """Several load models on one resource, applied in turn: their factors multiply."""

    __slots__ = ("_models",)

    def __init__(self, *models: LoadModel) -> None:
        self._models = models

    def lowering(self, nominal_capacity: float, load: ResourceLoad) -> str:
        """The mechanisms of the models that lowered the capacity under ``load``."""
        names = []
        capacity = nominal_capacity
        for model in self._models:
            lowered = model(capacity, load)
            if lowered < capacity * (1 - 1e-9) and load_mechanism(model):
                names.append(load_mechanism(model))
            capacity = lowered
        return "+".join(names)

    def __call__(self, nominal_capacity: float, load: ResourceLoad) -> float:
        capacity = nominal_capacity
        for model in self._models:
            capacity = model(capacity, load)
        return capacity


def load_mechanism(model: LoadModel | None) -> str:
    """The mechanism a load model stands for (its ``mechanism`` attribute), or ``""``."""
    return str(getattr(model, "mechanism", "")) if model is not None else ""


def lowering_mechanism(model: LoadModel, nominal_capacity: float, load: ResourceLoad) -> str:
    """Which mechanism(s) of ``model`` lowered the capacity under ``load`` (``""``: none)."""
    if isinstance(model, CombinedLoad):
        return model.lowering(nominal_capacity, load)
    lowered = model(nominal_capacity, load) < nominal_capacity * (1 - 1e-9)
    return load_mechanism(model) if lowered else ""


def combine_load_models(*models: LoadModel | None) -> LoadModel | None:
    """One load model for a resource from any number of optional ones."""
    present = [m for m in models if m is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else CombinedLoad(*present)


class Resource:
    """A named capacity shared by the flows that cross it.

    Parameters
    ----------
    name:
        Unique, human-readable name (``"oss3.nic.rx"``); used in results and errors.
    capacity:
        Nominal capacity in ``unit`` per second; must be positive and finite.
    kind:
        The class of hardware (``"client-nic"``, ``"ost"``, ...): results attribute
        bottlenecks by kind so that 64 identical NICs read as one cause.
    unit:
        ``"B"`` for bytes, ``"op"`` for metadata operations.
    load_model:
        Optional :class:`LoadModel`; ``None`` means the capacity does not depend on load.
    """

    __slots__ = ("_name", "_capacity", "_kind", "_unit", "_load_model", "index")

    def __init__(
        self,
        name: str,
        capacity: float,
        *,
        kind: str = "resource",
        unit: str = "B",
        load_model: LoadModel | None = None,
    ) -> None:
        if not name:
            raise ValueError("name: a resource needs a non-empty name")
        # Any real number (numpy's too), not a bool: True would be a capacity of 1.
        if isinstance(capacity, bool) or not (
            isinstance(capacity, numbers.Real) and math.isfinite(capacity) and capacity > 0
        ):
            raise ValueError(f"capacity: resource {name!r} needs a positive finite capacity, got {capacity!r}")
        self._name = name
        self._capacity = float(capacity)
        self._kind = kind
        self._unit = unit
        self._load_model = load_model
        # Position in the owning network's arrays, set when the network adopts it.
        self.index = -1

    @property
    def name(self) -> str:
        return self._name

    @property
    def capacity(self) -> float:
        """Nominal capacity (units/s), before any load dependence."""
        return self._capacity

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def unit(self) -> str:
        return self._unit

    @property
    def load_model(self) -> LoadModel | None:
        return self._load_model

    def capacity_at(self, load: ResourceLoad, nominal: float | None = None) -> float:
        """Effective capacity under ``load`` (``nominal`` overrides the constructor's value,
        e.g. after :meth:`FluidNetwork.set_capacity`)."""
        nominal = self._capacity if nominal is None else nominal
        if self._load_model is None or load.flow_count == 0:
            return nominal
        capacity = self._load_model(nominal, load)
        if not (math.isfinite(capacity) and capacity > 0):
            raise ValueError(f"load model of {self._name!r} returned {capacity!r} for {load}")
        return capacity

    def __repr__(self) -> str:
        return f"Resource({self._name!r}, {self._capacity:.6g} {self._unit}/s, kind={self._kind!r})"
