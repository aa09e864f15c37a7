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

from typing import Any, NamedTuple

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


class OtherCpuCosts(NamedTuple):
    """The profile with one entry's costs in ``[host]``, the entry's number, and the
    ``[host]`` fields it replaced."""

    profile: Profile
    number: int
    fields: tuple[str, ...]


def other_cpu_entries(profile: Profile, host_fields: tuple[str, ...]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every ``[[host.other_cpu]]`` entry as ``(number, cpu_model, {field: value})``,
    checked: a table with a ``cpu_model`` of its own (not another entry's) and only
    ``host_fields`` (the model's ``[host]`` fields), each a number >= 0 (``cores`` a
    positive integer) as :meth:`Profile.number` checks it.  Each error is one line naming
    ``host.other_cpu[N].field``."""
    host = profile.data.get("host")
    entries = host.get("other_cpu", []) if isinstance(host, dict) else []
    if not isinstance(entries, list):
        raise ProfileError(f"{profile.origin}: host.other_cpu: expected an array of tables ([[host.other_cpu]])")
    seen: dict[str, int] = {}
    checked = []
    for number, entry in enumerate(entries):
        name = f"host.other_cpu[{number}]"
        if not isinstance(entry, dict):
            raise ProfileError(f"{profile.origin}: {name}: expected a table of [host] costs with its cpu_model")
        # The entry as a profile of its own, so its fields are read as [host]'s are.
        fields = Profile({"host": {f"other_cpu[{number}]": entry}}, profile.origin)
        model = fields.string(f"{name}.cpu_model", "")
        if not model.strip():
            raise ProfileError(
                f"{profile.origin}: {name}.cpu_model: expected the CPU's name as run records give it (machine.cpu_model)"
            )
        if model in seen:
            raise ProfileError(
                f"{profile.origin}: {name}.cpu_model: {model!r} is listed already, in host.other_cpu[{seen[model]}]"
            )
        seen[model] = number
        values = {}
        for field in entry:
            if field == "cpu_model":
                continue
            if field not in host_fields:
                raise ProfileError(
                    f"{profile.origin}: {name}.{field}: not a [host] field (expected one of: {', '.join(host_fields)})"
                )
            whole = field == "cores"
            values[field] = fields.number(f"{name}.{field}", minimum=0, integer=whole, positive=whole)
        checked.append((number, model, values))
    return checked


def host_costs_for(profile: Profile, cpu_model: str, host_fields: tuple[str, ...]) -> OtherCpuCosts | None:
    """``profile`` with its ``[host]`` fields replaced by those of the entry for
    ``cpu_model``; None where no entry names that CPU or ``[host]`` is that CPU's already
    (its ``recorded.cpu_model``).  The copy says where its costs came from
    (``origin (host.other_cpu[N])``), records ``cpu_model`` as the CPU it was fitted on
    and lists no other CPUs."""
    entries = other_cpu_entries(profile, host_fields)
    if cpu_model == recorded_cpu(profile):
        # [host] is that CPU's already (a case's settings may set both): nothing to replace.
        return None
    for number, model, values in entries:
        if model != cpu_model:
            continue
        overrides = {f"host.{field}": value for field, value in values.items()}
        # Whichever key says where the CPU-bound rates were measured now says this CPU.
        overrides.update({key: cpu_model for key in RECORDED_CPU_KEYS if profile.has(key)})
        overrides["host.recorded.cpu_model"] = cpu_model
        data = profile.with_overrides(overrides).data
        del data["host"]["other_cpu"]  # a profile of that one CPU now
        chosen = Profile(data, f"{profile.origin} (host.other_cpu[{number}])", profile.text)
        return OtherCpuCosts(chosen, number, tuple(values))
    return None
