"""IOR -z: transfers at random offsets (docs/reference/workloads.md, "Random offsets")."""

import pytest

import simfs
from simfs.api import load_system
from simfs.engine import ResourceLoad
from simfs.hardware.hdd import HddSpec, SeekThrashing, interleaved_stream_factor, random_request_cost
from simfs.workloads import parse_workload, steady_state

DRIVE = HddSpec(sustained_Bps=100e6, average_seek_s=3.5e-3, rpm=15000)  # positioning 5.5 ms


def test_a_random_request_pays_a_reposition_before_its_visit():
    # 4 KiB visits: (4096 / 100e6 + 5.5e-3) / (4096 / 100e6) = 1 + 550000 / 4096.
    assert random_request_cost(DRIVE, 4096) == pytest.approx(1 + 550000 / 4096)
    # It is the interleaving factor's limit for ever more streams, inverted.
    assert 1 / random_request_cost(DRIVE, 1 << 20) == pytest.approx(
        interleaved_stream_factor(10**12, 100e6, 5.5e-3, 1 << 20), rel=1e-9
    )


def test_random_flows_are_not_charged_the_stream_interleaving_again():
    model = SeekThrashing(DRIVE, read_visit_bytes=1 << 20, write_visit_bytes=1 << 20)
    # Only random flows: their requests' cost has the repositioning; the device keeps its capacity.
    assert model(500e6, ResourceLoad(4, 0, 0, random_count=4)) == 500e6
    # Two sequential streams among four flows: the random two interrupt them but add no visit overhead.
    mixed = model(500e6, ResourceLoad(4, 2, 0, random_count=2))
    assert mixed == pytest.approx(500e6 / (1 + (1 - 1 / 4) * 100e6 * 5.5e-3 * (2 / 4) / (1 << 20)))


def _rate(system: str, command: str, **options) -> float:
    row = simfs.simulate(system, command, **options).phases.iloc[0]
    return float(row["agg_bw_Bps"])


def test_a_random_direct_read_on_hdds_waits_one_reposition_per_transfer():
    # One rank, 4 KiB O_DIRECT reads: each request in order costs its round trip and
    # transfer; at a random place the drive repositions first.
    system = load_system("crtdc-lfs3")
    drive = system.target.drive
    in_order = _rate("crtdc-lfs3", "ior -F -r -t 4k -b 16m --posix.odirect")
    at_random = _rate("crtdc-lfs3", "ior -F -r -t 4k -b 16m --posix.odirect -z")
    assert 4096 / at_random - 4096 / in_order == pytest.approx(drive.positioning_s, rel=1e-6)
    # The hdd_seek switch takes the repositioning away.
    off = _rate("crtdc-lfs3", "ior -F -r -t 4k -b 16m --posix.odirect -z", overrides={"mechanisms.hdd_seek": False})
    assert off == pytest.approx(in_order, rel=1e-9)


def test_a_random_buffered_read_gets_no_read_ahead():
    # On SSDs (lfs5) nothing repositions: a buffered 4 KiB read at random offsets is one
    # request per call, as an O_DIRECT one is, far below the read-ahead stream.
    buffered = _rate("crtdc-lfs5", "ior -F -r -t 4k -b 16m -z")
    direct = _rate("crtdc-lfs5", "ior -F -r -t 4k -b 16m --posix.odirect")
    streamed = _rate("crtdc-lfs5", "ior -F -r -t 4k -b 16m")
    assert buffered == pytest.approx(direct, rel=1e-6)
    assert streamed > 20 * buffered


def test_a_random_buffered_write_is_random_only_beyond_the_dirty_limit():
    small_random = _rate("crtdc-lfs3", "ior -F -w -e -t 4k -b 8m -z", nodes=4)
    small_in_order = _rate("crtdc-lfs3", "ior -F -w -e -t 4k -b 8m", nodes=4)
    assert small_random == pytest.approx(small_in_order, rel=1e-9)
    large = simfs.simulate("crtdc-lfs3", "ior -F -w -e -t 4k -b 4g -z", nodes=4, ppn=4).phases.iloc[0]
    in_order = _rate("crtdc-lfs3", "ior -F -w -e -t 4k -b 4g", nodes=4, ppn=4)
    assert large["agg_bw_Bps"] < in_order / 20
    assert large["bottleneck"] == "ost" and "hdd_seek" in large["bottleneck_mechanism"]


def test_a_time_bounded_random_shared_write_is_sampled_in_whole_blocks():
    spec = parse_workload("ior -z -t 4k -b 1g -s 1000 -w -D 30 -O stoneWallingWearOut=1")
    sampled, notes = steady_state.steady_state_sample(spec, 64, request_level_writes=True)
    phase = sampled.phases[0]
    assert phase.block_size_bytes == 1 << 30 and phase.segment_count == 1
    assert phase.transfer_limit == max(steady_state.MIN_WRITES_PER_RANK, steady_state.SAMPLE_WRITES // 64)
    assert "in one block of each rank" in notes[0]
