"""Lustre's own tunable names as profile fields, the nearest field named for a typo, and
the table units IOR and the IO500 print."""

from pathlib import Path

import pytest

import simfs
from simfs.errors import ProfileError
from simfs.report.tables import wide_table
from simfs.systems.lustre_tunables import TUNABLES, from_lctl
from simfs.systems.profile import Profile, load_profile

LFS5 = load_profile("crtdc-lfs5")


@pytest.mark.parametrize(
    ("tunable", "value", "field", "expected"),
    [
        ("osc.max_rpcs_in_flight", 16, "lustre.max_rpcs_in_flight", 16),
        ("osc.max_dirty_mb", 64, "lustre.max_dirty_bytes_per_osc", 64 << 20),
        ("osc.max_pages_per_rpc", 1024, "lustre.rpc_size_bytes", 4 << 20),
        ("llite.max_read_ahead_mb", 8, "lustre.max_read_ahead_bytes", 8 << 20),
        ("mdc.max_rpcs_in_flight", 4, "lustre.max_metadata_rpcs_in_flight", 4),
        ("mdc.max_mod_rpcs_in_flight", 7, "lustre.max_mod_rpcs_in_flight", 7),
        ("ost.threads_max", 128, "oss.threads", 128),
    ],
)
def test_a_lustre_tunable_sets_its_field_in_its_unit(tunable, value, field, expected):
    assert LFS5.with_overrides({tunable: value}).raw(field) == expected


def test_every_tunable_is_in_the_reference_with_its_field():
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "profile-format.md").read_text()
    for tunable, (field, _) in TUNABLES.items():
        assert f"`{tunable}`" in page and f"`{field}`" in page, tunable


def test_a_tunable_changes_the_run_as_its_field_does():
    workload = "ior -F -t 1m -b 1g -w"
    by_tunable = simfs.simulate("crtdc-lfs5", workload, nodes=2, overrides={"osc.max_rpcs_in_flight": 1})
    by_field = simfs.simulate("crtdc-lfs5", workload, nodes=2, overrides={"lustre.max_rpcs_in_flight": 1})
    assert by_tunable.phases["agg_bw_Bps"].iloc[0] == by_field.phases["agg_bw_Bps"].iloc[0]


def test_a_tunable_in_a_profile_table(tmp_path):
    text = tmp_path / "p.toml"
    source = load_profile("crtdc-lfs5").text.replace("max_dirty_bytes_per_osc = 33_554_432", "")
    text.write_text(source + "\n[osc]\nmax_dirty_mb = 64\n", encoding="utf-8")
    profile = Profile.from_file(text)
    assert profile.raw("lustre.max_dirty_bytes_per_osc") == 64 << 20
    assert not profile.has("osc.max_dirty_mb")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"osc.max_dirty_mb": 6.5}, r"--set: osc\.max_dirty_mb: expected a positive integer \(Lustre's unit\)"),
        ({"osc.max_dirty_mb": 0}, r"osc\.max_dirty_mb: expected a positive integer"),
        (
            {"osc.max_dirty_mb": 64, "lustre.max_dirty_bytes_per_osc": 1 << 20},
            r"--set osc\.max_dirty_mb and lustre\.max_dirty_bytes_per_osc name the same field",
        ),
    ],
)
def test_bad_tunables_are_one_line_errors(overrides, message):
    with pytest.raises(ProfileError, match=message):
        LFS5.with_overrides(overrides)


def test_both_names_in_one_profile_is_an_error():
    with pytest.raises(ProfileError, match=r"osc\.max_dirty_mb and lustre\.max_dirty_bytes_per_osc name the same"):
        Profile.from_text(LFS5.text + "\n[osc]\nmax_dirty_mb = 64\n", "p.toml")


