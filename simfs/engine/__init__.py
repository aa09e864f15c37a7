"""The SimPy event loop and the fluid bandwidth-sharing network (DESIGN.md section 4)."""

from simfs.engine.flow import Flow, Path
from simfs.engine.maxmin import CAP, max_min_rates
from simfs.engine.network import FluidNetwork
from simfs.engine.resource import Resource

__all__ = ["CAP", "Flow", "FluidNetwork", "Path", "Resource", "max_min_rates"]
