"""Option values shared by the workload parsers: sizes with k/m/g/t suffixes and counts,
each failure a WorkloadError naming the tool and the option as the user wrote it."""

from __future__ import annotations

from collections.abc import Callable, Collection

from simfs.errors import WorkloadError
from simfs.units import parse_ior_size


def parse_size(tool: str, shown: str, text: str, *, allow_zero: bool = False) -> int:
    """``text`` as bytes (``4k``, ``1m``, ``4096``); ``shown`` is the option as written
    (``"-t 4q"``, ``"rsz=4q"``)."""
    try:
        size = parse_ior_size(text)
    except ValueError as exc:
        raise WorkloadError(f"{tool}: {shown}: {exc}") from None
    if size < 0 or (size == 0 and not allow_zero):
        raise WorkloadError(f"{tool}: {shown}: expected a {'non-negative' if allow_zero else 'positive'} size")
    return size


#: The largest count a tool takes: the C ``int`` most of them store it in (IOR's ``-D``,
#: mdtest's ``-N`` and ``-n`` before 64-bit builds, bonnie++'s ``-r``).
MAX_COUNT = 2**31 - 1


def parse_count(tool: str, shown: str, text: str, *, maximum: int = MAX_COUNT) -> int:
    """``text`` as a positive integer no larger than ``maximum``."""
    if not text.isdigit() or int(text) < 1:
        raise WorkloadError(f"{tool}: {shown}: expected a positive integer")
    if int(text) > maximum:
        raise WorkloadError(f"{tool}: {shown}: expected at most {maximum:,}")
    return int(text)


def scan_options(
    tool: str,
    args: list[str],
    flags: set[str],
    valued: set[str],
    *,
    ignored: Collection[str] = (),
    check_value: Callable[[str, str], None] | None = None,
    unknown: Callable[[str], None] | None = None,
) -> tuple[set[str], dict[str, str]]:
    """getopt-style scan of a tool's command line: the ``flags`` present and the value of
    each ``valued`` option (``-n 10`` or ``-n10``; the last one given wins, each one is
    passed to ``check_value`` first).  ``ignored`` options (verbosity) are skipped.
    Anything else goes to ``unknown``, which must raise; without it, a WorkloadError names
    the option and the module with the supported subset."""
    seen: set[str] = set()
    values: dict[str, str] = {}
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg in flags:
            seen.add(arg)
        elif arg in ignored:
            continue
        elif arg[:2] in valued and not arg.startswith("--"):
            name, value = arg[:2], arg[2:]
            if not value:
                if position >= len(args):
                    raise WorkloadError(f"{tool}: option {name} needs a value")
                value = args[position]
                position += 1
            if check_value is not None:
                check_value(name, value)
            values[name] = value
        elif unknown is not None:
            unknown(arg)
            raise AssertionError(f"{tool}: the unknown-option handler returned for {arg!r}")
        else:
            module = tool.rstrip("+")
            raise WorkloadError(f"{tool}: unsupported option {arg!r} (see simfs.workloads.{module} for the subset)")
    return seen, values
