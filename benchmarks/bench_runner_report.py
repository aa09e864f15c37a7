"""The live runner's work after the last phase: the reporter's summary and its files.

Under ``mpirun`` this is the time that matters after Ctrl-C: Open MPI forwards it to the
ranks as SIGTERM and kills them one second later, so rank 0 must turn every completed
phase into the record and write it within that second.  A run of many short iterations
(``ior -i N``) makes thousands of phases; this times, per run, the summary (from the last
phase's end to ``measure`` returning) and ``write_outputs`` (the JSON record and the
per-rank CSV trace), median of ``--repeat``.

    .venv/bin/python benchmarks/bench_runner_report.py [--dir /dev/shm] [--iterations 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import tempfile
import time

from simfs.runner import measure, write_outputs


def one_run(directory: str, iterations: int) -> tuple[int, float, float]:
    measured = measure(f"ior -F -t 64k -b 1m -w -r -i {iterations}", directory, processes=2, out=io.StringIO())
    summary_s = time.time() - measured.record["finished_epoch"]
    with tempfile.TemporaryDirectory() as outputs:
        start = time.perf_counter()
        write_outputs(measured, json_path=f"{outputs}/run.json", trace_path=f"{outputs}/ranks.csv")
        files_s = time.perf_counter() - start
    return len(measured.results), summary_s, files_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}")
    runs = [one_run(args.dir, args.iterations) for _ in range(args.repeat)]
    phases = runs[0][0]
    summary = statistics.median(r[1] for r in runs)
    files = statistics.median(r[2] for r in runs)
    print(f"{phases} phases, 2 processes: summary {summary:.3f} s, JSON record and CSV trace {files:.3f} s")


if __name__ == "__main__":
    main()
