"""dd and IOR command lines."""

import pytest

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
        ("ior -a MPIIO", "only the POSIX API"),
        ("ior -z", "unsupported option '-z'"),
        ("ior -t 3m -b 4m", "multiple of"),
        ("ior -N 16", "experiment setting"),
        ("ior -t", "needs a value"),
        ("ior -i 0", "positive integer"),
        ("ior -b 1q", "invalid size"),
        ("fio --name=x", "unknown tool"),
        ("", "empty command"),
        ("dd 'unterminated", "No closing quotation"),
    ],
)
def test_ior_errors_name_the_option(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)
