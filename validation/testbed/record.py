"""Re-record the testbed's live runs: the calibration runs and the validation series.

Run as root on a machine where ``simfs testbed`` runs (``/dev/fuse``, network namespaces,
Debian's moosefs-master, -chunkserver and -client, glusterfs-server and -client)::

    .venv/bin/python validation/testbed/record.py              # everything, about 30 minutes
    .venv/bin/python validation/testbed/record.py clients-s4   # one series
    .venv/bin/python validation/testbed/record.py --ci         # CI: one small run, compared
    .venv/bin/python validation/testbed/record.py calibration calibration-s2 --out /tmp/mine
                                         # another machine's own: into /tmp/mine/calibration/testbed/runs/

``--ci`` is what ``.ci/run`` does: where the machine allows the testbed, one IOR run on
2 chunkservers and 2 clients, compared with ``testbed-moosefs``, and one fan-in point (a
GlusterFS 2+1 volume read by one client through a 16 KiB port), compared with
``testbed-glusterfs`` (records kept in a temporary folder, nothing committed;
``simfs validate --live``), each table printed with every phase beyond its tolerance
(10%, 25% for fan-in) marked; where it does not, one line saying why.  It fails when
the testbed cannot run or leaves anything behind, not on a prediction's error: a live
rate on a shared CI machine is a measurement to report, not a test (a busy machine
moves it; the committed series, recorded on an idle one, are the validation).

Each series brings a testbed of its shape up with ``simfs testbed up``, runs its
workloads with ``simfs testbed run --json``, and takes it down; the commands are printed
as they run and each record (the runner's JSON, with the testbed's description and
counters) goes to the series' folder under ``runs/`` beside the cases that read it, or to
``calibration/testbed/runs/`` for the calibration series; with ``--out DIR``, to the same
path under DIR instead (another machine's records, leaving the committed ones as they
are: ``calibration/testbed/xeon/README.md``).  An existing record is
replaced only when its run succeeded.  Nothing else on the machine is touched: the
testbed's network lives in its own namespaces and ends with ``simfs testbed down``.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CALIBRATION = ROOT / "calibration" / "testbed" / "runs"
METADATA_CALIBRATION = ROOT / "calibration" / "testbed" / "metadata-runs"
GLUSTER_CALIBRATION = ROOT / "calibration" / "testbed" / "gluster-runs"
GLUSTER_METADATA_CALIBRATION = ROOT / "calibration" / "testbed" / "gluster-metadata-runs"
#: File per process, 1 MiB transfers, reads by another client than wrote (-C), fsync in
#: the write phase (-e): what the link and the chunkservers sustain, not a cache.
SCALING = "ior -a POSIX -F -t 1m -b 64m -w -r -C -e"
#: Many files read at once through one client: 64 KiB requests, one 32 MiB file per rank.
FANIN = "ior -a POSIX -F -t 64k -b 32m -w -r -e"
#: Creates, stats and removes of empty files in one shared directory, per process.
METADATA = "mdtest -n {items} -F -C -T -r"


@dataclass(frozen=True)
class Series:
    """Runs on one testbed shape: ``runs`` maps a record name to (ranks, workload)."""

    name: str
    servers: int
    clients: int
    #: MooseFS copies of each chunk (None for GlusterFS).
    goal: int | None
    runs: dict[str, tuple[int, str]]
    folder: Path
    #: A run made once before the recorded ones, its record dropped: the first metadata
    #: run after ``up`` is up to 40% slower (the master's and the mounts' first requests).
    warm_up: tuple[int, str] | None = None
    #: Bytes queued at a switch port (``simfs testbed up --port-buffer``).
    port_buffer: int = 131072
    #: The file system; for ``glusterfs``, ``disperse`` ("K+M") or None (distributed),
    #: and ``goal`` is not used.
    file_system: str = "moosefs"
    disperse: str | None = None

    def up_command(self) -> list[str]:
        shape = ["--servers", str(self.servers), "--clients", str(self.clients)]
        if self.file_system == "glusterfs":
            shape += ["--disperse", self.disperse] if self.disperse else []
        else:
            shape += ["--goal", str(self.goal)]
        return ["testbed", "up", self.file_system, *shape, "--port-buffer", str(self.port_buffer)]


def _scaling(name: str, servers: int, clients: list[int], goal: int = 2) -> list[Series]:
    """One testbed with the most clients; each point uses the first ``c`` of them."""
    return [
        Series(
            name,
            servers,
            max(clients),
            goal,
            {f"c{count}": (count, SCALING) for count in clients},
            HERE / "runs" / name,
        )
    ]


#: GlusterFS fan-in: one client reads one file of a dispersed K+M volume (its K data
#: bricks answer every read at once) in synchronous requests of 64 KiB and 1 MiB, through
#: a switch port queueing 16 or 128 KiB, over K = 2, 3, 4, 6; the 6+2 volume also at
#: 32 KiB and 1 MiB of buffer, and in requests of 32 and 128 KiB (what one read() is).
GLUSTER_FANIN: list[tuple[int, int, int, tuple[str, ...]]] = [
    (2, 1, 16384, ("64k", "1m")),
    (2, 1, 131072, ("64k", "1m")),
    (3, 1, 16384, ("64k", "1m")),
    (3, 1, 131072, ("64k", "1m")),
    (4, 1, 16384, ("64k", "1m")),
    (4, 1, 131072, ("64k", "1m")),
    (6, 2, 16384, ("32k", "64k", "128k", "1m")),
    (6, 2, 32768, ("64k", "1m")),
    (6, 2, 131072, ("64k", "1m")),
    (6, 2, 1048576, ("64k", "1m")),
]


def _fanin_folder(data: int, redundancy: int, buffer: int) -> Path:
    """Runs over K at one buffer in one folder (a case reads it), the 6+2 volume's other
    buffers in another."""
    if buffer in (16384, 131072):
        return HERE / "runs" / f"gluster-fanin-b{buffer // 1024}k" / f"d{data}p{redundancy}"
    return HERE / "runs" / "gluster-fanin-buffers" / f"b{buffer // 1024}k"


#: A small run made once after ``up`` and dropped (the first run after ``up`` costs more).
GLUSTER_WARM_UP = (1, "ior -a POSIX -F -t 1m -b 16m -w -r -e")


def _gluster(
    name: str, volume: tuple[int, int] | None, bricks: int, clients: int, runs: dict, folder: Path, **more
) -> Series:
    """A GlusterFS series: a disperse ``(K, M)`` volume on ``bricks`` servers (or, with
    ``volume`` None, a distributed one), with a warm-up run unless ``more`` says otherwise."""
    disperse = f"{volume[0]}+{volume[1]}" if volume else None
    more.setdefault("warm_up", GLUSTER_WARM_UP)
    return Series(name, bricks, clients, None, runs, folder, file_system="glusterfs", disperse=disperse, **more)


def _gluster_metadata(name: str, runs: dict, folder: Path, volume: tuple[int, int] = (2, 1)) -> Series:
    """A GlusterFS metadata series: a disperse volume (2+1 unless ``volume`` says) with 8
    clients mounted (idle mounts cost the machine CPU too), a small mdtest run first (the
    first run after ``up`` is slower)."""
    return _gluster(name, volume, sum(volume), 8, runs, folder, warm_up=(1, METADATA.format(items=1000)))


def _moosefs_metadata(name: str, runs: dict, folder: Path) -> Series:
    """A MooseFS metadata series: 2 chunkservers, goal 2, 8 clients mounted (idle mounts cost
    the machine CPU too), a small mdtest run first (the first run after ``up`` is slower)."""
    return Series(name, 2, 8, 2, runs, folder, warm_up=(1, METADATA.format(items=1000)))


SERIES: list[Series] = [
    # Calibration: one client on one or two chunkservers, link-bound; write-only and
    # write-read runs of two sizes so that the fit separates the CPU time per byte
    # written, per chained copy and per byte read from a run's fixed cost.
    Series(
        "calibration",
        1,
        1,
        2,
        {
            "s1-w64": (1, "ior -a POSIX -F -t 1m -b 64m -w -e"),
            "s1-w128": (1, "ior -a POSIX -F -t 1m -b 128m -w -e"),
            "s1-wr64": (1, SCALING),
            "s1-wr128": (1, "ior -a POSIX -F -t 1m -b 128m -w -r -C -e"),
        },
        CALIBRATION,
    ),
    Series(
        "calibration-s2",
        2,
        1,
        2,
        {
            "s2-w64": (1, "ior -a POSIX -F -t 1m -b 64m -w -e"),
            "s2-wr64": (1, SCALING),
        },
        CALIBRATION,
    ),
    # Calibration under load: 1, 2, 4 and 8 clients on 6 chunkservers, goal 2 (a shape no
    # scaling case uses), each phase's CPU time recorded: how the CPU time of a byte
    # changes as the machine gets busy (simfs/testbed/host_cpu.py, --load).
    Series(
        "calibration-load",
        6,
        8,
        2,
        {f"load-s6-c{count}": (count, SCALING) for count in (1, 2, 4, 8)},
        CALIBRATION.parent / "load-runs",
    ),
    *_scaling("clients-s4", 4, [1, 2, 4, 8]),
    *_scaling("clients-s4-goal1", 4, [1, 2, 4, 8], goal=1),
    *_scaling("servers-s1", 1, [4]),
    *_scaling("servers-s2", 2, [4]),
    *_scaling("servers-s8", 8, [4]),
    # Fan-in: one client reads 2, 4, 8 files at once, each on its own chunkserver (goal
    # 1, 32 MiB files: one chunk each), 64 KiB requests, through a switch port that
    # queues 128 KiB or 16 KiB.
    *(
        Series(
            f"fanin-{label}",
            8,
            1,
            1,
            {f"r{count}": (count, FANIN) for count in (2, 4, 8)},
            HERE / "runs" / f"fanin-{label}",
            port_buffer=buffer,
        )
        for label, buffer in (("b128k", 131072), ("b16k", 16384))
    ),
    # Metadata, on one testbed shape (2 chunkservers, 8 clients: idle mounts cost the
    # machine CPU too): one process, four sizes, for the fit of the CPU time per request
    # (simfs/testbed/metadata_cpu.py); then 2-8 processes, one per client.
    _moosefs_metadata(
        "metadata-calibration",
        {f"m1-n{items}": (1, METADATA.format(items=items)) for items in (1000, 2000, 4000, 8000)},
        METADATA_CALIBRATION,
    ),
    # GlusterFS calibration: one client on 2+1, 3+2 and 4+1 volumes (a write request goes
    # to K+M bricks, a read to K), link-bound, write-only and write-read runs of two
    # sizes, for the fit of the CPU time per FUSE request and per brick request
    # (simfs/testbed/gluster_cpu.py).  The first run after up costs more; it is dropped.
    *(
        _gluster(
            f"gluster-calibration-d{data}p{redundancy}",
            (data, redundancy),
            data + redundancy,
            1,
            {
                f"d{data}p{redundancy}-w64": (1, "ior -a POSIX -F -t 1m -b 64m -w -e"),
                f"d{data}p{redundancy}-wr64": (1, SCALING),
                f"d{data}p{redundancy}-wr128": (1, "ior -a POSIX -F -t 1m -b 128m -w -r -C -e"),
            },
            GLUSTER_CALIBRATION,
        )
        for data, redundancy in ((2, 1), (3, 2), (4, 1))
    ),
    # GlusterFS calibration under load: 1, 2, 4 and 8 clients on a 4+1 volume (a shape
    # no scaling case uses), each phase's CPU time and context switches recorded, for
    # how a request's CPU time grows as the machine gets busy.
    _gluster(
        "gluster-calibration-load",
        (4, 1),
        5,
        8,
        {f"load-d4p1-c{count}": (count, SCALING) for count in (1, 2, 4, 8)},
        GLUSTER_CALIBRATION.parent / "gluster-load-runs",
    ),
    # GlusterFS: a dispersed volume of 2+1 bricks read and written by 1-3 clients; the
    # fan-in series are GLUSTER_FANIN's.
    Series(
        "gluster-d2p1",
        3,
        3,
        None,
        {f"c{count}": (count, SCALING) for count in (1, 2, 3)},
        HERE / "runs" / "gluster-d2p1",
        file_system="glusterfs",
        disperse="2+1",
    ),
    # Scaling of dispersed volumes: 1, 2, 4, 8 clients on 6+2 bricks (8 servers), and 4
    # clients on 2+1, 3+1, 4+2 (3, 4, 6 servers; 6+2 is the series before) and on a
    # distributed volume of 2 (each file whole on the brick its name's hash picks).
    _gluster(
        "gluster-d6p2-clients",
        (6, 2),
        8,
        8,
        {f"c{count}": (count, SCALING) for count in (1, 2, 4, 8)},
        HERE / "runs" / "gluster-d6p2-clients",
    ),
    # The same series again (2026-11-27), now with each phase's CPU time (cpu_by_phase):
    # from 4 clients the machine is CPU-bound, and which phase costs what is the question.
    _gluster(
        "gluster-d6p2-clients-repeat",
        (6, 2),
        8,
        8,
        {f"c{count}-r2": (count, SCALING) for count in (1, 2, 4, 8)},
        HERE / "runs" / "gluster-d6p2-clients",
    ),
    *(
        _gluster(
            f"gluster-servers-d{data}p{redundancy}",
            (data, redundancy),
            data + redundancy,
            4,
            {"c4": (4, SCALING)},
            HERE / "runs" / "gluster-servers" / f"d{data}p{redundancy}",
        )
        for data, redundancy in ((2, 1), (3, 1), (4, 2))
    ),
    _gluster(
        "gluster-servers-distribute",
        None,
        2,
        4,
        {"c4": (4, SCALING)},
        HERE / "runs" / "gluster-servers" / "distribute",
    ),
    # The four-client series again (2026-11-27 evening), with each phase's CPU time: the
    # first was recorded in a session whose requests cost the machine more CPU.
    *(
        _gluster(
            f"gluster-servers-{shape}-repeat",
            volume,
            bricks,
            4,
            {"c4-r2": (4, SCALING)},
            HERE / "runs" / "gluster-servers" / shape,
        )
        for shape, volume, bricks in (
            ("d2p1", (2, 1), 3),
            ("d3p1", (3, 1), 4),
            ("d4p2", (4, 2), 6),
            ("distribute", None, 2),
        )
    ),
    *(
        Series(
            f"gluster-fanin-b{buffer // 1024}k-d{data}p{redundancy}",
            data + redundancy,
            1,
            None,
            {f"t{size}": (1, f"ior -a POSIX -t {size} -b 64m -w -r -e") for size in transfers},
            _fanin_folder(data, redundancy, buffer),
            port_buffer=buffer,
            file_system="glusterfs",
            disperse=f"{data}+{redundancy}",
        )
        for data, redundancy, buffer, transfers in GLUSTER_FANIN
    ),
    # GlusterFS metadata, on one testbed shape (a disperse 2+1 volume, 8 clients): one
    # process, four sizes twice (one run's rate varies by 10-40%), for the fit of the CPU
    # time per request; then 2-8 processes.
    _gluster_metadata(
        "gluster-metadata-calibration",
        {
            f"m1-n{items}-r{repeat}": (1, METADATA.format(items=items))
            for repeat in (1, 2)
            for items in (1000, 2000, 4000, 8000)
        },
        GLUSTER_METADATA_CALIBRATION,
    ),
    # Two processes on two clients in the shared directory, three sizes twice: the parent
    # directory's lock now passes from one client to the other at every create and unlink,
    # and the machine's extra CPU time per pass is fitted from these (metadata_cpu.py).
    _gluster_metadata(
        "gluster-metadata-calibration-2p",
        {
            f"m2-n{items}-r{repeat}": (2, METADATA.format(items=items))
            for repeat in (1, 2)
            for items in (1000, 2000, 4000)
        },
        GLUSTER_METADATA_CALIBRATION,
    ),
    _gluster_metadata(
        "gluster-metadata-d2p1",
        {f"p{count}": (count, METADATA.format(items=2000)) for count in (2, 3, 4, 6, 8)},
        HERE / "runs" / "gluster-metadata-d2p1",
    ),
    # The metadata series again, beside the first in its folder, in the session of the
    # calibration runs in use: recordings hours apart differ by 11-28% in the machine's
    # CPU time per item (and runs of one configuration minutes apart by up to 30%).
    _gluster_metadata(
        "gluster-metadata-d2p1-repeat",
        {f"p{count}-r2": (count, METADATA.format(items=2000)) for count in (2, 3, 4, 6, 8)},
        HERE / "runs" / "gluster-metadata-d2p1",
    ),
    # The metadata series on a volume of another shape (4+2: a create or unlink locks and
    # updates six bricks, not three), one process and 2-8: the [dht] costs are fitted on
    # 2+1 only.
    _gluster_metadata(
        "gluster-metadata-d4p2",
        {f"p{count}": (count, METADATA.format(items=2000)) for count in (1, 2, 3, 4, 6, 8)},
        HERE / "runs" / "gluster-metadata-d4p2",
        volume=(4, 2),
    ),
    # Repeats of the fan-in points that collapse (16 KiB port): a few 200 ms timeouts set
    # their rate, so runs differ; two more of each, beside the first in its folder.
    *(
        Series(
            f"gluster-fanin-b16k-d{data}p{redundancy}-repeats",
            data + redundancy,
            1,
            None,
            {
                f"t{size}-r{repeat}": (1, f"ior -a POSIX -t {size} -b 64m -w -r -e")
                for repeat in (2, 3)
                for size in transfers
            },
            _fanin_folder(data, redundancy, 16384),
            port_buffer=16384,
            file_system="glusterfs",
            disperse=f"{data}+{redundancy}",
        )
        for data, redundancy, buffer, transfers in GLUSTER_FANIN
        if buffer == 16384
    ),
    _moosefs_metadata(
        "metadata-s2",
        {f"p{count}": (count, METADATA.format(items=2000)) for count in (2, 3, 4, 6, 8)},
        HERE / "runs" / "metadata-s2",
    ),
    # The MooseFS metadata series again, beside the first (recorded 2026-11-24 before the
    # runner kept each process's CPU time): the master's own share of the CPU, and how
    # far apart two recordings of one configuration fall.
    _moosefs_metadata(
        "metadata-s2-repeat",
        {f"p{count}-r2": (count, METADATA.format(items=2000)) for count in (2, 3, 4, 6, 8)},
        HERE / "runs" / "metadata-s2",
    ),
]


def simfs(arguments: list[str], *, check: bool = True) -> int:
    command = [sys.executable, "-m", "simfs.cli", *arguments]
    print("$ simfs " + shlex.join(arguments), flush=True)
    return subprocess.run(command, check=check).returncode


def record(series: Series) -> None:
    series.folder.mkdir(parents=True, exist_ok=True)
    simfs(series.up_command())
    try:
        if series.warm_up is not None:
            ranks, workload = series.warm_up
            simfs(["testbed", "run", "--np", str(ranks), "--", *shlex.split(workload)], check=False)
        for name, (ranks, workload) in series.runs.items():
            with tempfile.TemporaryDirectory() as scratch:
                written = Path(scratch) / f"{name}.json"
                code = simfs(
                    ["testbed", "run", "--np", str(ranks), "--json", str(written), "--", *shlex.split(workload)],
                    check=False,
                )
                if code == 0:
                    # A move, not a rename: --out may be on another file system than /tmp.
                    shutil.move(written, series.folder / f"{name}.json")
                else:
                    print(f"record: {series.name}/{name} failed (exit {code}); its old record is kept", flush=True)
    finally:
        simfs(["testbed", "down"])


#: The CI series: (what it is, the series, the profile it is compared with, tolerance).
CI_SERIES = (
    ("2 chunkservers, 2 clients, goal 2", "moosefs", "testbed-moosefs", 0.10),
    (
        "fan-in: a disperse 2+1 volume's two data bricks into one client, 16 KiB port",
        "glusterfs",
        "testbed-glusterfs",
        0.25,
    ),
)


def _ci_run(file_system: str, folder: Path) -> Series:
    if file_system == "moosefs":
        return Series("ci", 2, 2, 2, {"c2": (2, SCALING)}, folder)
    return Series(
        "ci-fanin",
        3,
        1,
        None,
        {"t64k": (1, "ior -a POSIX -t 64k -b 16m -w -r -e")},
        folder,
        port_buffer=16384,
        file_system="glusterfs",
        disperse="2+1",
    )


def ci_series() -> int:
    """Small runs compared with the models (see the module docstring)."""
    from simfs.errors import SimfsError
    from simfs.testbed.cluster import PREFIX, check_machine
    from simfs.testbed.network import leftover_namespaces
    from simfs.validate.live import LiveMismatchWarning, compare_live

    for description, file_system, system, tolerance in CI_SERIES:
        try:
            check_machine(file_system)
        except SimfsError as error:
            print(f"testbed CI series ({file_system}): skipped: {error}", flush=True)
            continue
        if leftover_namespaces(PREFIX):
            print("testbed CI series: skipped: a testbed is up on this machine", flush=True)
            return 0
        with tempfile.TemporaryDirectory() as scratch:
            record(_ci_run(file_system, Path(scratch)))
            if leftover_namespaces(PREFIX):
                print(f"testbed CI series: namespaces left behind: {', '.join(leftover_namespaces(PREFIX))}")
                return 1
            runs = sorted(Path(scratch).glob("*.json"))
            if not runs:
                print(f"testbed CI series ({file_system}): the run failed (no record)")
                return 1
            with warnings.catch_warnings(record=True) as caught:
                # Each warning one line (a run on another CPU than the model's, a shared machine).
                warnings.simplefilter("always", LiveMismatchWarning)
                table = compare_live(runs, system)
            notes = [str(warning.message) for warning in caught if warning.category is LiveMismatchWarning]
        limit = 100 * tolerance
        table[f"within_{limit:.0f}pct"] = ["yes" if abs(error) <= limit else "MISS" for error in table["error_pct"]]
        columns = ["nodes", "phase", "unit", "measured", "predicted", "error_pct", f"within_{limit:.0f}pct"]
        print(f"testbed CI series: {description}, against {system}")
        print(table[columns].to_string(index=False, float_format=lambda value: f"{value:.4g}"))
        for note in notes:
            print(f"testbed CI series: {note}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "series", nargs="*", help=f"series to record (default all: {', '.join(s.name for s in SERIES)})"
    )
    parser.add_argument("--ci", action="store_true", help="one small run compared with the model (CI)")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write each series' records to its folder's path under DIR (not over the committed ones)",
    )
    args = parser.parse_args()
    if args.ci:
        if args.series or args.out:
            parser.error("--ci records nothing; give --ci alone")
        return ci_series()
    known = {s.name: s for s in SERIES}
    unknown = [name for name in args.series if name not in known]
    if unknown:
        parser.error(f"unknown series {unknown[0]!r} (known: {', '.join(known)})")
    for series in [known[name] for name in args.series] or SERIES:
        if args.out:
            series = replace(series, folder=args.out.resolve() / series.folder.relative_to(ROOT))
        record(series)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
