"""Contention mechanisms: each against hand-computed values, and switched off."""

import re

import numpy as np
import pytest
import simpy

import simfs
from simfs.engine import FluidNetwork, ResourceLoad
from simfs.errors import ExperimentError, ProfileError
from simfs.filesystems.core import FileSystemInstance
from simfs.hardware.controller import ControllerSpec, PrefetchThrash
from simfs.hardware.hdd import HddSpec, SeekThrashing, interleaved_stream_factor
from simfs.hardware.ssd import SsdSpec
from simfs.mechanisms import MECHANISMS
from tests.unit.phases import open_close_s

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
    off = {f"mechanisms.{m}": False for m in MECHANISMS}
    # A metadata server that never queues, so that every rank starts and ends together
    # (its queue is tested below and in test_metadata.py): a create and a close cost one
    # round trip each.
    instant = {f"mds.{op}_per_s": 1e12 for op in ("create", "open", "close")}
    result = simfs.simulate(
        "crtdc-lfs3", "dd if=/dev/zero of=f bs=1M count=48000", nodes=64, overrides={**off, **instant}
    )
    row = result.phases.iloc[0]
    # No dirty tail, no cache, no thrash: 64 writers share the two 3 GB/s controllers evenly.
    md = 2 * simfs.load_system("crtdc-lfs3").io.metadata_latency_s
    assert row["time_s"] == pytest.approx(64 * 48000 * (1 << 20) / 6e9 + md, rel=1e-9)
    usage = result.resource_usage
    assert usage.loc[usage["kind"] == "fabric", "served"].sum() == 0  # the fabric is off the path


def test_every_mechanism_off_on_ssds_and_small_requests_is_the_plain_bandwidth_model():
    # 4 KiB direct writes from 768 ranks to lfs5: with everything off only fixed capacities
    # and the per-rank latency cap remain: 768 x 4096 B / (1 ms + 4096 B over the request's
    # path alone) = 3.1 GB/s, under every OST.
    off = {f"mechanisms.{m}": False for m in MECHANISMS}
    workload = "ior -a POSIX -F -w --posix.odirect -t 4k -b 4m"
    row = simfs.simulate("crtdc-lfs5", workload, nodes=64, ppn=12, overrides=off).phases.iloc[0]
    assert row["bottleneck"] == "direct-io-latency"
    system = simfs.load_system("crtdc-lfs5")
    alone = min(system.client.network.bandwidth_Bps, system.server.network.bandwidth_Bps, system.server.cpu_Bps)
    alone = min(alone, system.target.bandwidth_Bps("write"))
    data_time = (4 << 20) / (4096 / (1e-3 + 4096 / alone))
    # The creates: each node keeps one in flight (Lustre 1.8 clients), so the 64 nodes'
    # creates arrive together, share the MDS (64 / 5000 s for all) and return together:
    # twelve such rounds, each with its round trip.  The last rank then writes and closes,
    # together with the other nodes' last ranks (a round trip and 64 / 20000 s).
    latency = system.io.metadata_latency_s
    metadata = 12 * (latency + 64 / 5000) + latency + 64 / 20000
    assert row["time_s"] == pytest.approx(data_time + metadata, rel=1e-9)


def test_dirty_limit_off_means_the_application_waits_for_the_network():
    slow = {"client.copy_write_Bps": 2e9, "networks.qdr-ib.bandwidth_Bps": 1e8, "mechanisms.dirty_limit": False}
    row = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1M count=100", overrides=slow).phases.iloc[0]
    md = open_close_s(simfs.load_system("crtdc-lfs5"))
    assert row["time_s"] == pytest.approx(100 * (1 << 20) / 1e8 + md, rel=1e-9)


def test_rpc_window_off_removes_the_cap():
    slow = {"lustre.rpc_latency_s": 1.0}
    capped = simfs.simulate("crtdc-lfs3", "dd if=f of=/dev/null bs=1M count=1000", overrides=slow).phases.iloc[0]
    free = simfs.simulate(
        "crtdc-lfs3",
        "dd if=f of=/dev/null bs=1M count=1000",
        overrides={**slow, "mechanisms.rpc_window": False, "mechanisms.readahead_window": False},
    ).phases.iloc[0]
    assert capped["bottleneck"] == "rpc-window" and free["bottleneck"] == "client-core"


def test_unknown_or_malformed_mechanism_is_named():
    with pytest.raises(ProfileError, match="mechanisms.wormholes: unknown mechanism"):
        simfs.load_system("crtdc-lfs3", {"mechanisms.wormholes": False})
    with pytest.raises(ProfileError, match="mechanisms.hdd_seek: expected true or false"):
        simfs.load_system("crtdc-lfs3", {"mechanisms.hdd_seek": "maybe"})


