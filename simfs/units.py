"""Units at the edges: parsing sizes the way each tool does, and printing rates.

Inside simfs every quantity is SI (bytes, seconds, bytes/s).  Tools disagree on what a
suffix means: GNU dd reads ``K``/``M`` as 1024-based and ``kB``/``MB`` as 1000-based;
IOR reads ``k``/``m``/``g`` as 1024-based.  Each tool's rule lives here, once.
"""

from __future__ import annotations

import re

KIB = 1024
MIB = 1024**2
GIB = 1024**3
#: The binary units IOR's and fio's reports print sizes in (``2 MiB``, ``47008 bytes``, ``308MiB/s``).
BINARY_UNITS = {"B": 1, "bytes": 1, "KiB": KIB, "MiB": MIB, "GiB": GIB, "TiB": 1024**4}

# GNU coreutils dd(1), "N and BYTES may be followed by the following multiplicative
# suffixes: c=1, w=2, b=512, kB=1000, K=1024, MB=1000*1000, M=1024*1024, xM=M, GB=...".
_DD_SUFFIXES: dict[str, int] = {"": 1, "c": 1, "w": 2, "b": 512}
for _power, _letter in enumerate("KMGTPEZY", start=1):
    _DD_SUFFIXES[_letter] = 1024**_power
    _DD_SUFFIXES[_letter + "iB"] = 1024**_power
    _DD_SUFFIXES[_letter + "B"] = 1000**_power
_DD_SUFFIXES["kB"] = 1000
_DD_SUFFIXES["k"] = 1024  # accepted by GNU dd as a synonym of K

# IOR src/utilities.c string_to_bytes(): k/K, m/M, g/G, t/T, p/P are powers of 1024.
_IOR_SUFFIXES = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024**4, "p": 1024**5}

_NUMBER_SUFFIX = re.compile(r"^(\d+)([A-Za-z]*)$")


def parse_dd_size(text: str) -> int:
    """A dd size operand (``1024000``, ``1M``, ``64kB``, ``2x512``) in bytes."""
    product = 1
    for factor in text.split("x"):
        match = _NUMBER_SUFFIX.match(factor)
        if not match or match.group(2) not in _DD_SUFFIXES:
            raise ValueError(f"invalid number {text!r}")
        product *= int(match.group(1)) * _DD_SUFFIXES[match.group(2)]
    return product


def parse_ior_size(text: str, *, as_ior_reads: bool = False) -> int:
    """An IOR size (``1m``, ``4g``, ``256k``, ``4096``, ``16MiB``, ``512kb``) in bytes.

    IOR reads a number and one suffix letter and ignores what follows the letter, so
    ``16MiB`` and ``512kb`` are 16 MiB and 512 KiB there (powers of 1024 either way);
    those two spellings are taken here too, anything else after the letter is refused
    unless ``as_ior_reads`` (``256gm`` is then 256 GiB, as the IO500 run that typed it got)."""
    match = _NUMBER_SUFFIX.match(text.strip())
    suffix = match.group(2) if match else ""
    letter, rest = suffix[:1].lower(), suffix[1:]
    if not match or letter not in _IOR_SUFFIXES or (rest not in ("", "b", "B", "iB") and not as_ior_reads):
        raise ValueError(f"invalid size {text!r}: expected a whole number with optional k, m, g or t (no exponent)")
    return int(match.group(1)) * _IOR_SUFFIXES[letter]


def format_bytes(count: float) -> str:
    """``1048576 -> '1 MiB'``; exact binary multiples print without decimals."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if count >= size:
            value = count / size
            return f"{value:g} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{count:g} B"
