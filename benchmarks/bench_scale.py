"""How one simulation grows with the clients it models (issue 20's scale line).

Scenario: IOR file-per-process (``ior -a POSIX -F -t 1m -b 1g``, write then read) on
crtdc-lfs5 scaled with the run: N client nodes of one rank each, ``oss.count`` N / 40
(4 OSTs per OSS: N / 10 OSTs), the profile's default layout (4 stripes of 1 MiB).  Ten
clients per OST at every size, so a larger run is more of the same, not a different
balance: per client, the work should stay the same.

Each size runs as its own process (``--one N`` in a child), as a user's run would;
reported per size: wall seconds, user CPU seconds and peak resident memory of the child
(``os.wait4``),
the engine's solves and the flows per solve, and the fitted exponent of CPU time against
clients (least squares on the logs; 1 is linear).  Medians of ``--repeat`` runs.

    .venv/bin/python benchmarks/bench_scale.py                         # 1,000 .. 10,000 clients
    .venv/bin/python benchmarks/bench_scale.py --clients 10000 100000  # the issue's larger sizes
    .venv/bin/python benchmarks/bench_scale.py --completion-tolerance 1e-4  # coalesced ends

With ``--completion-tolerance`` each size also runs once exactly and reports that run's
CPU time and solves and the largest change of a phase's aggregate rate from it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

IOR = "ior -a POSIX -F -t 1m -b 1g"
CLIENTS_PER_OSS = 40


def one(clients: int, completion_tolerance: float = 0.0) -> dict:
    """Run one size in this process and return what the parent reports."""
    import simfs
    from simfs.engine import network as network_module

    networks = []
    original = network_module.FluidNetwork.__init__

    def keep(self, *args, **kwargs):  # the run's network, to read its counters after
        original(self, *args, **kwargs)
        networks.append(self)

    network_module.FluidNetwork.__init__ = keep
    overrides = {"oss.count": max(1, clients // CLIENTS_PER_OSS), "client.count": clients}
    # force: simfs.cost refuses runs it estimates beyond an hour; measuring them is the point.
    result = simfs.simulate(
        "crtdc-lfs5",
        IOR,
        nodes=clients,
        overrides=overrides,
        force=True,
        completion_tolerance=completion_tolerance,
    )
    stats = networks[0].stats
    return {
        "agg_bw_Bps": result.phases["agg_bw_Bps"].tolist(),
        "makespan_s": max(record.close_s for record in result.rank_records),
        "solves": stats.solves,
        "partial": stats.partial_solves / stats.solves,
        "flows_per_solve": stats.flows_solved / stats.solves,
    }


def measure(clients: int, completion_tolerance: float = 0.0) -> dict:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, __file__, "--one", str(clients), "--completion-tolerance", repr(completion_tolerance)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{clients} clients: the run failed (exit status {os.waitstatus_to_exitcode(status)})")
    record = json.loads(output)
    record.update(user_s=usage.ru_utime, wall_s=time.perf_counter() - started, peak_mb=usage.ru_maxrss / 1024)
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1000, 2000, 4000, 10000])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--completion-tolerance",
        type=float,
        default=0.0,
        help="the experiment's completion_tolerance (default 0: exact); the exact run is made too, to compare",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.completion_tolerance)))
        return 0
    tolerance = args.completion_tolerance
    print(
        f"IOR file-per-process ({IOR}) on crtdc-lfs5, {CLIENTS_PER_OSS} clients per OSS, "
        f"completion_tolerance {tolerance:g}; median of {args.repeat}\n"
    )
    compared = " exact: user CPU s | exact: solves | max rate change |" if tolerance else ""
    print(
        "| clients | OSTs | wall s | user CPU s | peak MB | solves | partial | flows per solve | CPU ms per client |"
        + compared
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if tolerance else ""))
    sizes, cpu, walls = [], [], []
    for clients in args.clients:
        runs = [measure(clients, tolerance) for _ in range(args.repeat)]
        user = statistics.median(run["user_s"] for run in runs)
        wall = statistics.median(run["wall_s"] for run in runs)
        peak = statistics.median(run["peak_mb"] for run in runs)
        first = runs[0]
        osts = 4 * max(1, clients // CLIENTS_PER_OSS)
        change = ""
        if tolerance:
            exact = measure(clients)
            moved = max(abs(a / b - 1) for a, b in zip(first["agg_bw_Bps"], exact["agg_bw_Bps"]))
            change = f" {exact['user_s']:.2f} | {exact['solves']:,} | {moved:.2e} |"
        print(
            f"| {clients:,} | {osts:,} | {wall:.2f} | {user:.2f} | {peak:.0f} | {first['solves']:,} | {first['partial']:.0%} "
            f"| {first['flows_per_solve']:.0f} | {1000 * user / clients:.2f} |" + change,
            flush=True,
        )
        sizes.append(clients)
        cpu.append(user)
        walls.append(wall)
    if len(sizes) > 1:
        print()
        for name, seconds in (("wall", walls), ("CPU", cpu)):
            slope = np.polyfit(np.log(sizes), np.log(seconds), 1)[0]
            print(f"{name} time grows as clients^{slope:.2f} from {sizes[0]:,} to {sizes[-1]:,} (1.00: linear)")
    return 0 if all(math.isfinite(value) for value in cpu) else 1


if __name__ == "__main__":
    sys.exit(main())
