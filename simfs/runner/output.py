"""What a live run prints and writes: the tool's own summary shape, strict JSON, traces.

* IOR: the header, ``Options:``, the ``Results:`` table (one row per iteration and
  access), ``Max Write/Read`` in MiB/s and MB/s, and ``Summary of all tests`` (columns
  as IOR 3.3/4.0 print them), so scripts written for IOR, and
  :mod:`simfs.ingest.ior`, read it.
* mdtest: the ``SUMMARY rate (in ops/sec)`` table of mdtest 3.3/4.0 (max, min, mean and
  standard deviation over iterations).
* dd: GNU dd's three lines per rank and phase (``records in/out``, ``bytes ... copied``).
* bonnie++: one CSV line (format 1.98) per rank, as ``bonnie++ -q`` prints.

MiB = 2**20 bytes, MB = 10**6 bytes; every rate in the JSON record is in bytes/s or
operations/s.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Iterable
from typing import Any

from simfs.report.tables import strict
from simfs.runner.records import PhaseResult
from simfs.units import MIB, format_bytes
from simfs.workloads.spec import WorkloadSpec

RECORD_FORMAT = 1


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return (math.nan,) * 4
    spread = statistics.pstdev(finite) if len(finite) > 1 else 0.0
    return max(finite), min(finite), statistics.fmean(finite), spread


def _stamp(epoch: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(epoch))


# -- IOR ----------------------------------------------------------------------------------
def ior_text(run: dict[str, Any], spec: WorkloadSpec, results: list[PhaseResult]) -> str:
    options = spec.options
    first = spec.phases[0]
    machine = run["machine"]
    ranks, nodes, ppn = run["ranks"], run["nodes"], run["ppn"]
    block, transfer = int(options["block"]), int(options["transfer"])
    aggregate = block * int(options["segments"]) * ranks
    target = machine["target"]
    name = run["test_file"]
    reorder = any(p.reorder_tasks for p in spec.phases)
    task_offset = max(p.task_offset for p in spec.phases)
    lines = [
        f"IOR-simfs-{run['version']}: MPI Coordinated Test of Parallel I/O (simfs measure, {run['backend']} backend)",
        f"Began               : {_stamp(run['began_epoch'])}",
        f"Command line        : {spec.command}",
        f"Machine             : Linux {machine['hostname']}",
        "TestID              : 0",
        f"StartTime           : {_stamp(run['began_epoch'])}",
        f"Path                : {name}",
        f"FS                  : {target['size_bytes'] / 2**30:.1f} GiB   {target['fs_type']} on {target['mount_point']}",
        "",
        "Options: ",
        "api                 : POSIX",
        "apiVersion          : ",
        f"test filename       : {name}",
        f"access              : {'single-shared-file' if first.shared_file else 'file-per-process'}",
        "type                : independent",
        f"segments            : {options['segments']}",
        f"ordering in a file  : {'random' if first.random_offsets else 'sequential'}",
        f"ordering inter file : {'constant task offset' if reorder else 'no tasks offsets'}",
    ]
    if reorder:
        lines.append(f"task offset         : {task_offset}")
    lines += [
        f"nodes               : {nodes}",
        f"tasks               : {ranks}",
        f"clients per node    : {ppn}",
        f"repetitions         : {spec.iterations}",
        f"xfersize            : {format_bytes(transfer)}",
        f"blocksize           : {format_bytes(block)}",
        f"aggregate filesize  : {format_bytes(aggregate)}",
    ]
    if first.stonewall_s:
        lines.append(f"stonewallingTime    : {first.stonewall_s:g}")
        lines.append(f"stoneWallingWearOut : {int(first.wear_out)}")
    lines += [
        "",
        "Results: ",
        "",
        "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter",
        "------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----",
    ]
    data = [r for r in results if r.op in ("write", "read")]
    for r in data:
        if r.pairs_min >= 0:
            lines.append(
                f"stonewalling pairs accessed min: {r.pairs_min} max: {r.pairs_max} -- "
                f"min data: {r.pairs_min * transfer / 2**30:.1f} GiB mean data: "
                f"{(r.pairs_min + r.pairs_max) / 2 * transfer / 2**30:.1f} GiB time: {r.stonewall_s:.1f}s"
            )
        lines.append(
            f"{r.op:<10}{_pp(r.bandwidth_Bps / MIB)}{_pp(r.ops / r.makespan_s if r.makespan_s > 0 else math.nan)}"
            f"{_pp(r.latency_s, 12)}{_pp(block / 1024)}{_pp(transfer / 1024)}{_pp(r.open_s)}{_pp(r.xfer_s)}"
            f"{_pp(r.close_s)}{_pp(r.makespan_s)}{r.iteration:<4d}"
        )
    lines.append("")
    for access in ("write", "read"):
        rates = [r.bandwidth_Bps for r in data if r.op == access]
        if rates:
            best = max(rates)
            label = f"Max {access.capitalize()}:"
            lines.append(f"{label:<11}{best / MIB:.2f} MiB/sec ({best / 1e6:.2f} MB/sec)")
    lines += ["", "Summary of all tests:"]
    lines.append(
        f"{'Operation':<9} {'Max(MiB)':>10} {'Min(MiB)':>10} {'Mean(MiB)':>10} {'StdDev':>10} {'Max(OPs)':>10} "
        f"{'Min(OPs)':>10} {'Mean(OPs)':>10} {'StdDev':>10} {'Mean(s)':>10} {'Stonewall(s)':>10} "
        f"{'Stonewall(MiB)':>13} Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt "
        f"{' blksiz':>8} {'xsize':>8} {'aggs(MiB)':>9} {'API':>5} RefNum"
    )
    for access in ("write", "read"):
        rows = [r for r in data if r.op == access]
        if not rows:
            continue
        bw = _stats([r.bandwidth_Bps / MIB for r in rows])
        ops = _stats([r.ops / r.makespan_s if r.makespan_s > 0 else math.nan for r in rows])
        mean_s = statistics.fmean(r.makespan_s for r in rows)
        if first.wear_out:
            wall = statistics.fmean(r.stonewall_s for r in rows)
            wall_mib = statistics.fmean(r.pairs_min * transfer * ranks / r.stonewall_s for r in rows) / MIB
            stonewall = f"{wall:10.2f} {wall_mib:13.2f} "
        else:
            stonewall = f"{'NA':>10} {'NA':>13} "
        lines.append(
            f"{access:<9} {bw[0]:10.2f} {bw[1]:10.2f} {bw[2]:10.2f} {bw[3]:10.2f} {ops[0]:10.2f} {ops[1]:10.2f} "
            f"{ops[2]:10.2f} {ops[3]:10.2f} {mean_s:10.5f} {stonewall}{0:5d} {ranks:6d} {ppn:3d} "
            f"{spec.iterations:4d} {int(not first.shared_file):3d} {int(reorder):5d} {task_offset:8d} {0:9d} {0:4d} "
            f"{int(options['segments']):6d} {block:8d} {transfer:8d} {aggregate / MIB:9.1f} {'POSIX':>5} {0:6d}"
        )
    lines.append(f"Finished            : {_stamp(run['finished_epoch'])}")
    return "\n".join(lines) + "\n"


def _pp(value: float, width: int = 11) -> str:
    """IOR's PPDouble: about six significant digits, left-justified."""
    if not math.isfinite(value):
        text = "NA"
    elif value == 0:
        text = "0"
    elif abs(value) >= 1000:
        text = f"{value:.0f}" if abs(value) >= 100000 else f"{value:.2f}"
    else:
        text = f"{value:.6f}" if abs(value) < 1 else f"{value:.4f}"
    return f"{text:<{width}}"


