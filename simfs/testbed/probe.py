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

Each is the median of three short trials, about two thirds of a second in all; ``simfs testbed
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
    hashed = statistics.median(_hash(buffer) for _ in range(_TRIALS))
    del buffer  # not copied into the children of the round trips
    cores = sorted(os.sched_getaffinity(0))
    probe: dict[str, float | None] = {
        "sha256_cpu_s_per_gib": hashed,
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
    cross-core wake-ups, which a virtual machine pays for through its hypervisor).  Each
    side times its own trips, after a first exchange, so the fork and the exit are not
    counted; the child sends its CPU seconds back as text."""
    down_read, down_write = os.pipe()  # parent -> child
    up_read, up_write = os.pipe()  # child -> parent
    allowed = os.sched_getaffinity(0)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side; its result comes back on the pipe
        status = 1
        try:
            os.close(down_write)
            os.close(up_read)
            os.sched_setaffinity(0, {child_core})
            _expect(down_read)
            os.write(up_write, b"r")  # ready
            started = _cpu_s(resource.RUSAGE_SELF)
            for _ in range(_ROUND_TRIPS):
                _expect(down_read)
                os.write(up_write, b"x")
            os.write(up_write, f"{_cpu_s(resource.RUSAGE_SELF) - started!r}\n".encode())
            status = 0
        finally:
            os._exit(status)
    try:
        os.close(down_read)
        os.close(up_write)
        os.sched_setaffinity(0, {parent_core})
        os.write(down_write, b"s")
        _expect(up_read)
        started = _cpu_s(resource.RUSAGE_SELF)
        for _ in range(_ROUND_TRIPS):
            os.write(down_write, b"x")
            _expect(up_read)
        used = _cpu_s(resource.RUSAGE_SELF) - started
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = os.read(up_read, 64)
            if not chunk:
                raise OSError("machine probe: the pipe round trips' child ended before it reported")
            reply += chunk
        used += float(reply)
    finally:
        os.sched_setaffinity(0, allowed)
        os.close(down_write)  # the child, if still waiting, reads an end of file and exits
        os.close(up_read)
        os.waitpid(child, 0)
    return used / _ROUND_TRIPS * 1e6


def _expect(descriptor: int) -> None:
    """Read the one byte the other side sends; an end of file means it is gone."""
    if not os.read(descriptor, 1):
        raise OSError("machine probe: the other side of the pipe round trips ended")


def _cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
