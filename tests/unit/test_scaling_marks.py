"""The scaling table and plot say where a curve peaks, how far it falls and why: the
bottleneck with the mechanism that made it bind, and measured values beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.errors import SimfsError
from simfs.report.measured import comparison, load_measured, setting_notes
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
    measured, cases = load_measured([str(WRITE_CASE)], DD, {"nodes": [1, 4, 8, 16, 64]})
    assert [(m.phase, m.x, m.value) for m in measured] == [("write", None, 5.7e9)]
    text = comparison(lfs3_sweep, "nodes", measured, cases)
    predicted_peak = lfs3_sweep[lfs3_sweep["phase"] == "write"]["agg_bw_Bps"].max()
    assert f"measured peak 5.70 GB/s: predicted {predicted_peak / 5.7e9 - 1:+.1%}" in text
    assert "the curve falls after its peak; predicted: falls" in text
    path = scaling_plot(lfs3_sweep, ["nodes"], tmp_path / "lfs3.png", measured=measured)
    assert path.stat().st_size > 0


def test_a_case_of_another_workload_is_refused():
    with pytest.raises(SimfsError, match="the case measures"):
        load_measured([str(WRITE_CASE)], "dd bs=1M count=10", {"nodes": [1, 2]})
    with pytest.raises(SimfsError, match="varies ppn"):
        load_measured([str(WRITE_CASE)], DD, {"ppn": [1, 2]})


SPECSFS_CASES = [ROOT / "validation" / "panasas-as9" / f"specsfs-load-{load}.toml" for load in (39610, 7894)]
LOAD_CURVE = "specsfs2008 --load {load}"


def _load_curve(response_s: list[float]) -> pd.DataFrame:
    """A predicted SPECsfs2008 curve, as a sweep over ``load`` returns it."""
    loads = [7894, 39610, 77137]
    return pd.DataFrame(
        {
            "load": loads,
            "nodes": 10,
            "phase": "nfs ops",
            "ops": [4 * load for load in loads],
            "bytes": 0,
            "ops_per_s": [float(load) for load in loads],
            "agg_bw_Bps": 0.0,
            "per_node_bw_Bps": 0.0,
            "response_time_s": response_s,
            "bottleneck": "metadata-latency",
            "bottleneck_mechanism": "",
        }
    )


def test_cases_of_one_load_each_are_matched_to_a_sweep_over_the_load(tmp_path):
    measured, cases = load_measured([str(path) for path in SPECSFS_CASES], LOAD_CURVE, {"load": [7894, 39610]})
    assert sorted((m.x, m.value, m.metric) for m in measured) == [
        (7894, 0.0008, "clat_mean"),
        (39610, 0.0013, "clat_mean"),
    ]
    text = comparison(_load_curve([0.0008, 0.00065, 0.0009]), "load", measured, cases)
    lines = text.splitlines()
    # One summary for the curve the two cases measure, then their points along it.
    assert lines[0] == "nfs ops: predicted 0.8 ms at load=7894 to 0.9 ms at load=77137"
    assert lines[1].startswith("  measured 0.8 ms at load=7894: predicted +0.0% (case specsfs-load-7894, calibration")
    assert lines[2].startswith("  measured 1.3 ms at load=39610: predicted -50.0% (case specsfs-load-39610, held-out")
    assert len(lines) == 3
    path = scaling_plot(_load_curve([0.0008, 0.00065, 0.0009]), ["load"], tmp_path / "load.png", measured=measured)
    assert path.stat().st_size > 0


def test_a_case_of_a_load_the_sweep_does_not_run_is_refused():
    with pytest.raises(SimfsError, match=r"not any of the command lines .* runs with the --vary values"):
        load_measured([str(SPECSFS_CASES[0])], LOAD_CURVE, {"load": [7894, 77137]})


def test_where_the_other_keys_are_fixed_the_comparison_reads_that_curve():
    curve = pd.concat([_load_curve([0.001, 0.001, 0.001]), _load_curve([0.002, 0.002, 0.002]).assign(nodes=20)])
    measured, cases = load_measured([str(SPECSFS_CASES[1])], LOAD_CURVE, {"load": [7894], "nodes": [10, 20]})
    assert measured[0].where == (("nodes", 10),)
    text = comparison(curve, "load", measured, cases)
    assert "nfs ops, nodes=10: predicted 1 ms" in text
    assert "measured 0.8 ms at load=7894: predicted +25.0%" in text


def test_a_metric_of_another_kind_of_phase_is_refused(tmp_path):
    case = tmp_path / "mislabelled.toml"
    case.write_text(
        SPECSFS_CASES[1].read_text().replace('metric = "clat_mean"', 'metric = "ops_rate"'), encoding="utf-8"
    )
    with pytest.raises(SimfsError, match="metric 'ops_rate' is of a metadata phase; 'nfs ops' is an open-loop phase"):
        load_measured([str(case)], LOAD_CURVE, {"load": [7894]})
    with pytest.raises(SimfsError, match="metric 'rank_bw': a scaling plot shows"):
        text = WRITE_CASE.read_text().replace('metric = "agg_bw"', 'metric = "rank_bw"')
        (tmp_path / "rank.toml").write_text(text, encoding="utf-8")
        load_measured([str(tmp_path / "rank.toml")], DD, {"nodes": [1]})


def test_settings_a_case_measured_otherwise_are_noted():
    _, cases = load_measured([str(SPECSFS_CASES[1])], LOAD_CURVE, {"load": [7894]})
    notes = setting_notes(cases, "panasas-as9", {"load": [7894]}, {"ppn": "150"})
    assert notes == [
        f"{SPECSFS_CASES[1]}: measured on panasas-as9-fitted; the sweep runs panasas-as9",
        f"{SPECSFS_CASES[1]}: measured with nodes=10; the sweep runs nodes=1",
    ]
    assert setting_notes(cases, "panasas-as9-fitted", {"load": [7894], "nodes": [10]}, {"ppn": 150}) == []
