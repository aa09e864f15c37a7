"""Lustre layouts as a benchmark script states them: ``lfs setstripe`` commands.

IO500 submissions set the layout of each phase's directory in their ``io500.sh``
(``lfs setstripe -C $((osts * 4)) $workdir/ior-hard``, ``lfs setstripe -E 64k -L mdt
$workdir/mdtest-hard``); a profile built from the submission should use them.  This
module reads the commands a script runs (not those commented out) and turns each into
experiment settings for a model with a given OST count.

Counts are read as the script computes them: a literal, or the OST count the script
measures (``$osts``, ``${osts}``, ``$((osts * 4))``, as the harness's own ``lfs df |
grep -c OST``), which on a model means the model's OST count.  What the model cannot
follow is said in a note: a literal stripe count above the model's OSTs (the real
system had more; the model's stand-in OSTs are all used), data on the MDT (Lustre's DoM,
not modelled), a fixed first OST.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from simfs.units import parse_ior_size

#: ``$((osts * 4))``, ``$((num_osts*2))``: a multiple of the OST count the script measured.
_OST_MULTIPLE = re.compile(r"\$\(\(\s*(\w*osts)\s*\*\s*(\d+)\s*\)\)", re.IGNORECASE)
#: ``$osts``, ``${osts}``, ``${num_osts}``: the OST count itself.
_OST_COUNT = re.compile(r"\$\{?(\w*osts)\}?(?![\w(])", re.IGNORECASE)
#: Where a command ends in a shell line.
_END = re.compile(r"\|\||&&|;|\|")
#: IO500 directories, as the scripts name them (``ior_hard``, ``mdt_hard``, ``$io500_ior_hard_dir``).
_DIRECTORIES = {
    "ior-hard": ("ior-hard",),
    "ior-easy": ("ior-easy",),
    "mdtest-hard": ("mdtest-hard", "mdt-hard"),
    "mdtest-easy": ("mdtest-easy", "mdt-easy"),
}


@dataclass(frozen=True)
class StripeLayout:
    """The layout one ``lfs setstripe`` command gives new files under a directory.

    A count is ``(literal, ost_multiple)``: ``(4, 0)`` is 4, ``(0, 4)`` is four times the
    OST count."""

    command: str
    stripe_count: tuple[int, int] | None = None
    overstripe_count: tuple[int, int] | None = None
    stripe_size_bytes: int | None = None
    data_on_mdt_bytes: int | None = None
    stripe_index: bool = False

    def settings(self, target_count: int) -> tuple[dict[str, int], list[str]]:
        """Experiment settings for a model of ``target_count`` OSTs, and notes on what it
        does not follow."""
        settings: dict[str, int] = {}
        notes: list[str] = []
        if self.overstripe_count is not None:
            literal, multiple = self.overstripe_count
            settings["overstripe_count"] = literal or multiple * target_count
        elif self.stripe_count is not None:
            literal, multiple = self.stripe_count
            count = -1 if multiple == 1 else literal or multiple * target_count
            if count > target_count:
                notes.append(
                    f"{self.command!r}: {count} stripes stated; the model has {target_count} OSTs and stripes over all"
                )
                count = -1
            settings["stripe_count"] = count
        if self.stripe_size_bytes is not None:
            settings["stripe_size"] = self.stripe_size_bytes
        if self.data_on_mdt_bytes is not None:
            notes.append(f"{self.command!r}: data on the MDT (DoM) is not modelled; the data go to OSTs")
        if self.stripe_index:
            notes.append(f"{self.command!r}: a fixed first OST (-i) is not followed")
        return settings, notes


def parse_setstripe(command: str) -> StripeLayout:
    """The layout of one ``lfs setstripe [options] PATH`` command (a ``ValueError``
    naming the option it cannot read).  A composite layout's data-on-MDT component is
    kept; of its other components the last one counts (it holds a large file's bytes)."""
    text = _OST_MULTIPLE.sub(lambda m: f"@osts*{m[2]}", command)
    text = _OST_COUNT.sub("@osts*1", text)
    words = shlex.split(text)
    try:
        start = words.index("setstripe") + 1
    except ValueError:
        raise ValueError(f"{command!r}: not an lfs setstripe command") from None
    component: dict[str, object] = {}
    components = [component]
    index = start
    while index < len(words) - 1:
        option, value = words[index], words[index + 1]
        index += 2
        if option in ("-E", "--component-end"):
            if "end" in component or len(components) > 1:
                component = {}
                components.append(component)
            # Options before the first -E belong to the first component (-L mdt -E 1M).
            component["end"] = value
        elif option in ("-c", "--stripe-count", "--count"):
            if value != "0":  # 0: the file system's default
                component["stripe_count"] = _count(option, value, command)
        elif option in ("-C", "--overstripe-count"):
            component["overstripe_count"] = _count(option, value, command)
        elif option in ("-S", "--stripe-size", "--size"):
            component["stripe_size"] = _size(option, value, command)
        elif option in ("-L", "--layout"):
            component["layout"] = value
        elif option in ("-i", "--stripe-index", "--index", "-o", "--ost"):
            component["index"] = True
        elif option in ("-p", "--pool"):
            pass  # an OST pool: the model's OSTs are one pool
        elif option.startswith("-"):
            index -= 1  # a flag without a value (-d, --yaml ...): not a layout
        else:
            break  # the path
    dom = next((c for c in components if c.get("layout") == "mdt"), None)
    data = [c for c in components if c.get("layout") != "mdt" and len(c) > ("end" in c)] or [{}]
    last = data[-1]
    return StripeLayout(
        command=" ".join(command.split()),
        stripe_count=last.get("stripe_count"),  # type: ignore[arg-type]
        overstripe_count=last.get("overstripe_count"),  # type: ignore[arg-type]
        stripe_size_bytes=last.get("stripe_size"),  # type: ignore[arg-type]
        data_on_mdt_bytes=_size("-E", str(dom["end"]), command) if dom and "end" in dom else None,
        stripe_index=any(c.get("index") for c in components),
    )


def script_layouts(text: str) -> dict[str, StripeLayout]:
    """The layouts a shell script sets on IO500 directories: ``{"ior-hard": ..., "": ...}``
    (``""``: the working directory itself, which every phase directory inherits unless it
    has its own).  Commented-out commands are skipped; the first command for a directory
    counts (a fallback after ``||`` runs only if it fails)."""
    layouts: dict[str, StripeLayout] = {}
    for line in text.splitlines():
        code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
        where = code.find("lfs setstripe")
        if where < 0:
            continue
        rest, before = code[where:], code[:where].rstrip()
        if before.endswith(('"', "'")):  # ssh host "lfs setstripe ...": the command ends with the quote
            rest = rest.split(before[-1], maxsplit=1)[0]
        command = _END.split(rest, maxsplit=1)[0].strip()
        try:
            layout = parse_setstripe(command)
        except ValueError:
            continue
        words = command.split()
        path = words[-1] if len(words) > 2 else ""
        for directory in _directories(path):
            layouts.setdefault(directory, layout)
    return layouts


def folder_layouts(folder: str | Path, recursive: bool = False) -> tuple[dict[str, StripeLayout], Path | None]:
    """The layouts the shell scripts of a submission folder set, and the script they come
    from (``({}, None)`` if none sets any).  Submissions name their scripts as they like
    (``io500.sh``, ``io500-ai400x2.sh``, ``io500.10node.sh``, ``io-large.sh``): ``io500.sh``
    is read first, then the others in name order; the first that lays out ior-hard wins,
    else the first that lays out any IO500 directory (or the working directory).
    ``recursive`` searches subfolders too (a results folder keeps a copy of the script)."""
    folder = Path(folder)
    found = folder.rglob("*.sh") if recursive else folder.glob("*.sh")
    scripts = sorted((path for path in found if path.is_file()), key=lambda path: (path.name != "io500.sh", str(path)))
    fallback: tuple[dict[str, StripeLayout], Path | None] = ({}, None)
    for script in scripts:
        try:
            layouts = script_layouts(script.read_text(errors="replace"))
        except OSError:
            continue
        if "ior-hard" in layouts:
            return layouts, script
        if layouts and fallback[1] is None:
            fallback = (layouts, script)
    return fallback


def _directories(path: str) -> list[str]:
    normal = path.lower().replace("_", "-")
    if "{easy,hard}" in normal:
        stem = "mdt-" if "mdt-{" in normal else "mdtest-"
        normal = normal.replace("{easy,hard}", "easy") + " " + stem + "hard"
    found = [name for name, spellings in _DIRECTORIES.items() if any(s in normal for s in spellings)]
    if found:
        return found
    if re.fullmatch(r"\$\{?[\w-]*workdir\}?/?", normal.strip("\"'")):
        return [""]
    return []


def _count(option: str, value: str, command: str) -> tuple[int, int]:
    if value.startswith("@osts*"):
        return (0, int(value[len("@osts*") :]))
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"{command!r}: {option} {value!r}: expected a stripe count") from None
    if count < -1:
        raise ValueError(f"{command!r}: {option} {value!r}: expected a stripe count")
    return (0, 1) if count == -1 else (count, 0)


def _size(option: str, value: str, command: str) -> int:
    try:
        return parse_ior_size(value)
    except ValueError:
        raise ValueError(f"{command!r}: {option} {value!r}: expected a size such as 1M or 65536") from None
