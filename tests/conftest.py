"""Shared helpers for the test suite."""

from __future__ import annotations

import math
import signal

import pytest
import simpy
from hypothesis import HealthCheck, settings

from simfs.engine import FluidNetwork, Resource

# No test may depend on the machine's speed: hypothesis's 200 ms per-example deadline
# failed a run on a loaded 2-core machine (issue 17), and the too_slow health check is
# a timing check too.  Every property test inherits this profile.
settings.register_profile("simfs", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("simfs")

# A shell without job control starts background commands (`pytest ... &` in a script)
# with SIGINT ignored, and an ignored signal stays ignored across exec: every `simfs
# measure` a test starts would then ignore the Ctrl-C the test sends it, as the runner
# must (nohup).  The suite tests the runner, not its caller's shell: give Ctrl-C back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config) -> None:
    """With pytest-xdist workers, only ``--dist loadgroup`` keeps the tests that must
    share a worker together (the ``xdist_group`` marks: the live testbed, one example's
    run and the checks of its output, the whole validation); any other mode, and
    loadgroup under pytest 9.2 or later, where pytest-xdist 3.8 no longer groups
    (pytest-dev/pytest-xdist#1386), would run two testbeds at once.  setup.cfg asks for
    pytest below 9.2; lift both once xdist groups again under a newer pytest."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if config.option.dist != "loadgroup":
        raise pytest.UsageError(
            f"--dist {config.option.dist}: give --dist loadgroup with -n (tests marked xdist_group must share a worker)"
        )
    if tuple(pytest.version_tuple[:2]) >= (9, 2):
        raise pytest.UsageError(
            f"--dist loadgroup: pytest {pytest.__version__} stops pytest-xdist grouping the tests that must share "
            "a worker (pytest-dev/pytest-xdist#1386); install pytest<9.2 (pip install -e '.[test]') or run without -n"
        )


def run_flows(capacities, flows, starts=None, **network_options):
    """Run flows ``{"work", "path": [(resource_index, weight)], "cap", "share"}`` on
    resources with ``capacities``, flow i starting at ``starts[i]`` (0 without); returns
    (end times per flow, network)."""
    env = simpy.Environment()
    network = FluidNetwork(env, **network_options)
    resources = [network.add(Resource(f"r{i}", c)) for i, c in enumerate(capacities)]
    ends = [math.nan] * len(flows)

    def process(index, flow):
        if starts:
            yield env.timeout(starts[index])
        done = yield network.transfer(
            flow["work"],
            [(resources[j], w) for j, w in flow["path"]],
            rate_cap=flow.get("cap", math.inf),
            share=flow.get("share", 1.0),
        )
        ends[index] = done.end_time

    for index, flow in enumerate(flows):
        env.process(process(index, flow))
    env.run()
    return ends, network
