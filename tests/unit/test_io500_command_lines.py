"""Every IOR and mdtest command line of the public IO500 archive, through parse_workload
(tests/data/workloads/README.md says where they come from)."""

import gzip
import re
from collections import Counter
from pathlib import Path

from simfs.errors import WorkloadError
from simfs.simulation import check_simulable
from simfs.workloads import parse_workload

ROOT = Path(__file__).resolve().parents[2]
LINES = ROOT / "tests" / "data" / "workloads" / "io500-command-lines.txt.gz"

# What simfs refuses, each for a stated reason (docs/reference/workloads.md lists them).
REFUSALS = {
    "more bytes than simulated": r"bytes per rank; simfs counts",
}
# What parse_workload takes (the runner runs it) and the simulator refuses.
NOT_SIMULATED = {
    "random offsets (-z)": r"-z: random offsets within a file are not modelled",
}


def test_every_io500_command_line_is_accepted_or_refused_for_a_stated_reason():
    with gzip.open(LINES, "rt", encoding="utf-8") as lines:
        commands = lines.read().splitlines()
    assert len(commands) == 3498
    outcome: Counter = Counter()
    noted = 0
    for command in commands:
        try:
            spec = parse_workload(command)
            check_simulable(spec)
        except WorkloadError as exc:
            reasons = REFUSALS | NOT_SIMULATED
            reason = next((name for name, pattern in reasons.items() if re.search(pattern, str(exc))), None)
            assert reason, f"{command}\n  refused for a reason not in the list: {exc}"
            outcome[reason] += 1
        else:
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
    assert outcome["accepted"] >= 3400
