"""The machine a live run ran on, for its JSON record: enough to tell two runs apart and to
pick a profile (cores, memory, kernel, and the file system under the target)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any


def mount_of(path: Path) -> dict[str, str]:
    """The ``/proc/self/mounts`` entry that holds ``path`` (the longest mount point above it)."""
    best = {"mount_point": "", "fs_type": "unknown", "device": "", "options": ""}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return best
    target = str(path.resolve())
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        # /proc/mounts escapes spaces as \040.
        mount_point = fields[1].replace("\\040", " ")
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best["mount_point"]):
            best = {"mount_point": mount_point, "fs_type": fields[2], "device": fields[0], "options": fields[3]}
    return best


def memory_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine_info(target: Path) -> dict[str, Any]:
    uname = platform.uname()
    stats = os.statvfs(target)
    return {
        "hostname": socket.gethostname(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_bytes": memory_bytes(),
        "kernel": f"{uname.system} {uname.release}",
        "python": platform.python_version(),
        "target": {
            **mount_of(target),
            "block_bytes": stats.f_frsize,
            "size_bytes": stats.f_blocks * stats.f_frsize,
            "free_bytes": stats.f_bavail * stats.f_frsize,
        },
    }


def cpu_times() -> tuple[int, int, int, int]:
    """(busy, total, nice, steal) clock ticks of all CPUs since boot: nice is what
    lowered-priority processes used (a background job sharing the machine), steal what
    the hypervisor gave to other guests while this one waited.  Zeros where there is no
    ``/proc/stat``."""
    try:
        fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0, 0, 0, 0
    fields += [0] * (8 - len(fields))
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # guest time is already counted in user time
    return total - idle, total, fields[1], fields[7]


def cpu_between(before: tuple[int, int, int, int], after: tuple[int, int, int, int]) -> dict[str, float]:
    """The machine's CPU use between two :func:`cpu_times`: busy core-seconds (every
    process), and of them the niced ones (another job at lower priority) and the stolen
    ones (the hypervisor's), over a window of ``cpu_window_s`` on ``cpus`` cores."""
    busy, total, nice, steal = (later - earlier for later, earlier in zip(after, before))
    cpus = os.cpu_count() or 1
    tick_s = 1 / os.sysconf("SC_CLK_TCK")
    return {
        "cpu_utilisation": busy / total if total > 0 else 0.0,
        "cpu_busy_s": busy * tick_s,
        "cpu_window_s": total * tick_s / cpus,
        "cpus": cpus,
        "cpu_nice_s": nice * tick_s,
        "cpu_steal_s": steal * tick_s,
    }


def load_snapshot() -> dict[str, Any]:
    """What the machine was doing as a run starts: the load averages, the runner's own
    niceness and the CPU counters :func:`load_during` measures the run's share from."""
    try:
        averages = [float(value) for value in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        averages = []
    return {"loadavg_at_start": averages, "runner_nice": os.nice(0), "ticks": cpu_times()}


def load_during(start: dict[str, Any]) -> dict[str, Any]:
    """``machine.load`` of a run record: the load averages and the runner's niceness at
    ``start`` (:func:`load_snapshot`) and :func:`cpu_between` it and now.  A miss on a
    machine that was not idle is read with these beside it."""
    return {
        "loadavg_at_start": start["loadavg_at_start"],
        "runner_nice": start["runner_nice"],
        **cpu_between(start["ticks"], cpu_times()),
    }


#: Niced and stolen CPU time above this share of a run's CPU capacity: the machine was
#: shared (the runner's and the testbed's own processes run at normal priority).
SHARED_CPU_SHARE = 0.05


def shared_machine(capacity_core_s: float, nice_s: float, steal_s: float, *, runner_niced: bool = False) -> str | None:
    """A line saying what else used the machine during a run (niced processes: another
    job at lower priority; stolen time: the hypervisor's), or None where that was under
    :data:`SHARED_CPU_SHARE` of the run's ``capacity_core_s``.  Where the run itself was
    niced (``runner_niced``), its own processes are among the niced ones, and only stolen
    time counts.  Niced work mostly yields (on 2026-11-28 the testbed's MooseFS CI point
    read at 22.3 MB/s beside an IO500 study at nice 19 on both cores and at 22.2 with it
    stopped); stolen time takes cores outright.  The line says what the machine ran, for
    whoever reads a miss; it excuses none."""
    others = steal_s + (0.0 if runner_niced else nice_s)
    if capacity_core_s <= 0 or others <= SHARED_CPU_SHARE * capacity_core_s:
        return None
    niced = "" if runner_niced else f"niced processes used {nice_s:.1f} core-s and "
    return (
        f"the machine was shared during the run: {niced}the hypervisor took {steal_s:.1f} s "
        f"of the {capacity_core_s:.1f} core-s the run had"
    )
