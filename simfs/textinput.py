"""Reading a user's text input (a profile, a case file) safely.

A path a user gives can be anything: a directory, a FIFO that blocks a reader forever, a
device such as ``/dev/zero`` that never ends, a file in another encoding, a symlink
loop.  :func:`read_text_file` checks what the path is before opening it, reads at most
a stated size, and turns each of these into one line naming the file and what was
expected.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from simfs.errors import SimfsError

#: Largest text input read by default: a profile or a case file is a few kilobytes.
DEFAULT_LIMIT_BYTES = 16 * 1024 * 1024


def read_text_file(
    path: str | Path,
    *,
    what: str = "file",
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    error: type[SimfsError] = SimfsError,
) -> str:
    """The UTF-8 text of the regular file ``path``; ``error`` with one line otherwise.

    ``what`` names the input in the message (``"a profile"``).
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{path}: a symbolic link loop; expected {what}") from None
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: is a directory; expected {what}")
    if not stat.S_ISREG(info.st_mode):
        # Opening a FIFO blocks until a writer comes; a device may never end.
        raise error(f"{path}: not a regular file (a FIFO, device or socket); expected {what}")
    if info.st_size > limit_bytes:
        raise error(f"{path}: {info.st_size:,} bytes; {what} is at most {limit_bytes:,} bytes")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit_bytes + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > limit_bytes:  # it grew while we looked
        raise error(f"{path}: more than {limit_bytes:,} bytes; {what} is at most {limit_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            f"expected {what} in UTF-8"
        ) from None