# -- RAID parity and failures ---------------------------------------------------------
def test_raid6_partial_stripe_write_cost_hand_values():
    from simfs.hardware.raid import RaidSet

    lun = RaidSet("raid6", 10, DRIVE, chunk_bytes=131072)  # 8+2, full stripe 1 MiB
    assert lun.write_cost(1 << 20) == 1.0
    # One chunk: read data + P + Q, write the three back = 6 chunk I/Os, against
    # 1 x 10/8 = 1.25 for full stripes: 4.8.
    assert lun.write_cost(131072) == pytest.approx(6 / 1.25)
    # Four chunks: read-modify-write 2 x 4 + 2 x 2 = 12, reconstruct-write reads the other
    # 4 and writes 4 + 2 = 10; the cheaper against 4 x 1.25 = 5: 2.0.
    assert lun.write_cost(512 * 1024) == pytest.approx(2.0)
    # A 4 KiB page: 4 KiB of data and 2 x 4 KiB of parity read and written back, 24 KiB,
    # against 5 KiB for full stripes.
    assert lun.write_cost(4096) == pytest.approx(24 / 5)
    assert RaidSet("raid0", 3, DRIVE, chunk_bytes=65536).write_cost(4096) == 1.0


def test_misaligned_volume_write_cost_hand_values():
    """LVM2's old 192 KiB first extent on an 8+1 set of 128 KiB chunks."""
    from simfs.hardware.raid import RaidSet

    aligned = RaidSet("raid5", 9, DRIVE, chunk_bytes=131072)
    shifted = RaidSet("raid5", 9, DRIVE, chunk_bytes=131072, data_offset_bytes=196608)
    # 832 KiB into one stripe (reconstruct-write: 9 chunks, 1152 KiB) and 192 KiB into the
    # next (read-modify-write: 2 x 192 + 2 x 128 = 640 KiB), against 1 MiB x 9/8 = 1152 KiB.
    assert shifted.write_cost(1 << 20) == pytest.approx((1152 + 640) / 1152)
    assert aligned.write_cost(1 << 20) == 1.0
    # A whole number of stripes of offset changes nothing.
    assert RaidSet("raid5", 9, DRIVE, chunk_bytes=131072, data_offset_bytes=3 << 20).write_cost(1 << 20) == 1.0
    # Reads: a 1 MiB request touches 9 chunks instead of 8.
    assert shifted.drive_request_bytes(1 << 20) == pytest.approx((1 << 20) / 9)
    assert aligned.drive_request_bytes(1 << 20) == 131072
    with pytest.raises(ValueError, match="data_offset_bytes"):
        RaidSet("raid5", 9, DRIVE, chunk_bytes=131072, data_offset_bytes=-1)


def test_misaligned_targets_slow_bound_writes_only():
    """Spider with 1 OST per OSS and 60 writers: the OSTs bind, and the offset costs writes."""
    settings = {"oss.osts_per_oss": 1, "fabric.client_uplink_Bps": 0}
    workload = "ior -a POSIX -F -w -r -e -C -t 1m -b 1g"
    aligned = simfs.simulate("ornl-spider", workload, nodes=30, ppn=2, overrides=settings).phases
    shifted = simfs.simulate(
        "ornl-spider", workload, nodes=30, ppn=2, overrides={**settings, "ost.data_offset_bytes": 196608}
    ).phases
    write, read = (aligned["op"] == "write").to_numpy(), (aligned["op"] == "read").to_numpy()
    assert shifted["bottleneck"][write].item() == "ost"
    assert shifted["agg_bw_Bps"][write].item() < 0.8 * aligned["agg_bw_Bps"][write].item()
    # Reads: the same rate.  (Not to the last digit: the metadata server serves the read
    # phase's opens in the order the ranks finished writing, which the offset changes.)
    assert shifted["agg_bw_Bps"][read].item() == pytest.approx(aligned["agg_bw_Bps"][read].item(), rel=1e-4)


def test_raid_failure_states():
    from simfs.hardware.raid import RaidSet

    lun = RaidSet("raid6", 10, DRIVE)
    assert lun.state_factor("degraded") == pytest.approx(0.9)
    assert lun.state_factor("rebuilding", 0.3) == pytest.approx(0.63)
    with pytest.raises(ValueError, match="lost data"):
        RaidSet("raid0", 3, DRIVE).state_factor("degraded")


