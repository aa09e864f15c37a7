"""``simfs measure``: run a workload for real on a directory, local processes or MPI ranks.

The reporter (the parent process locally, rank 0 under MPI) checks the target, makes the
run directory, hands every rank the same :class:`~simfs.runner.rank.Plan`, collects the
ranks' records phase by phase, and at the end removes the run directory, prints the
tool's summary and writes the JSON record and traces.  Whatever happens (a full disk, an
I/O error, Ctrl-C, a rank that dies) it removes the run's files, writes what completed and
returns a non-zero status with a one-line reason.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, TextIO

from simfs.errors import SimfsError, WorkloadError
from simfs.runner.comm import ABORT, LocalComm, MpiComm, RunAborted, in_mpi_job
from simfs.runner.machine import machine_info
from simfs.runner.output import RECORD_FORMAT, bonnie_csv, dd_text, ior_text, mdtest_text
from simfs.runner.rank import Plan, RankStopped, ior_file_name, run_rank
from simfs.runner.records import PhaseResult, RankPhase
from simfs.runner.target import check_directory, check_space, make_run_directory, remove_run_directory
from simfs.workloads import parse_workload
from simfs.workloads.spec import WorkloadSpec

RUNNABLE = ("dd", "ior", "mdtest", "bonnie++")
#: Exit statuses: a failed run, and an interrupted one (128 + SIGINT, as shells report).
FAILED, INTERRUPTED = 1, 130
#: The smallest O_DIRECT alignment any Linux device accepts (its logical block size may be 4096).
_DIRECT_ALIGNMENT = 512


@dataclass
class Measured:
    """The outcome of a live run: its status, the phase results and the JSON record."""

    status: str
    reason: str
    exit_code: int
    results: list[PhaseResult] = field(default_factory=list)
    records: list[RankPhase] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


def plan_workload(command: str) -> WorkloadSpec:
    """The workload a live run can do, or a WorkloadError saying why not."""
    spec = parse_workload(command)
    if spec.tool not in RUNNABLE:
        raise WorkloadError(
            f"simfs measure: {spec.tool} is not run live (the runner runs {', '.join(RUNNABLE)}); simulate it instead"
        )
    if spec.options.get("api", "POSIX") != "POSIX":
        raise WorkloadError(
            f"simfs measure: {spec.tool} -a {spec.options['api']}: the runner does POSIX I/O only; "
            "run the MPI-IO workload with the real tool, or simulate it"
        )
    for phase in spec.phases:
        if phase.direct and phase.transfer_size_bytes % _DIRECT_ALIGNMENT:
            raise WorkloadError(
                f"{spec.tool}: O_DIRECT needs transfers in multiples of {_DIRECT_ALIGNMENT} bytes, "
                f"got {phase.transfer_size_bytes}"
            )
    return spec


def measure(
    command: str,
    directory: str | Path,
    *,
    processes: int | None = None,
    backend: str = "auto",
    keep: bool = False,
    trace_ops: bool = False,
    argv: list[str] | None = None,
    out: TextIO | None = None,
) -> Measured:
    """Run ``command`` (``"ior -a POSIX -F -t 1m -b 64m"``) in a fresh subdirectory of
    ``directory`` with ``processes`` local processes, or as the ranks of the MPI job this
    process belongs to (``backend="mpi"``, or ``"auto"`` under ``mpirun``).  The tool's
    summary goes to ``out`` (stdout) from the reporter only."""
    if backend not in ("auto", "local", "mpi"):
        raise SimfsError(f"--backend {backend}: expected auto, local or mpi")
    use_mpi = backend == "mpi" or (backend == "auto" and in_mpi_job())
    out = out if out is not None else sys.stdout
    argv = argv if argv is not None else ["simfs", "measure", "--", *command.split()]
    if use_mpi:
        return _measure_mpi(command, directory, processes, keep, trace_ops, argv, out)
    processes = 1 if processes is None else processes
    if processes < 1:
        raise SimfsError(f"--np {processes}: expected a positive number of processes")
    spec = plan_workload(command)
    target = check_directory(directory)
    check_space(target, spec, processes)
    machine = machine_info(target)
    run_dir = make_run_directory(target)
    plan = Plan(spec, str(run_dir), ranks=processes, ppn=processes, trace_ops=trace_ops)
    began = time.time()
    gathered, failure = _coordinate_local(plan)
    finished = time.time()
    return _report(spec, plan, run_dir, machine, gathered, failure, began, finished, "local", keep, argv, out, nodes=1)


# -- local backend --------------------------------------------------------------------------
def _local_rank(rank: int, plan: Plan, connection: Any, stop_event: Any) -> None:
    # The terminal's Ctrl-C reaches every process in the group: the parent decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    comm = LocalComm(rank, plan.ranks, connection, stop_event)
    outcome: tuple[str, Any] = ("done", None)
    try:
        run_rank(comm, plan)
    except RankStopped as exc:
        outcome = ("done", exc.kind)
    except RunAborted as exc:
        outcome = ("done", str(exc))
    except BaseException:  # a bug in a rank: the parent reports it and stops the others
        outcome = ("crash", traceback.format_exc(limit=3).strip().splitlines()[-1])
    try:
        connection.send(outcome)
    except (BrokenPipeError, OSError):
        pass


def _coordinate_local(plan: Plan) -> tuple[list[list[Any]], tuple[str, str] | None]:
    """Start the ranks, serve their collectives, and return every gathered list and the
    first failure (reason, kind) if the run stopped early."""
    context = multiprocessing.get_context("fork")
    stop_event = context.Event()
    pipes = [context.Pipe() for _ in range(plan.ranks)]
    children = [
        context.Process(target=_local_rank, args=(rank, plan, pipes[rank][1], stop_event), daemon=True)
        for rank in range(plan.ranks)
    ]
    interrupted: list[bool] = []

    def on_interrupt(number: int, frame: Any) -> None:
        interrupted.append(True)
        stop_event.set()

    previous = {number: signal.signal(number, on_interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    gathered: list[list[Any]] = []
    failure: tuple[str, str] | None = None
    try:
        for child in children:
            child.start()
        connections = {pipes[rank][0]: rank for rank in range(plan.ranks)}
        waiting: dict[int, Any] = {}
        finished: set[int] = set()
        aborted = ""
        while len(finished) < plan.ranks:
            if interrupted and not aborted:
                aborted = "interrupted (Ctrl-C or SIGTERM)"
                failure = failure or (aborted, "interrupted")
            open_connections = [c for c, rank in connections.items() if rank not in finished]
            for connection in wait(open_connections, timeout=0.2):
                rank = connections[connection]
                try:
                    kind, payload = connection.recv()
                except (EOFError, OSError):
                    kind, payload = "crash", "the process died"
                if kind == "gather":
                    waiting[rank] = payload
                elif kind == "done":
                    finished.add(rank)
                    if payload not in (None, "interrupted") and failure is None:
                        failure = (f"rank {rank}: {payload}", str(payload))
                else:
                    finished.add(rank)
                    reason = f"rank {rank} stopped: {payload} (exit status {children[rank].exitcode})"
                    failure = failure or (reason, "crash")
                    aborted = aborted or reason
            for rank, child in enumerate(children):
                if rank not in finished and not child.is_alive() and not _poll_ready(pipes[rank][0]):
                    finished.add(rank)
                    reason = f"rank {rank} died (exit status {child.exitcode})"
                    failure = failure or (reason, "crash")
                    aborted = aborted or reason
            if aborted:
                stop_event.set()
                for rank in list(waiting):
                    _send(pipes[rank][0], (ABORT, aborted))
                waiting.clear()
            elif len(waiting) == plan.ranks:
                answer = [waiting[rank] for rank in range(plan.ranks)]
                gathered.append(answer)
                for rank in waiting:
                    _send(pipes[rank][0], answer)
                waiting.clear()
        for child in children:
            child.join(timeout=10)
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()
        for number, handler in previous.items():
            signal.signal(number, handler)
    reported = _first_failure(gathered)
    return gathered, reported or failure


def _send(connection: Any, message: Any) -> None:
    try:
        connection.send(message)
    except (BrokenPipeError, OSError):
        pass  # that rank is gone; the loop notices


def _poll_ready(connection: Any) -> bool:
    try:
        return connection.poll()
    except (EOFError, OSError):
        return False


def _first_failure(gathered: list[list[Any]]) -> tuple[str, str] | None:
    for answer in gathered:
        for entry in answer:
            if isinstance(entry, tuple) and entry and entry[0] == "end" and entry[1]:
                return tuple(entry[1])
    return None


# -- MPI backend ----------------------------------------------------------------------------
def _measure_mpi(
    command: str,
    directory: str | Path,
    processes: int | None,
    keep: bool,
    trace_ops: bool,
    argv: list[str],
    out: TextIO,
) -> Measured:
    comm = MpiComm()
    hosts = comm.gather(comm.host)
    setup: tuple[str, Any] = ("ok", None)
    if comm.reporter:
        try:
            if processes is not None and processes != comm.size:
                raise SimfsError(f"--np {processes}: this MPI job has {comm.size} ranks (drop --np under mpirun)")
            spec = plan_workload(command)
            target = check_directory(directory)
            check_space(target, spec, comm.size)
            machine = machine_info(target)
            run_dir = make_run_directory(target)
            ppn = hosts.count(hosts[0])
            plan = Plan(spec, str(run_dir), ranks=comm.size, ppn=ppn, trace_ops=trace_ops)
            setup = ("ok", plan)
        except SimfsError as exc:
            setup = ("error", str(exc))
    setup = comm.broadcast(setup)
    if setup[0] == "error":
        if comm.reporter:
            raise SimfsError(setup[1])
        return Measured("failed", setup[1], 2)
    plan = setup[1]
    failure: tuple[str, str] | None = None
    began = time.time()
    try:
        run_rank(comm, plan)
    except RankStopped as exc:
        failure = (exc.reason, exc.kind)
    except RunAborted as exc:
        failure = (f"rank {comm.rank}: {exc}", "interrupted")
    # Every rank stops at the same collective, so all meet here once more before the
    # reporter removes the directory under them.
    statuses = comm.gather(failure)
    finished = time.time()
    failure = next((s for s in statuses if s), None)
    if not comm.reporter:
        return Measured("failed" if failure else "ok", failure[0] if failure else "", 1 if failure else 0)
    nodes = len(set(hosts))
    return _report(
        plan.spec,
        plan,
        Path(plan.run_dir),
        machine,
        comm.gathered,
        failure,
        began,
        finished,
        "mpi",
        keep,
        argv,
        out,
        nodes=nodes,
    )


# -- the report -----------------------------------------------------------------------------
def phase_results(records: list[RankPhase]) -> list[PhaseResult]:
    """Records grouped by iteration and phase, in the order they ran."""
    groups: dict[tuple[int, str], list[RankPhase]] = {}
    for record in records:
        groups.setdefault((record.iteration, record.phase), []).append(record)
    return [PhaseResult.of(group) for group in groups.values()]


def _report(
    spec: WorkloadSpec,
    plan: Plan,
    run_dir: Path,
    machine: dict[str, Any],
    gathered: list[list[Any]],
    failure: tuple[str, str] | None,
    began: float,
    finished: float,
    backend: str,
    keep: bool,
    argv: list[str],
    out: TextIO,
    *,
    nodes: int,
) -> Measured:
    # The phases every rank finished: a phase in which any rank failed did not complete.
    ends = [answer for answer in gathered if all(isinstance(e, tuple) and e and e[0] == "end" for e in answer)]
    records = [record for answer in ends if not any(e[1] for e in answer) for entry in answer for record in entry[2]]
    results = phase_results(records)
    kept = keep and failure is None
    leftover = None if kept else remove_run_directory(run_dir)
    status, code, reason = "ok", 0, ""
    if failure is not None:
        reason, kind = failure
        status, code = ("interrupted", INTERRUPTED) if kind == "interrupted" else ("failed", FAILED)
        reason += f"; {len(results)} phase(s) completed; the run's files were removed"
    if leftover:
        reason = (reason + "; " if reason else "") + f"could not remove everything: {leftover}"
        status, code = "failed", code or FAILED
    from simfs import __version__

    run: dict[str, Any] = {
        "simfs_run": RECORD_FORMAT,
        "version": __version__,
        "command": " ".join(argv),
        "workload": spec.command,
        "tool": spec.tool,
        "backend": backend,
        "ranks": plan.ranks,
        "nodes": nodes,
        "ppn": plan.ppn,
        "directory": str(run_dir.parent),
        "run_directory": str(run_dir),
        "kept": kept,
        "test_file": str(run_dir / ior_file_name(spec)),
        "began_epoch": began,
        "finished_epoch": finished,
        "began": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(began)),
        "machine": machine,
        "status": status,
        "reason": reason,
        "phases": [r.row() for r in results],
    }
    if results:
        out.write(_summary_text(run, spec, results, records))
        out.flush()
    return Measured(status, reason, code, results, records, run)


def _summary_text(run: dict[str, Any], spec: WorkloadSpec, results: list[PhaseResult], records: list[RankPhase]) -> str:
    writers: dict[str, Callable[[], str]] = {
        "ior": lambda: ior_text(run, spec, results),
        "mdtest": lambda: mdtest_text(run, spec, results),
        "dd": lambda: dd_text(spec, sorted(records, key=lambda r: (r.iteration, r.phase != "write", r.rank))),
        "bonnie++": lambda: bonnie_csv(run, spec, records),
    }
    return writers[spec.tool]()
