"""Whole runs against hand-computed times."""

import pytest

import simfs
from simfs.errors import ExperimentError
from tests.unit.phases import open_close_s

GB = 1e9
MIB = 1 << 20
LFS5 = simfs.load_system("crtdc-lfs5")
MD = open_close_s(LFS5)  # a create and a close: round trips plus the MDS's work


def test_single_dd_write_is_one_core_with_the_dirty_tail_at_copy_speed():
    result = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1024000 count=50000", nodes=1)
    row = result.phases.iloc[0]
    size = 1024000 * 50000
    # Bulk at the 1 GB/s core, last 4 x 32 MiB at the same copy rate: size / 1 GB/s + metadata.
    assert row["time_s"] == pytest.approx(size / GB + MD)
    assert row["bottleneck"] == "client-core"


def test_small_write_fits_in_the_dirty_limit():
    slow = {"client.copy_write_Bps": 2e9, "networks.qdr-ib.bandwidth_Bps": 1e8}
    result = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1M count=100", overrides=slow)
    # 100 MiB < 128 MiB dirty limit: the application sees the 2 GB/s copy, not the 100 MB/s NIC.
    assert result.phases.iloc[0]["time_s"] == pytest.approx(100 * MIB / 2e9 + MD)


def test_fsync_waits_for_writeback():
    slow = {"client.copy_write_Bps": 2e9, "networks.qdr-ib.bandwidth_Bps": 1e8}
    result = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1M count=100 conv=fsync", overrides=slow)
    # The copy (0.05 s) and the 100 MB/s drain run together; fsync waits for the drain.
    assert result.phases.iloc[0]["time_s"] == pytest.approx(100 * MIB / 1e8 + MD, rel=1e-6)


# 64 ranks opening at once queue at the MDS and start their data one after another (the
# queue is tested in test_metadata.py and test_mechanisms.py).  These tests check the data
# path with a metadata server that never queues and takes no time: every rank's create (or
# open) and close cost one round trip each, and all ranks move together.
INSTANT_MDS = {f"mds.{op}_per_s": 1e12 for op in ("create", "open", "close")}
# 48000 MiB: a whole number of 4 x 1 MiB stripe cycles, so every object holds 1/4.
SIZE = 48000 * MIB


def test_64_node_write_on_lfs5_saturates_the_osts():
    result = simfs.simulate("crtdc-lfs5", "dd if=/dev/zero of=f bs=1M count=48000", nodes=64, overrides=INSTANT_MDS)
    row = result.phases.iloc[0]
    dirty = 4 * 32 * MIB
    # 64 files x 4 stripes = 8 stripe objects per OST; 32 OSTs x 680 MB/s shared by 64
    # writers.  Each rank: bulk at the OST share, its dirty tail at the 1 GB/s core.
    per_rank = 32 * 680e6 / 64
    rank_time = (SIZE - dirty) / per_rank + dirty / GB + 2 * LFS5.io.metadata_latency_s
    assert row["agg_bw_Bps"] == pytest.approx(64 * SIZE / rank_time, rel=1e-9)
    assert row["bottleneck"] == "ost"


def test_64_node_read_on_lfs5_saturates_the_oss_nics():
    result = simfs.simulate("crtdc-lfs5", "dd if=f of=/dev/null bs=1M count=48000", nodes=64, overrides=INSTANT_MDS)
    row = result.phases.iloc[0]
    per_rank = 8 * 3.3e9 / 64
    assert row["time_s"] == pytest.approx(SIZE / per_rank + 2 * LFS5.io.metadata_latency_s, rel=1e-9)
    assert row["bottleneck"] == "oss-nic"


def test_dd_aggregate_is_the_sum_of_rank_rates_and_ior_uses_the_makespan():
    dd = simfs.simulate("crtdc-lfs3", "dd bs=1M count=1000", nodes=4).phases
    assert (dd["agg_bw_Bps"] == dd["sum_rank_bw_Bps"]).all()
    ior = simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 1g", nodes=4).phases
    assert (ior["agg_bw_Bps"] == ior["bw_Bps"]).all()
    assert (ior["per_node_bw_Bps"] == ior["agg_bw_Bps"] / 4).all()


def test_ior_iterations_and_ranks_table():
    result = simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 256m -i 2", nodes=2, ppn=3)
    phases, ranks = result.phases, result.ranks
    assert list(zip(phases["iteration"], phases["phase"])) == [(0, "write"), (0, "read"), (1, "write"), (1, "read")]
    assert len(ranks) == 2 * 2 * 6
    assert set(ranks["node"]) == {0, 1}
    assert (ranks.groupby(["iteration", "phase"])["bytes"].sum() == 6 * (256 << 20)).all()