def test_small_direct_writes_pay_read_modify_write_and_the_switch_removes_it():
    workload = "ior -a POSIX -F -w -e --posix.odirect -t 128k -b 1g"
    settings = {
        "nodes": 2,
        "stripe_count": 1,
        # The DDN write-back cache would absorb the whole 1 GiB: parity is then paid
        # only while destaging, after the timed phase.
        "overrides": {"mechanisms.hdd_seek": False, "mechanisms.controller_cache": False, "lustre.rpc_latency_s": 1e-9},
    }
    on = simfs.simulate("crtdc-lfs3", workload, **settings).phases.iloc[0]
    plain = dict(settings, overrides={**settings["overrides"], "mechanisms.raid_parity": False})
    off = simfs.simulate("crtdc-lfs3", workload, **plain).phases.iloc[0]
    # Two single-stripe files on two OSTs: OST-bound either way; 128 KiB is one chunk.
    # (Without parity a lone request stream's cap is its OST's rate: a tie, either name.)
    assert on["bottleneck"] == "ost" and off["bottleneck"] in ("ost", "direct-io-latency")
    assert off["bw_Bps"] / on["bw_Bps"] == pytest.approx(4.8, rel=2e-3)


def test_a_rebuilding_ost_slows_the_files_on_it():
    workload = "ior -a POSIX -F -w -e -t 1m -b 1g"
    base = {"mechanisms.hdd_seek": False}
    healthy = simfs.simulate(
        "crtdc-lfs4", workload, nodes=1, stripe_count=1, stripe_offset=0, overrides=base
    ).phases.iloc[0]
    failed = {**base, "ost.raid_level": "raid5", "ost.disks": 4, "ost.failed_drive_osts": [0], "ost.rebuilding": True}
    broken = simfs.simulate(
        "crtdc-lfs4", workload, nodes=1, stripe_count=1, stripe_offset=0, overrides=failed
    ).phases.iloc[0]
    # lfs4 as RAID-5 3+1: 3 x 99 MB/s healthy; rebuilding keeps 3/4 x (1 - 0.3) of it.
    assert healthy["bottleneck"] == broken["bottleneck"] == "ost"
    assert broken["bw_Bps"] / healthy["bw_Bps"] == pytest.approx(0.75 * 0.7, rel=2e-3)


def test_bad_failure_inputs_are_named():
    with pytest.raises(ProfileError, match="lost data"):
        simfs.load_system("crtdc-lfs4", {"ost.failed_drive_osts": [0]})  # RAID 0
    with pytest.raises(ProfileError, match="ost.failed_drive_osts: 99 is not a valid OST index"):
        simfs.load_system("crtdc-lfs3", {"ost.failed_drive_osts": [99]})


# -- extent locks ---------------------------------------------------------------------
def test_strided_shared_file_writes_are_lock_bound_and_the_switch_removes_it():
    # Strided N-1 writes of 47,008 B from 8 nodes: every record shares a stripe object
    # with other nodes' records, so the writes run through the lock manager at request
    # level, calling locks back and flushing small unaligned writes (test_request_io.py).
    workload = "ior -a POSIX -w -e -t 47008 -b 47008 -s 100"
    on = simfs.simulate("crtdc-lfs3", workload, nodes=8, stripe_count=4).phases.iloc[0]
    off = simfs.simulate(
        "crtdc-lfs3", workload, nodes=8, stripe_count=4, overrides={"mechanisms.extent_locks": False}
    ).phases.iloc[0]
    fpp = simfs.simulate("crtdc-lfs3", workload.replace("-w", "-F -w"), nodes=8, stripe_count=4).phases.iloc[0]
    assert on["mode"] == "request" and off["mode"] == fpp["mode"] == "fluid"
    assert on["bottleneck"] in {"extent-lock", "page-reads"}
    assert off["bw_Bps"] > 5 * on["bw_Bps"] and fpp["bw_Bps"] > 5 * on["bw_Bps"]


