"""The live runner's promise under faults: the record written, the run directory removed.

Each test injects one fault into a real ``simfs measure`` process: a signal placed at an
exact point by the runner's test hooks (``SIMFS_RUNNER_FAULT``, ``SIMFS_RUNNER_PAUSE``,
which wait for the test instead of the test waiting for a moment), a killed coordinator
or rank, a limit, a bad path, a missing MPI library.  Nothing here measures time: the
deadlines are hang guards only.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simfs.errors import WorkloadError
from simfs.runner import plan_workload
from simfs.runner.run import KILLED

DD = ["dd", "bs=1M", "count=4"]
#: Hang guards (seconds), not timings: each is far beyond what the step takes.
GUARD = 60


class Run:
    """``simfs measure`` started in its own session (its process group is the test's to signal)."""

    def __init__(self, tmp_path: Path, np: int, workload: list[str], env: dict[str, str], *extra: str, **popen) -> None:
        self.target = tmp_path / "target"
        self.target.mkdir()
        self.record = tmp_path / "run.json"
        self.flag = tmp_path / "flag"
        args = ["measure", "--dir", str(self.target), "--np", str(np), "--json", str(self.record), *extra, "--"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "simfs.cli", *args, *workload],
            env={**os.environ, "SIMFS_RUNNER_FLAG": str(self.flag), **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            **popen,
        )

    def wait_for_flag(self) -> None:
        """Until a hook says it is where the test wants it."""
        deadline = time.monotonic() + GUARD
        while not self.flag.exists():
            assert self.process.poll() is None, self.process.communicate()[1]
            assert time.monotonic() < deadline, "the hook was never reached"
            time.sleep(0.01)

    def finish(self) -> tuple[int, str]:
        _, errors = self.process.communicate(timeout=GUARD)
        return self.process.returncode, errors

    def saved(self) -> dict:
        return json.loads(self.record.read_text())

    def kill_all(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.wait()


@pytest.fixture
def runs():
    started: list[Run] = []

    def start(*args, **kwargs) -> Run:
        run = Run(*args, **kwargs)
        started.append(run)
        return run

    yield start
    for run in started:  # whatever the test did, no process of it outlives it
        run.kill_all()


def _left(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _one_line(errors: str, prefix: str) -> str:
    lines = errors.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), errors
    return lines[0]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # The command name is in parentheses and may hold spaces: split after it.
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for init, which may not reap here)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- 1. a second signal while the run cleans up ----------------------------------------------
@pytest.mark.parametrize(
    ("point", "number", "group"),
    [
        ("before_remove", signal.SIGINT, True),  # Ctrl-C twice at a terminal
        ("before_remove", signal.SIGTERM, False),  # kill PID, after a Ctrl-C
        ("before_outputs", signal.SIGINT, True),
    ],
)
def test_a_second_signal_during_the_cleanup_cannot_cut_it_short(tmp_path, runs, point, number, group):
    # The first Ctrl-C comes from rank 0 in the middle of its writes; the second lands
    # exactly where the run directory is about to be removed, or the record written.
    env = {"SIMFS_RUNNER_FAULT": "0:write:2:SIGINT", "SIMFS_RUNNER_PAUSE": point}
    run = runs(tmp_path, 2, DD, env)
    run.wait_for_flag()
    if group:
        os.killpg(run.process.pid, number)
    else:
        run.process.send_signal(number)
    code, errors = run.finish()
    assert code == 130
    _one_line(errors, "simfs: interrupted: rank 0: interrupted")
    assert _left(run.target) == []
    assert run.saved()["status"] == "interrupted"


# -- 2. the coordinator killed, or a rank stopped alone --------------------------------------
def test_ranks_remove_the_run_directory_when_their_coordinator_is_killed(tmp_path, runs):
    # Rank 1 waits in its writes (its file open), rank 0 finishes its phase and waits for
    # the coordinator; then the coordinator is SIGKILLed, so no Python cleanup runs in it.
    run = runs(tmp_path, 2, DD, {"SIMFS_RUNNER_FAULT": "1:write:2:PAUSE"})
    run.wait_for_flag()
    ranks = _children(run.process.pid)
    assert len(ranks) == 2
    run.process.kill()
    run.process.wait()
    deadline = time.monotonic() + GUARD
    while any(_running(pid) for pid in ranks):
        assert time.monotonic() < deadline, "orphaned ranks still running"
        time.sleep(0.02)
    assert _left(run.target) == []
    saved = run.saved()  # the record written when the run started says what happened
    assert saved["status"] == "failed" and saved["reason"] == KILLED and saved["phases"] == []


def test_sigterm_to_one_rank_stops_the_run_cleanly(tmp_path, runs):
    run = runs(tmp_path, 2, DD, {"SIMFS_RUNNER_FAULT": "1:write:2:PAUSE"})
    run.wait_for_flag()
    # Rank 1 alone, the rank paused in its writes (its hook wrote its process ID): rank 0
    # may still be writing on a busy machine, and a signal to it would name rank 0.
    paused = int(run.flag.read_text())
    assert paused in _children(run.process.pid)
    os.kill(paused, signal.SIGTERM)
    code, errors = run.finish()
    assert code == 130
    _one_line(errors, "simfs: interrupted: rank 1: interrupted")
    assert _left(run.target) == []
    assert run.saved()["status"] == "interrupted"


# -- 3. a signal after the last phase --------------------------------------------------------
def test_a_signal_after_the_last_phase_leaves_an_ok_run(tmp_path, runs):
    # Rank 0 has finished every phase when it sends the coordinator SIGINT, and waits
    # until the coordinator has taken it before it says it is done.
    run = runs(tmp_path, 2, DD, {"SIMFS_RUNNER_FAULT": "0:exit:0:SIGINT"})
    code, errors = run.finish()
    assert code == 0, errors
    saved = run.saved()
    assert saved["status"] == "ok" and saved["reason"] == "SIGINT came after the last phase"
    assert [p["op"] for p in saved["phases"]] == ["write", "read"]
    assert _left(run.target) == []


# -- 4. a trace that cannot be written -------------------------------------------------------
def test_a_trace_that_cannot_be_written_keeps_the_record(tmp_path, runs):
    trace = tmp_path / "ranks.csv"
    run = runs(tmp_path, 2, DD, {"SIMFS_RUNNER_PAUSE": "before_outputs"}, "--trace", str(trace))
    run.wait_for_flag()
    trace.mkdir()  # the path, fine when checked, cannot be written now
    run.flag.unlink()  # the hook goes on
    code, errors = run.finish()
    assert code == 2
    line = _one_line(errors, f"simfs: error: {trace}: cannot write")
    saved = run.saved()
    assert saved["status"] == "ok" and [p["op"] for p in saved["phases"]] == ["write", "read"]
    assert saved["trace"] is None and saved["trace_error"] == line.removeprefix("simfs: error: ")
    assert _left(run.target) == []
    assert _left(tmp_path) == ["ranks.csv", "run.json", "target"]  # no partial file left


# -- 5. more processes than the limits allow -------------------------------------------------
def _few_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def test_more_processes_than_open_files_allow_are_refused_before_anything(tmp_path, runs):
    run = runs(tmp_path, 100, DD, {}, preexec_fn=_few_open_files)
    code, errors = run.finish()
    assert code == 2
    assert "ulimit -n" in _one_line(errors, "simfs: error: --np 100: ")
    assert _left(run.target) == [] and not run.record.exists()


def test_more_processes_than_the_process_limit_allows_are_refused(tmp_path, monkeypatch, capsys):
    from simfs.cli import main

    # As root the kernel ignores RLIMIT_NPROC (and so does the check): pretend to be a user.
    real = resource.getrlimit
    monkeypatch.setattr(os, "getuid", lambda: 4242)
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (20, 20) if which == resource.RLIMIT_NPROC else real(which)
    )
    assert main(["measure", "--dir", str(tmp_path), "--np", "30", "--", *DD]) == 2
    assert "ulimit -u" in _one_line(capsys.readouterr().err, "simfs: error: --np 30: ")
    assert _left(tmp_path) == []


