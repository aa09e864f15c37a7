"""Reading a user's text input (a profile, a case file, a benchmark result) safely.

A path a user gives can be anything: a directory, a FIFO that blocks a reader forever, a
device such as ``/dev/zero`` that never ends, a file in another encoding, a symlink
loop.  :func:`read_text_file` opens without blocking and checks what it opened (the
path may have changed since anyone looked at it), reads at most a stated size, and
turns each of these into one line naming the file and what was expected.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from simfs.errors import SimfsError

MIB = 1 << 20
#: Largest text input read by default: a profile or a case file is a few kilobytes.
DEFAULT_LIMIT_BYTES = 16 * MIB


def file_kind(mode: int) -> str:
    """What a non-regular file is, for a message (``a FIFO``)."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def read_text_file(
    path: str | Path,
    *,
    what: str = "a text file",
    kind: str = "a text file",
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    error: type[SimfsError] = SimfsError,
    hint: str = "",
) -> str:
    """The UTF-8 text of the regular file ``path``; ``error`` with one line otherwise.

    ``what`` is what the caller expected (``"expected a results file"``), ``kind`` what
    the text must be (``"a text result"``: the size limit and the encoding are its);
    ``hint`` ends the message about a file that is not UTF-8.
    """
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)  # a directory cannot even be wrapped in a file object
        raise error(f"{path}: not a regular file ({file_kind(info.st_mode)}): expected {what}")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > limit_bytes:
            raise error(f"{path}: {_too_large(info.st_size, limit_bytes, kind)}")
        try:
            data = handle.read(limit_bytes + 1)
        except OSError as exc:
            raise error(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > limit_bytes:  # it grew while being read
        raise error(f"{path}: {_too_large(len(data), limit_bytes, kind)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}): not {kind}{hint}") from None


def _too_large(size: int, limit_bytes: int, kind: str) -> str:
    limit = f"{limit_bytes // MIB} MiB" if limit_bytes % MIB == 0 else f"{limit_bytes:,} bytes"
    return f"{size} bytes: more than the {limit} limit for {kind}"


def edit_distance(first: str, second: str) -> int:
    """Optimal string alignment distance (Levenshtein with swaps of neighbours): how many
    insertions, deletions, substitutions and swaps of neighbouring letters make ``second``
    of ``first``.  A typo is one or two."""
    previous2: list[int] = []
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]