def test_overstriped_files_give_every_object_its_own_lock_and_share_the_osts():
    # lfs setstripe -C: a file of 32 objects on lfs3's 16 OSTs.  Up to the OST count the
    # same as plain striping; beyond it the objects (and their locks) double up on OSTs.
    strided = "ior -a POSIX -w -e -t 47008 -b 47008 -s 100"
    plain = simfs.simulate("crtdc-lfs3", strided, nodes=8, stripe_count=16)
    same = simfs.simulate("crtdc-lfs3", strided, nodes=8, overstripe_count=16)
    assert same.phases.iloc[0]["agg_bw_Bps"] == plain.phases.iloc[0]["agg_bw_Bps"]
    assert same.request_counts == plain.request_counts
    over = simfs.simulate("crtdc-lfs3", strided, nodes=8, overstripe_count=32)
    # 37.6 MB in 1 MiB stripes cover 36 objects: more objects, fewer records per lock.
    assert over.request_counts["lock_enqueues"] < plain.request_counts["lock_enqueues"]
    # Bulk file-per-process writes: 32 objects on 16 OSTs carry what 16 objects do.
    bulk = "ior -a POSIX -w -e -F -t 1m -b 256m"
    wide = simfs.simulate("crtdc-lfs3", bulk, nodes=8, stripe_count=-1).phases.iloc[0]["agg_bw_Bps"]
    doubled = simfs.simulate("crtdc-lfs3", bulk, nodes=8, overstripe_count=32).phases.iloc[0]["agg_bw_Bps"]
    assert doubled == pytest.approx(wide, rel=0.02)


@pytest.mark.parametrize(
    ("system", "settings", "message"),
    [
        ("crtdc-lfs3", {"overstripe_count": 0}, "overstripe_count: expected a positive number of stripe objects"),
        ("crtdc-lfs3", {"overstripe_count": 8, "stripe_count": 4}, "set either stripe_count or overstripe_count"),
        ("crtdc-panfs", {"overstripe_count": 8}, "which has no overstriping (Lustre's lfs setstripe -C)"),
        ("crtdc-lfs3", {"stripe_count": 32}, "stripe_count: 32 is more than the 16 OSTs"),
    ],
)
def test_overstriping_is_refused_where_it_does_not_exist(system, settings, message):
    with pytest.raises(simfs.SimfsError, match=re.escape(message)):
        simfs.simulate(system, "ior -a POSIX -w -e -t 1m -b 16m", **settings)


# -- TCP incast -------------------------------------------------------------------------
def test_incast_is_loss_recovery_played_out_for_the_senders_of_a_round():
    from simfs.hardware.loss_recovery import fan_in_goodput_factor

    # 1 MiB RPCs from servers whose windows are capped at 64 KiB (tcp_burst_bytes): two
    # fit a 128 KiB port; four overflow it, and fast recovery costs nothing measurable;
    # through 16 KiB four lose tails and wait, eight far more.
    assert fan_in_goodput_factor(2, 1 << 20, 117e6, 131072, 0.2, 50e-6, 65536) == 1.0
    assert fan_in_goodput_factor(4, 1 << 20, 117e6, 131072, 0.2, 50e-6, 65536) > 0.99
    four = fan_in_goodput_factor(4, 1 << 20, 117e6, 16384, 0.2, 50e-6, 65536)
    eight = fan_in_goodput_factor(8, 1 << 20, 117e6, 16384, 0.2, 50e-6, 65536)
    assert eight < four < 0.9


def test_incast_collapses_ethernet_reads_only_and_can_be_switched_off():
    read = "dd if=f of=/dev/null bs=1M count=2000"
    gbe = {"client.network": "1gbe"}
    wide = simfs.simulate("crtdc-lfs5", read, stripe_count=4, overrides=gbe).phases.iloc[0]
    narrow = simfs.simulate("crtdc-lfs5", read, stripe_count=2, overrides=gbe).phases.iloc[0]
    off = simfs.simulate(
        "crtdc-lfs5", read, stripe_count=4, overrides={**gbe, "mechanisms.tcp_incast": False}
    ).phases.iloc[0]
    ib = simfs.simulate("crtdc-lfs5", read, stripe_count=4).phases.iloc[0]
    assert narrow["agg_bw_Bps"] == pytest.approx(117e6, rel=1e-3)  # 2 OSS fit the buffer
    assert off["agg_bw_Bps"] == pytest.approx(117e6, rel=1e-3)
    from simfs.hardware.loss_recovery import fan_in_goodput_factor

    # Four OSS answer each round of the wide file's reads (simfs.hardware.loss_recovery);
    # their 64 KiB windows (tcp_burst_bytes) overflow the 128 KiB port, and Linux's fast
    # recovery costs nothing measurable.
    four_oss = fan_in_goodput_factor(4, 1 << 20, 117e6, 131072, 0.2, 50e-6, 65536)
    assert wide["agg_bw_Bps"] == pytest.approx(117e6 * four_oss, rel=2e-3)
    # A 16 KiB port (a shallow-buffered edge switch's share per port) costs them a third.
    shallow = simfs.simulate(
        "crtdc-lfs5", read, stripe_count=4, overrides={**gbe, "fabric.port_buffer_bytes": 16384}
    ).phases.iloc[0]
    shallow_factor = fan_in_goodput_factor(4, 1 << 20, 117e6, 16384, 0.2, 50e-6, 65536)
    assert shallow["agg_bw_Bps"] == pytest.approx(117e6 * shallow_factor, rel=2e-3)
    assert shallow["agg_bw_Bps"] < 0.75 * 117e6
    assert (shallow["bottleneck"], shallow["bottleneck_mechanism"]) == ("client-nic", "tcp_incast")
    assert ib["bottleneck"] == "client-core"


