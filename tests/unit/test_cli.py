"""The simfs command: outputs and one-line errors."""

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_systems_lists_builtins_with_descriptions(capsys):
    code, out, _ = run(capsys, "systems")
    assert code == 0
    assert "crtdc-lfs3" in out and "DDN" in out


def test_show_prints_the_assembled_hardware(capsys):
    code, out, _ = run(capsys, "show", "crtdc-lfs5", "--set", "oss.count=16")
    assert code == 0
    assert "OSS: 16 x" in out and "OST: 64 x" in out


def test_simulate_table_and_csv(capsys):
    code, out, _ = run(capsys, "simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=100", "--nodes", "2")
    assert code == 0 and "write agg GB/s" in out
    code, out, _ = run(
        capsys,
        "simulate",
        "--system",
        "crtdc-lfs3",
        "--workload",
        "dd bs=1M count=100",
        "--format",
        "csv",
        "--per-rank",
    )
    assert code == 0 and out.startswith("system,")


def test_sweep_json_is_strict_and_tidy(capsys, tmp_path):
    plot = tmp_path / "scaling.png"
    code, out, err = run(
        capsys,
        "sweep",
        "--system",
        "crtdc-lfs5",
        "--workload",
        "dd bs=1024000 count=500",
        "--vary",
        "nodes=1,2,4",
        "--format",
        "json",
        "--plot",
        str(plot),
        "--no-progress",
    )
    assert code == 0
    rows = json.loads(out)
    assert {r["nodes"] for r in rows} == {1, 2, 4}
    assert {r["phase"] for r in rows} == {"write", "read"}
    assert plot.stat().st_size > 10_000
    assert not list(tmp_path.glob(".*partial*"))


def test_sweep_two_keys_csv(capsys):
    code, out, _ = run(
        capsys,
        "sweep",
        "--system",
        "crtdc-lfs3",
        "--workload",
        "ior -F -t 1m -b 64m",
        "--vary",
        "nodes=1,2",
        "--vary",
        "stripe_count=1,4",
        "--format",
        "csv",
        "--no-progress",
    )
    assert code == 0
    from io import StringIO

    frame = pd.read_csv(StringIO(out))
    assert len(frame) == 2 * 2 * 2 and {"bw_Bps", "agg_bw_Bps", "per_node_bw_Bps"} <= set(frame.columns)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "nosuch"], "unknown system 'nosuch'"),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10 skip=1"],
            "unsupported operand 'skip'",
        ),
        (["simulate", "--system", "crtdc-lfs3", "--workload", "ior -Z"], "unsupported option '-Z'"),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10", "--set", "nodes=-4"],
            "nodes: expected a positive integer",
        ),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10", "--set", "oss.count=-1"],
            "oss.count: expected a positive number",
        ),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10", "--set", "nope"],
            "expected KEY=VALUE",
        ),
        (["sweep", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10", "--vary", "nodes="], "--vary nodes"),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=10", "--set", "wibble.x=1"],
            "wibble.x: unknown field",
        ),
    ],
)
def test_user_errors_are_one_line_with_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and err.startswith("simfs: error: ")


