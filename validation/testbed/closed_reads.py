"""An estimate, not part of the model: reads as a closed queueing network on the testbed.

The GlusterFS 6+2 reads at four clients ran at 38-43 MB/s while the model, with links of
47.8 MB/s and cores good for 50.5, predicts 47.7 (`validation/README.md`).  The second
recording's read phase kept the cores 89% busy (the first recording's whole run 93%), so
neither limit bound alone.  If each client
keeps only a few 128 KiB FUSE requests in flight (the packet traces of the fan-in runs
show the next request leaving while the last reply is still arriving), each request
waits at its client's link and at the shared cores in turn, and the rate is that of a
closed network, below both limits.  This prints its throughput by approximate mean
value analysis (Schweitzer's) for 1 to 12 requests in flight per client, each
visiting its own link (128 KiB at 11.96 MB/s) and the machine's cores (the CPU time a
read request cost in the second recording's read phase, 5.19 ms, on two cores taken as
one server of twice the speed).  Both the CPU time and the number in flight come from
the run being explained (the first measured in it, the second chosen), so a match is a
consistency check, not a prediction.

    .venv/bin/python validation/testbed/closed_reads.py [--clients 4] [--cpu-ms 5.19]
"""

from __future__ import annotations

import argparse

REQUEST_BYTES = 131072
LINK_Bps = 11.96e6


def closed_network(clients: int, in_flight: int, cpu_s: float, cores: int = 2) -> tuple[float, float]:
    """(bytes/s over all clients, the cores' utilisation) of the closed network."""
    link_s, core_s = REQUEST_BYTES / LINK_Bps, cpu_s / cores
    at_link = [in_flight / 2.0] * clients
    at_cores = [in_flight / 2.0] * clients
    rates = [0.0] * clients
    for _ in range(5000):
        waits = []
        for client in range(clients):
            # An arriving request sees the others' queues, and its own class less itself.
            own = (in_flight - 1) / in_flight
            link_wait = link_s * (1 + at_link[client] * own)
            core_wait = core_s * (1 + sum(at_cores) - at_cores[client] * (1 - own))
            rates[client] = in_flight / (link_wait + core_wait)
            waits.append((link_wait, core_wait))
        at_link = [rate * link for rate, (link, _) in zip(rates, waits)]
        at_cores = [rate * core for rate, (_, core) in zip(rates, waits)]
    total = sum(rates)
    return total * REQUEST_BYTES, total * core_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--cpu-ms", type=float, default=5.19, help="CPU time of one read request (ms)")
    args = parser.parse_args(argv)
    print(f"requests in flight per client, MB/s over {args.clients} clients, cores busy")
    for in_flight in (1, 2, 3, 4, 6, 8, 12):
        rate, busy = closed_network(args.clients, in_flight, args.cpu_ms / 1e3)
        print(f"{in_flight:2d} {rate / 1e6:6.1f} {busy:5.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
