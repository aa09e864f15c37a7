"""``simfs validate --live`` predicts a testbed run with the costs fitted on the CPU it
was recorded on (``[[host.other_cpu]]``: ``[host]``'s and the metadata rates), and says
so; ``simfs show`` lists them."""

import json
import re
import shutil
import tomllib
import warnings
from pathlib import Path

import pytest

from simfs.errors import ProfileError
from simfs.filesystems import GlusterFsSystem, MooseFsSystem, system_from_profile
from simfs.systems.other_cpu import host_costs_for
from simfs.systems.profile import Profile, load_profile
from simfs.validate.live import LiveMismatchWarning, compare_live

ROOT = Path(__file__).resolve().parents[2]
XEON = "Intel(R) Xeon(R) Processor"
# Eight GlusterFS clients on a 6+2 volume, recorded on the Xeon: CPU-bound, so the
# machine's costs set the prediction (validation/README.md, "The testbed on the Intel Xeon").
XEON_RUN = ROOT / "validation" / "testbed" / "xeon" / "runs" / "gluster-d6p2-clients" / "c8.json"
XEON_CASE = ROOT / "validation" / "testbed" / "xeon" / "xeon-glusterfs-d6p2-clients-write.toml"


def live(runs, system="testbed-glusterfs"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LiveMismatchWarning)
        table = compare_live(runs, system)
    notes = [str(w.message) for w in caught if w.category is LiveMismatchWarning]
    return table.set_index("phase"), notes


def test_a_xeon_run_is_predicted_with_the_xeon_costs(tmp_path):
    table, notes = live([XEON_RUN])
    assert table.attrs["cpu_costs_of"] == XEON
    # The same prediction as a profile whose [host] holds the Xeon case's settings and
    # whose [dht] holds the Xeon's metadata rates (the entry's [host.other_cpu.dht]).
    settings = tomllib.loads(XEON_CASE.read_text())["case"]["settings"]
    profile = load_profile("testbed-glusterfs")
    (entry,) = profile.data["host"]["other_cpu"]
    text = profile.text[: profile.text.index("[[host.other_cpu]]")]
    replaced = {key.rsplit(".", 1)[1]: value for key, value in settings.items() if key.startswith("host.")}
    for field, value in {**replaced, **entry["dht"]}.items():
        text, count = re.subn(rf"^{field} = .*$", f"{field} = {json.dumps(value)}", text, flags=re.MULTILINE)
        assert count == 1, field
    path = tmp_path / "xeon-host.toml"
    path.write_text(text)
    by_case, _ = live([XEON_RUN], str(path))
    assert by_case.attrs["cpu_costs_of"] == XEON
    assert table.loc["write", "predicted"] == pytest.approx(by_case.loc["write", "predicted"], rel=1e-12)
    # Not the EPYC's: with them the write at 8 clients is 8% slower (validation/README.md).
    assert table.loc["write", "predicted"] > 1.05 * _epyc_prediction(XEON_RUN, tmp_path)
    # No "another CPU" warning for the costs; one line says what stays the EPYC's.
    assert not any("machine.cpu_model" in note for note in notes)
    assert any("host.other_cpu" in note and "AMD EPYC" in note for note in notes)


def test_a_run_on_a_cpu_the_profile_does_not_list_keeps_the_profile_costs_and_is_warned(tmp_path):
    record = json.loads(XEON_RUN.read_text())
    record["machine"]["cpu_model"] = "Some Other CPU"
    run = tmp_path / "c8.json"
    run.write_text(json.dumps(record))
    table, notes = live([run])
    assert table.attrs["cpu_costs_of"] == "AMD EPYC"
    assert table.loc["write", "predicted"] == pytest.approx(_epyc_prediction(XEON_RUN, tmp_path), rel=1e-12)
    assert any("Some Other CPU (machine.cpu_model)" in note for note in notes)


def test_runs_on_two_cpus_keep_the_profile_costs(tmp_path):
    epyc = ROOT / "validation" / "testbed" / "runs" / "servers-s8" / "c4.json"
    copy = tmp_path / "xeon.json"
    shutil.copy(ROOT / "validation" / "testbed" / "xeon" / "runs" / "clients-s4" / "c4.json", copy)
    table, notes = live([epyc, copy], "testbed-moosefs")
    assert table.attrs["cpu_costs_of"] == "AMD EPYC"
    assert any(f"{XEON} (machine.cpu_model)" in note for note in notes)


