"""Option values shared by the workload parsers: sizes with k/m/g/t suffixes and counts,
each failure a WorkloadError naming the tool and the option as the user wrote it."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from simfs.errors import WorkloadError
from simfs.textinput import edit_distance
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


@dataclass(frozen=True)
class NoIoOptions:
    """A tool's options that change nothing timed: ``flags``, ``valued`` options (``-G
    27``, ``-G27``, ``-G=27``) and ``long`` ones (``--dataPacketType=timestamp``, by name)."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    long: frozenset[str] = frozenset()


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def scan_options(
    tool: str,
    args: list[str],
    flags: set[str],
    valued: set[str],
    *,
    ignored: Collection[str] = (),
    no_io: NoIoOptions | None = None,
    check_value: Callable[[str, str], None] | None = None,
    unknown: Callable[[str], None] | None = None,
    backend_options: list[str] | None = None,
) -> tuple[set[str], dict[str, str]]:
    """getopt-style scan of a tool's command line: the ``flags`` present and the value of
    each ``valued`` option (``-n 10``, ``-n10`` or, as IOR 4 and mdtest 4 also take it,
    ``-n=10``; the last one given wins, each one is passed to ``check_value`` first).
    ``ignored`` flags (verbosity) and the ``no_io`` options (with their values) are
    skipped: options that do not change the I/O (output, verification, bookkeeping; each
    tool's module lists them).  An option of one of the tools' I/O backends
    (``--dfs.pool=P``, ``--dfs.cont C``, ``--posix.gpfs.finegrainwritesharing``) is
    appended by name to ``backend_options`` when that list is given, and is an error
    otherwise.  Anything else goes to ``unknown``, which must raise; without it, a
    WorkloadError names the option and the module with the supported subset."""
    no_io = no_io or NoIoOptions()
    seen: set[str] = set()
    values: dict[str, str] = {}
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        name, equals, setting = arg.partition("=")
        if arg in flags:
            seen.add(arg)
        elif arg.startswith("--") and equals and name in flags:
            # A long flag with a value (``--posix.odirect=TRUE``, as IOR takes it).
            if setting.lower() not in _TRUE | _FALSE:
                raise WorkloadError(f"{tool}: {arg}: expected {name}, or {name}=TRUE / FALSE")
            if setting.lower() in _TRUE:
                seen.add(name)
        elif arg in ignored or arg in no_io.flags or (arg.startswith("--") and name[2:] in no_io.long):
            continue
        elif arg[:2] in no_io.valued and not arg.startswith("--"):
            if len(arg) == 2:
                position += 1
        elif arg[:2] in valued and not arg.startswith("--"):
            name, value = arg[:2], arg[2:].removeprefix("=")
            if not value:
                if position >= len(args):
                    raise WorkloadError(f"{tool}: option {name} needs a value")
                value = args[position]
                position += 1
            if check_value is not None:
                check_value(name, value)
            values[name] = value
        elif arg.startswith("--") and "." in name:
            if backend_options is None:
                raise WorkloadError(_backend_option(tool, arg))
            _check_posix_spelling(tool, name)
            backend_options.append(name)
            # IOR and mdtest take no operands, so a word after a backend option is its value.
            if not equals and position < len(args) and not args[position].startswith("-"):
                position += 1
        elif not arg.startswith("-") and position > 1 and args[position - 2] in {*flags, *ignored, *no_io.flags}:
            # A word where an option was expected: the flag before it takes no value
            # (``ior -x 5``), and these tools take no operands.
            raise WorkloadError(f"{tool}: {arg!r} after {args[position - 2]}: that option takes no value")
        elif unknown is not None:
            unknown(arg)
            raise AssertionError(f"{tool}: the unknown-option handler returned for {arg!r}")
        else:
            module = tool.rstrip("+")
            raise WorkloadError(f"{tool}: unsupported option {arg!r} (see simfs.workloads.{module} for the subset)")
    return seen, values


