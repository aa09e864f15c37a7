"""The CPU time a GlusterFS request costs on the testbed's machine, fitted from run records.

On the testbed every brick (``glusterfsd``) and FUSE client (``glusterfs``) is a process of
one machine, and GlusterFS's CPU time goes by request more than by byte: a client's
128 KiB FUSE request becomes one request to each brick it involves (``K+M`` for a write of
a disperse ``K+M`` volume, ``K`` for a read), and a brick's time per request hardly
depends on the fragment it carries.  The one-client calibration runs show it: per byte
of fragment a brick spent 11-12 ns on a 2+1 volume (64 KiB fragments) and 16-18 ns on
3+2 and 4+1 ones (43 and 32 KiB), per request 0.5-0.8 ms in all
(``calibration/testbed/gluster-runs/``).  So a per-byte cost fitted on one volume shape
does not carry to another; per-request costs do.

Each run record carries the CPU time of each process (``testbed.cpu_by_process_s``) and
of the whole machine (``testbed.cpu_busy_s``), for the whole run and, in records made
since 17:30 UTC on 2026-11-27, for each phase (``testbed.cpu_by_phase``), so three fits, each a
non-negative least squares over the phases (or the runs), share the machine's time out::

    clients = write requests x write_request + read requests x read_request
              + brick requests x fragment_request
    bricks  = brick write requests x brick_write + brick read requests x brick_read
    rest    = fixed + wire bytes x wire            (kernel TCP and shaping, the ranks, glusterd)

with requests counted as bytes / 128 KiB (``FUSE_REQUEST_BYTES``), brick requests as
requests x bricks involved, and wire bytes as what crosses the client links (``(K+M)/K``
per byte written, one per byte read).  A request costs more on a busy machine: over
one workload at 1-8 clients, CPU time per request is ``base x (1 + growth x
utilisation)`` (:class:`~simfs.testbed.host_cpu.BusyGrowthFit`), and each phase's times are divided by that
factor first, so the costs are an idle machine's.  :class:`GlusterCpuFit` is that fit
(``python -m simfs.testbed.gluster_cpu calibration/testbed/gluster-runs/ --load
calibration/testbed/gluster-load-runs/``); its
:meth:`~GlusterCpuFit.table` is the profile's ``[host]`` table of ``testbed-glusterfs``, and
:func:`~simfs.filesystems.glusterfs.host_cpu_s_per_byte` turns it into what a byte costs on a volume of a given shape
(``filesystems/glusterfs.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import NamedTuple

from simfs.errors import SimfsError
from simfs.filesystems.glusterfs import FUSE_REQUEST_BYTES, HOST_COSTS, host_cpu_s_per_byte
from simfs.testbed.host_cpu import add_load_option, fit_and_print, fit_load_and_print, measured_testbed, phase_cpu


def client_and_brick_cpu_s(processes: dict[str, float]) -> tuple[float, float]:
    """CPU seconds of the FUSE clients and of the bricks among a run's processes, named as
    simfs testbed records them (``c1``.. the clients, ``gs1.brick``.. the bricks; ``gs1``
    is a glusterd, ``gs1.shd`` a self-heal daemon)."""
    clients = sum(seconds for name, seconds in processes.items() if name.startswith("c") and "." not in name)
    bricks = sum(seconds for name, seconds in processes.items() if name.endswith(".brick"))
    return clients, bricks


class FitRow(NamedTuple):
    """One row of the fits: a phase (or a whole run, from records without each phase's
    CPU time)."""

    label: str
    #: Per group (clients, bricks, rest): the coefficients of its costs and its CPU seconds.
    groups: dict[str, tuple[list[float], float]]
    busy_s: float
    utilisation: float
    #: FUSE requests the row's phases made, and their operation (None: a whole run).
    requests: float
    op: str | None


def run_rows(record: dict, origin: str = "record") -> list[FitRow]:
    """A run's rows of the fits: one per phase where the record has each phase's CPU
    time (``testbed.cpu_by_phase``, matched to its phase by iteration and label), else
    one for the whole run."""
    from simfs.ingest.simfs_run import gluster_volume

    testbed = measured_testbed(record, origin)
    if testbed.get("file_system") != "glusterfs":
        raise SimfsError(f"{origin}: testbed.file_system {testbed.get('file_system')!r}: not a GlusterFS run")
    volume = gluster_volume(testbed.get("volume"), origin)
    data, redundancy = volume["glusterfs.disperse_data"], volume["glusterfs.redundancy"]
    if not isinstance(testbed.get("cpu_by_process_s"), dict):
        raise SimfsError(f"{origin}: testbed.cpu_by_process_s not recorded: the processes' CPU time is not known")
    phases = phase_cpu(record, origin)
    if not phases:
        requests = sum(phase["bytes"] for phase in record["phases"]) / FUSE_REQUEST_BYTES
        return [
            FitRow(
                origin,
                _rows(record["phases"], data, redundancy, testbed),
                float(testbed["cpu_busy_s"]),
                float(testbed.get("cpu_utilisation", 0.0)),
                requests,
                None,
            )
        ]
    return [
        FitRow(
            phase.label,
            _rows([{"op": phase.op, "bytes": phase.bytes}], data, redundancy, phase.cost),
            phase.busy_s,
            phase.utilisation,
            phase.bytes / FUSE_REQUEST_BYTES,
            phase.op,
        )
        for phase in phases
    ]


def _rows(phases: list[dict], data: int, redundancy: int, cost: dict) -> dict[str, tuple[list[float], float]]:
    """The three fits' rows for ``phases`` and the CPU time ``cost`` gives them."""
    written = sum(phase["bytes"] for phase in phases if phase["op"] == "write")
    read = sum(phase["bytes"] for phase in phases if phase["op"] == "read")
    writes, reads = written / FUSE_REQUEST_BYTES, read / FUSE_REQUEST_BYTES
    brick_writes, brick_reads = writes * (data + redundancy), reads * data
    clients, bricks = client_and_brick_cpu_s(cost["cpu_by_process_s"])
    rest = float(cost["cpu_busy_s"]) - clients - bricks
    wire = written * (data + redundancy) / data + read
    return {
        "clients": ([writes, reads, brick_writes + brick_reads], clients),
        "bricks": ([brick_writes, brick_reads], bricks),
        "rest": ([1.0, wire], rest),
    }


