"""The seed 001 access classes: parsing, and the client/server cache sharing of SFWA."""

import pytest

import simfs
from simfs.errors import WorkloadError
from simfs.workloads import parse_workload
from tests.unit.phases import phase


def test_classes_map_onto_phases():
    sfwa = parse_workload("access-class SFWA -t 2k")
    (read,) = sfwa.phases
    assert read.same_data and read.shared_file and read.transfer_size_bytes == 2048
    assert read.bytes_per_rank == 32 * 64 * 2**20 and sfwa.aggregate == "sum_of_ranks"
    strided = parse_workload("access-class SFSA --strided -n 8 -s 1m")
    assert [p.op for p in strided.phases] == ["write", "read"]
    assert all(p.shared_file and p.segment_count == 8 and p.block_size_bytes == 2**20 for p in strided.phases)
    contiguous = parse_workload("access-class SFSA -n 8 -s 1m")
    assert contiguous.phases[0].segment_count == 1 and contiguous.phases[0].transfer_size_bytes == 2**20
    neighbour = parse_workload("access-class MFWA-S")
    assert not neighbour.phases[1].shared_file and neighbour.phases[1].reorder_tasks
    assert not neighbour.phases[0].reorder_tasks


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("access-class", "expected the class first"),
        ("access-class XFWA", "unknown class 'XFWA'"),
        ("access-class MFWA --strided", "--strided applies"),
        ("access-class SFSA -t 3m -s 2m", "divisor of the object size"),
        ("access-class SFSA -n 0", "-n"),
        ("access-class SFSA -q 1", "unsupported option '-q'"),
    ],
)
def test_bad_class_commands_name_the_problem(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_same_data_reads_fetch_once_per_node_and_read_the_drives_once():
    # 4 nodes x 4 processes reading one file: each node's link carries it once, the
    # servers' drives read it once; so the aggregate of the 16 readers is 4 x 4 links
    # (the servers' 4 GbE NICs send one copy per node: 4 x 117 MB/s).
    system = simfs.load_system("g5k-helios")
    link = system.client.network.bandwidth_Bps
    result = simfs.simulate(system, "access-class SFWA-SMP -t 1m", nodes=4, ppn=4)
    assert phase(result, "read")["agg_bw_Bps"] == pytest.approx(16 * link, rel=0.01)
    # Without the client page cache every process fetches its own copy: the servers'
    # NICs (4 x 117 MB/s) are shared by 16 readers.
    off = {"mechanisms.client_read_sharing": False}
    alone = simfs.simulate("g5k-helios", "access-class SFWA-SMP -t 1m", nodes=4, ppn=4, overrides=off)
    assert phase(alone, "read")["agg_bw_Bps"] == pytest.approx(4 * link, rel=0.01)


def test_server_cache_makes_common_reads_cheaper_than_private_ones():
    both = simfs.simulate("g5k-helios", "access-class SFWA", nodes=40)
    private = simfs.simulate("g5k-helios", "access-class MFWA", nodes=40)
    off = {"mechanisms.server_read_cache": False}
    no_cache = simfs.simulate("g5k-helios", "access-class SFWA", nodes=40, overrides=off)
    # With the cache the servers' GbE NICs bind (4 x 117 MB/s); the drives read one copy.
    link = simfs.load_system("g5k-helios").server.network.bandwidth_Bps
    assert phase(both, "read")["agg_bw_Bps"] == pytest.approx(4 * link, rel=0.01)
    assert phase(both, "read")["agg_bw_Bps"] > 2 * phase(private, "read")["agg_bw_Bps"]
    # Without it every node's copy comes off the seeking drives, as private files do.
    assert phase(no_cache, "read")["agg_bw_Bps"] < 0.5 * phase(both, "read")["agg_bw_Bps"]


def test_readahead_restarts_cost_one_round_trip_per_new_segment():
    # Drives without seeks (260 MB/s) outrun two clients' links, and without write-behind
    # the write phase leaves nothing draining: each reader is alone on its link, so its
    # stalls add to its time one for one.
    plain = {"mechanisms.hdd_seek": False, "mechanisms.dirty_limit": False}
    latency = simfs.load_system("g5k-helios").io.rpc_latency_s
    one = simfs.simulate("g5k-helios", "access-class SFSA -n 1 -s 256m", nodes=2, overrides=plain)
    strided = "access-class SFSA --strided -n 256 -s 1m"
    many = simfs.simulate("g5k-helios", strided, nodes=2, overrides=plain)
    t_one = phase(one, "read")["time_s"]
    assert phase(many, "read")["time_s"] == pytest.approx(t_one + 255 * latency, rel=0.01)
    off = simfs.simulate("g5k-helios", strided, nodes=2, overrides={**plain, "mechanisms.readahead_restart": False})
    assert phase(off, "read")["time_s"] == pytest.approx(t_one, rel=0.01)
