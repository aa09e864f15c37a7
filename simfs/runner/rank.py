"""The rank program of a live run: the phases of a WorkloadSpec, done for real.

Every rank runs the same sequence of collectives whatever happens to it, so that no rank
waits in a barrier its peers skip: a rank whose I/O fails stops its own transfers, keeps
the failure, and reports it at the end of the phase, where every rank learns of it and
stops (MPI); under the local backend the parent also cuts the waits short.

Timing follows IOR (``ior.c``): a barrier before open, then per rank the open, the
transfers and the close (with ``-e`` the fsync is inside the close), and a barrier after
close; ``-g`` adds barriers between open, transfer and close.  A phase's bandwidth is all
bytes over the last close minus the first open, so a rank that starts late lengthens it.

Files, in the run directory the reporter made: IOR ``<name>.<rank:08d>`` (``-F``) or one
``<name>``; dd ``dd.<rank:08d>``; bonnie++ ``bonnie.<rank:08d>``; mdtest items in
``mdtest.<iteration>/shared`` (one directory) or ``mdtest.<iteration>/rank.<rank>`` (``-u``),
with mdtest's tree in it for ``-z -b -I`` (``tree.0/d3/d1``: :class:`~simfs.workloads.spec.DirectoryTree`).
A read phase with no write before it in the iteration (``ior -r``, ``dd if=FILE``) first
writes its data untimed, with an fsync, as the real tools need the file to exist.

Test hooks (environment, read once; for the test suite): ``SIMFS_RUNNER_DELAY="R:S"``
makes rank R start each phase S seconds after the barrier; ``SIMFS_RUNNER_PACE="S"``
makes every rank wait S seconds before each transfer (a device slow on demand, so that a
stonewall deadline falls inside the block however fast the machine); ``SIMFS_RUNNER_FAULT=
"R:LABEL:K:ACTION"`` acts at rank R's K-th operation of phase LABEL (0 is the open).
ACTION is an errno name (EIO, ENOSPC, EACCES: the operation fails with it, an error no
ordinary directory produces on demand), or:

* ``SIGKILL``: the rank's process is killed there (as by the OOM killer), leaving its
  files and its part of the run to the others to clean up;
* ``SIGINT``: the rank sends SIGINT to its parent process (a Ctrl-C reaching the
  coordinator, or ``mpirun``), waits until the run's stop request reaches it, and stops
  as if it had seen the flag there;
* ``PAUSE``: the rank creates the file named by ``SIMFS_RUNNER_FLAG`` and waits until a
  stop is requested (a signal, a failure elsewhere, its coordinator gone), then stops.

Two labels name points outside the phases: ``exit`` (K is ignored), where a rank has
finished every phase (``R:exit:0:SIGINT``: a signal that comes after the last phase),
and ``start`` (local backend), where the coordinator starts rank R's process
(``R:start:0:EAGAIN``: fork failing as under ``ulimit -u``).
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simfs.runner.comm import RunAborted
from simfs.runner.records import RankPhase
from simfs.runner.signals import touch_flag
from simfs.workloads.spec import PhaseSpec, WorkloadSpec, transfer_offsets

#: Transfers between two looks at the stop flag (a look costs about a microsecond).
_STOP_CHECK_EVERY = 16


@dataclass(frozen=True)
class Plan:
    """What every rank needs: the workload, where, how many ranks, what to trace."""

    spec: WorkloadSpec
    run_dir: str
    ranks: int
    ppn: int
    trace_ops: bool = False
    #: The run directory as each rank's client of a distributed file system sees it (one
    #: path per rank, through its client's mount), so its I/O goes through that client.
    #: Empty: every rank uses ``run_dir``.
    views: tuple[str, ...] = ()


class RankStopped(Exception):  # noqa: N818 - a verdict that ends the run, not a bug
    """The run stops: ``reason`` is the first failure any rank reported (one line)."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


