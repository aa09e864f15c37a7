"""Draw contention-teaching-locks.png (and its numbers, contention-teaching-locks.csv) for
docs/background/contention-teaching.md.

A lock ping-pong timeline from simfs's lock manager (``simfs/filesystems/core/locking.py``,
Lustre's extent-lock policy) on its own: two client nodes write interleaved 47,008-byte
records to one stripe object, each record under a lock of its node.  Every time a node
needs bytes the other holds, the server calls the other's lock back; the holder writes
its dirty records back (here 1 ms per callback) and cancels; then the grant travels.
Drawn by ``python docs/images.py contention-teaching-locks.png``, which writes what
:func:`data` returns beside the image and calls :func:`draw`; ``tests/test_docs_images.py``
checks that the committed numbers are what :func:`data` computes now.
"""

from pathlib import Path

import pandas as pd
import simpy

from simfs.engine.station import Station
from simfs.filesystems.core.locking import LockManager, lustre_extent_policy
from simfs.report.files import save_figure

IMAGE = Path(__file__).with_name("contention-teaching-locks.png")
RECORD = 47_008
RECORDS = 8
ONE_WAY_S = 5e-5  # half a network round trip
FLUSH_S = 1e-3  # writing back a callback's dirty records
COPY_S = 6e-5  # one record into the page cache


def data() -> pd.DataFrame:
    """One row per span drawn: a node waiting for its lock, writing a record under it, or
    writing back for a callback (``start_s``, ``end_s``); the run's callback and lock
    request counts ride along in every row (the title quotes them)."""
    env = simpy.Environment()
    server = Station(env, "lock-server")
    spans: list[dict] = []

    def flush(lock):
        start = env.now
        yield env.timeout(FLUSH_S)
        spans.append({"node": lock.node, "span": "write back", "start_s": start, "end_s": env.now})

    manager = LockManager(env, lustre_extent_policy(service_s=2e-5), 2, lambda key: server, ONE_WAY_S, flush)

    def writer(node: int):
        for index in range(RECORDS):
            offset = (2 * index + node) * RECORD
            asked = env.now
            lock = yield from manager.acquire(node, "object", offset, offset + RECORD)
            granted = env.now
            yield env.timeout(COPY_S)
            manager.done(lock)
            spans.append({"node": node, "span": "wait", "start_s": asked, "end_s": granted})
            spans.append({"node": node, "span": "write", "start_s": granted, "end_s": env.now})

    for node in (0, 1):
        env.process(writer(node))
    env.run()
    frame = pd.DataFrame(spans).sort_values(["start_s", "node", "span"], kind="stable", ignore_index=True)
    return frame.assign(callbacks=manager.callbacks, lock_requests=manager.enqueues)


def draw(frame: pd.DataFrame, path: Path = IMAGE) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    style = {"wait": (0.15, lambda node: "0.85"), "write": (0.3, lambda node: f"C{node}"), "write back": (0.05, None)}
    for row in frame.itertuples():
        half_height, colour = style[row.span]
        ax.broken_barh(
            [(1e3 * row.start_s, 1e3 * (row.end_s - row.start_s))],
            (1 - row.node - half_height, 2 * half_height),
            color="k" if colour is None else colour(row.node),
        )
    ax.set_yticks([1, 0], ["node 0", "node 1"])
    ax.set_xlabel("time (ms)")
    ax.set_title(
        f"{RECORDS} interleaved 47,008 B records per node: writing (colour), waiting for the lock (grey),"
        f"\nwriting back for a callback (black); {frame['callbacks'].iloc[0]} callbacks, "
        f"{frame['lock_requests'].iloc[0]} lock requests",
        fontsize=9,
    )
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)
