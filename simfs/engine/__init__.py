"""The SimPy event loop and the fluid bandwidth-sharing network (DESIGN.md section 4).

The names below are loaded on first use (PEP 562): hardware descriptions name
:class:`Resource` types, and reading a profile (``simfs show``) should not import numpy and
SimPy, which the flow network needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simfs.engine.flow import Flow, Path
    from simfs.engine.maxmin import CAP, max_min_rates
    from simfs.engine.network import FluidNetwork
    from simfs.engine.resource import OTHER, RANDOM_READ, RANDOM_WRITE, READ, WRITE, LoadModel, Resource, ResourceLoad

_MODULE_OF = {
    "CAP": "maxmin",
    "max_min_rates": "maxmin",
    "Flow": "flow",
    "Path": "flow",
    "FluidNetwork": "network",
    "OTHER": "resource",
    "RANDOM_READ": "resource",
    "RANDOM_WRITE": "resource",
    "READ": "resource",
    "WRITE": "resource",
    "LoadModel": "resource",
    "Resource": "resource",
    "ResourceLoad": "resource",
}

__all__ = [
    "CAP",
    "OTHER",
    "RANDOM_READ",
    "RANDOM_WRITE",
    "READ",
    "WRITE",
    "Flow",
    "FluidNetwork",
    "LoadModel",
    "Path",
    "Resource",
    "ResourceLoad",
    "max_min_rates",
]


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF])
