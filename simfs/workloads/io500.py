"""The IO500 as a workload: a ``config.ini`` of the IO500's C harness (2020 onwards) read
into the IOR and mdtest command lines the harness runs, in its order.

The harness (``io500``, ``src/phase_*.c``) runs, for the standard list::

    ior-easy-write  mdtest-easy-write  ior-hard-write  mdtest-hard-write  find
    ior-easy-read   mdtest-easy-stat   ior-hard-read   mdtest-hard-stat
    mdtest-easy-delete  mdtest-hard-read  mdtest-hard-delete

each as its own MPI job, with these command lines (checked against the ``exe`` lines of
the 191 ``result.txt`` files of the public submission archive)::

    ior -C -Q 1 -g -G 271 -k -e -o DATA/ior-easy/ior_file_easy -O stoneWallingStatusFile=R/ior-easy.stonewall
        -t {transferSize} -b {blockSize} [-u] -F -w -D {stonewall} -O stoneWallingWearOut=1 -a {API}
    ior ... -t {transferSize} -b {blockSize} [-u] -F -r -R -a {API}                        (ior-easy-read)
    ior -C -Q 1 -g -G 27 -k -e -o DATA/ior-hard/file -O stoneWallingStatusFile=R/ior-hard.stonewall
        -t 47008 -b 47008 -s {segmentCount} -w -D {stonewall} -a {API} -O stoneWallingWearOut=1
    mdtest -n {n} -u -L -F -P -N 1 -d DATA/mdtest-easy -x R/mdtest-easy.stonewall -C -Y -W {stonewall} -a {API}
    mdtest -n {n} -t -w 3901 -e 3901 -P -N 1 -F -d DATA/mdtest-hard -x R/mdtest-hard.stonewall -C -Y -W ...

(stat ``-T``, the hard read ``-E -X``, deletes ``-r``).  Defaults where the file leaves a
key empty or out, as the harness has them: ``transferSize = 2m``, ``blockSize =
9920000m``, ``filePerProc = TRUE``, ``uniqueDir = FALSE``, ``segmentCount = 10000000``,
``n = 1000000`` (both mdtest phases), ``stonewall-time = 300`` (``[debug]``), ``api =
POSIX`` (``[global]``; a section's ``API`` overrides it, and what follows the API's name,
``POSIX --posix.odirect``, is passed on as the harness does).  A phase with ``run =
FALSE`` (in its own section or its group's, ``[ior-easy]``) is left out.

Not simulated, each said in one line of :attr:`Io500Plan.skipped`: ``find`` (pfind's
parallel directory scan is not modelled) and the extended phases (``ior-rnd4K``,
``ior-rnd1MB``, ``mdworkbench``, ``find-easy``, ``find-hard``).  Refused: an API other than
POSIX or MPIIO (DFS, CHFS, IME, ...: another client than the file system's), and
``files-per-dir`` in ``[mdtest-hard]`` (mdtest's ``-I`` directory trees).
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from simfs.errors import WorkloadError

#: The standard phases in the harness's order, with the IO500 score they count towards.
STANDARD_PHASES: tuple[tuple[str, Literal["bandwidth", "iops"]], ...] = (
    ("ior-easy-write", "bandwidth"),
    ("mdtest-easy-write", "iops"),
    ("ior-hard-write", "bandwidth"),
    ("mdtest-hard-write", "iops"),
    ("find", "iops"),
    ("ior-easy-read", "bandwidth"),
    ("mdtest-easy-stat", "iops"),
    ("ior-hard-read", "bandwidth"),
    ("mdtest-hard-stat", "iops"),
    ("mdtest-easy-delete", "iops"),
    ("mdtest-hard-read", "iops"),
    ("mdtest-hard-delete", "iops"),
)
_EXTENDED = ("ior-rnd4K", "ior-rnd1MB", "mdworkbench", "find-easy", "find-hard")
#: The write phase whose stonewall count bounds each later phase.
BOUNDED_BY = {
    "ior-easy-read": "ior-easy-write",
    "ior-hard-read": "ior-hard-write",
    "mdtest-easy-stat": "mdtest-easy-write",
    "mdtest-easy-delete": "mdtest-easy-write",
    "mdtest-hard-stat": "mdtest-hard-write",
    "mdtest-hard-read": "mdtest-hard-write",
    "mdtest-hard-delete": "mdtest-hard-write",
}
_MDTEST_STEP = {"write": "-C -Y -W {stonewall}", "stat": "-T", "read": "-E -X", "delete": "-r"}


@dataclass(frozen=True)
class Io500Phase:
    """One phase of the harness: its name (``ior-hard-write``), the score it counts
    towards (``"bandwidth"`` or ``"iops"``) and the command line the harness runs."""

    name: str
    score: Literal["bandwidth", "iops"]
    command: str

    @property
    def bounded_by(self) -> str:
        """The write phase whose stonewall count this phase redoes ("" for a write)."""
        return BOUNDED_BY.get(self.name, "")


@dataclass(frozen=True)
class Io500Plan:
    """An IO500 run: the phases simfs simulates, in order, the stonewall, and one line
    per phase of the harness it does not simulate."""

    source: str
    stonewall_s: float
    phases: tuple[Io500Phase, ...]
    skipped: tuple[str, ...]


def read_io500_config(path: str | Path) -> Io500Plan:
    """Read an IO500 ``config.ini`` (module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise WorkloadError(f"io500: {path}: {exc.strerror or exc}") from None
    return parse_io500_config(text, str(path))


def parse_io500_config(text: str, origin: str = "config.ini") -> Io500Plan:
    parser = configparser.ConfigParser(
        interpolation=None, strict=False, comment_prefixes=(";", "#"), inline_comment_prefixes=None
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # the harness's keys are case-sensitive
    try:
        parser.read_string(text, source=origin)
    except configparser.Error as exc:
        raise WorkloadError(f"io500: {origin}: not an IO500 config.ini ({str(exc).splitlines()[0]})") from None
    if not any(parser.has_section(name) for name in ("global", "ior-easy", "mdtest-easy", "ior-hard")):
        raise WorkloadError(f"io500: {origin}: no [global], [ior-easy], [mdtest-easy] or [ior-hard] section")

    def get(section: str, key: str, default: str) -> str:
        value = parser.get(section, key, fallback="").strip() if parser.has_section(section) else ""
        return value or default

    def flag(section: str, key: str, default: bool) -> bool:
        value = get(section, key, "TRUE" if default else "FALSE").upper()
        if value not in ("TRUE", "FALSE", "1", "0", "YES", "NO"):
            raise WorkloadError(f"io500: {origin}: [{section}] {key} = {value}: expected TRUE or FALSE")
        return value in ("TRUE", "1", "YES")

    stonewall_text = get("debug", "stonewall-time", "300")
    try:
        stonewall_s = float(stonewall_text)
    except ValueError:
        stonewall_s = -1.0
    if not stonewall_s > 0 or stonewall_s != int(stonewall_s):
        raise WorkloadError(
            f"io500: {origin}: [debug] stonewall-time = {stonewall_text}: expected a whole number of seconds above 0"
        )
    stonewall = int(stonewall_s)
    global_api = get("global", "api", "POSIX")

    def api(group: str, phase: str) -> str:
        chosen = get(phase, "API", get(group, "API", global_api))
        name = chosen.split()[0].upper()
        if name not in ("POSIX", "MPIIO"):
            raise WorkloadError(
                f"io500: {origin}: [{group}] API {chosen.split()[0]}: simfs models the POSIX and MPIIO interfaces "
                "of the file system's own client"
            )
        return chosen

    if get("mdtest-hard", "files-per-dir", ""):
        raise WorkloadError(
            f"io500: {origin}: [mdtest-hard] files-per-dir = {get('mdtest-hard', 'files-per-dir', '')}: mdtest's "
            "directory trees (-I) are not modelled"
        )
    easy_transfer = get("ior-easy", "transferSize", "2m")
    easy_block = get("ior-easy", "blockSize", "9920000m")
    easy_files = ("-u " if flag("ior-easy", "uniqueDir", False) else "") + (
        "-F" if flag("ior-easy", "filePerProc", True) else ""
    )
    segments = get("ior-hard", "segmentCount", "10000000")
    easy_items = get("mdtest-easy", "n", "1000000")
    hard_items = get("mdtest-hard", "n", "1000000")

    def ior_easy(phase: str, step: str) -> str:
        action = f"-w -D {stonewall} -O stoneWallingWearOut=1" if step == "write" else "-r -R"
        return (
            "ior -C -Q 1 -g -G 271 -k -e -o DATA/ior-easy/ior_file_easy -O stoneWallingStatusFile=R/ior-easy.stonewall "
            f"-t {easy_transfer} -b {easy_block} {easy_files} {action} -a {api('ior-easy', phase)}"
        )

    def ior_hard(phase: str, step: str) -> str:
        action = f"-w -D {stonewall}" if step == "write" else "-r -R"
        collective = " -c" if flag(phase, "collective", flag("ior-hard", "collective", False)) else ""
        wear_out = " -O stoneWallingWearOut=1" if step == "write" else ""
        return (
            "ior -C -Q 1 -g -G 27 -k -e -o DATA/ior-hard/file -O stoneWallingStatusFile=R/ior-hard.stonewall "
            f"-t 47008 -b 47008 -s {segments} {action} -a {api('ior-hard', phase)}{collective}{wear_out}"
        )

    def mdtest_easy(phase: str, step: str) -> str:
        return (
            f"mdtest -n {easy_items} -u -L -F -P -N 1 -d DATA/mdtest-easy -x R/mdtest-easy.stonewall "
            f"{_MDTEST_STEP[step].format(stonewall=stonewall)} -a {api('mdtest-easy', phase)}"
        )

    def mdtest_hard(phase: str, step: str) -> str:
        return (
            f"mdtest -n {hard_items} -t -w 3901 -e 3901 -P -N 1 -F -d DATA/mdtest-hard -x R/mdtest-hard.stonewall "
            f"{_MDTEST_STEP[step].format(stonewall=stonewall)} -a {api('mdtest-hard', phase)}"
        )

    makers = {"ior-easy": ior_easy, "ior-hard": ior_hard, "mdtest-easy": mdtest_easy, "mdtest-hard": mdtest_hard}
    phases, skipped = [], []
    for name, score in STANDARD_PHASES:
        if name == "find":
            skipped.append("find: not simulated (pfind's parallel directory scan is not modelled)")
            continue
        group, step = name.rsplit("-", 1)
        if not (flag(group, "run", True) and flag(name, "run", True)):
            skipped.append(f"{name}: run = FALSE in {origin}")
            continue
        phases.append(Io500Phase(name, score, " ".join(makers[group](name, step).split())))
    extended = [group for group in _EXTENDED if _extended_asked(parser, group)]
    if extended:
        skipped.append(f"{', '.join(extended)}: extended phases (the harness's --mode=extended), not simulated")
    return Io500Plan(origin, float(stonewall), tuple(phases), tuple(skipped))


def _extended_asked(parser: configparser.ConfigParser, group: str) -> bool:
    # The harness runs the extended phases only in its --mode=extended; a config names
    # them either way.  Report them only when the file says run = TRUE explicitly.
    if not parser.has_section(group):
        return False
    return parser.get(group, "run", fallback="").strip().upper() == "TRUE"
