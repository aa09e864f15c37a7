"""Workloads: command-line parsers (dd, IOR, mdtest, bonnie++, obdfilter-survey, benchio,
fio, SPECsfs2008, the seed 001 access classes) and Darshan logs, producing one shared WorkloadSpec."""

from __future__ import annotations

import shlex

from simfs.errors import WorkloadError
from simfs.workloads.access_class import parse_access_class
from simfs.workloads.benchio import parse_benchio
from simfs.workloads.bonnie import parse_bonnie
from simfs.workloads.darshan import parse_darshan
from simfs.workloads.dd import parse_dd
from simfs.workloads.fio import parse_fio
from simfs.workloads.ior import parse_ior
from simfs.workloads.mdtest import parse_mdtest
from simfs.workloads.obdfilter import parse_obdfilter
from simfs.workloads.spec import PhaseSpec, WorkloadSpec
from simfs.workloads.specsfs import parse_specsfs2008

_PARSERS = {
    "dd": parse_dd,
    "ior": parse_ior,
    "mdtest": parse_mdtest,
    "bonnie++": parse_bonnie,
    "obdfilter-survey": parse_obdfilter,
    "access-class": parse_access_class,
    "benchio": parse_benchio,
    "benchio.x": parse_benchio,
    "fio": parse_fio,
    "darshan": parse_darshan,
    "specsfs2008": parse_specsfs2008,
}


def parse_workload(command: str) -> WorkloadSpec:
    """Parse a tool command line (``"ior -a POSIX -F -t 1m -b 4g"``) into a spec."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise WorkloadError(f"workload {command!r}: {exc}") from None
    if not words:
        raise WorkloadError("workload: empty command line")
    # obdfilter-survey is configured by environment variables given before it.
    environment = []
    while len(words) > 1 and "=" in words[0] and not words[0].startswith("-"):
        environment.append(words.pop(0))
    tool = words[0].rsplit("/", 1)[-1]
    if environment and tool != "obdfilter-survey":
        raise WorkloadError(
            f"workload: {environment[0]!r} before {tool!r}: only obdfilter-survey takes variables there"
        )
    words[1:] = environment + words[1:]
    if tool == "io500":
        raise WorkloadError(
            "workload: io500 runs a sequence of IOR and mdtest jobs, not one: simfs simulate runs it "
            '(--workload "io500 config.ini"), and simfs.io500.simulate_io500 from Python'
        )
    if tool not in _PARSERS:
        raise WorkloadError(f"workload: unknown tool {words[0]!r} (simfs models: {', '.join(_PARSERS)})")
    return _PARSERS[tool](words[1:], command)


__all__ = [
    "PhaseSpec",
    "WorkloadSpec",
    "parse_access_class",
    "parse_benchio",
    "parse_bonnie",
    "parse_darshan",
    "parse_dd",
    "parse_fio",
    "parse_ior",
    "parse_mdtest",
    "parse_obdfilter",
    "parse_specsfs2008",
    "parse_workload",
]