def test_a_rank_that_cannot_be_started_stops_the_others_and_leaves_nothing(tmp_path, runs):
    # Starting rank 2 fails as fork does under ulimit -u; ranks 0 and 1 are running.
    run = runs(tmp_path, 3, DD, {"SIMFS_RUNNER_FAULT": "2:start:0:EAGAIN"})
    code, errors = run.finish()
    assert code == 2
    line = _one_line(errors, "simfs: error: --np 3: could not start rank 2 (Resource temporarily unavailable")
    assert "the 2 started were stopped" in line
    assert _left(run.target) == [] and not run.record.exists()


# -- 6. ior -o naming a directory ------------------------------------------------------------
@pytest.mark.parametrize("path", ["..", ".", "/", "out/", "a/..", "/scratch/me/."])
def test_ior_o_that_names_a_directory_is_refused_when_planned(path):
    with pytest.raises(WorkloadError, match="names a directory"):
        plan_workload(f"ior -a POSIX -F -t 1m -b 8m -o {path}")


def test_ior_o_with_a_file_name_is_kept():
    assert plan_workload("ior -a POSIX -F -t 1m -b 8m -o /scratch/me/data").options["path"] == "/scratch/me/data"


def test_ior_o_dot_dot_is_refused_before_anything(tmp_path, capsys):
    from simfs.cli import main

    assert (
        main(["measure", "--dir", str(tmp_path), "--", "ior", "-a", "POSIX", "-t", "1m", "-b", "8m", "-o", ".."]) == 2
    )
    _one_line(capsys.readouterr().err, "simfs: error: ior -o ..: names a directory")
    assert _left(tmp_path) == []


