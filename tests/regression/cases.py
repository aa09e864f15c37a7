"""The pinned regression cases and how to compute them.

Regenerate after an intended model change, then review the diff of ``pinned.json``::

    .venv/bin/python -m tests.regression.cases
"""

from __future__ import annotations

import json
from pathlib import Path

import simfs

PINNED = Path(__file__).with_name("pinned.json")
CASES = {
    **{
        f"dd-sweep-{system}": (system, "dd bs=1024000 count=50000", {"nodes": [1, 2, 4, 8, 16, 32, 64]}, {})
        for system in ("crtdc-lfs3", "crtdc-lfs4", "crtdc-lfs5")
    },
    "dd-12ppn-lfs3": ("crtdc-lfs3", "dd bs=1024000 count=5000", {"nodes": [1, 4, 16, 64]}, {"ppn": 12}),
    "ior-shared-lfs4": (
        "crtdc-lfs4",
        "ior -a POSIX -t 1m -b 256m -s 4 -e",
        {"nodes": [2, 8, 32]},
        {"ppn": 4, "stripe_count": -1},
    ),
    "ior-fpp-stripes-lfs3": (
        "crtdc-lfs3",
        "ior -a POSIX -F -t 1m -b 2g -C",
        {"stripe_count": [1, 2, 4, 8, 16]},
        {"nodes": 16, "seed": 3},
    ),
    "ior-spider-osts-per-oss": (
        "ornl-spider",
        "ior -a POSIX -F -w -r -e -C -t 1m -b 1g",
        {"nodes": [10, 20, 40], "oss.osts_per_oss": [1, 2]},
        {},
    ),
    # Request level: the metadata service, the lock manager, collective buffering.
    "mdtest-lfs3": ("crtdc-lfs3", "mdtest -F -C -T -r -n 300 -N 4", {"nodes": [1, 4, 16]}, {"ppn": 4}),
    "ior-strided-47k-lfs3": (
        "crtdc-lfs3",
        "ior -a POSIX -w -e -t 47008 -b 47008 -s 40",
        {"nodes": [2, 8]},
        {"ppn": 4, "stripe_count": 4},
    ),
    "benchio-lfs3": (
        "crtdc-lfs3",
        "benchio --local-size 64x64x64",
        {"nodes": [1, 4, 16]},
        {"ppn": 8, "stripe_count": -1},
    ),
}
COLUMNS = ["phase", "time_s", "agg_bw_Bps", "per_node_bw_Bps", "bottleneck"]


def compute() -> dict[str, list[dict]]:
    results = {}
    for name, (system, workload, vary, fixed) in CASES.items():
        frame = simfs.sweep(system, workload, vary, **fixed)
        keys = list(vary)
        results[name] = frame[keys + COLUMNS].to_dict(orient="records")
    return results


if __name__ == "__main__":
    PINNED.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {PINNED}")
