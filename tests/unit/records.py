"""Testbed run records made by hand, for the tests of the fits that read them, and a
check of the committed ones."""

import json
from pathlib import Path

#: The machine probe's hashing CPU time on this machine (0.593-0.604 s per GiB on
#: 2026-11-27 and 28): committed records made elsewhere would say so.
SHA256_CPU_S_PER_GIB = (0.55, 0.65)


def assert_probed_on_these_cores(folder: Path) -> None:
    """Every record in ``folder`` carries the machine probe, and it hashed at this
    machine's speed."""
    paths = sorted(folder.glob("*.json"))
    assert paths, folder
    low, high = SHA256_CPU_S_PER_GIB
    for path in paths:
        probe = json.loads(path.read_text())["testbed"]["machine_probe"]
        assert low < probe["sha256_cpu_s_per_gib"] < high, path.name


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
