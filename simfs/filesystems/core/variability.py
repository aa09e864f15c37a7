"""Imbalance and variability: seeded, explicit, and every distribution knows its mean.

Real runs are not symmetric: nodes of one model differ in speed (turbo, memory, OS noise),
targets in media rate (zones, background RAID work), and requests in service time; a few
nodes straggle; tools launched without barriers start at different moments.  simfs draws
all of these from the run's seed (``Experiment.seed``), never from the clock, so one seed
gives one answer and a user who asks for repeats gets the spread over seeds
(``simfs.repeat``, ``--repeats``).

Profile table ``[variability]`` (all default to 0: the symmetric, deterministic model):

======================  ========================================================  =========
field                   meaning                                                   unit
======================  ========================================================  =========
``node_cv``             spread of client nodes' speed (their cores: copy rates    ratio
                        and per-call time; not the NIC): each node's factor is
                        lognormal with mean 1 and this coefficient of variation
``target_cv``           spread of targets' rate, the same way                     ratio
``service_cv``          spread of request service times (metadata, targets,       ratio
                        request level): each request's demand times a lognormal
                        factor of mean 1
``straggler_fraction``  fraction of client nodes that straggle                    ratio
``straggler_slowdown``  how many times slower a straggler is                      ratio
``start_jitter_s``      tools without barriers (bonnie++): each rank starts up    s
                        to this much after the others (uniform)
======================  ========================================================  =========

A lognormal of mean 1 and coefficient of variation ``c`` has ``sigma^2 = ln(1 + c^2)``
and ``mu = -sigma^2 / 2``; its mean is 1 exactly, so variability spreads a run without
moving its expectation (tested).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simfs.errors import ProfileError, check_finite
from simfs.systems.profile import Profile

if TYPE_CHECKING:
    # numpy is imported where arrays are made: reading a profile (``simfs show``) never
    # makes one, and numpy is most of that command's start-up.
    import numpy as np


@dataclass(frozen=True)
class LogNormalFactor:
    """A positive factor with mean 1 and coefficient of variation ``cv`` (0: always 1)."""

    cv: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.cv) and self.cv >= 0):
            raise ValueError(f"cv: expected a non-negative coefficient of variation, got {self.cv!r}")

    @property
    def mean(self) -> float:
        return 1.0

    @property
    def sigma(self) -> float:
        return math.sqrt(math.log1p(self.cv**2))

    def sample(self, rng: np.random.Generator, size: int | None = None) -> float | np.ndarray:
        import numpy as np

        if self.cv == 0:
            return 1.0 if size is None else np.ones(size)
        sigma = self.sigma
        return rng.lognormal(-(sigma**2) / 2, sigma, size)


@dataclass(frozen=True)
class Variability:
    """The ``[variability]`` table (see the module docstring)."""

    node_cv: float = 0.0
    target_cv: float = 0.0
    service_cv: float = 0.0
    straggler_fraction: float = 0.0
    straggler_slowdown: float = 1.0
    start_jitter_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("node_cv", "target_cv", "service_cv", "start_jitter_s"):
            check_finite("variability", name, getattr(self, name), 0)
        check_finite("variability", "straggler_fraction", self.straggler_fraction, 0)
        if self.straggler_fraction > 1:
            raise ValueError(f"variability: straggler_fraction: expected at most 1, got {self.straggler_fraction!r}")
        # A straggler is slower: a slowdown below 1 would make it faster.
        check_finite("variability", "straggler_slowdown", self.straggler_slowdown, 1)

    @property
    def node_factor_mean(self) -> float:
        """The mean of :meth:`node_factors`: the lognormal spread has mean 1, and a
        straggler (probability ``straggler_fraction``) runs at ``1 / straggler_slowdown``."""
        return 1 - self.straggler_fraction + self.straggler_fraction / self.straggler_slowdown

    @property
    def start_jitter_mean_s(self) -> float:
        """The mean delay of an unsynchronised start (uniform on ``[0, start_jitter_s]``)."""
        return self.start_jitter_s / 2

    @property
    def any(self) -> bool:
        return bool(self.node_cv or self.target_cv or self.service_cv or self.straggler_fraction or self.start_jitter_s)

    def node_factors(self, rng: np.random.Generator, nodes: int) -> np.ndarray:
        """Each client node's speed factor (straggler slowdowns included)."""
        import numpy as np

        factors = LogNormalFactor(self.node_cv).sample(rng, nodes)
        if self.straggler_fraction and nodes:
            stragglers = rng.random(nodes) < self.straggler_fraction
            factors = np.where(stragglers, factors / self.straggler_slowdown, factors)
        return np.asarray(factors, dtype=float)

    def target_factors(self, rng: np.random.Generator, targets: int) -> np.ndarray:
        import numpy as np

        return np.asarray(LogNormalFactor(self.target_cv).sample(rng, targets), dtype=float)

    def service_factor(self, rng: np.random.Generator) -> float:
        return float(LogNormalFactor(self.service_cv).sample(rng)) if self.service_cv else 1.0


def variability_from_profile(profile: Profile) -> Variability:
    table = "variability"
    try:
        return Variability(
            node_cv=profile.number(f"{table}.node_cv", 0.0, minimum=0),
            target_cv=profile.number(f"{table}.target_cv", 0.0, minimum=0),
            service_cv=profile.number(f"{table}.service_cv", 0.0, minimum=0),
            straggler_fraction=profile.number(f"{table}.straggler_fraction", 0.0, minimum=0, maximum=1),
            straggler_slowdown=profile.number(f"{table}.straggler_slowdown", 1.0, minimum=1),
            start_jitter_s=profile.number(f"{table}.start_jitter_s", 0.0, minimum=0),
        )
    except ValueError as exc:
        raise ProfileError(f"{profile.origin}: {exc}") from None  # the message names variability.field
