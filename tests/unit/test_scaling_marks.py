"""The scaling table and plot say where a curve peaks, how far it falls and why: the
bottleneck with the mechanism that made it bind, and measured values beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.errors import SimfsError
from simfs.report.measured import comparison, load_measured
from simfs.report.plots import scaling_plot
from simfs.report.tables import mark_peaks, wide_table

ROOT = Path(__file__).resolve().parents[2]
DD = "dd bs=1024000 count=50000"
WRITE_CASE = ROOT / "validation" / "crtdc-lfs3" / "lfs3-dd-nodes-write.toml"


@pytest.fixture(scope="module")
def lfs3_sweep() -> pd.DataFrame:
    return simfs.sweep("crtdc-lfs3-fitted", DD, {"nodes": [1, 4, 8, 16, 64]}, overrides={"stripe_count": 4})


def test_seek_thrashing_is_named_as_the_mechanism_behind_the_ost_bottleneck(lfs3_sweep):
    write = lfs3_sweep[lfs3_sweep["phase"] == "write"].set_index("nodes")
    assert write.loc[64, "bottleneck"] == "ost"
    assert write.loc[64, "bottleneck_mechanism"] == "hdd_seek"
    assert write.loc[1, "bottleneck_mechanism"] == ""  # one stream per OST: no seeking


def test_without_the_mechanism_the_same_bottleneck_binds_at_nominal_capacity():
    result = simfs.simulate(
        "crtdc-lfs3-fitted", DD, nodes=64, overrides={"stripe_count": 4, "mechanisms.hdd_seek": "false"}
    )
    write = result.phases.set_index("phase").loc["write"]
    assert write["bottleneck_mechanism"] == ""


@pytest.mark.parametrize(
    "system, workload, overrides, phase, bottleneck, mechanism",
    [
        # 16 clients reading 1 MB stripes from every blade over 1GbE with shallow port
        # buffers: the client NIC binds, at a fraction of its rate, because of incast.
        (
            "crtdc-panfs-fitted",
            DD,
            {"nodes": 16, "fabric.port_buffer_bytes": 131072},
            "read",
            "client-nic",
            "tcp_incast",
        ),
        # 128 KiB direct writes to one RAID-6 OST per process: read-modify-write costs the
        # OST (seek thrashing off, so only parity lowers it).
        (
            "crtdc-lfs3",
            "ior -a POSIX -F -w -e --posix.odirect -t 128k -b 1g",
            {"nodes": 16, "ppn": 4, "stripe_count": 1, "mechanisms.hdd_seek": False},
            "write",
            "ost",
            "raid_parity",
        ),
        # Both at once: thrashing lowers the OST's capacity and parity raises each write's cost.
        (
            "crtdc-lfs3",
            "ior -a POSIX -F -w -e --posix.odirect -t 128k -b 1g",
            {"nodes": 16, "ppn": 4, "stripe_count": 1},
            "write",
            "ost",
            "hdd_seek+raid_parity",
        ),
        ("crtdc-lfs5", DD, {"nodes": 8, "ost.ssd.preconditioned": True}, "write", "ost", "ssd_write_cliff"),
        ("crtdc-lfs5", DD, {"nodes": 8}, "write", "client-core", ""),
    ],
)
def test_a_mechanism_that_raises_a_cost_is_named_beside_its_bottleneck(
    system, workload, overrides, phase, bottleneck, mechanism
):
    result = simfs.simulate(system, workload, overrides=overrides).phases.set_index("phase")
    assert result.loc[phase, "bottleneck"] == bottleneck
    assert result.loc[phase, "bottleneck_mechanism"] == mechanism


def test_the_table_marks_the_peak_and_the_fall_after_it(lfs3_sweep):
    table = mark_peaks(wide_table(lfs3_sweep, ["nodes"]), ["nodes"])
    marks = table.set_index("nodes")["write vs peak"]
    peak_at = table.set_index("nodes")["write agg GB/s"].idxmax()
    assert marks[peak_at] == "peak"
    assert (marks[marks.index < peak_at] == "").all()
    last = table.set_index("nodes")["write agg GB/s"]
    assert marks[64] == f"{last[64] / last[peak_at] - 1:+.0%}"
    assert "ost (hdd_seek)" in set(table["write bottleneck"])


def test_a_plateau_is_not_marked_as_a_collapse():
    phases = pd.DataFrame(
        {
            "nodes": [1, 2, 4, 8],
            "phase": "write",
            "ops": 0,
            "bytes": 1,
            "agg_bw_Bps": [1e9, 2e9, 2.0e9, 1.95e9],
            "per_node_bw_Bps": [1e9, 1e9, 0.5e9, 0.25e9],
            "bottleneck": "ost",
            "bottleneck_mechanism": "",
        }
    )
    marks = mark_peaks(wide_table(phases, ["nodes"]), ["nodes"]).set_index("nodes")["write vs peak"]
    assert list(marks) == ["", "peak", "", ""]  # 2.5% below the peak is a plateau


def test_measured_values_are_compared_and_plotted(lfs3_sweep, tmp_path):
    measured, cases = load_measured([str(WRITE_CASE)], DD, "nodes")
    assert [(m.phase, m.x, m.value_Bps) for m in measured] == [("write", None, 5.7e9)]
    text = comparison(lfs3_sweep, "nodes", measured, cases)
    predicted_peak = lfs3_sweep[lfs3_sweep["phase"] == "write"]["agg_bw_Bps"].max()
    assert f"measured peak 5.70 GB/s: predicted {predicted_peak / 5.7e9 - 1:+.1%}" in text
    assert "the curve falls after its peak; predicted: falls" in text
    path = scaling_plot(lfs3_sweep, ["nodes"], tmp_path / "lfs3.png", measured=measured)
    assert path.stat().st_size > 0


def test_a_case_of_another_workload_is_refused():
    with pytest.raises(SimfsError, match="the case measures"):
        load_measured([str(WRITE_CASE)], "dd bs=1M count=10", "nodes")
    with pytest.raises(SimfsError, match="varies ppn"):
        load_measured([str(WRITE_CASE)], DD, "ppn")
