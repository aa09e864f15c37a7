"""Contention mechanisms: each against hand-computed values, and switched off."""

import pytest

import simfs
from simfs.engine import ResourceLoad
from simfs.errors import ProfileError
from simfs.hardware.hdd import HddSpec, SeekThrashing, interleaved_stream_factor

DRIVE = HddSpec(sustained_Bps=100e6, average_seek_s=3.5e-3, rpm=15000)  # positioning 3.5 + 2 ms


def test_positioning_is_seek_plus_half_a_revolution():
    assert DRIVE.positioning_s == pytest.approx(5.5e-3)


def test_interleaved_stream_factor_hand_values():
    # One stream: no repositioning.  Two streams, 1 MiB visits: overhead
    # (1 - 1/2) x 100e6 x 5.5e-3 / 1048576 = 275000 / 1048576 = 0.2622604 -> factor 1 / 1.2622604.
    assert interleaved_stream_factor(1, 100e6, 5.5e-3, 1 << 20) == 1.0
    assert interleaved_stream_factor(2, 100e6, 5.5e-3, 1 << 20) == pytest.approx(1 / 1.2622604, rel=1e-6)
    # Many streams tend to v / (v + B t_pos): 1 MiB visits -> 1048576 / (1048576 + 550000).
    assert interleaved_stream_factor(10**9, 100e6, 5.5e-3, 1 << 20) == pytest.approx(1048576 / 1598576, rel=1e-6)
    # Falls with streams, rises with visit size.
    assert interleaved_stream_factor(8, 100e6, 5.5e-3, 1 << 20) < interleaved_stream_factor(4, 100e6, 5.5e-3, 1 << 20)
    assert interleaved_stream_factor(8, 100e6, 5.5e-3, 4 << 20) > interleaved_stream_factor(8, 100e6, 5.5e-3, 1 << 20)


def test_seek_thrashing_averages_visits_over_reads_and_writes():
    model = SeekThrashing(DRIVE, read_visit_bytes=1 << 20, write_visit_bytes=4 << 20)
    assert model(500e6, ResourceLoad(1, 1, 0)) == 500e6
    reads = model(500e6, ResourceLoad(4, 4, 0))
    writes = model(500e6, ResourceLoad(4, 0, 4))
    mixed = model(500e6, ResourceLoad(4, 2, 2))
    assert reads == pytest.approx(500e6 * interleaved_stream_factor(4, 100e6, 5.5e-3, 1 << 20))
    assert writes == pytest.approx(500e6 * interleaved_stream_factor(4, 100e6, 5.5e-3, 4 << 20))
    # Mixed: mean inverse visit (1/1 MiB + 1/4 MiB) / 2 -> visit 1.6 MiB.
    assert mixed == pytest.approx(500e6 * interleaved_stream_factor(4, 100e6, 5.5e-3, 1.6 * (1 << 20)))


def test_whole_run_on_lfs4_matches_the_factor():
    # 64 nodes x 12 stripes over 32 OSTs = 24 streams per OST, 349525 B visits.
    workload = "ior -a POSIX -F -e -w -t 1m -b 4g"
    on = simfs.simulate("crtdc-lfs4", workload, nodes=64).phases.iloc[0]
    off = simfs.simulate("crtdc-lfs4", workload, nodes=64, overrides={"mechanisms.hdd_seek": False}).phases.iloc[0]
    factor = interleaved_stream_factor(24, 99e6, 5.5e-3, 349525)
    assert on["bottleneck"] == off["bottleneck"] == "ost"
    assert off["bw_Bps"] == pytest.approx(32 * 297e6, rel=2e-3)  # the plain model: 32 OSTs at 3 x 99 MB/s
    assert on["bw_Bps"] / off["bw_Bps"] == pytest.approx(factor, rel=2e-3)


def test_every_mechanism_off_is_the_plain_bandwidth_model():
    off = {f"mechanisms.{m}": False for m in ("hdd_seek", "dirty_limit", "rpc_window", "fabric_oversubscription")}
    result = simfs.simulate("crtdc-lfs3", "dd if=/dev/zero of=f bs=1M count=48000", nodes=64, overrides=off)
    row = result.phases.iloc[0]
    # No dirty tail, no thrash: 64 writers share the two 3 GB/s controllers evenly.
    md = 64 / 5000 + 64 / 20000
    assert row["time_s"] == pytest.approx(64 * 48000 * (1 << 20) / 6e9 + md, rel=1e-9)
    usage = result.resource_usage
    assert usage.loc[usage["kind"] == "fabric", "served"].sum() == 0  # the fabric is off the path


def test_dirty_limit_off_means_the_application_waits_for_the_network():
    slow = {"client.copy_write_Bps": 2e9, "networks.qdr-ib.bandwidth_Bps": 1e8, "mechanisms.dirty_limit": False}
    row = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1M count=100", overrides=slow).phases.iloc[0]
    assert row["time_s"] == pytest.approx(100 * (1 << 20) / 1e8 + 4e-4, rel=1e-9)


def test_rpc_window_off_removes_the_cap():
    slow = {"lustre.rpc_latency_s": 1.0}
    capped = simfs.simulate("crtdc-lfs3", "dd if=f of=/dev/null bs=1M count=1000", overrides=slow).phases.iloc[0]
    free = simfs.simulate(
        "crtdc-lfs3", "dd if=f of=/dev/null bs=1M count=1000", overrides={**slow, "mechanisms.rpc_window": False}
    ).phases.iloc[0]
    assert capped["bottleneck"] == "rpc-window" and free["bottleneck"] == "client-core"


def test_unknown_or_malformed_mechanism_is_named():
    with pytest.raises(ProfileError, match="mechanisms.wormholes: unknown mechanism"):
        simfs.load_system("crtdc-lfs3", {"mechanisms.wormholes": False})
    with pytest.raises(ProfileError, match="mechanisms.hdd_seek: expected true or false"):
        simfs.load_system("crtdc-lfs3", {"mechanisms.hdd_seek": "maybe"})
