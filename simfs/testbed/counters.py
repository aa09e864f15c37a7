"""What a testbed run leaves in its record besides the rates: TCP loss recovery on every
host, drops at the switch's ports, and how busy the machine's CPUs were.

TCP counters come from each host's namespace (``nstat``, absolute values, its history
file left alone): segments retransmitted, retransmission timeouts (RTOs, the 200 ms
stalls of incast) and tail-loss probes (how Linux avoids most of them).  Drops are the
switch ports' token-bucket queues overflowing.  CPU utilisation is the busy share of all
CPUs over the run (``/proc/stat``): with two CPUs and several FUSE daemons, a run can be
CPU-bound, and its record must say so.  The busy core-seconds and the run's length are
recorded beside it, so that the CPU time a byte costs can be fitted over runs
(``calibration/testbed/``), and so is each daemon's own CPU time (``/proc/PID/stat``:
user and system time of all its threads): what the master, each chunkserver and each
client's FUSE daemon took of it; the rest is the ranks and the kernel's work outside
those processes (network softirqs, page cache), with each daemon's context switches
(voluntary: it waited; involuntary: the scheduler preempted it).  The same CPU figures
are recorded for each phase of a synchronised run (``cpu_by_phase``), sampled at its
barriers.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from simfs.runner.machine import cpu_between, cpu_times
from simfs.runner.records import RankPhase
from simfs.testbed.network import TestbedNetwork
from simfs.testbed.processes import Started, alive, stat_fields

#: nstat's names, and the record's.
TCP_COUNTERS = {
    "TcpOutSegs": "segments_sent",
    "TcpRetransSegs": "retransmitted_segments",
    "TcpExtTCPTimeouts": "rtos",
    "TcpExtTCPLossProbes": "tail_loss_probes",
}


def tcp_counters(network: TestbedNetwork) -> dict[str, dict[str, int]]:
    """Per host, the TCP counters of :data:`TCP_COUNTERS` now."""
    counters = {}
    for host in network.hosts:
        completed = subprocess.run(
            network.enter(host) + ["nstat", "-azs", "-j"], capture_output=True, text=True, check=True
        )
        kernel = json.loads(completed.stdout)["kernel"]
        counters[host] = {name: int(kernel.get(source, 0)) for source, name in TCP_COUNTERS.items()}
    return counters


def switch_drops(network: TestbedNetwork) -> dict[str, int]:
    """Per switch port (named after its host), packets its queue has dropped so far."""
    completed = subprocess.run(
        ["tc", "-s", "-j", "-n", network.switch_namespace, "qdisc", "show"], capture_output=True, text=True, check=True
    )
    drops = {}
    for qdisc in json.loads(completed.stdout):
        if qdisc.get("kind") == "tbf" and qdisc.get("dev") in network.hosts:
            drops[qdisc["dev"]] = int(qdisc.get("drops", 0))
    return drops


def process_cpu_s(processes: dict[str, Started]) -> dict[str, float]:
    """Per recorded process, the CPU seconds it has used so far, user and system, all
    its threads; a process that is gone (or whose PID another process now has) is left
    out."""
    tick_s = 1 / os.sysconf("SC_CLK_TCK")
    used = {}
    for name, process in processes.items():
        fields = stat_fields(process.pid)
        if fields is not None and int(fields[19]) == process.start_ticks:
            used[name] = (int(fields[11]) + int(fields[12])) * tick_s
    return used


def process_switches(processes: dict[str, Started]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per recorded process (one whose PID is still its own), each live thread's context
    switches so far: voluntary (it waited for something) and involuntary (the scheduler
    took the core away), from ``/proc/PID/task/TID/status``."""
    switches = {}
    for name, process in processes.items():
        if not alive(process):
            continue
        try:
            tasks = os.listdir(f"/proc/{process.pid}/task")
        except OSError:
            continue
        threads = {}
        for task in tasks:
            try:
                lines = Path(f"/proc/{process.pid}/task/{task}/status").read_text().splitlines()
            except OSError:
                continue  # the thread ended meanwhile
            counts = dict.fromkeys(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"), 0)
            for line in lines:
                key = line.split(maxsplit=1)[0] if line else ""
                if key in counts:
                    counts[key] = int(line.split()[1])
            threads[task] = (counts["voluntary_ctxt_switches:"], counts["nonvoluntary_ctxt_switches:"])
        switches[name] = threads
    return switches


def _switches_between(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[int]:
    """A process's context switches between two samples, thread by thread: a thread
    started meanwhile counts whole; one that ended meanwhile is not seen (its last
    switches are lost)."""
    voluntary = involuntary = 0
    for thread, now in after.items():
        then = before.get(thread, (0, 0))
        if now[0] < then[0] or now[1] < then[1]:
            then = (0, 0)  # a new thread under an ended one's id: it counts whole
        voluntary += now[0] - then[0]
        involuntary += now[1] - then[1]
    return [voluntary, involuntary]


class CpuSample:
    """The machine's and each recorded process's CPU time at one moment."""

    def __init__(self, processes: dict[str, Started]) -> None:
        self.ticks = cpu_times()
        self.process_s = process_cpu_s(processes)
        self.switches = process_switches(processes)

    def until(self, later: CpuSample) -> dict:
        """The record's CPU fields for the time from this sample to ``later``."""
        return {
            # Inside the busy time: niced processes (not the testbed's) and stolen time.
            **cpu_between(self.ticks, later.ticks),
            "cpu_by_process_s": {
                name: round(seconds - self.process_s[name], 6)
                for name, seconds in later.process_s.items()
                if name in self.process_s
            },
            # Voluntary and involuntary, summed over the threads (_switches_between).
            "context_switches_by_process": {
                name: _switches_between(self.switches[name], threads)
                for name, threads in later.switches.items()
                if name in self.switches
            },
        }


class RunCounters:
    """Counters sampled at the start of a run; :meth:`since` gives what the run added.
    ``processes`` (by name) are the daemons whose own CPU time is recorded.

    :meth:`phase_boundary` (the runner's ``on_phase``) samples the CPU times as each
    phase of a synchronised run starts and ends, while the ranks wait in the barrier, so
    that the record also says what each phase cost (``cpu_by_phase``): a run that writes
    and then reads is link-bound in one phase and CPU-bound in the other."""

    def __init__(self, network: TestbedNetwork, processes: dict[str, Started] | None = None) -> None:
        self._network = network
        self._processes = dict(processes or {})
        self._tcp = tcp_counters(network)
        self._drops = switch_drops(network)
        self._cpu = CpuSample(self._processes)
        self._phase_start: CpuSample | None = None
        self._phases: list[dict] = []

    def phase_boundary(self, event: str, record: RankPhase | None) -> None:
        """The runner's ``on_phase``: sample at a phase's start; at its end, record what
        it cost (a phase in which a rank failed is left out: it did not run whole)."""
        if event == "start":
            self._phase_start = CpuSample(self._processes)
        elif self._phase_start is not None:
            if event == "end":
                cost = self._phase_start.until(CpuSample(self._processes))
                named = {"iteration": record.iteration, "phase": record.phase} if record is not None else {}
                self._phases.append({**named, **cost})
            self._phase_start = None

    def since(self) -> dict:
        tcp_now, drops_now = tcp_counters(self._network), switch_drops(self._network)
        per_host = {
            host: {name: value - self._tcp[host][name] for name, value in counters.items()}
            for host, counters in tcp_now.items()
        }
        totals = {name: sum(host[name] for host in per_host.values()) for name in TCP_COUNTERS.values()}
        return {
            "tcp": totals,
            "tcp_per_host": per_host,
            "switch_port_drops": {port: drops_now[port] - self._drops.get(port, 0) for port in drops_now},
            **self._cpu.until(CpuSample(self._processes)),
            "cpu_by_phase": list(self._phases),
        }