def run_rank(comm: Any, plan: Plan) -> None:
    """Run ``plan`` as rank ``comm.rank``; raises :class:`RankStopped` or
    :class:`RunAborted` when the run stops early."""
    program = _RankProgram(comm, plan)
    program.run()
    program.hook("exit", 0)


class _RankProgram:
    def __init__(self, comm: Any, plan: Plan) -> None:
        self.comm = comm
        self.plan = plan
        self.spec = plan.spec
        self.rank = comm.rank
        self.run_dir = Path(plan.views[self.rank] if plan.views else plan.run_dir)
        self.failure: tuple[str, str] | None = None  # (reason, kind)
        self.origin = 0.0
        self.delay_s = _delay_hook(self.rank)
        self.pace_s = _pace_hook()
        self.fault = _fault_hook(self.rank)
        self.buffers: dict[int, mmap.mmap] = {}
        # dd copies /dev/zero (the seed's form, and dd's without if=): write what dd writes,
        # as some storage treats zeros apart (a thin-provisioned virtual disk may unmap them).
        self.zeros = self.spec.tool == "dd" and self.spec.options.get("if") in (None, "/dev/zero")
        self.pending: list[RankPhase] = []  # an unsynchronised run reports at the end
        #: mdtest -W: per iteration, the items every rank went on to after the deadline.
        self.mdtest_items: dict[int, int] = {}

    # -- the run ----------------------------------------------------------------------
    def run(self) -> None:
        hello = self.comm.gather((self.comm.host, time.perf_counter()))
        root_host, root_time = hello[0]
        # One host, one monotonic clock: rank 0's reading is everyone's origin; on
        # another host the clocks differ, and the barrier is the best common instant.
        self.origin = root_time if self.comm.host == root_host else hello[self.rank][1]
        try:
            for iteration in range(self.spec.iterations):
                for index, phase in enumerate(self.spec.phases):
                    self._prepare(iteration, index, phase)
                    if self.spec.synchronized or (iteration == 0 and index == 0):
                        self._collective(None)
                    record = self._phase(iteration, phase)
                    if self.spec.synchronized:
                        self._end_of_phase([record])
                    else:
                        self.pending.append(record)
                self._remove_iteration_files(iteration)
            if not self.spec.synchronized:
                self._end_of_phase(self.pending)
        finally:
            for buffer in self.buffers.values():
                buffer.close()

    def _collective(self, payload: Any) -> list[Any]:
        gathered = self.comm.gather(payload)
        self.comm.record(gathered)
        return gathered

    def _end_of_phase(self, records: list[RankPhase]) -> None:
        gathered = self._collective(("end", self.failure, records))
        failures = [entry[1] for entry in gathered if entry and entry[0] == "end" and entry[1]]
        if failures:
            reason, kind = failures[0]
            raise RankStopped(reason, kind)

    def _now(self) -> float:
        return time.perf_counter() - self.origin

    # -- failures ---------------------------------------------------------------------
    def _fail(self, exc: BaseException, what: str) -> None:
        if self.failure is not None:
            return
        if isinstance(exc, RunAborted):
            self.failure = (f"rank {self.rank}: {exc}", "interrupted")
            return
        assert isinstance(exc, OSError)
        name = errno.errorcode.get(exc.errno or 0, "error")
        self.failure = (f"rank {self.rank}: {what}: {exc.strerror or exc} ({name})", name)

    def _check(self, label: str, count: int) -> None:
        """Between operations: the stop flag and the fault hook."""
        if count % _STOP_CHECK_EVERY == 0 and self.comm.stop_requested():
            raise RunAborted("interrupted")
        self.hook(label, count)

    def hook(self, label: str, count: int) -> None:
        """The ``SIMFS_RUNNER_FAULT`` test hook (module docstring), if it is for here."""
        if not self.fault or self.fault[0] != label or (self.fault[1] != count and label != "exit"):
            return
        code = self.fault[2]
        if code == _KILL:
            os.kill(os.getpid(), signal.SIGKILL)
        if code in (_INTERRUPT, _PAUSE):
            if code == _INTERRUPT:
                os.kill(os.getppid(), signal.SIGINT)
            else:
                touch_flag()
            deadline = time.monotonic() + _HOOK_WAIT_S  # a hang guard, not a timing
            while not self.comm.stop_requested() and time.monotonic() < deadline:
                time.sleep(0.005)
            if label == "exit":
                return  # the run is over: the signal came after it
            raise RunAborted("interrupted")
        raise OSError(code, os.strerror(code))

    # -- data phases ------------------------------------------------------------------
    def _phase(self, iteration: int, phase: PhaseSpec) -> RankPhase:
        record = RankPhase(self.rank, self.comm.host, iteration, phase.label, phase.op)
        if self.delay_s:
            time.sleep(self.delay_s)
        if phase.is_metadata:
            self._metadata_phase(iteration, phase, record)
        else:
            self._data_phase(iteration, phase, record)
        return record

    def _data_file(self, phase: PhaseSpec, owner: int) -> Path:
        tool = self.spec.tool
        if tool == "ior":
            name = ior_file_name(self.spec)
            return self.run_dir / (name if phase.shared_file else f"{name}.{owner:08d}")
        stem = "bonnie" if tool == "bonnie++" else tool
        return self.run_dir / f"{stem}.{owner:08d}"

    def _buffer(self, size: int) -> mmap.mmap:
        """A page-aligned buffer (O_DIRECT needs alignment) of random bytes, so that a
        compressing or deduplicating layer stores what it is given (a 16 MiB random
        pattern, repeated in larger transfers); zeros for dd from /dev/zero."""
        if size not in self.buffers:
            buffer = mmap.mmap(-1, max(size, 1))  # an anonymous map starts zeroed
            self.buffers[size] = buffer
            if self.zeros:
                return buffer
            pattern = os.urandom(min(size, 16 << 20))
            for start in range(0, size, len(pattern) or 1):
                buffer[start : start + len(pattern)] = pattern[: size - start]
        return self.buffers[size]

    def _open_flags(self, op: str, direct: bool, existing: bool = False) -> int:
        # IOR -E writes into the file that is there, and fails as IOR does where there is none.
        create = 0 if existing else os.O_CREAT
        flags = {"write": os.O_WRONLY | create, "read": os.O_RDONLY, "rewrite": os.O_RDWR}[op]
        return flags | (os.O_DIRECT if direct else 0)

    def _data_phase(self, iteration: int, phase: PhaseSpec, record: RankPhase) -> None:
        # The view is released however the phase ends: an exception's traceback keeps
        # this frame, and a live view of the buffer made run()'s close of it raise
        # BufferError in place of the exception that stopped the rank.
        with memoryview(self._buffer(phase.transfer_size_bytes)) as view:
            self._data_phase_through(iteration, phase, record, view)

    def _data_phase_through(self, iteration: int, phase: PhaseSpec, record: RankPhase, view: memoryview) -> None:
        owner = phase.data_owner(self.rank, self.plan.ppn, self.plan.ranks)
        path = self._data_file(phase, owner)
        count, offsets = transfer_offsets(phase, owner, self.plan.ranks, iteration)
        fd = -1
        record.open_start = self._now()
        if self.failure is None:
            try:
                self._check(phase.label, 0)
                fd = os.open(path, self._open_flags(phase.op, phase.direct, phase.existing_file), 0o644)
            except (OSError, RunAborted) as exc:
                self._fail(exc, f"open {path}")
        record.open_end = self._now()
        if self.spec.intra_phase_barriers:
            self._collective(None)
        record.xfer_start = self._now()
        deadline = record.xfer_start + phase.stonewall_s if phase.stonewall_s else None
        moved, done = self._transfers(fd, phase, path, offsets, view, record, 0, count, deadline)
        if phase.wear_out:
            # IOR's wear-out: everyone goes on to the count of the rank that did most.
            most = max(entry for entry in self._collective(done))
            more, done = self._transfers(fd, phase, path, offsets, view, record, done, most)
            moved += more
        record.xfer_end = self._now()
        if self.spec.intra_phase_barriers:
            self._collective(None)
        record.close_start = self._now()
        if fd >= 0:
            try:
                if phase.fsync and phase.op != "read" and self.failure is None:
                    os.fsync(fd)
            except OSError as exc:
                self._fail(exc, f"fsync {path}")
            finally:
                os.close(fd)
        record.close_end = self._now()
        record.bytes = moved if phase.op != "rewrite" else moved // 2
        record.ops = done

    def _transfers(
        self,
        fd: int,
        phase: PhaseSpec,
        path: Path,
        offsets: Iterator[int],
        view: memoryview,
        record: RankPhase,
        done: int,
        until: int,
        deadline: float | None = None,
    ) -> tuple[int, int]:
        """Transfers ``done`` to ``until`` (the next offsets of ``offsets``), stopping at
        ``deadline``: the bytes moved and the new count (a failure is kept, not raised)."""
        moved = 0
        if self.failure is not None:
            return moved, done
        try:
            while done < until:
                if deadline is not None and self._now() >= deadline:
                    record.pairs_at_deadline = done
                    break
                self._check(phase.label, done + 1)
                if self.pace_s:
                    time.sleep(self.pace_s)
                offset = next(offsets)
                start = self._now() if self.plan.trace_ops else 0.0
                moved += self._transfer(fd, phase.op, offset, view)
                if self.plan.trace_ops:
                    record.samples.append((offset, phase.transfer_size_bytes, start, self._now() - start))
                done += 1
        except (OSError, RunAborted) as exc:
            self._fail(exc, f"{phase.op} {path}")
        return moved, done

    def _transfer(self, fd: int, op: str, offset: int, view: memoryview) -> int:
        """One transfer at ``offset``; bytes moved (a rewrite counts both ways)."""
        size = len(view)
        if op == "write":
            return _write_all(fd, view, offset)
        got = os.preadv(fd, [view], offset)
        if got < size:
            raise OSError(
                errno.EIO, f"short read at offset {offset}: {got} of {size} bytes (file shorter than written)"
            )
        if op == "read":
            return got
        return got + _write_all(fd, view, offset)

    def _prepare(self, iteration: int, index: int, phase: PhaseSpec) -> None:
        """Untimed set-up a phase needs that no earlier phase of the iteration made."""
        earlier = self.spec.phases[:index]
        if phase.is_metadata:
            kind = _item_kind(phase)
            made = any(p.op == "create" and _item_kind(p) == kind for p in earlier)
            try:
                # Not parents=True: that would make the run directory again if it was
                # removed under this rank (its coordinator gone, another rank cleaning up).
                self._item_directory(iteration, phase).parent.mkdir(exist_ok=True)
                self._item_directory(iteration, phase).mkdir(exist_ok=True)
                self._make_tree(iteration, phase)
                if phase.op != "create" and not made:
                    for path in self._item_paths(iteration, phase):
                        if kind == "dir":
                            path.mkdir(exist_ok=True)
                        else:
                            _write_item(path, b"\0" * phase.transfer_size_bytes if phase.bytes_per_rank else b"")
            except OSError as exc:
                self._fail(exc, f"preparing {phase.label} in {self._item_directory(iteration, phase)}")
            return
        if phase.op in ("read", "rewrite") and not any(p.op == "write" for p in earlier):
            own = PhaseSpec(
                "write",
                phase.bytes_per_rank,
                phase.transfer_size_bytes,
                shared_file=phase.shared_file,
                segment_count=phase.segment_count,
                fsync=True,
                label=f"prepare {phase.label}",
            )
            # A failure here is kept and reported at the end of the phase, like any other.
            self._data_phase(iteration, own, RankPhase(self.rank, self.comm.host, iteration, own.label, "write"))

    def _remove_iteration_files(self, iteration: int) -> None:
        """IOR removes its files after each iteration; so does the runner, so that
        iterations start alike and the disk holds one iteration's data at most."""
        if self.spec.tool == "mdtest":
            return
        own = self._data_file(self.spec.phases[0], self.rank)
        if not self.spec.phases[0].shared_file or self.rank == 0:
            own.unlink(missing_ok=True)

    # -- metadata phases (mdtest) -----------------------------------------------------
    def _item_directory(self, iteration: int, phase: PhaseSpec) -> Path:
        base = self.run_dir / f"mdtest.{iteration}"
        return base / "shared" if phase.shared_directory else base / f"rank.{self._item_owner(phase)}"

    def _make_tree(self, iteration: int, phase: PhaseSpec) -> None:
        """mdtest's tree (``-z -b -I``) in the item directory, untimed: mdtest times it as
        a phase of its own (Tree creation), which neither simfs nor this runner reports."""
        tree = phase.directory_tree
        if tree is None:
            return
        top = self._item_directory(iteration, phase)
        for holder in range(tree.loops * tree.holders_per_tree):
            path = top
            for part in tree.path(holder).split("/"):
                path = path / part
                path.mkdir(exist_ok=True)  # ranks sharing the tree make it together

    def _item_owner(self, phase: PhaseSpec) -> int:
        """The rank whose items this rank works on (itself, or ``-N`` ranks on)."""
        return phase.data_owner(self.rank, self.plan.ppn, self.plan.ranks)

    def _item_count(self, iteration: int, phase: PhaseSpec) -> int:
        # After a stonewalled create (mdtest -W), the later file phases work on the items made.
        if _item_kind(phase) == "dir":
            return phase.items_per_rank
        return self.mdtest_items.get(iteration, phase.items_per_rank)

    def _item_path(self, iteration: int, phase: PhaseSpec) -> Callable[[int], Path]:
        """Item ``index``'s path (made one at a time: an IO500 run has a million per rank)."""
        directory = self._item_directory(iteration, phase)
        prefix = f"{_item_kind(phase)}.mdtest.{self._item_owner(phase)}."
        tree = phase.directory_tree
        if tree is None:
            return lambda index: directory / f"{prefix}{index}"
        return lambda index: directory / tree.path(index // tree.items_per_directory) / f"{prefix}{index}"

    def _item_paths(self, iteration: int, phase: PhaseSpec) -> Iterator[Path]:
        path_of = self._item_path(iteration, phase)
        return (path_of(index) for index in range(self._item_count(iteration, phase)))

    def _metadata_phase(self, iteration: int, phase: PhaseSpec, record: RankPhase) -> None:
        kind = _item_kind(phase)
        stonewalled = bool(phase.stonewall_s) and phase.op == "create" and kind == "file"
        count = phase.items_per_rank if stonewalled else self._item_count(iteration, phase)
        path_of = self._item_path(iteration, phase)
        data = (
            bytes(self._buffer(phase.transfer_size_bytes)[: phase.transfer_size_bytes]) if phase.bytes_per_rank else b""
        )
        record.open_start = record.open_end = record.xfer_start = self._now()
        deadline = record.xfer_start + phase.stonewall_s if stonewalled else None
        done = self._items(phase, kind, path_of, data, record, 0, count, deadline)
        if stonewalled:
            if done < count:
                record.pairs_at_deadline = done
                record.deadline_s = self._now() - record.xfer_start
            # mdtest's MPI_Allreduce of the counts, then every rank goes on to the most.
            most = max(self._collective(done))
            self.mdtest_items[iteration] = most
            done = self._items(phase, kind, path_of, data, record, done, most)
        record.xfer_end = record.close_start = record.close_end = self._now()
        record.ops = done
        record.bytes = done * len(data)

    def _items(
        self,
        phase: PhaseSpec,
        kind: str,
        path_of: Callable[[int], Path],
        data: bytes,
        record: RankPhase,
        done: int,
        until: int,
        deadline: float | None = None,
    ) -> int:
        """Items ``done`` to ``until`` (none started at or after ``deadline``, in this
        rank's clock); returns how many are done."""
        try:
            while done < until and self.failure is None:
                if deadline is not None and self._now() >= deadline:
                    break
                self._check(phase.label, done + 1)
                start = self._now() if self.plan.trace_ops else 0.0
                _item_operation(phase.op, kind, path_of(done), data)
                if self.plan.trace_ops:
                    record.samples.append((done, len(data), start, self._now() - start))
                done += 1
        except (OSError, RunAborted) as exc:
            self._fail(exc, f"{phase.label} {path_of(done)}")
        return done


def ior_file_name(spec: WorkloadSpec) -> str:
    """IOR's test file name in the run directory: the last part of ``-o``, or IOR's default."""
    return Path(str(spec.options.get("path") or "testFile")).name


def _item_kind(phase: PhaseSpec) -> str:
    return "dir" if phase.label.startswith("dir") else "file"


def _item_operation(op: str, kind: str, path: Path, data: bytes) -> None:
    if op == "create":
        if kind == "dir":
            os.mkdir(path)
        else:
            _write_item(path, data)
    elif op == "stat":
        os.stat(path)
    elif op == "read":
        fd = os.open(path, os.O_RDONLY)
        try:
            if data:
                os.read(fd, len(data))
        finally:
            os.close(fd)
    elif op == "remove":
        if kind == "dir":
            os.rmdir(path)
        else:
            os.unlink(path)
    else:  # pragma: no cover - the mdtest parser makes only these
        raise ValueError(f"op: no metadata operation {op!r}")


def _write_item(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        if data:
            _write_all(fd, memoryview(data), 0)
    finally:
        os.close(fd)


def _write_all(fd: int, view: memoryview, offset: int) -> int:
    written = 0
    while written < len(view):
        count = os.pwrite(fd, view[written:], offset + written)
        if count == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written += count
    return written


def _pace_hook() -> float:
    text = os.environ.get("SIMFS_RUNNER_PACE", "")
    try:
        seconds = float(text) if text else 0.0
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise ValueError(f"SIMFS_RUNNER_PACE: expected seconds >= 0, got {text!r}")
    return seconds


def _delay_hook(rank: int) -> float:
    text = os.environ.get("SIMFS_RUNNER_DELAY", "")
    if not text:
        return 0.0
    target, _, seconds = text.partition(":")
    return float(seconds) if int(target) == rank else 0.0


def _fault_hook(rank: int) -> tuple[str, int, int] | None:
    text = os.environ.get("SIMFS_RUNNER_FAULT", "")
    if not text:
        return None
    target, label, count, name = text.split(":")
    if int(target) != rank:
        return None
    return label, int(count), _ACTIONS[name] if name in _ACTIONS else getattr(errno, name)


def start_fault(rank: int) -> OSError | None:
    """The error the ``R:start:0:ERRNO`` hook makes starting rank ``rank`` fail with."""
    fault = _fault_hook(rank)
    if fault is None or fault[0] != "start":
        return None
    return OSError(fault[2], os.strerror(fault[2]))


#: The fault hook's codes for what is not an errno (no errno is negative).
_KILL, _INTERRUPT, _PAUSE = -9, -2, -100
_ACTIONS = {"SIGKILL": _KILL, "SIGINT": _INTERRUPT, "PAUSE": _PAUSE}
#: How long a hook waits for the stop at most.
_HOOK_WAIT_S = 60.0
