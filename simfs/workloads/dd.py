"""GNU dd command lines, as the CRT-DC seed runs them.

Forms (seed ``000_cd5f2d1d7b196eec.txt``, "dd writing/reading a 50GB file")::

    dd if=/dev/zero of=$DIR/XX1 bs=1024000 count=50000     # write
    dd of=/dev/zero if=$DIR/XX1 bs=1024000 count=50000     # read (to a sink device)
    dd bs=1024000 count=50000                              # the seed's pair: write, then read

The data side is whichever operand is not a device (``/dev/zero``, ``/dev/null``,
``/dev/urandom``).  Supported operands: ``if of bs count conv oflag iflag``; ``conv``
accepts ``fsync``, ``fdatasync`` and ``notrunc``; ``oflag``/``iflag`` accept ``direct``.
Anything else is an error naming the operand.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.units import parse_dd_size
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_DEVICES = {"/dev/zero", "/dev/null", "/dev/urandom", "/dev/random"}
_OPERANDS = {"if", "of", "bs", "count", "conv", "oflag", "iflag"}
_CONV = {"fsync", "fdatasync", "notrunc"}
_FLAGS = {"direct"}


def parse_dd(args: list[str], command: str) -> WorkloadSpec:
    operands: dict[str, str] = {}
    for arg in args:
        if "=" not in arg:
            raise WorkloadError(f"dd: unsupported argument {arg!r}: expected OPERAND=VALUE")
        name, value = arg.split("=", 1)
        if name not in _OPERANDS:
            supported = " ".join(sorted(_OPERANDS))
            raise WorkloadError(f"dd: unsupported operand {name!r} (simfs supports: {supported})")
        if name in operands:
            raise WorkloadError(f"dd: operand {name!r} given twice")
        operands[name] = value

    block_size = _size(operands, "bs", "512")
    if "count" not in operands:
        raise WorkloadError("dd: count= is required (simfs does not copy to end of device)")
    count = _size(operands, "count", "0")
    if block_size <= 0:
        raise WorkloadError(f"dd: bs={operands.get('bs')}: expected a positive size")
    if count <= 0:
        raise WorkloadError(f"dd: count={operands['count']}: expected a positive count")

    conv = _words(operands.get("conv", ""), _CONV, "conv")
    oflag = _words(operands.get("oflag", ""), _FLAGS, "oflag")
    iflag = _words(operands.get("iflag", ""), _FLAGS, "iflag")
    fsync = bool(conv & {"fsync", "fdatasync"})
    source, sink = operands.get("if"), operands.get("of")
    total = block_size * count

    write = PhaseSpec("write", total, block_size, fsync=fsync, direct="direct" in oflag)
    read = PhaseSpec("read", total, block_size, direct="direct" in iflag)
    if source is None and sink is None:
        phases: tuple[PhaseSpec, ...] = (write, read)
    elif sink is not None and sink not in _DEVICES and (source is None or source in _DEVICES):
        phases = (write,)
    elif source is not None and source not in _DEVICES and (sink is None or sink in _DEVICES):
        if fsync:
            raise WorkloadError("dd: conv=fsync applies to writes; this dd only reads")
        phases = (read,)
    else:
        raise WorkloadError(
            f"dd: if={source} of={sink}: expected one file and one device "
            "(/dev/zero, /dev/null), or neither for a write-then-read pair"
        )
    options = {"bs": block_size, "count": count, "if": source, "of": sink}
    return WorkloadSpec("dd", command, phases, aggregate="sum_of_ranks", options=options)


def _size(operands: dict[str, str], name: str, default: str) -> int:
    text = operands.get(name, default)
    try:
        return parse_dd_size(text)
    except ValueError:
        raise WorkloadError(f"dd: {name}={text}: invalid number") from None


def _words(text: str, allowed: set[str], operand: str) -> set[str]:
    words = {w for w in text.split(",") if w}
    unknown = words - allowed
    if unknown:
        raise WorkloadError(
            f"dd: {operand}={text}: unsupported {', '.join(sorted(unknown))} "
            f"(simfs supports: {', '.join(sorted(allowed))})"
        )
    return words
