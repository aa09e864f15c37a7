"""Where a live run writes: a fresh subdirectory of ``--dir``, checked before anything else.

The runner refuses, with one line naming the directory and the reason:

* ``/`` itself (a typo away from filling the root file system);
* a directory that does not exist, is not a directory, or it cannot write in (checked by
  making the run's subdirectory, not by permission bits, which root and ACLs bypass);
* a workload whose files would not fit in the free space (``statvfs``: the bytes one
  iteration leaves on disk at most, each file rounded up to whole blocks).  Inodes are
  not counted ahead: Lustre, XFS and Btrfs allocate them as they go, so their free
  counts say little.

The subdirectory is ``simfs-<host>-<pid>-<time>``; it and everything in it are removed at
the end unless the user asks to keep them, and always after a failure.
"""

from __future__ import annotations

import errno
import math
import os
import shutil
import socket
import time
from pathlib import Path

from simfs.errors import SimfsError
from simfs.units import format_bytes
from simfs.workloads.spec import WorkloadSpec

#: Walks of the run directory before giving up on a directory others keep changing.
_REMOVE_ATTEMPTS = 50


class TargetError(SimfsError):
    """The target directory cannot take this run."""


def footprint_bytes(spec: WorkloadSpec, ranks: int, block_bytes: int) -> int:
    """Bytes one iteration leaves on the target at its fullest (files rounded up to blocks).

    Data phases of one iteration share their files (a read reads what the write wrote),
    so the largest phase counts once; mdtest's items add up over its create phases.
    """

    def blocks(size: float) -> int:
        return math.ceil(size / block_bytes) * block_bytes if size else 0

    data = 0
    items = 0
    for phase in spec.phases:
        if phase.is_metadata:
            if phase.op == "create":
                items += ranks * phase.items_per_rank * blocks(phase.bytes_per_rank / phase.items_per_rank)
            continue
        if phase.shared_file:
            data = max(data, blocks(phase.bytes_per_rank * ranks))
        else:
            data = max(data, ranks * blocks(phase.bytes_per_rank))
    return data + items


def check_directory(directory: str | Path) -> Path:
    """``--dir`` resolved, or a TargetError."""
    try:
        resolved = Path(directory).expanduser().resolve(strict=True)
    except FileNotFoundError:
        raise TargetError(f"--dir {directory}: no such directory") from None
    except OSError as exc:
        raise TargetError(f"--dir {directory}: cannot use it ({exc.strerror})") from None
    except RuntimeError as exc:
        # Python before 3.13 reports a symlink loop (and ~user without a home) this way.
        reason = "a symlink loop" if "loop" in str(exc).lower() else str(exc)
        raise TargetError(f"--dir {directory}: cannot use it ({reason})") from None
    if resolved == Path("/"):
        raise TargetError(f"--dir {directory}: refusing to write into / (give a directory below it)")
    if not resolved.is_dir():
        raise TargetError(f"--dir {directory}: not a directory")
    return resolved


def check_space(directory: Path, spec: WorkloadSpec, ranks: int) -> tuple[int, int]:
    """(bytes the run needs, bytes free), or a TargetError if it does not fit."""
    stats = os.statvfs(directory)
    block = stats.f_frsize or stats.f_bsize or 4096
    free = stats.f_bavail * block
    needed = footprint_bytes(spec, ranks, block)
    if needed > free:
        raise TargetError(
            f"--dir {directory}: the run needs {format_bytes(needed)} and only {format_bytes(free)} is free "
            f"({ranks} ranks of {spec.command!r})"
        )
    return needed, free


def make_run_directory(directory: Path) -> Path:
    """Create the run's fresh subdirectory; a TargetError if the user cannot write here."""
    name = f"simfs-{socket.gethostname()}-{os.getpid()}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = directory / name
    try:
        run_dir.mkdir(mode=0o755)
    except FileExistsError:
        raise TargetError(f"--dir {directory}: {name} exists already (another run of this process?)") from None
    except OSError as exc:
        raise TargetError(f"--dir {directory}: cannot write here ({exc.strerror})") from None
    return run_dir


def remove_run_directory(run_dir: Path) -> str | None:
    """Remove the run's subdirectory and everything in it; a reason if something stayed.

    Other processes may be removing it at the same time (the ranks of a run whose
    coordinator was killed each clean up, and under MPI so does rank 0): an entry that
    vanishes under the walk, or appears in it, means walk again, not failure.
    """
    for _ in range(_REMOVE_ATTEMPTS):
        try:
            shutil.rmtree(run_dir)
            return None
        except FileNotFoundError:
            if not os.path.lexists(run_dir):
                return None
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:
                return f"{exc.filename or run_dir}: {exc.strerror}"
        time.sleep(0.01)  # another process is still at work in it; give it a moment
    return f"{run_dir}: still changing after {_REMOVE_ATTEMPTS} attempts to remove it"