# -- SSD: IOPS bound and write cliff ---------------------------------------------------
X25E = SsdSpec(read_Bps=250e6, write_Bps=170e6, read_iops=35000, write_iops=3300, spare_fraction=0.2)


def test_ssd_request_cost_is_the_roofline_of_bandwidth_and_iops():
    # 4 KiB writes: 3300 x 4096 = 13.5 MB/s against 170 MB/s streaming.
    assert X25E.request_cost("write", 4096) == pytest.approx(170e6 / (3300 * 4096))
    # The knee is at B / IOPS = 51.5 kB; above it the drive streams.
    assert X25E.request_cost("write", 65536) == 1.0
    assert X25E.request_cost("read", 4096) == pytest.approx(250e6 / (35000 * 4096))
    assert SsdSpec(250e6, 170e6).request_cost("write", 4096) == 1.0  # no IOPS figure: no bound


def test_ssd_write_amplification_only_when_preconditioned():
    assert X25E.write_amplification == 1.0
    preconditioned = SsdSpec(250e6, 170e6, spare_fraction=0.2, preconditioned=True)
    assert preconditioned.write_amplification == pytest.approx(1.2 / 0.4)
    assert SsdSpec(250e6, 170e6, spare_fraction=2.0, preconditioned=True).write_amplification == 1.0
    with pytest.raises(ValueError, match="spare_fraction"):
        SsdSpec(250e6, 170e6, preconditioned=True)


def test_small_direct_writes_on_one_ssd_ost_are_iops_bound_and_the_switch_removes_it():
    # 32 ranks write 4 KiB O_DIRECT to OST 0 (4 X25-E in RAID-0): each rank's latency cap is
    # 4096 B / 1 ms = 4.1 MB/s, 131 MB/s in all, but the OST does 4 x 3300 IOPS = 54.1 MB/s.
    workload = "ior -a POSIX -F -w --posix.odirect -t 4k -b 4m"
    setting = {"nodes": 4, "ppn": 8, "stripe_count": 1, "stripe_offset": 0}
    on = simfs.simulate("crtdc-lfs5", workload, **setting).phases.iloc[0]
    off = simfs.simulate("crtdc-lfs5", workload, **setting, overrides={"mechanisms.ssd_iops": False}).phases.iloc[0]
    assert on["bottleneck"] == "ost" and off["bottleneck"] == "direct-io-latency"
    data = 32 * 4 * (1 << 20)
    assert data / on["bw_Bps"] == pytest.approx(data / (4 * 3300 * 4096), rel=0.02)
    system = simfs.load_system("crtdc-lfs5")
    alone = min(system.client.network.bandwidth_Bps, system.server.network.bandwidth_Bps, system.server.cpu_Bps)
    alone = min(alone, system.target.bandwidth_Bps("write"))
    assert off["bw_Bps"] == pytest.approx(32 * 4096 / (1e-3 + 4096 / alone), rel=0.02)


def test_preconditioned_ssd_ost_writes_at_bandwidth_over_write_amplification():
    workload = "ior -a POSIX -F -w -e -t 1m -b 1g"
    setting = {"nodes": 8, "stripe_count": 1, "stripe_offset": 0}
    fresh = simfs.simulate("crtdc-lfs5", workload, **setting).phases.iloc[0]
    cliff = simfs.simulate("crtdc-lfs5", workload, **setting, overrides={"ost.ssd.preconditioned": True})
    row = cliff.phases.iloc[0]
    assert fresh["bottleneck"] == row["bottleneck"] == "ost"
    assert fresh["bw_Bps"] == pytest.approx(4 * 170e6, rel=0.01)
    assert row["bw_Bps"] == pytest.approx(4 * 170e6 / 3.0, rel=0.01)
    switched_off = simfs.simulate(
        "crtdc-lfs5",
        workload,
        **setting,
        overrides={"ost.ssd.preconditioned": True, "mechanisms.ssd_write_cliff": False},
    ).phases.iloc[0]
    assert switched_off["bw_Bps"] == pytest.approx(fresh["bw_Bps"], rel=1e-9)


