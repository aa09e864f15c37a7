"""A sweep one by one, in 2 local processes and on a Dask LocalCluster (not part of the
test run).

Two configurations (Mesa's small/large): ``--small`` is 200 points, the default 1,000
points: IOR file-per-process (``-t 1m -b 1g``, write and read) on crtdc-lfs3 over 1..100
nodes (1..20 in the small one) x stripe counts 1..10.  Each run is timed as wall
time, alternating, median of ``--repeats``; the tables must be equal row for row.

    python benchmarks/bench_sweep_parallel.py [--small] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import simfs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="200 points instead of 1,000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    vary = {"nodes": list(range(1, 21 if args.small else 101)), "stripe_count": list(range(1, 11))}
    overrides = {"client.count": 128}
    workload = "ior -a POSIX -F -t 1m -b 1g"
    points = 1
    for values in vary.values():
        points *= len(values)

    def serial():
        return simfs.sweep("crtdc-lfs3", workload, vary, overrides=overrides)

    def two_processes():
        return simfs.sweep("crtdc-lfs3", workload, vary, overrides=overrides, jobs=2)

    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):

        def dask_local():
            return simfs.sweep("crtdc-lfs3", workload, vary, overrides=overrides, scheduler=client)

        cases = {"serial": serial, "jobs=2": two_processes, "dask LocalCluster (2 workers)": dask_local}
        times: dict[str, list[float]] = {name: [] for name in cases}
        tables = {}
        for _ in range(args.repeats):
            for name, run in cases.items():
                started = time.perf_counter()
                tables[name] = run()
                times[name].append(time.perf_counter() - started)
    print(f"# {points} points, {len(tables['serial'])} rows; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}")  # fmt: skip
    base = statistics.median(times["serial"])
    for name, spent in times.items():
        median = statistics.median(spent)
        same = tables[name].equals(tables["serial"])
        print(f"{name:32s} {median:7.2f} s  {median / base:5.2f} x serial  same rows: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
