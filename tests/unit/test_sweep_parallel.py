"""Sweeps in local processes and on a Dask cluster give the serial sweep's rows."""

import pytest

import simfs
from simfs import parallel
from simfs.cli import main
from simfs.errors import SimfsError

WORKLOAD = "ior -a POSIX -F -t 1m -b 64m"
VARY = {"nodes": [1, 2, 4], "stripe_count": [1, 4], "oss.count": [2, 4]}


@pytest.fixture(scope="module")
def serial():
    return simfs.sweep("crtdc-lfs3", WORKLOAD, VARY)


def test_local_processes_give_the_serial_rows(serial):
    calls = []
    parallel = simfs.sweep("crtdc-lfs3", WORKLOAD, VARY, jobs=2, progress=lambda done, total: calls.append(done))
    assert parallel.equals(serial)
    assert calls == list(range(1, 13))  # every point reported once, whatever order they finish in


def test_a_dask_local_cluster_gives_the_serial_rows(serial):
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert simfs.sweep("crtdc-lfs3", WORKLOAD, VARY, scheduler=client).equals(serial)
        # By address, as simfs sweep --scheduler tcp://host:port connects.
        assert simfs.sweep("crtdc-lfs3", WORKLOAD, VARY, scheduler=cluster.scheduler_address).equals(serial)


def test_the_cli_sweep_prints_the_same_table_with_jobs(capsys):
    argv = ["sweep", "--system", "crtdc-lfs3", "--workload", WORKLOAD, "--vary", "nodes=1,2,4", "--no-progress"]
    assert main(argv) == 0
    one = capsys.readouterr().out
    assert main([*argv, "--jobs", "2"]) == 0
    assert capsys.readouterr().out == one


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"jobs": 0}, "sweep: jobs: expected a positive number of processes, got 0"),
        ({"jobs": 2, "scheduler": "tcp://127.0.0.1:1"}, "give jobs (local processes) or scheduler"),
        # Addresses dask.distributed cannot parse (a traceback from its ValueError before).
        ({"scheduler": "bogus"}, "sweep: scheduler bogus: expected a Dask scheduler's address, tcp://HOST:PORT"),
        ({"scheduler": "localhost:8786x"}, "sweep: scheduler localhost:8786x: expected"),
    ],
)
def test_bad_parallel_settings_are_refused(settings, message):
    with pytest.raises(SimfsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        simfs.sweep("crtdc-lfs3", WORKLOAD, {"nodes": [1, 2]}, **settings)


@pytest.mark.parametrize("values", ["1,,2", "1,2,"])
def test_an_empty_value_in_a_vary_list_is_refused(capsys, values):
    # It was dropped without a word.
    argv = ["sweep", "--system", "crtdc-lfs3", "--workload", WORKLOAD, "--vary", f"nodes={values}", "--no-progress"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"simfs: error: --vary nodes={values}: an empty value in the list; expected values such as 1,2,4\n"
    )


def test_a_protocol_dask_does_not_know_is_one_line(capsys):
    # Any protocol name passes the address's form (plugins add some: ucxx://); dask's own
    # refusal of an unknown one was a traceback.
    pytest.importorskip("dask.distributed")
    argv = ["sweep", "--system", "crtdc-lfs3", "--workload", WORKLOAD, "--vary", "nodes=1,2", "--no-progress"]
    assert main([*argv, "--scheduler", "foo://x:1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("simfs: error: --scheduler foo://x:1: not a Dask scheduler's address (") and err.count("\n") == 1
    )


def test_an_unreachable_scheduler_is_one_line(monkeypatch, capsys):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT_S", 1.0)
    argv = ["sweep", "--system", "crtdc-lfs3", "--workload", WORKLOAD, "--vary", "nodes=1,2", "--no-progress"]
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "--scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler" in err and err.count("\n") == 1


def test_the_runs_notes_come_back_once_each_with_the_points_they_are_of(capsys):
    # A SPECsfs2008 run is sampled: its note gives the interval simulated, which here
    # depends on the load (the time 60,000 operations take, at least 1 s, at most 1.5 s).
    workload = "specsfs2008 --load {load} --runtime 1.5 --warmup 1"
    vary = {"load": [20_000, 100_000], "nodes": [1]}
    serial = simfs.sweep("panasas-as9-fitted", workload, vary)
    assert serial.attrs["notes"] == (
        "nfs ops: an open-loop steady state: simulated 0.5 s of the 1 s warm-up and 1.5 s of the 1.5 s "
        "measured interval (load=20000, nodes=1)",
        "nfs ops: an open-loop steady state: simulated 0.5 s of the 1 s warm-up and 1 s of the 1.5 s "
        "measured interval (load=100000, nodes=1)",
    )
    assert simfs.sweep("panasas-as9-fitted", workload, vary, jobs=2).attrs["notes"] == serial.attrs["notes"]
    # A note of every point is said once, without them; so are a repeat's.
    same = simfs.sweep("panasas-as9-fitted", workload, {"load": [100_000], "nodes": [1, 2]})
    assert same.attrs["notes"] == (
        "nfs ops: an open-loop steady state: simulated 0.5 s of the 1 s warm-up and 1 s of the 1.5 s measured interval",
    )
    assert (
        simfs.repeat("panasas-as9-fitted", "specsfs2008 --load 100000 --runtime 1.5 --warmup 1", 2).attrs["notes"]
        == same.attrs["notes"]
    )
    argv = ["sweep", "--system", "panasas-as9-fitted", "--workload", workload, "--vary", "load=20000,100000"]
    assert main([*argv, "--no-progress"]) == 0
    assert capsys.readouterr().err.count("note: nfs ops: an open-loop steady state") == 2
