"""The SimPy event loop and the fluid bandwidth-sharing network (DESIGN.md section 4)."""

from simfs.engine.flow import Flow, Path
from simfs.engine.maxmin import CAP, max_min_rates
from simfs.engine.network import FluidNetwork
from simfs.engine.resource import OTHER, READ, WRITE, LoadModel, Resource, ResourceLoad

__all__ = [
    "CAP",
    "OTHER",
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
