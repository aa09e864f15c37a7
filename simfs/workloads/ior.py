"""IOR command lines: the subset simfs models.

Supported options (IOR 3.x names, ``ior -h``):

=====================  =================================================================
``-a POSIX|MPIIO``     API; MPI-IO independent writes move the same bytes as POSIX ones
``-c``                 collective MPI-IO (with ``-a MPIIO``): two-phase I/O through
                       aggregators (simfs.simulation; the runner runs POSIX only)
``-F``                 file per process (default: one shared file)
``-t SIZE``            transfer size per call (default 256k)
``-b SIZE``            block size: contiguous bytes per rank per segment (default 1m)
``-s N``               segment count (default 1)
``-w`` / ``-r``        write / read phase (neither given: both, as IOR does)
``-C``                 reorder tasks: read the data of the rank on the next node
``-Q N``               with ``-C``: read the data of the rank ``N`` nodes away (default 1);
                       without ``-C`` it does nothing, as in IOR
``-e``                 fsync before close, inside the timed write phase
``-i N``               iterations (repetitions of the phases)
``-g``                 barriers between open, transfer and close inside each phase
``-z``                 random offsets: each transfer once, in a random order within the
                       rank's blocks (reads without read-ahead, a request per transfer)
``-D S``               stonewall: stop each phase's transfers after ``S`` seconds
``-o PATH``            test file path (used by the runner; ignored by the simulator)
``--posix.odirect``    O_DIRECT (``-B`` is the IOR 2 spelling)
``-O summaryFormat=``  output format (``-O summaryFile=`` too): no effect on the I/O
``-O stoneWallingWearOut=1``  with ``-D``: after the deadline every rank goes on until it
                       has done as many transfers as the rank that did most (IOR's wear-out);
                       without ``-D`` (or with ``-D 0``, no deadline) it does nothing
``-u``                 with ``-F``: each file in a directory of its own (not all in one)
``-v``, ``-vv``, ...   verbosity: no effect on the I/O
=====================  =================================================================

Accepted and without effect on the I/O that is timed (the IO500 harness gives most of
them), so neither the simulator nor the runner acts on them:

=================================  =====================================================
``-k``, ``-K``                     keep the files afterwards (bookkeeping)
``-R``, ``-W``                     read the data back to check it, after the timed
                                   phase and outside its time (verification)
``-G N``                           seed of the data signature in the buffers
``-l TYPE``, ``--dataPacketType``  what the buffers hold (simfs models no compression
                                   or deduplication, so their content does not matter)
``-q``, ``-x``                     stop on the first error / do not retry a short
                                   transfer (only matter when something fails)
``-H``                             print the MPI-IO hints (output)
``-d S``                           delay between repetitions (outside every phase's time)
``--random-offset-seed=N``         the seed of ``-z``'s random order (which order, not how
                                   many transfers or where: the runner draws its own)
``-O stoneWallingStatusFile=``     where ``-D`` saves the transfer count; without ``-D`` a read
                                   that finds it is time-bounded (simfs.workloads.steady_state)
``-O saveRankPerformanceDetailsCSV=``  per-rank results file (output)
=================================  =====================================================

Accepted, simulated without them, and each named in a note on the result (the workload's
``notes``): other interfaces (``-a DFS``, ``-a IME``, ``-a CHFS``, ``-a Gfarm``: their
accesses are simulated as the same POSIX I/O through the system's clients), the options
of any backend (``--dfs.oclass=SX``, ``--posix.gpfs.finegrainwritesharing``: GPFS hints)
and ``-U FILE`` (MPI-IO hints: the MPI-IO model's own apply).  The runner does POSIX I/O
only and refuses other interfaces.

``-z`` and ``-D`` run in both the simulator and the runner.  Options may be written ``-t 4k``, ``-t4k`` or ``-t=4k`` (IOR 4).

Sizes take IOR's suffixes k, m, g, t (powers of 1024).  Tasks and tasks per node are
experiment settings (``nodes``, ``ppn``), so ``-N`` is rejected with that advice.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.units import format_bytes, parse_ior_size
from simfs.workloads.options import NoIoOptions, interface_notes, parse_count, parse_size, scan_options
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_FLAGS = {"-F", "-w", "-r", "-C", "-e", "-B", "-g", "-z", "-c", "-u", "-E", "--posix.odirect"}
_VALUED = {"-a", "-t", "-b", "-s", "-i", "-o", "-O", "-Q", "-D", "-U"}
_VERBOSITY = {"-v", "-vv", "-vvv", "-vvvv"}
# Options that change nothing timed (the table above).
_NO_IO = NoIoOptions(
    flags=frozenset({"-k", "-K", "-R", "-W", "-q", "-x", "-H"}),
    valued=frozenset({"-G", "-l", "-d"}),
    long=frozenset({"dataPacketType", "random-offset-seed"}),
)
# -O options that only change what IOR prints or saves, not what it does; and the one that does.
_OUTPUT_ONLY = {"summaryFormat", "summaryFile", "stoneWallingStatusFile", "saveRankPerformanceDetailsCSV"}
_WEAR_OUT = "stoneWallingWearOut"
_EXPERIMENT = {"-N": "nodes and ppn", "--tasksPerNode": "ppn"}


def parse_ior(args: list[str], command: str) -> WorkloadSpec:
    extended: dict[str, str] = {}

    def check_value(name: str, value: str) -> None:
        if name != "-O":
            return
        key, _, setting = value.partition("=")
        if key not in _OUTPUT_ONLY | {_WEAR_OUT}:
            raise WorkloadError(f"ior: -O {value}: only {', '.join(sorted(_OUTPUT_ONLY | {_WEAR_OUT}))} are supported")
        if key == _WEAR_OUT and setting not in ("0", "1"):
            raise WorkloadError(f"ior: -O {value}: expected {_WEAR_OUT}=0 or 1")
        extended[key] = setting

    def unknown(arg: str) -> None:
        setting = _EXPERIMENT.get(arg.split("=")[0])
        if setting:
            raise WorkloadError(f"ior: option {arg} is an experiment setting here: use {setting}")
        raise WorkloadError(f"ior: unsupported option {arg!r} (see simfs.workloads.ior for the subset)")

    backend_options: list[str] = []
    flags, values = scan_options(
        "ior",
        args,
        _FLAGS,
        _VALUED,
        ignored=_VERBOSITY,
        no_io=_NO_IO,
        check_value=check_value,
        unknown=unknown,
        backend_options=backend_options,
    )

    api = values.get("-a", "POSIX").upper()
    notes = interface_notes("ior", values.get("-a", "POSIX"), ("POSIX", "MPIIO"), backend_options)
    if "-U" in values:
        notes += (f"ior -U {values['-U']}: the MPI-IO hints in this file are not read; the MPI-IO model's own apply",)
    if "-c" in flags and api != "MPIIO":
        raise WorkloadError("ior: -c (collective I/O) needs -a MPIIO")
    if "-u" in flags and "-F" not in flags:
        raise WorkloadError("ior: -u (a directory per file) needs -F (a file per process)")
    if "-c" in flags and "-F" in flags:
        raise WorkloadError("ior: -c (collective I/O) applies to one shared file: drop -F")
    transfer, transfer_note = _size(values, "-t", "256k")
    block, block_note = _size(values, "-b", "1m")
    notes += transfer_note + block_note
    segments = _count(values, "-s", "1")
    iterations = _count(values, "-i", "1")
    if block % transfer:
        raise WorkloadError(f"ior: -b {values.get('-b', '1m')} must be a multiple of -t {values.get('-t', '256k')}")
    # Without -C, IOR takes -Q and does nothing with it (the IO500 gives it to every phase).
    task_offset = _count(values, "-Q", "1")
    stonewall_s = 0.0
    if values.get("-D", "0") != "0":  # -D 0 is IOR's default: no deadline
        stonewall_s = float(_count(values, "-D", "1"))
    # Without -D there is nothing to wear out: IOR accepts the setting and does nothing
    # with it (the IO500 passes it to its read phases too).
    wear_out = extended.get(_WEAR_OUT) == "1" and stonewall_s > 0

    do_write = "-w" in flags or "-r" not in flags
    do_read = "-r" in flags or "-w" not in flags
    common = dict(
        bytes_per_rank=block * segments,
        transfer_size_bytes=transfer,
        shared_file="-F" not in flags,
        # IOR puts the files of -F in one directory, unless -u gives each its own.
        shared_directory="-F" in flags and "-u" not in flags,
        direct=bool(flags & {"-B", "--posix.odirect"}),
        segment_count=segments,
        random_offsets="-z" in flags,
        stonewall_s=stonewall_s,
        wear_out=wear_out,
        collective="-c" in flags,
        # The IO500 reads what its stonewalled write wrote: IOR reads the count from the file.
        stonewall_bound="stoneWallingStatusFile" in extended and stonewall_s == 0,
        existing_file="-E" in flags,
    )
    phases = []
    if do_write:
        phases.append(PhaseSpec("write", fsync="-e" in flags, **common))
    if do_read:
        phases.append(PhaseSpec("read", reorder_tasks="-C" in flags, task_offset=task_offset, **common))
    options = {
        "api": api,
        "transfer": transfer,
        "block": block,
        "segments": segments,
        "path": values.get("-o"),
        "backend_options": tuple(dict.fromkeys(backend_options)),
    }
    return WorkloadSpec(
        "ior",
        command,
        tuple(phases),
        iterations=iterations,
        aggregate="makespan",
        intra_phase_barriers="-g" in flags,
        options=options,
        notes=notes,
    )


def _size(values: dict[str, str], name: str, default: str) -> tuple[int, tuple[str, ...]]:
    """The size of option ``name``, and a note if it is read as IOR reads a size with more
    after its suffix letter (``-b 256gm``, in a real IO500 run: 256 GiB)."""
    text = values.get(name, default)
    try:
        return parse_size("ior", f"{name} {text}", text), ()
    except WorkloadError as refused:
        try:
            size = parse_ior_size(text, as_ior_reads=True)
        except ValueError:
            size = 0
        if size <= 0:
            raise refused from None
    return size, (f"ior {name} {text}: read as {format_bytes(size)}, as IOR reads it (the number and one letter)",)


def _count(values: dict[str, str], name: str, default: str) -> int:
    text = values.get(name, default)
    return parse_count("ior", f"{name} {text}", text)
