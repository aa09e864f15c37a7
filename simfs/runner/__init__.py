"""The real-I/O runner: the simulator's workloads, run for real on a directory.

``measure(command, directory, processes=4)`` runs a dd, IOR, mdtest or bonnie++ command
line (the same parser the simulator uses) with local processes or MPI ranks, prints the
tool's own summary, and returns a :class:`Measured` whose ``record`` is the JSON run
record; :func:`write_outputs` writes it and the traces.  See ``docs/guides/live-runs.md``.
"""

from __future__ import annotations

from pathlib import Path

from simfs.errors import SimfsError
from simfs.report.files import write_frame, write_text
from simfs.runner.output import strict_json
from simfs.runner.records import PhaseResult, RankPhase
from simfs.runner.run import Measured, measure, phase_results, plan_workload


def write_outputs(
    measured: Measured,
    *,
    json_path: str | Path | None = None,
    trace_path: str | Path | None = None,
    ops: bool = False,
) -> None:
    """The JSON record, the per-rank trace (CSV or Parquet) and, with ``ops``, the
    per-operation samples (``<trace>.ops.csv`` or ``.ops.parquet``), each written whole
    or not at all.

    The record goes first, so that a trace that cannot be written (a full disk) costs the
    trace, not the record of the run, and so that it is on disk before the seconds the
    traces take (``mpirun`` kills the ranks one second after Ctrl-C); it is written again
    once the traces are, naming them, or saying why they are not there.  A file that
    cannot be written raises a one-line SimfsError after the others were tried.
    """
    record = measured.record
    errors: list[str] = []
    json_written = False

    def write_record() -> None:
        nonlocal json_written
        if json_path is None:
            return
        try:
            write_text(json_path, strict_json(record))
            json_written = True
        except SimfsError as exc:
            errors.append(str(exc))

    if trace_path is not None:
        record["trace"] = None  # not (yet) written
        if ops:
            record["trace_ops"] = None
    write_record()
    if trace_path is not None:
        try:
            _write_traces(measured, Path(trace_path), ops)
        except SimfsError as exc:
            record["trace_error"] = str(exc)
            errors.append(str(exc))
        if json_written:
            json_written = False
            write_record()
    if errors:
        raise SimfsError("; ".join(dict.fromkeys(errors)))


def _write_traces(measured: Measured, trace_path: Path, ops: bool) -> None:
    import pandas as pd

    write_frame(trace_path, pd.DataFrame([r.row() for r in measured.records]))
    measured.record["trace"] = str(trace_path)
    if ops:
        rows = [
            {
                "rank": r.rank,
                "iteration": r.iteration,
                "phase": r.phase,
                "offset_or_item": offset,
                "bytes": size,
                "start_s": start,
                "latency_s": seconds,
            }
            for r in measured.records
            for offset, size, start, seconds in r.samples
        ]
        # The samples take the trace's format: a Parquet user wants no CSV of millions of rows.
        ops_path = trace_path.with_name(f"{trace_path.stem}.ops{trace_path.suffix}")
        write_frame(ops_path, pd.DataFrame(rows))
        measured.record["trace_ops"] = str(ops_path)


__all__ = ["Measured", "PhaseResult", "RankPhase", "measure", "phase_results", "plan_workload", "write_outputs"]