def test_shared_file_spreads_every_rank_over_all_stripes():
    # Without the DDN write-back cache, which would absorb these 1 GiB either way.
    no_cache = {"mechanisms.controller_cache": False}
    shared = simfs.simulate("crtdc-lfs3", "ior -t 1m -b 64m -s 4", nodes=4, stripe_count=4, overrides=no_cache)
    fpp = simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 64m -s 4", nodes=4, stripe_count=4, overrides=no_cache)

    def ost_bytes(result):
        usage = result.resource_usage
        return usage.loc[usage["kind"] == "ost", "served"].to_numpy()

    # One shared file: 4 OSTs carry everything, a quarter each.  Four files: all 16 OSTs.
    busy = ost_bytes(shared)[ost_bytes(shared) > 0]
    assert len(busy) == 4 and busy == pytest.approx([busy.sum() / 4] * 4)
    assert (ost_bytes(fpp) > 0).sum() == 16
    # Same bytes on fewer OSTs: slower or equal.
    assert (shared.phases["time_s"].values >= fpp.phases["time_s"].values * (1 - 1e-9)).all()


def test_reorder_reads_the_neighbours_file():
    import numpy as np

    # lfs3's round robin interleaves OSS: OST order 0, 2, ..., 14, 1, 3, ..., 15, from a
    # start drawn from the run's seed.  Rank 0's file lands on order[start]; make that OST
    # rebuilding (slow).  Without -C rank 0 reads the slow file; with -C rank 1 does.
    seed = 7
    order = list(range(0, 16, 2)) + list(range(1, 16, 2))
    slow = order[int(np.random.default_rng(seed).integers(16))]
    overrides = {"mechanisms.hdd_seek": False, "ost.failed_drive_osts": [slow], "ost.rebuilding": True}
    settings = {"nodes": 2, "stripe_count": 1, "seed": seed, "overrides": overrides}

    def read_times(command):
        ranks = simfs.simulate("crtdc-lfs3", command, **settings).ranks
        reads = ranks[ranks["phase"] == "read"].set_index("rank")["time_s"]
        return reads[0], reads[1]

    plain = read_times("ior -F -e -t 1m -b 4g")
    reordered = read_times("ior -F -e -t 1m -b 4g -C")
    assert plain[0] > 1.2 * plain[1]
    assert reordered[1] > 1.2 * reordered[0]


def test_stripe_count_changes_a_single_stream_only_when_the_ost_limits():
    one = simfs.simulate("crtdc-lfs4", "dd if=/dev/zero of=f bs=1M count=2000", stripe_count=1).phases.iloc[0]
    four = simfs.simulate("crtdc-lfs4", "dd if=/dev/zero of=f bs=1M count=2000", stripe_count=4).phases.iloc[0]
    # One 297 MB/s OST limits a 1 GB/s core; four OSTs (1.19 GB/s) do not.
    assert one["bottleneck"] == "ost" and four["bottleneck"] == "client-core"
    assert four["agg_bw_Bps"] > 3 * one["agg_bw_Bps"]


def test_same_seed_same_result_and_seed_matters_for_layouts():
    def run(seed):
        return simfs.simulate("crtdc-lfs3", "ior -F -t 1m -b 256m", nodes=3, stripe_count=4, seed=seed)

    a, b = run(5), run(5)
    assert a.ranks.equals(b.ranks) and a.resource_usage.equals(b.resource_usage)
    # The round robin's random start moves the files: other OSTs carry the bytes.
    served = {seed: run(seed).resource_usage.set_index("resource")["served"] for seed in range(4)}
    placements = {tuple(usage.filter(like="ost").to_numpy() > 0) for usage in served.values()}
    assert len(placements) > 1


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"nodes": 0}, "nodes: expected a positive integer"),
        ({"nodes": -3}, "nodes: expected a positive integer"),
        ({"nodes": 1000}, "has 450 client nodes"),
        ({"stripe_count": 99}, "stripe_count: 99 is more than the 16 OSTs"),
        ({"stripe_size": 1000}, "multiple of 64 KiB"),
        ({"stripe_offset": 16}, "stripe_offset: 16 is not an OST index"),
        ({"seed": -1}, "seed"),
        ({"completion_tolerance": 0.5}, "completion_tolerance: expected a fraction from 0 to 0.01"),
        ({"completion_tolerance": "1e-4x"}, "completion_tolerance: expected a number such as 1e-4"),
        ({"completion_tolerance": float("nan")}, "completion_tolerance: expected a fraction"),
        ({"completion_tolerance": float("inf")}, "completion_tolerance: expected a fraction"),
        ({"completion_tolerance": -1e-4}, "completion_tolerance: expected a fraction"),
    ],
)
def test_bad_experiment_settings_are_named(settings, message):
    with pytest.raises(ExperimentError, match=message):
        simfs.simulate("crtdc-lfs3", "dd bs=1M count=10", **settings)


