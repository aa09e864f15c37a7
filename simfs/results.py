"""Results: flat records that become tidy DataFrames (one row per run and phase, or per
rank and phase), with units in the column names.

Aggregate bandwidth is reported the way each tool reports it (``agg_bw_Bps``):

* ``makespan`` (IOR): all bytes of the phase over (last close - first open);
* ``sum_of_ranks`` (dd as run by the CRT-DC seed): every rank's own rate
  ``bytes / (its close - its open)``, summed over ranks.

Both raw forms are always present (``bw_Bps``, ``sum_rank_bw_Bps``), so that results
from different tools can be compared on one footing.

An open-loop phase (SPECsfs2008) adds ``response_time_s``, the mean response time of the
operations started in its measured interval; its ``ops_per_s`` is the achieved load
(those operations over the interval).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from simfs.experiment import Experiment
from simfs.workloads.spec import OPEN_LOOP_OP, WorkloadSpec

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class RankRecord:
    iteration: int
    phase: str
    op: str
    rank: int
    node: int
    bytes: int
    open_s: float
    close_s: float
    ops: int = 0
    #: Summed response times of the ``ops`` (an open-loop phase's operations), seconds.
    response_s: float = 0.0


@dataclass(frozen=True)
class PhaseAttribution:
    """Flow-seconds a phase's flows spent limited by each kind of resource (or rate cap)."""

    iteration: int
    phase: str
    seconds_by_limiter: dict[str, float]
    #: Per limiter kind, the part of its seconds spent while a mechanism's load model had
    #: lowered its capacity, by mechanism (``{"ost": {"hdd_seek": 12.0}}``).
    lowered_seconds: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def bottleneck(self) -> tuple[str, float]:
        """The limiter its flows spent most time held by, and that share (0..1)."""
        total = sum(self.seconds_by_limiter.values())
        if total <= 0:
            return "", 0.0
        kind = max(self.seconds_by_limiter, key=self.seconds_by_limiter.__getitem__)
        return kind, self.seconds_by_limiter[kind] / total

    @property
    def bottleneck_mechanism(self) -> str:
        """The mechanism that cost the bottleneck capacity for most of the time it held
        the phase, by lowering its capacity (``hdd_seek``) or raising what a byte costs it
        (``tcp_incast``, ``raid_parity``; ``hdd_seek+raid_parity`` for both), or ``""``
        where it bound at its nominal cost (or is a rate cap or a request-level part,
        whose names already say it)."""
        kind, _ = self.bottleneck
        by_mechanism = self.lowered_seconds.get(kind, {})
        if not by_mechanism:
            return ""
        mechanism = max(by_mechanism, key=by_mechanism.__getitem__)
        return mechanism if by_mechanism[mechanism] > 0.5 * self.seconds_by_limiter[kind] else ""


