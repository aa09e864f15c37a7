"""The request-level metadata service against hand timelines and closed-queue theory."""

import pytest
import simpy
from hypothesis import example, given, settings
from hypothesis import strategies as st

import simfs
from simfs.errors import ProfileError
from simfs.filesystems.core.metadata import MetadataService
from simfs.filesystems.core.system import MetadataSpec
from tests.unit.phases import phase

LFS3 = simfs.load_system("crtdc-lfs3")
LATENCY = LFS3.io.metadata_latency_s  # 0.2 ms
CREATE, CLOSE, STAT, REMOVE = (LFS3.metadata.demand_s(op) for op in ("create", "close", "stat", "remove"))


def test_one_process_pays_a_round_trip_and_the_servers_work_per_request():
    result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -T -r -u -n 100")
    assert phase(result, "file create")["ops_per_s"] == pytest.approx(1 / (2 * LATENCY + CREATE + CLOSE), rel=1e-9)
    assert phase(result, "file stat")["ops_per_s"] == pytest.approx(1 / (LATENCY + STAT), rel=1e-9)
    assert phase(result, "file remove")["ops_per_s"] == pytest.approx(1 / (LATENCY + REMOVE), rel=1e-9)


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 8])
def test_a_nodes_modifying_requests_take_turns_in_its_slots(slots):
    # Four processes of one node, unique directories, an MDS far faster than the network:
    # each item is a create and its close (a round trip each); the node keeps `slots`
    # modifying requests in flight and one close beyond them (mdc_get_mod_rpc_slot).
    fast = {f"mds.{op}_per_s": 1e9 for op in ("create", "open", "close")}
    overrides = {**fast, "lustre.max_mod_rpcs_in_flight": slots}
    result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -u -n 200", ppn=4, overrides=overrides)
    request = LATENCY + 1 / 1e9
    rate = phase(result, "file create")["ops_per_s"]
    # At most slots + 1 requests (and one per process) in flight, two requests per item.
    assert rate <= min(slots + 1, 4) / (2 * request) * (1 + 1e-9)
    if slots == 1:
        # Hand timeline: from the second round trip on, one create and one close are in
        # flight at every moment, so an item completes every round trip.
        assert rate == pytest.approx(1 / request, rel=3e-3)
    if slots >= 4:
        assert rate == pytest.approx(4 / (2 * request), rel=1e-3)  # the processes bind


@pytest.mark.parametrize("nodes", [1, 2, 3, 5, 8, 13, 20])
def test_closed_cycle_throughput_of_clients_sharing_the_server(nodes):
    """N clients each cycle through a round trip Z and a server shared by the requests
    present (processor sharing) with service time S, one request in flight per node.
    Starting together with equal times they stay together: every cycle takes Z + N S,
    so X = N / (Z + N S), under the machine-repairman bound min(N / (Z + S), 1 / S) and
    approaching 1 / S as clients are added."""
    stats = 20000.0
    overrides = {"mds.stat_per_s": stats, "lustre.max_metadata_rpcs_in_flight": 1}
    items = 2000
    result = simfs.simulate("crtdc-lfs3", f"mdtest -F -T -u -n {items}", nodes=nodes, overrides=overrides)
    service = 1 / stats
    measured = phase(result, "file stat")["ops_per_s"]
    assert measured == pytest.approx(nodes / (LATENCY + nodes * service), rel=1e-9)
    assert measured <= min(nodes / (LATENCY + service), 1 / service) * (1 + 1e-9)


def test_an_exclusive_directory_lock_serialises_one_directory_and_parallel_does_not():
    workload = "mdtest -F -C -n 500"
    exclusive = simfs.simulate("crtdc-lfs3", workload, nodes=16)
    parallel = simfs.simulate("crtdc-lfs3", workload, nodes=16, overrides={"mds.directory_lock": "parallel"})
    dir_rate = LFS3.metadata.dir_update_per_s  # 2000/s
    assert phase(exclusive, "file create")["ops_per_s"] == pytest.approx(dir_rate, rel=1e-3)
    assert phase(exclusive, "file create")["bottleneck"] == "mds-dir"
    # Parallel directory operations: the MDS core binds; the 16 nodes' requests, arriving
    # together, share it and stay together: an item takes two round trips and 16 creates
    # and closes' work.
    item = 2 * LATENCY + 16 * (CREATE + CLOSE)
    assert phase(parallel, "file create")["ops_per_s"] == pytest.approx(16 / item, rel=1e-3)
    assert phase(parallel, "file create")["bottleneck"] == "mds"


