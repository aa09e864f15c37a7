"""Darshan logs, through the PyPI ``darshan`` package (optional: ``pip install simfs[darshan]``).

Each of the POSIX, MPI-IO and STDIO modules with records gives one measurement: its
records accumulated by Darshan's own accumulator, whose ``agg_perf_by_slowest`` (total
bytes over the slowest rank's I/O time, MiB/s) is the job's aggregate bandwidth at that
layer, as ``darshan-parser --perf`` reports it (``source`` ends in the module's name; the
MPI-IO figure is the application's view, the POSIX one what reached the file system
under it, STDIO the job's buffered streams).  The phase is ``write`` or ``read`` when the
module only wrote or only read, else ``io``.  A module that moved no bytes, or recorded no
I/O time, gives no row; a log where none gives one is refused.

Processes and nodes.  Darshan records the job's process count, not its nodes.  The nodes
are the manifest's (``nodes =``) or else the number of host names in the log's DXT trace
records, where it has them; the processes per node are the process count over the
nodes, when it divides.  Without either the measurement's ``nodes`` and ``ppn`` are left
empty (the process count is in ``settings`` as ``processes``): a guess would be a wrong
number presented as a measured one.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Callable
from typing import Any

from simfs.ingest.common import MIB, fail
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

#: Module -> its counters' prefix.
_MODULES = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO"}

#: Where a log's header keeps its region map, by format version (darshan-log-format.h):
#: (offset of the name map, offset of the module maps, module count).  Each map is an
#: (offset, length) pair of uint64; the regions follow the header and the last one ends
#: where the file does (checked on all 82 logs of the public Darshan collection and the
#: test data: formats 3.00 to 3.41).
_REGION_MAPS = {b"3.00": (24, 40, 16), b"3.10": (24, 40, 16), b"3.20": (24, 40, 16), b"3.21": (24, 40, 16)}
_REGION_MAPS[b"3.41"] = (32, 48, 64)
_HEADER_READ = max(modules_at + 20 * count for _, modules_at, count in _REGION_MAPS.values())
_MAGIC = 6567223


def _header_problem(header: bytes, size: int) -> str | None:
    """What is wrong with a log of ``size`` bytes whose header starts ``header``, or None.  The C
    library reads a truncated log's regions past its end and may crash the process (a
    segmentation fault at 1,000 bytes of a 3,396-byte log) rather than report it, so the
    regions the header lists are checked against the file's size first.  Formats whose
    layout is not in :data:`_REGION_MAPS` are left to the library."""
    layout = _REGION_MAPS.get(header[:4])
    if layout is None:
        return None
    name_at, modules_at, count = layout
    header_bytes = modules_at + 20 * count  # the maps, then a uint32 version per module
    if size < header_bytes:
        return f"truncated Darshan log: {size} bytes, shorter than its header ({header_bytes} bytes)"
    orders = [order for order in "<>" if struct.unpack_from(order + "q", header, 8)[0] == _MAGIC]
    if not orders:
        return "not a readable Darshan log (its header's magic number is not Darshan's in either byte order)"
    order = orders[0]
    regions = [("name map", *struct.unpack_from(order + "QQ", header, name_at))]
    for index in range(count):
        offset, length = struct.unpack_from(order + "QQ", header, modules_at + 16 * index)
        if length:
            regions.append((f"module {index}'s region", offset, length))  # the module's number in the log
    for what, offset, length in regions:
        if offset + length > size:
            return f"truncated Darshan log: its {what} ends at byte {offset + length:,}, past the end of the {size:,}-byte file"
    return None


def open_report(path: str, refuse: Callable[[str], Exception]) -> Any:
    """The ``darshan.DarshanReport`` of ``path``, or ``refuse(why)`` raised: no darshan
    package, no such file, or not a Darshan log.  Every Darshan log opens with its format
    version (``3.41\\0...``): anything else is refused before the C library, which would
    print its own complaint on stderr, sees it."""
    try:
        import darshan
    except ImportError:
        raise refuse("reading Darshan logs needs the darshan package: pip install 'simfs[darshan]'") from None
    try:
        with open(path, "rb") as log:
            header = log.read(_HEADER_READ)
            size = os.fstat(log.fileno()).st_size
    except OSError as exc:
        raise refuse(f"cannot read it ({exc.strerror})") from None
    if not re.match(rb"\d\.\d\d\0", header):
        raise refuse("not a readable Darshan log (no Darshan version header)")
    problem = _header_problem(header, size)
    if problem:
        raise refuse(problem)
    try:
        return darshan.DarshanReport(path, read_all=False)
    except Exception as exc:  # the C library reports corrupt logs in many ways
        raise refuse(f"not a readable Darshan log ({exc})") from None


def parse_file(path: str, context: FileContext) -> list[Measurement]:
    report = open_report(path, lambda why: fail(path, None, why))
    from darshan.backend.cffi_backend import accumulate_records

    present = [module for module in _MODULES if module in report.modules]
    if not present:
        modules = ", ".join(sorted(report.modules)) or "none"
        raise fail(path, None, f"Darshan log has no POSIX, MPI-IO or STDIO records (modules: {modules})")
    nprocs = int(report.metadata["job"]["nprocs"])
    nodes = context.nodes or _dxt_hosts(report)
    ppn = context.ppn or (nprocs // nodes if nodes and nprocs % nodes == 0 else None)
    exe = report.metadata.get("exe", "").split()
    measurements = []
    for module in present:
        report.mod_read_all_records(module, dtype="pandas")
        accumulated = accumulate_records(report.records[module][0], module, nprocs)
        counters = accumulated.summary_record["counters"]
        prefix = _MODULES[module]
        written = int(counters[f"{prefix}_BYTES_WRITTEN"].iloc[0])
        read = int(counters[f"{prefix}_BYTES_READ"].iloc[0])
        rate = float(accumulated.derived_metrics.agg_perf_by_slowest)
        if not (written or read) or not (math.isfinite(rate) and rate > 0):
            continue  # NaN or 0 when no rank of this module recorded timed I/O
        measurements.append(
            Measurement(
                source=f"{path}:{module}",
                tool="darshan",
                tool_version=str(report.metadata["job"].get("metadata", {}).get("lib_ver", "")),
                phase="write" if read == 0 else "read" if written == 0 else "io",
                metric="agg_bw",
                value=rate * MIB,
                workload=context.workload or (exe[0] if exe else ""),
                nodes=nodes,
                ppn=ppn,
                settings={
                    "module": module,
                    "processes": nprocs,
                    "bytes_written": written,
                    "bytes_read": read,
                    **context.settings,
                },
                system=context.system,
                uncertainty=context.uncertainty,
            )
        )
    if not measurements:
        raise fail(path, None, f"Darshan log records no timed I/O in {', '.join(present)}")
    return measurements


def _dxt_hosts(report: Any) -> int | None:
    """The number of distinct host names in the DXT trace records, if the log has any."""
    hosts: set[str] = set()
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        if module in report.modules:
            report.mod_read_all_dxt_records(module)
            hosts |= {str(record["hostname"]) for record in report.records[module]}
    return len(hosts) or None
