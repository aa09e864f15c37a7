"""What a results file does not say about itself: the manifest of a measurement folder.

dd prints a rate but not how many nodes ran it or which direction it went.  A folder of
measurements may hold ``manifest.toml``::

    [defaults]                      # applies to every file
    system = "crtdc-lfs3"

    [files."dd-16nodes.txt"]        # applies to one file
    workload = "dd if=/dev/zero of=/lustre/f bs=1024000 count=50000"
    nodes = 16
    ppn = 1
    settings = { stripe_count = 4 }
    uncertainty = 0.05              # relative, 1 sigma
    source = "our run of 2026-11-20"

Values a file states itself (IOR's task count, its command line) win over the manifest.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simfs.errors import SimfsError
from simfs.ingest.common import read_text

MANIFEST = "manifest.toml"
_KEYS = {"system", "workload", "nodes", "ppn", "settings", "uncertainty", "source"}


@dataclass(frozen=True)
class FileContext:
    system: str = ""
    workload: str = ""
    nodes: int | None = None
    ppn: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    uncertainty: float = float("nan")
    source: str = ""

    def fields(self, **overrides: Any) -> dict[str, Any]:
        """Measurement fields this context supplies, with a file's own values on top
        (``None`` in ``overrides`` means "the file does not say": the context's value stays)."""
        fields = {
            "workload": self.workload,
            "nodes": self.nodes,
            "ppn": self.ppn,
            "settings": dict(self.settings),
            "system": self.system,
            "uncertainty": self.uncertainty,
        }
        fields.update({k: v for k, v in overrides.items() if v is not None})
        return fields


def read_manifest(folder: Path) -> dict[str, FileContext]:
    """Per-file contexts of ``folder`` (the ``defaults`` merged in); empty if no manifest."""
    path = folder / MANIFEST
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(read_text(path, hint=""))
    except tomllib.TOMLDecodeError as exc:
        raise SimfsError(f"{path}: invalid TOML: {exc}") from None
    unknown = set(data) - {"defaults", "files"}
    if unknown:
        raise SimfsError(f"{path}: unknown table {sorted(unknown)[0]!r} (expected defaults, files)")
    defaults = _checked(path, "defaults", data.get("defaults", {}))
    contexts = {"*": FileContext(**defaults)}
    for name, values in data.get("files", {}).items():
        if not (folder / name).exists():
            raise SimfsError(f"{path}: files.{name}: no such file in {folder}")
        contexts[name] = FileContext(**{**defaults, **_checked(path, f"files.{name}", values)})
    return contexts


def context_for(contexts: dict[str, FileContext], name: str) -> FileContext:
    return contexts.get(name, contexts.get("*", FileContext()))


def _checked(path: Path, where: str, values: Any) -> dict[str, Any]:
    if not isinstance(values, dict):
        raise SimfsError(f"{path}: {where}: expected a table")
    for key, value in values.items():
        if key not in _KEYS:
            raise SimfsError(f"{path}: {where}.{key}: unknown field (expected {', '.join(sorted(_KEYS))})")
        if key in ("nodes", "ppn") and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise SimfsError(f"{path}: {where}.{key}: expected a positive integer, got {value!r}")
        if key == "settings" and not isinstance(value, dict):
            raise SimfsError(f"{path}: {where}.settings: expected a table")
        if key == "uncertainty" and not (isinstance(value, (int, float)) and value >= 0):
            raise SimfsError(f"{path}: {where}.uncertainty: expected a non-negative number")
    return dict(values)
