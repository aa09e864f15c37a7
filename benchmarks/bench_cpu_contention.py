"""Does a core do less work per CPU second when the machine's other cores are busy?

The testbed's GlusterFS daemons spent a third more CPU time per request with every core
busy than with the machine mostly idle (``calibration/testbed/README.md``).  This checks
the machine itself: the same work (an integer loop in Python, or copies of a 64 MiB
buffer) is run alone and as two processes at once, ``--repeat`` times alternating, and
each process's CPU time (``time.process_time``) is printed.  If the cores shared
something that slows them (SMT siblings, a frequency limit, a hypervisor's contention),
two at once would each take more CPU time for the same work.

    .venv/bin/python benchmarks/bench_cpu_contention.py [--repeat 3]

Run it on an otherwise idle machine (pause any background job): a third process would
make "two at once" three.
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.synchronize
import statistics
import time

#: The work of one process: about 3 s of CPU each on the development VM.
LOOP_STEPS = 30_000_000
COPY_BYTES = 64 << 20
COPIES = 150


def work(kind: str) -> float:
    """CPU seconds this process spent on one unit of ``kind`` work."""
    started = time.process_time()
    if kind == "loop":
        total = 0
        for step in range(LOOP_STEPS):
            total += step * step
    else:
        source = bytearray(COPY_BYTES)
        for _ in range(COPIES):
            bytes(source)
    return time.process_time() - started


def _worker(kind: str, start: multiprocessing.synchronize.Barrier, results: multiprocessing.Queue) -> None:
    start.wait()  # every process starts its work at once
    results.put(work(kind))


def run(kind: str, processes: int) -> list[float]:
    """Each process's CPU seconds for one unit of work, all ``processes`` at once."""
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_worker, args=(kind, start, results)) for _ in range(processes)]
    for worker in workers:
        worker.start()
    seconds = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, alternating (default 3)")
    args = parser.parse_args(argv)
    print(f"{'work':6s} {'alone s':>9s} {'two at once s':>14s} {'ratio':>6s}")
    for kind in ("loop", "copy"):
        alone, together = [], []
        for _ in range(args.repeat):
            alone += run(kind, 1)
            together += run(kind, 2)
        ratio = statistics.median(together) / statistics.median(alone)
        print(f"{kind:6s} {statistics.median(alone):9.3f} {statistics.median(together):14.3f} {ratio:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
