"""CPU cost of starting the ``simfs`` command (not part of the test run).

Each command runs as a whole process, as a user types it; the CPU time (user + system,
from ``os.wait4``) is what the issue-17 goal is about: ``simfs --help``, ``simfs
systems`` and ``simfs show`` under 0.25 s.  A one-point ``simulate`` shows the overhead
of the first real run (numpy, scipy, pandas and the engine imported).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

SIMFS = Path(sys.executable).with_name("simfs")
COMMANDS = {
    "simfs --help": ["--help"],
    "simfs --version": ["--version"],
    "simfs systems": ["systems"],
    "simfs show crtdc-lfs5": ["show", "crtdc-lfs5"],
    "simfs simulate (1 node dd, 1 point)": [
        "simulate",
        "--system",
        "crtdc-lfs5",
        "--workload",
        "dd bs=1024000 count=5000",
        "--nodes",
        "1",
    ],
}


def cpu_seconds(arguments: list[str]) -> float:
    """User + system CPU seconds of one run of ``simfs arguments``."""
    # The warm-up writes .pyc files as on a user's machine, even where the shell says
    # not to (PYTHONDONTWRITEBYTECODE compiles every module on every start: +0.07 s).
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(
        [str(SIMFS), *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"simfs {' '.join(arguments)}: exit status {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not SIMFS.exists():
        raise SystemExit(f"{SIMFS}: not found; run from the project's venv (.venv/bin/python)")
    print(f"median of {args.repeat} runs after one warm-up (CPU seconds, user + system)\n")
    print("| command | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    for name, arguments in COMMANDS.items():
        cpu_seconds(arguments)  # page cache, .pyc files
        times = [cpu_seconds(arguments) for _ in range(args.repeat)]
        print(f"| {name} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
