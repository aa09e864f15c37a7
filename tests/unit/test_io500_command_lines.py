"""Every IOR and mdtest command line of the public IO500 archive, through parse_workload
(tests/data/workloads/README.md says where they come from)."""

import gzip
import re
from collections import Counter
from pathlib import Path

from simfs.errors import WorkloadError
from simfs.workloads import parse_workload

ROOT = Path(__file__).resolve().parents[2]
LINES = ROOT / "tests" / "data" / "workloads" / "io500-command-lines.txt.gz"


def test_every_io500_command_line_is_accepted_and_says_what_it_leaves_out():
    with gzip.open(LINES, "rt", encoding="utf-8") as lines:
        commands = lines.read().splitlines()
    assert len(commands) == 3498
    outcome: Counter = Counter()
    noted = 0
    for command in commands:
        try:
            spec = parse_workload(command)
        except WorkloadError as exc:
            raise AssertionError(f"{command}\n  refused: {exc}") from None
        assert spec.tool in ("ior", "mdtest") and spec.phases
        outcome["accepted"] += 1
        noted += bool(spec.notes)
        # What is simulated in part says so, one line per thing left out.
        assert all("\n" not in note for note in spec.notes)
        if re.search(r" -a (DFS|IME|CHFS|Gfarm)\b| --(dfs|posix\.gpfs|chfs|aio)\.| -U ", command):
            assert spec.notes, command
    page = (ROOT / "docs" / "reference" / "workloads.md").read_text(encoding="utf-8")
    assert f"{outcome['accepted']:,} are simulated" in page
    assert f"{noted:,} of them with notes" in page
    assert outcome["accepted"] == len(commands)
