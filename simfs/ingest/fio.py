"""fio ``--output-format=json`` (fio 3.x).

Per job and direction: ``bw_bytes`` (B/s) -> ``agg_bw``, ``iops``, and the completion
latency ``clat_ns`` mean and percentiles (ns -> s).  fio 2.x wrote latencies in
microseconds under ``clat``/``lat`` and had no ``bw_bytes``; such files are refused with
a message rather than read with a guessed unit.
"""

from __future__ import annotations

import json

from simfs.ingest.common import fail
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_PERCENTILES = {"50.000000": "clat_p50", "95.000000": "clat_p95", "99.000000": "clat_p99"}


def looks_like(text: str) -> bool:
    head = text.lstrip()[:300]
    return head.startswith("{") and '"fio version"' in head


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(origin, exc.lineno, f"truncated or invalid fio JSON: {exc.msg}") from None
    version = str(document.get("fio version", "?"))
    measurements = []
    for job in document.get("jobs", []):
        options = {**document.get("global options", {}), **job.get("job options", {})}
        workload = "fio " + " ".join(f"--{k}={v}" for k, v in sorted(options.items())) if options else context.workload
        numjobs = int(options.get("numjobs", 1))
        for direction in ("read", "write", "trim"):
            stats = job.get(direction)
            if not stats or not stats.get("io_bytes") and not stats.get("total_ios"):
                continue
            where = f"{origin}:jobs[{job.get('jobname', '?')}].{direction}"
            if "bw_bytes" not in stats or "clat_ns" not in stats:
                if "clat" in stats or "lat" in stats:
                    raise fail(
                        origin,
                        None,
                        f"{version} JSON has microsecond latency keys ('clat') and no 'bw_bytes'; "
                        "simfs reads fio >= 3.0 JSON (bw_bytes, clat_ns)",
                    )
                raise fail(origin, None, f"{where}: no 'bw_bytes'/'clat_ns': not fio 3.x JSON")
            common = dict(
                tool="fio",
                phase=direction,
                workload=workload,
                nodes=context.nodes or 1,
                ppn=context.ppn or numjobs,
                settings=dict(context.settings),
                system=context.system,
                uncertainty=context.uncertainty,
            )
            measurements.append(Measurement(source=where, metric="agg_bw", value=float(stats["bw_bytes"]), **common))
            measurements.append(Measurement(source=where, metric="iops", value=float(stats["iops"]), **common))
            clat = stats["clat_ns"]
            measurements.append(
                Measurement(source=where, metric="clat_mean", value=float(clat["mean"]) * 1e-9, **common)
            )
            for key, metric in _PERCENTILES.items():
                if key in clat.get("percentile", {}):
                    value = float(clat["percentile"][key]) * 1e-9
                    measurements.append(Measurement(source=where, metric=metric, value=value, **common))
    if not measurements:
        raise fail(origin, None, "fio JSON has no job with I/O")
    return measurements
