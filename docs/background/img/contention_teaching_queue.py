"""Draw contention-teaching-queue-lfs3.png (and its numbers, the .csv beside it) for
docs/background/contention-teaching.md.

The queue at lfs3's directory lock while 2, 4, 8 and 16 nodes (one process each) create
100 files each in one shared directory (mdtest -F -C -n 100).  Drawn by ``python
docs/images.py contention-teaching-queue-lfs3.png``, which writes what :func:`data`
returns beside the image and calls :func:`draw`; ``tests/test_docs_images.py`` checks
that the committed numbers are what :func:`data` computes now.
"""

from pathlib import Path

import pandas as pd

import simfs
from simfs.report.files import save_figure

IMAGE = Path(__file__).with_name("contention-teaching-queue-lfs3.png")
NODES = (16, 8, 4, 2)


def data() -> pd.DataFrame:
    """One row per change of the directory lock's queue: nodes, time, creates waiting or
    in service, and the run's create rate (the legend quotes it)."""
    frames = []
    for nodes in NODES:
        result = simfs.simulate("crtdc-lfs3", "mdtest -F -C -n 100", nodes=nodes, record_timeline=True)
        samples = result.request_queues["mds.dir-lock"]
        rate = result.phases.set_index("phase").loc["file create", "ops_per_s"]
        frames.append(
            pd.DataFrame(
                {
                    "nodes": nodes,
                    "time_s": [time for time, _ in samples],
                    "creates_at_lock": [count for _, count in samples],
                    "creates_per_s": rate,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def draw(frame: pd.DataFrame, path: Path = IMAGE) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for nodes, curve in frame.groupby("nodes", sort=False):
        rate = curve["creates_per_s"].iloc[0]
        ax.step(
            1e3 * curve["time_s"], curve["creates_at_lock"], where="post", label=f"{nodes} nodes: {rate:,.0f} creates/s"
        )
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("creates at the directory lock")
    ax.set_title("crtdc-lfs3, mdtest -F -C -n 100: one shared directory", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    save_figure(fig, path)
