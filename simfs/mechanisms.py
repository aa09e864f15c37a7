"""The contention mechanisms a user can switch off, to see what each one does.

In a profile (all default to on)::

    [mechanisms]
    hdd_seek = true

or on the command line: ``--set mechanisms.hdd_seek=false``.  With every mechanism off,
simfs is the plain bandwidth model: fixed capacities shared max-min fairly.

==========================  ================================================================
``hdd_seek``                HDD seek thrashing under interleaved streams
                            (``simfs.hardware.hdd.SeekThrashing``)
``raid_parity``             RAID-5/6 partial-stripe writes pay read-modify-write (or reconstruct-write)
                            (``simfs.hardware.raid.RaidSet.write_cost``)
``ssd_iops``                SSD requests cost at least ``1 / IOPS``: bandwidth ``min(B, IOPS x size)``
                            (``simfs.hardware.ssd``)
``ssd_write_cliff``         a preconditioned SSD (``ost.ssd.preconditioned``) writes at
                            ``B / WA`` (``simfs.hardware.ssd``)
``controller_cache``        a controller's write-back cache absorbs writes at host speed and
                            destages them afterwards (``simfs.hardware.controller``)
``controller_prefetch``     more read streams than prefetch segments evict prefetched data
                            before use (``simfs.hardware.controller``)
``md_raid_thread``          a software RAID-5/6 array's writes run in one kernel thread
                            (``ost.write_thread_Bps``, ``simfs.hardware.raid``)
``extent_locks``            writers of one shared file on several nodes take locks from the
                            file system's lock manager, call each other's back and flush
                            (request level: ``simfs.filesystems.core.locking``)
``tcp_incast``              reads from many servers at once over a TCP (Ethernet) client link
                            overflow the switch port; TCP recovers by fast retransmit, tail-loss
                            probe or RTO, played out (``simfs.hardware.loss_recovery``)
``dirty_limit``             buffered writes run ahead of the network by the page cache's dirty
                            limit, and drain after the application returns
``oss_threads``             an OSS serves bulk RPCs from ``oss.threads`` threads held
                            ``oss.rpc_service_s`` each (``simfs.hardware.server``)
``readahead_window``        a buffered reader keeps at most its readahead window in flight:
                            ``max_read_ahead_bytes / readers on the node / RPC latency``
``rpc_window``              a client keeps at most ``max_rpcs_in_flight`` RPCs per OST in flight
``mds_directory_lock``      creates and removes in one shared directory serialise on its lock
                            (request level: ``simfs.filesystems.core.metadata``)
``fabric_oversubscription`` the switch core carries ports x port rate / blocking factor
``call_overhead``           every buffered read()/write() call costs ``client.call_overhead_s``
                            of the core beyond its copy (``simfs.hardware.client``)
``client_read_sharing``     ranks on one node reading the same data fetch it once; the others
                            read the node's page cache (``simfs.filesystems.lustre.instance``)
``server_read_cache``       nodes reading the same data at once: the server reads it from its
                            drives once and serves the others from its cache
``readahead_restart``       a buffered reader that jumps to a new segment waits one RPC round
                            trip before readahead runs again (``simfs.simulation``)
``shared_host_cpu``         daemons and clients on one machine (a testbed) share its cores:
                            every byte costs ``host.*_cpu_s_per_byte`` (``simfs.hardware.shared_host``)
==========================  ================================================================
"""

from __future__ import annotations

from simfs.errors import ProfileError
from simfs.systems.profile import Profile

MECHANISMS = {
    "hdd_seek": "HDD seek thrashing under interleaved streams",
    "raid_parity": "RAID-5/6 read-modify-write for partial-stripe writes",
    "ssd_iops": "SSD per-request cost from its IOPS rating (small requests)",
    "ssd_write_cliff": "write amplification of a preconditioned (full, untrimmed) SSD",
    "controller_cache": "controller write-back cache: absorb at host speed, destage after",
    "controller_prefetch": "controller prefetch-cache thrash under many read streams",
    "md_raid_thread": "software RAID-5/6 writes limited by one md kernel thread per array",
    "extent_locks": "shared-file (N-1) writes through the lock manager (request level: grants, callbacks, flushes)",
    "tcp_incast": "TCP incast: synchronized reads from many servers over Ethernet",
    "dirty_limit": "page-cache dirty limit and background write-back",
    "oss_threads": "OSS bulk-RPC service threads (a pool; the rest queue)",
    "readahead_window": "client readahead window per file (a rate cap on buffered reads)",
    "rpc_window": "RPCs in flight per client and OST (a rate cap)",
    "mds_directory_lock": "creates and removes in one directory serialise on its lock",
    "fabric_oversubscription": "switch core capacity (blocking factor)",
    "call_overhead": "per-call core time of buffered read()/write() beyond the copy",
    "client_read_sharing": "ranks on a node reading the same data fetch it once (page cache)",
    "server_read_cache": "nodes reading the same data at once cost the drives one read (server cache)",
    "readahead_restart": "a buffered reader stalls one RPC round trip at each jump to a new segment",
    "shared_host_cpu": "daemons and clients sharing one machine's cores (a testbed): every byte costs its CPU",
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
        switches[name] = profile.boolean(f"mechanisms.{name}", True)
    return switches
