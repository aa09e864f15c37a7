"""Summarise compare-tools.sh: the runner against dd and fio, paired by round.

Input lines are ``ROUND TOOL MODE GB/s`` (tool ``dd``, ``fio``, ``simfs-dd``, ``simfs-ior``).
For each real tool and mode the output gives both medians, the median of the per-round
ratios runner/tool, a bootstrap 95% interval of that median, and whether the median and the
whole interval are within 10% of 1; then, for the modes both tools ran, dd against fio the
same way (how closely two independent tools agree on this directory).  Pairing by round
matters on a shared VM: the host's load drifts over minutes, and a ratio taken within one
round (the two runs seconds apart, their order alternating) cancels most of the drift that
the ratio of two medians keeps.

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


def _row(name: str, mode: str, base: dict[int, float], compared: dict[int, float]) -> str | None:
    """One line: ``compared`` against ``base``, paired by round."""
    rounds = sorted(set(base) & set(compared))
    if not rounds:
        return None
    ratios = [compared[r] / base[r] for r in rounds]
    low, high = median_interval(ratios)
    median_ratio = statistics.median(ratios)
    if 0.9 <= low and high <= 1.1:
        verdict = "yes, whole interval"
    elif high < 0.9 or low > 1.1:
        verdict = "no, whole interval"
    else:
        verdict = ("yes" if 0.9 <= median_ratio <= 1.1 else "no") + ", interval crosses 10%"
    return (
        f"{name:<5} {mode:<14} {len(rounds):>6} {statistics.median(base[r] for r in rounds):>9.3f} "
        f"{statistics.median(compared[r] for r in rounds):>7.3f} {median_ratio:>11.3f} "
        f"{f'[{low:.3f}, {high:.3f}]':>14}  {verdict}"
    )


def main(path: str) -> None:
    rates = read_lines(path)
    print(
        f"{'tool':<5} {'mode':<14} {'rounds':>6} {'tool GB/s':>9} {'runner':>7} "
        f"{'runner/tool':>11} {'95% interval':>14}  within 10%"
    )
    for (tool, mode), by_round in sorted(rates.items()):
        if tool in RUNNER_OF:
            row = _row(tool, mode, by_round, rates.get((RUNNER_OF[tool], mode), {}))
            if row:
                print(row)
    # The two tools against each other in the same rounds: how closely this directory lets
    # any two correct programs agree, the floor under the runner's own ratios.
    floor = [
        _row("dd", mode, by_round, rates[("dd", mode)])
        for (tool, mode), by_round in sorted(rates.items())
        if tool == "fio" and ("dd", mode) in rates
    ]
    if any(floor):
        print(f"{'':<5} {'':<14} {'':>6} {'fio GB/s':>9} {'dd':>7} {'dd/fio':>11}  (the tools against each other)")
        for row in filter(None, floor):
            print(row)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: compare_summary.py LINES_FILE")
    main(sys.argv[1])