# GNU dd's summary: three significant digits, decimal and binary prefixes.
_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))


def _scaled(value: float, prefixes: tuple[tuple[str, float], ...], spec: str = ".3g") -> str:
    """``value`` with the largest prefix it reaches, and a space: ``"1.07 G"``, ``"512 "``."""
    for prefix, scale in prefixes:
        if value >= scale:
            return f"{value / scale:{spec}} {prefix}"
    return f"{value:{spec}} "


# -- mdtest -------------------------------------------------------------------------------
_MDTEST_ROWS = [
    ("dir create", "Directory creation"),
    ("dir stat", "Directory stat"),
    ("dir remove", "Directory removal"),
    ("file create", "File creation"),
    ("file stat", "File stat"),
    ("file read", "File read"),
    ("file remove", "File removal"),
]


def mdtest_text(run: dict[str, Any], spec: WorkloadSpec, results: list[PhaseResult]) -> str:
    words = " ".join(f"'{w}'" for w in spec.command.split()[1:])
    items = int(spec.options["items"]) * run["ranks"]
    kinds = {p.label.split()[0] for p in spec.phases}
    count = " ".join(
        f"{items} {'files' if kind == 'file' else 'directories'}" for kind in ("dir", "file") if kind in kinds
    )
    lines = [
        f"-- started at {time.strftime('%m/%d/%Y %H:%M:%S', time.localtime(run['began_epoch']))} --",
        "",
        f"mdtest-simfs-{run['version']} was launched with {run['ranks']} total task(s) on {run['nodes']} node(s)",
        f"Command line used: mdtest {words}",
        f"Path                : {run['run_directory']}",
        f"FS                  : {run['machine']['target']['fs_type']} on {run['machine']['target']['mount_point']}",
        f"{run['ranks']} tasks, {count}",
        "",
        f"SUMMARY rate (in ops/sec): (of {spec.iterations} iterations)",
        f"   {'Operation':<23}{'Max':>14}{'Min':>15}{'Mean':>15}{'Std Dev':>15}",
        f"   {'---------':<23}{'---':>14}{'---':>15}{'----':>15}{'-------':>15}",
    ]
    for label, title in _MDTEST_ROWS:
        rates = [r.rate_per_s for r in results if r.phase == label]
        if rates:
            top, bottom, mean, spread = _stats(rates)
            lines.append(f"   {title:<23}{top:14.3f}{bottom:15.3f}{mean:15.3f}{spread:15.3f}")
        walled = [r.pairs_total / r.stonewall_s for r in results if r.phase == label and r.pairs_total >= 0]
        if label == "file create" and walled:
            # As mdtest 3.3+ prints it with -W: items made by the deadline over the time to it.
            lines.append(
                f"   {'File create (stonewall)':<23}{'NA':>14}{'NA':>15}{statistics.fmean(walled):15.3f}{'NA':>15}"
            )
    lines.append(f"-- finished at {time.strftime('%m/%d/%Y %H:%M:%S', time.localtime(run['finished_epoch']))} --")
    return "\n".join(lines) + "\n"


