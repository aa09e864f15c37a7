"""fio job files and fio command lines as workloads: the IOR run doing the same I/O."""

from __future__ import annotations

import pytest

import simfs
from simfs.errors import WorkloadError
from simfs.workloads import parse_workload

JOBS = """\
; a sequential write then read, as sites write them
[global]
directory=/lustre/fio
ioengine=psync
bs=1m
size=4g
direct

[write]
rw=write
end_fsync=1

[read]
stonewall
rw=read
"""


def test_a_job_file_runs_its_jobs_one_after_another(tmp_path):
    path = tmp_path / "seq.fio"
    path.write_text(JOBS)
    spec = parse_workload(f"fio {path}")
    write, read = spec.phases
    ior = parse_workload("ior -a POSIX -F -w -r -t 1m -b 4g -e --posix.odirect").phases
    assert (write.label, read.label) == ("write", "read")
    assert write.op == "write" and write.fsync and write.direct and write.bytes_per_rank == 4 << 30
    assert read.op == "read" and read.direct and not read.fsync
    assert write.transfer_size_bytes == ior[0].transfer_size_bytes == 1 << 20
    assert spec.aggregate == "sum_of_ranks"


def test_command_line_jobs_and_runtime_as_a_deadline():
    spec = parse_workload("fio --ioengine=libaio --iodepth=1 --name=w --rw=write --bs=4m --size=1g --runtime=30")
    (phase,) = spec.phases
    assert phase.label == "write" and phase.stonewall_s == 30 and phase.transfer_size_bytes == 4 << 20
    result = simfs.simulate("crtdc-lfs3", spec, nodes=2, ppn=2)
    assert result.phases["agg_bw_Bps"].iloc[0] > 0


def test_a_random_fio_job_runs_as_ior_z():
    spec = parse_workload("fio --name=r --rw=randread --bs=4k --size=256m --direct=1")
    (phase,) = spec.phases
    assert phase.op == "read" and phase.random_offsets and phase.direct and phase.transfer_size_bytes == 4096
    result = simfs.simulate("crtdc-lfs5", spec, nodes=2, ppn=4)
    assert result.phases["bottleneck"].iloc[0] == "direct-io-latency"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("fio --name=w --rw=write --bs=1m --size=1g --numjobs=4", r"numjobs=4: .* use --ppn 4"),
        ("fio --name=w --rw=randrw --bs=1m --size=1g", r"rw=randrw: simulated are rw=read, write, randread"),
        ("fio --name=w --rw=randwrite --bs=1m --size=1g --norandommap=1", r"norandommap=1 has no IOR equivalent"),
        ("fio --name=w --rw=write --bs=1m --size=1g --iodepth=8 --ioengine=libaio", r"iodepth=8"),
        ("fio --name=w --rw=write --bs=1m --size=1g --time_based --runtime=10", r"time_based"),
        ("fio --name=w --rw=write --bs=1m --size=1g --runtime=500ms", r"runtime=500ms: give whole seconds"),
        ("fio --name=a --rw=write --bs=1m --size=1g --name=b --rw=read --bs=1m --size=1g", r"job 'b': runs at the same time"),
        ("fio --rw=write", r"no job"),
        ("fio /nonexistent/jobs.fio", r"fio: /nonexistent/jobs.fio: No such file"),
    ],
)  # fmt: skip
def test_what_is_not_modelled_is_refused_naming_the_job(command, message):
    with pytest.raises(WorkloadError, match=message) as caught:
        parse_workload(command)
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_a_job_file_is_refused(tmp_path):
    path = tmp_path / "x.fio"
    path.write_text("rw=write\n")
    with pytest.raises(WorkloadError, match="not a fio job file"):
        parse_workload(f"fio {path}")
