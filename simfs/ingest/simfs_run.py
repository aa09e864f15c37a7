"""The JSON record of a live run (``simfs measure --json``).

One measurement per phase: the median over the run's iterations of IOR's and mdtest's
aggregate over the phase's makespan (``agg_bw``, ``ops_rate``), or of dd's and bonnie++'s
sum of each rank's own rate (``agg_bw``, the simulator's aggregate for those tools), with
half the range over iterations as its relative uncertainty.  The median, because a first
iteration is often an outlier (on a VM, the first touch of guest memory: 0.4 against
3.8 GB/s for the later iterations of a buffered write here), and the same rule applies to
every record.  Phases keep simfs's labels (``write``, ``file create``, ``block read``).
A record of a failed or interrupted run gives the phases that completed.

A record of a run on the simfs testbed (``simfs testbed run --json``) also says the
testbed's shape, which becomes the measurement's profile settings, so that a prediction
is made for the cluster the run had: ``client.count``, ``chunkserver.count`` and
``moosefs.goal`` for MooseFS; ``client.count``, ``brick.count``,
``glusterfs.disperse_data`` and ``glusterfs.redundancy`` for GlusterFS; and
``fabric.port_buffer_bytes`` (the link rate is the profile's own: ``testbed-moosefs``
and ``testbed-glusterfs`` describe 100 Mbit/s links).
"""

from __future__ import annotations

import json
import math
import re
import statistics

from simfs.ingest.common import fail, json_positive
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_SUM_OF_RANKS = {"dd", "bonnie++"}
#: The record format read here (``simfs.runner.output.RECORD_FORMAT`` writes it).
READ_FORMAT = 1
#: Testbed record keys and the profile fields they set, per file system.
_TESTBED_FIELDS = {
    "moosefs": (("clients", "client.count"), ("servers", "chunkserver.count"), ("goal", "moosefs.goal")),
    "glusterfs": (("clients", "client.count"), ("servers", "brick.count")),
}


def looks_like(text: str) -> bool:
    return text.lstrip().startswith("{") and '"simfs_run"' in text[:200]


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(origin, exc.lineno, f"invalid simfs run record: {exc.msg}") from None
    if not isinstance(record, dict):
        raise fail(origin, None, "a simfs run record is a JSON object")
    if record.get("simfs_run") != READ_FORMAT:
        # A later format may move or rename what is read below: refused, not misread.
        raise fail(
            origin, None, f"simfs_run: a record of format {READ_FORMAT} expected, got {record.get('simfs_run')!r}"
        )
    for key in ("tool", "workload", "nodes", "ppn", "phases"):
        if key not in record:
            raise fail(origin, None, f"simfs run record without {key!r}")
    for key in ("nodes", "ppn"):
        _positive_int(record[key], origin, key)
    if not isinstance(record["phases"], list):
        raise fail(origin, None, "phases: expected a list")
    tool = record["tool"]
    values: dict[tuple[str, str], list[float]] = {}
    for index, phase in enumerate(record["phases"]):
        if not isinstance(phase, dict):
            raise fail(origin, None, f"phases[{index}]: expected an object")
        if tool == "mdtest":
            key, metric = "rate_per_s", "ops_rate"
        elif tool in _SUM_OF_RANKS:
            key, metric = "sum_of_ranks_Bps", "agg_bw"
        else:
            key, metric = "bandwidth_Bps", "agg_bw"
        value = phase.get(key)
        if value is None or "phase" not in phase:
            raise fail(origin, None, f"phases[{index}] ({phase.get('phase')}): no rate (a phase of zero length)")
        rate = json_positive(value, origin, f"phases[{index}].{key}")
        values.setdefault((str(phase["phase"]), metric), []).append(rate)
    settings = {**context.settings, **_testbed_settings(record.get("testbed"), origin)}
    measurements = []
    for (label, metric), rates in values.items():
        middle = statistics.median(rates)
        spread = (max(rates) - min(rates)) / 2 / middle if len(rates) > 1 and middle > 0 else math.nan
        measurements.append(
            Measurement(
                source=f"{origin}:{label}",
                tool=tool,
                phase=label,
                metric=metric,
                value=middle,
                **context.fields(
                    workload=record["workload"],
                    nodes=record["nodes"],
                    ppn=record["ppn"],
                    uncertainty=spread,
                    settings=settings,
                ),
            )
        )
    if not measurements:
        raise fail(origin, None, f"simfs run record with no completed phase (status {record.get('status')!r})")
    return measurements


def _testbed_settings(testbed: object, origin: str) -> dict[str, int]:
    """The profile settings of the testbed a run had (none for other runs)."""
    if testbed is None:
        return {}
    if not isinstance(testbed, dict):
        raise fail(origin, None, "testbed: expected an object")
    file_system = testbed.get("file_system")
    if file_system not in _TESTBED_FIELDS:
        return {}
    settings = {}
    for key, field_name in _TESTBED_FIELDS[file_system]:
        if testbed.get(key) is not None:
            settings[field_name] = _positive_int(testbed[key], origin, f"testbed.{key}")
    if file_system == "glusterfs":
        settings.update(gluster_volume(testbed.get("volume"), origin))
    buffer = testbed.get("link", {}).get("port_buffer_bytes") if isinstance(testbed.get("link"), dict) else None
    if isinstance(buffer, int) and not isinstance(buffer, bool) and buffer > 0:
        settings["fabric.port_buffer_bytes"] = buffer
    return settings


def gluster_volume(volume: object, origin: str) -> dict[str, int]:
    """``testbed.volume`` ("disperse K+M" or "distribute") as the profile's fields."""
    if volume == "distribute":
        return {"glusterfs.disperse_data": 1, "glusterfs.redundancy": 0}
    match = re.fullmatch(r"disperse (\d+)\+(\d+)", volume) if isinstance(volume, str) else None
    if match is None:
        raise fail(origin, None, f"testbed.volume: expected 'disperse K+M' or 'distribute', got {volume!r}")
    return {"glusterfs.disperse_data": int(match.group(1)), "glusterfs.redundancy": int(match.group(2))}


def _positive_int(value: object, origin: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(origin, None, f"{path}: expected a positive integer, got {value!r}")
    return value
