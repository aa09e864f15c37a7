"""Bad arguments to the Python API's classes are refused where they are given, naming the
class and the field (not an IndexError in numpy, a loop that never ends, or the wrong
resource changed later): from an audit of the public constructors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp
import simpy

from simfs.calibrate import ProfileCalibrator
from simfs.calibrate.calibrator import NotFittedError
from simfs.engine import FluidNetwork, Resource, max_min_rates
from simfs.engine.maxmin import CAP
from simfs.errors import ExperimentError, SimfsError, WorkloadError
from simfs.experiment import Experiment
from simfs.filesystems import system_from_profile
from simfs.filesystems.core import Layout
from simfs.filesystems.core.layout import TargetAllocator
from simfs.filesystems.core.variability import Variability
from simfs.hardware import ClientSpec, ControllerSpec, HddSpec, LinkSpec, RaidSet, ServerSpec, SsdSpec, SwitchSpec
from simfs.systems.profile import load_profile
from simfs.workloads.spec import DirectoryTree, PhaseSpec, WorkloadSpec

NAN = float("nan")
LINK = LinkSpec("link", 1e9, 1e-5, "test")
MIB = 1 << 20


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"stonewall_s": NAN}, "stonewall_s"),  # this one made a simulation run for ever
        ({"stonewall_s": -1.0}, "stonewall_s"),
        ({"bytes_per_rank": -MIB}, "bytes_per_rank"),  # reported a negative bandwidth
        ({"bytes_per_rank": 0}, "bytes_per_rank"),
        ({"bytes_per_rank": 1.5e7}, "bytes_per_rank"),
        ({"transfer_size_bytes": 0}, "transfer_size_bytes"),  # was silently ignored
        ({"segment_count": -2}, "segment_count"),
        ({"op": "frobnicate"}, "op"),  # was run as a write
        ({"op": "create"}, "items_per_rank"),  # a metadata op needs items
        ({"task_offset": -1}, "task_offset"),
    ],
)
def test_a_phase_names_its_bad_field(changes, field):
    arguments = {"op": "write", "bytes_per_rank": 64 * MIB, "transfer_size_bytes": MIB} | changes
    with pytest.raises(WorkloadError, match=f"{field}: expected"):
        PhaseSpec(**arguments)


def test_a_metadata_phase_may_move_no_bytes_and_a_good_phase_passes():
    assert PhaseSpec("create", 0, 1, items_per_rank=10).is_metadata
    assert PhaseSpec("read", 0, 1, items_per_rank=10).is_metadata  # mdtest's read of its files
    assert PhaseSpec("write", 64 * MIB, MIB, stonewall_s=300.0).time_bounded
    assert PhaseSpec("write", np.int64(MIB), MIB).bytes_per_rank == MIB  # numpy integers are whole


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"phases": ()}, "phases"),
        ({"iterations": 0}, "iterations"),
        ({"iterations": 1.5}, "iterations"),
        ({"aggregate": "bogus"}, "aggregate"),
    ],
)
def test_a_workload_names_its_bad_field(changes, field):
    arguments = {"tool": "ior", "command": "ior", "phases": (PhaseSpec("write", MIB, MIB),)} | changes
    with pytest.raises(WorkloadError, match=f"ior: {field}: expected"):
        WorkloadSpec(**arguments)


@pytest.mark.parametrize("field, value", [("depth", 1.5), ("branch", 1.5), ("items_per_directory", NAN), ("loops", 0)])
def test_a_directory_tree_takes_whole_numbers(field, value):
    arguments = {"depth": 1, "branch": 2, "leaf_only": False, "items_per_directory": 1} | {field: value}
    with pytest.raises(WorkloadError, match=f"directory tree: {field}: expected a whole number"):
        DirectoryTree(**arguments)


@pytest.mark.parametrize(
    "arguments, field",
    [
        (((0, 1), -1), "stripe_size_bytes"),  # pieces() looped for ever
        (((0, 1), 0), "stripe_size_bytes"),
        (((0, 1), 4096.0), "stripe_size_bytes"),
        (((), 4096), "targets"),
        (((0, 1, 2, 3), 4096, 2, -8192), "group_bytes"),  # looped for ever too
        (((0, 1, 2, 3), 4096, 2, 0), "group_bytes"),
    ],
)
def test_a_layout_names_its_bad_field(arguments, field):
    with pytest.raises(ValueError, match=f"layout: {field}:"):
        Layout(*arguments)


@pytest.mark.parametrize(
    "field, value",
    [
        ("straggler_slowdown", 0.5),  # stragglers ran twice as fast
        ("straggler_slowdown", 0.0),
        ("straggler_fraction", 5.0),
        ("straggler_fraction", NAN),  # was taken as 0
        ("node_cv", -1.0),
        ("start_jitter_s", NAN),
    ],
)
def test_variability_names_its_bad_field(field, value):
    with pytest.raises(ValueError, match=f"variability: {field}:"):
        Variability(**{field: value})


def test_the_node_factors_mean_is_what_variability_says():
    variability = Variability(node_cv=0.2, straggler_fraction=0.1, straggler_slowdown=4.0)
    assert variability.node_factor_mean == pytest.approx(1 - 0.1 + 0.1 / 4)
    samples = variability.node_factors(np.random.default_rng(3), 400_000)
    standard_error = samples.std() / math.sqrt(len(samples))
    assert abs(samples.mean() - variability.node_factor_mean) < 4 * standard_error
    assert Variability(start_jitter_s=2.0).start_jitter_mean_s == 1.0


def test_a_capacity_change_names_a_resource_of_another_network():
    network = FluidNetwork(simpy.Environment())
    network.add(Resource("a", 1.0))
    last = network.add(Resource("b", 1.0))
    with pytest.raises(ValueError, match="resource: 'x' is not in this network"):
        network.set_capacity(Resource("x", 1.0), 1.0)  # index -1 throttled 'b'
    network.set_capacity(last, 2.0)


@pytest.mark.parametrize(
    "field, value",
    [
        ("stripe_size_bytes", -1),
        ("rpc_latency_s", 0.0),
        ("rpc_size_bytes", 0),
        ("max_rpcs_in_flight", 0),
        ("metadata_latency_s", NAN),
        ("stripe_count", 0),
    ],
)
def test_client_io_names_its_bad_field(field, value):
    io = system_from_profile(load_profile("crtdc-lfs3")).io
    with pytest.raises(ValueError, match=f"client io: {field}:"):
        dataclasses.replace(io, **{field: value})


@pytest.mark.parametrize(
    "setting, value",
    [
        ("max_evaluations", 2.5),  # scipy's optimiser spun for ever
        ("max_evaluations", 0),
        ("min_sensitivity", NAN),  # switched the identifiability check off unseen
        ("prior_weight", -1.0),  # pushed parameters away from the profile
        ("min_sigma", NAN),
        ("max_interval_ratio", NAN),
        ("scan_points", 2.5),
        ("free", []),  # fitted every declared parameter
        ("free", "ost.hdd.sustained_Bps"),  # read letter by letter
    ],
)
def test_a_calibrator_names_its_bad_setting_before_fitting(setting, value):
    calibrator = ProfileCalibrator("crtdc-lfs4", **{setting: value})
    with pytest.raises(SimfsError, match=f"calibrator: {setting}: expected"):
        calibrator.fit(None)


def test_an_unfitted_calibrator_has_no_fitted_attributes():
    calibrator = ProfileCalibrator("crtdc-lfs4")
    assert not hasattr(calibrator, "summary_") and not hasattr(calibrator, "params_")
    with pytest.raises(NotFittedError, match="not fitted yet"):
        calibrator.fitted_profile()


@pytest.mark.parametrize(
    "build, field",
    [
        (lambda: HddSpec(1e8, NAN, 7200), "average_seek_s"),  # NaN seeks failed later, blaming other fields
        (lambda: HddSpec(math.inf), "sustained_Bps"),
        (lambda: LinkSpec("l", 1e9, math.inf, "test"), "latency_s"),
        (lambda: SsdSpec(1e9, 1e9, read_iops=NAN), "read_iops"),  # meant "no IOPS bound" silently
        (lambda: SsdSpec(1e9, 1e9, preconditioned="no"), "preconditioned"),  # a truthy string
        (lambda: ControllerSpec(1e9, cache_bytes=NAN), "cache_bytes"),
        (lambda: ControllerSpec(1e9, cache_segments=1.5), "cache_segments"),
        (lambda: ServerSpec(LINK, 1e9, rpc_service_s=NAN), "rpc_service_s"),  # was taken as 0
        (lambda: ServerSpec(LINK, 1e9, threads=1.5), "threads"),
        (lambda: ClientSpec(1.5, 1 << 30, LINK, 1e9, 1e9), "cores"),
        (lambda: ClientSpec(2, 1 << 30, LINK, math.inf, 1e9), "copy_write_Bps"),
        (lambda: ClientSpec(2, 1 << 30, LINK, 1e9, 1e9, call_overhead_s=NAN), "call_overhead_s"),
        (lambda: RaidSet("raid5", 2.5, HddSpec(1e8)), "disk_count"),
        (lambda: RaidSet("raid5", 5, HddSpec(1e8), chunk_bytes=1.5), "chunk_bytes"),
        (lambda: SwitchSpec(1.5, 1e9), "port_count"),
        (lambda: SwitchSpec(4, 1e9, blocking_factor=math.inf), "blocking_factor"),
    ],
)
def test_a_hardware_spec_names_its_bad_field(build, field):
    with pytest.raises(ValueError, match=f": {field}:"):
        build()


@pytest.mark.parametrize(
    "field, value",
    [
        ("stripe_count", 1.5),
        ("overstripe_count", 2.5),
        ("stripe_offset", 0.5),
        ("stripe_size", 65536.0),
        ("stripe_count", NAN),
    ],
)
def test_an_experiment_takes_whole_stripe_settings(field, value):
    with pytest.raises(ExperimentError, match=f"{field}: expected an integer"):
        Experiment(**{field: value})


@pytest.mark.parametrize(
    "capacity, rate_cap, share, field",
    [
        ([0.0], [math.inf, math.inf], None, "capacity"),  # gave rates of 0 without a word
        ([NAN], [math.inf, math.inf], None, "capacity"),  # blamed an unbounded flow
        ([1.0, 2.0], [math.inf, math.inf], None, "capacity"),  # one value too many
        ([1.0], [NAN, math.inf], None, "rate_cap"),  # NaN read as no cap
        ([1.0], [-1.0, math.inf], None, "rate_cap"),
        ([1.0], [math.inf, math.inf], [0.0, 1.0], "share"),
    ],
)
def test_max_min_rates_checks_its_inputs(capacity, rate_cap, share, field):
    weights = sp.csc_array(np.array([[1.0, 1.0]]))
    arrays = [np.array(capacity), np.array(rate_cap), None if share is None else np.array(share)]
    with pytest.raises(ValueError, match=f"^{field}: expected"):
        max_min_rates(weights, *arrays)


def test_max_min_rates_still_shares_by_the_rules():
    rate, limiter = max_min_rates(sp.csc_array(np.array([[1.0, 1.0]])), np.array([2.0]), np.array([math.inf, 0.5]))
    assert rate.tolist() == [1.5, 0.5] and limiter.tolist() == [0, CAP]


@pytest.mark.parametrize(
    "options, message", [({"kind": 99}, "^kind: flow"), ({"kind": -1}, "^kind: flow"), ({"tag": -1}, "^flow '': tag:")]
)
def test_a_transfer_names_a_bad_kind_or_tag(options, message):
    network = FluidNetwork(simpy.Environment())
    resource = network.add(Resource("a", 1.0))
    with pytest.raises(ValueError, match=message):
        network.transfer(1.0, [(resource, 1.0)], **options)


def test_an_allocator_names_an_empty_pool_and_a_seed_given_for_a_generator():
    with pytest.raises(ValueError, match="server_of_target: an allocator needs at least one target"):
        TargetAllocator([], -1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng: expected a numpy Generator"):
        TargetAllocator([0, 0], -1, 0)
    with pytest.raises(ValueError, match="allocator: stripe_offset: expected a whole number"):
        TargetAllocator([0, 0], 1.5, np.random.default_rng(0))


def test_engine_parts_take_numpy_numbers_and_refuse_what_would_break_the_clock():
    from simfs.engine.barrier import Barrier
    from simfs.engine.station import SharedStation, Station

    env = simpy.Environment()
    assert Resource("r", np.int64(5)).capacity == 5  # was refused as "not positive finite"
    assert Station(env, "s", servers=np.int64(2)).servers == 2
    with pytest.raises(ValueError, match="capacity: resource 'r'"):
        Resource("r", True)
    with pytest.raises(ValueError, match="barrier: parties: expected a whole number"):
        Barrier(env, 1.5)  # would never release
    station = Station(env, "s")
    with pytest.raises(ValueError, match="at: station 's' books arrivals from now on"):
        station.reserve(1.0, at=NAN)
    with pytest.raises(ValueError, match="then_s: station 'shared'"):
        SharedStation(env, "shared").serve(1.0, then_s=-10.0)  # ran SimPy's clock backwards


def test_a_calibrator_gives_and_takes_its_settings_as_an_estimator_does():
    import inspect

    calibrator = ProfileCalibrator("crtdc-lfs4", bootstrap=0, starts=1)
    settings = calibrator.get_params()
    # Every constructor argument, and only those (what sklearn.base.clone relies on).
    assert list(settings) == list(inspect.signature(ProfileCalibrator).parameters)
    assert settings["bootstrap"] == 0 and settings["starts"] == 1
    copy = ProfileCalibrator(**settings)
    assert copy.get_params() == settings
    assert copy.set_params(starts=3) is copy and copy.starts == 3
    with pytest.raises(SimfsError, match="calibrator: bootstraps: not a setting"):
        copy.set_params(bootstraps=20)
    with pytest.raises(SimfsError, match="calibrator: scan_points: expected"):
        ProfileCalibrator("crtdc-lfs4", scan_points=-1).fit(None)


def test_a_lustre_profile_names_a_stripe_count_of_0():
    # Read as at least -1, 0 reached the client-io check and its traceback (a review find).
    profile = load_profile("crtdc-lfs3").with_overrides({"lustre.stripe_count": 0})
    with pytest.raises(SimfsError, match="lustre.stripe_count: expected -1 \\(every OST\\) or at least 1, got 0"):
        system_from_profile(profile)


def test_the_runner_pace_hook_names_a_bad_value(monkeypatch):
    from simfs.runner.rank import _pace_hook

    monkeypatch.setenv("SIMFS_RUNNER_PACE", "-1")
    with pytest.raises(ValueError, match="SIMFS_RUNNER_PACE: expected seconds >= 0, got '-1'"):
        _pace_hook()
    monkeypatch.setenv("SIMFS_RUNNER_PACE", "0.001")
    assert _pace_hook() == 0.001