# -- OSS service threads and client readahead ------------------------------------------
def test_oss_thread_pool_caps_an_oss_by_littles_law():
    # 4 threads held 10 ms per 1 MiB RPC: 4 x 1 MiB / 10 ms = 419 MB/s for the one OSS used.
    workload = "ior -a POSIX -F -w -e -t 1m -b 1g"
    pool = {"oss.threads": 4, "oss.rpc_service_s": 0.01}
    setting = {"nodes": 8, "stripe_count": 1, "stripe_offset": 0}
    row = simfs.simulate("crtdc-lfs5", workload, **setting, overrides=pool).phases.iloc[0]
    assert row["bottleneck"] == "oss-threads"
    assert row["bw_Bps"] == pytest.approx(4 * (1 << 20) / 0.01, rel=0.01)
    off = simfs.simulate(
        "crtdc-lfs5", workload, **setting, overrides={**pool, "mechanisms.oss_threads": False}
    ).phases.iloc[0]
    assert off["bottleneck"] == "ost"


def test_readahead_window_is_shared_by_the_readers_of_a_node():
    # 8 MiB of readahead and a 10 ms round trip: one reader 839 MB/s, four share it (210 each).
    slow = {"lustre.max_read_ahead_bytes": 8 << 20, "lustre.rpc_latency_s": 0.01, "client.copy_read_Bps": 4e9}
    workload = "dd if=f of=/dev/null bs=1M count=2000"
    one = simfs.simulate("crtdc-lfs5", workload, overrides=slow).phases.iloc[0]
    four = simfs.simulate("crtdc-lfs5", workload, ppn=4, overrides=slow)
    assert one["bottleneck"] == "readahead-window"
    assert one["bw_Bps"] == pytest.approx((8 << 20) / 0.01, rel=0.01)
    assert four.phases.iloc[0]["min_rank_bw_Bps"] == pytest.approx((2 << 20) / 0.01, rel=0.01)
    off = simfs.simulate("crtdc-lfs5", workload, overrides={**slow, "mechanisms.readahead_window": False})
    assert off.phases.iloc[0]["bottleneck"] != "readahead-window"


# -- controller write-back cache and prefetch thrash -----------------------------------
def test_write_back_cache_absorbs_the_tail_at_host_speed():
    # One O_DIRECT writer, 4 GiB to one RAID-6 8+2 OST (8 x 98 MB/s = 784 MB/s): the last
    # 2.5 GB land in the controller's cache at the controller's 3 GB/s.
    workload = "ior -a POSIX -F -w --posix.odirect -t 1m -b 4g"
    fast_rpc = {"lustre.rpc_latency_s": 1e-9}
    setting = {"stripe_count": 1}
    row = simfs.simulate("crtdc-lfs3", workload, overrides=fast_rpc, **setting).phases.iloc[0]
    size, cache = 4 * (1 << 30), 2.5e9
    # The create and the close: round trips and the MDS's work, and the create's 1/2000 s
    # under the lock of IOR's shared directory.
    metadata = 1 / 2000 + open_close_s(simfs.load_system("crtdc-lfs3"))
    assert row["time_s"] == pytest.approx((size - cache) / 784e6 + cache / 3e9 + metadata, rel=1e-6)
    off = simfs.simulate(
        "crtdc-lfs3", workload, overrides={**fast_rpc, "mechanisms.controller_cache": False}, **setting
    ).phases.iloc[0]
    assert off["time_s"] == pytest.approx(size / 784e6 + metadata, rel=1e-6)


def test_write_back_cache_is_shared_by_the_writers_of_a_controller():
    # 16 writers, one stripe each, on 16 OSTs behind 2 controllers: 8 per controller share
    # its 2.5 GB, 312.5 MB each.
    system = simfs.load_system("crtdc-lfs3")
    fs = FileSystemInstance(system, FluidNetwork(simpy.Environment()), 1, np.random.default_rng(0))
    layout = fs.allocate(1, 1 << 20)
    assert fs.write_back_cache_bytes(layout, np.array([1.0]), {0: 8, 1: 8}) == pytest.approx(2.5e9 / 8)
    off = simfs.load_system("crtdc-lfs3", {"mechanisms.controller_cache": False})
    fs_off = FileSystemInstance(off, FluidNetwork(simpy.Environment()), 1, np.random.default_rng(0))
    assert fs_off.write_back_cache_bytes(layout, np.array([1.0]), {0: 8, 1: 8}) == 0.0


