"""bonnie++ command lines: block write, rewrite and block read of one file set per process.

Forms (seed ``000_cd5f2d1d7b196eec.txt``, "Bonnie tests on 1 to 64 nodes")::

    bonnie++ -d $DIR -s 48g -n 0 -f -u root

Supported options: ``-d DIR`` (used by the runner), ``-s SIZE[:CHUNK]`` (size in MiB, or
with a k, m, g suffix; chunk default 8k), ``-n 0``, ``-f`` (skip the per-character tests),
``-x N`` (repetitions), ``-u USER``, ``-r RAM``, ``-m NAME``, ``-q``.  The per-character
tests (omit ``-f``), file-creation tests (``-n`` > 0: use an mdtest workload) and the
random-seek test are not modelled; asking for the first two is an error.

Unsynchronised phases.  bonnie++ has no barriers: each process runs write, rewrite and
read back to back, so on many nodes the fast ones are reading while slow ones still
write, and the phases interfere on the servers.  The spec says so
(``synchronized=False``): ranks meet only at the start, as the seed's runs were started
together, and each phase's rate is each process's own (summed, as the seed does).
Rewrite reads a chunk, dirties it and writes it back: it moves the file once in each
direction, reported as the file size over the time.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.options import MAX_COUNT, parse_count, parse_size, scan_options
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_FLAGS = {"-f", "-q"}
_VALUED = {"-d", "-s", "-n", "-x", "-u", "-r", "-m"}


def parse_bonnie(args: list[str], command: str) -> WorkloadSpec:
    flags, values = scan_options("bonnie++", args, _FLAGS, _VALUED)
    if "-f" not in flags:
        raise WorkloadError("bonnie++: the per-character tests are not modelled: add -f")
    if values.get("-n", "0") != "0":
        raise WorkloadError(
            "bonnie++: -n: file-creation tests are not modelled here: give -n 0 (use an mdtest workload)"
        )
    if "-s" not in values:
        raise WorkloadError("bonnie++: -s SIZE is required (bonnie++'s default depends on the RAM of the machine)")
    size_text, _, chunk_text = values["-s"].partition(":")
    size = _size(size_text, "-s", default_unit=1 << 20)
    chunk = _size(chunk_text or "8k", "-s chunk", default_unit=1)
    if chunk > size:
        raise WorkloadError(
            f"bonnie++: -s {values['-s']}: the chunk ({chunk:,} B) is larger than the file ({size:,} B)"
        )
    if "-r" in values and not (values["-r"].isdigit() and int(values["-r"]) <= MAX_COUNT):
        # bonnie++ -r is the RAM size in MiB (0 turns its size check off); not used here.
        raise WorkloadError(f"bonnie++: -r {values['-r']}: expected the RAM size in MiB (a non-negative integer)")
    repetitions = parse_count("bonnie++", f"-x {values.get('-x', '1')}", values.get("-x", "1"))
    common = dict(bytes_per_rank=size, transfer_size_bytes=chunk)
    phases = (
        PhaseSpec("write", label="block write", **common),
        PhaseSpec("rewrite", label="rewrite", **common),
        PhaseSpec("read", label="block read", **common),
    )
    options = {"size": size, "chunk": chunk, "path": values.get("-d")}
    return WorkloadSpec(
        "bonnie++",
        command,
        phases,
        iterations=repetitions,
        aggregate="sum_of_ranks",
        synchronized=False,
        options=options,
    )


def _size(text: str, name: str, default_unit: int) -> int:
    if text.isdigit():  # bonnie++'s plain numbers are in its default unit (MiB for -s)
        return parse_count("bonnie++", f"{name} {text}", text) * default_unit
    return parse_size("bonnie++", f"{name} {text}", text)
