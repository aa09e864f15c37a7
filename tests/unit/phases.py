"""Shared test helper: one phase's row of a simulation result."""


def phase(result, name):
    return result.phases.set_index("phase").loc[name]


def open_close_s(system, first: str = "create") -> float:
    """A lone process's metadata time around a data phase: its create (or open) and its
    close, each a round trip plus the server's work (``core/metadata.py``)."""
    md = system.metadata
    return 2 * system.io.metadata_latency_s + md.demand_s(first) + md.demand_s("close")
