"""The IO500 as a workload: a ``config.ini`` of the IO500's C harness (2020 onwards), or
the ``io500.sh`` of the bash harness before it (:func:`parse_io500_script`), read into the
IOR and mdtest command lines the harness runs, in its order.

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
``ior-rnd1MB``, ``mdworkbench``, ``find-easy``, ``find-hard``).  ``posix.odirect = TRUE`` (a
phase's, its group's or ``[global]``'s, as io500-isc20 writes it) adds ``--posix.odirect``;
``files-per-dir`` in ``[mdtest-hard]`` adds ``-I=N`` (mdtest's items per directory: one
shared directory per ``N`` files of a rank), as the harness does.  An API other than POSIX
or MPIIO (DFS, CHFS, IME, ...) is passed on like the others: its phases are simulated as
the same POSIX I/O, and their notes say so.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from simfs.errors import WorkloadError
from simfs.workloads.options import FILE_SYSTEM_INTERFACES
from simfs.workloads.setstripe import StripeLayout, folder_layouts, script_layouts

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
    """An IO500 run: the phases simfs simulates, in order, the stonewall, and in
    ``skipped`` one line per phase of the harness it does not simulate and per setting it
    takes other than as written (as the harness took it: ``segmentCount`` as a 32-bit int)."""

    source: str
    stonewall_s: float
    phases: tuple[Io500Phase, ...]
    skipped: tuple[str, ...]
    #: Lustre layouts the script sets on the harness's directories (``lfs setstripe``),
    #: by directory (``"ior-hard"``, ``"mdtest-easy"``, ``""`` for the working directory).
    layouts: dict[str, StripeLayout] = field(default_factory=dict, compare=False)
    #: The script the layouts come from ("" if none).
    layout_source: str = ""
    #: Read from the bash harness's ``io500.sh`` (its ``io500_*`` settings), not a
    #: ``config.ini`` (its sections).
    from_script: bool = False

    def layout_of(self, phase: str) -> StripeLayout | None:
        """The layout the files of ``phase`` (``ior-hard-read``) get: their directory's,
        or else the working directory's."""
        directory = phase.rsplit("-", 1)[0]
        return self.layouts.get(directory) or self.layouts.get("")


