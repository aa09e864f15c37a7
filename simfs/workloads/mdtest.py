"""mdtest command lines: metadata phases (create, stat, read, remove) over many items.

Supported options (mdtest 3.x/4.x names, ``mdtest -h``):

=====================  =================================================================
``-n N``               items per rank (required)
``-F`` / ``-D``        files only / directories only (default: both, one phase each)
``-C`` ``-T`` ``-E``   create / stat / read phase only (with ``-r``: remove); none of
``-r``                 ``-C -T -E -r`` given: create, stat, read (files) and remove
``-u``                 a unique working directory per rank (default: all ranks share one)
``-w BYTES``           bytes written into each file on create
``-e BYTES``           bytes read from each file in the read phase
``-N STRIDE``           stat the items of the rank ``STRIDE`` ranks on, read those
                       ``2 x STRIDE`` on and remove those ``3 x STRIDE`` on (mdtest.c's
                       ``stat_name``, ``read_name``, ``rm_name``; ``-N`` = processes per
                       node: another node's items, which no client serves from its cache)
``-i N``               iterations
``-d PATH``            test directory (used by the runner; ignored by the simulator)
``-a POSIX``           the POSIX interface (the only one modelled)
``-W S``               stonewall: each rank stops creating files ``S`` seconds into the
                       create phase, then all go on to the count of the rank that made
                       most (mdtest's own wear-out); the run's later file phases work
                       on that many items (``-W 0``: no deadline)
``-Y``                 sync after each phase, inside its time: an mdtest phase's file
                       data (``-w``) reaches the servers inside the phase in simfs anyway
``--posix.odirect``    O_DIRECT for the files' data (``-w``, ``-e``): no page-cache copy
``-v``, ``-vv``, ...   verbosity: no effect
=====================  =================================================================

Accepted and without effect on what is timed (the IO500 harness gives most of them):

=================================  =====================================================
``-P``                             print rates and times (output)
``-X``                             check the data read (verification of bytes already read)
``-x PATH``                        where ``-W`` saves the stonewall count; a later stat, read or
                                   remove is then time-bounded (simfs.workloads.steady_state)
``-G N``, ``--dataPacketType``     what the file data holds (no compression modelled)
``--saveRankPerformanceDetails``   per-rank results file (output)
``-L``                             items only in the tree's leaves: the tree has one
                                   level unless ``-z`` asks for more, so no effect here
``-t``                             time each rank's unique-directory creation with the
                                   phase: one ``mkdir`` per rank against ``-n`` items,
                                   left out
=================================  =====================================================

Options may be written ``-n 10``, ``-n10`` or ``-n=10`` (mdtest 4).

Every phase is timed between barriers and reported as items per second over the
phase's makespan, as mdtest's SUMMARY does.  ``-w`` and ``-e`` sizes take k, m, g
suffixes (powers of 1024).
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.options import NoIoOptions, parse_count, parse_size, scan_options
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_FLAGS = {"-F", "-D", "-C", "-T", "-E", "-r", "-u", "-Y", "--posix.odirect"}
_VALUED = {"-n", "-w", "-e", "-i", "-d", "-N", "-a", "-W"}
_VERBOSITY = {"-v", "-vv", "-vvv"}
# Options that change nothing timed (the table above).
_NO_IO = NoIoOptions(
    flags=frozenset({"-P", "-X", "-L", "-t"}),
    valued=frozenset({"-x", "-G"}),
    long=frozenset({"dataPacketType", "saveRankPerformanceDetails"}),
)
#: mdtest -N: how many strides on a phase's items belong to (mdtest.c).
_STRIDE_STEPS = {"create": 0, "stat": 1, "read": 2, "remove": 3}


def parse_mdtest(args: list[str], command: str) -> WorkloadSpec:
    flags, values = scan_options("mdtest", args, _FLAGS, _VALUED, ignored=_VERBOSITY, no_io=_NO_IO)
    # -x FILE: where -W saved the stonewall count, and where a later run reads it from.
    # scan_options takes it as a no-I/O option in any form (-x F, -xF, -x=F): so does this.
    stonewall_file = any(arg[:2] == "-x" for arg in args)
    if values.get("-a", "POSIX").upper() != "POSIX":
        raise WorkloadError(f"mdtest: -a {values['-a']}: only the POSIX interface is modelled")
    if "-n" not in values:
        raise WorkloadError("mdtest: -n ITEMS is required (items per rank)")
    items = _count(values, "-n")
    stride = 0
    if values.get("-N", "0") != "0":  # -N 0 is mdtest's default: each rank its own items
        stride = parse_count("mdtest", f"-N {values['-N']}", values["-N"])
    iterations = _count(values, "-i") if "-i" in values else 1
    stonewall_s = 0.0
    if values.get("-W", "0") != "0":
        stonewall_s = float(parse_count("mdtest", f"-W {values['-W']}", values["-W"]))
    write_bytes = _size(values, "-w")
    read_bytes = _size(values, "-e")
    if read_bytes > write_bytes and "-D" not in flags and ("-C" in flags or not flags & {"-C", "-T", "-E", "-r"}):
        # The files this run creates hold -w bytes each; reading more finds end-of-file.
        raise WorkloadError(
            f"mdtest: -e {values['-e']} reads more than the -w {values.get('-w', '0')} bytes written to each file"
        )
    if "-F" in flags and "-D" in flags:
        raise WorkloadError("mdtest: -F and -D exclude each other (files only / directories only)")
    kinds = ["dir"] if "-D" in flags else ["file"] if "-F" in flags else ["dir", "file"]
    chosen = flags & {"-C", "-T", "-E", "-r"}
    steps = [s for s, flag in (("create", "-C"), ("stat", "-T"), ("read", "-E"), ("remove", "-r")) if flag in chosen]
    if not chosen:
        steps = ["create", "stat", "read", "remove"]
    phases = []
    for kind in kinds:
        for step in steps:
            if step == "read" and kind == "dir":
                continue  # mdtest reads files only
            data = write_bytes if step == "create" else read_bytes if step == "read" else 0
            if kind == "dir" and step == "create":
                data = 0
            phases.append(
                PhaseSpec(
                    step,
                    bytes_per_rank=items * data,
                    transfer_size_bytes=max(data, 1),
                    label=f"{kind} {step}",
                    items_per_rank=items,
                    shared_directory="-u" not in flags,
                    owner_stride=stride * _STRIDE_STEPS[step],
                    stonewall_s=stonewall_s if (kind, step) == ("file", "create") else 0.0,
                    direct="--posix.odirect" in flags,
                    stonewall_bound=stonewall_file and step != "create" and kind == "file",
                )
            )
    options = {
        "items": items,
        "write_bytes": write_bytes,
        "read_bytes": read_bytes,
        "path": values.get("-d"),
        "stride": stride,
        "stonewall_s": stonewall_s,
    }
    return WorkloadSpec("mdtest", command, tuple(phases), iterations=iterations, aggregate="makespan", options=options)


def _count(values: dict[str, str], name: str) -> int:
    return parse_count("mdtest", f"{name} {values[name]}", values[name])


def _size(values: dict[str, str], name: str) -> int:
    text = values.get(name, "0")
    return parse_size("mdtest", f"{name} {text}", text, allow_zero=True)
