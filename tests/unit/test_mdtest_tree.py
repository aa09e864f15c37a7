"""mdtest's directory trees (-z, -b, -L, -I) through the parser, the simulator and the
runner; the item counts are mdtest.c's (3.3 to 4.x: num_dirs_in_tree, items_per_dir,
directory_loops)."""

import io

import pytest

import simfs
from simfs.errors import WorkloadError
from simfs.runner import measure
from simfs.workloads import parse_workload
from simfs.workloads.spec import DirectoryTree


@pytest.mark.parametrize(
    ("command", "items", "per_directory", "directories"),
    [
        # (b^(z+1) - 1) / (b - 1) directories; -n spread evenly, rounded down.
        ("mdtest -F -n 1000 -z 2 -b 3", 988, 76, 13),
        # -L: the b^z leaves only.
        ("mdtest -F -n 1000 -z 2 -b 3 -L", 999, 111, 9),
        # -b 1: a chain of z + 1 directories.
        ("mdtest -F -n 10 -z 2", 9, 3, 3),
        # -I alone: the tree's size gives the items.
        ("mdtest -F -I 10 -z 1 -b 4", 50, 10, 5),
        # -n with -I in one shared directory: one directory per -I items (directory_loops).
        ("mdtest -F -n 3300 -I 1650", 3300, 1650, 2),
    ],
)
def test_items_and_directories_are_mdtests(command, items, per_directory, directories):
    phase = parse_workload(command).phases[0]
    tree = phase.directory_tree
    assert phase.items_per_rank == items == tree.items
    assert tree.items_per_directory == per_directory
    assert tree.loops * tree.holders_per_tree == directories


def test_one_directory_is_no_tree():
    # -b without -z (the IO500 archive has "-u -L -b 8"): mdtest's one directory.
    assert parse_workload("mdtest -F -n 100 -b 8 -u -L").phases[0].directory_tree is None


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("mdtest -F -n 2 -z 2", "fewer items than the 3 directories"),
        ("mdtest -F -n 100 -I 10 -u", "give -n or -I alone"),
        ("mdtest -F -n 100 -I 10 -z 1 -b 2", "give -n or -I alone"),
        ("mdtest -F -n 100 -z 1 -b 0", "-b 0: expected a positive integer"),
        ("mdtest -F -n 100 -z 40 -b 10", "directories hold items"),
        # The count as a power of ten, not a line of 4,000 characters.
        ("mdtest -F -n 10 -z 1000 -b 1000", r"-z 1000 -b 1000: about 10\^3000 directories hold items; at most"),
        # Past Python's 4,300-digit limit on printing an integer.
        ("mdtest -F -n 10 -z 100000 -b 2", r"-z 100000 -b 2: about 10\^30103 directories hold items"),
    ],
)
def test_impossible_trees_are_refused(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_items_run_directory_after_directory_in_mdtests_order():
    tree = DirectoryTree(depth=2, branch=2, leaf_only=False, items_per_directory=3)
    assert [tree.path(index) for index in range(tree.holders_per_tree)] == [
        "tree.0",
        "tree.0/d0",
        "tree.0/d0/d0",
        "tree.0/d0/d1",
        "tree.0/d1",
        "tree.0/d1/d0",
        "tree.0/d1/d1",
    ]
    assert list(tree.runs(2, 5)) == [(0, 1), (1, 3), (2, 1)]
    leaves = DirectoryTree(depth=2, branch=2, leaf_only=True, items_per_directory=3, loops=2)
    assert [leaves.path(index) for index in (0, 3, 4)] == ["tree.0/d0/d0", "tree.0/d1/d1", "tree.1/d0/d0"]


def test_a_tree_spreads_a_shared_directorys_lock_and_changes_nothing_for_one_rank():
    # crtdc-lfs3: creates in one shared directory are bound by its lock (2,000/s; see
    # test_mechanisms); in a shared tree ranks that finish a directory first go on to the
    # next while the others are still in theirs, so more than one lock is busy at a time.
    def rate(command: str, nodes: int) -> float:
        return float(simfs.simulate("crtdc-lfs3", command, nodes=nodes).phases.iloc[0]["ops_per_s"])

    one_directory = rate("mdtest -F -C -n 1000", 16)
    tree = rate("mdtest -F -C -n 1000 -z 1 -b 8", 16)
    unique = rate("mdtest -F -C -n 1000 -u", 16)
    assert one_directory == pytest.approx(2000, rel=0.01)
    assert one_directory < tree < unique
    # One rank never waits for a lock: the tree changes nothing but the directories.
    assert rate("mdtest -F -C -n 999 -z 1 -b 8", 1) == pytest.approx(rate("mdtest -F -C -n 999", 1), rel=1e-9)


def test_a_stonewalled_create_goes_on_through_the_tree():
    # 200 items in each of 9 directories per rank; the deadline comes some directories in.
    result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -T -n 1800 -z 1 -b 8 -W 1", nodes=2)
    create, stat = result.phases.iloc[0], result.phases.iloc[1]
    assert 2 * 2 * 200 < create["ops"] < 2 * 1800 and create["ops"] % 2 == 0
    # Every rank went on to the count of the one that made most, and the stat did those.
    assert stat["ops"] == create["ops"]


def test_the_runner_makes_the_tree_and_puts_the_items_where_mdtest_does(tmp_path):
    measure("mdtest -F -C -n 8 -z 1 -b 3", tmp_path, processes=2, keep=True, out=io.StringIO())
    (run,) = tmp_path.iterdir()
    files = sorted(str(p.relative_to(run / "mdtest.0" / "shared")) for p in run.rglob("file.*"))
    assert files == sorted(
        [f"tree.0/file.mdtest.{rank}.{item}" for rank in (0, 1) for item in (0, 1)]
        + [f"tree.0/d{d}/file.mdtest.{rank}.{2 + 2 * d + i}" for d in range(3) for rank in (0, 1) for i in (0, 1)]
    )
