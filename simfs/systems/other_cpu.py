"""``[[host.other_cpu]]``: a testbed profile's CPU-bound costs fitted on other CPUs.

A shared host's costs are a machine's, not a file system's: the same one-client runs
refitted on another CPU give other costs (``calibration/testbed/xeon/``).  A profile lists
them as entries of their own, each with the ``cpu_model`` a run record gives
(``machine.cpu_model``), any of the model's ``[host]`` fields, and sub-tables of the other
tables whose rates the cores set (the metadata rates: MooseFS's ``[master]`` and its
``[moosefs]`` request latency, GlusterFS's ``[dht]`` and ``[glusterfs]``), as the model's
``OTHER_CPU_FIELDS`` names them::

    [[host.other_cpu]]
    cpu_model = "Intel(R) Xeon(R) Processor"
    write_cpu_s_per_byte = 1.788e-08
    [host.other_cpu.master]
    create_per_s = 5689.0

``simfs validate --live`` predicts runs recorded on that CPU with them
(:func:`host_costs_for`), and ``simfs show`` lists them (:func:`other_cpu_profiles`).  The
builders check every entry and build the profile each makes (:func:`check_other_cpus`),
so a bad one is found when the profile is first used, whichever CPU is at hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    """The profile with one entry's costs in place, the entry's number, and the fields it
    replaced (``[host]``'s by name, the other tables' as ``table.field``)."""

    profile: Profile
    number: int
    fields: tuple[str, ...]


def other_cpu_entries(profile: Profile, fields: Mapping[str, tuple[str, ...]]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every ``[[host.other_cpu]]`` entry as ``(number, cpu_model, {"table.field": value})``,
    checked: a table with a ``cpu_model`` of its own (not another entry's), the fields
    ``fields["host"]`` names (the model's ``[host]`` fields) and sub-tables named by the
    other keys of ``fields`` with the fields each lists, each value a number >= 0 (``cores``
    a positive integer) as :meth:`Profile.number` checks it.  Each error is one line naming
    ``host.other_cpu[N].field`` (``host.other_cpu[N].table.field``)."""
    host = profile.data.get("host")
    entries = host.get("other_cpu", []) if isinstance(host, dict) else []
    if not isinstance(entries, list):
        raise ProfileError(f"{profile.origin}: host.other_cpu: expected an array of tables ([[host.other_cpu]])")
    tables = [table for table in fields if table != "host"]
    seen: dict[str, int] = {}
    checked = []
    for number, entry in enumerate(entries):
        name = f"host.other_cpu[{number}]"
        if not isinstance(entry, dict):
            raise ProfileError(f"{profile.origin}: {name}: expected a table of CPU costs with its cpu_model")
        # The entry as a profile of its own, so its fields are read as [host]'s are.
        own = Profile({"host": {f"other_cpu[{number}]": entry}}, profile.origin)
        model = own.string(f"{name}.cpu_model", "")
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
        for key, value in entry.items():
            if key == "cpu_model":
                continue
            if key in tables:
                if not isinstance(value, dict):
                    raise ProfileError(
                        f"{profile.origin}: {name}.{key}: expected a table ([host.other_cpu.{key}]) of [{key}] rates"
                    )
                for field in value:
                    if field not in fields[key]:
                        raise ProfileError(
                            f"{profile.origin}: {name}.{key}.{field}: not a [{key}] rate another CPU's entry may "
                            f"set (expected one of: {', '.join(fields[key])})"
                        )
                    values[f"{key}.{field}"] = own.number(f"{name}.{key}.{field}", minimum=0)
                continue
            if key not in fields.get("host", ()):
                also = f"; or a table of: {', '.join(tables)}" if tables else ""
                raise ProfileError(
                    f"{profile.origin}: {name}.{key}: not a [host] field "
                    f"(expected one of: {', '.join(fields.get('host', ()))}{also})"
                )
            whole = key == "cores"
            values[f"host.{key}"] = own.number(f"{name}.{key}", minimum=0, integer=whole, positive=whole)
        checked.append((number, model, values))
    return checked


def other_cpu_profiles(profile: Profile, fields: Mapping[str, tuple[str, ...]]) -> list[tuple[str, OtherCpuCosts]]:
    """``(cpu_model, costs)`` for every entry but one for the CPU the profile's rates were
    measured on (:func:`host_costs_for` of each)."""
    recorded = recorded_cpu(profile)
    return [
        (model, _costs_of(profile, number, model, values))
        for number, model, values in other_cpu_entries(profile, fields)
        if model != recorded
    ]


def check_other_cpus(profile: Profile, fields: Mapping[str, tuple[str, ...]], build: Callable[[Profile], Any]) -> None:
    """Build the profile each entry makes (with ``build``, the model's builder), so a value
    the model refuses (a rate of 0, a parallelism beyond the cores) is found when the
    profile is first used, whichever CPU is at hand; its error names the entry
    (``origin (host.other_cpu[N]): table.field: ...``)."""
    for _, costs in other_cpu_profiles(profile, fields):
        build(costs.profile)


def host_costs_for(profile: Profile, cpu_model: str, fields: Mapping[str, tuple[str, ...]]) -> OtherCpuCosts | None:
    """``profile`` with the fields of the entry for ``cpu_model`` in place (``fields`` as
    :func:`other_cpu_entries` takes it); None where no entry names that CPU or ``[host]``
    is that CPU's already (its ``recorded.cpu_model``).  The copy says where its costs
    came from (``origin (host.other_cpu[N])``), records ``cpu_model`` as the CPU it was
    fitted on and lists no other CPUs."""
    entries = other_cpu_entries(profile, fields)
    if cpu_model == recorded_cpu(profile):
        # [host] is that CPU's already (a case's settings may set both): nothing to replace.
        return None
    for number, model, values in entries:
        if model == cpu_model:
            return _costs_of(profile, number, model, values)
    return None


def _costs_of(profile: Profile, number: int, cpu_model: str, values: Mapping[str, Any]) -> OtherCpuCosts:
    """``profile`` with entry ``number``'s checked ``values`` (for ``cpu_model``) in place."""
    overrides = dict(values)
    # Whichever key says where the CPU-bound rates were measured now says this CPU.
    overrides.update({key: cpu_model for key in RECORDED_CPU_KEYS if profile.has(key)})
    overrides["host.recorded.cpu_model"] = cpu_model
    data = profile.with_overrides(overrides).data
    del data["host"]["other_cpu"]  # a profile of that one CPU now
    chosen = Profile(data, f"{profile.origin} (host.other_cpu[{number}])", profile.text)
    replaced = tuple(key.removeprefix("host.") for key in values)
    return OtherCpuCosts(chosen, number, replaced)