def read_io500_config(path: str | Path) -> Io500Plan:
    """Read an IO500 ``config.ini``, or the ``io500.sh`` of the bash harness (module
    docstring)."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise WorkloadError(f"io500: {path}: {exc.strerror or exc}") from None
    if _BASH_SETTING.search(text) or re.search(r"^\s*io500_ini=", text, re.M):
        return parse_io500_script(text, str(path))
    plan = parse_io500_config(text, str(path))
    # The C harness (2020-) takes no layouts; a submission's script beside its
    # config.ini (io500.sh, or named as the site likes) prepares the directories with
    # lfs setstripe before running it.
    layouts, script = folder_layouts(path.parent)
    if script is not None:
        plan = replace(plan, layouts=layouts, layout_source=str(script))
    return plan


_BASH_SETTING = re.compile(r"^\s*(?:export\s+)?io500_(?:ior|mdtest)_\w+=", re.M)
_BASH_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|local\s+)?([A-Za-z_]\w*)=(.*)$")
#: The bash harness's settings without which its command lines cannot be built.
_SCRIPT_SETTINGS = (
    "io500_ior_easy_params",
    "io500_mdtest_easy_params",
    "io500_mdtest_easy_files_per_proc",
    "io500_ior_hard_writes_per_proc",
    "io500_mdtest_hard_files_per_proc",
)
_SCRIPT_SWITCHES = {
    "ior-easy-write": "io500_run_ior_easy",
    "mdtest-easy-write": "io500_run_md_easy",
    "ior-hard-write": "io500_run_ior_hard",
    "mdtest-hard-write": "io500_run_md_hard",
    "ior-easy-read": "io500_run_ior_easy_read",
    "mdtest-easy-stat": "io500_run_md_easy_stat",
    "ior-hard-read": "io500_run_ior_hard_read",
    "mdtest-hard-stat": "io500_run_md_hard_stat",
    "mdtest-easy-delete": "io500_run_md_easy_delete",
    "mdtest-hard-read": "io500_run_md_hard_read",
    "mdtest-hard-delete": "io500_run_md_hard_delete",
}


def parse_io500_script(text: str, origin: str = "io500.sh") -> Io500Plan:
    """The ``io500.sh`` of the bash harness (2017-2020): its ``io500_*`` settings, read as
    bash would assign them (the last assignment; ``$name`` and ``${name}`` of earlier
    ones expanded), into the command lines of the harness's ``io500_fixed.sh``::

        ior -w {ior_easy_params} -C -Q 1 -g -G 27 -k -e -o DATA/ior_easy/ior_file_easy
            -O stoneWallingStatusFile=R/ior_easy -O stoneWallingWearOut=1 -D {timer}
        ior -w -C -Q 1 -g -G 27 -k -e -t 47008 -b 47008 -s {ior_hard_writes_per_proc}
            {ior_hard_other_options} -o DATA/ior_hard/IOR_file ... -D {timer}
        mdtest -C -F -d DATA/mdt_easy -n {mdtest_easy_files_per_proc} {mdtest_easy_params}
            -x R/mdt_easy-stonewall -W {timer}
        mdtest -C -t -F -w 3901 -e 3901 -d DATA/mdt_hard -n {mdtest_hard_files_per_proc}
            {mdtest_hard_other_options} -x R/mdt_hard-stonewall -W {timer}

    (reads ``-r -R``, stat ``-T``, the hard read ``-E -X``, deletes ``-r``).  A setting the
    script computes (``$(...)``, or read from an ini file by the 2020 harness) is an
    error asking for the ini file instead."""
    # The harness's functions run after the whole script is read: every setting has its
    # last assignment's value, with the references in it expanded the same way.
    raw_values: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _BASH_ASSIGNMENT.match(raw)
        if match:
            raw_values[match[1]] = (_bash_value(match[2]), number)

    def expand(name: str, seen: frozenset[str] = frozenset()) -> str:
        value, number = raw_values[name]
        computed = f"\0computed on line {number}"
        if "$(" in value or "`" in value or name in seen:
            return computed

        def reference(match: re.Match) -> str:
            other = match[1] or match[2]
            return expand(other, seen | {name}) if other in raw_values else match[0]

        expanded = re.sub(r"\$\{(\w+)\}|\$(\w+)", reference, value)
        return computed if "\0" in expanded else expanded  # built from a computed value

    values = {name: expand(name) for name in raw_values}
    if "io500_ini" in values and not any(name in values for name in _SCRIPT_SETTINGS):
        raise WorkloadError(
            f"io500: {origin}: this io500.sh runs the harness on an ini file (io500_ini): give that config.ini"
        )
    for name in _SCRIPT_SETTINGS:
        value = values.get(name)
        if value is None:
            raise WorkloadError(f"io500: {origin}: no {name}= setting (not an io500.sh of the bash harness?)")
        if value.startswith("\0") or "$" in value:
            where = value[1:] if value.startswith("\0") else f"{value!r}"
            raise WorkloadError(
                f"io500: {origin}: {name} is computed by the script ({where}): give the ini file it reads, "
                "or the values the run used"
            )
    timer_text = values.get("io500_stonewall_timer", "300")
    if not timer_text.isdigit():
        raise WorkloadError(f"io500: {origin}: io500_stonewall_timer={timer_text}: expected whole seconds")
    timer = int(timer_text)
    easy, hard_options = values["io500_ior_easy_params"], values.get("io500_ior_hard_other_options", "")
    size = values.get("io500_ior_easy_size", "")
    if size and not re.search(r"(^|\s)-b", easy):
        # The 2019 harness gives the easy block from its own setting, in MiB.
        if not size.isdigit():
            raise WorkloadError(f"io500: {origin}: io500_ior_easy_size={size}: expected MiB as a whole number")
        easy = f"{easy} -b {size}m -F"
    md_easy, md_hard_options = values["io500_mdtest_easy_params"], values.get("io500_mdtest_hard_other_options", "")
    easy_items, hard_items = values["io500_mdtest_easy_files_per_proc"], values["io500_mdtest_hard_files_per_proc"]
    segments = values["io500_ior_hard_writes_per_proc"]
    deadline = f"-D {timer} " if timer else ""
    wall = f"-W {timer} " if timer else ""
    ior_common = "-C -Q 1 -g -G 27 -k -e"
    commands = {
        "ior-easy-write": f"ior -w {easy} {ior_common} -o DATA/ior_easy/ior_file_easy "
        f"-O stoneWallingStatusFile=R/ior_easy -O stoneWallingWearOut=1 {deadline}",
        "mdtest-easy-write": f"mdtest -C -F -d DATA/mdt_easy -n {easy_items} {md_easy} -x R/mdt_easy-stonewall {wall}",
        "ior-hard-write": f"ior -w {ior_common} -t 47008 -b 47008 -s {segments} {hard_options} "
        f"-o DATA/ior_hard/IOR_file -O stoneWallingStatusFile=R/ior_hard -O stoneWallingWearOut=1 {deadline}",
        "mdtest-hard-write": f"mdtest -C -t -F -w 3901 -e 3901 -d DATA/mdt_hard -n {hard_items} {md_hard_options} "
        f"-x R/mdt_hard-stonewall {wall}",
        "ior-easy-read": f"ior -r -R {easy} {ior_common} -o DATA/ior_easy/ior_file_easy "
        "-O stoneWallingStatusFile=R/ior_easy",
        "mdtest-easy-stat": f"mdtest -T -F -d DATA/mdt_easy -n {easy_items} {md_easy} -x R/mdt_easy-stonewall",
        "ior-hard-read": f"ior -r -R {ior_common} -t 47008 -b 47008 -s {segments} {hard_options} "
        "-o DATA/ior_hard/IOR_file -O stoneWallingStatusFile=R/ior_hard",
        "mdtest-hard-stat": f"mdtest -T -t -F -w 3901 -e 3901 -d DATA/mdt_hard -n {hard_items} {md_hard_options} "
        "-x R/mdt_hard-stonewall",
        "mdtest-easy-delete": f"mdtest -r -F -d DATA/mdt_easy -n {easy_items} {md_easy} -x R/mdt_easy-stonewall",
        "mdtest-hard-read": f"mdtest -E -X -t -F -w 3901 -e 3901 -d DATA/mdt_hard -n {hard_items} "
        f"{md_hard_options} -x R/mdt_hard-stonewall",
        "mdtest-hard-delete": f"mdtest -r -t -F -w 3901 -e 3901 -d DATA/mdt_hard -n {hard_items} "
        f"{md_hard_options} -x R/mdt_hard-stonewall",
    }

    def switched_off(name: str) -> str:
        switch = values.get(_SCRIPT_SWITCHES[name], "True")
        return f"{_SCRIPT_SWITCHES[name]}={switch}" if switch.lower() in ("false", "0", "no") else ""

    plan = replace(_plan(origin, timer, lambda name: commands[name], switched_off), from_script=True)
    layouts = script_layouts(text)
    return replace(plan, layouts=layouts, layout_source=origin) if layouts else plan


def _plan(
    origin: str,
    stonewall: int,
    command: Callable[[str], str],
    switched_off: Callable[[str], str],
    extra_skipped: tuple[str, ...] = (),
) -> Io500Plan:
    """The standard phases in the harness's order: ``command(name)`` for each, but those
    ``switched_off(name)`` says why not to run ("" to run it) and ``find``."""
    phases, skipped = [], []
    for name, score in STANDARD_PHASES:
        if name == "find":
            skipped.append("find: not simulated (pfind's parallel directory scan is not modelled)")
            continue
        why = switched_off(name)
        if why:
            skipped.append(f"{name}: {why} in {origin}")
            continue
        phases.append(Io500Phase(name, score, " ".join(command(name).split())))
    return Io500Plan(origin, float(stonewall), tuple(phases), (*skipped, *extra_skipped))


def _bash_value(text: str) -> str:
    """A bash assignment's value: quoted, or up to the first blank (then a comment)."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else text[1:]
    return text.split()[0] if text else ""


