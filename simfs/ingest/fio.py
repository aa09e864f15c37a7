"""fio ``--output-format=json`` (fio 3.x and 2.x).

Per job and direction: ``bw_bytes`` (B/s) -> ``agg_bw``, ``iops``, and the completion
latency ``clat_ns`` mean and percentiles (ns -> s).  fio 2.x wrote ``bw`` in KiB/s,
latencies in microseconds under ``clat`` and ``io_bytes`` in KiB (until 2.21): read with
those units, taken from fio's ``stat.c`` of those releases (:func:`_units`).  fio 2.2 and
older print no job options in their JSON: a job's clones reported one by one are then the
entries of its name, and a ``group_reporting`` entry's process count is left empty
(``ppn``; a manifest can give it).  A job fio reports an ``error`` for, and
a rate, count or time that is negative, zero (with bytes moved), NaN or infinite, is an
error naming the file and the JSON path of the field (``jobs[0].write.bw_bytes``).

With ``numjobs=N`` fio reports the N clones of a job as N entries of the same name, each
one process's rate (``rank_bw``), or with ``group_reporting`` as one entry whose rate is
the group's (``agg_bw``); ``ppn`` is ``numjobs`` either way.

What simfs simulates.  fio is not a tool simfs models, but a sequential job is the same
I/O as an IOR run with a file per process, and such a job's ``workload`` is that IOR
command (:func:`ior_equivalent`): ``rw=write`` or ``rw=read`` (``randwrite``,
``randread``: IOR ``-z``, every block once in a random order, as fio's random map does
by default), one ``bs`` (-> ``-t``),
``size`` (-> ``-b``, a multiple of ``bs``), ``numjobs`` (-> ``ppn``), ``direct=1`` (->
``--posix.odirect``), ``end_fsync=1`` or ``fsync_on_close=1`` (-> ``-e``), ioengine
``sync``, ``psync``, ``vsync``, ``pvsync``, ``pvsync2`` or ``libaio`` with
``iodepth=1`` (one call in flight per process, as POSIX reads and writes), each job its
own file (``directory=``; ``filename=`` only with ``numjobs=1``), and the job must have
moved exactly ``numjobs x size`` bytes (not cut short by ``runtime``, interrupted, or
merged with other jobs by ``group_reporting``).  Every other job keeps fio's options as
its ``workload`` and :func:`why_not_simulated` says which condition it misses.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import Counter
from dataclasses import dataclass

from simfs.ingest.common import KIB, fail, json_number, json_positive
from simfs.ingest.context import FileContext
from simfs.ingest.measurements import Measurement

_PERCENTILES = {"50.000000": "clat_p50", "95.000000": "clat_p95", "99.000000": "clat_p99"}
#: Engines that keep one call in flight per process, as IOR's POSIX backend does.
_SYNC_ENGINES = {"sync", "psync", "vsync", "pvsync", "pvsync2"}
_ASYNC_ENGINES = {"libaio"}  # with iodepth=1
#: Options that change how fio reports or schedules a job, not the I/O it does.
_NEUTRAL = {
    "name",
    "description",
    "directory",
    "group_reporting",
    "thread",
    "stonewall",
    "new_group",
    "wait_for",
    "runtime",  # a job cut short by it is caught by the byte count
    "randrepeat",
    "randseed",
    "fallocate",
    "fadvise_hint",
    "iomem",
    "mem",
    "clocksource",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "lat_percentiles",
    "clat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "per_job_logs",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "log_avg_msec",
    "unlink",
    "create_serialize",
    "cpus_allowed",
    "cpumask",
    "zero_buffers",
    "refill_buffers",
    "scramble_buffers",
    "unit_base",
}
#: Options simfs maps (see the module docstring); anything else makes a job not simulated.
_MAPPED = {
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "size",
    "numjobs",
    "direct",
    "buffered",
    "ioengine",
    "iodepth",
    "end_fsync",
    "fsync_on_close",
    "filename",
    "nrfiles",
    "loops",
    "invalidate",
    "overwrite",
    "kb_base",
}
_SIZE = re.compile(r"^(\d+)([kmgt]?)$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
BYTES_REASON = (
    "the job moved a different number of bytes than numjobs x size (cut short by runtime or time_based, "
    "interrupted, or reported together with other jobs by group_reporting)"
)


_JSON_START = re.compile(r'^\{\s*"fio version"', re.M)


def looks_like(text: str) -> bool:
    # fio's notes ("note: both iodepth >= 1 and synchronous I/O engine ...") or its
    # normal output (--output-format=normal,json) can come before the JSON.
    return _JSON_START.search(text) is not None


def parse(text: str, origin: str, context: FileContext) -> list[Measurement]:
    start = _JSON_START.search(text)
    if start is None:
        raise fail(origin, None, 'no fio JSON (a line starting with { "fio version")')
    try:
        # Decoded where it starts; what follows it (--output-format=json,normal) is left.
        document, _ = json.JSONDecoder().raw_decode(text, start.start())
    except json.JSONDecodeError as exc:
        raise fail(origin, exc.lineno, f"truncated or invalid fio JSON: {exc.msg}") from None
    if not isinstance(document, dict):
        raise fail(origin, None, "fio JSON: expected an object at the top")
    version = str(document.get("fio version", "?"))
    jobs = document.get("jobs", [])
    global_options = document.get("global options", {})
    if not isinstance(jobs, list) or not all(isinstance(job, dict) for job in jobs):
        raise fail(origin, None, "jobs: expected a list of objects")
    if not isinstance(global_options, dict):
        raise fail(origin, None, "global options: expected an object")
    # Without group_reporting each of a job's numjobs clones is an entry of its own name.
    clones = Counter((job.get("jobname"), job.get("groupid")) for job in jobs)
    measurements = []
    for index, job in enumerate(jobs):
        path = f"jobs[{index}]"
        job_options = job.get("job options", {})
        if not isinstance(job_options, dict):
            raise fail(origin, None, f"{path}.job options: expected an object")
        options = {str(k): str(v) for k, v in {**global_options, **job_options}.items()}
        if job.get("error", 0):
            raise fail(
                origin,
                None,
                f"{path}.error: fio reported error {job['error']} for job {job.get('jobname')!r}: "
                "the numbers of a failed job are not a measurement",
            )
        entries = clones[(job.get("jobname"), job.get("groupid"))]
        # fio 2.x before job options were printed (2.2.10 has none): the clones reported one
        # by one are the entries of a name; a group_reporting entry's count is unknown.
        numjobs_text = options.get("numjobs", "1" if options or entries == 1 else str(entries))
        if not numjobs_text.isdigit() or int(numjobs_text) < 1:
            raise fail(origin, None, f"{path}.job options.numjobs: expected a positive integer, got {numjobs_text!r}")
        numjobs = int(numjobs_text)
        per_clone = numjobs > 1 and entries == numjobs
        processes = numjobs if options or per_clone else None
        command = fio_command(options) if options else context.workload or f"fio --name={job.get('jobname')}"
        for direction in ("read", "write", "trim"):
            stats = job.get(direction)
            where = f"{path}.{direction}"
            if stats is None:
                continue
            if not isinstance(stats, dict):
                raise fail(origin, None, f"{where}: expected an object")
            counts = {}
            for field in ("io_bytes", "total_ios"):
                counts[field] = json_number(stats.get(field, 0), origin, f"{where}.{field}")
                if not (math.isfinite(counts[field]) and counts[field] >= 0):
                    raise fail(origin, None, f"{where}.{field}: expected a non-negative count, got {stats[field]!r}")
            io_bytes, total_ios = counts["io_bytes"], counts["total_ios"]
            if not io_bytes and not total_ios:
                continue
            units = _units(stats, version, origin, where)
            if units.kib_counts:
                io_bytes *= KIB
            runtime_ms = json_number(stats.get("runtime"), origin, f"{where}.runtime")
            if runtime_ms == 0:
                raise fail(origin, None, f"{where}.runtime: 0 ms: the job ran shorter than fio's clock resolution")
            json_positive(runtime_ms, origin, f"{where}.runtime")
            bandwidth = json_positive(stats[units.bandwidth_key], origin, f"{where}.{units.bandwidth_key}")
            bandwidth *= units.bandwidth_scale
            iops = json_positive(stats.get("iops"), origin, f"{where}.iops")
            equivalent, _ = ior_equivalent(options, direction)
            expected = _size(options.get("size", "")) or 0
            if equivalent and io_bytes != expected * (1 if per_clone else numjobs):
                equivalent = None  # what was moved is not what the IOR run would move
            common = dict(
                source=f"{origin}:{where}",
                tool="fio",
                phase=direction,
                workload=equivalent or command,
                nodes=context.nodes or 1,
                ppn=context.ppn or processes,
                settings=dict(context.settings),
                system=context.system,
                uncertainty=context.uncertainty,
            )
            metric = "rank_bw" if per_clone else "agg_bw"
            measurements.append(Measurement(metric=metric, value=bandwidth, **common))
            measurements.append(Measurement(metric="iops", value=iops, **common))
            clat = stats[units.clat_key]
            if not isinstance(clat, dict):
                raise fail(origin, None, f"{where}.{units.clat_key}: expected an object")
            if not clat.get("N", 1):
                continue  # latencies not sampled (disable_clat): no latency measurement
            mean = json_positive(clat.get("mean"), origin, f"{where}.{units.clat_key}.mean")
            measurements.append(Measurement(metric="clat_mean", value=mean * units.clat_scale, **common))
            percentiles = clat.get("percentile", {})
            if not isinstance(percentiles, dict):
                raise fail(origin, None, f"{where}.{units.clat_key}.percentile: expected an object")
            for key, metric in _PERCENTILES.items():
                if key in percentiles:
                    value = json_positive(percentiles[key], origin, f"{where}.{units.clat_key}.percentile.{key}")
                    measurements.append(Measurement(metric=metric, value=value * units.clat_scale, **common))
    if not measurements:
        raise fail(origin, None, "fio JSON has no job with I/O")
    return measurements


@dataclass(frozen=True)
class _Units:
    """Where a direction's numbers are and what they count, by fio version."""

    bandwidth_key: str
    bandwidth_scale: float
    clat_key: str
    clat_scale: float
    kib_counts: bool


