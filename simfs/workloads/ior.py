"""IOR command lines: the subset simfs models.

Supported options (IOR 3.x names, ``ior -h``):

=====================  =================================================================
``-a POSIX``           API; only POSIX is modelled
``-F``                 file per process (default: one shared file)
``-t SIZE``            transfer size per call (default 256k)
``-b SIZE``            block size: contiguous bytes per rank per segment (default 1m)
``-s N``               segment count (default 1)
``-w`` / ``-r``        write / read phase (neither given: both, as IOR does)
``-C``                 reorder tasks: read the data of the rank on the next node
``-e``                 fsync before close, inside the timed write phase
``-i N``               iterations (repetitions of the phases)
``-o PATH``            test file path (used by the runner; ignored by the simulator)
``--posix.odirect``    O_DIRECT (``-B`` is the IOR 2 spelling)
``-O summaryFormat=``  output format (``-O summaryFile=`` too): no effect on the I/O
``-v``, ``-vv``, ...   verbosity: no effect on the I/O
=====================  =================================================================

Sizes take IOR's suffixes k, m, g, t (powers of 1024).  Tasks and tasks per node are
experiment settings (``nodes``, ``ppn``), so ``-N`` is rejected with that advice.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.options import parse_count, parse_size, scan_options
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_FLAGS = {"-F", "-w", "-r", "-C", "-e", "-B", "--posix.odirect"}
_VALUED = {"-a", "-t", "-b", "-s", "-i", "-o", "-O"}
_VERBOSITY = {"-v", "-vv", "-vvv", "-vvvv"}
# -O options that only change what IOR prints, not what it does.
_OUTPUT_ONLY = {"summaryFormat", "summaryFile"}
_EXPERIMENT = {"-N": "nodes and ppn", "--tasksPerNode": "ppn"}


def parse_ior(args: list[str], command: str) -> WorkloadSpec:
    def check_value(name: str, value: str) -> None:
        if name == "-O" and value.split("=", 1)[0] not in _OUTPUT_ONLY:
            raise WorkloadError(f"ior: -O {value}: only {', '.join(sorted(_OUTPUT_ONLY))} are supported")

    def unknown(arg: str) -> None:
        setting = _EXPERIMENT.get(arg.split("=")[0])
        if setting:
            raise WorkloadError(f"ior: option {arg} is an experiment setting here: use {setting}")
        raise WorkloadError(f"ior: unsupported option {arg!r} (see simfs.workloads.ior for the subset)")

    flags, values = scan_options(
        "ior", args, _FLAGS, _VALUED, ignored=_VERBOSITY, check_value=check_value, unknown=unknown
    )

    api = values.get("-a", "POSIX")
    if api.upper() != "POSIX":
        raise WorkloadError(f"ior: -a {api}: only the POSIX API is modelled")
    transfer = _size(values, "-t", "256k")
    block = _size(values, "-b", "1m")
    segments = _count(values, "-s", "1")
    iterations = _count(values, "-i", "1")
    if block % transfer:
        raise WorkloadError(f"ior: -b {values.get('-b', '1m')} must be a multiple of -t {values.get('-t', '256k')}")

    do_write = "-w" in flags or "-r" not in flags
    do_read = "-r" in flags or "-w" not in flags
    common = dict(
        bytes_per_rank=block * segments,
        transfer_size_bytes=transfer,
        shared_file="-F" not in flags,
        shared_directory="-F" in flags,  # IOR puts the files of -F in one directory
        direct=bool(flags & {"-B", "--posix.odirect"}),
        segment_count=segments,
    )
    phases = []
    if do_write:
        phases.append(PhaseSpec("write", fsync="-e" in flags, **common))
    if do_read:
        phases.append(PhaseSpec("read", reorder_tasks="-C" in flags, **common))
    options = {"api": api, "transfer": transfer, "block": block, "segments": segments, "path": values.get("-o")}
    return WorkloadSpec("ior", command, tuple(phases), iterations=iterations, aggregate="makespan", options=options)


def _size(values: dict[str, str], name: str, default: str) -> int:
    text = values.get(name, default)
    return parse_size("ior", f"{name} {text}", text)


def _count(values: dict[str, str], name: str, default: str) -> int:
    text = values.get(name, default)
    return parse_count("ior", f"{name} {text}", text)
