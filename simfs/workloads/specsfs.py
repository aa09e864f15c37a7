"""SPECsfs2008 NFSv3: a mix of NFS operations offered at a requested load, answered
with a mean response time.

The benchmark (SPEC SFS 2008 User's Guide) runs load-generating processes on client
machines; each process sends NFS operations one at a time, drawn from a fixed mix, paced
so that all processes together offer the requested load (``LOAD``, op/s).  After a
warm-up (``WARMUP_TIME``, 300 s) it measures for ``RUNTIME`` (300 s) and reports the
achieved throughput and the mean response time of the operations.  A curve of loads is
the server's saturation knee: the response time stays near one operation's unloaded
service until the server's busiest part saturates, then climbs.

Command line (simfs's own spelling of the ``sfs_rc`` settings it models)::

    specsfs2008 --load OPS [--runtime S] [--warmup S]

=====================  ==========================================================
``--load OPS``          requested operations per second over all processes (required)
``--runtime S``         the measured interval, seconds (SPECsfs2008 default 300)
``--warmup S``          the warm-up before it, seconds (SPECsfs2008 default 300)
=====================  ==========================================================

The experiment's ``nodes`` are the load generators and ``ppn`` the load-generating
processes on each (``PROCS``); every rank is one process.  A process draws exponential
gaps between its operations' scheduled starts (mean ``ranks / load``): when an
operation is answered late, the next one starts at once, so a process never has two in
flight and, past the knee, the achieved load falls below the requested one, as the
benchmark's does (its processes can only fall behind).

What each operation costs: every NFS operation is one request to the file system's
metadata service (``MetadataService``: client slots, round trip, service threads, cores
shared by the requests present), of the service class that does the same work
(:data:`SERVICE_CLASS`).  The bytes of READ and WRITE are not moved: on the one system
measured with it (``panasas-as9``) even 64 KiB per operation at the peak load would use a
tenth of the shelves' 10GbE links, and the storage behind the gateways (cache hits or disk
reads) is not modelled; ``docs/reference/workloads.md`` says what that leaves out.
The simulator runs a sample of the warm-up and the measured interval
(:mod:`simfs.workloads.steady_state`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simfs.errors import WorkloadError, check_finite
from simfs.workloads.spec import OPEN_LOOP_OP, PhaseSpec, WorkloadSpec

if TYPE_CHECKING:  # numpy stays out of `simfs show`, which parses no workload's draws
    import numpy as np

#: The SPECsfs2008 NFSv3 operation mix, percent (SPEC SFS 2008 User's Guide; quoted by
#: M. Eisler, "More on SPEC SFS 2008", NetApp blog, April 2008).  COMMIT is not in it.
SFS2008_MIX: dict[str, int] = {
    "LOOKUP": 24,
    "READ": 18,
    "WRITE": 10,
    "GETATTR": 26,
    "READLINK": 1,
    "READDIR": 1,
    "CREATE": 1,
    "REMOVE": 1,
    "FSSTAT": 1,
    "SETATTR": 4,
    "READDIRPLUS": 2,
    "ACCESS": 11,
}

#: The metadata service's request class that does each NFS operation's work at the
#: server: attribute reads are stats; a directory read, a READ or a WRITE finds a
#: file's map and works on it (an open's work); SETATTR writes attributes back (a
#: close's); CREATE and REMOVE change the namespace.  An assumption of this model (no
#: per-operation NFS server costs are published for the systems simfs has).
SERVICE_CLASS: dict[str, str] = {
    "LOOKUP": "stat",
    "GETATTR": "stat",
    "ACCESS": "stat",
    "READLINK": "stat",
    "FSSTAT": "stat",
    "READDIR": "open",
    "READDIRPLUS": "open",
    "READ": "open",
    "WRITE": "open",
    "SETATTR": "close",
    "CREATE": "create",
    "REMOVE": "remove",
}

#: SPECsfs2008's defaults for ``RUNTIME`` and ``WARMUP_TIME`` (seconds).
DEFAULT_RUNTIME_S = 300.0
DEFAULT_WARMUP_S = 300.0
_OPTIONS = {"--load": "OPS", "--runtime": "S", "--warmup": "S"}
_CLASSES = tuple(SERVICE_CLASS[name] for name in SFS2008_MIX)
_SHARES = tuple(share / sum(SFS2008_MIX.values()) for share in SFS2008_MIX.values())


def parse_specsfs2008(args: list[str], command: str) -> WorkloadSpec:
    values: dict[str, str] = {}
    position = 0
    while position < len(args):
        word = args[position]
        name, equals, value = word.partition("=")
        if name not in _OPTIONS:
            raise WorkloadError(
                f"specsfs2008: unknown option {word!r} (expected --load OPS, --runtime S, --warmup S; "
                "see simfs.workloads.specsfs)"
            )
        if not equals:
            position += 1
            if position == len(args):
                raise WorkloadError(f"specsfs2008: {name} needs a value ({name} {_OPTIONS[name]})")
            value = args[position]
        values[name] = value
        position += 1
    if "--load" not in values:
        raise WorkloadError("specsfs2008: --load OPS is required (requested NFS operations per second)")
    load = _number("--load", values["--load"])
    runtime = _number("--runtime", values.get("--runtime", str(DEFAULT_RUNTIME_S)))
    warmup = _number("--warmup", values.get("--warmup", str(DEFAULT_WARMUP_S)), allow_zero=True)
    phase = PhaseSpec(
        OPEN_LOOP_OP,
        bytes_per_rank=0,
        transfer_size_bytes=1,
        label="nfs ops",
        load_per_s=load,
        warmup_s=warmup,
        runtime_s=runtime,
    )
    options = {"load_per_s": load, "runtime_s": runtime, "warmup_s": warmup, "mix": dict(SFS2008_MIX)}
    return WorkloadSpec("specsfs2008", command, (phase,), options=options)


def _number(name: str, text: str, *, allow_zero: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = text  # check_finite names what was given
    check_finite("specsfs2008", f"{name} {text}", value, 0, above=not allow_zero, error=WorkloadError)
    return float(value)


def draw_operations(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` operations drawn from :data:`SFS2008_MIX`, each as its service class."""
    return [_CLASSES[pick] for pick in rng.choice(len(_CLASSES), size=count, p=_SHARES).tolist()]
