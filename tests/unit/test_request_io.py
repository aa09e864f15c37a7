"""The request-level data path: layouts, interval sets, the lock manager's timeline, and
agreement with the fluid path where nothing serialises."""

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

import simfs
from simfs.engine.station import Station
from simfs.filesystems.core.intervals import IntervalSet
from simfs.filesystems.core.layout import Layout
from simfs.filesystems.core.locking import EOF_OFFSET, LockManager, LockPolicy, lustre_extent_policy
from simfs.filesystems.core.request_io import _InFlight, file_offset, object_pieces

MIB = 1 << 20


# -- layouts and intervals --------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(1, 8),
    size_units=st.integers(1, 4),
    offset=st.integers(0, 50 * MIB),
    length=st.integers(1, 5 * MIB),
)
def test_object_pieces_cover_the_range_once_and_map_back(count, size_units, offset, length):
    stripe_size = size_units * 65536
    layout = Layout(tuple(range(count)), stripe_size)
    pieces = object_pieces(layout, offset, length)
    assert sum(end - start for _, start, end in pieces) == length
    # Map every piece back to the file a stripe unit at a time (a piece may span several
    # units of its object, which lie apart in the file): the file bytes they cover must
    # be exactly the range, each once (as many bytes added as the range holds).
    covered = IntervalSet()
    for obj, start, end in pieces:
        position = start
        while position < end:
            unit_end = min(end, (position // stripe_size + 1) * stripe_size)
            byte = file_offset(layout, obj, position)
            covered.add(byte, byte + unit_end - position)
            position = unit_end
    assert covered.total == length
    assert covered.remove(offset, offset + length) == length and covered.total == 0
    assert file_offset(layout, pieces[0][0], pieces[0][1]) == offset


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 200), st.integers(0, 60)), max_size=40))
def test_interval_set_matches_a_set_of_bytes(operations):
    intervals, reference = IntervalSet(), set()
    for add, start, length in operations:
        if add:
            intervals.add(start, start + length)
            reference |= set(range(start, start + length))
        else:
            removed = intervals.remove(start, start + length)
            assert removed == len(reference & set(range(start, start + length)))
            reference -= set(range(start, start + length))
        assert intervals.total == len(reference)
        assert set().union(*(range(s, e) for s, e in intervals)) == reference
        spans = list(intervals)
        assert all(e < s2 for (_, e), (s2, _) in zip(spans, spans[1:]))  # disjoint, merged


# -- the lock manager -------------------------------------------------------------------
def _manager(env, flush_s=0.0, policy=None):
    server = Station(env, "lock-server")
    flushed = []

    def flush(lock):
        flushed.append((env.now, lock.node, lock.start, lock.end))
        yield env.timeout(flush_s)

    manager = LockManager(env, policy or lustre_extent_policy(service_s=1e-4), 2, lambda key: server, 1e-3, flush)
    return manager, flushed


def test_a_conflict_calls_the_holder_back_which_flushes_and_cancels_before_the_grant():
    env = simpy.Environment()
    manager, flushed = _manager(env, flush_s=5e-3)
    log = {}

    def writer(node, start, at):
        yield env.timeout(at)
        lock = yield from manager.acquire(node, "obj", start, start + 4096)
        log[node] = (env.now, lock.start, lock.end)
        manager.done(lock)

    env.process(writer(0, 0, 0.0))
    env.process(writer(1, 8 * MIB, 0.01))
    env.run()
    # Node 0: a request (1 ms), the server (0.1 ms), the grant (1 ms); the whole object.
    assert log[0] == (pytest.approx(2.1e-3), 0, EOF_OFFSET)
    # Node 1 at 10 ms: request 1 ms + 0.1 ms; callback 1 ms (node 0 flushes from 12.1 ms);
    # flush 5 ms; cancel 1 ms + 0.1 ms; grant 1 ms: 19.2 ms.  Nothing of node 0's is left:
    # node 1 gets the whole object.
    assert flushed == [(pytest.approx(12.1e-3), 0, 0, EOF_OFFSET)]
    assert log[1] == (pytest.approx(19.2e-3), 0, EOF_OFFSET)
    assert manager.enqueues == 2 and manager.callbacks == 1


