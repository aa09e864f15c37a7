"""``[[host.other_cpu]]``: a testbed profile's ``[host]`` CPU costs fitted on other CPUs.

A shared host's costs are a machine's, not a file system's: the same one-client runs
refitted on another CPU give other costs (``calibration/testbed/xeon/``).  A profile lists
them as entries of their own, each with the ``cpu_model`` a run record gives
(``machine.cpu_model``) and any of the model's ``[host]`` fields; ``simfs validate --live``
predicts runs recorded on that CPU with them (:func:`host_costs_for`).  The builders check
every entry (:func:`other_cpu_entries`), so a bad one is found when the profile is first
used, whichever CPU is at hand.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from simfs.errors import ProfileError
from simfs.systems.profile import Profile

#: Where a profile says which CPU its CPU-bound rates were measured on, first found first.
RECORDED_CPU_KEYS = ("machine.recorded.cpu_model", "host.recorded.cpu_model")


def recorded_cpu(profile: Profile) -> str | None:
    """The CPU the profile's CPU-bound rates were measured on, where it says."""
    for key in RECORDED_CPU_KEYS:
        table: Any = profile.data
        for part in key.split("."):
            table = table.get(part) if isinstance(table, dict) else None
        if isinstance(table, str) and table:
            return table
    return None


def other_cpu_entries(profile: Profile, host_fields: tuple[str, ...]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every ``[[host.other_cpu]]`` entry as ``(number, cpu_model, {field: value})``,
    checked: a table with a ``cpu_model`` of its own (not another entry's) and only
    ``host_fields`` (the model's ``[host]`` fields), each a finite number >= 0 (``cores`` a positive whole number).  Each error is
    one line naming ``host.other_cpu[N].field``."""
    host = profile.data.get("host")
    entries = host.get("other_cpu", []) if isinstance(host, dict) else []
    if not isinstance(entries, list):
        raise ProfileError(f"{profile.origin}: host.other_cpu: expected an array of tables ([[host.other_cpu]])")
    seen: dict[str, int] = {}
    checked = []
    for number, entry in enumerate(entries):
        where = f"{profile.origin}: host.other_cpu[{number}]"
        if not isinstance(entry, dict):
            raise ProfileError(f"{where}: expected a table of [host] costs with its cpu_model")
        model = entry.get("cpu_model")
        if not isinstance(model, str) or not model.strip():
            raise ProfileError(f"{where}.cpu_model: expected the CPU's name as run records give it (machine.cpu_model)")
        if model in seen:
            raise ProfileError(f"{where}.cpu_model: {model!r} is listed already, in host.other_cpu[{seen[model]}]")
        seen[model] = number
        values = {}
        for field, value in entry.items():
            if field == "cpu_model":
                continue
            if field not in host_fields:
                raise ProfileError(f"{where}.{field}: not a [host] field (expected one of: {', '.join(host_fields)})")
            whole = field == "cores"
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not math.isfinite(value)
                or value < 0
                or (whole and (value != int(value) or value < 1))
            ):
                expected = "a positive whole number of cores" if whole else "a finite number >= 0"
                raise ProfileError(f"{where}.{field}: expected {expected}, got {value!r}")
            values[field] = value
        checked.append((number, model, values))
    return checked


def host_costs_for(profile: Profile, cpu_model: str, host_fields: tuple[str, ...]) -> tuple[Profile, int] | None:
    """``profile`` with its ``[host]`` fields replaced by those of the entry for
    ``cpu_model``, and that entry's number; None where no entry names that CPU or
    ``[host]`` is that CPU's already (its ``recorded.cpu_model``).  The copy
    says where its costs came from (``origin (host.other_cpu[N])``), records ``cpu_model``
    as the CPU it was fitted on and lists no other CPUs."""
    entries = other_cpu_entries(profile, host_fields)
    if cpu_model == recorded_cpu(profile):
        # [host] is that CPU's already (a case's settings may set both): nothing to replace.
        return None
    for number, model, values in entries:
        if model != cpu_model:
            continue
        overrides = {f"host.{field}": value for field, value in values.items()}
        overrides.update({key: cpu_model for key in RECORDED_CPU_KEYS if profile.has(key)})
        overrides["host.recorded.cpu_model"] = cpu_model
        data = profile.with_overrides(overrides).data
        del data["host"]["other_cpu"]  # a profile of that one CPU now
        return Profile(data, f"{profile.origin} (host.other_cpu[{number}])", profile.text), number
    return None