def test_completion_tolerance_takes_fewer_solves_for_nearly_the_same_rates():
    # 200 clients' creates reach the MDS one at a time, so their files end apart: a
    # tolerance of 1e-3 ends the ones close behind each completion with it.
    def run(tolerance):
        overrides = {"oss.count": 5, "client.count": 200}
        return simfs.simulate(
            "crtdc-lfs5",
            "ior -a POSIX -F -t 1m -b 256m",
            nodes=200,
            overrides=overrides,
            completion_tolerance=tolerance,
        )

    exact, coalesced = run(0.0), run(1e-3)
    assert coalesced.solves < 0.6 * exact.solves
    moved = coalesced.phases["agg_bw_Bps"] / exact.phases["agg_bw_Bps"] - 1
    assert (moved.abs() <= 1e-3).all()
    assert (moved != 0).any()  # it did end some flows early


def test_sweep_over_a_profile_field_and_a_setting():
    frame = simfs.sweep("crtdc-lfs3", "dd bs=1M count=1000", {"nodes": [1, 8], "oss.count": [4, 8]})
    assert set(frame["oss.count"]) == {4, 8}
    assert len(frame) == 2 * 2 * 2


def test_a_stonewalled_phase_stops_at_its_deadline_with_whole_transfers():
    # One process on lfs5 at its 1 GB/s core for 2 s of a 100 GiB block: about 2 GB, in
    # whole 1 MiB transfers, over the deadline plus the create (in IOR's shared directory:
    # its lock too) and the close.
    row = simfs.simulate("crtdc-lfs5", "ior -F -w -t 1m -b 100g -D 2").phases.iloc[0]
    assert row["bytes"] % MIB == 0
    assert row["bytes"] == pytest.approx(2 * GB, rel=0.01)
    assert row["time_s"] == pytest.approx(2 + MD + 1 / LFS5.metadata.dir_update_per_s, rel=1e-6)
    # At request level (a shared file from two nodes) each rank stops issuing writes at the
    # deadline: the phase ends within one write of it.
    shared = simfs.simulate("crtdc-lfs5", "ior -w -t 1m -b 100g -D 1", nodes=2).phases.iloc[0]
    assert shared["mode"] == "request" and shared["bytes"] < 2 * 100 * 1024 * MIB
    assert 1.0 < shared["time_s"] < 1.1


def test_mdtest_stonewall_stops_the_creates_and_the_later_phases_use_the_count():
    # mdtest -W 1: each rank creates until 1 s into the phase, then every rank goes on to
    # the most any made; the stat phase of the same run stats that many.
    result = simfs.simulate("crtdc-lfs5", "mdtest -n 1000000 -F -C -T -u -W 1", nodes=2, ppn=2)
    create, stat = (result.phases[result.phases["phase"] == label].iloc[0] for label in ("file create", "file stat"))
    per_rank = result.ranks[result.ranks["phase"] == "file create"]["ops"]
    assert per_rank.nunique() == 1 and 0 < per_rank.iloc[0] < 1_000_000
    assert create["ops"] == stat["ops"] == 4 * per_rank.iloc[0]
    # No create starts at or after the deadline; the last one ends within one create of it.
    one_create_s = create["time_s"] * 4 / create["ops"]
    assert 1.0 <= create["time_s"] < 1.0 + 2 * one_create_s
    unbounded = simfs.simulate("crtdc-lfs5", "mdtest -n 2000 -F -C -u", nodes=2, ppn=2).phases.iloc[0]
    assert unbounded["ops_per_s"] == pytest.approx(create["ops_per_s"], rel=0.01)


def test_the_cyclic_collector_is_off_while_events_run_and_as_it_was_after():
    import gc

    dd = "dd if=/dev/zero of=f bs=1M count=100"
    during: list[bool] = []
    simfs.simulate("crtdc-lfs5", dd, nodes=2, progress=lambda done, total: during.append(gc.isenabled()))
    assert during and not any(during)
    assert gc.isenabled()

    def fail(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        simfs.simulate("crtdc-lfs5", dd, nodes=2, progress=fail)
    assert gc.isenabled()  # restored when the run fails too
    gc.disable()
    try:
        simfs.simulate("crtdc-lfs5", dd, nodes=2)
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
