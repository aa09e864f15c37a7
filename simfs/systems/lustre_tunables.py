"""Lustre's own tunable names (``lctl get_param`` / ``lctl set_param``) as profile fields.

A Lustre user knows ``osc.*.max_rpcs_in_flight``, not ``lustre.max_rpcs_in_flight``.
These names are accepted in ``--set``, in a sweep's ``--vary`` and in a profile's TOML
(``[osc] max_dirty_mb = 64``), and become the profile field they set, converted to its
unit.  Giving both names of one field is an error.

=================================  ===================================  =======================
Lustre tunable (per OSC/MDC/llite)  profile field                        conversion
=================================  ===================================  =======================
``osc.max_rpcs_in_flight``          ``lustre.max_rpcs_in_flight``        as is
``osc.max_dirty_mb``                ``lustre.max_dirty_bytes_per_osc``   MiB to bytes
``osc.max_pages_per_rpc``           ``lustre.rpc_size_bytes``            4 KiB pages to bytes
``llite.max_read_ahead_mb``         ``lustre.max_read_ahead_bytes``      MiB to bytes
``mdc.max_rpcs_in_flight``          ``lustre.max_metadata_rpcs_in_flight``  as is
``mdc.max_mod_rpcs_in_flight``      ``lustre.max_mod_rpcs_in_flight``    as is
``ost.threads_max``                 ``oss.threads``                      as is (``ost.OSS.ost_io.threads_max``)
=================================  ===================================  =======================

The page size is the 4 KiB of x86-64 Linux, which the Lustre manual's
``max_pages_per_rpc`` examples assume (256 pages = 1 MiB).

:func:`from_lctl` reads ``lctl get_param`` output (``param=value`` per line, the form the
Lustre Operations Manual shows: ``osc.testfs-OST0000-osc-ffff881071d5cc00.
max_rpcs_in_flight=8``) into the same names; ``simfs simulate --lctl FILE`` uses it.
"""

from __future__ import annotations

from typing import Any

_PAGE_BYTES = 4096
_MIB = 1 << 20

#: Lustre tunable -> (profile field, factor to the field's unit).
TUNABLES: dict[str, tuple[str, int]] = {
    "osc.max_rpcs_in_flight": ("lustre.max_rpcs_in_flight", 1),
    "osc.max_dirty_mb": ("lustre.max_dirty_bytes_per_osc", _MIB),
    "osc.max_pages_per_rpc": ("lustre.rpc_size_bytes", _PAGE_BYTES),
    "llite.max_read_ahead_mb": ("lustre.max_read_ahead_bytes", _MIB),
    "mdc.max_rpcs_in_flight": ("lustre.max_metadata_rpcs_in_flight", 1),
    "mdc.max_mod_rpcs_in_flight": ("lustre.max_mod_rpcs_in_flight", 1),
    "ost.threads_max": ("oss.threads", 1),
}


def translate(key: str, value: Any, where: str) -> tuple[str, Any]:
    """``(field, value)`` for a Lustre tunable; any other key unchanged.  ``where`` names
    the input in an error (a profile path, ``--set``)."""
    if key not in TUNABLES:
        return key, value
    field, factor = TUNABLES[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {key}: expected a positive integer (Lustre's unit), got {value!r}")
    return field, value * factor


def translate_tables(data: dict[str, Any], origin: str) -> dict[str, Any]:
    """A profile's TOML with the tunables it names (``[osc] max_dirty_mb = 64``) moved to
    their fields; ``data`` is not changed."""
    found = {
        key: data[table][name]
        for key in TUNABLES
        for table, name in [key.split(".")]
        if isinstance(data.get(table), dict) and name in data[table]
    }
    if not found:
        return data
    copy = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    for key, value in found.items():
        table, name = key.split(".")
        del copy[table][name]
        if not copy[table]:
            del copy[table]
        field, converted = translate(key, value, origin)
        section, leaf = field.split(".")
        if leaf in copy.get(section, {}):
            raise ValueError(f"{origin}: {key} and {field} name the same field: give one")
        copy.setdefault(section, {})[leaf] = converted
    return copy


def from_lctl(text: str, origin: str) -> tuple[dict[str, int], list[str]]:
    """The tunables above from ``lctl get_param`` output (``osc.lustre-OST0000-osc-ffff…
    .max_rpcs_in_flight=8``, one per line, any number of devices), as ``--set`` keys;
    and the parameters read that simfs does not model.  Every device of a kind must have
    the same value (simfs has one per client); a line that is not ``param=value`` is an
    error naming it."""
    found: dict[str, tuple[int, int]] = {}  # tunable -> (value, line)
    unmodelled: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        param, equals, value = line.partition("=")
        parts = param.split(".")
        if not equals or len(parts) < 2:
            raise ValueError(f"{origin}:{number}: expected lctl get_param's param=value, got {line[:80]!r}")
        # osc.<device>.name, ost.OSS.ost_io.threads_max, llite.<fs>.name
        key = f"{parts[0]}.{parts[-1]}"
        if key not in TUNABLES:
            unmodelled.append(param)
            continue
        if not value.strip().isdigit():
            raise ValueError(f"{origin}:{number}: {param}: expected a whole number, got {value.strip()!r}")
        amount = int(value)
        if key in found and found[key][0] != amount:
            raise ValueError(
                f"{origin}:{number}: {param}={amount}, but line {found[key][1]} gave {found[key][0]}: "
                "simfs takes one value per client; give the devices' common value with --set"
            )
        found.setdefault(key, (amount, number))
    if not found:
        raise ValueError(f"{origin}: no tunable simfs models ({', '.join(TUNABLES)})")
    return {key: value for key, (value, _) in found.items()}, unmodelled
