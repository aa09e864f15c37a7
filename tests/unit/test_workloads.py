"""dd and IOR command lines."""

import pytest

import simfs
from simfs.errors import WorkloadError
from simfs.workloads import parse_workload


def test_seed_dd_write_and_read_forms():
    write = parse_workload("dd if=/dev/zero of=$DIR/XX1 bs=1024000 count=50000")
    read = parse_workload("dd of=/dev/zero if=$DIR/XX1 bs=1024000 count=50000")
    assert [p.op for p in write.phases] == ["write"]
    assert [p.op for p in read.phases] == ["read"]
    assert write.phases[0].bytes_per_rank == 1024000 * 50000
    assert write.aggregate == "sum_of_ranks"


def test_dd_without_files_is_the_write_read_pair():
    spec = parse_workload("dd bs=1024000 count=50000")
    assert [p.op for p in spec.phases] == ["write", "read"]


def test_dd_flags():
    spec = parse_workload("dd if=/dev/zero of=f bs=1M count=10 conv=fsync oflag=direct")
    assert spec.phases[0].fsync and spec.phases[0].direct
    assert spec.phases[0].transfer_size_bytes == 1 << 20


@pytest.mark.parametrize(
    "command, message",
    [
        ("dd if=/dev/zero of=f bs=1M count=10 skip=3", "unsupported operand 'skip'"),
        ("dd if=/dev/zero of=f bs=1M", "count= is required"),
        ("dd if=/dev/zero of=f bs=1M count=-5", "count=-5"),
        ("dd if=/dev/zero of=f bs=1Q count=5", "bs=1Q"),
        ("dd if=a of=b bs=1M count=5", "expected one file and one device"),
        ("dd if=/dev/zero of=f bs=1M count=5 conv=sparse", "unsupported sparse"),
        ("dd if=/dev/zero of=f bs=1M count=5 count=6", "given twice"),
    ],
)
def test_dd_errors_name_the_operand(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_ior_subset():
    spec = parse_workload("ior -a POSIX -F -t 1m -b 4g -s 2 -w -r -C -e -i 3 -o /scratch/test")
    write, read = spec.phases
    assert spec.iterations == 3 and spec.aggregate == "makespan"
    assert write.op == "write" and write.fsync and not write.shared_file
    assert read.reorder_tasks
    assert write.bytes_per_rank == 2 * (4 << 30)
    assert write.block_size_bytes == 4 << 30
    assert write.transfer_size_bytes == 1 << 20


def test_ior_defaults_write_and_read_shared_file():
    spec = parse_workload("ior")
    assert [p.op for p in spec.phases] == ["write", "read"]
    assert spec.phases[0].shared_file
    assert spec.phases[0].transfer_size_bytes == 256 << 10
    assert spec.phases[0].bytes_per_rank == 1 << 20


def test_ior_attached_values_and_odirect():
    spec = parse_workload("ior -t1m -b16m -w --posix.odirect")
    assert spec.phases[0].direct and spec.phases[0].transfer_size_bytes == 1 << 20


@pytest.mark.parametrize(
    "command, message",
    [
        ("ior -a HDF5", "not I/O libraries or object stores"),
        ("ior -c -w", "-c \\(collective I/O\\) needs -a MPIIO"),
        ("ior -a MPIIO -c -F -w", "applies to one shared file"),
        ("ior -Z", "unsupported option '-Z'"),
        ("ior -a RADOS", "simulates the file-system clients"),
        ("ior -u -w", "-u \\(a directory per file\\) needs -F"),
        ("ior -t 3m -b 4m", "multiple of"),
        ("ior -N 16", "experiment setting"),
        ("ior -t", "needs a value"),
        ("ior -i 0", "positive integer"),
        ("ior -b 1q", "invalid size"),
        ("fsstress -n 10", "unknown tool"),
        ("", "empty command"),
        ("dd 'unterminated", "No closing quotation"),
    ],
)
def test_ior_errors_name_the_option(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_mdtest_phases_follow_mdtest_order():
    spec = parse_workload("mdtest -n 100 -w 4k -e 4k -i 2 -d /lustre/x")
    labels = [p.label for p in spec.phases]
    assert labels == ["dir create", "dir stat", "dir remove", "file create", "file stat", "file read", "file remove"]
    assert spec.iterations == 2 and spec.tool == "mdtest"
    create = spec.phases[3]
    assert create.items_per_rank == 100 and create.bytes_per_rank == 100 * 4096 and create.shared_directory
    assert spec.phases[0].bytes_per_rank == 0  # mkdir writes no data


def test_mdtest_selected_phases_and_unique_directories():
    spec = parse_workload("mdtest -F -C -T -r -u -n 50")
    assert [p.label for p in spec.phases] == ["file create", "file stat", "file remove"]
    assert not any(p.shared_directory for p in spec.phases)


@pytest.mark.parametrize(
    "command, message",
    [
        ("mdtest -F", "-n ITEMS is required"),
        ("mdtest -n 0", "-n 0: expected a positive integer"),
        ("mdtest -n 10 -F -D", "exclude each other"),
        ("mdtest -n 2 -z 2", "fewer items than the 3 directories"),
        ("mdtest -n 10 -a HDF5", "not I/O libraries or object stores"),
        ("mdtest -n 10 -W x", "-W x: expected a positive integer"),
        ("mdtest -n 10 -w 4q", "-w 4q"),
    ],
)
def test_mdtest_errors_name_the_option(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_bonnie_seed_form():
    spec = parse_workload("bonnie++ -d /lfs3/x -s 48g -n 0 -f -u root")
    assert [p.label for p in spec.phases] == ["block write", "rewrite", "block read"]
    assert spec.phases[0].bytes_per_rank == 48 << 30 and spec.phases[0].transfer_size_bytes == 8192
    assert not spec.synchronized and spec.aggregate == "sum_of_ranks"
    # Size in MiB by default, with a chunk size after the colon.
    assert parse_workload("bonnie++ -s 2048:64k -n 0 -f").phases[0].transfer_size_bytes == 65536
    assert parse_workload("bonnie++ -s 2048 -n 0 -f").phases[0].bytes_per_rank == 2 << 30


@pytest.mark.parametrize(
    "command, message",
    [
        ("bonnie++ -s 1g -n 0", "per-character tests are not modelled: add -f"),
        ("bonnie++ -s 1g -n 16 -f", "-n: file-creation tests"),
        ("bonnie++ -n 0 -f", "-s SIZE is required"),
        ("bonnie++ -s 1g -n 0 -f -b", "unsupported option '-b'"),
        ("bonnie++ -s 1g -n 0 -f -x 0", "-x 0"),
    ],
)
def test_bonnie_errors_name_the_option(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


def test_obdfilter_survey_printed_and_run_forms_agree():
    printed = parse_workload("obdfilter-survey ost=4 sz=134217728K rsz=1024K obj=4 thr=1024")
    run = parse_workload("TERM=linux thrlo=256 thrhi=256 nobjlo=1 nobjhi=1 rsz=1024K size=32768 obdfilter-survey")
    assert [p.label for p in printed.phases] == ["write", "rewrite", "read"]
    assert [p.op for p in printed.phases] == ["write", "write", "read"]
    assert printed.phases[0].bytes_per_rank == run.phases[0].bytes_per_rank == 32 << 30
    assert printed.options["threads_per_object"] == run.options["threads_per_object"] == 256
    assert all(p.server_side for p in run.phases) and run.options["osts"] is None


@pytest.mark.parametrize(
    "command, message",
    [
        ("thrlo=4 thrhi=8 obdfilter-survey", "thrlo=4 thrhi=8: simfs runs one configuration"),
        ("obdfilter-survey obj=4 thr=16", "give ost= as well"),
        ("case=network obdfilter-survey", "only case=disk"),
        ("obdfilter-survey foo=1", "unsupported variable 'foo'"),
        ("tests_str=scribble obdfilter-survey", "tests_str"),
        ("size=4 dd bs=1M count=1", "only obdfilter-survey takes variables there"),
    ],
)
def test_obdfilter_survey_errors_name_the_variable(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


# Real IO500 command lines (the corpus's ior-easy-write.txt, ior-hard-read.txt and
# mdtest-easy-write.txt of ACC Cyfronet AGH Helios, 2024, io500-isc24_v3), paths shortened.
IO500_IOR_EASY_WRITE = (
    "ior --dataPacketType=timestamp -C -Q 1 -g -G -312789882 -k -e -o /net/d/ior-easy/ior_file_easy "
    "-O stoneWallingStatusFile=/net/r/ior-easy.stonewall -t 2m -b 9920000m -F -w -D 300 "
    "-O stoneWallingWearOut=1 -a POSIX -O saveRankPerformanceDetailsCSV=/net/r/ior-easy-write.csv"
)
IO500_IOR_HARD_READ = (
    "ior --dataPacketType=timestamp -C -Q 1 -g -G=-312779194 -k -e -o /net/d/ior-hard/file "
    "-O stoneWallingStatusFile=/net/r/ior-hard.stonewall -t 47008 -b 47008 -s 10000000 -r -R -a POSIX "
    "-O saveRankPerformanceDetailsCSV=/net/r/ior-hard-read.csv -O stoneWallingWearOut=1"
)
IO500_MDTEST_EASY_WRITE = (
    "mdtest --dataPacketType=timestamp -n 1000000 -u -L -F -P -G 573387913 -N 1 -d /net/d/mdtest-easy "
    "-x /net/r/mdtest-easy.stonewall -C -Y -W 300 --saveRankPerformanceDetails=/net/r/mdtest-easy-write.csv -a POSIX"
)


@pytest.mark.parametrize(
    ("command", "same_as"),
    [
        # What is left once the options that change nothing timed are taken out.
        (IO500_IOR_EASY_WRITE, "ior -C -Q 1 -g -e -o /net/d/ior-easy/ior_file_easy -t 2m -b 9920000m -F -w -D 300 "
         "-O stoneWallingWearOut=1 -a POSIX"),
        # The stonewall file stays: a read that finds one redoes what the write did.
        (IO500_IOR_HARD_READ, "ior -C -Q 1 -g -e -o /net/d/ior-hard/file -t 47008 -b 47008 -s 10000000 -r -a POSIX "
         "-O stoneWallingStatusFile=/net/r/ior-hard.stonewall"),
        (IO500_MDTEST_EASY_WRITE, "mdtest -n 1000000 -u -F -N 1 -d /net/d/mdtest-easy -C -Y -W 300 -a POSIX"),
    ],
)  # fmt: skip
def test_io500_command_lines_run_as_their_timed_part(command, same_as):
    spec, bare = parse_workload(command), parse_workload(same_as)
    assert spec.phases == bare.phases
    assert (spec.iterations, spec.intra_phase_barriers) == (bare.iterations, bare.intra_phase_barriers)


def test_io500_ior_stonewall_and_wear_out():
    (write,) = parse_workload(IO500_IOR_EASY_WRITE).phases
    assert (write.stonewall_s, write.wear_out, write.transfer_size_bytes) == (300.0, True, 2 << 20)
    (read,) = parse_workload(IO500_IOR_HARD_READ).phases
    # Wear-out without a deadline does nothing, as in IOR; -D 0 is no deadline.
    assert (read.stonewall_s, read.wear_out, read.reorder_tasks) == (0.0, False, True)
    assert parse_workload("ior -w -D 0 -t=4k -b=8k").phases[0].stonewall_s == 0.0
    assert parse_workload("ior -w -t=4k -b=8k").phases[0].transfer_size_bytes == 4096


def test_ior_unique_directories():
    assert not parse_workload("ior -F -u -w").phases[0].shared_directory
    assert parse_workload("ior -F -w").phases[0].shared_directory


def test_mdtest_stonewall_applies_to_the_file_create():
    phases = parse_workload("mdtest -n 100 -W 30 --posix.odirect -w 4096").phases
    walled = {p.label: p.stonewall_s for p in phases}
    assert walled["file create"] == 30.0
    assert all(s == 0.0 for label, s in walled.items() if label != "file create")
    assert all(p.direct for p in phases)
    assert parse_workload(IO500_MDTEST_EASY_WRITE).phases[0].stonewall_s == 300.0
    assert parse_workload("mdtest -n 100 -F -C -W 0").phases[0].stonewall_s == 0.0


def test_ior_task_offset_without_reorder_does_nothing_as_in_ior():
    (read,) = parse_workload("ior -r -Q 2").phases
    assert not read.reorder_tasks
    assert parse_workload("ior -r -C -Q 2").phases[0].task_offset == 2


def test_ior_existing_file_is_opened_not_created(monkeypatch):
    """IOR -E: the write opens the file that is there; the MDS sees an open, not a create."""
    from simfs.filesystems.core import metadata

    seen: list[str] = []
    original = metadata.MetadataService.request

    def spy(self, node, op, *args, **kwargs):
        seen.append(op)
        return original(self, node, op, *args, **kwargs)

    monkeypatch.setattr(metadata.MetadataService, "request", spy)
    simfs.simulate("crtdc-lfs3", "ior -a POSIX -w -t 1m -b 16m -F", nodes=2, ppn=2)
    assert seen.count("create") == 4
    seen.clear()
    simfs.simulate("crtdc-lfs3", "ior -a POSIX -w -t 1m -b 16m -F -E", nodes=2, ppn=2)
    assert seen.count("create") == 0 and seen.count("open") == 4
    assert parse_workload("ior -w -E").phases[0].existing_file


@pytest.mark.parametrize(
    ("command", "note"),
    [
        ("ior -a DFS --dfs.pool tank --dfs.cont=c1 -t 1m -b 4m", "ior -a DFS: the DFS interface is not modelled"),
        ("ior -a DFS --dfs.pool tank --dfs.cont=c1 -t 1m -b 4m", "ior --dfs.pool, --dfs.cont: DFS backend options"),
        ("ior -t 47008 -b 47008 --posix.gpfs.finegrainwritesharing", "POSIX backend hints, not modelled"),
        ("ior -a POSIX --aio.max-pending=8 -t 1m -b 4m", "options of the AIO backend, which -a POSIX does not use"),
        ("ior -a MPIIO -U /etc/hints -t 1m -b 4m", "ior -U /etc/hints: the MPI-IO hints in this file are not read"),
        ("ior -t 256k -b 256gm", "ior -b 256gm: read as 256 GiB, as IOR reads it"),
        ("mdtest -n 10 -a IME", "mdtest -a IME: the IME interface is not modelled"),
    ],
)
def test_what_is_simulated_without_it_is_noted(command, note):
    spec = parse_workload(command)
    assert any(note in line for line in spec.notes), spec.notes


def test_a_backend_options_value_is_its_own_word_and_the_rest_still_counts():
    # IOR and mdtest take no operands: "--dfs.pool tank" is one option and its value.
    spec = parse_workload("ior -a DFS --dfs.pool tank -t 1m -b 4m -F -w")
    assert spec.phases[0].bytes_per_rank == 4 << 20 and not spec.phases[0].shared_file
    assert [p.op for p in spec.phases] == ["write"]


def test_notes_reach_the_result():
    result = simfs.simulate("crtdc-lfs3", "ior -a DFS -t 1m -b 4m -F -w", nodes=1)
    assert result.notes and result.notes[0].startswith("ior -a DFS")


@pytest.mark.parametrize(
    "command, message",
    [
        # A word after a flag: the flag takes no value (it was "unsupported option '5'").
        ("ior -w -x 5 -t 1m -b 1m", r"^ior: '5' after -x: that option takes no value$"),
        ("mdtest -F -C 5 -n 10", r"^mdtest: '5' after -C: that option takes no value$"),
        ("ior 5 -w", r"^ior: unsupported option '5'"),
        # After a value given with its option, the word is not blamed on a flag.
        ("ior -w -t1m 5", r"^ior: unsupported option '5'"),
    ],
)
def test_a_word_after_a_flag_is_named_with_the_flag(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)
