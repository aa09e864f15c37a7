"""Experiment settings: how a workload is run on a system (DESIGN.md: platform, workload
and experiment are separate inputs).

Settings a user can give with ``--nodes``, ``--set KEY=VALUE`` or ``--vary KEY=...``:

=================  =========================================================  ==========
key                meaning                                                    default
=================  =========================================================  ==========
``nodes``          client nodes taking part                                   1
``ppn``            processes (ranks) per node                                 1
``stripe_count``   stripe count of the files the workload creates (-1: all)   profile
``overstripe_count``  Lustre overstriping (``lfs setstripe -C N``): N stripe   none
                   objects per file, placed round robin over the OSTs, more
                   than one per OST where N exceeds their count (each object
                   its own extent-lock resource); instead of ``stripe_count``
``stripe_size``    stripe size (bytes, or IOR-style ``1m``, ``64k``)           profile
``stripe_offset``  -1: MDS round robin from a random start; i: fixed first OST profile
``seed``           seed of every random choice in the run                     0
``background``     another job's command line, run at the same time on        none
                   other nodes (interference; its phases are labelled
                   ``background ...``)
``background_nodes``  client nodes of the background job (after ``nodes``)    0
``background_ppn`` processes per node of the background job                   1
``mode``           how data phases run: ``auto`` (request level where writers auto
                   of one file on several nodes contend for its locks, fluid
                   elsewhere), ``fluid`` or ``request`` (every shared-file
                   write at request level)
``completion_tolerance``  when a flow ends, the flows that would end within   0
                   this fraction of their duration so far end with it: one
                   solve for completions microseconds apart (a fraction in
                   [0, 0.01]; 0: exact; 1e-4 moved a 10,000-client IOR's
                   rates by under 0.01% at 60-70% of the CPU time,
                   docs/background/fluid-model.md)
=================  =========================================================  ==========

A background job starts with the main one, on nodes ``nodes .. nodes +
background_nodes - 1``, with its own barriers; it runs its workload once.  Sweeping
``background_nodes=0,8,16`` shows what a neighbour does to a job.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from typing import Any

from simfs.errors import ExperimentError, SimfsError
from simfs.units import parse_ior_size

EXPERIMENT_KEYS = (
    "nodes",
    "ppn",
    "stripe_count",
    "overstripe_count",
    "stripe_size",
    "stripe_offset",
    "seed",
    "background",
    "background_nodes",
    "background_ppn",
    "mode",
    "completion_tolerance",
)
#: Largest ``completion_tolerance`` of an experiment (the engine itself takes up to 1):
#: beyond 1% a flow's end moves by more than a model's own error, which is no longer a
#: saving of solves but a change of answer.
MAX_COMPLETION_TOLERANCE = 0.01
#: Values of the ``mode`` setting.
MODES = ("auto", "fluid", "request")


@dataclass(frozen=True)
class Experiment:
    nodes: int = 1
    ppn: int = 1
    stripe_count: int | None = None
    stripe_size: int | None = None
    overstripe_count: int | None = None
    stripe_offset: int | None = None
    seed: int = 0
    background: str | None = None
    background_nodes: int = 0
    background_ppn: int = 1
    mode: str = "auto"
    completion_tolerance: float = 0.0

    def __post_init__(self) -> None:
        for name, minimum in (("nodes", 1), ("ppn", 1), ("seed", 0), ("background_nodes", 0), ("background_ppn", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
                kind = "positive" if minimum else "non-negative"
                raise ExperimentError(f"{name}: expected a {kind} integer, got {value!r}")
        for name in ("stripe_count", "overstripe_count", "stripe_size", "stripe_offset"):
            value = getattr(self, name)
            # A fractional or NaN stripe setting passes the range checks below and ends in
            # a TypeError (or a list lookup) inside the layout.
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
                raise ExperimentError(f"{name}: expected an integer, got {value!r}")
        if self.stripe_count is not None and (self.stripe_count == 0 or self.stripe_count < -1):
            raise ExperimentError(f"stripe_count: expected a positive integer or -1, got {self.stripe_count!r}")
        if self.overstripe_count is not None:
            if self.overstripe_count < 1:
                raise ExperimentError(
                    f"overstripe_count: expected a positive number of stripe objects, got {self.overstripe_count!r}"
                )
            if self.stripe_count is not None:
                raise ExperimentError(
                    "overstripe_count: set either stripe_count or overstripe_count (lfs setstripe -c or -C), not both"
                )
        if self.stripe_size is not None and (self.stripe_size <= 0 or self.stripe_size % 65536):
            raise ExperimentError(
                f"stripe_size: expected a positive multiple of 64 KiB (Lustre's minimum), got {self.stripe_size!r}"
            )
        if self.stripe_offset is not None and self.stripe_offset < -1:
            raise ExperimentError(f"stripe_offset: expected -1 or an OST index, got {self.stripe_offset!r}")
        if self.background is not None and (not isinstance(self.background, str) or not self.background.strip()):
            raise ExperimentError(f"background: expected a workload command line, got {self.background!r}")
        if self.background is not None:
            # Parsed now even with no background nodes (a sweep may add them later): a typo
            # must not wait for the point that uses it.
            from simfs.workloads import parse_workload

            try:
                parse_workload(self.background)
            except SimfsError as exc:
                raise ExperimentError(f"background: {exc}") from None
        if self.mode not in MODES:
            raise ExperimentError(f"mode: expected one of {', '.join(MODES)}, got {self.mode!r}")
        tolerance = self.completion_tolerance
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, numbers.Real)
            or not 0.0 <= tolerance <= MAX_COMPLETION_TOLERANCE
        ):
            raise ExperimentError(
                f"completion_tolerance: expected a fraction from 0 to {MAX_COMPLETION_TOLERANCE} "
                f"(such as 1e-4), got {tolerance!r}"
            )
        if self.background_nodes and self.background is None:
            raise ExperimentError("background_nodes: set background to the job's command line as well")

    @property
    def has_background(self) -> bool:
        return bool(self.background) and self.background_nodes > 0

    @property
    def ranks(self) -> int:
        return self.nodes * self.ppn

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> Experiment:
        """Build from loosely typed settings (CLI strings or Python values)."""
        values: dict[str, Any] = {}
        for key, value in settings.items():
            if key not in EXPERIMENT_KEYS:
                raise ExperimentError(
                    f"unknown experiment setting {key!r} (expected one of {', '.join(EXPERIMENT_KEYS)})"
                )
            if value is None:
                continue
            if key in ("background", "mode"):
                values[key] = str(value)
            elif key == "completion_tolerance":
                values[key] = _fraction(key, value)
            else:
                values[key] = _size(key, value) if key == "stripe_size" else _integer(key, value)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _integer(key: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ExperimentError(f"{key}: expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ExperimentError(f"{key}: expected an integer, got {value!r}") from None


def _fraction(key: str, value: Any) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        raise ExperimentError(f"{key}: expected a number such as 1e-4, got {value!r}") from None


def _size(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return parse_ior_size(str(value))
    except ValueError:
        raise ExperimentError(f"{key}: expected a size such as 1048576 or 1m, got {value!r}") from None
