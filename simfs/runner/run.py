"""``simfs measure``: run a workload for real on a directory, local processes or MPI ranks.

The reporter (the parent process locally, rank 0 under MPI) checks the target, makes the
run directory, hands every rank the same :class:`~simfs.runner.rank.Plan`, collects the
ranks' records phase by phase, and at the end removes the run directory, prints the
tool's summary and writes the JSON record and traces.  Whatever happens (a full disk, an
I/O error, Ctrl-C, a rank that dies) it removes the run's files, writes what completed and
returns a non-zero status with a one-line reason.  SIGINT and SIGTERM are held
(:mod:`simfs.runner.signals`) from the start of the run until the directory is removed,
so a second Ctrl-C cannot cut the cleanup short.  If the reporter itself is killed, the
record written when the run started (``on_start``) says so, and the ranks, finding their
coordinator gone, remove the run directory themselves.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, TextIO

from simfs.errors import SimfsError, WorkloadError
from simfs.runner.comm import (
    ABORT,
    CollectiveAbandoned,
    CoordinatorGone,
    LocalComm,
    MpiComm,
    RunAborted,
    in_mpi_job,
)
from simfs.runner.machine import load_during, load_snapshot, machine_info
from simfs.runner.output import RECORD_FORMAT, bonnie_csv, dd_text, ior_text, mdtest_text
from simfs.runner.phase_watch import phase_notifier, watched_socket
from simfs.runner.rank import Plan, RankStopped, ior_file_name, run_rank, start_fault
from simfs.runner.records import PhaseResult, RankPhase
from simfs.runner.signals import Deferred, deferred_signals, pause_point
from simfs.runner.target import check_directory, check_space, make_run_directory, remove_run_directory
from simfs.workloads import parse_workload
from simfs.workloads.spec import WorkloadSpec

RUNNABLE = ("dd", "ior", "mdtest", "bonnie++")
#: Exit statuses: a failed run, and an interrupted one (128 + SIGINT, as shells report).
FAILED, INTERRUPTED = 1, 130
#: The smallest O_DIRECT alignment any Linux device accepts (its logical block size may be 4096).
_DIRECT_ALIGNMENT = 512
#: Open files the coordinator holds per local rank: its end of the rank's pipe and the
#: sentinel multiprocessing keeps to see the process end.
_FDS_PER_RANK = 2
#: And besides: the interpreter's own, the standard streams, the pipe pair and sentinel
#: of the rank being started, the record and trace files.
_FDS_SPARE = 16
#: The reason a record written at the start of a run gives, until the run replaces it.
KILLED = "the job was killed before it finished (this is the record written when the run started)"


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
            f"run the {spec.options['api']} workload with the real tool, or simulate it"
        )
    hints = spec.options.get("backend_options", ())  # --posix.odirect is a flag, not among them
    if hints:
        # Run without them, the live rate would be another workload's than the one named.
        raise WorkloadError(
            f"simfs measure: {spec.tool} {hints[0]}: the runner does plain POSIX I/O and applies no backend "
            "hints or options but --posix.odirect; drop it, or run the real tool"
        )
    for phase in spec.phases:
        if not (phase.direct and phase.bytes_per_rank):
            continue  # O_DIRECT without data (mdtest's items alone) changes nothing
        if phase.is_metadata:
            raise WorkloadError(
                "mdtest --posix.odirect with -w or -e: the runner writes and reads the items' data through "
                "the page cache; simulate it, or drop --posix.odirect"
            )
        if phase.transfer_size_bytes % _DIRECT_ALIGNMENT:
            raise WorkloadError(
                f"{spec.tool}: O_DIRECT needs transfers in multiples of {_DIRECT_ALIGNMENT} bytes, "
                f"got {phase.transfer_size_bytes}"
            )
    if spec.tool == "ior" and spec.options.get("path"):
        _check_test_file(str(spec.options["path"]))
    return spec


def _check_test_file(path: str) -> None:
    """IOR's ``-o``: the runner keeps only its last part, as the test file's name in the
    run directory, so that part must name a file (not ``.``, ``..`` or a directory)."""
    name = Path(path).name
    # The last part as written: pathlib drops a trailing "." ("/scratch/me/." is "me").
    if path.rsplit("/", 1)[-1] in ("", ".", ".."):
        raise WorkloadError(
            f"ior -o {path}: names a directory, not a test file (the runner makes its files in its own "
            "run directory, named after the last part of -o: give -o DIR/testFile)"
        )
    if len(os.fsencode(name)) + len(".00000000") > 255:
        raise WorkloadError(f"ior -o {path}: the file name is longer than 255 bytes with -F's .00000000")


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
    on_start: Callable[[dict[str, Any]], None] | None = None,
    client_mounts: Sequence[str | Path] = (),
    on_phase: Callable[[str, RankPhase | None], None] | None = None,
) -> Measured:
    """Run ``command`` (``"ior -a POSIX -F -t 1m -b 64m"``) in a fresh subdirectory of
    ``directory`` with ``processes`` local processes, or as the ranks of the MPI job this
    process belongs to (``backend="mpi"``, or ``"auto"`` under ``mpirun``).  The tool's
    summary goes to ``out`` (stdout) from the reporter only.

    ``client_mounts`` (local processes only): mount points of the same file system
    through different clients, ``directory`` among them (the testbed's); the ranks are
    placed on them by block (rank r on ``client_mounts[r // ppn]``) and the record counts
    each client used as a node.

    ``on_start(record)``, on the reporter once the run directory is made, gets the record
    the run leaves if it is killed (status ``failed``, reason :data:`KILLED`), for the
    caller to write where the final record goes; if it raises, the run does not start.

    ``on_phase(event, record)`` (local processes only) is called by the coordinator at
    each phase boundary of a synchronised run, while every rank waits in the barrier:
    ``("start", None)`` as a phase starts and ``("end", a_rank_record)`` as it ends
    (``"failed"`` where a rank failed in it), so a caller can sample counters of its own
    phase by phase (the testbed's CPU time).  An MPI job tells the same boundaries to a
    listener outside it instead, where its environment names one
    (:mod:`simfs.runner.phase_watch`)."""
    if backend not in ("auto", "local", "mpi"):
        raise SimfsError(f"--backend {backend}: expected auto, local or mpi")
    use_mpi = backend == "mpi" or (backend == "auto" and in_mpi_job())
    out = out if out is not None else sys.stdout
    argv = argv if argv is not None else ["simfs", "measure", "--", *command.split()]
    if use_mpi and client_mounts:
        raise SimfsError("client mounts: local processes only (under mpirun each rank runs on its own node)")
    with deferred_signals() as signals:
        if use_mpi:
            return _measure_mpi(command, directory, processes, keep, trace_ops, argv, out, on_start, signals)
        return _measure_local(
            command, directory, processes, keep, trace_ops, argv, out, on_start, signals, tuple(client_mounts), on_phase
        )


def _measure_local(
    command: str,
    directory: str | Path,
    processes: int | None,
    keep: bool,
    trace_ops: bool,
    argv: list[str],
    out: TextIO,
    on_start: Callable[[dict[str, Any]], None] | None,
    signals: Deferred,
    client_mounts: tuple[str | Path, ...] = (),
    on_phase: Callable[[str, RankPhase | None], None] | None = None,
) -> Measured:
    processes = 1 if processes is None else processes
    if processes < 1:
        raise SimfsError(f"--np {processes}: expected a positive number of processes")
    spec = plan_workload(command)
    target = check_directory(directory)
    check_space(target, spec, processes)
    check_process_limits(processes)
    machine = machine_info(target)
    run_dir = make_run_directory(target)
    placement = block_placement(processes, len(client_mounts)) if client_mounts else [0] * processes
    ppn = placement.count(0)
    nodes = placement[-1] + 1  # the clients the ranks land on (5 ranks on 4: 2+2+1)
    views = tuple(str(Path(client_mounts[client]) / run_dir.name) for client in placement) if client_mounts else ()
    plan = Plan(spec, str(run_dir), ranks=processes, ppn=ppn, trace_ops=trace_ops, views=views)
    load = load_snapshot()
    began = time.time()
    try:
        if on_start is not None:
            on_start(_record(spec, plan, run_dir, machine, began, "local", argv, nodes=nodes))
        boundary = _phase_boundary(on_phase) if on_phase is not None and spec.synchronized else None
        gathered, failure, completed = _coordinate_local(plan, signals, boundary)
    except BaseException:
        remove_run_directory(run_dir)  # refused or not started: nothing of the run stays
        raise
    finished = time.time()
    machine = {**machine, "load": load_during(load)}
    note = ""
    if completed:
        # Every rank finished its program: a signal that came meanwhile stopped nothing.
        failure = None
        note = f"{signals.names()} came after the last phase" if signals.received else ""
    return _report(
        spec,
        plan,
        run_dir,
        machine,
        gathered,
        failure,
        began,
        finished,
        "local",
        keep,
        argv,
        out,
        nodes=nodes,
        note=note,
    )


def block_placement(processes: int, clients: int) -> list[int]:
    """The client each rank runs on, placed by block as mpirun places them by default
    (and as IOR's -C reorder assumes): 5 ranks on 4 clients go 0, 0, 1, 1, 2."""
    per_client = -(-processes // min(clients, processes))
    return [rank // per_client for rank in range(processes)]


def check_process_limits(processes: int) -> None:
    """Refuse ``processes`` local ranks that the open-file or process limits would stop
    part-way through starting them (``ulimit -n``, ``ulimit -u``)."""
    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files != resource.RLIM_INFINITY:
        needed = _open_files() + _FDS_PER_RANK * processes + _FDS_SPARE
        if needed > files:
            raise SimfsError(
                f"--np {processes}: the coordinator would hold about {needed} open files and the limit is "
                f"{files} (ulimit -n); raise it or run fewer processes"
            )
    # The kernel does not hold root (real user id 0) to RLIMIT_NPROC.
    limit, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if limit != resource.RLIM_INFINITY and os.getuid() != 0:
        running = _user_processes()
        if running + processes > limit:
            raise SimfsError(
                f"--np {processes}: this user runs {running} processes and may run {limit} (ulimit -u); "
                "raise it or run fewer processes"
            )


def _open_files() -> int:
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(listing))
        except OSError:
            continue
    return 0


def _user_processes() -> int:
    """Processes of this user (RLIMIT_NPROC counts the real user's); 1 where /proc is missing."""
    uid = os.getuid()
    count = 0
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return 1
    for entry in entries:
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue  # it ended meanwhile
    return max(count, 1)


# -- local backend --------------------------------------------------------------------------
def _local_rank(rank: int, plan: Plan, connection: Any, inherited: list[Any], stop_event: Any) -> None:
    # The terminal's Ctrl-C reaches every process in the group: the parent decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    comm = LocalComm(rank, plan.ranks, connection, stop_event)
    # Not the parent's handler (forked with it): a SIGTERM for this rank stops this rank.
    signal.signal(signal.SIGTERM, lambda number, frame: comm.stop())
    # The coordinator's ends of the pipes (this rank's included) stay with it alone: a
    # copy here would keep every pipe open after the coordinator died, and the ranks
    # would wait for it for ever.
    for other in inherited:
        other.close()
    outcome: tuple[str, Any] = ("done", None)
    try:
        run_rank(comm, plan)
    except CoordinatorGone:
        outcome = ("gone", None)
    except RankStopped as exc:
        outcome = ("done", exc.kind)
    except RunAborted as exc:
        outcome = ("done", str(exc))
    except BaseException:  # a bug in a rank: the parent reports it and stops the others
        outcome = ("crash", traceback.format_exc(limit=3).strip().splitlines()[-1])
    if outcome[0] != "gone":
        try:
            connection.send(outcome)
            return
        except (BrokenPipeError, OSError):
            pass  # the coordinator died after the last phase
    # Nobody else will clean up: every rank removes the run directory as it leaves (the
    # last one out removes what the others were still writing).
    remove_run_directory(Path(plan.run_dir))


class _StartError(SimfsError):
    """A rank's process could not be started (a limit the up-front check missed)."""


def _phase_boundary(on_phase: Callable[[str, RankPhase | None], None]) -> Callable[[list[Any]], None]:
    """What the coordinator does with each completed collective: the barrier before a
    phase (every rank sent None) becomes ``on_phase("start", None)``, the gather after it
    (every rank sent its records) ``on_phase("end", record)``, or ``("failed", record)``
    where a rank reported a failure in it.  The ranks' hello and the barriers inside a
    phase (IOR ``-g``: after the opens, before the closes) are neither.  ``on_phase``
    runs in the coordinator while every rank waits: it should be quick, and an exception
    from it stops the run like any coordinator failure."""
    open_phase = [False]

    def boundary(answer: list[Any]) -> None:
        if all(entry is None for entry in answer):
            if not open_phase[0]:
                open_phase[0] = True
                on_phase("start", None)
        elif all(isinstance(entry, tuple) and entry and entry[0] == "end" for entry in answer):
            records = [record for entry in answer for record in entry[2]]
            failed = any(entry[1] for entry in answer)
            on_phase("failed" if failed else "end", records[-1] if records else None)
            open_phase[0] = False

    return boundary


def _coordinate_local(
    plan: Plan, signals: Deferred, on_collective: Callable[[list[Any]], None] | None = None
) -> tuple[list[list[Any]], tuple[str, str] | None, bool]:
    """Start the ranks, serve their collectives, and return every gathered list, the
    first failure (reason, kind) if the run stopped early, and whether every rank
    finished its program (then a signal came too late to stop anything)."""
    context = multiprocessing.get_context("fork")
    stop_event = context.Event()
    ends: list[Any] = []
    children: list[Any] = []
    gathered: list[list[Any]] = []
    failure: tuple[str, str] | None = None
    clean: set[int] = set()
    with signals.listening(lambda number: stop_event.set()):
        try:
            _start_ranks(plan, context, stop_event, ends, children)
            connections = {end: rank for rank, end in enumerate(ends)}
            waiting: dict[int, Any] = {}
            finished: set[int] = set()
            aborted = ""  # a rank died: the others must not wait for it
            while len(finished) < plan.ranks:
                if signals.received and failure is None:
                    # No abort for a signal: every rank sees the stop flag within one
                    # check and brings its failure to the end of the phase, so a phase
                    # that every rank finished before the flag still counts.
                    failure = (f"interrupted ({signals.names()})", "interrupted")
                open_connections = [c for c, rank in connections.items() if rank not in finished]
                for connection in wait(open_connections, timeout=0.2):
                    rank = connections[connection]
                    try:
                        kind, payload = connection.recv()
                    except (EOFError, OSError):  # end-of-file: the process has ended
                        kind, payload = "died", None
                    if kind == "gather":
                        waiting[rank] = payload
                    elif kind == "done":
                        finished.add(rank)
                        if payload is None:
                            clean.add(rank)
                        elif payload != "interrupted" and failure is None:
                            failure = (f"rank {rank}: {payload}", str(payload))
                    else:
                        finished.add(rank)
                        children[rank].join(timeout=10)  # it is ending: its exit status, for the reason
                        stopped = "died" if kind == "died" else f"stopped: {payload}"
                        reason = f"rank {rank} {stopped} (exit status {children[rank].exitcode})"
                        failure = failure or (reason, "crash")
                        aborted = aborted or reason
                for rank, child in enumerate(children):
                    if rank not in finished and not child.is_alive() and not _poll_ready(ends[rank]):
                        finished.add(rank)
                        reason = f"rank {rank} died (exit status {child.exitcode})"
                        failure = failure or (reason, "crash")
                        aborted = aborted or reason
                if aborted:
                    stop_event.set()
                    for rank in list(waiting):
                        _send(ends[rank], (ABORT, aborted))
                    waiting.clear()
                elif len(waiting) == plan.ranks:
                    answer = [waiting[rank] for rank in range(plan.ranks)]
                    gathered.append(answer)
                    if on_collective is not None:
                        on_collective(answer)
                    for rank in waiting:
                        _send(ends[rank], answer)
                    waiting.clear()
            for child in children:
                child.join(timeout=10)
        finally:
            for child in children:
                if child.is_alive():
                    child.kill()
                    child.join()
            for end in ends:
                end.close()
    reported = _first_failure(gathered)
    return gathered, reported or failure, len(clean) == plan.ranks and reported is None


def _start_ranks(plan: Plan, context: Any, stop_event: Any, ends: list[Any], children: list[Any]) -> None:
    """Start the ranks' processes (``ends`` and ``children`` filled as they start); if
    one cannot start, stop those that did and raise a one-line :class:`_StartError`."""
    rank = 0
    try:
        for rank in range(plan.ranks):
            fault = start_fault(rank)
            if fault is not None:
                raise fault
            end, child_end = context.Pipe()
            ends.append(end)
            child = context.Process(
                target=_local_rank, args=(rank, plan, child_end, list(ends), stop_event), daemon=True
            )
            try:
                child.start()
            finally:
                # The child has its copy; one kept here would hide the child's death
                # from the coordinator's reads.
                child_end.close()
            children.append(child)
    except OSError as exc:
        # The ranks started so far wait in the first collective and have written nothing.
        for child in children:
            child.kill()
            child.join()
        limit = {
            errno.EAGAIN: "the limit on processes, ulimit -u",
            errno.EMFILE: "the limit on open files, ulimit -n",
            errno.ENFILE: "the system's limit on open files",
            errno.ENOMEM: "out of memory",
        }.get(exc.errno or 0, "")
        raise _StartError(
            f"--np {plan.ranks}: could not start rank {rank} ({exc.strerror}{': ' + limit if limit else ''}); "
            f"the {len(children)} started were stopped and nothing was run"
        ) from None


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
def _told_and_waited(comm: MpiComm, notify: Callable[[str, Any], None] | None) -> Callable[[str, Any], None]:
    """A phase boundary of an MPI run watched from outside (``phase_watch.py``): rank 0
    tells the listener, and every rank waits in one more barrier until it has answered,
    as local ranks wait while the coordinator calls ``on_phase``.  Every rank sees the
    same answers, so all of them find the same boundaries and meet in that barrier; and
    ``notify`` never raises (``phase_watch.phase_notifier``), so rank 0 meets them too."""

    def boundary(event: str, record: Any) -> None:
        if notify is not None:
            notify(event, record)
        comm.gather(None)

    return boundary


def _measure_mpi(
    command: str,
    directory: str | Path,
    processes: int | None,
    keep: bool,
    trace_ops: bool,
    argv: list[str],
    out: TextIO,
    on_start: Callable[[dict[str, Any]], None] | None,
    signals: Deferred,
) -> Measured:
    comm = MpiComm(signals)
    run_dir: Path | None = None
    try:
        # Each rank's host and directory: ranks may reach one file system through
        # different mounts (the testbed's clients), each rank through its own.
        hosts, directories = zip(*comm.gather((comm.host, os.path.abspath(directory))))
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
                views = ()
                if len(set(directories)) > 1:
                    views = tuple(str(Path(mount) / run_dir.name) for mount in directories)
                    unseen = next((view for view in views if not Path(view).is_dir()), None)
                    if unseen is not None:
                        raise SimfsError(
                            f"--dir: the ranks were given different directories, and {unseen} is not the run "
                            f"directory {run_dir} as another mount sees it: give every rank the same file system"
                        )
                plan = Plan(spec, str(run_dir), ranks=comm.size, ppn=ppn, trace_ops=trace_ops, views=views)
                if on_start is not None:
                    nodes = len(set(hosts))
                    on_start(_record(spec, plan, run_dir, machine, time.time(), "mpi", argv, nodes=nodes))
                setup = ("ok", plan)
            except SimfsError as exc:
                setup = ("error", str(exc))
                if run_dir is not None:
                    remove_run_directory(run_dir)
        setup = comm.broadcast(setup)
        # Rank 0's environment decides: ranks on other nodes may not have been given it,
        # and all must agree on the barriers a watched run adds.
        watched = comm.broadcast(watched_socket() if comm.reporter else None)
    except CollectiveAbandoned as exc:
        # A rank died, or the job was stopped, before the run began: nothing to record.
        if run_dir is not None:
            remove_run_directory(run_dir)
        if comm.reporter:
            raise SimfsError(f"the MPI job stopped before the run began: {exc}") from None
        return Measured("interrupted", str(exc), INTERRUPTED)
    if setup[0] == "error":
        if comm.reporter:
            raise SimfsError(setup[1])
        return Measured("failed", setup[1], 2)
    plan = setup[1]
    if watched and plan.spec.synchronized:
        notify = phase_notifier(watched, comm.stop_requested) if comm.reporter else None
        comm.on_collective = _phase_boundary(_told_and_waited(comm, notify))
    failure: tuple[str, str] | None = None
    load = load_snapshot()
    began = time.time()
    try:
        run_rank(comm, plan)
    except RankStopped as exc:
        failure = (exc.reason, exc.kind)
    except RunAborted as exc:  # CollectiveAbandoned: the peers are not coming
        failure = (f"rank {comm.rank}: {exc}", "interrupted")
    statuses: list[Any] = [(failure, signals.received)]
    if not comm.abandoned:
        # Every rank stops at the same collective, so all meet here once more before the
        # reporter removes the directory under them.
        try:
            statuses = comm.gather((failure, signals.received))
        except CollectiveAbandoned as exc:
            failure = failure or (f"rank {comm.rank}: {exc}", "interrupted")
            statuses = [(failure, signals.received)]
    finished = time.time()
    failure = next((f for f, _ in statuses if f), None)
    note = ""
    if failure is None and any(received for _, received in statuses):
        note = "a signal came after the last phase"
    if not comm.reporter:
        if comm.abandoned:
            # Rank 0 may be the rank that died: whoever gives up on the others cleans up.
            remove_run_directory(Path(plan.run_dir))
        return Measured("failed" if failure else "ok", failure[0] if failure else "", 1 if failure else 0)
    machine = {**machine, "load": load_during(load)}  # the reporter's host
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
        nodes=len(set(hosts)),
        note=note,
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
    note: str = "",
) -> Measured:
    # The phases every rank finished: a phase in which any rank failed did not complete.
    ends = [answer for answer in gathered if all(isinstance(e, tuple) and e and e[0] == "end" for e in answer)]
    records = [record for answer in ends if not any(e[1] for e in answer) for entry in answer for record in entry[2]]
    results = phase_results(records)
    kept = keep and failure is None
    pause_point("before_remove")
    leftover = None if kept else remove_run_directory(run_dir)
    status, code, reason = "ok", 0, note
    if failure is not None:
        reason, kind = failure
        status, code = ("interrupted", INTERRUPTED) if kind == "interrupted" else ("failed", FAILED)
        reason += f"; {len(results)} phase(s) completed; the run's files were removed"
    if leftover:
        reason = (reason + "; " if reason else "") + f"could not remove everything: {leftover}"
        status, code = "failed", code or FAILED
    run = _record(spec, plan, run_dir, machine, began, backend, argv, nodes=nodes)
    run.update(kept=kept, finished_epoch=finished, status=status, reason=reason, phases=[r.row() for r in results])
    if results:
        out.write(_summary_text(run, spec, results, records))
        out.flush()
    return Measured(status, reason, code, results, records, run)


def _record(
    spec: WorkloadSpec,
    plan: Plan,
    run_dir: Path,
    machine: dict[str, Any],
    began: float,
    backend: str,
    argv: list[str],
    *,
    nodes: int,
) -> dict[str, Any]:
    """The run record without its outcome: as it stands, the record a killed run leaves
    (written at the start through ``on_start``, replaced at the end)."""
    from simfs import __version__

    return {
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
        "kept": False,
        "test_file": str(run_dir / ior_file_name(spec)),
        "began_epoch": began,
        "finished_epoch": None,
        "began": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(began)),
        "machine": machine,
        "status": "failed",
        "reason": KILLED,
        "phases": [],
    }


def _summary_text(run: dict[str, Any], spec: WorkloadSpec, results: list[PhaseResult], records: list[RankPhase]) -> str:
    writers: dict[str, Callable[[], str]] = {
        "ior": lambda: ior_text(run, spec, results),
        "mdtest": lambda: mdtest_text(run, spec, results),
        "dd": lambda: dd_text(spec, sorted(records, key=lambda r: (r.iteration, r.phase != "write", r.rank))),
        "bonnie++": lambda: bonnie_csv(run, spec, records),
    }
    return writers[spec.tool]()