def test_grants_grow_up_to_other_nodes_locks_and_waiting_requests():
    env = simpy.Environment()
    manager, _ = _manager(env, flush_s=5e-3)
    grants = {}

    def writer(node, start, at):
        yield env.timeout(at)
        lock = yield from manager.acquire(node, "obj", start, start + 4096)
        grants.setdefault(node, []).append((lock.start, lock.end))
        manager.done(lock)

    env.process(writer(1, 64 * MIB, 0.0))  # node 1 first: the whole object
    env.process(writer(0, 0, 0.01))  # node 0 conflicts: node 1 is called back (at 12.1 ms)
    env.process(writer(1, 65 * MIB, 0.0125))  # node 1, told to give it up, asks again
    env.run()
    # Node 1's new request overlaps its own old lock, still being flushed: it waits for
    # the cancel too, behind node 0's.  Then node 0's grant grows up to node 1's queued
    # request, and node 1's from there to the end.
    assert grants[1] == [(0, EOF_OFFSET), (65 * MIB, EOF_OFFSET)]
    assert grants[0] == [(0, 65 * MIB)]


def test_contended_grants_grow_by_at_most_32_mib():
    env = simpy.Environment()
    server = Station(env, "s")
    nodes = 40
    manager = LockManager(env, lustre_extent_policy(), nodes, lambda key: server, 1e-3, lambda lock: iter(()))
    grants = {}

    def writer(node):
        lock = yield from manager.acquire(node, "obj", node * 64 * MIB, node * 64 * MIB + 4096)
        grants[node] = (lock.start, lock.end)
        yield env.timeout(1.0)  # keep it in use: the others queue behind node 0's grant
        manager.done(lock)

    for node in range(nodes):
        env.process(writer(node))
    env.run()
    assert grants[0] == (0, EOF_OFFSET)  # the first finds nobody
    # When node 0 lets go, 39 requests are granted, each with 38 others granted or queued:
    # more than 4, so none grows downwards, and more than 32, so each grows by 32 MiB.
    for node in range(1, nodes):
        assert grants[node] == (node * 64 * MIB, node * 64 * MIB + 32 * MIB)


def test_parity_stripe_locks_cover_whole_stripes_and_do_not_grow():
    policy = LockPolicy("panfs", per_object=False, unit_bytes=9 * 65536, grow=False)
    assert policy.extent(100, 200) == (0, 9 * 65536)
    assert policy.extent(9 * 65536 - 1, 9 * 65536 + 1) == (0, 18 * 65536)
    token = LockPolicy("cxfs", per_object=False, unit_bytes=0, grow=False)
    assert token.extent(5, 6) == (0, EOF_OFFSET)


# -- agreement with the fluid path ------------------------------------------------------
@pytest.mark.parametrize(
    "system, workload, nodes",
    [
        ("crtdc-lfs5", "ior -w -t 1m -b 4096m", 1),  # one client: no other node to conflict
        ("crtdc-lfs5", "ior -w -e -t 1m -b 1m -s 1024", 4),  # each object written by one node
        ("crtdc-lfs4", "ior -w -e -t 1m -b 1m -s 512", 12),  # ... on HDD RAID-0 sets
        ("crtdc-lfs4", "ior -w -e -t 1m -b 1m -s 512 -F", 12),  # file per process stays fluid
    ],
)
def test_request_and_fluid_levels_agree_where_nothing_serialises(system, workload, nodes):
    stripes = {"stripe_count": nodes} if nodes > 1 else {}
    fluid = simfs.simulate(system, workload, nodes=nodes, mode="fluid", **stripes).phases.iloc[0]
    request = simfs.simulate(system, workload, nodes=nodes, mode="request", **stripes).phases.iloc[0]
    assert fluid["mode"] == "fluid"
    assert request["mode"] == ("fluid" if "-F" in workload else "request")
    assert request["agg_bw_Bps"] == pytest.approx(fluid["agg_bw_Bps"], rel=0.02)


