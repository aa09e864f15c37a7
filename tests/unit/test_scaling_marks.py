"""The scaling table and plot say where a curve peaks, how far it falls and why: the
bottleneck with the mechanism that made it bind, and measured values beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.errors import SimfsError
from simfs.report.measured import comparison, load_measured, signed_percent
from simfs.report.plots import scaling_plot
from simfs.report.tables import mark_peaks, wide_table

ROOT = Path(__file__).resolve().parents[2]
DD = "dd bs=1024000 count=50000"
WRITE_CASE = ROOT / "validation" / "crtdc-lfs3" / "lfs3-dd-nodes-write.toml"
NODES = [1, 2, 4, 8, 16, 32, 64]  # the case's curve


@pytest.fixture(scope="module")
def lfs3_sweep() -> pd.DataFrame:
    return simfs.sweep("crtdc-lfs3-fitted", DD, {"nodes": NODES}, overrides={"stripe_count": 4})


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
    measured = load_measured([str(WRITE_CASE)], DD, {"nodes": NODES}, fixed={"stripe_count": "4"})
    assert [(m.phase, m.x, m.value) for m in measured.rows] == [("write", None, 5.7e9)]
    assert measured.notes == []
    text = comparison(lfs3_sweep, ["nodes"], measured)
    predicted_peak = lfs3_sweep[lfs3_sweep["phase"] == "write"]["agg_bw_Bps"].max()
    # The profile was fitted to this peak: within 0.05%, which prints without a sign.
    assert abs(predicted_peak / 5.7e9 - 1) < 0.0005
    assert "measured peak 5.70 GB/s: predicted 0.0%" in text
    assert "the curve falls after its peak; predicted: falls" in text
    path = scaling_plot(lfs3_sweep, ["nodes"], tmp_path / "lfs3.png", measured=measured.rows)
    assert path.stat().st_size > 0


def test_the_comparison_gives_bandwidths_in_the_units_of_the_table(lfs3_sweep):
    measured = load_measured([str(WRITE_CASE)], DD, {"nodes": NODES}, fixed={"stripe_count": "4"})
    # The case's 5.7 GB/s is 5,435.94 MiB/s (5.7e9 / 2**20) and 5.31 GiB/s (5.7e9 / 2**30).
    assert "measured peak 5435.94 MiB/s" in comparison(lfs3_sweep, ["nodes"], measured, units="MiB")
    assert "measured peak 5.31 GiB/s" in comparison(lfs3_sweep, ["nodes"], measured, units="GiB")


@pytest.mark.parametrize(
    "fraction, decimals, text",
    [
        (0.042, 1, "+4.2%"),
        (-0.042, 1, "-4.2%"),
        (-0.0004, 1, "0.0%"),
        (0.0004, 1, "0.0%"),
        (-0.004, 0, "0%"),
        (-0.6, 0, "-60%"),
    ],
)
def test_a_change_that_rounds_to_nothing_has_no_sign(fraction, decimals, text):
    assert signed_percent(fraction, decimals) == text


def test_a_sweep_over_part_of_a_cases_curve_gives_no_verdict_on_its_shape(lfs3_sweep):
    part = lfs3_sweep[lfs3_sweep["nodes"] <= 8]
    measured = load_measured([str(WRITE_CASE)], DD, {"nodes": [1, 2, 4, 8]}, fixed={"stripe_count": "4"})
    assert measured.rows == [] and measured.shaped == frozenset()
    assert measured.notes == [
        f"{WRITE_CASE}: its curve is nodes=1,2,4,8,16,32,64, the sweep's nodes=1,2,4,8: its peak and shape are not compared"
    ]
    assert comparison(part, ["nodes"], measured) == ""


def test_a_case_given_twice_counts_once():
    measured = load_measured([str(WRITE_CASE), str(WRITE_CASE)], DD, {"nodes": NODES}, fixed={"stripe_count": "4"})
    assert len(measured.cases) == 1 and len(measured.rows) == 1


def test_a_case_that_cannot_be_read_is_refused_naming_the_option(tmp_path):
    missing = tmp_path / "nothere.toml"
    with pytest.raises(SimfsError) as refusal:
        load_measured([str(missing)], DD, {"nodes": [1, 2]})
    assert str(refusal.value) == f"--measured {missing}: cannot read (No such file or directory)"


def test_a_case_whose_data_cannot_be_read_is_refused_naming_the_case(tmp_path):
    case = tmp_path / "from-data.toml"
    case.write_text(WRITE_CASE.read_text().split("[[points]]")[0].replace('curve = "', 'data = "runs/"\ncurve = "', 1))
    with pytest.raises(SimfsError) as refusal:
        load_measured([str(case)], DD, {"nodes": NODES}, fixed={"stripe_count": "4"})
    assert str(refusal.value).startswith(f"--measured {case}: {tmp_path / 'runs'}")


def test_a_case_of_another_workload_is_refused():
    with pytest.raises(SimfsError, match="the case measures"):
        load_measured([str(WRITE_CASE)], "dd bs=1M count=10", {"nodes": [1, 2]})
    with pytest.raises(SimfsError, match="varies ppn"):
        load_measured([str(WRITE_CASE)], DD, {"ppn": [1, 2]})


def test_cases_are_matched_on_the_whole_command_line_not_only_its_phases():
    # obdfilter-survey's thr is an option of the run, not of its phases.
    case = ROOT / "validation" / "xyratex-cs6000" / "cs6000-obdfilter-write.toml"
    survey = "obdfilter-survey ost=4 sz=134217728K rsz=1024K obj=4 thr={thr}"
    measured = load_measured([str(case)], survey, {"thr": [256, 1024]})
    assert {row.x for row in measured.rows} == {1024}
    with pytest.raises(SimfsError, match="the case measures"):
        load_measured([str(case)], survey.replace("{thr}", "256"), {"nodes": [1]})


SPECSFS_CASES = [ROOT / "validation" / "panasas-as9" / f"specsfs-load-{load}.toml" for load in (39610, 7894)]
LOAD_CURVE = "specsfs2008 --load {load}"
AS_MEASURED = {"nodes": "10", "ppn": "150"}


def _load_curve(response_s: list[float], ops: list[int] | None = None) -> pd.DataFrame:
    """A predicted SPECsfs2008 curve, as a sweep over ``load`` returns it."""
    loads = [7894, 39610, 77137]
    return pd.DataFrame(
        {
            "load": loads,
            "nodes": 10,
            "phase": "nfs ops",
            "op": "mix",
            "ops": ops or [4 * load for load in loads],
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
    paths = [str(path) for path in SPECSFS_CASES]
    measured = load_measured(paths, LOAD_CURVE, {"load": [7894, 39610]}, system="panasas-as9-fitted", fixed=AS_MEASURED)
    assert measured.notes == []
    assert sorted((m.x, m.value, m.metric) for m in measured.rows) == [
        (7894, 0.0008, "clat_mean"),
        (39610, 0.0013, "clat_mean"),
    ]
    text = comparison(_load_curve([0.0008, 0.00065, 0.0009]), ["load"], measured)
    lines = text.splitlines()
    # One summary for the curve the two cases measure, then their points along it.
    assert lines[0] == "nfs ops: predicted 0.800 ms at load=7894 to 0.900 ms at load=77137"
    assert lines[1].startswith("  measured 0.800 ms at load=7894: predicted 0.0% (case specsfs-load-7894, calibration")
    assert lines[2].startswith("  measured 1.300 ms at load=39610: predicted -50.0% (case specsfs-load-39610, held")
    assert len(lines) == 3
    path = scaling_plot(_load_curve([0.0008, 0.00065, 0.0009]), ["load"], tmp_path / "load.png", measured=measured.rows)
    assert path.stat().st_size > 0
    # A point where no operation ended (no response time) is drawn at 0 op/s, not refused.
    silent = _load_curve([float("nan"), 0.00065, 0.0009], ops=[0, 4, 4])
    assert scaling_plot(silent, ["load"], tmp_path / "silent.png", measured=measured.rows).stat().st_size > 0


def test_a_case_of_a_load_the_sweep_does_not_run_is_refused():
    with pytest.raises(SimfsError, match=r"not any of the command lines .* runs with the --vary values"):
        load_measured([str(SPECSFS_CASES[0])], LOAD_CURVE, {"load": [7894, 77137]})


def test_where_the_other_keys_are_fixed_the_comparison_reads_that_curve():
    curve = pd.concat([_load_curve([0.001, 0.001, 0.001]), _load_curve([0.002, 0.002, 0.002]).assign(nodes=20)])
    vary = {"load": [7894], "nodes": [10, 20]}
    measured = load_measured([str(SPECSFS_CASES[1])], LOAD_CURVE, vary, fixed={"ppn": "150"})
    assert measured.rows[0].where == (("nodes", 10),)
    text = comparison(curve, ["load", "nodes"], measured)
    assert "nfs ops, nodes=10: predicted 1.000 ms" in text
    assert "measured 0.800 ms at load=7894: predicted +25.0%" in text


def test_points_at_other_settings_than_the_sweeps_are_left_out_with_a_note():
    case = ROOT / "validation" / "archer-sonexion" / "archer-mdtest-sd-unlink-nodes.toml"
    workload = "mdtest -n 64 -F -C -T -r -N 24"
    measured = load_measured([str(case)], workload, {"ppn": [12, 24]}, fixed={"nodes": "2"})
    # Only the point at 2 nodes is on a sweep of ppn at 2 nodes; its curve is over nodes.
    assert [(row.x, row.value) for row in measured.rows] == [(24, 1571.0)]
    assert any("points not on this sweep left out (nodes=4; nodes=8;" in note for note in measured.notes)
    assert any("its peak and shape are not compared" in note for note in measured.notes)


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
    measured = load_measured(
        [str(SPECSFS_CASES[1])], LOAD_CURVE, {"load": [7894]}, system="panasas-as9", fixed={"nodes": "10"}
    )
    assert measured.notes == [
        f"{SPECSFS_CASES[1]}: measured on panasas-as9-fitted; the sweep runs panasas-as9",
        f"{SPECSFS_CASES[1]}: measured with ppn=150; the sweep runs ppn=1",
    ]
    assert len(measured.rows) == 1  # a what-if beside the measurement: kept
