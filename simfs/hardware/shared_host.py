"""One machine's cores shared by every daemon and client of a file system (a testbed).

On a real cluster each server and client has its own cores, and the per-server
``cpu_Bps`` and per-client copy rates describe them.  On the testbed (``simfs testbed``)
the master, the chunkservers and the FUSE clients are processes of one machine: whatever
the links allow, together they cannot use more than its cores.  Each byte a client moves
costs that machine CPU time: the application's system call, the FUSE hand-off to the
client daemon, its TCP send or receive, the chunkserver's receive or send and its copy
into or out of tmpfs.  :class:`SharedHost` is that budget: a resource whose capacity is
the machine's cores (core-seconds per second) crossed by every data flow with weight
``cpu_s_per_byte``; when it binds the run is CPU-bound, and results name ``host.cpu``
(mechanism ``shared_host_cpu``).

The cost per byte is measured, not estimated: the testbed's run record carries the CPU
utilisation of the whole machine during the run (``/proc/stat``), so busy core-seconds
over bytes moved in a run that is link-bound is the cost (``calibration/testbed/``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simfs.engine.resource import Resource


@dataclass(frozen=True)
class SharedHost:
    """Attributes: ``cores`` (the machine's cores); ``write_cpu_s_per_byte`` and
    ``read_cpu_s_per_byte`` (core-seconds the machine spends per byte a client writes or
    reads, all daemons together, one stored copy); ``copy_cpu_s_per_byte`` (core-seconds
    per byte for each further copy a server forwards and stores: a chained write), all
    three an idle machine's; ``busy_cpu_growth`` (how much more every byte costs when all
    the cores are busy: a request's CPU time grows as ``1 + growth x utilisation``, the
    profile's ``host.busy_cpu_growth``, fitted by ``simfs.testbed.host_cpu.BusyGrowthFit``;
    0 where one cost holds at every load).  The host
    binds only when every core is busy, so the flows are charged the busy machine's costs
    (:meth:`cpu_s_per_byte`)."""

    cores: int
    write_cpu_s_per_byte: float
    read_cpu_s_per_byte: float
    copy_cpu_s_per_byte: float = 0.0
    busy_cpu_growth: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.cores, int) and self.cores >= 1):
            raise ValueError(f"cores: a shared host needs at least one core, got {self.cores!r}")
        for name in ("write_cpu_s_per_byte", "read_cpu_s_per_byte"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a positive CPU time per byte, got {value!r}")
        if not (math.isfinite(self.busy_cpu_growth) and self.busy_cpu_growth >= 0):
            raise ValueError(f"busy_cpu_growth: expected a non-negative growth, got {self.busy_cpu_growth!r}")
        if not (math.isfinite(self.copy_cpu_s_per_byte) and self.copy_cpu_s_per_byte >= 0):
            raise ValueError(
                f"copy_cpu_s_per_byte: expected a non-negative CPU time per byte, got {self.copy_cpu_s_per_byte!r}"
            )

    def utilisation(self, charged: float) -> float:
        """The share of the cores busy when the flows' charges at the busy machine's costs
        add up to ``charged`` of them: with costs growing as ``1 + growth x utilisation``
        from an idle machine's, the utilisation ``u`` solves ``u = u_idle (1 + growth u)``,
        ``u_idle = charged / (1 + growth)``; 1 where the host binds."""
        idle = charged / (1 + self.busy_cpu_growth)
        return idle / (1 - self.busy_cpu_growth * idle)

    def cpu_s_per_byte(self, op: str, copies: int = 1) -> float:
        """Core-seconds per byte of ``op``, written as ``copies`` copies, with every core busy."""
        if op == "write":
            idle = self.write_cpu_s_per_byte + (copies - 1) * self.copy_cpu_s_per_byte
        else:
            idle = self.read_cpu_s_per_byte
        return (1 + self.busy_cpu_growth) * idle

    def ceiling_Bps(self, op: str, copies: int = 1) -> float:
        """What the machine moves when every core does nothing else."""
        return self.cores / self.cpu_s_per_byte(op, copies)

    def resource(self) -> Resource:
        return Resource("host.cpu", float(self.cores), kind="host-cpu", unit="core")
