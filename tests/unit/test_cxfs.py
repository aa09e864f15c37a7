"""The CXFS model: unequal partitions on a FC SAN, volumes, metadata over GbE, hand values."""

import pytest

import simfs
from simfs.errors import ProfileError
from simfs.filesystems import CxfsSystem
from tests.unit.phases import phase

READ_LARGE = "ior -r -F -t 500m -b 7000m"
WRITE_LARGE = "ior -w -F -t 500m -b 7000m"


def test_partitions_are_unequal_clients_with_their_own_fc_ports():
    system = simfs.load_system("tud-cxfs")
    assert isinstance(system, CxfsSystem)
    assert system.partition_names == ("venus", "merkur")
    venus, merkur = system.client_of(0), system.client_of(1)
    assert (venus.cores, merkur.cores) == (128, 64)
    # 12 and 8 ports of 2 Gb FC at 200 MB/s payload each.
    assert venus.network.bandwidth_Bps == pytest.approx(12 * 200e6)
    assert merkur.network.bandwidth_Bps == pytest.approx(8 * 200e6)
    text = system.describe()
    # The seed's nominal ceilings: 12 and 8 ports of 250 MB/s in GiB/s, 32 host ports in all.
    assert "nominal 2.79 GiB/s" in text and "nominal 1.86 GiB/s" in text and "nominal 7.45 GiB/s" in text


def test_volumes_choose_the_luns_a_run_uses():
    assert simfs.load_system("tud-cxfs").target_count == 24
    work = simfs.load_system("tud-cxfs", {"cxfs.volume": "work"})
    assert (work.server_count, work.targets_per_server, work.io.stripe_count) == (4, 1, 4)
    with pytest.raises(ProfileError, match="cxfs.volume"):
        simfs.load_system("tud-cxfs", {"cxfs.volume": "scratch"})


def test_direct_writes_from_one_partition_stop_at_its_fc_ports():
    # O_DIRECT: no page cache; 64 writers on venus cabled with 8 ports (a what-if) are
    # limited by them (1.6 GB/s), not by the 24 LUNs or the 4 controller pairs (6 GB/s).
    overrides = {"partitions.venus.fc_ports": 8, "mechanisms.hdd_seek": False}
    result = simfs.simulate("tud-cxfs", "ior -w -F -t 64m -b 1g --posix.odirect", nodes=1, ppn=64, overrides=overrides)
    assert phase(result, "write")["agg_bw_Bps"] == pytest.approx(8 * 200e6, rel=0.01)
    assert phase(result, "write")["bottleneck"] == "client-nic"


def test_one_task_is_bounded_by_one_cpu_and_small_calls_by_their_overhead():
    system = simfs.load_system("tud-cxfs")
    large = simfs.simulate("tud-cxfs", READ_LARGE, nodes=1, ppn=1)
    assert phase(large, "read")["agg_bw_Bps"] == pytest.approx(system.client.copy_read_Bps, rel=0.01)
    lines = simfs.simulate("tud-cxfs", "ior -r -t 80 -b 640m", nodes=1, ppn=1)
    per_byte = 1 / system.client.copy_read_Bps + system.client.call_overhead_s / 80
    assert phase(lines, "read")["agg_bw_Bps"] == pytest.approx(1 / per_byte, rel=0.01)
    off = simfs.simulate("tud-cxfs", "ior -r -t 80 -b 640m", overrides={"mechanisms.call_overhead": False})
    assert phase(off, "read")["agg_bw_Bps"] == pytest.approx(system.client.copy_read_Bps, rel=0.01)


def test_creates_in_one_directory_are_bounded_by_its_lock_not_the_gbe_round_trip():
    system = simfs.load_system("tud-cxfs", {"mds.dir_update_per_s": 300.0})
    one = simfs.simulate(system, "mdtest -n 500 -F -C", nodes=1, ppn=1)
    many = simfs.simulate(system, "mdtest -n 500 -F -C", nodes=1, ppn=16)
    # One process, one request at a time: the create's round trip (0.5 ms), its time under
    # the directory lock (1/300 s) and the server's work, then the close's round trip and
    # work; and once, before the first create, a lookup of the directory (its token).
    latency, mds = system.io.metadata_latency_s, system.metadata
    item = 2 * latency + 1 / 300 + mds.demand_s("create") + mds.demand_s("close")
    lookup = latency + mds.demand_s("stat")
    assert phase(one, "file create")["ops_per_s"] == pytest.approx(500 / (lookup + 500 * item), rel=1e-6)
    # Sixteen: the lock is never idle, 300/s.
    assert phase(many, "file create")["ops_per_s"] == pytest.approx(300, rel=0.02)
    unique = simfs.simulate(system, "mdtest -n 500 -F -C -u", nodes=1, ppn=1)
    item = 2 * latency + mds.demand_s("create") + mds.demand_s("close")
    assert phase(unique, "file create")["ops_per_s"] == pytest.approx(500 / (lookup + 500 * item), rel=1e-6)


def test_metadata_latency_below_a_network_round_trip_is_rejected():
    with pytest.raises(ProfileError, match="cxfs.metadata_latency_s"):
        simfs.load_system("tud-cxfs", {"cxfs.metadata_latency_s": 1e-5})


def test_acceptance_volume_and_profile_overrides_in_measurement_settings():
    from simfs.predict import Predictor, make_point
    from simfs.systems import load_profile

    profile = load_profile("tud-cxfs")
    predictor = Predictor(simfs.load_system("tud-cxfs"), profile)
    settings = {"nodes": 2, "ppn": 8, "cxfs.volume": "work"}
    point = make_point(0, WRITE_LARGE, "write", "agg_bw", settings, "", 1.0, float("nan"))
    assert point.overrides == (("cxfs.volume", "work"),)
    direct = simfs.simulate("tud-cxfs", WRITE_LARGE, nodes=2, ppn=8, overrides={"cxfs.volume": "work"})
    assert predictor.predict(point) == pytest.approx(phase(direct, "write")["agg_bw_Bps"])