def test_direct_shared_writes_go_to_the_targets_under_their_locks_with_nothing_cached():
    # IOR's hard pattern with O_DIRECT from 8 nodes: the same lock traffic as buffered
    # writes, but each call is its own synchronous RPCs (one per stripe object it
    # touches: 800 records of 47,008 B over 1 MiB stripes, 35 of them across a stripe
    # boundary), no partial page is read and no dirty page is flushed on a callback.
    strided = "ior -a POSIX -w -e -t 47008 -b 47008 -s 100"
    buffered = simfs.simulate("crtdc-lfs3", strided, nodes=8, stripe_count=16)
    direct = simfs.simulate("crtdc-lfs3", strided + " --posix.odirect", nodes=8, stripe_count=16)
    row = direct.phases.iloc[0]
    assert row["mode"] == "request" and row["bottleneck"] in {"direct-io-latency", "extent-lock"}
    counts = direct.request_counts
    records = 8 * 100
    crossings = sum((offset // MIB) != ((offset + 47008 - 1) // MIB) for offset in range(0, records * 47008, 47008))
    assert counts["rpcs"] == records + crossings == 835
    assert counts.get("page_reads", 0) == 0 and buffered.request_counts["page_reads"] > 0
    assert counts["lock_callbacks"] > 0  # the records still interleave within objects
    assert row["bytes"] == records * 47008


def test_write_back_caches_absorb_more_at_request_level():
    # lfs3's DDN caches: the fluid model lets them take the last bytes of each writer at
    # host speed; at request level they take writes while they destage, which the disks
    # drain at the same rate, so a long write gains up to the cache's size over the disks'
    # rate.  Same order, not the same number: the request level is the finer model here.
    workload, settings = "ior -w -e -t 1m -b 1m -s 1024", {"nodes": 4, "stripe_count": 4}
    fluid = simfs.simulate("crtdc-lfs3", workload, mode="fluid", **settings).phases.iloc[0]["agg_bw_Bps"]
    request = simfs.simulate("crtdc-lfs3", workload, mode="request", **settings).phases.iloc[0]["agg_bw_Bps"]
    assert fluid < request < 1.25 * fluid


def test_every_byte_written_reaches_the_targets():
    result = simfs.simulate("crtdc-lfs3", "ior -w -e -t 47008 -b 47008 -s 50", nodes=4, ppn=2)
    assert result.phases.iloc[0]["bytes"] == 4 * 2 * 50 * 47008


# -- what the lock model predicts -------------------------------------------------------
def _rate(system, workload, nodes, **settings):
    return simfs.simulate(system, workload, nodes=nodes, **settings).phases.iloc[0]["agg_bw_Bps"]


def test_unaligned_strided_records_collapse_and_aligned_ones_do_not():
    unaligned = _rate("crtdc-lfs3", "ior -w -e -t 47008 -b 47008 -s 100", 8, stripe_count=4)
    aligned = _rate("crtdc-lfs3", "ior -w -e -t 1m -b 1m -s 8", 8, stripe_count=8)
    per_process = _rate("crtdc-lfs3", "ior -F -w -e -t 47008 -b 47008 -s 100", 8, stripe_count=4)
    assert unaligned < aligned / 5
    assert unaligned < per_process / 5


def test_strided_writes_per_node_fall_as_writer_nodes_are_added():
    rates = [_rate("crtdc-lfs3", "ior -w -e -t 47008 -b 47008 -s 60", nodes, ppn=4, stripe_count=4) for nodes in (2, 8)]
    # More nodes: more of each record's neighbours on other nodes, more callbacks per
    # byte: each node writes slower.
    assert rates[1] / 8 < rates[0] / 2


def test_request_level_phases_say_so():
    result = simfs.simulate("crtdc-lfs3", "ior -w -r -t 47008 -b 47008 -s 20", nodes=2)
    modes = dict(zip(result.phases["phase"], result.phases["mode"]))
    assert modes == {"write": "request", "read": "fluid"}
    one_node = simfs.simulate("crtdc-lfs3", "ior -w -t 47008 -b 47008 -s 20", nodes=1, ppn=4)
    assert one_node.phases.iloc[0]["mode"] == "fluid"  # one client: nothing to call back


def test_a_grant_is_used_before_a_callback_that_arrives_with_it_takes_it_away():
    # Two nodes writing the same bytes again and again: each grant meets the other node's
    # request at once, so its callback reaches the holder together with the grant.  The
    # grant carries the requester's reference (ldlm_cli_enqueue), so every grant is written
    # under before it goes; without that the two could pass the lock back and forth forever.
    env = simpy.Environment()
    manager, _ = _manager(env, flush_s=1e-4)
    writes = []

    def writer(node):
        for _ in range(20):
            lock = yield from manager.acquire(node, "obj", 0, 4096)
            assert not lock.cancelled and lock.node == node
            writes.append((env.now, node))
            yield env.timeout(1e-4)
            manager.done(lock)

    for node in range(2):
        env.process(writer(node))
    env.run(until=60.0)
    assert len(writes) == 40
    assert manager.callbacks >= 20  # they did take turns, through callbacks


def test_client_computed_parity_reads_nothing_where_the_node_holds_the_whole_stripe():
    # crtdc-panfs: parity stripes of 9 x 64 KiB data units.  Records of exactly one
    # aligned parity stripe, interleaved over 4 nodes: each node's cache holds every data
    # unit of the stripes it writes back, so the client computes their parity there and
    # reads nothing; it sends one unit of parity per nine of data.  47,001 B records share
    # stripes between nodes: their write-back reads the old data and parity first.
    stripe = 9 * 65536
    whole = simfs.simulate("crtdc-panfs", f"ior -w -e -t {stripe} -b {stripe} -s 40", nodes=4, mode="request")
    counts = whole.request_counts
    assert whole.phases.iloc[0]["mode"] == "request"
    assert counts.get("parity_reads", 0) == 0 and counts["parity_from_cache"] > 0
    # Every data RPC of 64 KiB goes with a parity RPC of a ninth of it in whole pages
    # (8 KiB): one RPC each.
    assert counts["rpcs"] == 2 * counts["parity_from_cache"] == 2 * 4 * 40 * 9
    shared = simfs.simulate("crtdc-panfs", "ior -w -e -t 47001 -b 47001 -s 40", nodes=4, mode="request")
    assert shared.request_counts["parity_reads"] > 0


@given(
    ranges=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 64)), min_size=1, max_size=30),
    removed=st.lists(st.integers(0, 29), max_size=15),
    queries=st.lists(st.tuples(st.integers(0, 500), st.integers(1, 100)), min_size=1, max_size=10),
)
def test_in_flight_overlaps_are_every_overlapping_entry_latest_first(ranges, removed, queries):
    # The search stops once entries start too far back to reach the query (the longest
    # entry added bounds that); what it finds is what a scan of every entry finds.
    env = simpy.Environment()
    in_flight, kept = _InFlight(), []
    for start, length in ranges:
        entry = (start, start + length, env.event())
        in_flight.add(*entry)
        kept.append(entry)
    for index in sorted(set(i for i in removed if i < len(kept)), reverse=True):
        in_flight.remove(*kept.pop(index))

    def keys(entries):
        return sorted((entry[0], entry[1], id(entry[2])) for entry in entries)

    covered = IntervalSet()
    for entry in kept:
        covered.add(entry[0], entry[1])
    assert list(in_flight.bytes) == list(covered)
    for start, length in queries:
        end = start + length
        every = [entry for entry in kept if entry[0] < end and entry[1] > start]
        found = in_flight.overlapping(start, end)
        assert keys(found) == keys(every)
        assert [entry[0] for entry in found] == sorted((entry[0] for entry in found), reverse=True)
