"""System profiles: built-ins load, every number cites a source, bad input is named."""

import re
from pathlib import Path

import pytest

import simfs
from simfs.errors import ProfileError
from simfs.systems.profile import BUILTIN_DIR, Profile, builtin_names

SOURCE_WORDS = ("seed", "datasheet", "default", "estimate", "fitted", "derived", "site page", "paper")


def _header_source_keys(text: str) -> set[str]:
    """Source keys a profile defines in its header comment (``#   KEY ... what it is``)."""
    keys = set()
    for line in text.splitlines():
        if line.startswith("["):
            break
        match = re.match(r"#\s+(.+?)\s+\.{1,3}\s", line)
        if match:
            keys.update(key.strip() for key in match.group(1).split(","))
    return keys


def _cites_a_source(comment: str, keys: set[str]) -> bool:
    if any(word in comment for word in SOURCE_WORDS):
        return True
    # A profile may name its sources once in its header and cite them by key.
    cited = comment.strip().split(":", 1)[0].strip()
    return any(cited == key or cited.startswith(key.rstrip(".") + " ") for key in keys)


def test_builtins_are_the_crtdc_lustre_systems():
    assert {"crtdc-lfs3", "crtdc-lfs4", "crtdc-lfs5"} <= set(builtin_names())


@pytest.mark.parametrize("name", builtin_names())
def test_every_number_in_a_builtin_profile_cites_its_source(name):
    text = (BUILTIN_DIR / f"{name}.toml").read_text()
    keys = _header_source_keys(text)
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0]
        if re.search(r"=\s*[-+]?[\d.]", code):
            comment = line.split("#", 1)[1] if "#" in line else ""
            assert _cites_a_source(comment, keys), f"{name}.toml:{number}: no source: {line}"


@pytest.mark.parametrize("name", builtin_names())
def test_builtins_build(name):
    system = simfs.load_system(name)
    assert system.name == name
    # OST counts from the seeds: lfs3 16 LUNs, lfs4 and lfs5 32 targets, the CS6000 16 OSTs,
    # Spider 20 OSS with (an estimated) 2 OSTs each; panfs 7 shelves x 10 StorageBlades;
    # CXFS's fastfs 24 LUNs (6 per controller pair); Grid'5000 4 OSTs; OLCF Alpine one GNR
    # vdisk per NSD server, 154 servers.
    expected = {
        "crtdc-lfs3": 16,
        "crtdc-lfs4": 32,
        "crtdc-lfs5": 32,
        "xyratex-cs6000": 16,
        "ornl-spider": 40,
        "crtdc-panfs": 70,
        "tud-cxfs": 24,
        "g5k-helios": 4,
        "olcf-alpine": 154,
        # ARCHER 6 SSUs x 8 OSTs; Cirrus 14 OSTs ("FS:" line of its mdtest logs); CSD3 24
        # OSTs; the SPECsfs AS9 10 shelves x 8 StorageBlades; Roadrunner ~1000 blades;
        # RRZ 6 shelves x 10 blades (assumed).
        "archer-sonexion": 48,
        "cirrus-lustre": 14,
        "csd3-lustre": 24,
        "panasas-as9": 80,
        "roadrunner-panfs": 1000,
        "rrz-panfs": 60,
        # The testbeds' default shapes: 2 chunkservers, one chunk store each; a
        # dispersed 2+1 GlusterFS volume, one brick per server.
        "testbed-moosefs": 2,
        "testbed-glusterfs": 3,
    }
    assert system.target_count == expected[name.removesuffix("-fitted")]


def test_hand_checked_hardware_figures():
    lfs3 = simfs.load_system("crtdc-lfs3")
    # 8+2 RAID 6 of 98 MB/s drives: 8 x 98 = 784 MB/s per LUN.
    assert lfs3.target.bandwidth_Bps("write") == pytest.approx(784e6)
    cs6000 = simfs.load_system("xyratex-cs6000")
    # 8+2 RAID 6: 8 data drives; 4 OSS x 4 OSTs.
    assert cs6000.target.data_disks == 8 and cs6000.server_count * cs6000.targets_per_server == 16
    lfs5 = simfs.load_system("crtdc-lfs5")
    # 4 x X25-E in RAID 0: 680 MB/s write, 1000 MB/s read.
    assert lfs5.target.bandwidth_Bps("write") == pytest.approx(680e6)
    assert lfs5.target.bandwidth_Bps("read") == pytest.approx(1000e6)
    assert lfs5.controller_total == 16


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return path


