"""Replay every Darshan log of the public collection as a workload and count the outcomes.

Not part of the test run: it needs the corpus (``../shared/corpus/darshan-logs`` beside
the repository, or ``--corpus``; the public ``darshan-hpc/darshan-logs`` repository) and
the ``darshan`` package.  Each log goes through ``parse_workload("darshan LOG")`` and one
simulation on ``crtdc-lfs3`` at 1 node x 2 processes; the refusals are counted by reason.

    python benchmarks/bench_darshan_workloads.py [--corpus PATH]
"""

from __future__ import annotations

import collections
import sys
import warnings

from corpus_args import corpus_found, corpus_parser

import simfs
from simfs.errors import SimfsError


def main() -> int:
    parser = corpus_parser(__doc__, "darshan-logs")
    args = parser.parse_args()
    if not corpus_found(args.corpus):
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