class GlusterCpuFit:
    """Per-request CPU costs from GlusterFS testbed run records (scikit-learn style:
    ``fit`` returns self and sets the trailing-underscore attributes).

    ``busy_cpu_growth`` (:class:`~simfs.testbed.host_cpu.BusyGrowthFit`): each run's or phase's CPU times are
    divided by ``1 + busy_cpu_growth x utilisation`` first, so the costs are an idle
    machine's."""

    def __init__(self, busy_cpu_growth: float = 0.0) -> None:
        self.busy_cpu_growth = busy_cpu_growth

    def fit(self, records: Iterable[tuple[str, dict]]) -> GlusterCpuFit:
        import numpy as np
        from scipy.optimize import nnls

        rows: dict[str, list[list[float]]] = {"clients": [], "bricks": [], "rest": []}
        seconds: dict[str, list[float]] = {"clients": [], "bricks": [], "rest": []}
        names, busy = [], []
        phased = True
        for origin, record in records:
            for row in run_rows(record, origin):
                phased = phased and row.op is not None
                idle = 1 + self.busy_cpu_growth * row.utilisation
                for group, (terms, used) in row.groups.items():
                    rows[group].append(terms)
                    seconds[group].append(used / idle)
                names.append(row.label)
                busy.append(row.busy_s / idle)
        solutions, predicted = {}, np.zeros(len(names))
        for group in rows:
            matrix, used = np.array(rows[group]), np.array(seconds[group])
            if len(names) < len(HOST_COSTS) or np.linalg.matrix_rank(matrix) < matrix.shape[1]:
                raise SimfsError(
                    f"GlusterFS CPU fit: {len(names)} run(s) do not identify the {group}' costs: give write-only and "
                    "write-read runs of two sizes on volumes of two shapes or more (bricks per write and per read)"
                )
            solutions[group], _ = nnls(matrix, used)
            predicted += matrix @ solutions[group]
        (self.write_request_cpu_s_, self.read_request_cpu_s_, self.fragment_request_cpu_s_) = map(
            float, solutions["clients"]
        )
        self.brick_write_cpu_s_, self.brick_read_cpu_s_ = map(float, solutions["bricks"])
        self.fixed_cpu_s_, self.wire_cpu_s_per_byte_ = map(float, solutions["rest"])
        self.runs_ = names
        self.fixed_per_ = "phase" if phased else "run"
        # With a growth the busy times are an idle machine's, as the costs are.
        self.busy_label_ = "core-s on an idle machine" if self.busy_cpu_growth else "core-s busy"
        self.busy_s_ = busy
        self.residuals_ = [float(value) for value in predicted - np.array(busy)]
        return self

    @property
    def costs(self) -> dict[str, float]:
        return {name: getattr(self, f"{name}_") for name in HOST_COSTS}

    def table(self) -> str:
        """The profile's ``[host]`` lines (without ``cores``)."""
        return "\n".join(f"{name} = {value:.4g}" for name, value in self.costs.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", nargs="+", help="GlusterFS testbed run records (files or folders)")
    add_load_option(parser)
    args = parser.parse_args(argv)
    growth = fit_load_and_print(args.load, request_bytes=FUSE_REQUEST_BYTES)
    if growth is None:
        return 2
    fit = fit_and_print(GlusterCpuFit(busy_cpu_growth=growth), args.records)
    if fit is None:
        return 2
    for data, redundancy in ((2, 1), (4, 2), (6, 2)):
        write = host_cpu_s_per_byte(fit.costs, "write", data, redundancy)
        read = host_cpu_s_per_byte(fit.costs, "read", data, redundancy)
        print(
            f"# disperse {data}+{redundancy}: {write * 1e9:.3g} ns per byte written, {read * 1e9:.3g} read "
            f"(idle; {(1 + growth) * write * 1e9:.3g} and {(1 + growth) * read * 1e9:.3g} with every core busy)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