#: POSIX backend options of IOR and mdtest that the IO500 archive's command lines use
#: (``--posix.odirect``, IOR 3.3 on, is a flag of its own; the GPFS hints are noted).
POSIX_BACKEND_OPTIONS = (
    "--posix.odirect",
    "--posix.gpfs.finegrainwritesharing",
    "--posix.gpfs.finegrainreadsharing",
    "--posix.gpfs.createsharing",
)


def _check_posix_spelling(tool: str, name: str) -> None:
    """A ``--posix.`` option a letter or two (:func:`~simfs.textinput.edit_distance`) from
    one of :data:`POSIX_BACKEND_OPTIONS` is a typo, not a hint of a backend simfs leaves to
    it: IOR itself refuses it, and taking it as a hint would run (or simulate) buffered I/O
    where ``--posix.odirect`` was meant.  Others (``--posix.lustre.stripecount``) are hints."""
    if not name.startswith("--posix.") or name in POSIX_BACKEND_OPTIONS:
        return
    near = [known for known in POSIX_BACKEND_OPTIONS if edit_distance(name, known) <= 2]
    if near:
        raise WorkloadError(f"{tool}: unknown option {name} (did you mean {near[0]}?)")


def _backend_option(tool: str, arg: str) -> str:
    """The error for an option of one of IOR's and mdtest's I/O backends (``--dfs.pool``,
    ``--posix.gpfs.hintsFile``) given to another tool, which has no backends."""
    name = arg.partition("=")[0]
    backend = name[2:].split(".")[0]
    return f"{tool}: {name}: an option of IOR's and mdtest's {backend.upper()} backend; {tool} takes none"


#: IOR's and mdtest's backends that are another client of a file system (file for file,
#: byte for byte what POSIX would do): simulated as POSIX I/O with a note.  I/O libraries
#: with formats of their own (HDF5, NCMPI) and object stores (S3, RADOS) are refused.
FILE_SYSTEM_INTERFACES = frozenset({"DFS", "IME", "CHFS", "GFARM", "CEPHFS", "MMAP", "AIO"})


def interface_notes(tool: str, api: str, modelled: Collection[str], backend_options: list[str]) -> tuple[str, ...]:
    """What a command line's interface options leave out of the simulation, one line each:
    an ``-a`` interface simfs has no model of (DAOS's DFS, DDN's IME, CHFS, Gfarm: their
    accesses are simulated as the same POSIX I/O through the system's clients) and the
    options of any backend, grouped by backend (``--dfs.oclass=SX``, GPFS hints).  An
    interface that is not a file system's client (``-a HDF5``) is a WorkloadError."""
    notes = []
    if api.upper() not in modelled and api.upper() not in FILE_SYSTEM_INTERFACES:
        raise WorkloadError(
            f"{tool}: -a {api}: simfs models {', '.join(modelled)} and simulates the file-system clients "
            f"{', '.join(sorted(FILE_SYSTEM_INTERFACES))} as POSIX; not I/O libraries or object stores"
        )
    if api.upper() not in modelled:
        notes.append(
            f"{tool} -a {api}: the {api} interface is not modelled; its accesses are simulated as the "
            "same POSIX I/O through the system's clients"
        )
    by_backend: dict[str, list[str]] = {}
    for name in backend_options:
        by_backend.setdefault(name[2:].split(".")[0], []).append(name)
    for backend, names in by_backend.items():
        listed = ", ".join(dict.fromkeys(names))
        if backend.upper() in (api.upper(), "POSIX", "MPIIO"):
            what = "hints" if backend in ("posix", "mpiio") else "options"
            notes.append(f"{tool} {listed}: {backend.upper()} backend {what}, not modelled")
        else:  # IOR takes every backend's options and leaves them to their backend
            notes.append(f"{tool} {listed}: options of the {backend.upper()} backend, which -a {api} does not use")
    return tuple(notes)
