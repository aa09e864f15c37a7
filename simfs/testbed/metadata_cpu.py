"""The CPU time a metadata request costs on the testbed's machine, fitted from mdtest runs
of one process (and, for GlusterFS, what passing a directory's lock between clients
costs, from runs of two processes).

On the testbed every metadata request (mdtest's create, stat, remove through the FUSE
mount) is work for several processes of one machine: the kernel's FUSE and network
code, the client daemon (``mfsmount``) and the master (``mfsmaster``), partly one after
the other and partly side by side.  Two things are measured per run of one process:

* the wall time per mdtest item of each phase, ``w``: the slope of the phase's time over
  its items across runs of different sizes (what a phase costs once is left out);
* the machine's busy core-seconds over the run (``testbed.cpu_busy_s``).

The model (``core/metadata.py``) gives a lone request ``round_trip + cpu / p``: the
network round trip, then its CPU work ``cpu`` done by up to ``p`` cores at once (the
master's ``request_parallelism``), and lets all requests together use at most the
machine's cores (processor sharing): the rate is ``1 / w`` for one process and ``cores /
cpu`` when the cores are saturated.  With ``k`` requests per item (simfs issues a create
and a close per created file, one request per stat or remove) and one ``p`` for every
request::

    w_phase = k_phase x round_trip + cpu_phase / p
    busy    = fixed + sum over phases of items_phase x cpu_phase
            = fixed + p x sum over phases of items_phase x (w_phase - k_phase x round_trip)

so runs of different sizes give ``fixed`` and ``p`` by least squares, and then each
phase's ``cpu_phase = p x (w_phase - k_phase x round_trip)``.  Where that gives ``p`` under
1 (the machine busy for less than the wall time beyond the round trips: on the Intel Xeon
this project's VM became, one process keeps one core busy and its requests also wait off
the cores, for wake-ups), the work is taken to be on one core and the wait is fitted
instead of measured: ``busy = fixed + sum over phases of items_phase x (w_phase - k_phase x
latency)``, ``cpu_phase = w_phase - k_phase x latency``, and ``latency`` (at least the
round trip) is the profile's ``metadata_latency_s``.  A create item's cost is
split between its create and its close by taking a close to cost what a stat costs (both
are one light request to the master; nothing measured here separates them, and only
their sum matters to a created file's rate).  The round trip is measured, not fitted:
the kernel's smallest TCP round trip on the client's connection to the master (``ss
-tin`` in a client's namespace, ``minrtt``).

A dispersed GlusterFS volume locks a file's parent directory on every brick around each
create and unlink (``ec_lock_prepare_parent_inode``), and a client keeps that lock after
its operation until another client asks for it (``ec``'s eager lock), so one process
alone locks once per run.  Processes on several clients in one directory take the lock
from each other at every create and unlink: the holder writes the directory's version
back and unlocks on every brick, the next one locks and reads it.  Runs of several
processes, one per client, give that work's CPU time from their busy time beyond what
their items cost one process (``MetadataCpuFit._fit_handover``); the model charges it to
each update that receives the lock from another client (``lock_handover_cpu_s``).

What a request costs on a dispersed volume of another shape: the runs also give the share
of the machine's busy time that the FUSE clients and the bricks spent (each process's CPU
time is in the records), work done once per brick the request goes to; the profile keeps
it beside the shape it was measured on (``per_brick_cpu_fraction``, ``measured_bricks``),
and the GlusterFS model scales every request's CPU time (and the hand-over's) to its own
volume's bricks by it (``filesystems/glusterfs.py``).

Output: the profile's ``[master]`` lines (``[dht]`` for GlusterFS runs: ``cores``,
``request_parallelism`` and each operation's rate ``cores / cpu``: what the machine
sustains of it when nothing else runs) and ``moosefs.metadata_latency_s``
(``glusterfs.metadata_latency_s``)
(``python -m simfs.testbed.metadata_cpu calibration/testbed/metadata-runs/
--round-trip-s 1.2e-5``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from simfs.errors import SimfsError
from simfs.testbed.host_cpu import measured_testbed, print_runs, read_records

if TYPE_CHECKING:
    import numpy as np

#: mdtest phases fitted and the requests simfs issues per item of each.
REQUESTS_PER_ITEM = {"create": 2, "stat": 1, "remove": 1}


#: One mdtest run as the fit reads it: (record's name, processes, {phase: (items,
#: makespan_s)}, busy core-seconds, the machine's cores).
Run = tuple[str, int, dict[str, tuple[int, float]], float, int]


def _phase_rows(record: dict, origin: str) -> Run:
    """What the fit reads of an mdtest run (:data:`Run`)."""
    testbed = measured_testbed(record, origin)
    if record.get("tool") != "mdtest":
        raise SimfsError(f"{origin}: tool {record.get('tool')!r}: the metadata fit reads mdtest runs")
    ranks = record.get("ranks")
    if not isinstance(ranks, int) or ranks < 1:
        raise SimfsError(f"{origin}: ranks {ranks!r}: expected a positive number of processes")
    if ranks > 1:
        if testbed.get("file_system", "moosefs") != "glusterfs":
            raise SimfsError(
                f"{origin}: {ranks} processes: runs of several processes are read for GlusterFS's directory "
                "lock only; the metadata fit reads runs of one process"
            )
        named = testbed.get("rank_clients")
        clients = named if isinstance(named, list) else []
        if len(clients) != ranks or len(set(clients)) != ranks:
            raise SimfsError(
                f"{origin}: testbed.rank_clients {named!r}: a run of {ranks} processes is read for the lock's "
                "hand-over only with one process per client"
            )
    phases = {}
    for phase in record["phases"]:
        if phase["op"] in REQUESTS_PER_ITEM and phase["ops"] > 0 and phase["makespan_s"] > 0:
            phases[phase["op"]] = (int(phase["ops"]), float(phase["makespan_s"]))
    missing = sorted(set(REQUESTS_PER_ITEM) - set(phases))
    if missing:
        raise SimfsError(f"{origin}: no {', '.join(missing)} phase: run mdtest with -C -T -r")
    return origin, ranks, phases, float(testbed["cpu_busy_s"]), int(testbed.get("cpus", 0))


class MetadataCpuFit:
    """CPU time per metadata request and the requests' parallelism, from one-process
    mdtest runs on the testbed, and (given GlusterFS runs of several processes, one per
    client) the CPU time of one pass of a directory's lock between clients
    (scikit-learn style: ``__init__`` stores the settings, ``fit`` returns self and sets
    the trailing-underscore attributes: ``lock_handover_cpu_s_`` is None without such
    runs).

    Parameters
    ----------
    round_trip_s:
        The network round trip of one request (s), measured (module docstring).
    """

    def __init__(self, round_trip_s: float) -> None:
        if not round_trip_s >= 0:
            raise SimfsError(f"round_trip_s: expected a non-negative round trip in seconds, got {round_trip_s!r}")
        self.round_trip_s = round_trip_s

    def fit(self, records: Iterable[tuple[str, dict]]) -> MetadataCpuFit:
        import numpy as np

        records = list(records)
        every = [_phase_rows(record, origin) for origin, record in records]
        runs = [(origin, *rows) for origin, ranks, *rows in every if ranks == 1]
        shared = [run for run in every if run[1] > 1]
        file_systems = {record["testbed"].get("file_system", "moosefs") for _, record in records}
        if len(file_systems) > 1:
            raise SimfsError(
                f"metadata CPU fit: the runs are of several file systems ({', '.join(sorted(file_systems))})"
            )
        sizes = {phase: {phases[phase][0] for _, phases, _, _ in runs} for phase in REQUESTS_PER_ITEM}
        if len(runs) < 2 or min(len(counts) for counts in sizes.values()) < 2:
            raise SimfsError(
                f"metadata CPU fit: {len(runs)} run(s) do not identify a fixed cost and a CPU time per request: "
                "give one-process mdtest -C -T -r runs of at least two sizes"
            )
        cores = {cpus for _, _, _, cpus in runs} | {cpus for *_, cpus in shared}
        if len(cores) != 1 or not next(iter(cores)) >= 1:
            raise SimfsError(f"metadata CPU fit: the runs' machines differ in cores ({sorted(cores)})")
        self.cores_ = next(iter(cores))
        self.file_system_ = next(iter(file_systems), "moosefs")
        # Wall time per item: the slope of a phase's time over its items across the runs,
        # so that what a phase costs once (the create phase makes mdtest's tree first:
        # 73 ms on the committed runs) is not spread over its items, as the busy time's
        # fixed cost is not.
        self.wall_s_per_item_ = {}
        for phase in REQUESTS_PER_ITEM:
            items = np.array([phases[phase][0] for _, phases, _, _ in runs], dtype=float)
            seconds = np.array([phases[phase][1] for _, phases, _, _ in runs])
            (_, slope), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(items), items]), seconds, rcond=None)
            self.wall_s_per_item_[phase] = float(slope)
        on_cores = self._on_cores(self.round_trip_s, f"round_trip_s {self.round_trip_s:g} s")
        matrix = np.array(
            [[1.0, sum(phases[phase][0] * on_cores[phase] for phase in REQUESTS_PER_ITEM)] for _, phases, _, _ in runs]
        )
        busy = np.array([seconds for _, _, seconds, _ in runs])
        (fixed, parallelism), *_ = np.linalg.lstsq(matrix, busy, rcond=None)
        self.latency_s_ = self.round_trip_s
        self.latency_fitted_ = False
        if parallelism < 1:
            # The machine was busy for less than the lone request's wall time beyond its
            # round trips: the work is one core's, one step after another, and a request
            # also waits off the cores (wake-ups; the Intel Xeon's runs,
            # calibration/testbed/xeon/README.md).  That wait is fitted with the work on
            # one core: busy = fixed + sum of items x (w - requests x latency).
            matrix, fixed, parallelism = self._fit_latency(runs, busy)
            on_cores = self._on_cores(
                self.latency_s_, f"the fitted wait off the cores, {self.latency_s_ * 1e6:.3g} us a request,"
            )
        if not 1 <= parallelism <= self.cores_:
            raise SimfsError(
                f"metadata CPU fit: a request's work would use {parallelism:.3g} cores at once, outside 1 to "
                f"{self.cores_}: the runs disagree (or the round trip is wrong)"
            )
        self.fixed_cpu_s_ = float(fixed)
        self.request_parallelism_ = float(parallelism)
        self.cpu_s_per_item_ = {phase: float(parallelism * on_cores[phase]) for phase in REQUESTS_PER_ITEM}
        close = self.cpu_s_per_item_["stat"]
        self.cpu_s_per_request_ = {
            "create": self.cpu_s_per_item_["create"] - close,
            "close": close,
            "stat": self.cpu_s_per_item_["stat"],
            "remove": self.cpu_s_per_item_["remove"],
        }
        if self.cpu_s_per_request_["create"] <= 0:
            raise SimfsError(
                "metadata CPU fit: a create item costs less CPU than a stat: the close cannot be split off"
            )
        self.runs_ = [origin for origin, *_ in runs]
        self.busy_s_ = [float(value) for value in busy]
        self.residuals_ = [float(value) for value in matrix @ np.array([fixed, parallelism]) - busy]
        #: Per process count of the hand-over runs: a run's fixed core-seconds (what no
        #: item explains).
        self.handover_fixed_cpu_s_: dict[int, float] = {}
        self.lock_handover_cpu_s_ = self._fit_handover(shared) if shared else None
        #: GlusterFS: the bricks per request of the runs' volume, and the clients' and
        #: bricks' share of the busy time (None without each process's CPU time).
        self.measured_bricks_: int | None = None
        self.per_brick_cpu_fraction_: float | None = None
        if self.file_system_ == "glusterfs":
            self.measured_bricks_, self.per_brick_cpu_fraction_ = _per_brick_share(records)
        return self

    def _on_cores(self, wait_s: float, what: str) -> dict[str, float]:
        """Each phase's wall time per item beyond its requests' waits of ``wait_s``: the
        time its work is on the cores; an error naming ``what`` where none is left."""
        on_cores = {
            phase: self.wall_s_per_item_[phase] - requests * wait_s for phase, requests in REQUESTS_PER_ITEM.items()
        }
        if min(on_cores.values()) <= 0:
            raise SimfsError(
                f"metadata CPU fit: {what} leaves no time for the work of a request "
                f"(wall time per item {self.wall_s_per_item_})"
            )
        return on_cores

    def _fit_latency(self, runs: list[tuple], busy: np.ndarray) -> tuple[np.ndarray, float, float]:
        """With the work on one core (parallelism 1), the lone request's wait off the
        cores (``latency_s_``, at least the measured round trip) and the fixed cost, by
        least squares on the runs' busy time; returns the fit's matrix (residuals in
        terms of ``[fixed, 1]``), the fixed cost and the parallelism, 1."""
        import numpy as np

        per_run_wall = np.array(
            [
                sum(phases[phase][0] * self.wall_s_per_item_[phase] for phase in REQUESTS_PER_ITEM)
                for _, phases, _, _ in runs
            ]
        )
        per_run_requests = np.array(
            [sum(phases[phase][0] * k for phase, k in REQUESTS_PER_ITEM.items()) for _, phases, _, _ in runs],
            dtype=float,
        )
        (fixed, latency), *_ = np.linalg.lstsq(
            np.column_stack([np.ones_like(per_run_wall), -per_run_requests]), busy - per_run_wall, rcond=None
        )
        if not latency >= self.round_trip_s:
            raise SimfsError(
                f"metadata CPU fit: the runs' busy time puts a request's work on under one core ({latency * 1e6:.3g} "
                f"us of waiting per request, less than the round trip {self.round_trip_s * 1e6:.3g} us): the runs disagree"
            )
        self.latency_s_ = float(latency)
        self.latency_fitted_ = True
        on_cores_total = per_run_wall - per_run_requests * latency
        return np.column_stack([np.ones_like(on_cores_total), on_cores_total]), float(fixed), 1.0

    def _fit_handover(self, shared: list[Run]) -> float:
        """The CPU time of one pass of a directory's lock between clients, from runs of
        several processes, one per client, in the shared directory.

        Each create and each remove of such a run receives the lock from another client
        (the lock's waiters are served in turn), so its busy time beyond what its items
        cost one process alone is ``fixed_P + (creates + removes) x handover``, with a fixed
        cost per process count ``P`` (mdtest's start on each client): a least-squares line
        over the runs' sizes.
        """
        import numpy as np

        counts = sorted({ranks for _, ranks, *_ in shared})
        rows, beyond = [], []
        for _, ranks, phases, busy, _ in shared:
            alone = sum(phases[phase][0] * self.cpu_s_per_item_[phase] for phase in REQUESTS_PER_ITEM)
            passes = phases["create"][0] + phases["remove"][0]
            rows.append([*(float(ranks == count) for count in counts), passes])
            beyond.append(busy - alone)
        for count in counts:
            sizes = {phases["create"][0] for _, ranks, phases, *_ in shared if ranks == count}
            if len(sizes) < 2:
                raise SimfsError(
                    f"metadata CPU fit: the runs of {count} processes are of one size: give at least two sizes "
                    "to separate a run's fixed cost from the lock's hand-over"
                )
        matrix, beyond = np.array(rows), np.array(beyond)
        solution, *_ = np.linalg.lstsq(matrix, beyond, rcond=None)
        handover = float(solution[-1])
        if handover < 0:
            raise SimfsError(
                f"metadata CPU fit: runs of several processes cost {-handover * 1e3:.3g} ms less per create and "
                "remove than one process alone: no hand-over to fit (are they in one shared directory?)"
            )
        self.handover_fixed_cpu_s_ = {count: float(value) for count, value in zip(counts, solution)}
        self.runs_ += [origin for origin, *_ in shared]
        self.busy_s_ += [float(busy) for _, _, _, busy, _ in shared]
        self.residuals_ += [float(value) for value in matrix @ solution - beyond]
        return handover

    def rate_per_s(self, op: str) -> float:
        """What the machine sustains of ``op`` when its cores do nothing else."""
        return self.cores_ / self.cpu_s_per_request_[op]

    def table(self) -> str:
        """The profile's metadata lines (``[master]`` for MooseFS, ``[dht]`` for
        GlusterFS) and its ``metadata_latency_s``."""
        lines = [
            f"cores = {self.cores_}",
            f"request_parallelism = {self.request_parallelism_:.3f}",
            *(f"{op}_per_s = {self.rate_per_s(op):.1f}" for op in ("create", "close", "stat", "remove")),
            f"# [{self.file_system_}] metadata_latency_s = {self.latency_s_:.3g}"
            + (" (fitted: the work on one core, waits off it)" if self.latency_fitted_ else ""),
        ]
        if self.lock_handover_cpu_s_ is not None:
            lines.insert(-1, f"lock_handover_cpu_s = {self.lock_handover_cpu_s_:.4g}")
        if self.per_brick_cpu_fraction_ is not None:
            lines.insert(-1, f"measured_bricks = {self.measured_bricks_}")
            lines.insert(-1, f"per_brick_cpu_fraction = {self.per_brick_cpu_fraction_:.3f}")
        return "\n".join(lines)


def _per_brick_share(records: list[tuple[str, dict]]) -> tuple[int, float | None]:
    """The bricks a request of these GlusterFS runs went to (one volume shape, ``K+M``) and
    the share of the machine's busy time that the FUSE clients and the bricks spent (each
    process's own CPU time, ``testbed.cpu_by_process_s``; None where a record lacks it).
    The profile takes that share as work done once per brick a request goes to (the
    client's ``ec`` translator sends each request to every brick of the subvolume, each
    brick serves it) and the rest as work that does not grow with the bricks: an
    assumption, checked on a 4+2 volume (``validation/testbed/``)."""
    from simfs.ingest.simfs_run import gluster_volume
    from simfs.testbed.gluster_cpu import client_and_brick_cpu_s

    shapes, spent, busy, complete = set(), 0.0, 0.0, True
    for origin, record in records:
        testbed = record["testbed"]
        volume = gluster_volume(testbed.get("volume"), origin)
        shapes.add(volume["glusterfs.disperse_data"] + volume["glusterfs.redundancy"])
        processes = testbed.get("cpu_by_process_s")
        if not isinstance(processes, dict):
            complete = False
            continue
        spent += sum(client_and_brick_cpu_s(processes))
        busy += float(testbed["cpu_busy_s"])
    if len(shapes) != 1:
        raise SimfsError(
            f"metadata CPU fit: the runs are on volumes of {sorted(shapes)} bricks per subvolume: give one shape"
        )
    if not complete:
        return next(iter(shapes)), None
    if not 0 < spent <= busy:
        raise SimfsError(
            f"metadata CPU fit: the clients and bricks spent {spent:.3g} core-s of the machine's {busy:.3g}: "
            "not a share"
        )
    return next(iter(shapes)), spent / busy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "records",
        nargs="+",
        help="mdtest testbed run records (files or folders): one process; and several, one per client, "
        "for the directory lock's hand-over",
    )
    parser.add_argument(
        "--round-trip-s", type=float, required=True, help="measured network round trip of one request (s)"
    )
    args = parser.parse_args(argv)
    try:
        fit = MetadataCpuFit(args.round_trip_s).fit(read_records(args.records))
    except SimfsError as error:
        print(f"simfs: {error}", file=sys.stderr)
        return 2
    print_runs(fit)
    walls = ", ".join(f"{phase} {seconds * 1e3:.4g} ms" for phase, seconds in fit.wall_s_per_item_.items())
    print(f"# wall time per item, one process: {walls}")
    cpus = ", ".join(f"{op} {seconds * 1e3:.4g} ms" for op, seconds in fit.cpu_s_per_request_.items())
    print(f"# CPU per request: {cpus}")
    if fit.lock_handover_cpu_s_ is not None:
        fixed = ", ".join(f"{count} processes {value:.3g}" for count, value in fit.handover_fixed_cpu_s_.items())
        print(
            f"# directory lock hand-over: {fit.lock_handover_cpu_s_ * 1e3:.4g} ms per create and remove "
            f"(a run's fixed core-s: {fixed})"
        )
    if fit.file_system_ == "glusterfs" and fit.per_brick_cpu_fraction_ is None:
        print("# per_brick_cpu_fraction: not fitted (a record lacks testbed.cpu_by_process_s)")
    print(fit.table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
