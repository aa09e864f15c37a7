"""Validation cases: profile overrides in settings, peak ratios, and equal peaks."""

from pathlib import Path

import pytest

from simfs.errors import SimfsError
from simfs.validate.case import load_case
from simfs.validate.run import run_cases

CASE = """
[case]
name = "{name}"
system = "g5k-helios"
workload = "{workload}"
phase = "read"
metric = "agg_bw"
split = "held-out"
tolerance = 0.1
source = "test"
settings = {{ ppn = {ppn}{extra} }}
curve = "nodes=1,2,4"
{expect}
"""


def case(
    tmp_path: Path, name: str, workload: str, ppn: int = 1, extra: str = "", expect: str = "[expect]\ncollapse = false"
) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(CASE.format(name=name, workload=workload, ppn=ppn, extra=extra, expect=expect))
    return path


def test_peak_ratio_and_equal_peaks(tmp_path):
    single = case(tmp_path, "single", "access-class SFWA -t 1m")
    smp = case(
        tmp_path,
        "smp",
        "access-class SFWA-SMP -t 1m",
        ppn=2,
        expect='[expect]\nrelative_to = "single"\npeak_ratio = 2.0',
    )
    same = case(
        tmp_path,
        "same",
        "access-class SFWA -t 1m",
        extra=", stripe_offset = 0",
        expect='[expect]\nrelative_to = "single"\npeak_lower = false',
    )
    outcomes = {o.case.identifier: o for o in run_cases([load_case(p) for p in (single, smp, same)])}
    # Two processes per node share one fetch: twice the aggregate, as stated.
    assert outcomes["smp"].peak_ratio == pytest.approx(2.0, rel=0.01)
    assert outcomes["smp"].peak_ratio_matches
    # Equal peaks are neither lower nor higher: a stated "higher" is a miss, not a pass.
    assert outcomes["same"].relation == (None, None)


def test_profile_overrides_in_case_settings(tmp_path):
    base = case(tmp_path, "base", "access-class MFWA")
    slow = case(tmp_path, "slow", "access-class MFWA", extra=', "ost.hdd.sustained_Bps" = 1.0e7')
    outcomes = {o.case.identifier: o for o in run_cases([load_case(base), load_case(slow)])}
    assert outcomes["slow"].peak_value < 0.5 * outcomes["base"].peak_value


def test_peak_ratio_needs_a_positive_number_and_a_relative(tmp_path):
    with pytest.raises(SimfsError, match="need expect.relative_to"):
        load_case(case(tmp_path, "a", "access-class SFWA", expect="[expect]\npeak_ratio = 2.0"))
    with pytest.raises(SimfsError, match="peak_ratio: expected a positive number"):
        load_case(case(tmp_path, "b", "access-class SFWA", expect='[expect]\nrelative_to = "a"\npeak_ratio = -1'))


def test_case_data_that_matches_nothing_shows_the_files_workloads(tmp_path):
    # A fio job is stored as the IOR command doing its I/O, in IOR's option order: a case
    # written with the options in another order matches nothing, and is told what is there.
    data = Path(__file__).resolve().parents[1] / "data" / "ingest" / "fio-write-direct.json"
    path = tmp_path / "fio.toml"
    path.write_text(
        CASE.format(name="fio", workload="ior -a POSIX -t 1m -w", ppn=1, extra="", expect="")
        + f'data = "{data}"\n'.replace("\\", "/"),
        encoding="utf-8",
    )
    with pytest.raises(SimfsError, match=r"case\.data: no agg_bw of phase 'read' .* \(its workloads: 'ior -a POSIX"):
        load_case(path)


def test_cases_run_in_processes_give_the_serial_outcomes_in_order(tmp_path):
    paths = [
        case(tmp_path, "single", "access-class SFWA -t 1m"),
        case(tmp_path, "smp", "access-class SFWA-SMP -t 1m", ppn=2, expect='[expect]\nrelative_to = "single"'),
        case(tmp_path, "many", "access-class MFWA"),
    ]
    cases = [load_case(p) for p in paths]
    done = []
    serial = run_cases(cases)
    parallel = run_cases(cases, progress=lambda finished, total: done.append((finished, total)), jobs=2)
    assert done == [(1, 3), (2, 3), (3, 3)]
    assert [o.case.identifier for o in parallel] == ["single", "smp", "many"]
    for one, other in zip(serial, parallel):
        assert one.curve == other.curve and one.peak_at == other.peak_at and one.collapse == other.collapse
        assert one.points.equals(other.points)
    # The relation to another case is resolved after all have run, wherever they ran.
    assert parallel[1].peak_ratio is not None and parallel[1].peak_ratio == serial[1].peak_ratio


@pytest.mark.parametrize("jobs", [0, -1, True, 1.5])
def test_a_number_of_processes_that_is_not_a_positive_integer_is_refused(tmp_path, jobs):
    with pytest.raises(SimfsError, match="jobs: expected a positive number of processes"):
        run_cases([load_case(case(tmp_path, "one", "access-class SFWA"))], jobs=jobs)
