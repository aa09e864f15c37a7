"""Draw contention-teaching-queue-lfs3.png for docs/background/contention-teaching.md.

The queue at lfs3's directory lock while 2, 4, 8 and 16 nodes (one process each) create
100 files each in one shared directory (mdtest -F -C -n 100).  Run from the repository
root: ``python docs/background/img/contention_teaching_queue.py``.  It is kept out of the
docs test run on purpose (only ``python`` blocks and ``$ simfs`` lines in the pages run).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

import simfs  # noqa: E402

OUT = Path(__file__).with_name("contention-teaching-queue-lfs3.png")

fig, ax = plt.subplots(figsize=(7, 3.6))
for nodes in (16, 8, 4, 2):
    result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 100", nodes=nodes, record_timeline=True)
    samples = result.request_queues["mds.dir-lock"]
    times = [1e3 * time for time, _ in samples]
    counts = [count for _, count in samples]
    rate = result.phases.set_index("phase").loc["file create", "ops_per_s"]
    ax.step(times, counts, where="post", label=f"{nodes} nodes: {rate:,.0f} creates/s")
ax.set_xlabel("time (ms)")
ax.set_ylabel("creates at the directory lock")
ax.set_title("crtdc-lfs3, mdtest -F -C -n 100: one shared directory", fontsize=10)
ax.grid(alpha=0.3)
ax.legend(fontsize=8, loc="center right")
fig.tight_layout()
fig.savefig(OUT, dpi=110)
print(f"wrote {OUT}")
