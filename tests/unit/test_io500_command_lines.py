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

# What simfs refuses, each for a stated reason (docs/reference/workloads.md lists them).
REFUSALS = {
    "another API": r"only the POSIX (and MPIIO APIs|interface) (are|is) modelled",
    "GPFS hints": r"--posix\.gpfs\.\w+: this POSIX backend option is not modelled",
    "directory trees": r"mdtest: unsupported option '-[zbI]'",
    "an MPI-IO hints file": r"ior: unsupported option '-U'",
    "more items or bytes than simulated": r"expected at most|items per rank; at most|bytes per rank; simfs counts",
}


def test_every_io500_command_line_is_accepted_or_refused_for_a_stated_reason():
    with gzip.open(LINES, "rt", encoding="utf-8") as lines:
        commands = lines.read().splitlines()
    assert len(commands) == 3498
    outcome: Counter = Counter()
    for command in commands:
        try:
            spec = parse_workload(command)
        except WorkloadError as exc:
            reason = next((name for name, pattern in REFUSALS.items() if re.search(pattern, str(exc))), None)
            assert reason, f"{command}\n  refused for a reason not in the list: {exc}"
            outcome[reason] += 1
        else:
            assert spec.tool in ("ior", "mdtest") and spec.phases
            outcome["accepted"] += 1
    page = (ROOT / "docs" / "reference" / "workloads.md").read_text(encoding="utf-8")
    assert f"{outcome['accepted']:,} are accepted" in page
    assert outcome["accepted"] >= 2788
