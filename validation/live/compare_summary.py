"""Summarise compare-tools.sh: the runner against dd and fio, paired by round.

Input lines are ``ROUND TOOL MODE GB/s`` (tool ``dd``, ``fio``, ``simfs-dd``, ``simfs-ior``).
For each real tool and mode the output gives both medians, the median of the per-round
ratios runner/tool, a bootstrap 95% interval of that median, and whether the median and the
whole interval are within 10% of 1.  Pairing by round matters on a shared VM: the host's
load drifts over minutes, and a ratio taken within one round (the two runs seconds apart,
their order alternating) cancels most of the drift that the ratio of two medians keeps.

    python3 compare_summary.py LINES_FILE
"""

from __future__ import annotations

import random
import statistics
import sys
from collections import defaultdict

RUNNER_OF = {"dd": "simfs-dd", "fio": "simfs-ior"}
BOOTSTRAP_SAMPLES = 5000


def read_lines(path: str) -> dict[tuple[str, str], dict[int, float]]:
    rates: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if len(fields) != 4:
                sys.exit(f"{path}:{number}: expected 'ROUND TOOL MODE GB/s', got {line.strip()!r}")
            round_text, tool, mode, rate_text = fields
            try:
                rates[(tool, mode)][int(round_text)] = float(rate_text)
            except ValueError:
                sys.exit(f"{path}:{number}: round and GB/s must be numbers, got {line.strip()!r}")
    return rates


def median_interval(ratios: list[float], seed: int = 1) -> tuple[float, float]:
    # Seeded so that the same lines always print the same interval.
    draw = random.Random(seed)
    medians = sorted(statistics.median(draw.choices(ratios, k=len(ratios))) for _ in range(BOOTSTRAP_SAMPLES))
    return medians[int(0.025 * BOOTSTRAP_SAMPLES)], medians[int(0.975 * BOOTSTRAP_SAMPLES) - 1]


def main(path: str) -> None:
    rates = read_lines(path)
    print(
        f"{'tool':<5} {'mode':<14} {'rounds':>6} {'tool GB/s':>9} {'runner':>7} "
        f"{'runner/tool':>11} {'95% interval':>14}  within 10%"
    )
    for (tool, mode), by_round in sorted(rates.items()):
        if tool not in RUNNER_OF:
            continue
        runner = rates.get((RUNNER_OF[tool], mode), {})
        rounds = sorted(set(by_round) & set(runner))
        if not rounds:
            continue
        ratios = [runner[r] / by_round[r] for r in rounds]
        low, high = median_interval(ratios)
        median_ratio = statistics.median(ratios)
        if 0.9 <= low and high <= 1.1:
            verdict = "yes, whole interval"
        elif high < 0.9 or low > 1.1:
            verdict = "no, whole interval"
        else:
            verdict = ("yes" if 0.9 <= median_ratio <= 1.1 else "no") + ", interval crosses 10%"
        print(
            f"{tool:<5} {mode:<14} {len(rounds):>6} {statistics.median(by_round[r] for r in rounds):>9.3f} "
            f"{statistics.median(runner[r] for r in rounds):>7.3f} {median_ratio:>11.3f} "
            f"{f'[{low:.3f}, {high:.3f}]':>14}  {verdict}"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: compare_summary.py LINES_FILE")
    main(sys.argv[1])