def _units(stats: dict, version: str, origin: str, where: str) -> _Units:
    """fio 3.x: ``bw_bytes`` (B/s), ``clat_ns`` (ns).  fio 2.x (``stat.c``'s
    ``add_ddir_status_json`` in every 2.x release): ``bw`` is the byte rate over 1024
    (KiB/s, whatever ``kb_base``), ``clat`` in microseconds, and ``io_bytes`` KiB until
    ``io_kbytes`` appeared beside it (fio 2.21 on), bytes after."""
    if "bw_bytes" in stats and "clat_ns" in stats:
        return _Units("bw_bytes", 1.0, "clat_ns", 1e-9, False)
    if version.startswith("fio-2.") and "bw" in stats and "clat" in stats:
        return _Units("bw", float(KIB), "clat", 1e-6, "io_kbytes" not in stats)
    raise fail(origin, None, f"{where}: neither fio 3.x keys (bw_bytes, clat_ns) nor fio 2.x ones (bw, clat)")


def fio_command(options: dict[str, str]) -> str:
    """A job's options as a fio command line (sorted, each quoted for a shell)."""
    return "fio " + " ".join(shlex.quote(f"--{key}={value}") for key, value in sorted(options.items()))


def ior_equivalent(options: dict[str, str], direction: str) -> tuple[str | None, str | None]:
    """The IOR command doing the same I/O as a fio job's ``direction`` (read or write),
    or None and the reason there is none.  ``options`` are the job's, global ones merged in."""
    unmapped = sorted(set(options) - _MAPPED - _NEUTRAL)
    if unmapped:
        return None, f"option {unmapped[0]}={options[unmapped[0]]} has no IOR equivalent in simfs"
    job_rw = options.get("rw", options.get("readwrite", "read"))  # fio's default is read
    if job_rw not in ("read", "write", "randread", "randwrite"):
        return None, f"rw={job_rw}: simulated are rw=read, write, randread and randwrite jobs (one direction each)"
    # fio's random map (norandommap=0, its default) visits every block once in a random
    # order, as IOR -z does; norandommap and other distributions are not mapped.
    random = job_rw.startswith("rand")
    rw = job_rw.removeprefix("rand")
    if direction.removeprefix("rand") != rw:
        return None, f"a {direction} in a rw={job_rw} job"
    if options.get("kb_base", "1024") != "1024":
        return None, f"kb_base={options['kb_base']}: simfs reads fio sizes in powers of 1024 only"
    block_text = options.get("bs", options.get("blocksize", "4k"))  # fio's default bs is 4k
    transfer = _size(block_text)
    if transfer is None:
        return None, f"bs={block_text}: expected one size (a number with an optional k, m, g or t)"
    if "size" not in options:
        return None, (
            "no size= (fio's normal output does not give it, nor direct= or fsync: give fio's JSON, "
            "--output-format=json; or the job's size came from an existing file)"
        )
    size = _size(options["size"])
    if size is None:
        return None, f"size={options['size']}: expected a size (a number with an optional k, m, g or t)"
    if not size or not transfer:
        return None, f"size={options['size']}, bs={block_text}: expected sizes above zero"
    if size % transfer:
        return None, f"size={options['size']} is not a multiple of bs={block_text}"
    engine = options.get("ioengine", "psync")
    depth = options.get("iodepth", "1")
    if engine in _ASYNC_ENGINES and depth != "1":
        return None, f"ioengine={engine} with iodepth={depth}: simfs models one call in flight per process"
    if engine not in _SYNC_ENGINES | _ASYNC_ENGINES:
        return None, f"ioengine={engine}: simulated are {', '.join(sorted(_SYNC_ENGINES | _ASYNC_ENGINES))}"
    numjobs = options.get("numjobs", "1")
    filename = options.get("filename")
    if filename is not None and (":" in filename or numjobs != "1"):
        return None, (
            f"filename={filename} with numjobs={numjobs}: the processes share a file and each does the same "
            "offsets; simulated is a file per process (directory= without filename=)"
        )
    for key, simulated in (("nrfiles", "1"), ("loops", "1")):
        if options.get(key, simulated) != simulated:
            return None, f"{key}={options[key]}: simulated is {key}={simulated}"
    direct = _true(options.get("direct", "0")) or not _true(options.get("buffered", "1"))
    if rw == "write" and _true(options.get("overwrite", "0")):
        return None, "overwrite=1: simulated writes go to new files"
    if rw == "read" and not direct and not _true(options.get("invalidate", "1")):
        return None, "invalidate=0: a buffered read of pages fio just laid out may come from the page cache"
    fsync = rw == "write" and (_true(options.get("end_fsync", "0")) or _true(options.get("fsync_on_close", "0")))
    words = ["ior", "-a", "POSIX", "-F", "-w" if rw == "write" else "-r", "-t", _ior_size(transfer)]
    words += ["-b", _ior_size(size)]
    words += ["-e"] * fsync + ["--posix.odirect"] * direct + ["-z"] * random
    return " ".join(words), None


def why_not_simulated(workload: str, direction: str) -> str:
    """Why a fio row whose workload is fio's own options (not an IOR command) is not simulated."""
    try:
        words = shlex.split(workload)
    except ValueError:
        words = []
    if words[:1] != ["fio"]:
        return "no fio options to map to an IOR run"
    options = dict(word[2:].partition("=")[::2] for word in words[1:] if word.startswith("--"))
    _, reason = ior_equivalent(options, direction)
    return reason or BYTES_REASON


def _size(text: str) -> int | None:
    match = _SIZE.match(text.strip())
    return int(match[1]) * _SCALE[match[2].lower()] if match else None


def _ior_size(size: int) -> str:
    for suffix in ("t", "g", "m", "k"):
        if size % _SCALE[suffix] == 0:
            return f"{size // _SCALE[suffix]}{suffix}"
    return str(size)


def _true(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")