def test_runs_whose_cpu_is_unknown_keep_the_profile_costs(tmp_path):
    # A record without its machine section (or with a cpu_model that is not a name) beside
    # a Xeon record: the set's CPU is not known, so the Xeon's costs are not assumed.
    record = json.loads(XEON_RUN.read_text())
    del record["machine"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(record))
    table, _ = live([bare, XEON_RUN])
    assert table.attrs["cpu_costs_of"] == "AMD EPYC"
    record = json.loads(XEON_RUN.read_text())
    record["machine"]["cpu_model"] = ["not", "a", "name"]
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(record))
    table, _ = live([odd])
    assert table.attrs["cpu_costs_of"] == "AMD EPYC"
    # A folder of records has no one machine: the profile's costs.
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(XEON_RUN, folder / "c8.json")
    table, _ = live([folder])
    assert table.attrs["cpu_costs_of"] == "AMD EPYC"


def test_the_note_names_the_entry_and_the_fields_it_replaced():
    _, notes = live([ROOT / "validation" / "testbed" / "xeon" / "runs" / "clients-s4" / "c4.json"], "testbed-moosefs")
    (note,) = [note for note in notes if "host.other_cpu" in note]
    assert (
        "host.other_cpu[0] ([host] write_cpu_s_per_byte, copy_cpu_s_per_byte, read_cpu_s_per_byte; [master] "
        "request_parallelism, create_per_s, close_per_s, stat_per_s, open_per_s, remove_per_s; [moosefs] "
        "metadata_latency_s); the rest of the profile's CPU-bound rates were measured on AMD EPYC" in note
    )


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ('other_cpu = "Intel"', r"host\.other_cpu: expected an array of tables"),
        ("other_cpu = [1]", r"host\.other_cpu\[0\]: expected a table"),
        ("[[host.other_cpu]]\nread_cpu_s_per_byte = 1e-8", r"host\.other_cpu\[0\]\.cpu_model: expected the CPU's name"),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\n[[host.other_cpu]]\ncpu_model = "B"\nread_cpu_s_per_bite = 1e-8',
            r"host\.other_cpu\[1\]\.read_cpu_s_per_bite: not a \[host\] field \(expected one of: cores, "
            r"write_cpu_s_per_byte, copy_cpu_s_per_byte, read_cpu_s_per_byte, busy_cpu_growth; or a table of: "
            r"master, moosefs\)",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\nmaster = 1',
            r"host\.other_cpu\[0\]\.master: expected a table \(\[host\.other_cpu\.master\]\) of \[master\] rates",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\n[host.other_cpu.master]\ncreates_per_s = 1.0',
            r"host\.other_cpu\[0\]\.master\.creates_per_s: not a \[master\] rate another CPU's entry may set "
            r"\(expected one of: request_parallelism, create_per_s, ",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\n[host.other_cpu.moosefs]\nmetadata_latency_s = -1.0',
            r"host\.other_cpu\[0\]\.moosefs\.metadata_latency_s: expected >= 0, got -1\.0",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\nread_cpu_s_per_byte = "x"',
            r"host\.other_cpu\[0\]\.read_cpu_s_per_byte: expected a number, got 'x'",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\ncores = 1.5',
            r"host\.other_cpu\[0\]\.cores: expected an integer, got 1\.5",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\nread_cpu_s_per_byte = -1e-8',
            r"host\.other_cpu\[0\]\.read_cpu_s_per_byte: expected >= 0, got -1e-08",
        ),
        (
            '[[host.other_cpu]]\ncpu_model = "A"\n[[host.other_cpu]]\ncpu_model = "A"',
            r"host\.other_cpu\[1\]\.cpu_model: 'A' is listed already, in host\.other_cpu\[0\]",
        ),
    ],
)
def test_bad_other_cpu_entries_are_named_when_the_profile_is_built(entries, message):
    text = load_profile("testbed-moosefs").text
    head = text[: text.index("[[host.other_cpu]]")]
    if not entries.startswith("[["):
        head = head.replace("[host]\n", f"[host]\n{entries}\n", 1)
        entries = ""
    profile = Profile.from_text(head + entries + "\n", "bad.toml")
    with pytest.raises(ProfileError, match="^bad.toml: " + message):
        system_from_profile(profile)


