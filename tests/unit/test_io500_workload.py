"""The IO500 as a workload: config.ini to the harness's runs, the steady-state sample of
time-bounded phases, the phase sequence and its scores."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

import simfs
from simfs.api import load_system
from simfs.cli import main
from simfs.errors import WorkloadError
from simfs.experiment import Experiment
from simfs.io500 import _scores, simulate_io500
from simfs.workloads import parse_workload, steady_state
from simfs.workloads.io500 import STANDARD_PHASES, parse_io500_config, read_io500_config
from simfs.workloads.io500 import parse_io500_script as parse_io500_script_text

LEM = Path(__file__).parents[1] / "data" / "workloads" / "io500-lem"


def _exe_lines(result_txt: Path) -> dict[str, str]:
    """The ``exe`` command line of each phase of a C-harness result.txt, launcher dropped."""
    commands, section = {}, ""
    for line in result_txt.read_text().splitlines():
        header = re.match(r"^\[(.+)\]\s*$", line)
        if header:
            section = header[1]
        elif line.startswith("exe") and section:
            words = line.split("=", 1)[1].split()
            tool = words[0].rsplit("/", 1)[-1]
            commands[section] = " ".join([tool, *words[1:]])
    return commands


def test_config_gives_the_runs_the_harness_recorded():
    plan = read_io500_config(LEM / "config.ini")
    recorded = _exe_lines(LEM / "result.txt")
    assert [p.name for p in plan.phases] == [name for name, _ in STANDARD_PHASES if name != "find"]
    for phase in plan.phases:
        ours, theirs = parse_workload(phase.command), parse_workload(recorded[phase.name])
        assert ours.phases == theirs.phases, phase.name
        assert ours.intra_phase_barriers == theirs.intra_phase_barriers
    assert plan.stonewall_s == 300
    assert any(line.startswith("find:") for line in plan.skipped)


def test_empty_keys_take_the_harness_defaults():
    plan = parse_io500_config("[global]\ndatadir = /x\n[ior-easy]\nblockSize =\n[debug]\n")
    commands = {p.name: p.command for p in plan.phases}
    assert "-t 2m -b 9920000m -F -w -D 300" in commands["ior-easy-write"]
    assert "-s 10000000" in commands["ior-hard-write"]
    assert commands["mdtest-easy-write"].startswith("mdtest -n 1000000 -u -L -F")
    assert "-w 3901 -e 3901" in commands["mdtest-hard-write"]
    hard = parse_workload(commands["ior-hard-write"]).phases[0]
    assert hard.shared_file and hard.transfer_size_bytes == 47008 and hard.stonewall_s == 300
    read = parse_workload(commands["ior-hard-read"]).phases[0]
    assert read.op == "read" and read.stonewall_bound and not read.stonewall_s


def test_run_false_leaves_a_phase_out_and_says_so():
    plan = parse_io500_config("[global]\n[mdtest-hard]\nrun = FALSE\n[ior-easy-read]\nrun = FALSE\n")
    names = [p.name for p in plan.phases]
    assert "ior-easy-read" not in names and not any(n.startswith("mdtest-hard") for n in names)
    assert any(line.startswith("ior-easy-read: run = FALSE") for line in plan.skipped)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[global]\n[mdtest-hard]\nfiles-per-dir = many\n", r"files-per-dir = many: expected a whole number"),
        ("[global]\napi = S3\n", r"\[ior-easy\] API S3: simfs models POSIX and MPIIO"),
        ("[global]\n[debug]\nstonewall-time = 0\n", r"stonewall-time = 0: expected a whole number"),
        ("[global]\n[ior-easy]\nfilePerProc = maybe\n", r"filePerProc = MAYBE: expected TRUE or FALSE"),
        ("just text\n", r"not an IO500 config.ini"),
        ("[other]\nx = 1\n", r"no \[global\]"),
    ],
)
def test_bad_configs_are_refused_in_one_line(text, message):
    with pytest.raises(WorkloadError, match=message) as caught:
        parse_io500_config(text, "cfg.ini")
    assert "\n" not in str(caught.value) and "cfg.ini" in str(caught.value)


def test_io500_is_not_one_command():
    with pytest.raises(WorkloadError, match="sequence of IOR and mdtest jobs"):
        parse_workload("io500 config.ini")


def test_sample_cuts_only_time_bounded_request_level_parts():
    spec = parse_workload("mdtest -n 100000 -u -F -C -W 300 -x sw")
    sampled, notes = steady_state.steady_state_sample(spec, 2000, request_level_writes=True)
    assert sampled.phases[0].items_per_rank == steady_state.MIN_ITEMS_PER_RANK
    assert notes and f"{steady_state.MIN_ITEMS_PER_RANK} of 100,000 items per rank" in notes[0]
    untimed = parse_workload("mdtest -n 100000 -u -F -C")
    assert steady_state.steady_state_sample(untimed, 2000, request_level_writes=True) == (untimed, ())
    hard = parse_workload("ior -t 47008 -b 47008 -s 50000 -w -D 300 -O stoneWallingWearOut=1")
    cut, notes = steady_state.steady_state_sample(hard, 100, request_level_writes=True)
    assert cut.phases[0].segment_count == steady_state.SAMPLE_WRITES // 100
    assert cut.phases[0].block_size_bytes == 47008
    # A fluid write costs the same at any size: not cut.
    assert steady_state.steady_state_sample(hard, 100, request_level_writes=False) == (hard, ())
    # Without wear-out, what -D measures depends on the phase's length: not cut either.
    no_wear_out = parse_workload("ior -t 47008 -b 47008 -s 50000 -w -D 300")
    assert steady_state.steady_state_sample(no_wear_out, 100, request_level_writes=True) == (no_wear_out, ())


def test_a_sampled_stonewalled_create_keeps_the_whole_phases_rate(monkeypatch):
    """The sample's rate against the whole phase's (both simulated here)."""
    command = "mdtest -n 2000 -u -F -C -W 300"
    whole = simfs.simulate("crtdc-lfs3", command, nodes=2, ppn=4).phases["ops_per_s"].iloc[0]
    monkeypatch.setattr(steady_state, "SAMPLE_ITEMS", 800)  # 100 of 2,000 items a rank
    result = simfs.simulate("crtdc-lfs3", command, nodes=2, ppn=4)
    assert result.phases["ops"].iloc[0] == 8 * 100
    assert result.notes and "100 of 2,000" in result.notes[0]
    assert result.phases["ops_per_s"].iloc[0] == pytest.approx(whole, rel=0.03)


def test_scores_are_the_harness_geometric_means():
    frame = pd.DataFrame(
        {"value": [4.0, 1.0, 9.0, 16.0, 2.0, 8.0], "unit": ["GiB/s"] * 4 + ["kIOPS"] * 2},
    )
    scores = _scores(frame)
    assert scores["bandwidth"] == pytest.approx((4 * 1 * 9 * 16) ** 0.25)
    assert scores["iops"] == pytest.approx(4.0)
    assert scores["total"] == pytest.approx(math.sqrt(scores["bandwidth"] * 4.0))


def test_a_small_io500_runs_in_the_harness_order_and_reads_what_was_written():
    plan = parse_io500_config(
        "[global]\n[debug]\nstonewall-time = 2\n[ior-easy]\ntransferSize = 1m\nblockSize = 100000m\n"
        "[ior-hard]\nsegmentCount = 400\n[mdtest-easy]\nn = 300\n[mdtest-hard]\nn = 300\n"
    )
    experiment = Experiment(nodes=2, ppn=2)
    result = simulate_io500(load_system("crtdc-lfs3"), plan, experiment)
    frame = result.phases.set_index("phase")
    assert list(frame.index) == [p.name for p in plan.phases]
    assert (frame["value"] > 0).all()
    assert set(frame["unit"]) == {"GiB/s", "kIOPS"}
    # The easy write stops at its 2 s stonewall; the read reads what it wrote, no more.
    assert frame.loc["ior-easy-write", "time_s"] == pytest.approx(2.0, abs=0.2)
    written = frame.loc["ior-easy-write", "rate"] * frame.loc["ior-easy-write", "time_s"]
    read = frame.loc["ior-easy-read", "rate"] * frame.loc["ior-easy-read", "time_s"]
    assert read <= written * 1.001
    assert read >= written * 0.9
    assert all(math.isfinite(value) and value > 0 for value in result.scores.values())
    assert any("find is not simulated" in note for note in result.notes)


def test_cli_prints_phases_scores_and_notes(tmp_path, capsys):
    config = tmp_path / "config.ini"
    config.write_text(
        "[global]\n[debug]\nstonewall-time = 1\n[ior-easy]\nblockSize = 64m\n[ior-hard]\nsegmentCount = 40\n"
        "[mdtest-easy]\nn = 50\n[mdtest-hard]\nn = 50\n"
    )
    argv = ["simulate", "--system", "crtdc-lfs3", "--workload", f"io500 {config}", "--nodes", "2", "--ppn", "2"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^\[SCORE \] Bandwidth [\d.]+ GiB/s : IOPS [\d.]+ kiops : TOTAL [\d.]+", out, re.M)
    assert "mdtest-hard-delete" in out and "note: find: not simulated" in err
    bad = tmp_path / "bad.ini"
    bad.write_text("[global]\napi = HDF5\n")
    assert main(["simulate", "--system", "crtdc-lfs3", "--workload", f"io500 {bad}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "API HDF5" in err


def test_a_results_folder_says_why_its_config_and_stonewall_files_are_not_read(tmp_path):
    from simfs.ingest import read_measurements
    from simfs.ingest.common import SkippedFileWarning

    (tmp_path / "config.ini").write_text((LEM / "config.ini").read_text())
    (tmp_path / "result.txt").write_text((LEM / "result.txt").read_text())
    (tmp_path / "mdtest-hard.stonewall").write_text("5995")
    with pytest.warns(SkippedFileWarning) as caught:
        frame = read_measurements(tmp_path)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "config.ini: an IO500 configuration, not results" in messages[0]
    assert "mdtest-hard.stonewall: a number alone: an IO500 stonewall count file" in messages[1]
    assert (frame["tool"] == "io500").all() and len(frame) > 10


BASH = Path(__file__).parents[1] / "data" / "workloads" / "io500-bash"


def test_the_bash_harness_script_gives_the_runs_it_logged():
    from simfs.ingest.io500 import _command

    plan = read_io500_config(BASH / "io500.sh")
    log = (BASH / "io-500-summary.2018.11.09-03.12.50.txt").read_text()
    logged = [_command(line[7:]) for line in log.splitlines() if line.startswith("[Exec] ")]
    logged = [command for command in logged if command.split()[0] in ("ior", "mdtest")]
    assert [p.name for p in plan.phases] == [name for name, _ in STANDARD_PHASES if name != "find"]
    assert len(logged) == len(plan.phases)
    for phase, command in zip(plan.phases, logged):
        assert parse_workload(phase.command).phases == parse_workload(command).phases, phase.name


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ('io500_ini="$1"\nio500_mpirun="mpiexec"\n', r"runs the harness on an ini file \(io500_ini\)"),
        ('io500_ior_easy_params="$(cat x)"\n', r"io500_ior_easy_params is computed by the script \(computed on line 2\)"),
        ('io500_ior_easy_params="-t 1m -b 1g -F"\n', r"no io500_mdtest_easy_params= setting"),
    ],
)  # fmt: skip
def test_scripts_whose_settings_cannot_be_known_are_refused(tmp_path, script, message):
    path = tmp_path / "io500.sh"
    path.write_text("#!/bin/bash\n" + script)
    with pytest.raises(WorkloadError, match=message):
        read_io500_config(path)


def test_script_settings_are_expanded_as_bash_would_when_the_harness_runs():
    plan = parse_io500_script_text(
        'io500_stonewall_timer=30\nfunction setup {\n  io500_ior_easy_params="-t 2048k"\n  io500_ior_easy_size=$size\n}\n'
        'size=5000\nio500_mdtest_easy_params="-u -L"\nio500_mdtest_easy_files_per_proc=${files}\nfiles=2000\n'
        "io500_ior_hard_writes_per_proc=100\nio500_mdtest_hard_files_per_proc=300\nio500_run_md_hard_read=False\n"
    )
    commands = {p.name: p.command for p in plan.phases}
    assert "-t 2048k -b 5000m -F" in commands["ior-easy-write"] and "-D 30" in commands["ior-easy-write"]
    assert "-n 2000 -u -L" in commands["mdtest-easy-write"]
    assert "mdtest-hard-read" not in commands and plan.stonewall_s == 30


@pytest.mark.parametrize("name", ["generic-lustre", "generic-gpfs"])
def test_the_generic_profiles_of_the_io500_study_load_and_declare_what_the_study_fits(name):
    from simfs.systems.profile import load_profile

    path = Path(__file__).parents[2] / "calibration" / "io500" / f"{name}.toml"
    system = load_system(path)
    assert system.client_count >= 10000
    free = set(load_profile(path).table("calibration.free"))
    study = {"generic-lustre": "mds", "generic-gpfs": "metadata"}[name]
    assert {f"{study}.create_per_s", f"{study}.stat_per_s", f"{study}.remove_per_s"} <= free


def test_a_config_path_with_spaces_needs_no_quotes(tmp_path, capsys):
    folder = tmp_path / "Lem" / "Lustre 2024"
    folder.mkdir(parents=True)
    config = folder / "config.ini"
    config.write_text(
        "[global]\n[debug]\nstonewall-time = 1\n[ior-easy]\nblockSize = 64m\n[ior-hard]\nsegmentCount = 40\n"
        "[mdtest-easy]\nn = 40\n[mdtest-hard]\nn = 40\n"
    )
    argv = ["simulate", "--system", "crtdc-lfs3", "--workload", f"io500 {config}", "--format", "csv"]
    assert main(argv) == 0
    assert "ior-hard-read" in capsys.readouterr().out


def test_the_isc20_posix_odirect_key_adds_o_direct():
    plan = parse_io500_config(
        "[global]\napi = POSIX\n[ior-easy]\nposix.odirect = TRUE\n[ior-hard]\nposix.odirect = FALSE\n"
    )
    commands = {p.name: p.command for p in plan.phases}
    assert commands["ior-easy-write"].endswith("-a POSIX --posix.odirect")
    assert parse_workload(commands["ior-easy-read"]).phases[0].direct
    assert not parse_workload(commands["ior-hard-write"]).phases[0].direct


def test_without_a_stonewall_later_phases_do_what_their_command_says():
    """io500_stonewall_timer=0: no deadline, so a read reads the whole block written."""
    plan = parse_io500_script_text(
        'io500_stonewall_timer=0\nio500_ior_easy_params="-t 1m -b 16m -F"\nio500_mdtest_easy_params="-u -L"\n'
        "io500_mdtest_easy_files_per_proc=40\nio500_ior_hard_writes_per_proc=20\nio500_mdtest_hard_files_per_proc=40\n"
    )
    result = simulate_io500(load_system("crtdc-lfs3"), plan, Experiment(nodes=2, ppn=2))
    frame = result.phases.set_index("phase")
    moved = frame["rate"] * frame["time_s"]
    assert moved["ior-easy-read"] == pytest.approx(4 * 16 * 2**20, rel=1e-9)
    assert moved["mdtest-easy-stat"] == pytest.approx(4 * 40, rel=1e-9)


def test_the_harness_ini_reader_ends_values_at_a_comment_and_wraps_segment_count():
    # EPCC's 2020 config.ini has "segmentCount = 50000 # must set value manual", and its
    # result.txt records -s 50000; IBM's 2023 one has 100000000000, run as -s 1215752192.
    plan = parse_io500_config(
        "[global]\n[ior-hard]\nsegmentCount = 50000 # must set value manual\n"
        "[mdtest-hard]\nn = 80000 # comment\nfiles-per-dir = 1000\n"
    )
    commands = {p.name: p.command for p in plan.phases}
    assert "-s 50000 -w" in commands["ior-hard-write"] and "#" not in commands["ior-hard-write"]
    hard = parse_workload(commands["mdtest-hard-write"]).phases[0]
    assert hard.items_per_rank == 80000 and hard.directory_tree.items_per_directory == 1000
    assert hard.directory_tree.loops == 80
    wrapped = parse_io500_config("[global]\n[ior-hard]\nsegmentCount = 100000000000\n")
    assert "-s 1215752192 " in next(p.command for p in wrapped.phases if p.name == "ior-hard-write")
    assert any("32-bit int, 1215752192" in line for line in wrapped.skipped)


def test_another_file_systems_client_is_simulated_as_posix_and_said_once():
    plan = parse_io500_config(
        "[global]\napi = DFS --dfs.pool=tank --dfs.cont=c1\n[debug]\nstonewall-time = 1\n[ior-easy]\n"
        "transferSize = 1m\nblockSize = 100000m\n[ior-hard]\nsegmentCount = 40\n[mdtest-easy]\nn = 40\n"
        "[mdtest-hard]\nn = 40\n"
    )
    result = simulate_io500(load_system("crtdc-lfs3"), plan, Experiment(nodes=1, ppn=2))
    dfs = [note for note in result.notes if "-a DFS" in note or "--dfs." in note]
    # One line per tool and kind, not one per phase.
    assert len(dfs) == len(set(dfs)) == 4
    assert any(note.startswith("ior -a DFS: the DFS interface is not modelled") for note in dfs)


def test_the_layouts_the_submission_script_sets_reach_their_phases(tmp_path, capsys):
    # A C-harness run: config.ini, and beside it the io500.sh that prepared the directories
    # (its lines as CMKL Apex, submission 587, and Erlangen Helma, 736, wrote them).
    config = tmp_path / "config.ini"
    config.write_text(
        "[global]\n[debug]\nstonewall-time = 1\n[ior-easy]\nblockSize = 64m\n[ior-hard]\nsegmentCount = 40\n"
        "[mdtest-easy]\nn = 50\n[mdtest-hard]\nn = 50\n"
    )
    (tmp_path / "io500.sh").write_text(
        "  lfs setstripe -c 1 $workdir\n  lfs setstripe -C $((osts * 4)) -S 16M $workdir/ior-hard\n"
        "  lfs setstripe -E 1M -L mdt $workdir/mdtest-hard || true #DoM?\n"
    )
    plan = read_io500_config(config)
    assert plan.layout_source == str(tmp_path / "io500.sh")
    assert plan.layout_of("ior-hard-read").command == "lfs setstripe -C $((osts * 4)) -S 16M $workdir/ior-hard"
    assert plan.layout_of("ior-easy-write").command == "lfs setstripe -c 1 $workdir"
    lfs3 = load_system("crtdc-lfs3")  # 16 OSTs
    result = simulate_io500(lfs3, plan, Experiment(nodes=2, ppn=2))
    assert (
        f"ior-hard: laid out as {tmp_path / 'io500.sh'} sets it (lfs setstripe -C $((osts * 4)) -S 16M "
        "$workdir/ior-hard): overstripe_count=64, stripe_size=16777216" in result.notes
    )
    assert any(n.startswith("mdtest-hard: ") and "data on the MDT (DoM) is not modelled" in n for n in result.notes)
    # The ior-hard phases ran on that layout: the same as asking for it by hand.
    by_hand = simulate_io500(
        lfs3,
        parse_io500_config(config.read_text()),
        Experiment(nodes=2, ppn=2, overstripe_count=64, stripe_size=16 << 20),
    )
    frame, hand = result.phases.set_index("phase"), by_hand.phases.set_index("phase")
    for phase in ("ior-hard-write", "ior-hard-read"):
        assert frame.loc[phase, "rate"] == hand.loc[phase, "rate"]
    # A user's own stripe setting wins, and the note says so.
    own = simulate_io500(lfs3, plan, Experiment(nodes=2, ppn=2, stripe_count=4))
    assert any(n.startswith("ior-hard: stripe_count as set, not as") for n in own.notes)
    # lfs setstripe is Lustre's: a PanFS model says it does not use them.
    panfs = simulate_io500(load_system("crtdc-panfs"), plan, Experiment(nodes=2, ppn=2))
    assert any("are Lustre's: not used on panfs" in n for n in panfs.notes)


def test_the_bash_harness_script_carries_its_own_layouts():
    text = (BASH / "io500.sh").read_text()
    assert parse_io500_script_text(text).layouts == {}  # its only mention is in a comment
    # The harness's setup_directories, as the 2018-2019 submissions filled it in.
    text += "\nfunction setup_directories {\n  lfs setstripe -c -1 $io500_workdir/ior_hard\n}\n"
    plan = parse_io500_script_text(text, "io500.sh")
    assert plan.layout_source == "io500.sh"
    assert plan.layout_of("ior-hard-write").settings(16) == ({"stripe_count": -1}, [])
    assert plan.layout_of("ior-easy-write") is None


def test_a_config_ini_takes_its_layouts_from_a_script_named_as_the_site_likes(tmp_path):
    # SoftBank CHIE-3 (submission 717) prepares its directories in io500.10node.sh.
    config = tmp_path / "config.ini"
    config.write_text("[global]\n[ior-hard]\nsegmentCount = 40\n")
    (tmp_path / "io500.10node.sh").write_text("  lfs setstripe -C 40 $workdir/ior-hard\n")
    plan = read_io500_config(config)
    assert plan.layout_source == str(tmp_path / "io500.10node.sh")
    assert plan.layout_of("ior-hard-write").command == "lfs setstripe -C 40 $workdir/ior-hard"
    assert plan.layout_of("ior-easy-write") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[global]\n[ior-easy]\ntransferSize = 0\n",
            r"cfg\.ini: ior-easy-write \(from \[ior-easy\]\): ior: -t 0: expected",
        ),
        ("[global]\n[mdtest-easy]\nn = 0\n", r"cfg\.ini: mdtest-easy-write \(from \[mdtest-easy\]\): mdtest"),
    ],
)
def test_a_value_the_made_command_refuses_names_the_config_and_its_section(tmp_path, capsys, text, message):
    # It named only the option of a command line the user never wrote ("ior: -t 0").
    from simfs.cli import main

    config = tmp_path / "cfg.ini"
    config.write_text(text)
    assert main(["simulate", "--system", "crtdc-lfs3", "--workload", f"io500 {config}", "--nodes", "1"]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and err.count("\n") == 1


def test_a_script_setting_the_made_command_refuses_names_the_script(tmp_path, capsys):
    # An io500.sh has no sections: the command came from its io500_* settings.
    from simfs.cli import main

    script = (BASH / "io500.sh").read_text()
    assert 'io500_ior_easy_params="-t 16384k' in script
    bad = tmp_path / "io500.sh"
    bad.write_text(script.replace('io500_ior_easy_params="-t 16384k', 'io500_ior_easy_params="-t 0'))
    assert main(["simulate", "--system", "crtdc-lfs3", "--workload", f"io500 {bad}", "--nodes", "1"]) == 2
    err = capsys.readouterr().err
    assert f"io500: {bad}: ior-easy-write (from its io500_* settings): ior: -t 0: expected" in err
    assert err.count("\n") == 1
