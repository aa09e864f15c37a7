"""Darshan logs, through the PyPI ``darshan`` package (optional: ``pip install simfs[darshan]``).

The POSIX module's records are accumulated by Darshan's own accumulator; its
``agg_perf_by_slowest`` (total bytes over the slowest rank's I/O time, MiB/s) is the
job's aggregate bandwidth, as ``darshan-parser --perf`` reports it.  The phase is
``write`` or ``read`` when the job only wrote or only read, else ``io``.
"""

from __future__ import annotations

import math

from simfs.ingest.common import MIB, fail
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement


def parse_file(path: str, context: FileContext) -> list[Measurement]:
    try:
        import darshan
        from darshan.backend.cffi_backend import accumulate_records
    except ImportError:
        raise fail(path, None, "reading Darshan logs needs the darshan package: pip install 'simfs[darshan]'") from None
    try:
        report = darshan.DarshanReport(path, read_all=False)
    except Exception as exc:  # the C library reports corrupt logs in many ways
        raise fail(path, None, f"not a readable Darshan log ({exc})") from None
    if "POSIX" not in report.modules:
        raise fail(path, None, "Darshan log has no POSIX module records")
    report.mod_read_all_records("POSIX", dtype="pandas")
    records = report.records["POSIX"][0]
    nprocs = int(report.metadata["job"]["nprocs"])
    accumulated = accumulate_records(records, "POSIX", nprocs)
    derived = accumulated.derived_metrics
    counters = accumulated.summary_record["counters"]
    written = int(counters["POSIX_BYTES_WRITTEN"].iloc[0])
    read = int(counters["POSIX_BYTES_READ"].iloc[0])
    phase = "write" if read == 0 else "read" if written == 0 else "io"
    rate = float(derived.agg_perf_by_slowest)
    if not (math.isfinite(rate) and rate > 0):  # NaN when no rank recorded I/O time
        raise fail(path, None, f"Darshan log records no timed POSIX I/O (agg_perf_by_slowest {rate})")
    exe = report.metadata.get("exe", "").split()
    return [
        Measurement(
            source=f"{path}:POSIX",
            tool="darshan",
            phase=phase,
            metric="agg_bw",
            value=rate * MIB,
            workload=context.workload or (exe[0] if exe else ""),
            nodes=context.nodes,
            ppn=context.ppn or nprocs,
            settings={"bytes_written": written, "bytes_read": read, **context.settings},
            system=context.system,
            uncertainty=context.uncertainty,
        )
    ]
