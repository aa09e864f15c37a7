"""The live runner's own cost per call: `simfs measure` against GNU dd on tmpfs.

One process writes then reads 256 MiB on a tmpfs (default /dev/shm) in calls of 4 KiB,
64 KiB and 1 MiB, with the runner's dd mode and with GNU dd, alternating, ``--repeat``
times; the median rates and the runner's extra time per call are printed.  tmpfs makes
the copy as cheap as it gets, so what is left is each tool's per-call work: the runner is
Python (a ``pwrite``/``preadv`` call, a stop-flag check every 16 calls).

    .venv/bin/python benchmarks/bench_runner.py [--dir /dev/shm] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import re
import statistics
import subprocess
import tempfile

from simfs.runner import measure

TOTAL = 256 << 20
_RATE = re.compile(r"^(\d+) bytes.* copied, ([\d.e+-]+) s")


def gnu_dd(directory: str, block: int) -> tuple[float, float]:
    path = os.path.join(directory, "bench-dd")
    count = TOTAL // block
    rates = []
    for command in (
        ["dd", "if=/dev/zero", f"of={path}", f"bs={block}", f"count={count}"],
        ["dd", f"if={path}", "of=/dev/null", f"bs={block}", f"count={count}"],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        match = next(_RATE.match(line) for line in done.stderr.splitlines() if _RATE.match(line))
        rates.append(int(match[1]) / float(match[2]))
    os.unlink(path)
    return rates[0], rates[1]


def runner_dd(directory: str, block: int) -> tuple[float, float]:
    measured = measure(f"dd bs={block} count={TOTAL // block}", directory, processes=1, out=io.StringIO())
    by_op = {r.op: r.sum_of_ranks_Bps for r in measured.results}
    return by_op["write"], by_op["read"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}")
    print("| call | op | GNU dd GB/s | runner GB/s | runner / dd | extra per call |")
    print("|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        for block in (4096, 65536, 1 << 20):
            samples: dict[str, list[tuple[float, float]]] = {"dd": [], "runner": []}
            for _ in range(args.repeat):
                samples["dd"].append(gnu_dd(directory, block))
                samples["runner"].append(runner_dd(directory, block))
            for index, op in enumerate(("write", "read")):
                dd_rate = statistics.median(s[index] for s in samples["dd"])
                ours = statistics.median(s[index] for s in samples["runner"])
                extra_us = (block / ours - block / dd_rate) * 1e6
                print(
                    f"| {block // 1024} KiB | {op} | {dd_rate / 1e9:.2f} | {ours / 1e9:.2f} | {ours / dd_rate:.2f} "
                    f"| {extra_us:+.1f} us |"
                )


if __name__ == "__main__":
    main()
