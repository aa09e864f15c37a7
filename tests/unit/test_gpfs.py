"""The GPFS model: blocks over every NSD, the page pool, declustered NSDs, tokens, against
hand values on the OLCF Alpine profile."""

import numpy as np
import pytest
import simpy

import simfs
from simfs.engine import FluidNetwork
from simfs.engine.station import Station
from simfs.errors import ProfileError
from simfs.filesystems import FileSystem, GpfsSystem
from simfs.filesystems.core import FileSystemInstance
from simfs.filesystems.core.locking import EOF_OFFSET, LockManager
from simfs.hardware import HddSpec
from simfs.hardware.declustered import DeclusteredArray
from tests.unit.phases import phase

MiB = 1 << 20
GiB = 1 << 30
# Alpine's drives (profile): 200 MB/s, 8.5 ms seek plus half a turn at 7,200 rpm.
DRIVE_BPS = 2.0e8
POSITIONING_S = 8.5e-3 + 30 / 7200


def thrash_factor(streams: int, visit_bytes: float) -> float:
    """Ruemmler and Wilkes: one positioning per visit, unless the same stream comes back."""
    return 1 / (1 + (1 - 1 / streams) * DRIVE_BPS * POSITIONING_S / visit_bytes)


def test_gpfs_is_a_peer_of_the_other_models():
    assert GpfsSystem.__bases__ == (FileSystem,)
    assert GpfsSystem.FILESYSTEM == "gpfs"
    assert GpfsSystem.NAMES == {
        "server": "nsd-server",
        "target": "nsd",
        "controller": "controller",
        "metadata": "gpfs-meta",
    }


def test_alpine_maps_blocks_onto_striping_over_every_nsd():
    system = simfs.load_system("olcf-alpine")
    assert isinstance(system, GpfsSystem)
    # 77 ESS GL4, two NSD servers each, one vdisk per recovery group.
    assert (system.server_count, system.targets_per_server, system.target_count) == (154, 1, 154)
    io = system.io
    assert io.stripe_count == system.target_count
    assert io.stripe_size_bytes == io.rpc_size_bytes == system.block_size_bytes == 16 * MiB
    assert io.stripe_offset == -1
    nsd = system.target
    assert isinstance(nsd, DeclusteredArray)
    assert nsd.disk_count * system.target_count == 32_494
    # 8+2p: a 16 MiB track is 8 data strips of 2 MiB; a drive moves one strip per visit.
    assert nsd.chunk_bytes == 2 * MiB == system.write_visit_bytes == system.read_visit_bytes


def test_page_pool_is_the_write_behind_and_prefetch_buffer():
    system = simfs.load_system("olcf-alpine")
    io = system.io
    # 72 prefetch threads x 16 MiB = 1.125 GiB, more than the 1 GiB page pool.
    assert io.max_read_ahead_bytes == GiB
    assert system.client.dirty_limit_bytes == pytest.approx(GiB)
    small = simfs.load_system("olcf-alpine", {"gpfs.prefetch_threads": 8})
    assert small.io.max_read_ahead_bytes == 8 * 16 * MiB


def test_writes_that_fit_the_page_pool_run_at_copy_speed_whatever_nsds_they_touch():
    # 16 writers of 48 MiB (3 blocks, 3 of 154 NSDs) on one node: 768 MiB fit its 1 GiB
    # page pool (64 MiB a writer), so each returns at its core's copy rate, 16 x 3 GB/s,
    # twice the node's link; the write-back drains over the link after.
    write = "ior -w -F -t 16m -b 48m"
    buffered = simfs.simulate("olcf-alpine", write, nodes=1, ppn=16)
    assert phase(buffered, "write")["agg_bw_Bps"] == pytest.approx(16 * 3.0e9, rel=0.01)
    # A one-block page pool (1 MiB a writer) leaves the link to pace the writers.
    small_pool = simfs.simulate("olcf-alpine", write, nodes=1, ppn=16, overrides={"gpfs.pagepool_bytes": 16 * MiB})
    assert phase(small_pool, "write")["agg_bw_Bps"] == pytest.approx(23.0e9, rel=0.03)
    assert phase(small_pool, "write")["bottleneck"] == "client-nic"


def test_every_file_spans_every_nsd_and_consecutive_blocks_change_server():
    system = simfs.load_system("olcf-alpine", {"nsd.per_server": 2})
    instance = FileSystemInstance(system, FluidNetwork(simpy.Environment()), 2, np.random.default_rng(3))
    layout = instance.allocate(system.io.stripe_count, system.io.stripe_size_bytes)
    assert sorted(layout.targets) == list(range(308))
    servers = [system.server_of_target(target) for target in layout.targets]
    assert all(a != b for a, b in zip(servers, servers[1:]))


