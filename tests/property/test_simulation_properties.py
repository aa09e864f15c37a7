"""Properties of whole simfs runs (hypothesis).

Monotonicity is stated precisely: in a *symmetric* run -- every rank does the same thing
at the same time and every resource of a kind carries the same load (stripe objects
spread evenly over the OSTs, each file a whole number of stripe cycles, no background
write-back or destaging crossing into a later phase, and opens that do not queue at the
metadata server, which would start the ranks one after another) -- all ranks move at one
common rate, the max-min level, which can only rise when a capacity rises.  So no phase gets slower.  Without symmetry max-min
sharing can trade one flow against another and a run *can* get slower
(docs/background/monotonicity.md).  Load-dependent capacities (seek thrashing, on in the
CRT-DC HDD profiles) keep the property when the change raises a capacity at every load:
every field varied here does.

Background work crossing a phase boundary breaks it, as
``test_destaging_into_the_next_phase_can_make_a_faster_controller_slower`` shows: a faster
controller finishes the writes sooner, so more of the destaging overlaps the reads.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import simfs
from simfs.systems.profile import load_profile

SYSTEMS = {
    "crtdc-lfs3": [
        "networks.qdr-ib.bandwidth_Bps",
        "client.copy_write_Bps",
        "client.copy_read_Bps",
        "oss.cpu_Bps",
        "ost.hdd.sustained_Bps",
        "controller.bandwidth_Bps",
    ],
    "crtdc-lfs4": [
        "networks.qdr-ib.bandwidth_Bps",
        "client.copy_write_Bps",
        "oss.cpu_Bps",
        "ost.hdd.sustained_Bps",
    ],
    "crtdc-lfs5": [
        "networks.qdr-ib.bandwidth_Bps",
        "client.copy_read_Bps",
        "ost.ssd.read_Bps",
        "ost.ssd.write_Bps",
        "controller.bandwidth_Bps",
    ],
}
BASE = {name: simfs.load_system(name) for name in SYSTEMS}
# Opens and closes that never queue: each costs one round trip, for every rank at once
# (the metadata queue's own property is test_more_metadata_capacity_never_lowers_a_rate).
NO_METADATA_QUEUE = {
    **{f"mds.{op}_per_s": 1e12 for op in ("create", "open", "close", "dir_update")},
    "lustre.max_mod_rpcs_in_flight": 12,
    "lustre.max_metadata_rpcs_in_flight": 12,
}


@st.composite
def symmetric_runs(draw):
    name = draw(st.sampled_from(sorted(SYSTEMS)))
    system = BASE[name]
    stripe_count = draw(st.sampled_from([1, 2, 4, 8, -1]))
    effective = system.target_count if stripe_count == -1 else stripe_count
    nodes = draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
    ppn = draw(st.sampled_from([1, 2, 4, 12]))
    assume((nodes * ppn * effective) % system.target_count == 0)
    mib = effective * draw(st.integers(16, 512))
    workload = draw(
        st.sampled_from(
            [
                f"dd if=/dev/zero of=f bs=1M count={mib}",
                f"dd if=f of=/dev/null bs=1M count={mib}",
                f"ior -F -e -w -t 1m -b {mib}m",
            ]
        )
    )
    field = draw(st.sampled_from(SYSTEMS[name]))
    factor = draw(st.floats(1.0, 4.0))
    return name, workload, {"nodes": nodes, "ppn": ppn, "stripe_count": stripe_count}, field, factor


def _value(system_name: str, field: str) -> float:
    node = load_profile(system_name).data
    for part in field.split("."):
        node = node[part]
    return float(node)


@settings(max_examples=40, deadline=None)
@given(symmetric_runs())
def test_more_capacity_never_slows_a_symmetric_run(run):
    name, workload, experiment, field, factor = run
    before = simfs.simulate(name, workload, overrides=NO_METADATA_QUEUE, **experiment).phases
    raised = {**NO_METADATA_QUEUE, field: _value(name, field) * factor}
    after = simfs.simulate(name, workload, overrides=raised, **experiment).phases
    assert (after["time_s"].values <= before["time_s"].values * (1 + 1e-9)).all(), (field, factor)


@pytest.mark.slow  # request-level metadata runs in pairs: 15 s
@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(SYSTEMS)),
    nodes=st.sampled_from([1, 2, 4, 16]),
    ppn=st.sampled_from([1, 3, 8]),
    unique=st.booleans(),
    field=st.sampled_from(["mds.create_per_s", "mds.close_per_s", "mds.dir_update_per_s", "mds.remove_per_s"]),
    factor=st.floats(1.0, 4.0),
)
def test_more_metadata_capacity_never_lowers_a_rate(name, nodes, ppn, unique, field, factor):
    """Every process cycles through the same FIFO stations (its node's request slot, the
    directory lock, the server's core) with fixed demands: a closed queueing network in
    which a faster station can only raise the throughput of every phase."""
    workload = f"mdtest -F -C -T -r -n 200{' -u' if unique else ''}"
    before = simfs.simulate(name, workload, nodes=nodes, ppn=ppn).phases
    after = simfs.simulate(name, workload, nodes=nodes, ppn=ppn, overrides={field: _value(name, field) * factor}).phases
    assert (after["ops_per_s"].values >= before["ops_per_s"].values * (1 - 1e-9)).all(), (field, factor)


def test_destaging_into_the_next_phase_can_make_a_faster_controller_slower():
    # 48 ranks write 33 MiB each (fsync) into the DDN cache, then read: the reads share the
    # OSTs with destaging that a faster controller has left more of.
    run = {"nodes": 4, "ppn": 12, "stripe_count": 1}
    slow = simfs.simulate("crtdc-lfs3", "ior -F -e -t 1m -b 33m", **run).phases
    fast = simfs.simulate(
        "crtdc-lfs3", "ior -F -e -t 1m -b 33m", overrides={"controller.bandwidth_Bps": 6e9}, **run
    ).phases
    assert fast["time_s"].iloc[0] < slow["time_s"].iloc[0]
    assert fast["time_s"].iloc[1] > slow["time_s"].iloc[1]
    no_cache = {"mechanisms.controller_cache": False}
    plain = simfs.simulate("crtdc-lfs3", "ior -F -e -t 1m -b 33m", overrides=no_cache, **run).phases
    faster = simfs.simulate(
        "crtdc-lfs3", "ior -F -e -t 1m -b 33m", overrides={**no_cache, "controller.bandwidth_Bps": 6e9}, **run
    ).phases
    assert (faster["time_s"].values <= plain["time_s"].values * (1 + 1e-9)).all()


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(SYSTEMS)),
    workload=st.sampled_from(["dd bs=1M count=300", "ior -F -t 1m -b 64m -i 2 -C", "ior -t 1m -b 32m -s 3"]),
    nodes=st.integers(1, 20),
    ppn=st.integers(1, 4),
    stripe_count=st.integers(1, 16),
    seed=st.integers(0, 2**31),
)
def test_same_seed_same_result(name, workload, nodes, ppn, stripe_count, seed):
    settings_ = {"nodes": nodes, "ppn": ppn, "stripe_count": stripe_count, "seed": seed}
    first = simfs.simulate(name, workload, **settings_)
    second = simfs.simulate(name, workload, **settings_)
    assert first.ranks.equals(second.ranks)
    assert first.phases.equals(second.phases)


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(SYSTEMS)),
    op=st.sampled_from(["write", "read"]),
    nodes=st.integers(1, 24),
    ppn=st.integers(1, 3),
    stripe_count=st.integers(1, 8),
    seed=st.integers(0, 1000),
)
def test_bytes_are_conserved_in_whole_runs(name, op, nodes, ppn, stripe_count, seed):
    """Every byte the ranks move crosses the OSTs exactly once (an SSD read byte costs
    write_Bps / read_Bps of the OST's capacity, so the OST work is scaled back)."""
    workload = "dd if=/dev/zero of=f bs=1M count=200" if op == "write" else "dd if=f of=/dev/null bs=1M count=200"
    result = simfs.simulate(name, workload, nodes=nodes, ppn=ppn, stripe_count=stripe_count, seed=seed)
    moved = nodes * ppn * 200 * (1 << 20)
    assert (result.phases["bytes"] == moved).all()
    usage = result.resource_usage
    ost_work = usage.loc[usage["kind"] == "ost", "served"].sum()
    ost = BASE[name].target
    weight = 1.0 if op == "write" else ost.bandwidth_Bps("write") / ost.bandwidth_Bps("read")
    assert ost_work == pytest.approx(moved * weight, rel=1e-9)
    assert usage.loc[usage["kind"] == "fabric", "served"].sum() == pytest.approx(moved, rel=1e-9)
