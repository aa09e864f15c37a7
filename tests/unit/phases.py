"""Shared test helper: one phase's row of a simulation result."""


def phase(result, name):
    return result.phases.set_index("phase").loc[name]
