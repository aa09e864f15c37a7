"""fio's normal (text) output, fio 3.x and 2.x::

    seqwrite: (groupid=0, jobs=1): err= 0: pid=13803: Tue Nov 24 23:52:45 2026
      write: IOPS=307, BW=308MiB/s (323MB/s)(32.0MiB/104msec); 0 zone resets
        clat (usec): min=170, max=4215, avg=569.37, stdev=954.26
        clat percentiles (usec):
         |  1.00th=[  172],  5.00th=[  174], 10.00th=[  182], 20.00th=[  184],
         ...

Per job entry and direction, the same measurements as fio's JSON (:mod:`simfs.ingest.fio`):
the bandwidth (``BW=``, in the binary unit fio prints, to its three or four digits),
``iops``, the completion latency mean and its 50th, 95th and 99th percentiles (in the unit
the line names).  A job's clones reported one by one (no ``group_reporting``: several
entries ``jobs=1`` of one name and group) give each one process's rate, ``rank_bw``; an
entry of ``jobs=N`` or a job run once gives ``agg_bw``; ``ppn`` is the clone count either
way.  A job with ``err=`` other than 0 is an error.  The text does not say a job's
``size``, ``direct`` or ``fsync`` options, so its ``workload`` is the options the job
line does give (``fio --name=seqwrite --rw=write --bs=1024KiB --ioengine=psync
--iodepth=1``), which simfs does not simulate: fio's JSON (``--output-format=json``) says
everything, and a file with both (``--output-format=normal,json``) is read as JSON.

fio 2.x prints each direction as ``read : io=65536KB, bw=66065KB/s, iops=16516, runt=
992msec`` (``stat.c``'s ``show_ddir_status``): the bandwidth in fio's ``num2str`` units,
whose K, M, G are powers of 1024 with fio's default ``kb_base=1024`` (a run with
``kb_base=1000`` prints the same letters for powers of 1000 and is read as 1024s: the text
does not say which), the IOPS with K, M for powers of 1000; a ``mixed`` direction
(``unified_rw_reporting``) is read as it is named.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from simfs.ingest.common import fail, positive_number
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement
from simfs.units import BINARY_UNITS

_HEADER = re.compile(r"^(\S(?:.*\S)?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(-?\d+)", re.M)
# fio 3.x: "bs=(R) 1024KiB-1024KiB, (W) ..."; fio 2.x: "bs=1M-1M/1M-1M/1M-1M".
_JOB_LINE = re.compile(
    r"^(\S(?:.*\S)?): \(g=(\d+)\): rw=(\w+), bs=(?:\(R\) )?(\S+?)-\S+, .*ioengine=(\w+), iodepth=(\d+)"
)
_DIRECTION = re.compile(r"^\s+(read|write|trim): IOPS=([\d.]+)([kM]?), BW=([\d.]+)(B|KiB|MiB|GiB|TiB)/s ")
# fio 2.x (stat.c show_ddir_status): "  read : io=65536KB, bw=66065KB/s, iops=16516, runt=   992msec";
# 2.0 put a space before the comma after iops.
_DIRECTION_2 = re.compile(
    r"^\s+(read|write|trim|mixed)\s*: io=\S+, bw=([\d.]+)(B|KB|MB|GB|TB)/s, iops=([\d.]+)([KMG]?)\s*, "
    r"runt=\s*\d+msec"
)
_DIRECTION_START = re.compile(r"^\s+(read|write|trim|mixed)\s*: ")
#: fio 2.x's bandwidth units: num2str with its default kb_base=1024 (K, M, G... are powers of 1024).
_FIO2_UNITS = {unit.replace("i", ""): size for unit, size in BINARY_UNITS.items() if unit.endswith("B")}
_FIO2_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
_CLAT = re.compile(r"^\s+clat \((nsec|usec|msec|sec)\): .*avg=\s*([\d.]+)([kM]?),")
_PERCENTILES = re.compile(r"^\s+clat percentiles \((nsec|usec|msec|sec)\):")
_PERCENTILE = re.compile(r"(\d+\.\d+)th=\[\s*(\d+)\]")
_SECONDS = {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3, "sec": 1.0}
_SUFFIX = {"": 1.0, "k": 1e3, "M": 1e6}
_WANTED = {"50.00": "clat_p50", "95.00": "clat_p95", "99.00": "clat_p99"}


def looks_like(text: str) -> bool:
    return "Run status group" in text and _HEADER.search(text) is not None


@dataclass
class _Entry:
    name: str
    group: int
    jobs: int
    line: int
    directions: list[dict] = field(default_factory=list)


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    options: dict[tuple[str, int], str] = {}
    entries: list[_Entry] = []
    percentile_unit = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        job = _JOB_LINE.match(line)
        if job:
            name, group, rw, block, engine, depth = job.groups()
            # fio prints block sizes in true powers of 1024 ("1024KiB"), which a job file
            # would read as powers of 1000 under fio's default kb_base: write them as k, m.
            block = re.sub(r"^(\d+)([KMGT])iB$", lambda m: m[1] + m[2].lower(), block)
            options[(name, int(group))] = f"--rw={rw} --bs={block} --ioengine={engine} --iodepth={depth}"
            continue
        header = _HEADER.match(line)
        if header:
            if int(header[4]) != 0:
                raise fail(origin, number, f"fio reported err={header[4]} for job {header[1]!r}: not a measurement")
            entries.append(_Entry(header[1], int(header[2]), int(header[3]), number))
            percentile_unit = ""
            continue
        if not entries:
            continue
        direction = _DIRECTION.match(line)
        old_style = _DIRECTION_2.match(line) if direction is None else None
        if direction is None and old_style is None and _DIRECTION_START.match(line):
            raise fail(
                origin, number, f"not a fio result line (IOPS=..., BW=... or io=..., bw=...): {line.strip()[:80]!r}"
            )
        if direction:
            iops = positive_number(direction[2], origin, number, "IOPS") * _SUFFIX[direction[3]]
            bandwidth = positive_number(direction[4], origin, number, "BW") * BINARY_UNITS[direction[5]]
            entries[-1].directions.append({"op": direction[1], "line": number, "bw": bandwidth, "iops": iops})
            continue
        if old_style:
            bandwidth = positive_number(old_style[2], origin, number, "bw") * _FIO2_UNITS[old_style[3]]
            iops = positive_number(old_style[4], origin, number, "iops") * _FIO2_SUFFIX[old_style[5]]
            entries[-1].directions.append({"op": old_style[1], "line": number, "bw": bandwidth, "iops": iops})
            continue
        if not entries[-1].directions:
            continue
        current = entries[-1].directions[-1]
        clat = _CLAT.match(line)
        if clat:
            value = positive_number(clat[2], origin, number, "clat avg") * _SUFFIX[clat[3]]
            current["clat_mean"] = value * _SECONDS[clat[1]]
            continue
        percentiles = _PERCENTILES.match(line)
        if percentiles:
            percentile_unit = percentiles[1]
            continue
        if percentile_unit and line.lstrip().startswith("|"):
            for rank, value in _PERCENTILE.findall(line):
                if rank in _WANTED:
                    current[_WANTED[rank]] = int(value) * _SECONDS[percentile_unit]
        elif percentile_unit:
            percentile_unit = ""
    if not any(entry.directions for entry in entries):
        raise fail(origin, None, "no fio job results (a 'read:' or 'write:' line after a job's groupid line)")
    clones = Counter((entry.name, entry.group) for entry in entries)
    measurements = []
    for entry in entries:
        count = clones[(entry.name, entry.group)]
        per_clone = entry.jobs == 1 and count > 1
        job_options = options.get((entry.name, entry.group), "")
        workload = f"fio --name={entry.name} {job_options}".strip()
        if count > 1 or entry.jobs > 1:
            workload += f" --numjobs={max(count, entry.jobs)}"
        for stats in entry.directions:
            common = dict(
                source=f"{origin}:{stats['line']}",
                tool="fio",
                phase=stats["op"],
                workload=workload,
                nodes=context.nodes or 1,
                ppn=context.ppn or max(count, entry.jobs),
                settings=dict(context.settings),
                system=context.system,
                uncertainty=context.uncertainty,
            )
            measurements.append(Measurement(metric="rank_bw" if per_clone else "agg_bw", value=stats["bw"], **common))
            measurements.append(Measurement(metric="iops", value=stats["iops"], **common))
            for metric in ("clat_mean", "clat_p50", "clat_p95", "clat_p99"):
                if metric in stats:
                    measurements.append(Measurement(metric=metric, value=stats[metric], **common))
    return measurements
