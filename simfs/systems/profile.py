"""System profiles: TOML files describing hardware, read with field-level validation.

A :class:`Profile` wraps the parsed TOML and hands out values through typed accessors
that name the file and the dotted field in every error.  It remembers which fields were
read, so that a builder can reject fields nobody understood (a typo such as
``clinet.cores`` is an error, not a silently ignored line).  Overrides (``--set
oss.count=16``) produce a new profile; the file on disk is never touched.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
import warnings
from pathlib import Path
from typing import Any

from simfs.errors import ImplausibleValueWarning, ProfileError
from simfs.systems import lustre_tunables
from simfs.textinput import edit_distance, read_text_file

#: A data rate below this (B/s) is warned about: no storage or network part is that slow,
#: and ``150`` for ``150e6`` simulates silently at 0.000 GB/s otherwise.
IMPLAUSIBLE_BPS = 1e6

#: Every profile number is 0 or within these magnitudes: a rate, size, time or count
#: outside them is a slip (a missing or doubled exponent), and the engine's products of
#: such values (a fabric's total over its clients, a demand over a rate) would overflow
#: to infinity or vanish to zero and fail far from the field that caused it.
LARGEST_PROFILE_MAGNITUDE = 1e30
SMALLEST_PROFILE_MAGNITUDE = 1e-30
#: Integer fields are counts and sizes: at most what a float64 holds exactly.
MAX_PROFILE_INTEGER = 2**53


def shown_value(value: object) -> str:
    """``repr(value)`` for an error message, but an integer too long for one line by its
    size (TOML integers have no bound; ``repr`` refuses past 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, list):
        return "[" + ", ".join(shown_value(item) for item in value) + "]"
    return repr(value)


#: A profile is a few kilobytes; anything beyond this is not one (``/dev/zero``, a log).
PROFILE_LIMIT_BYTES = 1024 * 1024

_MISSING = object()
#: Default marker for a field that must be present.
REQUIRED = _MISSING
BUILTIN_DIR = Path(__file__).parent