def test_threads_held_through_the_lock_wait_bind_when_few():
    # Two threads, 16 nodes creating in one directory: a thread is held from arrival
    # through the lock wait and the work, so two requests at a time reach the lock and
    # the lock idles while a reply travels and the next request waits for a thread.
    few = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 300", nodes=16, overrides={"mds.threads": 2})
    many = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 300", nodes=16)
    assert phase(few, "file create")["ops_per_s"] < phase(many, "file create")["ops_per_s"]
    seconds = few.phases.set_index("phase").loc["file create", "bottleneck"]
    assert seconds in {"mds-threads", "mds-dir"}
    one_thread = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 300", nodes=16, overrides={"mds.threads": 1})
    # One thread: each create holds it for its lock hold and work, each close for its work.
    hold = 1 / LFS3.metadata.dir_update_per_s
    assert phase(one_thread, "file create")["ops_per_s"] == pytest.approx(1 / (hold + CREATE + CLOSE), rel=1e-3)


def test_removing_another_nodes_files_waits_for_its_locks_to_be_called_back():
    # mdtest -N 1 with one process per node: each rank removes the files of the rank on
    # the next node, whose client caches their locks: a blocking callback and its cancel,
    # one more round trip (and the server's callback time) per remove.
    # The MDS is made fast enough (20,000 removes/s) that the two nodes never queue.
    callback, remove = 50e-6, 1 / 20000
    overrides = {"mds.callback_s": callback, "mds.remove_per_s": 20000.0}
    own = simfs.simulate("crtdc-lfs3", "mdtest -F -C -r -u -n 200", nodes=2, overrides=overrides)
    other = simfs.simulate("crtdc-lfs3", "mdtest -F -C -r -u -n 200 -N 1", nodes=2, overrides=overrides)
    own_rate = phase(own, "file remove")["ops_per_s"]
    other_rate = phase(other, "file remove")["ops_per_s"]
    # The two nodes' removes arrive together and share the MDS core (2 x remove each).
    assert own_rate == pytest.approx(2 / (LATENCY + 2 * remove), rel=1e-3)
    assert other_rate == pytest.approx(2 / (2 * LATENCY + callback + 2 * remove), rel=1e-3)
    assert phase(other, "file remove")["bottleneck"] in {"lock-callbacks", "metadata-latency"}


def test_directory_tokens_revoked_by_every_update_make_creates_fall_with_clients():
    # CXFS: every create in the shared directory calls back the lookup token of every
    # other client that looked the directory up since the last create; each of them looks
    # it up again before its next create.  The cost grows with the contenders.  With a
    # fast server and no directory lock, two clients alternate: each create first looks the
    # directory up (a round trip), then revokes the other's token (a round trip) under the
    # directory's lock, and closes (a round trip): the two clients' creates are serialised
    # by the revocations.
    fast = {f"mds.{op}_per_s": 1e9 for op in ("create", "open", "close", "stat")}
    cxfs = {**fast, "mds.dir_update_per_s": 1e9}
    latency = simfs.load_system("tud-cxfs").io.metadata_latency_s
    rates = []
    for nodes in (1, 2):
        result = simfs.simulate("tud-cxfs", "mdtest -F -C -n 300", nodes=nodes, overrides=cxfs)
        rates.append(phase(result, "file create")["ops_per_s"])
    # One client keeps its token: one lookup at the start, then a create and a close per item.
    assert rates[0] == pytest.approx(300 / (latency + 300 * 2 * latency), rel=1e-3)
    assert rates[1] < 1.5 * rates[0]
    # Lustre 2.x inodebits keep LOOKUP apart from UPDATE: no callbacks, and with an MDS far
    # faster than the clients two nodes create twice as fast as one.
    fast = {**fast, "mds.directory_lock": "parallel"}
    lustre = [
        phase(simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 300", nodes=n, overrides=fast), "file create")["ops_per_s"]
        for n in (1, 2)
    ]
    assert lustre[1] == pytest.approx(2 * lustre[0], rel=1e-3)


def test_directory_lock_queue_is_recorded_for_teaching():
    from simfs.filesystems.core.metadata import MetadataService

    assert "queue_samples" in dir(MetadataService)
    result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 50", nodes=8, record_timeline=True)
    samples = result.request_queues["mds.dir-lock"]
    assert max(count for _, count in samples) >= 7


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("mds.cores", 0, "mds.cores"),
        ("mds.threads", -1, "mds.threads"),
        ("mds.directory_lock", "pdo", "mds.directory_lock"),
        ("mds.callback_s", -1.0, "mds.callback_s"),
        ("lustre.max_mod_rpcs_in_flight", 0, "lustre.max_mod_rpcs_in_flight"),
        ("lustre.max_metadata_rpcs_in_flight", 2.5, "lustre.max_metadata_rpcs_in_flight"),
    ],
)
def test_bad_metadata_fields_are_named(field, value, message):
    with pytest.raises(ProfileError, match=message):
        simfs.load_system("crtdc-lfs3", {field: value})


