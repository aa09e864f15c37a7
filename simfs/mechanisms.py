"""The contention mechanisms a user can switch off, to see what each one does.

In a profile (all default to on)::

    [mechanisms]
    hdd_seek = true

or on the command line: ``--set mechanisms.hdd_seek=false``.  With every mechanism off,
simfs is the plain bandwidth model: fixed capacities shared max-min fairly.

==========================  ================================================================
``hdd_seek``                HDD seek thrashing under interleaved streams
                            (``simfs.hardware.hdd.SeekThrashing``)
``raid_parity``             RAID-5/6 partial-stripe writes pay read-modify-write
                            (``simfs.hardware.raid.RaidSet.write_cost``)
``extent_locks``            unaligned shared-file writes hand extent locks between nodes
                            (``simfs.filesystems.lustre.locks``)
``tcp_incast``              reads from many servers at once over a TCP (Ethernet) client link
                            overflow the switch port and stall for RTO_min (``simfs.hardware.incast``)
``dirty_limit``             buffered writes run ahead of the network by the page cache's dirty
                            limit, and drain after the application returns
``rpc_window``              a client keeps at most ``max_rpcs_in_flight`` RPCs per OST in flight
``fabric_oversubscription`` the switch core carries ports x port rate / blocking factor
==========================  ================================================================
"""

from __future__ import annotations

from simfs.errors import ProfileError
from simfs.systems.profile import Profile

MECHANISMS = {
    "hdd_seek": "HDD seek thrashing under interleaved streams",
    "raid_parity": "RAID-5/6 read-modify-write for partial-stripe writes",
    "extent_locks": "shared-file (N-1) extent-lock hand-offs between writers",
    "tcp_incast": "TCP incast: synchronized reads from many servers over Ethernet",
    "dirty_limit": "page-cache dirty limit and background write-back",
    "rpc_window": "RPCs in flight per client and OST (a rate cap)",
    "fabric_oversubscription": "switch core capacity (blocking factor)",
}


def mechanisms_from_profile(profile: Profile) -> dict[str, bool]:
    table = profile.data.get("mechanisms", {})
    if not isinstance(table, dict):
        raise ProfileError(f"{profile.origin}: mechanisms: expected a table of name = true|false")
    switches = {}
    for name in table:
        if name not in MECHANISMS:
            raise ProfileError(
                f"{profile.origin}: mechanisms.{name}: unknown mechanism (known: {', '.join(MECHANISMS)})"
            )
    for name in MECHANISMS:
        value = profile.raw(f"mechanisms.{name}", True)
        if not isinstance(value, bool):
            raise ProfileError(f"{profile.origin}: mechanisms.{name}: expected true or false, got {value!r}")
        switches[name] = value
    return switches
