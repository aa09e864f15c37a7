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
