"""obdfilter-survey (lustre-iokit): the OSS and its OSTs alone, no client, no network.

The survey drives the obdfilter layer of one OSS from kernel threads (the echo client),
``thr`` threads over ``obj`` objects spread over the server's ``ost`` OSTs, each thread
keeping one ``rsz`` request outstanding, and prints per OSS the total MB/s with the
slowest and fastest OST::

    ost  4 sz 134217728K rsz 1024K obj    4 thr 1024 write 3032.89 [ 713.86, 926.89] ...

Two forms are accepted:

* the printed configuration, as ``simfs.ingest`` records it:
  ``obdfilter-survey ost=4 sz=134217728K rsz=1024K obj=4 thr=1024`` (totals over the OSTs);
* the way it is run, environment variables first:
  ``thrlo=256 thrhi=256 nobjlo=1 nobjhi=1 rsz=1024K size=32768 obdfilter-survey``
  (threads and objects per OST, ``size`` in MB per OST; the OST count is the profile's
  ``osts_per_oss`` unless ``ost=`` is given).  ``lo`` and ``hi`` must agree: simfs runs one
  configuration; sweep others with ``--vary``.  ``tests_str`` chooses among ``write
  rewrite read`` (default all three, in that order); ``case=disk`` is the only case.

In simfs each object is a rank on the first OSS; nodes and processes per node of the
experiment do not apply.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.options import parse_count, parse_size
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

_TESTS = ("write", "rewrite", "read")
_KNOWN = {
    "ost",
    "sz",
    "size",
    "rsz",
    "obj",
    "thr",
    "nobjlo",
    "nobjhi",
    "thrlo",
    "thrhi",
    "tests_str",
    "case",
    "targets",
    "TERM",
}


def parse_obdfilter(args: list[str], command: str) -> WorkloadSpec:
    values: dict[str, str] = {}
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep:
            raise WorkloadError(f"obdfilter-survey: unsupported argument {arg!r}: expected NAME=VALUE")
        if name not in _KNOWN:
            raise WorkloadError(f"obdfilter-survey: unsupported variable {name!r} (known: {', '.join(sorted(_KNOWN))})")
        values[name] = value
    if values.get("case", "disk") != "disk":
        raise WorkloadError(f"obdfilter-survey: case={values['case']}: only case=disk (OSS and OSTs alone) is modelled")
    osts = _integer(values, "ost") if "ost" in values else None
    rsz = _size(values.get("rsz", "1024K"), "rsz")
    if "obj" in values or "thr" in values:
        if osts is None:
            raise WorkloadError("obdfilter-survey: obj= and thr= are totals over the OSTs: give ost= as well")
        objects, threads = _integer(values, "obj"), _integer(values, "thr")
        if objects % osts or threads % objects:
            raise WorkloadError("obdfilter-survey: obj must be a multiple of ost, thr a multiple of obj")
        objects_per_ost = objects // osts
        threads_per_object = threads // objects
    else:
        objects_per_ost = _pair(values, "nobjlo", "nobjhi")
        threads_per_ost = _pair(values, "thrlo", "thrhi")
        if threads_per_ost % objects_per_ost:
            raise WorkloadError("obdfilter-survey: threads per OST must be a multiple of objects per OST")
        threads_per_object = threads_per_ost // objects_per_ost
    if "sz" in values:
        if osts is None:
            raise WorkloadError("obdfilter-survey: sz= is the total over the OSTs: give ost= as well")
        bytes_per_ost = _size(values["sz"], "sz") // osts
    else:
        bytes_per_ost = _integer(values, "size") * (1 << 20) if "size" in values else 1 << 30
    tests = values.get("tests_str", " ".join(_TESTS)).split()
    unknown = [t for t in tests if t not in _TESTS]
    if unknown or not tests:
        raise WorkloadError(f"obdfilter-survey: tests_str: expected some of {' '.join(_TESTS)}, got {tests!r}")
    object_bytes = bytes_per_ost // objects_per_ost
    phases = tuple(
        PhaseSpec(
            "read" if test == "read" else "write",
            bytes_per_rank=object_bytes,
            transfer_size_bytes=rsz,
            label=test,
            server_side=True,
        )
        for test in tests
    )
    options = {
        "osts": osts,
        "objects_per_ost": objects_per_ost,
        "threads_per_object": threads_per_object,
        "rsz": rsz,
    }
    return WorkloadSpec("obdfilter-survey", command, phases, aggregate="makespan", options=options)


def _integer(values: dict[str, str], name: str) -> int:
    return parse_count("obdfilter-survey", f"{name}={values[name]}", values[name])


def _pair(values: dict[str, str], low: str, high: str) -> int:
    if high not in values and low not in values:
        return 1
    hi = _integer(values, high) if high in values else _integer(values, low)
    lo = _integer(values, low) if low in values else hi
    if lo != hi:
        raise WorkloadError(
            f"obdfilter-survey: {low}={lo} {high}={hi}: simfs runs one configuration (use --vary for a sweep)"
        )
    return hi


def _size(text: str, name: str) -> int:
    return parse_size("obdfilter-survey", f"{name}={text}", text)
