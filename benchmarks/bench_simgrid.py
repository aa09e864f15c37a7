"""simfs beside SimGrid on one scenario both express the same way (issue 20).

N clients, each behind its own Gigabit Ethernet link (125 MB/s, 50 us), write one file
each of 256 MiB in 16 MiB transfers to 4 OSS with 2 OSTs each (500 MB/s write, 600 MB/s
read; client i's file on OST i mod 8, OST j on OSS j // 2, server links of 10 GB/s).
In SimGrid (3.32, Debian's ``python3-simgrid``) a client sends a transfer while its
server writes the one before to disk, so network and disk overlap as they do in simfs
(``benchmarks/simgrid-scenario.toml``: the client writes behind with one RPC per
transfer, the mechanisms SimGrid has no counterpart of are off).

Each tool runs as a whole process, as a user runs it (``simfs simulate ...``, its table;
``/usr/bin/python3 bench_simgrid.py --simgrid-run N``), alternating, ``--repeat`` times;
reported: the median wall time of each, their ratio, and both aggregate write rates
(bytes over the time the last byte reached disk), which must agree within 6%.  SimGrid's
Python bindings are Debian's and load only into Debian's Python; where they cannot be
imported, the benchmark says so and runs simfs alone.

    .venv/bin/python benchmarks/bench_simgrid.py                # 64, 256, 1,024, 4,096 clients
    .venv/bin/python benchmarks/bench_simgrid.py --clients 64 256 --repeat 5
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "simgrid-scenario.toml"
SYSTEM_PYTHON = "/usr/bin/python3"
MIB = 1 << 20
FILE_BYTES = 256 * MIB
TRANSFER_BYTES = 16 * MIB
CLIENT_LINK_BPS = 125e6
SERVER_LINK_BPS = 1e10
LATENCY_S = 5e-5
OSS_COUNT, OSTS_PER_OSS = 4, 2
OST_WRITE_BPS, OST_READ_BPS = 500e6, 600e6
WORKLOAD = "ior -a POSIX -F -t 16m -b 256m -w -e"


def simgrid_run(client_count: int) -> None:
    """The scenario in SimGrid; prints the aggregate write rate (B/s).  Runs in Debian's
    Python, where ``simgrid`` is."""
    from simgrid import Actor, Engine, LinkInRoute, Mailbox, NetZone

    engine = Engine([sys.argv[0], "--log=root.thresh:critical"])
    zone = NetZone.create_full_zone("world")
    servers, server_links, osts = [], [], []
    for oss_index in range(OSS_COUNT):
        server = zone.create_host(f"oss{oss_index}", 1e9)
        servers.append(server)
        server_links.append(zone.create_link(f"oss{oss_index}-link", [SERVER_LINK_BPS]).set_latency(LATENCY_S))
        for ost_index in range(OSTS_PER_OSS):
            osts.append(server.create_disk(f"ost{oss_index * OSTS_PER_OSS + ost_index}", OST_READ_BPS, OST_WRITE_BPS))
    clients = []
    for client_index in range(client_count):
        client = zone.create_host(f"client{client_index}", 1e9)
        link = zone.create_link(f"client{client_index}-link", [CLIENT_LINK_BPS]).set_latency(LATENCY_S)
        for oss_index, server in enumerate(servers):
            route = [LinkInRoute(link), LinkInRoute(server_links[oss_index])]
            zone.add_route(client.netpoint, server.netpoint, None, None, route, True)
        clients.append(client)
    zone.seal()
    finished: list[float] = []

    def client_program(mailbox_name: str) -> None:
        mailbox = Mailbox.by_name(mailbox_name)
        for _ in range(FILE_BYTES // TRANSFER_BYTES):
            mailbox.put(b"", TRANSFER_BYTES)

    def server_program(mailbox_name: str, ost_index: int) -> None:
        mailbox, disk, writing = Mailbox.by_name(mailbox_name), osts[ost_index], None
        for _ in range(FILE_BYTES // TRANSFER_BYTES):
            mailbox.get()
            if writing is not None:
                writing.wait()
            # The next transfer is received while this one is written.
            writing = disk.write_async(TRANSFER_BYTES)
        writing.wait()
        finished.append(Engine.clock)

    for client_index, client in enumerate(clients):
        ost_index = client_index % (OSS_COUNT * OSTS_PER_OSS)
        name = f"file{client_index}"
        Actor.create(f"writer{client_index}", client, client_program, name)
        Actor.create(f"ost-writer{client_index}", servers[ost_index // OSTS_PER_OSS], server_program, name, ost_index)
    engine.run()
    print(f"aggregate_Bps {client_count * FILE_BYTES / max(finished):.6e}")


def _timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, done.stdout


def _table_rate(table: str) -> float:
    """The aggregate write rate (B/s) from ``simfs simulate``'s table (columns apart by
    two spaces or more; ``write agg GB/s``)."""
    header, values = (re.split(r"\s{2,}", line.strip()) for line in table.strip().splitlines()[:2])
    return float(dict(zip(header, values))["write agg GB/s"]) * 1e9


def simgrid_available() -> str:
    """An empty string if Debian's Python imports simgrid, else why not."""
    try:
        done = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True, text=True, check=False)
    except OSError as exc:
        return f"{SYSTEM_PYTHON}: {exc.strerror}"
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["import simgrid failed"])[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--simgrid-run", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.simgrid_run:
        simgrid_run(args.simgrid_run)
        return 0
    missing = simgrid_available()
    if missing:
        print(f"SimGrid not available ({missing}; `apt-get install python3-simgrid`): simfs alone")
    # The command a user types: the venv's console script beside this Python.
    simfs_command = [str(Path(sys.executable).with_name("simfs")), "simulate", "--system", str(PROFILE)]
    simfs_command += ["--workload", WORKLOAD]
    print("| clients | simfs wall s | SimGrid wall s | SimGrid / simfs | simfs GB/s | SimGrid GB/s | difference |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for client_count in args.clients:
        simfs_times, simgrid_times = [], []
        simfs_rate = simgrid_rate = float("nan")
        for _ in range(args.repeat):
            seconds, out = _timed([*simfs_command, "--nodes", str(client_count)])
            simfs_times.append(seconds)
            simfs_rate = _table_rate(out)
            if not missing:
                seconds, out = _timed([SYSTEM_PYTHON, __file__, "--simgrid-run", str(client_count)])
                simgrid_times.append(seconds)
                simgrid_rate = float(out.split("aggregate_Bps")[1].split()[0])
        simfs_s = statistics.median(simfs_times)
        simgrid_s = statistics.median(simgrid_times) if simgrid_times else float("nan")
        print(
            f"| {client_count:,} | {simfs_s:.2f} | {simgrid_s:.2f} | {simgrid_s / simfs_s:.1f} | "
            f"{simfs_rate / 1e9:.3f} | {simgrid_rate / 1e9:.3f} | {simfs_rate / simgrid_rate - 1:+.1%} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