def test_a_declustered_vdisk_streams_at_its_code_rate_and_pays_for_partial_tracks():
    vdisk = DeclusteredArray(level="8+2p", disk_count=211, drive=HddSpec(DRIVE_BPS), chunk_bytes=2 * MiB)
    assert vdisk.bandwidth_Bps("write") == pytest.approx(211 * 8 / 10 * DRIVE_BPS)
    assert vdisk.write_cost(16 * MiB) == pytest.approx(1.0)
    # 1 MiB in a 2 MiB strip: read-modify-write moves 2 x 1 + 2 parity x 1 = 6 MiB against
    # the 1.25 MiB of full-track writing.
    assert vdisk.write_cost(1 * MiB) == pytest.approx(6 / 1.25)
    with pytest.raises(ValueError, match="disk_count"):
        DeclusteredArray(level="8+2p", disk_count=9, drive=HddSpec(DRIVE_BPS))


def test_streaming_ceiling_by_hand():
    system = simfs.load_system("olcf-alpine")
    links = 154 * 23.0e9
    drives = 32_494 * 0.8 * DRIVE_BPS
    assert links < drives  # the NSD servers' links, not the drives, at streaming rate
    assert system.streaming_ceiling_Bps() == pytest.approx(links)
    many_streams = drives / (1 + DRIVE_BPS * POSITIONING_S / (2 * MiB))
    assert system.thrashed_nsd_Bps() == pytest.approx(many_streams)
    text = system.describe()
    assert f"server-side streaming ceiling: {links / 1e9:.4g} GB/s" in text
    assert f"{many_streams / 1e9:.4g} GB/s when many streams thrash the drives" in text


def test_few_nodes_are_bound_by_their_links_and_one_process_by_its_core():
    many = simfs.simulate("olcf-alpine", "ior -a POSIX -F -t 16m -b 2g -w -r -C -e", nodes=2, ppn=16)
    for name in ("write", "read"):
        assert phase(many, name)["agg_bw_Bps"] == pytest.approx(2 * 23.0e9, rel=0.01)
        assert phase(many, name)["bottleneck"] == "client-nic"
    one = simfs.simulate("olcf-alpine", "ior -a POSIX -F -t 16m -b 2g -w -r -C -e", nodes=1, ppn=1)
    assert phase(one, "read")["agg_bw_Bps"] == pytest.approx(3.0e9, rel=0.01)
    assert phase(one, "read")["bottleneck"] == "client-core"


def test_many_nodes_are_bound_by_the_nsd_servers_then_by_thrashing_nsds():
    # Two NSD servers (one building block), 16 nodes x 4 readers: the clients' links
    # (368 GB/s) and block windows (64 x 2 x 16 MiB / 25 ms = 86 GB/s) outrun them.
    block = {"nsd_server.count": 2}
    read = "ior -r -F -t 16m -b 1g"
    servers = simfs.simulate("olcf-alpine", read, nodes=16, ppn=4, overrides={**block, "mechanisms.hdd_seek": False})
    assert phase(servers, "read")["agg_bw_Bps"] == pytest.approx(2 * 23.0e9, rel=0.01)
    assert phase(servers, "read")["bottleneck"] == "nsd-server-nic"
    # With seek thrashing, each vdisk serves all 64 streams in 2 MiB visits.
    nsds = simfs.simulate("olcf-alpine", read, nodes=16, ppn=4, overrides=block)
    expected = 2 * 211 * 0.8 * DRIVE_BPS * thrash_factor(64, 2 * MiB)
    assert expected < 2 * 23.0e9
    assert phase(nsds, "read")["agg_bw_Bps"] == pytest.approx(expected, rel=0.01)
    assert phase(nsds, "read")["bottleneck"] == "nsd"


def test_byte_range_tokens_are_the_locking_policy_and_described():
    system = simfs.load_system("olcf-alpine")
    policy = system.lock_policy()
    assert (policy.per_object, policy.unit_bytes, policy.grow, policy.downward) == (False, 4096, True, False)
    assert (policy.servers, policy.one_way_s, policy.contended_locks) == (8, 2.5e-5, 0)
    assert "8 token manager(s), 50 us per token request" in system.describe()


def test_a_token_grows_upwards_only_and_without_a_cap():
    policy = simfs.load_system("olcf-alpine").lock_policy()
    env = simpy.Environment()
    server = Station(env, "token-manager")
    nodes = 40
    manager = LockManager(env, policy, nodes, lambda key: server, 1.0, lambda lock: iter(()))
    grants = {}

    def writer(node, at):
        yield env.timeout(at)
        lock = yield from manager.acquire(node, "file", node * 64 * MiB + 10, node * 64 * MiB + 4000)
        grants[node] = (lock.start, lock.end, env.now)
        yield env.timeout(1.0)  # in use: the others queue behind node 0's token
        manager.done(lock)

    for node in range(nodes):
        env.process(writer(node, 0.0 if node == 0 else 1e-4))
    env.run()
    # Node 0 asks for sector 0 and is granted from there to the end of the file: a
    # request (one way, 25 us), the token manager's 20 us, and the grant (25 us).
    assert grants[0] == (0, EOF_OFFSET, pytest.approx(7e-5))
    # The others wait for node 0's revocation, then each gets from its own sector up to
    # the next node's request: more than 32 conflicting and no 32 MiB cap (Lustre's), and
    # none below its write (Lustre grows down while 4 or fewer conflict).
    for node in range(1, nodes - 1):
        assert grants[node][:2] == (node * 64 * MiB, (node + 1) * 64 * MiB)
    assert grants[nodes - 1][:2] == ((nodes - 1) * 64 * MiB, EOF_OFFSET)


