"""``lfs setstripe`` commands as IO500 scripts state them (simfs.workloads.setstripe).

The script lines are copied from io500.sh files of the public IO500 submission archive
(../shared/corpus/io500): CMKL Apex submission 587, CSIRO bracewell 47, PACE-Phoenix
551, NCI Raijin 97, Erlangen Helma 736, DDN Gefion (the ssh line)."""

import pytest

from simfs.workloads.setstripe import folder_layouts, parse_setstripe, script_layouts

SCRIPT = """
  # lfs setstripe -c -1 $workdir/ior-hard
  lfs setstripe -S 1M -c 8 $workdir
  lfs setstripe -C $((osts * 4)) $workdir/ior-hard ||
    lfs setstripe -c -1 $workdir/ior-hard
  #lfs setstripe -E 64k -L mdt $workdir/mdtest-hard || true #DoM?
  lfs setstripe -L mdt -E 1M "$workdir-scr/mdt_easy"
  sudo lfs setstripe -E 64k -L mdt $workdir/mdtest-hard || true #DoM?
  lfs setstripe -c 1 -S 16M $workdir/ior-easy
"""


def test_a_script_gives_each_io500_directory_its_first_active_layout():
    layouts = script_layouts(SCRIPT)
    assert set(layouts) == {"", "ior-hard", "ior-easy", "mdtest-easy", "mdtest-hard"}
    # Four objects per OST, whatever the OST count: the harness measures it (lfs df).
    assert layouts["ior-hard"].settings(8) == ({"overstripe_count": 32}, [])
    assert layouts["ior-hard"].settings(20) == ({"overstripe_count": 80}, [])
    assert layouts["ior-easy"].settings(8) == ({"stripe_count": 1, "stripe_size": 16 << 20}, [])
    assert layouts[""].settings(16) == ({"stripe_count": 8, "stripe_size": 1 << 20}, [])
    settings, notes = layouts["mdtest-hard"].settings(8)
    assert settings == {} and "data on the MDT (DoM) is not modelled" in notes[0]
    assert layouts["mdtest-hard"].data_on_mdt_bytes == 64 << 10
    assert layouts["mdtest-easy"].data_on_mdt_bytes == 1 << 20


@pytest.mark.parametrize(
    ("line", "settings", "note"),
    [
        # NCI Raijin: a literal count above the model's OSTs stripes over all of them.
        (
            "lfs setstripe --stripe-count 180 --stripe-size 4194304 ${io500_workdir}/ior_hard/IOR_file",
            {"stripe_count": -1, "stripe_size": 4 << 20},
            "180 stripes stated; the model has 8 OSTs and stripes over all",
        ),
        ('ssh root@172.29.48.1 "lfs setstripe -C 960 /lustre/gefion1/io500/ior-hard"', {"overstripe_count": 960}, ""),
        (
            "sudo lfs setstripe -S 8m -C $((osts * 4)) $workdir/ior-hard #|| lfs setstripe -c -1",
            {"overstripe_count": 32, "stripe_size": 8 << 20},
            "",
        ),
        ("lfs setstripe -c $osts -S 16M $workdir/ior-hard", {"stripe_count": -1, "stripe_size": 16 << 20}, ""),
        ("lfs setstripe -C ${osts} $workdir/ior-hard", {"overstripe_count": 8}, ""),
        ("lfs setstripe -c -1 -S 64k ${io500_workdir}/ior_hard", {"stripe_count": -1, "stripe_size": 64 << 10}, ""),
        ("lfs setstripe -c 4 -i 3 $workdir/ior-hard", {"stripe_count": 4}, "a fixed first OST (-i) is not followed"),
    ],
)
def test_real_setstripe_lines(line, settings, note):
    (layout,) = script_layouts(line).values()
    got, notes = layout.settings(8)
    assert got == settings
    assert (note in notes[0]) if note else notes == []


def test_a_composite_layout_keeps_its_dom_component_and_its_last_data_component():
    layout = parse_setstripe("lfs setstripe -E 64k -L mdt -E 8M -c 1 -E -1 -c -1 -S 4M /lustre/dir")
    assert layout.data_on_mdt_bytes == 64 << 10
    assert layout.settings(8)[0] == {"stripe_count": -1, "stripe_size": 4 << 20}


def test_what_is_not_a_layout_is_left_alone():
    assert script_layouts("lfs getstripe $workdir/ior-hard\necho lfs setstripe\n# lfs setstripe -c 4 $workdir") == {}
    # A path that is no IO500 directory says nothing about one.
    assert script_layouts("lfs setstripe -c 4 /scratch/other") == {}
    with pytest.raises(ValueError, match=r"-c 'many': expected a stripe count"):
        parse_setstripe("lfs setstripe -c many /x")


def test_a_folder_s_scripts_are_read_io500_sh_first_then_by_name(tmp_path):
    assert folder_layouts(tmp_path) == ({}, None)
    (tmp_path / "io500.10node.sh").write_text("  lfs setstripe -C 40 $workdir/ior-hard\n")  # SoftBank CHIE-3, 717
    (tmp_path / "io500.sh").write_text("  lfs setstripe -c 1 $workdir\n")
    layouts, script = folder_layouts(tmp_path)
    # io500.sh sets only the working directory: the script that lays out ior-hard wins.
    assert script == tmp_path / "io500.10node.sh"
    assert layouts["ior-hard"].settings(8) == ({"overstripe_count": 40}, [])
    (tmp_path / "io500.sh").write_text("  lfs setstripe -c -1 $workdir/ior-hard\n")
    assert folder_layouts(tmp_path)[1] == tmp_path / "io500.sh"
    # Subfolders only when asked.
    sub = tmp_path / "results"
    sub.mkdir()
    (sub / "run.sh").write_text("lfs setstripe -c 4 $workdir/ior-hard\n")
    assert folder_layouts(sub.parent / "nowhere") == ({}, None)
    assert folder_layouts(sub)[1] == sub / "run.sh"
