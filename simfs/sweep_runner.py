"""Where a sweep's points run: one after another, in local processes, or on a Dask cluster.

Each point is one simulation of a built system, a workload and an experiment, all
picklable, returning its phase table; nothing is shared between points, so they can run
anywhere and in any order.  The tables come back in the points' order whatever order
they finish in, so a parallel sweep returns the serial one's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from simfs.errors import SimfsError

if TYPE_CHECKING:
    import pandas as pd

#: One point: (built system, workload spec, experiment).
Point = tuple[Any, Any, Any]
#: How long to try to reach a Dask scheduler before giving up (seconds).
CONNECT_TIMEOUT_S = 30.0


def run_point(built: Any, spec: Any, experiment: Any) -> pd.DataFrame:
    """One point's phase table (the cost was checked for the whole sweep already)."""
    from simfs import simulation

    return simulation.run(built, spec, experiment, force=True).phases


def run_points(
    points: Sequence[Point],
    jobs: int = 1,
    scheduler: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[pd.DataFrame]:
    """Every point's phase table, in the points' order: serially (``jobs`` 1), in ``jobs``
    local processes, or on the Dask cluster ``scheduler`` (an address or a Client)."""
    total = len(points)
    tables: list[Any] = [None] * total

    def finished(index: int, table: pd.DataFrame, done: int) -> None:
        tables[index] = table
        if progress is not None:
            progress(done, total)

    if scheduler is not None:
        _on_dask(points, scheduler, finished)
    elif jobs > 1 and total > 1:
        _in_processes(points, min(jobs, total), finished)
    else:
        for index, point in enumerate(points):
            finished(index, run_point(*point), index + 1)
    return tables


def _in_processes(points: Sequence[Point], jobs: int, finished) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_point, *point): index for index, point in enumerate(points)}
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                finished(futures[future], future.result(), done)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _on_dask(points: Sequence[Point], scheduler: Any, finished) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise SimfsError("sweep: --scheduler needs dask.distributed (pip install 'simfs[dask]')") from None
    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise SimfsError(f"sweep: --scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    else:
        client = scheduler
    try:
        futures = [client.submit(run_point, *point, pure=False) for point in points]
        index_of = {future.key: index for index, future in enumerate(futures)}
        for done, future in enumerate(as_completed(futures), start=1):
            finished(index_of[future.key], future.result(), done)
    finally:
        if own:
            client.close()
