"""A Darshan log as a workload (``darshan job.darshan``): what the application's
processes did at the POSIX layer, replayed as phases.

Darshan keeps one record per file and process, or one per file for a file every process
opened (rank -1, reduced at shutdown).  The POSIX module is what reached the file
system (MPI-IO and STDIO sit above it and are counted there too).  From its counters:

* one phase per direction (write, read) and kind of file: files shared by all processes
  (``shared_file``: each process's share is the file's bytes over the process count, in
  a contiguous block of its own, as Darshan does not record the interleaving) and files
  of one process each (``files per process``: the mean over the processes of what each
  moved, in a file of its own);
* each phase's transfer size is the mean access (``BYTES / WRITES``); its transfers per
  process the mean count; it is at random offsets (``-z``: :mod:`simfs.workloads.ior`)
  when fewer than half its accesses were sequential (``SEQ_WRITES``); a write phase
  fsyncs inside its time when the log counts fsyncs;
* the phases run in the order the log's first access of each began
  (``F_WRITE_START_TIMESTAMP``, ``F_READ_START_TIMESTAMP``), each between barriers.

Processes are the experiment's (``nodes`` x ``ppn``), as for the other workloads: the
per-process accesses are replayed at that scale, and a note gives the log's own process
count when it differs.  What the phases cannot carry is said in ``notes``: the
imbalance between processes (the busiest one's bytes over the mean), several files per
process (one is simulated), opens and stats of files that moved no data, and the modules
left out.  Reading a log needs the PyPI ``darshan`` package (``simfs[darshan]``).

A log with no POSIX data but STDIO streams (``fopen``/``fwrite``: an application that
writes through the C library only) is replayed from its STDIO records the same way, but
that a stream's accesses reach the file system as the library's buffer fills: each
transfer at least ``STDIO_BUFFER_BYTES`` (glibc buffers a stream in ``st_blksize``, 4 KiB
on most Linux file systems), in order unless the stream seeked more often than it moved
data; ``<STDOUT>``, ``<STDERR>`` and ``<STDIN>`` are not files and are left out.  Where
a log has POSIX data its STDIO streams are left out, with a note giving
what they moved: how much of it the POSIX module also counts is not recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simfs.errors import WorkloadError
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

#: Direction -> the counters, named ``{module}_...``: calls, bytes, start timestamp.
_COUNTERS = {
    "write": ("WRITES", "BYTES_WRITTEN", "F_WRITE_START_TIMESTAMP"),
    "read": ("READS", "BYTES_READ", "F_READ_START_TIMESTAMP"),
}
#: The smallest access a buffered C stream makes of the file (glibc: ``st_blksize``).
STDIO_BUFFER_BYTES = 4096


def parse_darshan(args: list[str], command: str) -> WorkloadSpec:
    if len(args) != 1 or args[0].startswith("-"):
        raise WorkloadError("darshan: give one Darshan log (darshan job.darshan)")
    path = Path(args[0])
    report, nprocs, modules = _open(path)
    posix = _records(report, "POSIX") if "POSIX" in modules else None
    stdio = _records(report, "STDIO") if "STDIO" in modules else None
    notes = [
        f"darshan {path.name}: the per-process accesses of the log's {nprocs:,} processes, replayed by "
        "the experiment's nodes x ppn"
    ]
    module, records = "POSIX", posix
    if not _moved(posix, "POSIX"):
        if not _moved(stdio, "STDIO"):
            if posix is None and stdio is None:
                raise WorkloadError(
                    f"darshan: {path}: no POSIX or STDIO records (modules: {', '.join(modules) or 'none'})"
                )
            raise WorkloadError(f"darshan: {path}: its POSIX and STDIO records moved no data")
        module, records = "STDIO", stdio
        notes.append(
            f"darshan: no POSIX data: the STDIO streams are replayed, each access at least the stream buffer's "
            f"{STDIO_BUFFER_BYTES:,} bytes (the standard streams left out)"
        )
    elif _moved(stdio, "STDIO"):
        counters = stdio[0]
        notes.append(
            f"darshan: STDIO streams ({_megabytes(counters['STDIO_BYTES_WRITTEN'].sum())} written, "
            f"{_megabytes(counters['STDIO_BYTES_READ'].sum())} read) are not replayed: the POSIX records are"
        )
    counters, fcounters = records  # type: ignore[misc]
    phases: list[tuple[float, PhaseSpec]] = []
    for shared in (True, False):
        chosen = (counters["rank"] == -1) if shared else (counters["rank"] >= 0)
        for op, (_, moved, start) in _COUNTERS.items():
            group = counters[chosen & (counters[f"{module}_{moved}"] > 0)]
            if group.empty:
                continue
            phase, note = _phase(op, shared, group, nprocs, module)
            started = fcounters.loc[group.index, f"{module}_{start}"]
            phases.append((float(started[started > 0].min()) if (started > 0).any() else 0.0, phase))
            if note:
                notes.append(note)
    data = counters[(counters[f"{module}_BYTES_WRITTEN"] > 0) | (counters[f"{module}_BYTES_READ"] > 0)]
    meta_only = len(counters) - len(data)
    if meta_only:
        notes.append(f"darshan: {meta_only:,} records of files opened or stat'ed without data: not simulated")
    others = sorted(set(modules) - {"POSIX", "MPI-IO", "STDIO", "LUSTRE"})
    if others:
        notes.append(f"darshan: modules {', '.join(others)} are not replayed")
    ordered = tuple(phase for _, phase in sorted(phases, key=lambda item: item[0]))
    options = {"processes": nprocs, "path": str(path), "module": module}
    return WorkloadSpec("darshan", command, ordered, aggregate="makespan", options=options, notes=tuple(notes))


def _moved(records: tuple[Any, Any] | None, module: str) -> bool:
    if records is None:
        return False
    counters = records[0]
    return bool(((counters[f"{module}_BYTES_WRITTEN"] > 0) | (counters[f"{module}_BYTES_READ"] > 0)).any())


def _megabytes(count: float) -> str:
    return f"{count / 1e6:,.1f} MB"


def _phase(op: str, shared: bool, group: Any, nprocs: int, module: str) -> tuple[PhaseSpec, str]:
    """One phase from the ``module`` records of one kind of file and direction, and a note
    on what averaging over the processes left out (or "")."""
    calls_name, bytes_name, _ = (f"{module}_{name}" for name in _COUNTERS[op])
    calls, moved = int(group[calls_name].sum()), int(group[bytes_name].sum())
    transfer = max(1, round(moved / max(calls, 1)))
    if module == "STDIO":
        # The stream's buffer reaches the file system, not each fwrite.
        transfer = min(moved, max(transfer, STDIO_BUFFER_BYTES)) or 1
        calls = max(1, round(moved / transfer))
    kind = "shared files" if shared else "files per process"
    note = ""
    transfers = max(1, round(calls / nprocs))
    if not shared:
        per_rank = group.groupby("rank")[bytes_name].sum()
        mean = moved / nprocs
        files = group.groupby("rank").size().max()
        busiest = float(per_rank.max()) / mean if mean else 1.0
        parts = []
        if busiest > 1.05:
            parts.append(f"the busiest process moved {busiest:.1f}x the mean")
        if len(per_rank) < nprocs:
            parts.append(f"{nprocs - len(per_rank):,} of {nprocs:,} processes moved none")
        if files > 1:
            parts.append(f"up to {files} files per process, simulated as one")
        if parts:
            note = f"darshan: {op} ({kind}): each process replays the mean; " + "; ".join(parts)
    if module == "POSIX":
        sequential = int(group["POSIX_SEQ_WRITES" if op == "write" else "POSIX_SEQ_READS"].sum())
        random_offsets = sequential < calls / 2
        fsync = op == "write" and int(group["POSIX_FSYNCS"].sum() + group["POSIX_FDSYNCS"].sum()) > 0
    else:  # a stream moves on in order; fseek is what moves it elsewhere
        random_offsets = int(group["STDIO_SEEKS"].sum()) > calls / 2
        fsync = False  # fflush hands the buffer to the kernel; it does not sync
    phase = PhaseSpec(
        op,  # type: ignore[arg-type]
        bytes_per_rank=transfers * transfer,
        transfer_size_bytes=transfer,
        shared_file=shared,
        fsync=fsync,
        label=f"{op} ({kind})" if module == "POSIX" else f"{op} ({kind}, STDIO)",
        random_offsets=random_offsets,
    )
    return phase, note


def _open(path: Path) -> tuple[Any, int, list[str]]:
    """The log's report, its job's process count and the modules it has."""
    from simfs.ingest.darshan_log import open_report

    if not path.is_file():
        raise WorkloadError(f"darshan: {path}: no such file")
    report = open_report(str(path), lambda why: WorkloadError(f"darshan: {path}: {why}"))
    return report, int(report.metadata["job"]["nprocs"]), list(report.modules)


#: STDIO records of the process's standard streams: a terminal or a pipe, as far as
#: Darshan knows; not the file system.
_STANDARD_STREAMS = {"<STDIN>", "<STDOUT>", "<STDERR>"}


def _records(report: Any, module: str) -> tuple[Any, Any]:
    """A module's counters and fcounters (one row per record, same index), without the
    standard streams."""
    report.mod_read_all_records(module, dtype="pandas")
    records = report.records[module][0]
    counters, fcounters = records["counters"].reset_index(drop=True), records["fcounters"].reset_index(drop=True)
    names = report.name_records
    keep = [names.get(record_id, "") not in _STANDARD_STREAMS for record_id in counters["id"]]
    return counters[keep].reset_index(drop=True), fcounters[keep].reset_index(drop=True)
