"""SPECsfs2008: the command line, the open-loop processes against queueing theory, and
how its response time is compared with a measurement."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import simfs
from simfs import cost
from simfs.errors import WorkloadError
from simfs.filesystems import system_from_profile
from simfs.predict import NotSimulated, _point
from simfs.systems.profile import load_profile
from simfs.workloads import parse_workload
from simfs.workloads.specsfs import SERVICE_CLASS, SFS2008_MIX
from simfs.workloads.steady_state import (
    MIN_OPEN_LOOP_WINDOW_S,
    OPEN_LOOP_WARMUP_S,
    SAMPLE_OPEN_LOOP_OPS,
    steady_state_sample,
)

SYSTEM = "panasas-as9"


def _metadata_spec():
    return system_from_profile(load_profile(SYSTEM)).metadata


def _mean_demand_s(scale: float = 1.0) -> float:
    """The mix's mean core seconds per operation (each class's ``cores / rate``)."""
    spec = _metadata_spec()
    total = sum(SFS2008_MIX.values())
    return sum(share / total * spec.demand_s(SERVICE_CLASS[name]) for name, share in SFS2008_MIX.items()) / scale


# -- the command line ---------------------------------------------------------------------------
def test_defaults_are_specsfs2008s_and_the_mix_sums_to_100():
    spec = parse_workload("specsfs2008 --load 7894")
    (phase,) = spec.phases
    assert (phase.load_per_s, phase.runtime_s, phase.warmup_s) == (7894.0, 300.0, 300.0)
    assert phase.is_open_loop and not phase.is_metadata and phase.label == "nfs ops"
    assert sum(SFS2008_MIX.values()) == 100 and set(SERVICE_CLASS) == set(SFS2008_MIX)
    spec = parse_workload("specsfs2008 --load=500.5 --runtime 10 --warmup=0")
    assert (spec.phases[0].load_per_s, spec.phases[0].runtime_s, spec.phases[0].warmup_s) == (500.5, 10.0, 0.0)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("specsfs2008", "--load OPS is required"),
        ("specsfs2008 --load", "--load needs a value"),
        ("specsfs2008 --load many", "--load many: expected a finite number greater than 0, got 'many'"),
        ("specsfs2008 --load 0", "--load 0: expected a finite number greater than 0"),
        ("specsfs2008 --load nan", "--load nan: expected a finite number greater than 0"),
        ("specsfs2008 --load inf", "--load inf: expected a finite number greater than 0"),
        ("specsfs2008 --load 100 --runtime 0", "--runtime 0: expected a finite number greater than 0"),
        ("specsfs2008 --load 100 --warmup -1", "--warmup -1: expected a finite number of at least 0"),
        ("specsfs2008 --load 100 --procs 4", "unknown option '--procs'"),
    ],
)
def test_bad_command_lines_name_the_option(command, message):
    with pytest.raises(WorkloadError, match=message):
        parse_workload(command)


# -- the sample and the cost --------------------------------------------------------------------
def test_a_long_run_is_simulated_on_a_sample_that_says_so():
    spec = parse_workload("specsfs2008 --load 20000")
    sampled, notes = steady_state_sample(spec, 100, request_level_writes=False)
    (phase,) = sampled.phases
    assert phase.runtime_s == pytest.approx(SAMPLE_OPEN_LOOP_OPS / 20000) and phase.warmup_s == OPEN_LOOP_WARMUP_S
    assert notes == (
        "nfs ops: an open-loop steady state: simulated 0.5 s of the 300 s warm-up and 3 s of the 300 s measured interval",
    )
    short = parse_workload("specsfs2008 --load 20000 --runtime 1 --warmup 0.1")
    assert steady_state_sample(short, 100, request_level_writes=False) == (short, ())
    # A huge load still gets an interval its processes' waits fit in.
    (huge,) = steady_state_sample(parse_workload("specsfs2008 --load 1e9"), 100, request_level_writes=False)[0].phases
    assert huge.runtime_s == MIN_OPEN_LOOP_WINDOW_S


def test_the_cost_of_a_huge_load_is_bounded_by_the_processes():
    # One operation in flight a process: no more than one a round trip each, whatever the
    # load asked (1e12 op/s was refused as "about 93 days").
    (phase,) = parse_workload("specsfs2008 --load 1e12 --runtime 1 --warmup 0").phases
    estimate = cost.estimate(1500, 10, [phase], 1, 100, False, metadata_latency_s=5e-4)
    assert estimate.metadata_requests == 3_000_000


def test_the_cost_counts_one_request_per_operation_offered():
    (phase,) = parse_workload("specsfs2008 --load 1000 --runtime 4 --warmup 1").phases
    estimate = cost.estimate(10, 2, [phase], 1, 20, False)
    assert estimate.metadata_requests == 5000 and estimate.data_rank_phases == 0


# -- the processes against theory -----------------------------------------------------------------
def _run(load: float, nodes: int, ppn: int, *, runtime: float, warmup: float, overrides=None, seed: int = 0):
    result = simfs.simulate(
        SYSTEM,
        f"specsfs2008 --load {load} --runtime {runtime} --warmup {warmup}",
        nodes=nodes,
        ppn=ppn,
        overrides=overrides,
        seed=seed,
    )
    (row,) = result.phase_metrics()
    return row


def test_at_a_light_load_the_response_is_the_round_trip_plus_one_operations_work():
    # 400 op/s on 60 cores: a request almost never shares a core, so each takes the
    # latency plus its class's cores / rate; the achieved load is the requested one
    # within Poisson noise (8,000 operations: 3 sigma is 3.4%).
    row = _run(400, 2, 5, runtime=20, warmup=0)
    latency = system_from_profile(load_profile(SYSTEM)).io.metadata_latency_s
    assert row["response_time_s"] == pytest.approx(latency + _mean_demand_s(), rel=0.01)
    assert row["ops_per_s"] == pytest.approx(400, rel=0.034)
    assert row["mode"] == "request" and row["ops"] == pytest.approx(8000, rel=0.034)


def test_past_saturation_the_cores_carry_their_capacity_and_littles_law_holds():
    # Rates cut 100-fold: the 60 cores serve 60 / E[demand] op/s, far below the 5,000
    # requested, so all 200 processes are always waiting for an answer (a closed
    # system): throughput x response = processes (Little's law).
    scale = 100.0
    rates = {f"director.{op}_per_s": value for op, value in _director_rates(scale).items()}
    row = _run(5000, 4, 50, runtime=20, warmup=2, overrides=rates)
    capacity = _metadata_spec().cores / _mean_demand_s(1 / scale)
    assert row["ops_per_s"] == pytest.approx(capacity, rel=0.03)
    assert row["ops_per_s"] * row["response_time_s"] == pytest.approx(200, rel=0.03)
    assert row["bottleneck"] == "director"


def test_far_past_saturation_the_sample_still_measures_the_capacity_and_littles_law():
    # 2,000 times the capacity asked: the measured interval is the shortest sample (1 s),
    # longer than the processes' waits; operations are counted as they end in it, so the
    # ones still waiting at its end do not see a server the others have left.
    rates = {f"director.{op}_per_s": value for op, value in _director_rates(100.0).items()}
    row = _run(5_000_000, 4, 50, runtime=300, warmup=300, overrides=rates)
    capacity = _metadata_spec().cores / _mean_demand_s(1 / 100.0)
    assert row["ops_per_s"] == pytest.approx(capacity, rel=0.05)
    assert row["ops_per_s"] * row["response_time_s"] == pytest.approx(200, rel=0.05)


def _director_rates(scale: float) -> dict[str, float]:
    spec = _metadata_spec()
    return {op: spec.rate(op) / scale for op in ("create", "open", "close", "stat", "remove")}


def test_sixty_cores_barely_queue_below_their_knee_and_queue_past_it():
    # Rates cut 50-fold: capacity 60 / E[demand], about 3,500 op/s.  At 57% of it an
    # M/M/60 server almost never makes a request wait (Erlang C below 1%), so the
    # response is the light-load one; at 130% all 200 processes wait (Little's law).
    rates = {f"director.{op}_per_s": value for op, value in _director_rates(50.0).items()}
    capacity = _metadata_spec().cores / _mean_demand_s(1 / 50.0)
    light, busy, over = (
        _run(round(load), 4, 50, runtime=10, warmup=1, overrides=rates)["response_time_s"]
        for load in (0.057 * capacity, 0.57 * capacity, 1.3 * capacity)
    )
    assert busy == pytest.approx(light, rel=0.02)
    assert over > 3 * light


def test_a_seed_repeats_a_run_and_another_seed_draws_other_arrivals():
    first, again, other = (_run(2000, 2, 10, runtime=2, warmup=0.2, seed=seed) for seed in (0, 0, 1))
    assert first == again
    assert first["ops"] != other["ops"]


# -- comparing with a measurement ---------------------------------------------------------------
def _row(**fields):
    base = {
        "source": "x.csv:2",
        "tool": "specsfs2008",
        "workload": "specsfs2008 --load 7894",
        "nodes": 10,
        "ppn": 150,
        "settings": "",
        "over": "",
        "phase": "nfs ops",
        "metric": "clat_mean",
        "value": 0.0008,
        "uncertainty": math.nan,
    }
    return pd.Series({**base, **fields})


def test_a_mean_response_time_is_a_point_of_specsfs2008_only():
    assert _point(0, _row()).metric == "clat_mean"
    with pytest.raises(NotSimulated, match="simulates it for specsfs2008 only"):
        _point(0, _row(tool="ior", workload="ior -t 1m -b 1g -w", phase="write"))
    with pytest.raises(NotSimulated, match="a mean at one load, not the peak of a sweep"):
        _point(0, _row(over="nodes=1,2"))


def test_a_case_asking_a_response_time_of_another_tool_is_one_line_before_any_run(tmp_path):
    from simfs.errors import SimfsError
    from simfs.validate import find_cases, run_cases

    case = tmp_path / "ior-clat.toml"
    case.write_text(
        '[case]\nname = "x"\nsystem = "crtdc-lfs3"\nworkload = "ior -w -t 1m -b 16m"\nphase = "write"\n'
        'metric = "clat_mean"\nsplit = "held-out"\ntolerance = 0.25\nsource = "a test"\nsettings = { ppn = 1 }\n\n'
        "[[points]]\nnodes = 2\nvalue = 0.001\n"
    )
    with pytest.raises(
        SimfsError, match=r"points\[0\]: metric 'clat_mean' of ior: simfs simulates it for specsfs2008 only"
    ):
        run_cases(find_cases([case]))


def test_repeats_give_the_spread_of_the_response_time():
    table = simfs.repeat(SYSTEM, "specsfs2008 --load 2000 --runtime 2 --warmup 0.2", 3, nodes=2, ppn=10)
    (row,) = table.to_dict("records")
    assert row["repeats"] == 3
    assert row["response_time_s_min"] <= row["response_time_s_median"] <= row["response_time_s_max"]
    assert row["response_time_s_min"] < row["response_time_s_max"]  # three seeds, three arrival streams


def test_a_shared_host_reads_no_busy_share_for_an_open_loop_phase():
    # Its requests reach the host's cores through the metadata service, as mdtest's do.
    result = simfs.simulate("testbed-moosefs", "specsfs2008 --load 300 --runtime 2 --warmup 0.2", nodes=2, ppn=2)
    (row,) = result.phase_metrics()
    assert math.isnan(row.get("host_cpu_busy", math.nan))


def test_a_load_too_light_to_answer_in_the_interval_says_so_and_shows_a_zero_rate():
    from simfs.report.tables import wide_table

    result = simfs.simulate("panasas-as9-fitted", "specsfs2008 --load 0.01 --runtime 1", nodes=1)
    row = result.phases.iloc[0]
    assert row["ops"] == 0 and math.isnan(row["response_time_s"])
    assert any("no operation ended in the 1 s measured interval" in note for note in result.notes)
    table = wide_table(result.phases, ["nodes"])
    assert table.loc[0, "nfs ops ops/s"] == 0.0
    # A load that is answered says nothing of the kind.
    answered = simfs.simulate("panasas-as9-fitted", "specsfs2008 --load 100 --runtime 1", nodes=1)
    assert not any("no operation ended" in note for note in answered.notes)


def test_repeats_print_response_times_in_ms_and_say_how_many_runs_a_note_is_of(capsys):
    from simfs.cli import main

    argv = ["simulate", "--system", "panasas-as9-fitted", "--workload", "specsfs2008 --load 0.3 --runtime 2"]
    assert main([*argv, "--nodes", "1", "--repeats", "6"]) == 0
    captured = capsys.readouterr()
    header, row = captured.out.splitlines()[:2]
    columns = dict(zip(header.split(), row.split()))
    table = simfs.repeat("panasas-as9-fitted", "specsfs2008 --load 0.3 --runtime 2", 6)
    assert float(columns["response_ms_median"]) == pytest.approx(table["response_time_s_median"][0] * 1e3, abs=5e-4)
    seen = table.attrs["notes"][-1]
    assert seen.startswith("nfs ops: no operation ended in the 2 s measured interval")
    assert seen.endswith("repeats)") and f"note: {seen}" in captured.err