# -- dd and bonnie++ ------------------------------------------------------------------------
def dd_text(spec: WorkloadSpec, records: Iterable[Any]) -> str:
    """GNU dd's summary for every rank and phase, in rank order within each phase."""
    lines = []
    block = int(spec.options["bs"])
    for record in records:
        seconds = record.close_end - record.open_start
        full = record.bytes // block
        partial = 1 if record.bytes % block else 0
        lines += [f"{full}+{partial} records in", f"{full}+{partial} records out"]
        lines.append(
            f"{record.bytes} bytes ({_scaled(record.bytes, _DECIMAL)}B, {_scaled(record.bytes, _BINARY)}B) copied, "
            f"{seconds:.6g} s, {_scaled(record.bytes / seconds if seconds > 0 else 0, _DECIMAL)}B/s"
        )
    return "\n".join(lines) + "\n"


def bonnie_csv(run: dict[str, Any], spec: WorkloadSpec, records: list[Any]) -> str:
    """bonnie++ 1.98 CSV, one line per rank and iteration: block write, rewrite, block read
    in KiB/s; the per-character, seek and file tests were not run (empty fields)."""
    lines = []
    size_mib = int(spec.options["size"]) // MIB
    by_rank: dict[tuple[int, int], dict[str, float]] = {}
    for r in records:
        seconds = r.close_end - r.open_start
        by_rank.setdefault((r.iteration, r.rank), {})[r.phase] = r.bytes / seconds / 1024 if seconds > 0 else 0
    for _, rates in sorted(by_rank.items()):
        fields = [""] * 48
        fields[0:8] = [
            "1.98",
            f"simfs-{run['version']}",
            run["machine"]["hostname"],
            "1",
            "0",
            f"{size_mib}M",
            "",
            str(spec.options["chunk"]),
        ]
        for index, phase in ((11, "block write"), (13, "rewrite"), (17, "block read")):
            if phase in rates:
                fields[index] = f"{rates[phase]:.0f}"
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n"


# -- the JSON record ----------------------------------------------------------------------
def strict_json(document: Any) -> str:
    """JSON that any parser reads: NaN and infinities become null."""
    return json.dumps(strict(document), indent=2, allow_nan=False) + "\n"
