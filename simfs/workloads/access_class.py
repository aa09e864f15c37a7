"""The access classes of the Grid'5000 Lustre study, as simfs workloads.

Boito, Kassick and Navaux (seed ``001_275d0ed17a5bc7c6.txt``, section 3) describe six
classes of access that scientific codes show, and run them with LANL's MPI-IO Test (and
``dd`` for SFWA).  A class names how the clients' data relate:

========  ==================================================================================
SF / MF   one file shared by all clients / a file per client
WA / SA   whole access: every client reads all the data / segmented access: each its own part
-S        shared: after writing its part, a client reads its neighbour's (node + 1)
-SMP      several processes per node read the same data (the ppn setting says how many)
========  ==================================================================================

Command line (a simfs vocabulary named after the seed's classes; MPI-IO Test's own
options are not published with the seed)::

    access-class CLASS [-n OBJECTS] [-s OBJECT_SIZE] [-t TRANSFER] [--strided]

``CLASS`` is ``SFWA``, ``SFWA-SMP``, ``SFSA``, ``SFSA-S``, ``MFWA`` or ``MFWA-S``.  A
client's data is ``OBJECTS`` objects of ``OBJECT_SIZE`` bytes (default 32 of 64 MiB, the
seed's 2 GB per client), moved ``TRANSFER`` bytes per call (default: one object per
call; the seed's SFWA ``dd`` used 2 KB).  ``--strided`` (single-file segmented classes)
interleaves the clients' objects (object ``k`` of client ``r`` at ``(k x clients + r) x
size``, the seed's Figure 2); without it a client's objects are contiguous.

Phases: SFWA and SFWA-SMP read a file that exists (``read``); the other classes write
their data, then read (``write``, ``read``; in the -S classes the read is of the
neighbour's part).  Aggregates: SFWA is ``dd`` on every client (the sum of the clients'
rates); the MPI-IO Test classes report total bytes over the phase's makespan.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.options import parse_count, parse_size, scan_options
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

CLASSES = ("SFWA", "SFWA-SMP", "SFSA", "SFSA-S", "MFWA", "MFWA-S")
_TOOL = "access-class"


def parse_access_class(args: list[str], command: str) -> WorkloadSpec:
    if not args or args[0].startswith("-"):
        raise WorkloadError(f"{_TOOL}: expected the class first (one of {', '.join(CLASSES)})")
    name = args[0].upper()
    if name not in CLASSES:
        raise WorkloadError(f"{_TOOL}: unknown class {args[0]!r} (expected one of {', '.join(CLASSES)})")
    flags, values = scan_options(_TOOL, args[1:], {"--strided"}, {"-n", "-s", "-t"})
    objects = parse_count(_TOOL, "-n", values.get("-n", "32"))
    object_size = parse_size(_TOOL, "-s", values.get("-s", "64m"))
    transfer = parse_size(_TOOL, "-t", values["-t"]) if "-t" in values else object_size
    if transfer > object_size or object_size % transfer:
        raise WorkloadError(f"{_TOOL}: -t {values.get('-t')}: expected a divisor of the object size ({object_size})")
    strided = "--strided" in flags
    single_file = name.startswith("SF")
    if strided and (not single_file or name.startswith("SFWA")):
        raise WorkloadError(f"{_TOOL}: --strided applies to the segmented single-file classes (SFSA, SFSA-S)")

    total = objects * object_size
    if name.startswith("SFWA"):
        phases: tuple[PhaseSpec, ...] = (PhaseSpec("read", total, transfer, shared_file=True, same_data=True),)
        aggregate = "sum_of_ranks"
    else:
        layout = {"shared_file": single_file, "segment_count": objects if strided else 1}
        neighbour = name.endswith("-S")
        phases = (
            PhaseSpec("write", total, transfer, **layout),
            PhaseSpec("read", total, transfer, reorder_tasks=neighbour, **layout),
        )
        aggregate = "makespan"
    options = {"class": name, "objects": objects, "object_size": object_size, "strided": strided}
    return WorkloadSpec(_TOOL, command, phases, aggregate=aggregate, options=options)