def test_strided_shared_file_writes_pay_for_tokens():
    # IOR-hard style: 47,008-byte records interleaved over the ranks of 4 nodes, against
    # the same bytes written segment by segment (each node its own range of the file).
    strided = simfs.simulate("olcf-alpine", "ior -w -t 47008 -b 47008 -s 200", nodes=4, ppn=2)
    segmented = simfs.simulate("olcf-alpine", "ior -w -t 47008 -b 9401600 -s 1", nodes=4, ppn=2)
    assert phase(strided, "write")["mode"] == "request"
    assert phase(strided, "write")["agg_bw_Bps"] < 0.5 * phase(segmented, "write")["agg_bw_Bps"]


def test_metadata_rates_come_from_the_metadata_section():
    system = simfs.load_system("olcf-alpine")
    assert system.metadata.create_per_s == 2.6e6
    assert system.metadata.dir_update_per_s == system.metadata.create_per_s  # left out: no extra serialisation
    one = simfs.simulate("olcf-alpine", "mdtest -n 200 -F -C -u", nodes=1, ppn=1)
    # create + close, each one 20 us round trip: one process makes 25,000 files/s.
    assert phase(one, "file create")["ops_per_s"] == pytest.approx(1 / (2 * 2e-5), rel=0.05)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"gpfs.block_size_bytes": 3_000_000}, "gpfs.block_size_bytes"),
        ({"gpfs.block_size_bytes": 32 * MiB}, "gpfs.block_size_bytes"),
        ({"gpfs.block_size_bytes": 32768}, "gpfs.block_size_bytes"),
        ({"gpfs.pagepool_bytes": 0}, "gpfs.pagepool_bytes"),
        ({"gpfs.pagepool_bytes": MiB}, "gpfs.pagepool_bytes"),
        ({"gpfs.pagepool_bytes": 10**15}, "gpfs.pagepool_bytes"),
        ({"gpfs.prefetch_threads": 1.5}, "gpfs.prefetch_threads"),
        ({"gpfs.requests_in_flight_per_nsd": 0}, "gpfs.requests_in_flight_per_nsd"),
        ({"gpfs.request_latency_s": 1e-7}, "gpfs.request_latency_s"),
        ({"gpfs.metadata_latency_s": "fast"}, "gpfs.metadata_latency_s"),
        ({"gpfs.token_managers": 0}, "gpfs.token_managers"),
        ({"gpfs.token_managers": 10**6}, "gpfs.token_managers"),
        ({"gpfs.token_latency_s": 1e-7}, "gpfs.token_latency_s"),
        ({"gpfs.blocksize": 4}, "gpfs.blocksize: unknown field"),
        ({"client.dirty_ratio": 0.4}, "client.dirty_ratio"),
        ({"nsd.raid": "raid7"}, "nsd.raid"),
        ({"nsd.drives": 9}, "nsd.drives"),
        ({"nsd.chunk_bytes": MiB}, "nsd.chunk_bytes"),
        ({"nsd.drive": "tape"}, "nsd.drive"),
        ({"nsd.per_server": 0}, "nsd.per_server"),
        ({"nsd.hdd.visit_bytes": 0}, "nsd.hdd.visit_bytes"),
        ({"nsd_server.worker_threads": 0}, "nsd_server.worker_threads"),
        ({"nsd_server.network": "token-ring"}, "nsd_server.network"),
        ({"metadata.create_per_s": 0}, "metadata.create_per_s"),
    ],
)
def test_bad_gpfs_fields_are_named(overrides, message):
    with pytest.raises(ProfileError, match=message):
        simfs.load_system("olcf-alpine", overrides)


def test_hardware_raid_luns_and_ssds_are_nsds_too():
    # A LUN of 10 SSDs in RAID 6 behind the servers, as on a DDN- or FlashSystem-backed GPFS.
    lun = {
        "nsd.raid": "raid6",
        "nsd.drives": 10,
        "nsd.chunk_bytes": 2 * MiB,
        "nsd.drive": "ssd",
        "nsd.ssd.read_Bps": 3.0e9,
        "nsd.ssd.write_Bps": 2.0e9,
    }
    system = simfs.load_system("olcf-alpine", lun)
    assert not isinstance(system.target, DeclusteredArray)
    assert system.target.bandwidth_Bps("write") == pytest.approx(8 * 2.0e9)
    assert system.target.bandwidth_Bps("read") == pytest.approx(8 * 3.0e9)
    assert "raid6 LUN of 10 SSD" in system.describe()
    # Two 100 GB/s controllers in front of all LUNs cap the 154 servers' 3.5 TB/s.
    behind = simfs.load_system("olcf-alpine", {**lun, "controller.count": 2, "controller.bandwidth_Bps": 1.0e11})
    assert behind.controller_total == 2
    assert behind.streaming_ceiling_Bps() == pytest.approx(2 * 1.0e11)