def test_the_chosen_costs_say_where_they_came_from():
    profile = load_profile("testbed-moosefs")
    chosen = host_costs_for(profile, XEON, MooseFsSystem.OTHER_CPU_FIELDS)
    assert chosen.number == 0 and chosen.profile.origin.endswith("testbed-moosefs.toml (host.other_cpu[0])")
    assert chosen.fields[:3] == ("write_cpu_s_per_byte", "copy_cpu_s_per_byte", "read_cpu_s_per_byte")
    assert chosen.fields[3:] == (
        *(f"master.{field}" for field in ("request_parallelism", "create_per_s", "close_per_s", "stat_per_s")),
        "master.open_per_s",
        "master.remove_per_s",
        "moosefs.metadata_latency_s",
    )
    # Every table the entry names is in place in the chosen profile.
    entry = profile.data["host"]["other_cpu"][0]
    assert chosen.profile.data["master"]["create_per_s"] == entry["master"]["create_per_s"] == 5689.0
    assert chosen.profile.data["moosefs"]["metadata_latency_s"] == entry["moosefs"]["metadata_latency_s"]
    assert chosen.profile.data["master"]["directory_lock"] == profile.data["master"]["directory_lock"]
    assert chosen.profile.data["host"]["recorded"]["cpu_model"] == XEON
    assert "other_cpu" not in chosen.profile.data["host"]
    assert host_costs_for(profile, "Some Other CPU", MooseFsSystem.OTHER_CPU_FIELDS) is None
    # A profile whose [host] is the Xeon's already (as the Xeon cases' settings make it)
    # keeps it, and its entry for the Xeon is no error.
    xeon = profile.with_overrides({"host.recorded.cpu_model": XEON})
    assert system_from_profile(xeon).shared_host is not None
    assert host_costs_for(xeon, XEON, MooseFsSystem.OTHER_CPU_FIELDS) is None


def _epyc_prediction(run: Path, folder: Path) -> float:
    """The write predicted for ``run`` as if it had been recorded on the EPYC."""
    record = json.loads(run.read_text())
    record["machine"]["cpu_model"] = "AMD EPYC"
    path = folder / "as-epyc.json"
    path.write_text(json.dumps(record))
    table, notes = live([path])
    assert table.attrs["cpu_costs_of"] == "AMD EPYC" and not notes
    return table.loc["write", "predicted"]


def test_show_lists_the_costs_of_every_other_cpu(capsys):
    from simfs.cli import main

    assert main(["show", "testbed-moosefs"]) == 0
    text = capsys.readouterr().out
    head, _, listed = text.partition("  the CPU-bound rates above were measured on AMD EPYC;")
    assert "  master: create 9253.8/s" in head
    assert listed.splitlines()[0] == (
        " runs recorded on another listed CPU are predicted (validate --live) with its entry's values in place of these:"
    )
    # What the Xeon's entry makes of the master and the shared host, as its own profile would.
    chosen = system_from_profile(
        host_costs_for(load_profile("testbed-moosefs"), XEON, MooseFsSystem.OTHER_CPU_FIELDS)[0]
    )
    assert listed.splitlines()[1:] == [
        f"  on {XEON} (host.other_cpu[0]):",
        *(f"  {line}" for line in chosen.cpu_bound_lines()),
    ]
    assert "create 5689/s" in listed and "17.9 ns written" in listed
    # A profile that lists no other CPU shows none.
    assert main(["show", "crtdc-lfs5"]) == 0
    assert "measured on" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("create_per_s = 5689.0", "create_per_s = 0.0", r"master\.create_per_s: expected a positive number, got 0\.0"),
        (
            "request_parallelism = 1.0 ",
            "request_parallelism = 5.0 ",
            r"master\.request_parallelism: expected between 1 and cores \(2\), got 5\.0",
        ),
    ],
)
def test_an_entry_value_the_model_refuses_is_named_when_the_profile_is_built(old, new, message):
    # Checked by building the profile the entry makes, whichever CPU is at hand.
    text = load_profile("testbed-moosefs").text
    assert text.count(old) == 1
    profile = Profile.from_text(text.replace(old, new), "bad.toml")
    with pytest.raises(ProfileError, match=r"^bad\.toml \(host\.other_cpu\[0\]\): " + message):
        system_from_profile(profile)


def test_show_lists_another_cpu_on_the_volume_set_on_the_command_line(capsys):
    from simfs.cli import main

    shape = ["--set", "brick.count=6", "--set", "glusterfs.disperse_data=4", "--set", "glusterfs.redundancy=2"]
    assert main(["show", "testbed-glusterfs", *shape]) == 0
    head, _, listed = capsys.readouterr().out.partition("  the CPU-bound rates above were measured on AMD EPYC;")
    # Both the profile's metadata line and the Xeon's are the 4+2 volume's (scaled from 2+1).
    assert "(CPU per request 1.95 x the 3-brick volume's it was measured on)" in head
    assert "(CPU per request 1.96 x the 3-brick volume's it was measured on)" in listed
    xeon = host_costs_for(load_profile("testbed-glusterfs"), XEON, GlusterFsSystem.OTHER_CPU_FIELDS).profile
    four_two = system_from_profile(
        xeon.with_overrides({"brick.count": 6, "glusterfs.disperse_data": 4, "glusterfs.redundancy": 2})
    )
    assert listed.splitlines()[2:] == [f"  {line}" for line in four_two.cpu_bound_lines()]
    assert "46.3 ns written" in listed  # the Xeon's 4+2 byte (calibration/testbed/xeon/README.md)