# -- 7. a symlink loop as --dir --------------------------------------------------------------
def test_a_symlink_loop_as_dir_is_one_line(tmp_path, capsys):
    from simfs.cli import main

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for where in ("a", "a/below"):
        assert main(["measure", "--dir", str(tmp_path / where), "--", *DD]) == 2
        line = _one_line(capsys.readouterr().err, f"simfs: error: --dir {tmp_path / where}: cannot use it (")
        assert "symlink loop" in line or "Too many levels of symbolic links" in line


# -- 8. --backend mpi without MPI ------------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "message"),
    [
        # mpi4py not installed
        ({"mpi4py.py": "raise ModuleNotFoundError(\"No module named 'mpi4py'\", name='mpi4py')\n"}, "needs mpi4py"),
        # mpi4py installed, its MPI library not (the extension cannot load libmpi)
        (
            {
                "mpi4py/__init__.py": "",
                "mpi4py/MPI.py": "raise ImportError('libmpi.so.40: cannot open shared object file')\n",
            },
            "mpi4py cannot load an MPI library (libmpi.so.40",
        ),
    ],
)
def test_backend_mpi_without_an_mpi_library_is_one_line_and_creates_nothing(tmp_path, files, message):
    shadow = tmp_path / "shadow"  # first on the path: stands in for the missing pieces
    for name, text in files.items():
        (shadow / name).parent.mkdir(parents=True, exist_ok=True)
        (shadow / name).write_text(text)
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    done = subprocess.run(
        [sys.executable, "-m", "simfs.cli", "measure", "--dir", str(target), "--backend", "mpi"]
        + ["--json", str(record), "--", *DD],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "PYTHONPATH": str(shadow)},
    )
    assert done.returncode == 2
    assert message in _one_line(done.stderr, "simfs: error: the MPI backend")
    assert _left(target) == [] and not record.exists()


# -- 9. a rank SIGKILLed under mpirun --------------------------------------------------------
def _mpirun(ranks: int, *args: str, fault: str) -> subprocess.CompletedProcess:
    if shutil.which("mpirun") is None:
        pytest.skip("Open MPI's mpirun is not installed (apt-get install openmpi-bin)")
    pytest.importorskip("mpi4py")
    environment = {
        **os.environ,
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "SIMFS_RUNNER_FAULT": fault,
        # mpirun SIGTERMs the survivors this long after a rank dies and SIGKILLs them as
        # long after that (default 1 s): a margin for a loaded machine, not a timing.
        "OMPI_MCA_odls_base_sigkill_timeout": "2",
    }
    command = ["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable, "-m", "simfs.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


def test_mpi_a_killed_rank_leaves_a_record_and_no_files(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    workload = ["ior", "-a", "POSIX", "-F", "-t", "64k", "-b", "1m", "-w", "-r"]
    done = _mpirun(
        3, "measure", "--dir", str(target), "--json", str(record), "--", *workload, fault="1:write:3:SIGKILL"
    )
    assert done.returncode != 0
    assert _left(target) == [], done.stderr
    saved = json.loads(record.read_text())
    assert saved["status"] == "interrupted", saved["reason"]
    assert "did not reach the next collective" in saved["reason"]


def test_mpi_a_killed_rank_0_leaves_the_first_record_and_no_files(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "run.json"
    workload = ["ior", "-a", "POSIX", "-F", "-t", "64k", "-b", "1m", "-w", "-r"]
    done = _mpirun(
        3, "measure", "--dir", str(target), "--json", str(record), "--", *workload, fault="0:write:3:SIGKILL"
    )
    assert done.returncode != 0
    assert _left(target) == [], done.stderr  # ranks 1 and 2 removed the run directory
    saved = json.loads(record.read_text())
    assert saved["status"] == "failed" and saved["reason"] == KILLED
