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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simfs.errors import WorkloadError
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

#: Direction -> Darshan's counter names.
_COUNTERS = {
    "write": ("POSIX_WRITES", "POSIX_BYTES_WRITTEN", "POSIX_SEQ_WRITES", "POSIX_F_WRITE_START_TIMESTAMP"),
    "read": ("POSIX_READS", "POSIX_BYTES_READ", "POSIX_SEQ_READS", "POSIX_F_READ_START_TIMESTAMP"),
}


def parse_darshan(args: list[str], command: str) -> WorkloadSpec:
    if len(args) != 1 or args[0].startswith("-"):
        raise WorkloadError("darshan: give one Darshan log (darshan job.darshan)")
    path = Path(args[0])
    counters, fcounters, nprocs, modules = _posix_records(path)
    phases: list[tuple[float, PhaseSpec]] = []
    notes = [
        f"darshan {path.name}: the per-process accesses of the log's {nprocs:,} processes, replayed by "
        "the experiment's nodes x ppn"
    ]
    for shared in (True, False):
        chosen = (counters["rank"] == -1) if shared else (counters["rank"] >= 0)
        for op, (calls_name, bytes_name, sequential_name, start_name) in _COUNTERS.items():
            group = counters[chosen & (counters[bytes_name] > 0)]
            if group.empty:
                continue
            phase, note = _phase(op, shared, group, nprocs, calls_name, bytes_name, sequential_name)
            started = fcounters.loc[group.index, start_name]
            phases.append((float(started[started > 0].min()) if (started > 0).any() else 0.0, phase))
            if note:
                notes.append(note)
    if not phases:
        raise WorkloadError(f"darshan: {path}: its POSIX records moved no data")
    data = counters[(counters["POSIX_BYTES_WRITTEN"] > 0) | (counters["POSIX_BYTES_READ"] > 0)]
    meta_only = len(counters) - len(data)
    if meta_only:
        notes.append(f"darshan: {meta_only:,} records of files opened or stat'ed without data: not simulated")
    others = sorted(set(modules) - {"POSIX", "MPI-IO", "STDIO", "LUSTRE"})
    if "STDIO" in modules:
        notes.append("darshan: STDIO streams are not replayed (the POSIX records are what reached the file system)")
    if others:
        notes.append(f"darshan: modules {', '.join(others)} are not replayed")
    ordered = tuple(phase for _, phase in sorted(phases, key=lambda item: item[0]))
    options = {"processes": nprocs, "path": str(path)}
    return WorkloadSpec("darshan", command, ordered, aggregate="makespan", options=options, notes=tuple(notes))


def _phase(
    op: str,
    shared: bool,
    group: Any,
    nprocs: int,
    calls_name: str,
    bytes_name: str,
    sequential_name: str,
) -> tuple[PhaseSpec, str]:
    """One phase from the records of one kind of file and direction, and a note on what
    averaging over the processes left out (or "")."""
    calls, moved = int(group[calls_name].sum()), int(group[bytes_name].sum())
    transfer = max(1, round(moved / max(calls, 1)))
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
    sequential = int(group[sequential_name].sum())
    fsync = op == "write" and int(group["POSIX_FSYNCS"].sum() + group["POSIX_FDSYNCS"].sum()) > 0
    phase = PhaseSpec(
        op,  # type: ignore[arg-type]
        bytes_per_rank=transfers * transfer,
        transfer_size_bytes=transfer,
        shared_file=shared,
        fsync=fsync,
        label=f"{op} ({kind})",
        random_offsets=sequential < calls / 2,
    )
    return phase, note


def _posix_records(path: Path) -> tuple[Any, Any, int, list[str]]:
    """The POSIX module's counters and fcounters (one row per record, same index), the
    job's process count and the modules the log has."""
    from simfs.ingest.darshan_log import open_report

    if not path.is_file():
        raise WorkloadError(f"darshan: {path}: no such file")
    report = open_report(str(path), lambda why: WorkloadError(f"darshan: {path}: {why}"))
    modules = list(report.modules)
    if "POSIX" not in modules:
        raise WorkloadError(f"darshan: {path}: no POSIX records (modules: {', '.join(modules) or 'none'})")
    report.mod_read_all_records("POSIX", dtype="pandas")
    records = report.records["POSIX"][0]
    counters = records["counters"].reset_index(drop=True)
    fcounters = records["fcounters"].reset_index(drop=True)
    return counters, fcounters, int(report.metadata["job"]["nprocs"]), modules