def test_malformed_toml_from_the_real_command_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[system\nname = 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "simfs.cli", "show", str(bad)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert str(bad) in proc.stderr and "line 1" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_negative_nodes_flag_is_rejected_by_argparse(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=1", "--nodes", "-2"])
    assert exc.value.code == 2
    assert "expected a positive integer" in capsys.readouterr().err


def test_the_command_starts_without_the_numeric_stack():
    # `simfs --help`, `simfs systems` and `simfs show` must start in a fraction of a
    # second (issue 17): describing a system reads profiles and hardware descriptions
    # only, so numpy, SimPy, scipy, pandas and the run-time assembly stay unimported for
    # every built-in system.  Checked by what is imported, not by timing.
    probe = (
        "import sys, contextlib, io\n"
        "from simfs.cli import main\n"
        "from simfs.systems import builtin_names\n"
        "heavy = ('numpy', 'simpy', 'scipy', 'pandas', 'matplotlib', 'simfs.filesystems.core.instance')\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['systems'])\n"
        "    for name in builtin_names():\n"
        "        main(['show', name])\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_one_point_simulate_prints_its_table_without_pandas():
    # Issue 20: a one-point run pays for nothing it does not use; its table comes from
    # the phase rows (pandas costs about 0.5 s of a 0.8 s run).  Checked by what is
    # imported, not by timing; the table is the one the DataFrame path prints.
    probe = (
        "import sys\n"
        "from simfs.cli import main\n"
        "main(['simulate', '--system', 'crtdc-lfs3', '--workload', 'ior -a POSIX -F -t 1m -b 64m', '--nodes', '2'])\n"
        "print('pandas' in sys.modules, 'scipy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    *table, imported = done.stdout.strip().splitlines()
    assert imported == "False False"
    from simfs.api import simulate
    from simfs.report.tables import render_text, wide_table

    result = simulate("crtdc-lfs3", "ior -a POSIX -F -t 1m -b 64m", nodes=2)
    assert "\n".join(table) == render_text(wide_table(result.phases, ["nodes", "ppn"]))


def test_show_names_the_overrides_and_the_counts_they_scale(capsys):
    assert main(["show", "crtdc-lfs3", "--set", "oss.count=16"]) == 0
    captured = capsys.readouterr()
    assert "(with --set oss.count=16)" in captured.out
    assert "OST: 32 x" in captured.out
    assert captured.err.strip() == "simfs: note: oss.count=16 scales oss servers 8 -> 16; ost targets 16 -> 32"


def test_show_prints_each_links_transport_and_latency_and_the_metadata_slots(capsys, tmp_path):
    # A user-defined network without ``transport`` is RDMA (lossless): show says so.
    code, out, _ = run(capsys, "show", "crtdc-lfs3", "--set", "client.network=1gbe", "--set", "oss.network=10gbe")
    assert code == 0
    assert "1gbe 0.117 GB/s (tcp, 50 us)" in out and "10gbe 1.17 GB/s (tcp, 20 us)" in out
    assert "1 modifying RPC(s) (max_mod_rpcs_in_flight), 8 other(s)" in out
    profile = tmp_path / "own.toml"
    source = (Path(simfs.__file__).parent / "systems" / "crtdc-lfs3.toml").read_text()
    profile.write_text(
        source.replace('network = "qdr-ib"', 'network = "my-net"', 1)
        + "\n[networks.my-net]\nbandwidth_Bps = 2e9\nlatency_s = 5e-6\n"
    )
    code, out, _ = run(capsys, "show", str(profile))
    assert code == 0 and "my-net 2 GB/s (rdma, 5 us)" in out


def test_show_applies_lctl_and_refuses_experiment_settings(capsys, tmp_path):
    # show took --lctl and experiment keys and dropped them (exit 0, a file never read).
    lctl = tmp_path / "lctl.txt"
    lctl.write_text("osc.lfs3-OST0000-osc.max_rpcs_in_flight=16\n")
    code, out, err = run(capsys, "show", "crtdc-lfs3", "--lctl", str(lctl))
    assert code == 0 and "RPCs: 16 x 1 MiB in flight per OSC" in out
    assert err.strip() == f"simfs: note: from {lctl}: osc.max_rpcs_in_flight=16"
    code, _, err = run(capsys, "show", "crtdc-lfs3", "--lctl", str(tmp_path / "missing.txt"))
    assert code == 2 and err.count("\n") == 1 and "missing.txt" in err
    code, _, err = run(capsys, "show", "crtdc-lfs3", "--set", "nodes=abc")
    assert code == 2 and err.strip() == (
        "simfs: error: show: --set nodes: an experiment setting, which the hardware show prints does not depend on"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # Each was taken as "." (the working directory) or silently ignored.
        (["simulate", "--system", "", "--workload", "dd bs=1M count=1"], "system: an empty name"),
        (
            ["simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=1", "--timeline", ""],
            "--timeline: an empty file name",
        ),
        (["measure", "--dir", "", "--", "dd", "bs=4k", "count=1"], "measure: --dir: an empty path"),
        (
            ["validate", "validation/crtdc-lfs3/lfs3-dd-nodes-write.toml", "--system", "crtdc-lfs3"],
            "validate: --system goes with --live",
        ),
        (
            [
                "validate",
                "validation/crtdc-lfs3/lfs3-dd-nodes-write.toml",
                "--jobs",
                "2",
                "--scheduler",
                "tcp://h:8786",
            ],
            "--jobs: give jobs (local processes) or scheduler (a Dask cluster), not both",
        ),
        (
            ["validate", "--live", "validation/live/runs/disk-direct-np4.json", "--system", "vm-disk", "--jobs", "2"],
            "validate --live: give run records and --system only (no cases, --report, --jobs or --scheduler)",
        ),
    ],
)
def test_empty_and_misplaced_arguments_are_one_line(capsys, monkeypatch, argv, message):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith(f"simfs: error: {message}") and err.count("\n") == 1


def test_an_output_under_a_regular_file_says_so(capsys, tmp_path):
    (tmp_path / "plain").write_text("")
    timeline = tmp_path / "plain" / "t.csv"
    code, _, err = run(
        capsys, "simulate", "--system", "crtdc-lfs3", "--workload", "dd bs=1M count=1", "--timeline", str(timeline)
    )
    assert code == 2 and err == f"simfs: error: --timeline {timeline}: {tmp_path / 'plain'} is not a directory\n"


def test_a_timeline_of_a_run_without_fluid_flows(capsys, tmp_path):
    # The help's own example: mdtest moves nothing as fluid flows, and --timeline was a
    # KeyError traceback (and an empty CSV).  Its directory lock's queue is what it draws.
    png, csv = tmp_path / "t.png", tmp_path / "t.csv"
    mdtest = ["simulate", "--system", "crtdc-lfs3", "--workload", "mdtest -F -C -T -r -n 20", "--nodes", "4"]
    code, _, err = run(capsys, *mdtest, "--timeline", str(png), "--timeline", str(csv))
    assert code == 0 and err.count("timeline written to") == 2
    assert png.stat().st_size > 0
    rows = csv.read_text().splitlines()
    assert rows[0] == "queue,time_s,requests" and all(row.startswith("mds.dir-lock,") for row in rows[1:])
    assert max(int(row.rsplit(",", 1)[1]) for row in rows[1:]) == 4  # the four nodes' creates queue
    # Shared-file writes at request level with nothing queued: said in one line, nothing written.
    ior = ["simulate", "--system", "crtdc-lfs3", "--workload", "ior -w -e -t 47008 -b 47008 -s 5", "--nodes", "2"]
    code, _, err = run(capsys, *ior, "--set", "stripe_count=-1", "--timeline", str(tmp_path / "s.png"))
    assert code == 2 and err.startswith("simfs: error: --timeline: nothing to draw") and err.count("\n") == 1
    assert not (tmp_path / "s.png").exists()


def test_a_number_too_long_for_python_is_one_line(capsys):
    # tomllib's ValueError (past 4,300 digits) was a traceback.
    code, _, err = run(capsys, "show", "crtdc-lfs3", "--set", "oss.count=1" + "0" * 5000)
    assert code == 2 and err == "simfs: error: --set: a value of 5,001 characters, too long for a number\n"


def test_lctl_on_a_system_that_is_not_lustre_says_so(capsys, tmp_path):
    # It said "lustre.max_rpcs_in_flight: unknown field (did you mean osc.max_rpcs_in_flight?)".
    lctl = tmp_path / "lctl.txt"
    lctl.write_text("osc.x-OST0000-osc.max_rpcs_in_flight=16\n")
    code, _, err = run(
        capsys, "simulate", "--system", "crtdc-panfs", "--workload", "dd bs=1M count=1", "--lctl", str(lctl)
    )
    assert (
        code == 2
        and err == f"simfs: error: --lctl {lctl}: crtdc-panfs is a panfs system; --lctl gives Lustre tunables\n"
    )


def test_the_help_lists_every_tool_the_workload_parser_takes():
    from simfs.cli import WORKLOAD_TOOLS
    from simfs.workloads import _PARSERS

    # benchio.x: the binary's name; io500: a sequence of IOR and mdtest jobs the CLI runs.
    assert set(WORKLOAD_TOOLS) == (set(_PARSERS) - {"benchio.x"}) | {"io500"}


def test_a_sweep_fills_the_names_its_workload_gives_in_braces():
    import simfs
    from simfs.errors import SimfsError

    template = "ior -a POSIX -F -t {transfer} -b 64m -w --posix.odirect"
    table = simfs.sweep("crtdc-lfs5", template, {"transfer": ["64k", "4m"], "nodes": [1, 2]})
    assert list(zip(table["transfer"], table["nodes"])) == [("64k", 1), ("64k", 2), ("4m", 1), ("4m", 2)]
    for row in table.itertuples():
        alone = simfs.simulate("crtdc-lfs5", template.format(transfer=row.transfer), nodes=row.nodes)
        assert row.agg_bw_Bps == alone.phases.iloc[0]["agg_bw_Bps"]
    with pytest.raises(SimfsError, match=r"names \{transfer\}: give its values with --vary transfer="):
        simfs.sweep("crtdc-lfs5", template, {"nodes": [1, 2]})
    with pytest.raises(SimfsError, match=r"invalid size '1x'.*\(--vary transfer=1x\)"):
        simfs.sweep("crtdc-lfs5", template, {"transfer": ["64k", "1x"]})
    # A setting named in braces is filled in and still set; values may come from an iterator.
    named = simfs.sweep("crtdc-lfs3", "ior -a POSIX -F -t 1m -b 16m -w -o /scratch/{nodes}/f", {"nodes": iter([1, 4])})
    assert list(named["nodes"]) == [1, 4] and named["agg_bw_Bps"].iloc[1] > 3 * named["agg_bw_Bps"].iloc[0]
    # Without the braces, the name is looked for among settings and profile fields.
    with pytest.raises(
        SimfsError, match=r"transfer: unknown field; a workload option is varied by naming it in braces"
    ):
        simfs.sweep("crtdc-lfs5", "ior -a POSIX -F -t 1m -b 64m -w", {"transfer": ["64k", "1m"]})
    # A bad command line that names nothing in braces is the command line's fault alone.
    with pytest.raises(SimfsError, match=r"unsupported operand 'skip' \(simfs supports: [a-z ]+\)$"):
        simfs.sweep("crtdc-lfs3", "dd bs=1M count=10 skip=3", {"nodes": [1, 2]})


def test_a_sweep_refuses_two_stripe_counts_that_are_one():
    # -1 is every target: on crtdc-lfs3's 16 OSTs the same point as 16, which the table
    # (keyed by the count the run used) would have shown once.
    import simfs
    from simfs.errors import SimfsError

    with pytest.raises(SimfsError, match=r"^sweep: --vary stripe_count: -1 and 16 are both 16 stripes on crtdc-lfs3"):
        simfs.sweep("crtdc-lfs3", "dd bs=1M count=10", {"stripe_count": [16, -1], "nodes": [1, 2]})
    table = simfs.sweep("crtdc-lfs3", "dd bs=1M count=10", {"stripe_count": [4, -1]})
    assert sorted(set(table["stripe_count"])) == [4, 16]


def test_sweep_measured_compares_in_the_tables_units_and_notes_after_the_table(capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    case = "validation/crtdc-lfs3/lfs3-dd-threads-read.toml"  # 1.7 GB/s at ppn=4, curve ppn=1-12
    argv = ["sweep", "--system", "crtdc-lfs3-fitted", "--workload", "dd bs=1024000 count=50000"]
    argv += ["--vary", "ppn=2,4", "--nodes", "1", "--set", "stripe_count=4", "--units", "MiB"]
    argv += ["--measured", case, "--no-progress"]
    # Standard error into the same stream, to see what comes before what.
    with contextlib.redirect_stderr(sys.stdout):
        code = main(argv)
    printed = capsys.readouterr().out
    assert code == 0
    table = printed.index("read agg MiB/s")
    measured = printed.index("measured 1621.25 MiB/s at ppn=4: predicted ")  # 1.7e9 / 2**20
    note = printed.index(f"note: {case}: its curve is ppn=1,2,3,4,5,6,7,8,9,10,11,12, the sweep's ppn=2,4")
    assert table < measured < note
