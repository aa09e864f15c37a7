"""The fluid engine's cost per flow change, with and without partial solves (issue 20).

Scenario (issue 20's "independent flows finishing at different times"): F clients, each
with its own 1GbE NIC (125 MB/s), each writes one file of its own size (1 to F x 1 MiB,
shuffled) to one of 100 OSTs of 500 MB/s (client i to OST i mod 100).  Every OST is the
bottleneck of its F/100 files and every file ends at its own time, so the engine re-solves
at every completion: F solves.  A full solve handles every flow in flight; a partial solve
(``FluidNetwork(partial_solves=True)``, the default) only the flows of the OST whose file
ended.

Reported per F: engine CPU seconds (``time.process_time`` around ``env.run()``, one
process, median of ``--repeat``), solves, the share of them partial, flows handed to the
solver per solve, and the CPU cost per flow change (per solve).  Both modes must end every
flow at the same time (checked, to 1e-9 relative).

    .venv/bin/python benchmarks/bench_engine_flows.py                 # F = 1,000 .. 8,000
    .venv/bin/python benchmarks/bench_engine_flows.py --full-up-to 8000  # also the full solves at 8,000 (~80 s)
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
import simpy

from simfs.engine import FluidNetwork, Resource

OST_COUNT = 100
MIB = 1 << 20


def run(flow_count: int, partial: bool) -> tuple[float, FluidNetwork, np.ndarray]:
    env = simpy.Environment()
    network = FluidNetwork(env, partial_solves=partial)
    osts = [network.add(Resource(f"ost{i}", 500e6)) for i in range(OST_COUNT)]
    nics = [network.add(Resource(f"nic{i}", 125e6)) for i in range(flow_count)]
    sizes = np.random.default_rng(1).permutation(np.arange(1, flow_count + 1)) * MIB
    flows = [
        network.transfer(float(size), [(nics[i], 1.0), (osts[i % OST_COUNT], 1.0)]) for i, size in enumerate(sizes)
    ]
    gc.collect()
    start = time.process_time()
    env.run()
    seconds = time.process_time() - start
    return seconds, network, np.array([flow.end_time for flow in flows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--full-up-to", type=int, default=4000, help="run full solves (for comparison) up to this many flows"
    )
    args = parser.parse_args()
    print("| flows | mode | engine CPU s | solves | partial | flows per solve | ms per flow change |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for flow_count in args.flows:
        ends = {}
        for partial in (True, False):
            if not partial and flow_count > args.full_up_to:
                continue
            times = []
            for _ in range(args.repeat):
                seconds, network, ends[partial] = run(flow_count, partial)
                times.append(seconds)
            stats = network.stats
            median = statistics.median(times)
            print(
                f"| {flow_count:,} | {'partial' if partial else 'full'} | {median:.2f} | {stats.solves:,} | "
                f"{stats.partial_solves / stats.solves:.0%} | {stats.flows_solved / stats.solves:,.0f} | "
                f"{1000 * median / stats.solves:.3f} |",
                flush=True,
            )
        if len(ends) == 2 and not np.allclose(ends[True], ends[False], rtol=1e-9, atol=0):
            print(f"flows={flow_count}: partial and full solves disagree on end times")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