@pytest.mark.parametrize(
    ("typo", "nearest"),
    [("oss.thread", "oss.threads"), ("lustre.max_rpc_in_flight", "lustre.max_rpcs_in_flight")],
)
def test_an_unknown_field_names_the_nearest_known_one(typo, nearest):
    with pytest.raises(ProfileError, match=rf"{typo}: unknown field \(did you mean {nearest}\?\)"):
        simfs.simulate("crtdc-lfs5", "dd bs=1M count=10", overrides={typo: 64})


def test_a_far_typo_gets_no_guess():
    with pytest.raises(ProfileError, match=r"zzz\.qqq: unknown field$"):
        simfs.simulate("crtdc-lfs5", "dd bs=1M count=10", overrides={"zzz.qqq": 64})


def test_table_units_of_ior_and_the_io500():
    phases = simfs.simulate("crtdc-lfs5", "ior -F -t 1m -b 1g", nodes=4).phases
    decimal = wide_table(phases, ["nodes"])
    ior = wide_table(phases, ["nodes"], units="MiB")
    io500 = wide_table(phases, ["nodes"], units="GiB")
    assert ior["write agg MiB/s"].iloc[0] == pytest.approx(decimal["write agg GB/s"].iloc[0] * 1e9 / 2**20)
    assert io500["write agg GiB/s"].iloc[0] == pytest.approx(decimal["write agg GB/s"].iloc[0] * 1e9 / 2**30)
    assert io500["read per-node MiB/s"].iloc[0] == pytest.approx(decimal["read per-node MB/s"].iloc[0] * 1e6 / 2**20)
    with pytest.raises(ValueError, match="units: expected one of decimal, MiB, GiB"):
        wide_table(phases, ["nodes"], units="kB")


LCTL = """\
osc.lfs5-OST0000-osc-ffff88a1b2c3d400.max_rpcs_in_flight=16
osc.lfs5-OST0001-osc-ffff88a1b2c3d400.max_rpcs_in_flight=16
osc.lfs5-OST0000-osc-ffff88a1b2c3d400.max_dirty_mb=64
osc.lfs5-OST0000-osc-ffff88a1b2c3d400.checksums=1
llite.lfs5-ffff88a1b2c3d400.max_read_ahead_mb=64
ost.OSS.ost_io.threads_max=128
"""


def test_lctl_get_param_output_gives_the_tunables():
    tunables, unmodelled = from_lctl(LCTL, "lctl.txt")
    assert tunables == {
        "osc.max_rpcs_in_flight": 16,
        "osc.max_dirty_mb": 64,
        "llite.max_read_ahead_mb": 64,
        "ost.threads_max": 128,
    }
    assert unmodelled == ["osc.lfs5-OST0000-osc-ffff88a1b2c3d400.checksums"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (LCTL.replace("OST0001-osc-ffff88a1b2c3d400.max_rpcs_in_flight=16", "OST0001-osc-x.max_rpcs_in_flight=8"),
         r"lctl\.txt:2: .*max_rpcs_in_flight=8, but line 1 gave 16"),
        ("osc.x.max_dirty_mb\n", r"lctl\.txt:1: expected lctl get_param's param=value"),
        ("osc.x.max_dirty_mb=lots\n", r"lctl\.txt:1: osc\.x\.max_dirty_mb: expected a whole number"),
        ("osc.x.checksums=1\n", r"lctl\.txt: no tunable simfs models"),
    ],
)  # fmt: skip
def test_bad_lctl_output_is_one_line(text, message):
    with pytest.raises(ValueError, match=message):
        from_lctl(text, "lctl.txt")


def test_lctl_on_the_command_line(tmp_path, capsys):
    from simfs.cli import main

    (tmp_path / "lctl.txt").write_text(LCTL, encoding="utf-8")
    argv = [
        "simulate",
        "--system",
        "crtdc-lfs5",
        "--workload",
        "dd bs=1M count=100",
        "--lctl",
        str(tmp_path / "lctl.txt"),
    ]
    assert main(argv) == 0
    assert "osc.max_rpcs_in_flight=16" in capsys.readouterr().err
    assert main([*argv, "--set", "osc.max_dirty_mb=8"]) == 2
    assert "--lctl" in capsys.readouterr().err
