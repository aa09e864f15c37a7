"""How fast the machine is right now: four fixed pieces of work, timed in CPU seconds.

The testbed's CPU-bound rates rest on what a byte or a request costs the machine, and
the same commands on the same machine have cost 13-48% less CPU time in one session
than in another (``calibration/testbed/README.md``), with no nice or steal time to
explain it.  A record that carries how long fixed work took when it ran can say whether
the machine itself was slower then, and by how much, for each kind of work the testbed
does:

* ``sha256_cpu_s_per_gib``: hashing a 16 MiB buffer, user-space arithmetic over memory
  (the daemons' own code);
* ``zero_read_cpu_s_per_gib``: ``read()`` of 128 KiB from ``/dev/zero``, the kernel
  filling user memory (every FUSE and socket read copies so);
* ``pipe_round_trip_cpu_us`` and ``pipe_round_trip_two_cores_cpu_us``: two processes
  passing one byte back and forth through pipes, on one core and on two, the CPU time
  of both per round trip (the context switches and wake-ups every request through a
  FUSE daemon and a TCP connection pays; across cores a virtual machine's wake-ups go
  through its hypervisor, and cost several times as much).

Each is the median of three short trials, about a second in all; ``simfs testbed
run`` takes it before the run's counters start, so it costs the run nothing.
"""

from __future__ import annotations

import hashlib
import os
import resource
import statistics
import time

_HASHED_BYTES = 16 << 20
_READ_BYTES = 128 << 10
_READS = 1024
_ROUND_TRIPS = 3000
_TRIALS = 3


def machine_probe() -> dict[str, float | None]:
    """The four timings (see the module docstring), each the median of three trials
    (the two-core round trip None on a machine that lets this process use one core)."""
    buffer = os.urandom(_HASHED_BYTES)
    cores = sorted(os.sched_getaffinity(0))
    probe: dict[str, float | None] = {
        "sha256_cpu_s_per_gib": statistics.median(_hash(buffer) for _ in range(_TRIALS)),
        "zero_read_cpu_s_per_gib": statistics.median(_zero_reads() for _ in range(_TRIALS)),
        "pipe_round_trip_cpu_us": statistics.median(_round_trips(cores[0], cores[0]) for _ in range(_TRIALS)),
        "pipe_round_trip_two_cores_cpu_us": None,
    }
    if len(cores) > 1:
        trips = [_round_trips(cores[0], cores[1]) for _ in range(_TRIALS)]
        probe["pipe_round_trip_two_cores_cpu_us"] = statistics.median(trips)
    return probe


def _hash(buffer: bytes) -> float:
    started = time.process_time()
    hashlib.sha256(buffer).digest()
    return (time.process_time() - started) / len(buffer) * 2**30


def _zero_reads() -> float:
    descriptor = os.open("/dev/zero", os.O_RDONLY)
    try:
        started = time.process_time()
        for _ in range(_READS):
            os.read(descriptor, _READ_BYTES)
        return (time.process_time() - started) / (_READS * _READ_BYTES) * 2**30
    finally:
        os.close(descriptor)


def _round_trips(parent_core: int, child_core: int) -> float:
    """CPU time of this process and a child per round trip of one byte through pipes,
    each pinned to its core (one core: two context switches a trip; two: two
    cross-core wake-ups, which a virtual machine pays for through its hypervisor)."""
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {parent_core})
    # getrusage, not os.times: clock ticks (10 ms) would be a tenth of what is measured.
    before = _cpu_s(resource.RUSAGE_SELF), _cpu_s(resource.RUSAGE_CHILDREN)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side, measured through getrusage
        try:
            os.sched_setaffinity(0, {child_core})
            for _ in range(_ROUND_TRIPS):
                os.read(to_child, 1)
                os.write(to_parent, b"x")
        finally:
            os._exit(0)
    try:
        for _ in range(_ROUND_TRIPS):
            os.write(from_parent, b"x")
            os.read(from_child, 1)
    finally:
        os.waitpid(child, 0)
        os.sched_setaffinity(0, allowed)
        for descriptor in (to_child, from_parent, from_child, to_parent):
            os.close(descriptor)
    used = _cpu_s(resource.RUSAGE_SELF) - before[0] + _cpu_s(resource.RUSAGE_CHILDREN) - before[1]
    return used / _ROUND_TRIPS * 1e6


def _cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