def test_prefetch_waste_hand_values():
    ddn = ControllerSpec(3e9, prefetch_bytes=4 << 20, cache_segments=8)
    assert ddn.prefetch_waste(8, 8, 1 << 20) == 0.0  # every stream keeps its segment
    # 16 streams, 8 segments: half the prefetches are evicted, 4 MiB wasted per 1 MiB read.
    assert ddn.prefetch_waste(16, 8, 1 << 20) == pytest.approx(0.5 * 4)
    model = PrefetchThrash(ddn, segments=8, request_bytes=1 << 20)
    assert model(900e6, ResourceLoad(16, 16, 0)) == pytest.approx(900e6 / 3)
    assert model(900e6, ResourceLoad(16, 0, 16)) == 900e6  # writes do not prefetch
    assert ControllerSpec(3e9).prefetch_waste(1000, 0, 1 << 20) == 0.0  # unknown segments: none


def test_prefetch_thrash_in_a_run_and_its_switch():
    # 64 readers on lfs3 (4 stripes each): 16 read streams per OST against 2 segments per OST.
    thrash = {"controller.cache_segments": 32, "controller.prefetch_bytes": 1 << 20}
    workload = "dd if=f of=/dev/null bs=1M count=2000"
    on = simfs.simulate("crtdc-lfs3", workload, nodes=64, overrides=thrash).phases.iloc[0]
    off = simfs.simulate(
        "crtdc-lfs3", workload, nodes=64, overrides={**thrash, "mechanisms.controller_prefetch": False}
    ).phases.iloc[0]
    assert on["bottleneck"] == "ost"
    assert on["agg_bw_Bps"] < off["agg_bw_Bps"] * 0.6


# -- metadata: directory serialisation -------------------------------------------------
def test_creates_in_one_directory_serialise_and_unique_directories_scale():
    # lfs3: 2000 creates/s in one directory; create+close costs 1/5000 + 1/20000 s of the MDS
    # (4000 items/s); each process has one 0.2 ms round trip per operation in flight.
    shared = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 1000", nodes=16).phases.iloc[0]
    unique = simfs.simulate("crtdc-lfs3", "mdtest -F -C -u -n 1000", nodes=16).phases.iloc[0]
    off = simfs.simulate(
        "crtdc-lfs3", "mdtest -F -C -n 1000", nodes=16, overrides={"mechanisms.mds_directory_lock": False}
    ).phases.iloc[0]
    # The lock never idles: 16,000 creates x 1/2000 s, after the first request's half round
    # trip; then the last create's work on the MDS core and the reply, and its close (a
    # round trip and 1/20000 s).
    latency = 2e-4
    makespan = latency / 2 + 16000 / 2000 + 1 / 5000 + latency / 2 + latency + 1 / 20000
    assert shared["bottleneck"] == "mds-dir"
    assert shared["ops_per_s"] == pytest.approx(16000 / makespan, rel=1e-6)
    # Unique directories: the MDS core binds; the 16 nodes' requests arrive together,
    # share it and return together: an item takes two round trips and 16 creates and
    # closes' work (1/5000 + 1/20000 s each).
    item = 2 * latency + 16 * (1 / 5000 + 1 / 20000)
    assert unique["bottleneck"] == "mds"
    assert unique["ops_per_s"] == pytest.approx(16 / item, rel=1e-6)
    assert off["ops_per_s"] == pytest.approx(unique["ops_per_s"], rel=1e-9)
    one = simfs.simulate("crtdc-lfs3", "mdtest -F -T -u -n 1000").phases.iloc[0]
    assert one["ops_per_s"] == pytest.approx(1 / (latency + 1 / 20000), rel=1e-6)  # one process: a round trip each


# -- interference between unsynchronised phases ----------------------------------------
def test_bonnie_phases_overlap_between_ranks_without_barriers():
    # 24 files on 16 OSTs: the ranks sharing an OST finish later than those alone.
    result = simfs.simulate("crtdc-lfs3", "bonnie++ -s 2g -n 0 -f", nodes=24, stripe_count=1, seed=3)
    ranks = result.ranks
    writes_end = ranks.loc[ranks["phase"] == "block write", "close_s"]
    rewrites_start = ranks.loc[ranks["phase"] == "rewrite", "open_s"]
    # Some rank starts rewriting before the last writer is done: no barrier between phases.
    assert rewrites_start.min() < writes_end.max()
    # IOR with the same phases would wait: every read starts after every write ends.
    ior = simfs.simulate("crtdc-lfs3", "ior -F -t 8k -b 2g", nodes=24, stripe_count=1, seed=3).ranks
    assert ior.loc[ior["phase"] == "read", "open_s"].min() >= ior.loc[ior["phase"] == "write", "close_s"].max()


