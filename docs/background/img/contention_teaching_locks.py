"""Draw contention-teaching-locks.png for docs/background/contention-teaching.md.

A lock ping-pong timeline from simfs's lock manager (``simfs/filesystems/core/locking.py``,
Lustre's extent-lock policy) on its own: two client nodes write interleaved 47,008-byte
records to one stripe object, each record under a lock of its node.  Every time a node
needs bytes the other holds, the server calls the other's lock back; the holder writes
its dirty records back (here 1 ms per callback) and cancels; then the grant travels.
Run from the repository root: ``python docs/background/img/contention_teaching_locks.py``
(kept out of the docs test run, like the queue figure).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
import simpy  # noqa: E402

from simfs.engine.station import Station  # noqa: E402
from simfs.filesystems.core.locking import LockManager, lustre_extent_policy  # noqa: E402

OUT = Path(__file__).with_name("contention-teaching-locks.png")
RECORD = 47_008
RECORDS = 8
ONE_WAY_S = 5e-5  # half a network round trip
FLUSH_S = 1e-3  # writing back a callback's dirty records
COPY_S = 6e-5  # one record into the page cache

env = simpy.Environment()
server = Station(env, "lock-server")
flushes: list[tuple[float, int]] = []


def flush(lock):
    start = env.now
    yield env.timeout(FLUSH_S)
    flushes.append((start, lock.node))


manager = LockManager(env, lustre_extent_policy(service_s=2e-5), 2, lambda key: server, ONE_WAY_S, flush)
held: dict[int, list[tuple[float, float]]] = {0: [], 1: []}


def writer(node: int):
    for index in range(RECORDS):
        offset = (2 * index + node) * RECORD
        asked = env.now
        lock = yield from manager.acquire(node, "object", offset, offset + RECORD)
        granted = env.now
        yield env.timeout(COPY_S)
        manager.done(lock)
        held[node].append((asked, granted, env.now))


for node in (0, 1):
    env.process(writer(node))
env.run()

fig, ax = plt.subplots(figsize=(7.5, 2.8))
for node, spans in held.items():
    y = 1 - node
    for asked, granted, done in spans:
        ax.broken_barh([(1e3 * asked, 1e3 * (granted - asked))], (y - 0.15, 0.3), color="0.85")
        ax.broken_barh([(1e3 * granted, 1e3 * (done - granted))], (y - 0.3, 0.6), color=f"C{node}")
for start, node in flushes:
    ax.broken_barh([(1e3 * start, 1e3 * FLUSH_S)], (1 - node - 0.05, 0.1), color="k")
ax.set_yticks([1, 0], ["node 0", "node 1"])
ax.set_xlabel("time (ms)")
ax.set_title(
    f"{RECORDS} interleaved 47,008 B records per node: writing (colour), waiting for the lock (grey),"
    f"\nwriting back for a callback (black); {manager.callbacks} callbacks, {manager.enqueues} lock requests",
    fontsize=9,
)
ax.grid(axis="x", alpha=0.3)
fig.tight_layout()
fig.savefig(OUT, dpi=110)
print(f"wrote {OUT}: {manager.callbacks} callbacks, {manager.enqueues} enqueues, end {1e3 * env.now:.2f} ms")
