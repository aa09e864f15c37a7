"""Testbed run records made by hand, for the tests of the fits that read them."""


def mdtest_record(items: int, walls_s: dict[str, float], busy_s: float, *, ranks: int = 1) -> dict:
    """A testbed mdtest record of ``ranks`` processes, ``items`` per phase, with the given
    wall time per item of each phase and the machine's busy core-seconds."""
    phases = [{"op": op, "ops": items, "makespan_s": items * wall} for op, wall in walls_s.items()]
    return {
        "status": "ok",
        "tool": "mdtest",
        "ranks": ranks,
        "phases": phases,
        "testbed": {"cpu_busy_s": busy_s, "cpus": 2},
    }