# -- interference between concurrent jobs ----------------------------------------------
def test_a_background_job_on_other_nodes_slows_the_main_job():
    job = "ior -F -w -e -t 1m -b 4g"
    neighbour = {"background": "dd if=/dev/zero of=f bs=1M count=20000"}
    alone = simfs.simulate("crtdc-lfs3", job, nodes=8, overrides={**neighbour, "background_nodes": 0}).phases
    shared = simfs.simulate("crtdc-lfs3", job, nodes=8, overrides={**neighbour, "background_nodes": 16})
    phases = shared.phases.set_index("phase")
    assert list(alone["phase"]) == ["write"]
    assert list(phases.index) == ["write", "background write"]
    assert phases.loc["write", "agg_bw_Bps"] < 0.5 * alone["agg_bw_Bps"].iloc[0]
    # The background job's ranks and nodes come after the main job's.
    ranks = shared.ranks
    background = ranks[ranks["phase"] == "background write"]
    assert sorted(background["node"]) == list(range(8, 24)) and background["rank"].min() == 8
    # Per-node bandwidth of the background job is over its own 16 nodes.
    assert phases.loc["background write", "per_node_bw_Bps"] == pytest.approx(
        phases.loc["background write", "agg_bw_Bps"] / 16
    )


def test_background_settings_are_checked():
    with pytest.raises(ExperimentError, match="background: workload: unknown tool 'bogus'"):
        simfs.simulate("crtdc-lfs3", "dd bs=1M count=10", overrides={"background": "bogus", "background_nodes": 2})
    with pytest.raises(ExperimentError, match="set background to the job's command line"):
        simfs.simulate("crtdc-lfs3", "dd bs=1M count=10", overrides={"background_nodes": 2})
    with pytest.raises(ExperimentError, match="asked for 460"):
        simfs.simulate(
            "crtdc-lfs3",
            "dd bs=1M count=10",
            nodes=400,
            overrides={"background": "dd bs=1M count=1", "background_nodes": 60},
        )


# -- obdfilter-survey and the md RAID write thread ---------------------------------------
def test_obdfilter_survey_loads_one_oss_and_its_osts_only():
    # 2 OSTs of lfs3 (8+2 x 98 MB/s = 784 MB/s each), one object each, 32 threads each.
    result = simfs.simulate("crtdc-lfs3", "obdfilter-survey ost=2 sz=4194304K rsz=1024K obj=2 thr=64")
    assert list(result.phases["agg_bw_Bps"]) == pytest.approx([2 * 784e6] * 3, rel=1e-9)
    usage = result.resource_usage.set_index("resource")
    assert usage.loc["client0.nic.tx", "served"] == usage.loc["oss0.nic.rx", "served"] == 0
    assert usage.loc["oss0.cpu", "served"] > 0 and usage.loc["oss1.cpu", "served"] == 0


def test_echo_threads_cap_an_object_by_littles_law():
    # One thread per object, 10 ms per 1 MiB on the CS6000 profile: 105 MB/s per OST.
    result = simfs.simulate("xyratex-cs6000", "obdfilter-survey ost=4 sz=4194304K rsz=1024K obj=4 thr=4")
    row = result.phases.iloc[0]
    assert row["bottleneck"] == "echo-threads"
    assert row["agg_bw_Bps"] == pytest.approx(4 * (1 << 20) / 0.01, rel=1e-6)


def test_md_raid_thread_caps_writes_not_reads():
    survey = "obdfilter-survey ost=4 sz=16777216K rsz=1024K obj=4 thr=1024"
    slow_thread = {"ost.write_thread_Bps": 5e8, "ost.hdd.sustained_Bps": 1.2e8}
    phases = simfs.simulate("xyratex-cs6000", survey, overrides=slow_thread).phases.set_index("phase")
    assert phases.loc["write", "bottleneck"] == "raid-thread"
    assert phases.loc["write", "agg_bw_Bps"] == pytest.approx(4 * 5e8, rel=1e-6)
    assert phases.loc["read", "agg_bw_Bps"] == pytest.approx(4 * 8 * 1.2e8, rel=1e-6)
    off = simfs.simulate(
        "xyratex-cs6000", survey, overrides={**slow_thread, "mechanisms.md_raid_thread": False}
    ).phases.set_index("phase")
    assert off.loc["write", "agg_bw_Bps"] == pytest.approx(4 * 8 * 1.2e8, rel=1e-6)