def test_every_file_systems_metadata_line_says_how_one_directory_is_treated():
    rates = dict(create_per_s=100.0, open_per_s=200.0, close_per_s=300.0, stat_per_s=400.0, remove_per_s=50.0)
    exclusive = MetadataSpec(**rates, dir_update_per_s=80.0)
    assert exclusive.describe() == (
        "create 100/s, open 200/s, close 300/s, stat 400/s, remove 50/s; 80 creates or removes/s in one directory"
    )
    assert (
        MetadataSpec(**rates, dir_update_per_s=80.0, directory_lock="parallel")
        .describe()
        .endswith("; creates and removes in one directory in parallel")
    )
    operation = MetadataSpec(**rates, dir_update_per_s=80.0, directory_lock="operation", lock_handover_cpu_s=2e-3)
    assert operation.describe().endswith(
        "; each create or remove holds its directory's lock to its reply, 2 ms of CPU when the lock passes between clients"
    )


def _granted_by_scan(waiting, in_flight, closes_in_flight, limit):
    """mdc_get_mod_rpc_slot's rule as simfs applied it before 2026-11-28 on a release (the
    kernel stops at the first waiter it cannot serve unless a close was released, which
    comes to the same in every reachable state): every waiter in arrival order, granted
    if a slot is under the limit or, for a close, if no other close is in flight.
    Returns the granted waiters in order and the counts after."""
    granted = []
    for entry in list(waiting):
        is_close = entry[1]
        if in_flight < limit or (is_close and not closes_in_flight):
            waiting.remove(entry)
            in_flight += 1
            closes_in_flight += is_close
            granted.append(entry[0])
    return granted, in_flight, closes_in_flight


@settings(max_examples=300, deadline=None)
# The extra close: at the limit a close's release frees the close slot for the waiting
# close behind a waiting create.
@example(limit=1, steps=["close", "create", "close", ("release", 0)])
@given(
    limit=st.integers(1, 4),
    steps=st.lists(
        st.one_of(st.sampled_from(["create", "close"]), st.integers(0, 7).map(lambda pick: ("release", pick))),
        max_size=60,
    ),
)
def test_modifying_slots_are_granted_in_the_kernels_order(limit, steps):
    # One node's slots driven directly: arrivals (creates, closes) and releases of any
    # request in flight, the grants and the counts after every step compared with the
    # in-order scan above (after every step: a grant one release late must not pass).
    env = simpy.Environment()
    system = simfs.load_system("crtdc-lfs3", {"lustre.max_mod_rpcs_in_flight": limit})
    service = MetadataService(env, system, nodes=1)
    waiting, in_flight, closes, held, granted_order = [], 0, 0, [], []

    def arrive(number, slot):
        yield from service._acquire_slot(0, slot)
        granted_order.append(number)

    expected = []
    for number, step in enumerate(steps):
        if isinstance(step, tuple):
            if not held:
                continue
            slot = held.pop(step[1] % len(held))
            service._release_slot(0, slot)
            in_flight -= 1
            closes -= slot == "close"
            newly, in_flight, closes = _granted_by_scan(waiting, in_flight, closes, limit)
            expected += newly
            held += [steps[granted] for granted in newly]
        else:
            env.process(arrive(number, step))
            if not waiting and in_flight < limit or (step == "close" and not closes):
                in_flight += 1
                closes += step == "close"
                expected.append(number)
                held.append(step)
            else:
                waiting.append((number, step == "close"))
        env.run()
        assert granted_order == expected
        assert (service._mod_in_flight[0], service._close_in_flight[0]) == (in_flight, closes)


def test_resource_usage_lists_the_metadata_cores_with_the_core_seconds_they_served():
    # mdtest -F -C -T -r: every item a create and a close, a stat and a remove, each
    # served for its demand on the service's cores (no variability in this profile).
    system = simfs.load_system("crtdc-lfs3")
    result = simfs.simulate("crtdc-lfs3", "mdtest -n 50 -F -C -T -r", nodes=2, ppn=2)
    items = 2 * 2 * 50
    demand = sum(system.metadata.demand_s(op) for op in ("create", "close", "stat", "remove"))
    row = result.resource_usage.set_index("resource").loc["mds.cores"]
    assert (row["kind"], row["unit"], row["capacity_per_s"]) == ("mds", "core", system.metadata.cores)
    assert row["served"] == pytest.approx(items * demand, rel=1e-9)
    # At most its cores' worth in each second of the run.
    assert row["served"] <= row["capacity_per_s"] * result.phases["time_s"].sum() * (1 + 1e-9)