def base_text() -> str:
    return (BUILTIN_DIR / "crtdc-lfs3.toml").read_text()


def test_malformed_toml_names_file_and_line(tmp_path):
    path = write(tmp_path, "[system]\nname = \n")
    with pytest.raises(ProfileError, match=r"bad\.toml: invalid TOML: .*line 2"):
        simfs.load_system(path)


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("[client]\n", "[client]\ncorse = 3\n", r"client\.corse: unknown field"),
        ("count = 8 ", "count = -8 ", r"oss\.count: expected a positive number, got -8"),
        ("cores = 12", 'cores = "twelve"', r"client\.cores: expected an integer"),
        ("osts_per_oss = 2", "", r"missing field oss\.osts_per_oss"),
        ("disks = 10", "disks = 2", "disk_count: raid6 needs more than 2"),
        (
            'network = "qdr-ib"              #',
            'network = "myrinet"             #',
            "client.network: unknown network 'myrinet'",
        ),
        ("stripe_size_bytes = 1_048_576", "stripe_size_bytes = 1_000_000", "multiple of 65536"),
        # A misspelt table header leaves its fields missing: the first one names it.
        ("[ost]\n", "[osts]\n", r"missing field ost\.drive \(the profile sets osts\.drive: a typo\?\)"),
        # Without it the file system is "missing", not None (the repr of a lookup).
        ('filesystem = "lustre"', "", r"bad\.toml: missing field system\.filesystem$"),
        (
            'filesystem = "lustre"',
            'filesytem = "lustre"',
            r"missing field system\.filesystem \(the profile sets system\.filesytem",
        ),
        ('filesystem = "lustre"', "filesystem = 3", r"system\.filesystem: expected one of lustre, .*, got 3$"),
    ],
)
def test_bad_profile_fields_are_named(tmp_path, old, new, message):
    assert old in base_text()
    path = write(tmp_path, base_text().replace(old, new, 1))
    with pytest.raises(ProfileError, match=message):
        simfs.load_system(path)


def test_unknown_system_name():
    with pytest.raises(ProfileError, match="unknown system 'lfs9'"):
        simfs.load_system("lfs9")


def test_overrides_make_a_new_system_and_leave_the_file_alone():
    text_before = (BUILTIN_DIR / "crtdc-lfs3.toml").read_text()
    system = simfs.load_system("crtdc-lfs3", {"oss.count": 16, "client.network": "1gbe"})
    assert system.server_count == 16 and system.target_count == 32
    assert system.client.network.bandwidth_Bps == pytest.approx(117e6)
    assert (BUILTIN_DIR / "crtdc-lfs3.toml").read_text() == text_before


def test_override_of_unknown_network_is_named():
    with pytest.raises(ProfileError, match="client.network: unknown network 'token-ring'"):
        simfs.load_system("crtdc-lfs3", {"client.network": "token-ring"})


def test_profile_from_text_keeps_origin():
    profile = Profile.from_text(base_text(), "inline")
    assert simfs.load_system(profile).name == "crtdc-lfs3"


def test_a_misspelt_table_is_found_by_its_fields():
    from simfs.systems.profile import misspelling_of

    assert misspelling_of("ost.hdd.sustained_Bps", ["ost.hd.sustained_Bps", "ost.raid"]) == "ost.hd.sustained_Bps"
    assert misspelling_of("ost.drive", ["osts.drive"]) == "osts.drive"
    # Another field, a table far off, a different depth, or two candidates: no guess.
    assert misspelling_of("ost.drive", ["osts.count"]) is None
    assert misspelling_of("ost.drive", ["client.drive"]) is None
    assert misspelling_of("ost.drive", ["ost.hdd.drive"]) is None
    assert misspelling_of("ost.drive", ["osts.drive", "osd.drive"]) is None
    # A field misspelt in its own table is named before a table misspelt.
    assert misspelling_of("ost.drive", ["ost.drvie", "osts.drive"]) == "ost.drvie"
