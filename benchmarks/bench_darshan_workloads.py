"""Replay every Darshan log of the public collection as a workload and count the outcomes.

Not part of the test run: it needs the corpus (``../shared/corpus/darshan-logs`` beside
the repository, or ``--corpus``; the public ``darshan-hpc/darshan-logs`` repository) and
the ``darshan`` package.  Each log goes through ``parse_workload("darshan LOG")`` and one
simulation on ``crtdc-lfs3`` at 1 node x 2 processes; the refusals are counted by reason.

    python benchmarks/bench_darshan_workloads.py [--corpus PATH]
"""

from __future__ import annotations

import argparse
import collections
import sys
import warnings
from pathlib import Path

import simfs
from simfs.errors import SimfsError

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "darshan-logs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus} (it is not part of a clone; pass --corpus)", file=sys.stderr)
        return 2
    outcomes: collections.Counter = collections.Counter()
    logs = sorted(args.corpus.rglob("*.darshan"))
    for log in logs:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                simfs.simulate("crtdc-lfs3", f"darshan {log}", nodes=1, ppn=2)
        except SimfsError as exc:
            outcomes["refused: " + str(exc).split(": ", 2)[-1]] += 1
        else:
            outcomes["replayed"] += 1
    print(f"{len(logs)} Darshan logs")
    for outcome, count in outcomes.most_common():
        print(f"  {count:4d}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