def parse_io500_config(text: str, origin: str = "config.ini") -> Io500Plan:
    parser = configparser.ConfigParser(
        # The harness's ini reader ends a value at " #": "segmentCount = 50000 # must set
        # value manual" ran -s 50000 (EPCC's 2020 result.txt records it).
        interpolation=None,
        strict=False,
        comment_prefixes=(";", "#"),
        inline_comment_prefixes=("#",),
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
        if name not in ("POSIX", "MPIIO") and name not in FILE_SYSTEM_INTERFACES:
            raise WorkloadError(
                f"io500: {origin}: [{group}] API {chosen.split()[0]}: simfs models POSIX and MPIIO, and simulates "
                f"the file-system clients {', '.join(sorted(FILE_SYSTEM_INTERFACES))} as POSIX"
            )
        # io500-isc20 gives the POSIX backend's O_DIRECT as a key of its own.
        odirect = flag(phase, "posix.odirect", flag(group, "posix.odirect", flag("global", "posix.odirect", False)))
        if odirect and name == "POSIX" and "--posix.odirect" not in chosen:
            chosen += " --posix.odirect"
        return chosen

    # io500's phase_mdtest_hard.c: files-per-dir (0 or empty: unset) becomes mdtest's -I.
    files_per_dir = get("mdtest-hard", "files-per-dir", "") or "0"
    if not files_per_dir.isdigit():
        raise WorkloadError(f"io500: {origin}: [mdtest-hard] files-per-dir = {files_per_dir}: expected a whole number")
    hard_per_dir = f"-I={int(files_per_dir)} " if int(files_per_dir) else ""
    easy_transfer = get("ior-easy", "transferSize", "2m")
    easy_block = get("ior-easy", "blockSize", "9920000m")
    easy_files = ("-u " if flag("ior-easy", "uniqueDir", False) else "") + (
        "-F" if flag("ior-easy", "filePerProc", True) else ""
    )
    segments = get("ior-hard", "segmentCount", "10000000")
    notes = []
    if segments.isdigit() and int(segments) >= 2**31:
        # The harness passes segmentCount on as a 32-bit int: 100000000000 ran as
        # -s 1215752192 (IBM's 2023 result.txt records it).
        wrapped = (int(segments) + 2**31) % 2**32 - 2**31
        notes.append(f"[ior-hard] segmentCount = {segments}: the harness passes it as a 32-bit int, {wrapped}")
        segments = str(wrapped)
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
            f"mdtest -n {hard_items} {hard_per_dir}-t -w 3901 -e 3901 -P -N 1 -F -d DATA/mdtest-hard -x R/mdtest-hard.stonewall "
            f"{_MDTEST_STEP[step].format(stonewall=stonewall)} -a {api('mdtest-hard', phase)}"
        )

    makers = {"ior-easy": ior_easy, "ior-hard": ior_hard, "mdtest-easy": mdtest_easy, "mdtest-hard": mdtest_hard}

    def command(name: str) -> str:
        group, step = name.rsplit("-", 1)
        return makers[group](name, step)

    def switched_off(name: str) -> str:
        group = name.rsplit("-", 1)[0]
        return "" if flag(group, "run", True) and flag(name, "run", True) else "run = FALSE"

    extended = [group for group in _EXTENDED if _extended_asked(parser, group)]
    note = f"{', '.join(extended)}: extended phases (the harness's --mode=extended), not simulated"
    return _plan(origin, stonewall, command, switched_off, (*notes, *([note] if extended else [])))


def _extended_asked(parser: configparser.ConfigParser, group: str) -> bool:
    # The harness runs the extended phases only in its --mode=extended; a config names
    # them either way.  Report them only when the file says run = TRUE explicitly.
    if not parser.has_section(group):
        return False
    return parser.get(group, "run", fallback="").strip().upper() == "TRUE"
