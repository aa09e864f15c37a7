"""Independent tasks run one after another, in local processes, or on a Dask cluster.

A sweep's points (each one simulation of a built system, a workload and an experiment)
and a calibration's bootstrap refits (each one fit to redrawn measurements) share
nothing, so they can run anywhere and in any order.  :func:`map_ordered` gives their
results back in the tasks' order whatever order they finish in, so the parallel result
is the serial one.  The function and its arguments must be picklable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from simfs.errors import SimfsError

if TYPE_CHECKING:
    import pandas as pd

#: How long to try to reach a Dask scheduler before giving up (seconds).
CONNECT_TIMEOUT_S = 30.0

#: A scheduler address as ``dask.distributed.Client`` takes it: ``[PROTOCOL://]HOST:PORT``
#: (``tcp://`` when no protocol is given; an IPv6 host in brackets), or an in-process one.
#: The protocol is any name: distributed loads more from plugins (``ucxx://``), and one it
#: does not know is its ValueError, made one line in :func:`_on_dask`.
SCHEDULER_ADDRESS = re.compile(r"(?:[A-Za-z][\w+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):\d{1,5}|inproc://\S+")


def check_jobs(jobs: object, scheduler: object, where: str) -> int:
    """``jobs`` as a positive int, or a one-line error (and not both it and a scheduler)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SimfsError(f"{where}: jobs: expected a positive number of processes, got {jobs!r}")
    if scheduler is not None and jobs > 1:
        raise SimfsError(f"{where}: give jobs (local processes) or scheduler (a Dask cluster), not both")
    if isinstance(scheduler, str) and not SCHEDULER_ADDRESS.fullmatch(scheduler):
        option = "--scheduler" if where.startswith("--") else f"{where}: scheduler"
        raise SimfsError(f"{option} {scheduler}: expected a Dask scheduler's address, tcp://HOST:PORT")
    return jobs


def run_point(built: Any, spec: Any, experiment: Any) -> pd.DataFrame:
    """One sweep point's phase table (the cost was checked for the whole sweep already),
    with the run's notes in its ``attrs["notes"]``."""
    from simfs import simulation

    result = simulation.run(built, spec, experiment, force=True)
    phases = result.phases
    phases.attrs["notes"] = tuple(result.notes)
    return phases


def map_ordered(
    function: Callable[..., Any],
    tasks: Sequence[tuple],
    jobs: int = 1,
    scheduler: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """``[function(*task) for task in tasks]``: serially (``jobs`` 1), in ``jobs`` local
    processes, or on the Dask cluster ``scheduler`` (an address or a Client);
    ``progress(done, total)`` after each."""
    total = len(tasks)
    results: list[Any] = [None] * total

    def finished(index: int, result: Any, done: int) -> None:
        results[index] = result
        if progress is not None:
            progress(done, total)

    if scheduler is not None:
        _on_dask(function, tasks, scheduler, finished)
    elif jobs > 1 and total > 1:
        _in_processes(function, tasks, min(jobs, total), finished)
    else:
        for index, task in enumerate(tasks):
            finished(index, function(*task), index + 1)
    return results


def _in_processes(function, tasks: Sequence[tuple], jobs: int, finished) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(function, *task): index for index, task in enumerate(tasks)}
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                finished(futures[future], future.result(), done)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _on_dask(function, tasks: Sequence[tuple], scheduler: Any, finished) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise SimfsError("--scheduler needs dask.distributed (pip install 'simfs[dask]')") from None
    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise SimfsError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
        except ValueError as exc:  # an address dask cannot parse
            raise SimfsError(f"--scheduler {scheduler}: not a Dask scheduler's address ({exc})") from None
    else:
        client = scheduler
    try:
        # An argument many tasks share (a sweep's built system and workload) is sent to
        # the workers once, not once per task.
        uses: dict[int, int] = {}
        for task in tasks:
            for argument in task:
                uses[id(argument)] = uses.get(id(argument), 0) + 1
        shared = {}
        for task in tasks:
            for argument in task:
                if uses[id(argument)] > 1 and id(argument) not in shared:
                    shared[id(argument)] = client.scatter(argument, broadcast=True, hash=False)
        futures = [
            client.submit(function, *(shared.get(id(argument), argument) for argument in task), pure=False)
            for task in tasks
        ]
        index_of = {future.key: index for index, future in enumerate(futures)}
        for done, future in enumerate(as_completed(futures), start=1):
            finished(index_of[future.key], future.result(), done)
    finally:
        if own:
            client.close()