@dataclass
class Result:
    """The outcome of one simulated run."""

    system: str
    workload: WorkloadSpec
    experiment: Experiment
    stripe_count: int
    stripe_size_bytes: int
    rank_records: list[RankRecord]
    attribution: list[PhaseAttribution]
    timeline: pd.DataFrame | None = None
    #: Per resource, as columns: name, kind, unit, capacity_per_s, served (work units
    #: over the run); :attr:`resource_usage` is their table.
    resource_columns: dict[str, Any] | None = None
    solves: int = 0
    #: The concurrent background job (``Experiment.background``), phases labelled ``background ...``.
    background_workload: WorkloadSpec | None = None
    #: Phases ``(iteration, label)`` whose data moved at request level (the others: fluid).
    phase_modes: dict[tuple[int, str], str] = field(default_factory=dict)
    #: With ``record_timeline``: per request-level queue (``"mds.dir-lock"``), the
    #: ``(time, requests in it)`` seen by every arrival.
    request_queues: dict[str, list[tuple[float, int]]] | None = None
    #: Request-level work of the run: SimPy events scheduled (``events``), metadata
    #: requests, lock enqueues and callbacks, data RPCs, partial-page and parity reads.
    request_counts: dict[str, int] = field(default_factory=dict)
    #: One line per phase simulated on a sample of its requests (a time-bounded phase's
    #: steady rate, :mod:`simfs.workloads.steady_state`).
    notes: tuple[str, ...] = ()
    #: Synchronised runs on a machine whose cores every daemon shares (a testbed): per
    #: ``(iteration, label)``, the share of those cores busy from the phase's barrier to
    #: the next (what a testbed record's ``cpu_by_phase`` measures).
    host_cpu_busy: dict[tuple[int, str], float] = field(default_factory=dict)

    def run_columns(self) -> dict[str, Any]:
        """Columns that identify the run in every table."""
        return {
            "system": self.system,
            "tool": self.workload.tool,
            "nodes": self.experiment.nodes,
            "ppn": self.experiment.ppn,
            "ranks": self.experiment.ranks,
            "stripe_count": self.stripe_count,
            "stripe_size_bytes": self.stripe_size_bytes,
            "seed": self.experiment.seed,
        }

    @property
    def resource_usage(self) -> pd.DataFrame | None:
        """Per resource: ``resource``, ``kind``, ``unit``, ``capacity_per_s``, ``served``
        (work units over the run)."""
        if self.resource_columns is None:
            return None
        import pandas as pd

        return pd.DataFrame(self.resource_columns)

    @property
    def ranks(self) -> pd.DataFrame:
        """One row per (iteration, phase, rank)."""
        import pandas as pd

        frame = pd.DataFrame([r.__dict__ for r in self.rank_records])
        frame["time_s"] = frame["close_s"] - frame["open_s"]
        frame["bw_Bps"] = frame["bytes"] / frame["time_s"]
        for name, value in reversed(list(self.run_columns().items())):
            frame.insert(0, name, value)
        return frame.sort_values(["iteration", "phase", "rank"], kind="stable").reset_index(drop=True)

    def phase_metrics(self) -> list[dict[str, Any]]:
        """Per (iteration, phase): bytes, times and bandwidths, computed without pandas
        (calibration evaluates thousands of runs; this is its hot path)."""
        groups: dict[tuple[int, str], list[RankRecord]] = {}
        for record in self.rank_records:
            groups.setdefault((record.iteration, record.phase), []).append(record)
        jobs = [self.workload] + ([self.background_workload] if self.background_workload else [])
        order = {spec.label: i for job in jobs for i, spec in enumerate(job.phases)}
        background = {spec.label for spec in self.background_workload.phases} if self.background_workload else set()
        bottlenecks = {(a.iteration, a.phase): a.bottleneck for a in self.attribution}
        mechanisms = {(a.iteration, a.phase): a.bottleneck_mechanism for a in self.attribution}
        rows = []
        for (iteration, phase), records in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1] in background, order.get(kv[0][1], 0))
        ):
            sizes = np.array([r.bytes for r in records], dtype=float)
            opens = np.array([r.open_s for r in records])
            closes = np.array([r.close_s for r in records])
            rank_bw = sizes / (closes - opens)
            total = int(sizes.sum())
            ops = sum(r.ops for r in records)
            elapsed = float(closes.max() - opens.min())
            bw = total / elapsed
            sum_rank = float(rank_bw.sum())
            job, nodes = (
                (self.background_workload, self.experiment.background_nodes)
                if phase in background
                else (self.workload, self.experiment.nodes)
            )
            aggregate = sum_rank if job.aggregate == "sum_of_ranks" else bw
            limiter, share = bottlenecks.get((iteration, phase), ("", 0.0))
            rows.append(
                {
                    "iteration": iteration,
                    "phase": phase,
                    "op": records[0].op,
                    "bytes": total,
                    "ops": ops,
                    "time_s": elapsed,
                    "ops_per_s": ops / elapsed,
                    "bw_Bps": bw,
                    "sum_rank_bw_Bps": sum_rank,
                    "agg_bw_Bps": aggregate,
                    "per_node_bw_Bps": aggregate / nodes,
                    "rank_mean_bw_Bps": float(rank_bw.mean()),
                    "min_rank_bw_Bps": float(rank_bw.min()),
                    "min_rank_agg_bw_Bps": float(rank_bw.min()) * len(records),
                    "max_rank_bw_Bps": float(rank_bw.max()),
                    "bottleneck": limiter,
                    "bottleneck_mechanism": mechanisms.get((iteration, phase), ""),
                    "bottleneck_share": share,
                    # Metadata phases are requests; data phases fluid unless they contended.
                    "mode": "request" if records[0].ops or (iteration, phase) in self.phase_modes else "fluid",
                }
            )
            if records[0].op == OPEN_LOOP_OP:
                # SPECsfs2008's response time: the mean over the measured operations.
                rows[-1]["response_time_s"] = sum(r.response_s for r in records) / ops if ops else float("nan")
            if self.host_cpu_busy:
                rows[-1]["host_cpu_busy"] = self.host_cpu_busy.get((iteration, phase), float("nan"))
        return rows

    @property
    def phases(self) -> pd.DataFrame:
        """One row per (iteration, phase) with aggregate and per-node bandwidth."""
        import pandas as pd

        return pd.DataFrame(self.phase_rows())

    def phase_rows(self) -> list[dict[str, Any]]:
        """The rows of :attr:`phases` as dicts (no pandas: what a one-point table needs)."""
        run = self.run_columns()
        return [{**run, **row} for row in self.phase_metrics()]