class Profile:
    """A parsed system profile.

    Parameters
    ----------
    data: the TOML document as nested dicts.
    origin: the file path (or built-in name) used in error messages.
    text: the TOML source, kept so that calibrated copies can preserve comments.
    """

    def __init__(self, data: dict[str, Any], origin: str, text: str = "") -> None:
        self._data = data
        self._origin = origin
        self._text = text
        self._read: set[str] = set()
        # Every field a builder asked for, present or defaulted: what a typo is near.
        self._asked: set[str] = set()

    # -- loading ------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> Profile:
        path = Path(path)
        text = read_text_file(
            path, what="a TOML profile", kind="a TOML profile", limit_bytes=PROFILE_LIMIT_BYTES, error=ProfileError
        )
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, origin: str) -> Profile:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib reports "<what> (at line L, column C)"; keep it on one line.
            raise ProfileError(f"{origin}: invalid TOML: {exc}") from None
        try:
            data = lustre_tunables.translate_tables(data, origin)
        except ValueError as exc:
            raise ProfileError(str(exc)) from None
        return cls(data, origin, text)

    @property
    def origin(self) -> str:
        return self._origin

    @property
    def text(self) -> str:
        return self._text

    @property
    def data(self) -> dict[str, Any]:
        return self._data

    # -- overrides ----------------------------------------------------------------------
    def with_overrides(self, overrides: dict[str, Any]) -> Profile:
        """A copy with dotted fields replaced; tables along the way are created."""
        data = _deep_copy(self._data)
        fields: dict[str, str] = {}
        for key, value in overrides.items():
            try:
                field, value = lustre_tunables.translate(key, value, f"{self._origin}: --set")
            except ValueError as exc:
                raise ProfileError(str(exc)) from None
            if field in fields:
                raise ProfileError(f"{self._origin}: --set {fields[field]} and {key} name the same field: give one")
            fields[field] = key
            parts = field.split(".")
            table = data
            for depth, part in enumerate(parts[:-1]):
                nxt = table.setdefault(part, {})
                if not isinstance(nxt, dict):
                    where = ".".join(parts[: depth + 1])
                    raise ProfileError(f"{self._origin}: --set {key}: {where} is a value, not a table")
                table = nxt
            table[parts[-1]] = value
        # The overrides are named: `simfs show` prints the profile's own description, which
        # the overrides may contradict ("8 OSS" with oss.count=16).
        shown = ", ".join(f"{key}={value}" for key, value in overrides.items())
        origin = self._origin + (f" (with --set {shown})" if overrides else "")
        return Profile(data, origin, self._text)

    # -- typed access -------------------------------------------------------------------
    def has(self, key: str) -> bool:
        return self._lookup(key) is not _MISSING

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        self._asked.add(key)
        value = self._lookup(key)
        if value is _MISSING:
            if default is _MISSING:
                raise ProfileError(f"{self._origin}: missing field {key}{self.misspelt_note(key)}")
            return default
        self._read.add(key)
        return value

    def number(
        self,
        key: str,
        default: Any = _MISSING,
        *,
        minimum: float | None = None,
        positive: bool = False,
        integer: bool = False,
        maximum: float | None = None,
    ) -> float:
        value = self.raw(key, default)
        kind = "an integer" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProfileError(f"{self._origin}: {key}: expected {kind}, got {value!r}")
        if isinstance(value, int) and abs(value) > (MAX_PROFILE_INTEGER if integer else LARGEST_PROFILE_MAGNITUDE):
            # Before any float(): TOML integers have no bound, and one past 1e308 overflows it.
            bound = "2^53" if integer else f"{LARGEST_PROFILE_MAGNITUDE:g}"
            raise ProfileError(f"{self._origin}: {key}: expected at most {bound}, got {shown_value(value)}")
        if integer and not float(value).is_integer():
            raise ProfileError(f"{self._origin}: {key}: expected {kind}, got {value!r}")
        if not math.isfinite(value):
            raise ProfileError(f"{self._origin}: {key}: expected a finite number, got {value!r}")
        if integer and abs(value) > MAX_PROFILE_INTEGER:
            raise ProfileError(f"{self._origin}: {key}: expected an integer of at most 2^53, got {value!r}")
        if not (value == 0 or SMALLEST_PROFILE_MAGNITUDE <= abs(value) <= LARGEST_PROFILE_MAGNITUDE):
            raise ProfileError(
                f"{self._origin}: {key}: expected 0 or a magnitude from {SMALLEST_PROFILE_MAGNITUDE:g} to "
                f"{LARGEST_PROFILE_MAGNITUDE:g}, got {value!r}"
            )
        if positive and not value > 0:
            raise ProfileError(f"{self._origin}: {key}: expected a positive number, got {value!r}")
        if minimum is not None and value < minimum:
            raise ProfileError(f"{self._origin}: {key}: expected >= {minimum:g}, got {value!r}")
        if maximum is not None and value > maximum:
            raise ProfileError(f"{self._origin}: {key}: expected <= {maximum:g}, got {value!r}")
        if key.endswith("_Bps") and 0 < value < IMPLAUSIBLE_BPS:
            warnings.warn(
                f"{self._origin}: {key} = {value:g} B/s is below 1 MB/s; a missing exponent (150e6)?",
                ImplausibleValueWarning,
                stacklevel=2,
            )
        return int(value) if integer else float(value)

    def string(self, key: str, default: Any = _MISSING, *, choices: Any = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise ProfileError(f"{self._origin}: {key}: expected a string, got {value!r}")
        if choices is not None and value not in choices:
            options = ", ".join(sorted(choices))
            raise ProfileError(f"{self._origin}: {key}: expected one of {options}, got {value!r}")
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise ProfileError(f"{self._origin}: {key}: expected true or false, got {value!r}")
        return value

    def table(self, key: str, default: Any = _MISSING) -> dict[str, Any]:
        """A table whose entries the caller reads one by one: each entry's fields must
        still be read, so a misspelt field inside (``[networks.x] bandwith_Bps``) is
        reported by :meth:`check_all_read`."""
        value = self.raw(key, default)
        self._read.discard(key)
        if not isinstance(value, dict):
            raise ProfileError(f"{self._origin}: {key}: expected a table, got {value!r}")
        return value

    def check_all_read(self, *, ignore: tuple[str, ...] = ()) -> None:
        """Raise for the first field that no accessor read (a typo or unsupported field)."""
        for key in leaf_keys(self._data):
            if key in self._read or any(key == p or key.startswith(p + ".") for p in ignore):
                continue
            if any(key.startswith(read + ".") for read in self._read):
                continue  # inside a table that was read whole
            raise ProfileError(f"{self._origin}: {key}: unknown field{self._nearest(key)}")

    def _nearest(self, key: str) -> str:
        """``" (did you mean oss.threads?)"`` for the known field or Lustre tunable nearest
        to ``key``, if one is near."""
        known = sorted(self._asked | set(lustre_tunables.TUNABLES))
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        return f" (did you mean {close[0]}?)" if close else ""

    def misspelt_note(self, key: str) -> str:
        """``" (the profile sets machine.copy_raed_Bps: a typo?)"`` for a field the profile
        sets and no accessor asked for, in the same table and a letter or two from ``key``
        (:func:`misspelling_of`), so that a misspelt field is named where it is first
        missed; ``""`` where there is none."""
        unasked = [leaf for leaf in leaf_keys(self._data) if leaf not in self._asked]
        typo = misspelling_of(key, unasked)
        return f" (the profile sets {typo}: a typo?)" if typo else ""

    def _lookup(self, key: str) -> Any:
        node: Any = self._data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return _MISSING
            node = node[part]
        return node


def misspelling_of(key: str, candidates: list[str]) -> str | None:
    """The candidate in ``key``'s table whose last part is at most two edits (insertions,
    deletions, substitutions, swaps of neighbours) from ``key``'s, if exactly one is;
    else the candidate with ``key``'s field in a table at most two edits from ``key``'s
    (``[osts]`` for ``[ost]``, ``[ost.hd]`` for ``[ost.hdd]``: a misspelt table header
    leaves every field of the table missing), if exactly one is.  Closer than a
    similarity ratio: ``copy_write_Bps`` is not a misspelling of ``copy_read_Bps`` (four
    edits), ``copy_raed_Bps`` is (one)."""
    table, _, name = key.rpartition(".")
    split = [(candidate, *candidate.rpartition(".")[::2]) for candidate in candidates]
    misspelt_field = [c for c, other, field in split if other == table and edit_distance(field, name) <= 2]
    misspelt_table = [
        c
        for c, other, field in split
        if field == name
        and other != table
        and other.count(".") == table.count(".")
        and edit_distance(other, table) <= 2
    ]
    for near in (misspelt_field, misspelt_table):
        if len(near) == 1:
            return near[0]
    return None


def leaf_keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and value:
            keys.extend(leaf_keys(value, key + "."))
        else:
            keys.append(key)
    return keys


def _deep_copy(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in data.items()}


def parse_override_value(text: str) -> Any:
    """A ``--set`` value: a TOML scalar if it parses as one (``16``, ``3.2e9``,
    ``true``, ``"x"``), else the bare string (``1gbe``)."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        raise ProfileError(f"--set: a value of {len(text):,} characters, too long for a number") from None


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def load_profile(system: str | Path) -> Profile:
    """A built-in system by name, or a profile file by path."""
    text = str(system)
    if not text.strip():
        raise ProfileError("system: an empty name; expected a built-in name (simfs systems) or a .toml path")
    if text in builtin_names():
        return Profile.from_file(BUILTIN_DIR / f"{text}.toml")
    path = Path(text)
    if path.suffix == ".toml" or os.path.lexists(path):
        return Profile.from_file(path)
    known = ", ".join(builtin_names())
    raise ProfileError(f"unknown system {text!r}: expected a built-in name ({known}) or a .toml path")
