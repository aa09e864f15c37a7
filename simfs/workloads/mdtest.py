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
``-a API``             the interface: POSIX is modelled; another one (DFS, IME, Gfarm)
                       is simulated as the same POSIX metadata requests, and a note says
                       so, as for any backend option (``--dfs.pool=P``)
``-W S``               stonewall: each rank stops creating files ``S`` seconds into the
                       create phase, then all go on to the count of the rank that made
                       most (mdtest's own wear-out); the run's later file phases work
                       on that many items (``-W 0``: no deadline)
``-z D``, ``-b B``      a directory tree, ``B`` subdirectories per directory, ``D`` levels
                       below the top (:class:`~simfs.workloads.spec.DirectoryTree`):
                       ``-n`` spread evenly over its directories, rounded down to a
                       multiple of them, filled one after another in mdtest's order
``-L``                 items only in the tree's leaves
``-I N``               items per directory: the tree gives the count (without ``-n``), or
                       with ``-n`` in a shared directory one directory per ``N`` items
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

import dataclasses
import math

from simfs.errors import WorkloadError
from simfs.workloads.options import NoIoOptions, interface_notes, parse_count, parse_size, scan_options
from simfs.workloads.spec import MAX_ITEMS_PER_RANK, DirectoryTree, PhaseSpec, WorkloadSpec

_FLAGS = {"-F", "-D", "-C", "-T", "-E", "-r", "-u", "-Y", "-L", "--posix.odirect"}
_VALUED = {"-n", "-w", "-e", "-i", "-d", "-N", "-a", "-W", "-z", "-b", "-I"}
_VERBOSITY = {"-v", "-vv", "-vvv"}
# Options that change nothing timed (the table above).
_NO_IO = NoIoOptions(
    flags=frozenset({"-P", "-X", "-t"}),
    valued=frozenset({"-x", "-G"}),
    long=frozenset({"dataPacketType", "saveRankPerformanceDetails"}),
)
#: mdtest -N: how many strides on a phase's items belong to (mdtest.c).
_STRIDE_STEPS = {"create": 0, "stat": 1, "read": 2, "remove": 3}


def parse_mdtest(args: list[str], command: str) -> WorkloadSpec:
    backend_options: list[str] = []
    flags, values = scan_options(
        "mdtest", args, _FLAGS, _VALUED, ignored=_VERBOSITY, no_io=_NO_IO, backend_options=backend_options
    )
    # -x FILE: where -W saved the stonewall count, and where a later run reads it from.
    # scan_options takes it as a no-I/O option in any form (-x F, -xF, -x=F): so does this.
    stonewall_file = any(arg[:2] == "-x" for arg in args)
    api = values.get("-a", "POSIX")
    notes = interface_notes("mdtest", api, ("POSIX",), backend_options)
    if "-n" not in values and "-I" not in values:
        raise WorkloadError("mdtest: -n ITEMS is required (items per rank), or -I ITEMS per directory")
    items, tree = _items_and_tree(flags, values)
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
                    directory_tree=tree,
                )
            )
    options = {
        "items": items,
        "write_bytes": write_bytes,
        "read_bytes": read_bytes,
        "path": values.get("-d"),
        "stride": stride,
        "stonewall_s": stonewall_s,
        "api": api.upper(),
        "backend_options": tuple(dict.fromkeys(backend_options)),
    }
    return WorkloadSpec(
        "mdtest", command, tuple(phases), iterations=iterations, aggregate="makespan", options=options, notes=notes
    )


def _count_text(count: int) -> str:
    """``count`` with thousands separators, or its power of ten where that would be a
    screenful (a tree of -b 1000 -z 1000 has 1,001 digits of directories)."""
    if count < 10**18:
        return f"{count:,}"
    return f"about 10^{int(math.log10(count))}"  # str() refuses more than 4,300 digits


def _items_and_tree(flags: set[str], values: dict[str, str]) -> tuple[int, DirectoryTree | None]:
    """A rank's items and the tree they go in, as mdtest 3.3 to 4.x work them out
    (``mdtest.c``, the items and ``num_dirs_in_tree`` set-up): ``-n`` items spread evenly
    over the tree's directories (its leaves with ``-L``), rounded down to a multiple of
    them; or ``-I`` in each; or, with both in a shared tree, one tree per ``-I`` items
    (``directory_loops``).  ``None`` for the one directory mdtest uses without a tree."""
    # mdtest stores -n in 64 bits (IOR 3.3 on); the IO500 gives 10^10 with a stonewall.
    items = parse_count("mdtest", f"-n {values['-n']}", values["-n"], maximum=2**63 - 1) if "-n" in values else 0
    depth = 0 if values.get("-z", "0") == "0" else _count(values, "-z")
    branch = _count(values, "-b") if "-b" in values else 1
    per_directory = _count(values, "-I") if "-I" in values else 0
    shape = DirectoryTree(depth, branch, "-L" in flags, 1)
    if shape.holders_per_tree > MAX_ITEMS_PER_RANK:
        raise WorkloadError(
            f"mdtest: -z {depth} -b {branch}: {_count_text(shape.holders_per_tree)} directories hold items; "
            f"at most {MAX_ITEMS_PER_RANK:,}"
        )
    loops = 1
    if per_directory and items:
        # mdtest then makes -I in each directory of -n / -I trees (or of one, with -u) and
        # counts -n: the same items only in one directory per tree.
        if "-u" in flags or shape.holders_per_tree > 1:
            raise WorkloadError(
                "mdtest: -n with -I: mdtest counts -n items but makes -I in each directory of "
                f"{'one tree per rank' if '-u' in flags else 'each tree'}; give -n or -I alone"
            )
        loops = items // per_directory
        if loops == 0:
            raise WorkloadError(f"mdtest: -n {items} is fewer than -I {per_directory}")
    elif not per_directory:
        per_directory = items // shape.holders_per_tree
        if per_directory == 0:
            raise WorkloadError(
                f"mdtest: -n {items}: fewer items than the {shape.holders_per_tree:,} directories of the tree (-z, -b)"
            )
    tree = dataclasses.replace(shape, items_per_directory=per_directory, loops=loops)
    if tree.holders_per_tree == 1 and tree.loops == 1:
        return tree.items, None
    return tree.items, tree


def _count(values: dict[str, str], name: str) -> int:
    return parse_count("mdtest", f"{name} {values[name]}", values[name])


def _size(values: dict[str, str], name: str) -> int:
    text = values.get(name, "0")
    return parse_size("mdtest", f"{name} {text}", text, allow_zero=True)
