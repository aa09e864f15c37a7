"""The ``simfs`` command.

Errors a user can cause print as one line (``simfs: error: ...``) with exit status 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shlex
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from simfs import __version__
from simfs.errors import SimfsError
from simfs.systems.profile import builtin_names, load_profile

# OpenBLAS starts a thread per core when numpy is imported, 0.07 s of CPU on two cores,
# which is most of `simfs show`; simfs's matrices are sparse or tiny and never use BLAS
# threads.  A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Each command imports what it runs: numpy, scipy and pandas cost about a second of
# start-up that `simfs --help` and `simfs systems` do not need.

EPILOG = """examples:
  simfs systems
  simfs show crtdc-lfs3
  simfs simulate --system crtdc-lfs5 --workload "dd bs=1024000 count=50000" --nodes 16
  simfs sweep --system crtdc-lfs5 --workload "dd bs=1024000 count=50000" \\
      --vary nodes=1,2,4,8,16,32,64 --plot scaling.png
  simfs sweep --system crtdc-lfs3 --workload "ior -a POSIX -F -t 1m -b 4g" \\
      --vary stripe_count=1,2,4,8,16 --set nodes=16
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    import warnings

    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(args)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """A warning as one line, ``simfs: warning: ...``, not Python's two with a path."""
    print(f"simfs: warning: {message}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except SimfsError as exc:
        print(f"simfs: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("simfs: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line, as every other refusal (the usage it
    prints first is a screenful for ``simulate``; ``--help`` shows it)."""

    def error(self, message: str) -> NoReturn:
        where = "" if self.prog == "simfs" else f"{self.prog.removeprefix('simfs ')}: "
        self.exit(2, f"simfs: error: {where}{message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="simfs",
        description="Discrete-event simulator of cluster file systems.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"simfs {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("systems", help="list the built-in systems")
    listing.set_defaults(handler=_systems)

    show = commands.add_parser("show", help="print a system's assembled hardware")
    show.add_argument("system", help="built-in name or path to a TOML profile")
    _add_set(show)
    show.set_defaults(handler=_show)

    calibrate = commands.add_parser(
        "calibrate",
        help="fit a profile's free parameters to measured results",
        description="Fit the [calibration.free] parameters of a system profile to measured results "
        "(files or folders of dd, IOR, mdtest, fio, obdfilter-survey, bonnie++, iozone, IO500, Darshan output "
        "or the published-results CSV) and write a calibrated profile.",
    )
    calibrate.add_argument("data", nargs="+", help="measurement files or folders")
    calibrate.add_argument("--system", required=True, help="built-in name or path to a TOML profile")
    calibrate.add_argument("--out", required=True, help="calibrated profile to write (never the source profile)")
    calibrate.add_argument("--report", help="write the fit report (Markdown) here")
    calibrate.add_argument(
        "--free", action="append", metavar="FIELD", help="fit only this declared parameter (repeat for more)"
    )
    calibrate.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="fit only measurements of this metric (repeat for more: agg_bw, ops_rate, ...; default all): an IOR "
        "stonewalled write gives agg_bw and the slowest rank's min_rank_agg_bw, which a model without "
        "imbalance cannot both match",
    )
    # --bootstrap and --seed are checked by _calibrate, so that a bad value is the one-line
    # error of every other input mistake rather than argparse's usage message.
    calibrate.add_argument(
        "--bootstrap",
        default="20",
        metavar="N",
        help="bootstrap refits for the 95%% intervals: 0 (no intervals) or at least 20 (default 20)",
    )
    calibrate.add_argument(
        "--seed", default="0", metavar="N", help="bootstrap seed, a non-negative integer (default 0)"
    )
    calibrate.add_argument(
        "--starts",
        default="2",
        metavar="N",
        help="points the fit's search starts from, the lowest cost kept: 1 (the profile's values), 2 (and every "
        "free parameter near its upper bound; default), more (and points of a Sobol design drawn from --seed)",
    )
    calibrate.add_argument(
        "--jobs",
        default="1",
        metavar="N",
        help="run the bootstrap refits in N local processes (the same intervals as one by one)",
    )
    calibrate.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the bootstrap refits on a Dask cluster (tcp://host:8786; pip install 'simfs[dask]')",
    )
    calibrate.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first file in a folder that cannot be read (default: skip it with a warning)",
    )
    calibrate.set_defaults(handler=_calibrate)

    validate = commands.add_parser(
        "validate",
        help="run validation cases and report predicted against measured",
        description="Run every validation case (TOML) under the given paths and print the per-split summary; "
        "with --report, write a Markdown report with a plot per case.",
    )
    validate.add_argument("cases", nargs="*", help="validation case files or folders")
    validate.add_argument("--report", help="write the report (Markdown) here; plots go to plots/ beside it")
    validate.add_argument(
        "--live",
        action="extend",
        nargs="+",
        metavar="RUN.json",
        help="run records of simfs measure: simulate the same workloads on --system and compare",
    )
    validate.add_argument("--system", help="with --live: the built-in name or profile to predict with")
    validate.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="run the cases in N local processes (default 1; the same report as one by one)",
    )
    validate.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the cases on a Dask cluster (tcp://host:8786; pip install 'simfs[dask]')",
    )
    validate.set_defaults(handler=_validate)

    measure = commands.add_parser(
        "measure",
        help="run a dd, IOR, mdtest or bonnie++ workload for real on a directory",
        description="Run the workload for real in a fresh subdirectory of --dir, with --np local processes or as "
        "the ranks of an MPI job (mpirun -n N simfs measure ...), print the tool's summary, and write a JSON "
        "record and per-rank traces.  The subdirectory is removed at the end unless --keep.",
        epilog="examples:\n  simfs measure --dir /scratch/me --np 4 --json run.json -- ior -a POSIX -F -t 1m -b 256m -w -r -C -e\n"
        "  mpirun -n 64 simfs measure --dir /lustre/me --json run.json -- ior -F -t 1m -b 1g\n"
        "  simfs measure --dir /dev/shm --np 2 -- mdtest -n 1000 -F -u",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    measure.add_argument("--dir", required=True, help="directory to run in (a fresh subdirectory is made there)")
    measure.add_argument("--np", type=_positive_int, help="local processes (default 1; under mpirun: the MPI ranks)")
    measure.add_argument(
        "--backend", choices=("auto", "local", "mpi"), default="auto", help="default: mpi under mpirun"
    )
    measure.add_argument("--keep", action="store_true", help="keep the files of a successful run")
    measure.add_argument("--json", metavar="FILE", help="write the run record (strict JSON) here")
    measure.add_argument("--trace", metavar="FILE", help="per-rank phase trace, .csv or .parquet")
    measure.add_argument(
        "--trace-ops",
        action="store_true",
        help="also per-operation latencies (FILE.ops.csv or .ops.parquet beside --trace)",
    )
    measure.add_argument("workload", nargs=argparse.REMAINDER, help="-- then the tool's command line")
    measure.set_defaults(handler=_measure)

    testbed = commands.add_parser(
        "testbed",
        help="a live cluster file system on this machine (root): up, status, run a workload on it, down",
        description="A live MooseFS cluster on this machine (one master, chunkservers on tmpfs and FUSE clients) "
        "or a GlusterFS one (brick servers on tmpfs, a distributed or dispersed volume, FUSE clients), each daemon "
        "and client in a network namespace of its own behind one switch, every link shaped.  Nothing leaves its "
        "network (198.18.0.0/24); down removes every process, mount, namespace and folder it made.",
        epilog="examples:\n  simfs testbed up moosefs --servers 4 --clients 4\n  simfs testbed up glusterfs --servers 3 --clients 2 --disperse 2+1\n  simfs testbed status\n"
        "  simfs testbed run --json run.json -- ior -a POSIX -F -t 1m -b 128m -w -r -C -e\n  simfs testbed down",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state", help="the testbed's state folder (default /run/simfs-testbed)")
    actions = testbed.add_subparsers(dest="testbed_action", metavar="ACTION", required=True)
    up = actions.add_parser("up", parents=[state], help="start the network, the servers and the clients")
    up.add_argument("file_system", choices=("moosefs", "glusterfs"), help="the file system")
    up.add_argument(
        "--servers", type=_positive_int, default=2, help="chunkservers or GlusterFS brick servers (default 2)"
    )
    up.add_argument("--clients", type=_positive_int, default=2, help="clients (default 2)")
    up.add_argument(
        "--goal",
        type=_positive_int,
        help="MooseFS: copies of each chunk (default 2, as MooseFS; at most --servers stored)",
    )
    up.add_argument(
        "--disperse",
        metavar="K+M",
        help="GlusterFS: a dispersed volume, each file erasure coded over K data and M redundancy bricks "
        "(--servers a multiple of K+M); without it, a distributed volume",
    )
    up.add_argument("--rate", default="100mbit", help="every link's rate: 100mbit, 1gbit, ... (default 100mbit)")
    up.add_argument(
        "--port-buffer", type=_positive_int, default=131072, help="bytes queued at a switch port (default 131072)"
    )
    actions.add_parser("status", parents=[state], help="describe the testbed that is up")
    actions.add_parser("down", parents=[state], help="remove everything the testbed made")
    run = actions.add_parser(
        "run",
        parents=[state],
        help="run a workload with simfs measure, ranks placed on the clients by block",
        description="Run the workload with simfs measure through the clients' mounts: --np ranks (default: one "
        "per client), ranks 0..k-1 on the first client, k..2k-1 on the second (as mpirun places them), as local "
        "processes or, with --mpi, as the ranks of an MPI job each inside its client's host name; the record "
        "names the testbed and what the run cost: TCP retransmits, RTOs and tail-loss probes, switch port drops "
        "and CPU utilisation, in all and per daemon.",
    )
    run.add_argument("--np", type=_positive_int, help="ranks (default: one per client)")
    run.add_argument(
        "--mpi",
        action="store_true",
        help="run the ranks under mpirun (Open MPI, mpi4py), each client a host: costs the shared machine "
        "its ranks' start-up and MPI's polling waits (see docs/guides/testbed.md)",
    )
    run.add_argument("--json", metavar="FILE", help="write the run record (strict JSON) here")
    run.add_argument("workload", nargs=argparse.REMAINDER, help="-- then the tool's command line")
    testbed.set_defaults(handler=_testbed)

    descriptions = {
        "simulate": "Simulate one configuration of a workload on a system and print, per phase, the aggregate "
        "and per-node rates and the bottleneck (with the mechanism that made it bind).",
        "sweep": "Simulate every combination of the --vary values and print one row per combination; along "
        "the first key the table marks the peak and the fall after it.  --measured puts a validation case's "
        "measured values beside the prediction.",
    }
    examples = {
        "simulate": "examples:\n"
        '  simfs simulate --system crtdc-lfs5 --workload "dd bs=1024000 count=50000" --nodes 16\n'
        '  simfs simulate --system crtdc-lfs3 --workload "ior -a POSIX -F -t 1m -b 4g -w -r -C -e" --nodes 8 --ppn 4\n'
        '  simfs simulate --system crtdc-lfs3 --workload "mdtest -F -C -T -r -n 200" --nodes 16 --timeline t.png',
        "sweep": "examples:\n"
        '  simfs sweep --system crtdc-lfs3-fitted --workload "dd bs=1024000 count=50000" \\\n'
        "      --vary nodes=1,2,4,8,16,32,64 --set stripe_count=4 \\\n"
        "      --measured validation/crtdc-lfs3/lfs3-dd-nodes-write.toml --plot scaling.png\n"
        '  simfs sweep --system crtdc-lfs3 --workload "ior -a POSIX -F -t 1m -b 4g" \\\n'
        "      --vary stripe_count=1,2,4,8,16 --set nodes=16",
    }
    for name, help_text in (("simulate", "simulate one configuration"), ("sweep", "simulate a grid of settings")):
        sub = commands.add_parser(
            name,
            help=help_text,
            description=textwrap.fill(descriptions[name], 88),
            epilog=examples[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("--system", required=True, help="built-in name or path to a TOML profile")
        sub.add_argument(
            "--workload",
            required=True,
            help=f"the tool's command line ({', '.join(WORKLOAD_TOOLS)}), "
            'e.g. "ior -a POSIX -F -t 1m -b 4g"; docs/reference/workloads.md has the options',
        )
        sub.add_argument("--nodes", type=_positive_int, help="client nodes (default 1)")
        sub.add_argument("--ppn", type=_positive_int, help="processes per node (default 1)")
        _add_set(sub)
        sub.add_argument(
            "--format", choices=("table", "csv", "json"), default="table", help="output format (default table)"
        )
        sub.add_argument(
            "--units",
            choices=("decimal", "MiB", "GiB"),
            default="decimal",
            help="bandwidth units of the table: decimal (aggregate GB/s, per node MB/s; the default), MiB "
            "(MiB/s, as IOR prints) or GiB (aggregate GiB/s as the IO500 prints, per node MiB/s); "
            "CSV and JSON keep bytes/s",
        )
        sub.add_argument(
            "--force",
            action="store_true",
            help="run even if the estimate is beyond the limits (an hour of CPU or half the memory)",
        )
        if name == "simulate":
            sub.add_argument("--per-rank", action="store_true", help="print one row per rank and phase")
            sub.add_argument(
                "--repeats",
                type=_positive_int,
                default=1,
                help="run with this many seeds (seed, seed+1, ...) and print each phase's min/median/max",
            )
            sub.add_argument(
                "--timeline",
                action="append",
                default=[],
                metavar="FILE",
                help="per-resource utilisation and flow counts over time: a plot (PNG/SVG/PDF) or, for .csv, "
                "the table; repeatable (a plot and its numbers from one run)",
            )
            sub.set_defaults(handler=_simulate)
        else:
            sub.add_argument(
                "--vary",
                action="append",
                required=True,
                metavar="KEY=V1,V2,...",
                help="a setting or profile field and its values; repeat for a grid",
            )
            sub.add_argument(
                "--plot",
                action="append",
                default=[],
                metavar="FILE",
                help="write a scaling plot (PNG, SVG or PDF) or, for .csv, the numbers it draws; repeatable",
            )
            sub.add_argument(
                "--measured",
                action="extend",
                nargs="+",
                default=[],
                metavar="CASE",
                help="validation cases (TOML) of this workload, or of the command lines it runs with the "
                "values it names in braces: their measured values are printed and plotted beside the "
                "prediction; repeatable",
            )
            sub.add_argument(
                "--jobs",
                type=_positive_int,
                default=1,
                metavar="N",
                help="run the points in N local processes (the same rows as one by one)",
            )
            sub.add_argument(
                "--scheduler",
                metavar="ADDRESS",
                help="run the points on a Dask cluster (tcp://host:8786; pip install 'simfs[dask]')",
            )
            sub.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
            sub.set_defaults(handler=_sweep)
    return parser


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override an experiment setting (nodes, ppn, stripe_count, overstripe_count, stripe_size, stripe_offset, "
        "seed, background, background_nodes, background_ppn, mode, completion_tolerance) or any profile field (oss.count=16, "
        "client.network=1gbe); repeatable",
    )
    parser.add_argument(
        "--lctl",
        metavar="FILE",
        help="the client's Lustre tunables from `lctl get_param` output (osc.*.max_rpcs_in_flight, "
        "osc.*.max_dirty_mb, llite.*.max_read_ahead_mb, ...), as --set would give them",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _pairs(items: Sequence[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SimfsError(f"{option} {item!r}: expected KEY=VALUE")
        if key in pairs:
            # Silently keeping the last of two values hides a typo in a long command line.
            raise SimfsError(f"{option} {key}: given twice ({pairs[key]!r} and {value.strip()!r}); give it once")
        pairs[key] = value.strip()
    return pairs


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    overrides = _pairs(args.set, "--set")
    if getattr(args, "lctl", None):
        from simfs.systems import lustre_tunables
        from simfs.textinput import read_text_file

        file_system = load_profile(args.system).data.get("system", {}).get("filesystem")
        if isinstance(file_system, str) and file_system != "lustre":
            raise SimfsError(
                f"--lctl {args.lctl}: {args.system} is a {file_system} system; --lctl gives Lustre tunables"
            )
        text = read_text_file(args.lctl, what="lctl get_param output", kind="lctl get_param output")
        try:
            tunables, unmodelled = lustre_tunables.from_lctl(text, args.lctl)
        except ValueError as exc:
            raise SimfsError(str(exc)) from None
        for key, value in tunables.items():
            if key in overrides:
                raise SimfsError(f"--lctl {args.lctl} and --set both give {key}: give it once")
            overrides[key] = str(value)
        taken = ", ".join(f"{key}={value}" for key, value in tunables.items())
        left = f"; {len(unmodelled)} other parameter{'s' * (len(unmodelled) > 1)} not modelled" if unmodelled else ""
        print(f"simfs: note: from {args.lctl}: {taken}{left}", file=sys.stderr)
    for name in ("nodes", "ppn"):
        if getattr(args, name, None) is not None:
            if name in overrides:
                raise SimfsError(f"--{name} {getattr(args, name)} and --set {name}={overrides[name]}: give {name} once")
            overrides[name] = str(getattr(args, name))
    for name in getattr(args, "vary", None) or ():
        key = name.partition("=")[0].strip()
        if key in overrides or (key in ("nodes", "ppn") and getattr(args, key, None) is not None):
            raise SimfsError(f"--vary {key} and a fixed {key} (--set or --{key}): give {key} once")
    return overrides


# -- commands ---------------------------------------------------------------------------
def _systems(args: argparse.Namespace) -> int:
    names = builtin_names()
    width = max(len(n) for n in names)
    for name in names:
        profile = load_profile(name)
        print(f"{name.ljust(width)}  {profile.data.get('system', {}).get('description', '')}")
    return 0


#: A run's striping settings and the Lustre profile fields of the default ``show`` prints.
_STRIPING_DEFAULTS = {
    "stripe_count": "lustre.stripe_count",
    "stripe_size": "lustre.stripe_size_bytes",
    "stripe_offset": "lustre.stripe_offset",
}


def _show(args: argparse.Namespace) -> int:
    from simfs.api import load_system, split_overrides
    from simfs.systems.profile import load_profile

    experiment, profile_overrides = split_overrides(_overrides(args))
    if experiment:
        key = next(iter(experiment))
        default = _STRIPING_DEFAULTS.get(key)
        if default:
            raise SimfsError(
                f"show: --set {key}: a run's striping; show prints the profile's default, which --set {default} sets"
            )
        raise SimfsError(f"show: --set {key}: an experiment setting, which the hardware show prints does not depend on")
    base = load_profile(args.system)
    profile = base.with_overrides(profile_overrides) if profile_overrides else base
    system = load_system(profile)
    print(system.describe())
    for line in _other_cpus(profile, system):
        print(line)
    if profile_overrides:
        _note_scaled_counts(load_system(base), system, profile_overrides)
    return 0


def _other_cpus(profile, system) -> list[str]:  # noqa: ANN001
    """What the system's CPU-bound lines become on each CPU a ``[[host.other_cpu]]`` entry
    lists (``validate --live`` predicts that CPU's runs with them)."""
    fields = getattr(type(system), "OTHER_CPU_FIELDS", None)
    if not fields:
        return []
    from simfs.filesystems import system_from_profile
    from simfs.systems.other_cpu import other_cpu_profiles, recorded_cpu

    lines = []
    for model, chosen in other_cpu_profiles(profile, fields):
        if not lines:
            lines.append(
                f"  the CPU-bound rates above were measured on {recorded_cpu(profile) or 'an unnamed CPU'}; "
                "runs recorded on another listed CPU are predicted (validate --live) with its entry's values "
                "in place of these:"
            )
        lines.append(f"  on {model} (host.other_cpu[{chosen.number}]):")
        lines += [f"  {line}" for line in system_from_profile(chosen.profile).cpu_bound_lines()]
    return lines


def _note_scaled_counts(base, changed, overrides: dict[str, object]) -> None:  # noqa: ANN001
    """One line when an override changes counts it does not name (``oss.count=16`` also
    doubles the OSTs and their drives): a what-if should say what it scaled."""
    counts = {
        "client nodes": (base.client_count, changed.client_count),
        f"{base.NAMES['server']} servers": (base.server_count, changed.server_count),
        f"{base.NAMES['target']} targets": (base.target_count, changed.target_count),
    }
    scaled = [f"{name} {old:,} -> {new:,}" for name, (old, new) in counts.items() if old != new]
    if scaled:
        given = ", ".join(f"{key}={value}" for key, value in overrides.items())
        print(f"simfs: note: {given} scales {'; '.join(scaled)}", file=sys.stderr)


def _simulate(args: argparse.Namespace) -> int:
    from simfs.api import repeat, simulate, split_overrides
    from simfs.report.tables import render_text, wide_rows

    if args.workload.split()[:1] == ["io500"]:
        return _simulate_io500(args)
    if args.repeats > 1:
        if args.per_rank or args.timeline:
            raise SimfsError("--repeats: prints the spread of each phase; drop --per-rank and --timeline")
        experiment, profile_overrides = split_overrides(_overrides(args))
        table = repeat(
            args.system, args.workload, args.repeats, overrides={**experiment, **profile_overrides}, force=args.force
        )
        if args.format == "table":
            # A response time in ms, as the one-run table prints it (three decimals of a
            # second would leave one digit of it).
            responses = [column for column in table if column.startswith("response_time_s_")]
            shown = table.assign(**{column: table[column] * 1e3 for column in responses})
            print(render_text(shown.rename(columns={c: c.replace("_time_s_", "_ms_") for c in responses})))
        else:
            _emit(table, args.format)
        _print_notes(table.attrs.get("notes", ()))
        return 0
    timelines = _output_paths(args.timeline, "--timeline", (".csv", *FIGURE_SUFFIXES))
    from tqdm import tqdm

    # Shown on a terminal only, and only once the run has taken 2 s (tqdm's delay).
    with tqdm(file=sys.stderr, unit="rank phase", leave=False, disable=None, delay=2) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        result = simulate(
            args.system,
            args.workload,
            overrides=_overrides(args),
            record_timeline=bool(args.timeline),
            force=args.force,
            progress=progress,
        )
    if args.format == "table" and not args.per_rank:
        # From the phase rows, not a DataFrame: a one-point run does not import pandas.
        print(render_text(wide_rows(result.phase_rows(), ["nodes", "ppn"], units=args.units)))
    else:
        _emit(result.ranks if args.per_rank else result.phases, "csv" if args.format == "table" else args.format)
    _print_notes(result.notes)
    # A run whose phases moved no fluid flows (mdtest, shared-file writes at request
    # level) has no network timeline: its request queues are what changes over time.
    fluid = result.timeline is not None and not result.timeline.empty
    queues = {name: samples for name, samples in (result.request_queues or {}).items() if samples}
    if timelines and not fluid and not queues:
        raise SimfsError(
            "--timeline: nothing to draw: this run moved no data as fluid flows and no request queued for a "
            "directory's lock (the request-level queues the timeline draws)"
        )
    for target in timelines:
        if target.suffix.lower() == ".csv":
            from simfs.report.files import write_text

            if fluid:
                text = result.timeline.to_csv(index=False)
            else:
                rows = [f"{name},{time_s!r},{count}" for name, samples in queues.items() for time_s, count in samples]
                text = "\n".join(["queue,time_s,requests", *rows]) + "\n"
            write_text(target, text)
        else:
            from simfs.report.plots import phase_spans, queue_timeline_plot, timeline_plot

            title = f"{args.system}: {args.workload}"
            if fluid:
                timeline_plot(result.timeline, target, title=title, phases=phase_spans(result.ranks))
            else:
                queue_timeline_plot(queues, target, title=title, phases=phase_spans(result.ranks))
        print(f"timeline written to {target}", file=sys.stderr)
    return 0


def _simulate_io500(args: argparse.Namespace) -> int:
    """``--workload "io500 config.ini"``: the harness's phases and scores (in the harness's
    units, GiB/s and kIOPS, whatever ``--units`` says)."""
    from simfs.api import load_system, split_overrides
    from simfs.experiment import Experiment
    from simfs.io500 import simulate_io500
    from simfs.report.tables import render_text
    from simfs.workloads.io500 import read_io500_config

    words = shlex.split(args.workload)
    rest = args.workload.split(None, 1)[1].strip() if len(args.workload.split(None, 1)) == 2 else ""
    if len(words) != 2 and rest and Path(rest).exists():
        words = ["io500", rest]  # an unquoted path with spaces in it
    if len(words) != 2:
        raise SimfsError(f'--workload {args.workload!r}: expected "io500 CONFIG.ini" (the harness\'s config file)')
    if args.repeats > 1 or args.per_rank or args.timeline:
        raise SimfsError(
            "--workload io500: prints the harness's phases and scores; drop --repeats, --per-rank and --timeline"
        )
    plan = read_io500_config(words[1])
    experiment_overrides, profile_overrides = split_overrides(_overrides(args))
    system = load_system(args.system, profile_overrides)
    experiment = Experiment.from_settings(experiment_overrides)
    result = simulate_io500(system, plan, experiment, force=args.force)
    frame = result.phases
    if args.format != "table":
        _emit(frame.assign(nodes=experiment.nodes, ppn=experiment.ppn), args.format)
    else:
        table = frame[["phase", "value", "unit", "time_s", "bottleneck"]].rename(columns={"time_s": "simulated s"})
        print(render_text(table))
        scores = result.scores
        print(
            f"[SCORE ] Bandwidth {scores['bandwidth']:.6f} GiB/s : IOPS {scores['iops']:.6f} kiops : "
            f"TOTAL {scores['total']:.6f}  (simulated: {experiment.nodes} nodes x {experiment.ppn} ppn)",
            flush=True,
        )
    _print_notes(result.notes)
    return 0


def _number_or_text(value: str) -> int | float | str:
    """A --vary value as a number where it is one written plainly (``4``, ``0.01``), so that
    an axis of them is numeric; anything else (``1m``, ``1e3``, ``true``) stays as given."""
    if value.lstrip("-").isdigit():
        return int(value)
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+)", value):
        return float(value)
    return value


def _print_notes(notes: Iterable[str]) -> None:
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _sweep(args: argparse.Namespace) -> int:
    from pandas.api.types import is_numeric_dtype as pd_numeric

    from simfs.api import sweep, sweep_workloads
    from simfs.report.tables import mark_peaks, render_text, wide_table

    vary: dict[str, list[str]] = {}
    for key, values in _pairs(args.vary, "--vary").items():
        items = [v.strip() for v in values.split(",")]
        if not any(items):
            raise SimfsError(f"--vary {key}: expected one or more comma-separated values")
        if not all(items):
            raise SimfsError(f"--vary {key}={values}: an empty value in the list; expected values such as 1,2,4")
        vary[key] = [_number_or_text(v) for v in items]
    overrides = _overrides(args)
    sweep_workloads(args.workload, vary)  # fail on a bad command line before any work
    plot_paths = _output_paths(args.plot, "--plot", (".csv", *FIGURE_SUFFIXES))
    measured = None
    if args.measured:
        from simfs.report.measured import load_measured

        measured = load_measured(args.measured, args.workload, vary, system=args.system, fixed=overrides)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        total = 1
        for values in vary.values():
            total *= len(values)
        bar = tqdm(total=total, file=sys.stderr, unit="run", leave=False, disable=None, delay=2)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.update(1)

    try:
        phases = sweep(
            args.system,
            args.workload,
            vary,
            overrides=overrides,
            progress=progress,
            force=args.force,
            jobs=args.jobs,
            scheduler=args.scheduler,
        )
    finally:
        if bar is not None:
            bar.close()
    keys = list(vary)
    if args.format == "table":
        table = wide_table(phases, keys, units=args.units)
        print(render_text(mark_peaks(table, keys) if pd_numeric(table[keys[0]]) else table))
    else:
        _emit(phases, args.format)
    if measured is not None:
        from simfs.report.measured import comparison

        # Beside a table, on standard output; beside CSV or JSON, on standard error, which
        # leaves the data a program reads as it was.
        text = comparison(phases, keys, measured, units=args.units)
        if text:
            print(text, file=sys.stdout if args.format == "table" else sys.stderr, flush=True)
    # After the table and its comparison, which they qualify: the measured points left
    # out, then what the runs said.
    _print_notes(dict.fromkeys([*(measured.notes if measured is not None else ()), *phases.attrs.get("notes", ())]))
    for plot_path in plot_paths:
        if plot_path.suffix.lower() == ".csv":
            from simfs.report.files import write_frame
            from simfs.report.plots import scaling_plot_data

            path = write_frame(plot_path, scaling_plot_data(phases, keys))
            print(f"plotted numbers written to {path}", file=sys.stderr)
            continue
        from simfs.report.plots import scaling_plot

        title = f"{args.system}: {args.workload}"
        path = scaling_plot(phases, keys, plot_path, title=title, measured=measured.rows if measured else ())
        print(f"plot written to {path}", file=sys.stderr)
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    import warnings
    from collections.abc import Iterator
    from contextlib import contextmanager

    import pandas as pd

    from simfs.calibrate import ProfileCalibrator
    from simfs.calibrate.calibrator import check_bootstrap, check_seed, check_starts
    from simfs.calibrate.output import calibrated_profile_text, fit_report
    from simfs.ingest import read_measurements
    from simfs.report.files import write_text

    def integer(text: object, option: str) -> int:
        try:
            return int(str(text))
        except ValueError:
            raise SimfsError(f"{option} {text!r}: expected an integer") from None

    @contextmanager
    def caught_warnings() -> Iterator[list[str]]:
        """Warnings raised inside the block, printed at its end even when it fails: the
        reasons behind an error ("none can be simulated") come before the error itself."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            messages: list[str] = []
            try:
                yield messages
            finally:
                messages += [f"{w.category.__name__}: {w.message}" for w in caught]
                for message in messages:
                    print(f"simfs: warning: {message}", file=sys.stderr)

    # Every option before any file is read and before the fit, which takes minutes.
    bootstrap = check_bootstrap(integer(args.bootstrap, "--bootstrap"), "--bootstrap")
    seed = check_seed(integer(args.seed, "--seed"), "--seed")
    starts = check_starts(integer(args.starts, "--starts"), "--starts")
    from simfs.parallel import check_jobs

    jobs = check_jobs(integer(args.jobs, "--jobs"), args.scheduler, "--jobs")
    profile = load_profile(args.system)
    out = _output_path(args.out, "--out", (".toml",))  # a profile: a .json name would hold TOML
    report_path = _output_path(args.report, "--report", (".md",)) if args.report else None
    # The source profile is never written.
    if out.exists() and out.resolve() == Path(profile.origin).resolve():
        raise SimfsError(f"--out {out}: refusing to overwrite the source profile")
    with caught_warnings() as read_messages:
        measurements = pd.concat([read_measurements(path, strict=args.strict) for path in args.data], ignore_index=True)
    if args.metric:
        from simfs.predict import SIMULATED_METRICS

        unknown = sorted(set(args.metric) - set(SIMULATED_METRICS))
        if unknown:
            raise SimfsError(f"--metric {unknown[0]}: expected one of {', '.join(SIMULATED_METRICS)}")
        measurements = measurements[measurements["metric"].isin(args.metric)].reset_index(drop=True)
        if measurements.empty:
            raise SimfsError(f"--metric {', '.join(args.metric)}: no measurement of these metrics in the data")
    command = _command_line("calibrate")
    from tqdm import tqdm

    # On a terminal, once the fit has run 2 s: the simulations it evaluated, and the
    # bootstrap refits done (a fit runs hundreds of simulations, minutes in all).
    with (
        caught_warnings() as fit_messages,
        tqdm(file=sys.stderr, unit="simulation", leave=False, disable=None, delay=2) as bar,
    ):

        def progress(stage: str, done: int) -> None:
            if stage == "bootstrap":
                bar.set_description(f"bootstrap refit {done}/{bootstrap}")
            else:
                bar.update(1)

        calibrator = ProfileCalibrator(
            profile,
            free=args.free,
            bootstrap=bootstrap,
            seed=seed,
            starts=starts,
            progress=progress,
            jobs=jobs,
            scheduler=args.scheduler,
        )
        calibrator.fit(measurements)
    messages = read_messages + fit_messages
    data = [str(p) for p in args.data]
    # Both texts first, so that a failure leaves neither file half-made.
    text = calibrated_profile_text(calibrator, data, command)
    report = fit_report(calibrator, data, command, messages) if report_path else None
    write_text(out, text)
    if report_path is not None:
        write_text(report_path, report)
        print(f"report written to {report_path}", file=sys.stderr)
    summary = calibrator.summary_
    for name, value in calibrator.params_.items():
        interval = calibrator.intervals_[name]
        shown = "no interval" if interval is None else f"[{interval[0]:.4g}, {interval[1]:.4g}]"
        verdict = calibrator.identifiable_[name]
        flag = {True: "", False: "  (not identifiable)", None: "  (identifiability not assessed)"}[verdict]
        print(f"{name} = {value:.4g}  {shown}{flag}")
    print(
        f"fit: {summary['points']} points, RMS log error {summary['rms_log_error']:.4f}, "
        f"median |error| {summary['median_abs_error_pct']:.1f}%; wrote {out}"
    )
    return 0


def _workload_words(args: argparse.Namespace) -> list[str]:
    """The tool's command line given after ``--`` (argparse keeps the ``--``)."""
    return args.workload[1:] if args.workload[:1] == ["--"] else args.workload


def _bits_per_s(text: str) -> int:
    """A link rate as tc writes it: ``100mbit``, ``1gbit``, ``250kbit`` or bits/s."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmg]?)(?:bit)?", text.strip().lower())
    if not match:
        raise SimfsError(f"--rate {text}: expected a rate such as 100mbit, 1gbit or 250000000")
    return int(float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2)])


def _testbed(args: argparse.Namespace) -> int:
    from simfs.testbed import glusterfs
    from simfs.testbed.cluster import DEFAULT_STATE, Testbed, TestbedSpec, check_root
    from simfs.testbed.network import Link

    testbed = Testbed(args.state or DEFAULT_STATE)
    if args.testbed_action == "run" and not _workload_words(args):
        raise SimfsError("testbed run: give the workload after --: simfs testbed run -- ior -F -t 1m -b 64m -w -r")
    check_root()
    if args.testbed_action == "up":
        try:
            link = Link(rate_bits_per_s=_bits_per_s(args.rate), port_buffer_bytes=args.port_buffer)
        except ValueError as error:
            raise SimfsError(f"testbed: {error}") from None
        try:
            disperse = glusterfs.parse_disperse(args.disperse) if args.disperse is not None else None
        except ValueError as error:
            raise SimfsError(f"testbed: --{error}") from None
        spec = TestbedSpec(args.file_system, args.servers, args.clients, link, goal=args.goal, disperse=disperse)
        print(_testbed_text(testbed.up(spec)))
        return 0
    if args.testbed_action == "status":
        status = testbed.status()
        print(_testbed_text(status) if status["up"] else "no testbed is up")
        return 0
    if args.testbed_action == "run":
        return _testbed_run(testbed, args)
    for line in testbed.down():
        print(line)
    return 0


def _testbed_run(testbed, args: argparse.Namespace) -> int:  # noqa: ANN001
    from simfs.report.files import write_text
    from simfs.runner import measure, plan_workload
    from simfs.runner.output import strict_json
    from simfs.runner.run import block_placement
    from simfs.runner.signals import deferred_signals

    workload = _workload_words(args)
    if not workload:
        raise SimfsError("testbed run: give the workload after --: simfs testbed run -- ior -F -t 1m -b 64m -w -r")
    json_path = _output_path(args.json, "--json", (".json",)) if args.json else None
    status = testbed.status()
    if not status["up"]:
        raise SimfsError("testbed run: no testbed is up (simfs testbed up moosefs ...)")
    stopped = [p["name"] for p in status["processes"] if not p["running"]]
    stopped += sorted(set(status["mounts"]) - set(status["mounted"]))
    if stopped:
        raise SimfsError(f"testbed run: not running: {', '.join(stopped)} (simfs testbed down, then up again)")
    processes = args.np or len(status["mounts"])
    described = {key: status[key] for key in ("file_system", "version", "servers", "clients", "link", "hosts")}
    # A testbed brought up by a simfs that did not record the goal kept MooseFS's own.
    described["goal"] = status.get("goal")
    described["volume"] = status.get("volume")
    clients = [Path(mount).name for mount in status["mounts"]]
    described["rank_clients"] = [clients[client] for client in block_placement(processes, len(clients))]
    argv = ["simfs", "testbed", "run", "--", *workload]
    if args.mpi:
        missing = _mpi_missing()
        if missing is None and not status.get("uts"):
            missing = "this testbed was brought up without a host name per client (an older simfs): up it again"
        if missing is not None:
            raise SimfsError(f"testbed run --mpi: {missing}")

    def on_start(record: dict) -> None:
        record["testbed"] = described  # a killed run's record names its testbed too
        if json_path is not None:
            write_text(json_path, strict_json(record))

    from simfs.testbed.probe import machine_probe

    # A bad command line: one line here, before the probe, and not one per rank.
    spec = plan_workload(shlex.join(workload))
    with deferred_signals():
        # Before the counters start: the probe's CPU time is not the run's.
        probe = machine_probe()
        counters = testbed.counters()
        if args.mpi:
            record, exit_code = _testbed_mpirun(
                status, described["rank_clients"], workload, argv, json_path, counters.phase_boundary
            )
        else:
            measured = measure(
                shlex.join(workload),
                status["mounts"][0],
                processes=processes,
                backend="local",
                argv=argv,
                on_start=on_start,
                client_mounts=status["mounts"],
                on_phase=counters.phase_boundary,
            )
            record, exit_code = measured.record, measured.exit_code
        cost = counters.since()
        if record is not None:
            record["testbed"] = {**described, **cost, "machine_probe": probe}
            sampled, phases = len(cost["cpu_by_phase"]), len(record["phases"])
            if exit_code == 0 and spec.synchronized and sampled < phases:
                print(f"simfs: testbed run: the CPU time of {sampled} of {phases} phases was sampled", file=sys.stderr)
            if json_path is not None:
                write_text(json_path, strict_json(record))
    tcp = cost["tcp"]
    daemons = cost["cpu_by_process_s"]
    shares = _cpu_shares(daemons, status["file_system"])
    shares["other"] = max(0.0, cost["cpu_busy_s"] - sum(shares.values()))
    print(
        f"testbed: CPU {cost['cpu_utilisation']:.0%} busy ("
        + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in shares.items())
        + f"); TCP {tcp['retransmitted_segments']} retransmitted "
        f"segments, {tcp['rtos']} RTOs, {tcp['tail_loss_probes']} tail-loss probes; "
        f"{sum(cost['switch_port_drops'].values())} packets dropped at switch ports",
        file=sys.stderr,
    )
    if cost["cpu_by_phase"]:
        # A run that writes and then reads can be link-bound in one phase and CPU-bound in the other.
        print(
            "testbed: CPU by phase: "
            + ", ".join(
                f"{phase.get('phase', '?')}{_iteration_mark(phase, cost['cpu_by_phase'])} "
                f"{phase['cpu_utilisation']:.0%} busy ({phase['cpu_busy_s']:.2f} core-s)"
                for phase in cost["cpu_by_phase"]
            ),
            file=sys.stderr,
        )
    if json_path is not None and record is not None:
        print(f"record written to {json_path}", file=sys.stderr)
    if exit_code and record is not None:
        print(f"simfs: {record['status']}: {record['reason']}", file=sys.stderr)
    elif record is None:
        print(f"simfs: testbed run: the MPI job ended (exit {exit_code}) before rank 0 wrote a record", file=sys.stderr)
    return exit_code


def _iteration_mark(phase: dict, phases: list[dict]) -> str:
    """`` (2)`` after a phase of the second iteration, where the run had several."""
    several = len({entry.get("iteration") for entry in phases}) > 1
    return f" ({phase['iteration'] + 1})" if several and "iteration" in phase else ""


def _cpu_shares(daemons: dict[str, float], file_system: str) -> dict[str, float]:
    """CPU seconds of the testbed's daemons by role: MooseFS's master, chunkservers and
    clients; GlusterFS's brick servers (glusterd, brick and self-heal daemon) and clients."""

    def client(name: str) -> bool:
        return name.startswith("c") and name[1:].isdigit()

    if file_system == "glusterfs":
        return {
            "servers": sum(seconds for name, seconds in daemons.items() if name.startswith("gs")),
            "clients": sum(seconds for name, seconds in daemons.items() if client(name)),
        }
    return {
        "master": daemons.get("master", 0.0),
        "chunkservers": sum(seconds for name, seconds in daemons.items() if name.startswith("cs")),
        "clients": sum(seconds for name, seconds in daemons.items() if client(name)),
    }


def _mpi_missing() -> str | None:
    """Why an MPI job cannot run here, or None."""
    import importlib.util
    import shutil

    if shutil.which("mpirun") is None:
        return "mpirun is missing (apt-get install openmpi-bin)"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is missing (pip install mpi4py)"
    return None


def _testbed_mpirun(
    status: dict,
    rank_clients: list[str],
    workload: list[str],
    argv: list[str],
    json_path: Path | None,
    on_phase: Callable[[str, Any], None],
) -> tuple[dict | None, int]:
    """Run the workload as an MPI job: one mpirun application context per client, its
    ranks inside the client's UTS namespace (its host name) and working through its
    mount.  Rank 0 writes its record to ``json_path`` (from the start, so a killed run
    leaves one; the caller adds the testbed to it) or a scratch file, and tells
    ``on_phase`` each phase boundary (``simfs.runner.phase_watch``).  Returns that record
    (None if rank 0 wrote none) and mpirun's exit status."""
    import contextlib
    import json
    import subprocess
    import tempfile

    from simfs.runner.phase_watch import PHASE_SOCKET_ENV, PhaseListener

    mounts = {Path(mount).name: mount for mount in status["mounts"]}
    with tempfile.TemporaryDirectory(prefix="simfs-testbed-run-") as scratch:
        written = Path(json_path) if json_path is not None else Path(scratch) / "record.json"
        if json_path is not None:
            written.unlink(missing_ok=True)  # a record left by an earlier run is not this run's
        command = ["mpirun", "--oversubscribe"]
        for client in dict.fromkeys(rank_clients):  # in rank order: the ranks stay by block
            if len(command) > 2:
                command.append(":")
            command += [
                "-n",
                str(rank_clients.count(client)),
                "nsenter",
                f"--uts={status['uts'][client]}",
                "--",
                sys.executable,
                "-m",
                "simfs.cli",
                "measure",
                "--backend",
                "mpi",
                "--dir",
                mounts[client],
                "--json",
                str(written),
                "--",
                *workload,
            ]
        environment = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        with contextlib.ExitStack() as stack:
            listener: PhaseListener | None = None
            try:
                listener = stack.enter_context(PhaseListener(Path(scratch) / "phases.sock", on_phase))
                environment[PHASE_SOCKET_ENV] = str(listener.path)
            except OSError as error:
                print(f"simfs: testbed run: each phase's CPU time will not be sampled: {error}", file=sys.stderr)
            exit_code = subprocess.run(command, env=environment).returncode
        if listener is not None and listener.error is not None:
            print(f"simfs: testbed run: a phase's CPU time could not be sampled: {listener.error}", file=sys.stderr)
        if not written.exists():
            return None, exit_code or 1
        record = json.loads(written.read_text())
    record["command"] = " ".join(argv)
    return record, exit_code


def _testbed_text(status: dict) -> str:
    link = status["link"]
    if status["file_system"] == "glusterfs":
        servers = f"{status['servers']} brick server(s), {status['clients']} client(s), volume {status['volume']}"
    else:
        servers = (
            f"{status['servers']} chunkserver(s), {status['clients']} client(s), "
            f"goal {status.get('goal') or 'not recorded'}"
        )
    lines = [
        f"{status['file_system']} ({status['version']}): {servers}; links {link['rate_bits_per_s'] / 1e6:g} Mbit/s, "
        f"{link['port_buffer_bytes']:,} B per switch port, MTU {link['mtu_bytes']}",
    ]
    for process in status["processes"]:
        state = "running" if process["running"] else "NOT running"
        # A daemon's host is its name up to a dot (GlusterFS's gs1.brick runs on gs1).
        host = status["hosts"][process["name"].split(".")[0]]
        lines.append(f"  {process['name']:8} {host:12} pid {process['pid']:<8} {state}")
    for mount in status["mounts"]:
        lines.append(f"  mount {mount} {'mounted' if mount in status['mounted'] else 'NOT mounted'}")
    return "\n".join(lines)


def _measure(args: argparse.Namespace) -> int:
    from simfs.report.files import write_text
    from simfs.runner import measure, write_outputs
    from simfs.runner.output import strict_json
    from simfs.runner.signals import deferred_signals, pause_point

    if not str(args.dir).strip():
        raise SimfsError("measure: --dir: an empty path; expected the directory to run in")
    words = _workload_words(args)
    if not words:
        raise SimfsError("measure: give the workload after --, e.g. -- ior -a POSIX -F -t 1m -b 64m")
    if args.trace_ops and not args.trace:
        raise SimfsError("--trace-ops: give --trace FILE too (the samples go beside it)")
    outputs = {
        name: _output_path(getattr(args, name), f"--{name}") for name in ("json", "trace") if getattr(args, name)
    }
    trace = outputs.get("trace")
    if trace is not None and trace.suffix not in (".csv", ".parquet"):
        raise SimfsError(f"--trace {trace}: expected a .csv or .parquet file")
    if trace is not None and trace.suffix == ".parquet":
        from simfs.report.files import require_parquet

        require_parquet(f"--trace {trace}")
    # Each file the run writes once: a record written over its own trace loses the trace.
    written = {f"--{name}": path for name, path in outputs.items()}
    if trace is not None and args.trace_ops:
        written["--trace-ops"] = trace.with_name(f"{trace.stem}.ops{trace.suffix}")
    seen: dict[Path, str] = {}
    for option, path in written.items():
        if path.resolve() in seen:
            raise SimfsError(f"{option} {path}: {seen[path.resolve()]} writes that file too; expected another file")
        seen[path.resolve()] = option
    summary = io.StringIO()
    json_path = outputs.get("json")
    started: list[Path] = []

    def on_start(record: dict) -> None:
        # Before the ranks start: if this process is killed (SIGKILL, the OOM killer,
        # mpirun ending the job), the record says so instead of being missing or stale.
        if json_path is not None:
            write_text(json_path, strict_json(record))
            started.append(json_path)

    output_error: SimfsError | None = None
    # SIGINT and SIGTERM wait (noted, not raised) until the record is written and the
    # run directory removed; the run itself turns them into a stop.
    with deferred_signals():
        try:
            measured = measure(
                shlex.join(words),
                args.dir,
                processes=args.np,
                backend=args.backend,
                keep=args.keep,
                trace_ops=args.trace_ops,
                argv=["simfs", *sys.argv[1:]] if sys.argv[1:2] == ["measure"] else None,
                out=summary,
                on_start=on_start,
            )
        except BaseException:
            for path in started:  # the run did not start after all: no record of it
                path.unlink(missing_ok=True)
            raise
        # Files before the terminal: mpirun kills its ranks 1 s after forwarding Ctrl-C as
        # SIGTERM (Open MPI's odls_base_sigkill_timeout) and stops draining their stdout, so
        # a reporter that printed first could die with the record unwritten.
        if measured.record:
            pause_point("before_outputs")
            try:
                write_outputs(measured, json_path=json_path, trace_path=trace, ops=args.trace_ops)
            except SimfsError as exc:
                output_error = exc
    # The summary is printed even when a file cannot be written: the run happened.
    sys.stdout.write(summary.getvalue())
    sys.stdout.flush()
    code = measured.exit_code
    if code and measured.record:  # the reporter: others stay quiet
        label = "interrupted" if measured.status == "interrupted" else "error"
        print(f"simfs: {label}: {measured.reason}", file=sys.stderr)
    if output_error is not None:
        print(f"simfs: error: {output_error}", file=sys.stderr)
        code = code or 2
    return code


def _validate(args: argparse.Namespace) -> int:
    from simfs.validate import find_cases, run_cases, summarise, write_report

    if args.live:
        return _validate_live(args)
    if not args.cases:
        raise SimfsError("validate: give validation cases (files or folders), or --live RUN.json --system NAME")
    if args.system:
        raise SimfsError("validate: --system goes with --live; a validation case names its own system")

    from simfs.parallel import check_jobs

    jobs = check_jobs(1 if args.jobs is None else args.jobs, args.scheduler, "--jobs")
    cases = find_cases(args.cases)
    report_path = _output_path(args.report, "--report", (".md",)) if args.report else None
    from tqdm import tqdm

    # A progress bar on a terminal only (tqdm's disable=None): a whole validation takes minutes.
    with tqdm(total=len(cases), file=sys.stderr, unit="case", leave=False, disable=None) as bar:
        outcomes = run_cases(cases, progress=lambda done, total: bar.update(1), jobs=jobs, scheduler=args.scheduler)
    for split, numbers in sorted(summarise(outcomes).items()):
        print(
            f"{split}: {numbers['points']} points, median |error| {numbers['median_abs_error_pct']:.1f}%, "
            f"worst {numbers['worst_abs_error_pct']:.1f}% ({numbers['worst_case']}), "
            f"{numbers['within_tolerance']} within tolerance"
        )
    if report_path is not None:
        path = write_report(outcomes, report_path, _command_line("validate"))
        print(f"report written to {path}, its plots to {path.parent / 'plots'}/", file=sys.stderr)
    return 0


def _validate_live(args: argparse.Namespace) -> int:
    from simfs.validate.live import compare_live

    if args.cases or args.report or args.jobs is not None or args.scheduler:
        raise SimfsError(
            "validate --live: give run records and --system only (no cases, --report, --jobs or --scheduler)"
        )
    if not args.system:
        raise SimfsError("validate --live: --system is required (the profile to predict the run with)")
    table = compare_live(args.live, args.system)
    # Bandwidths in GB/s, rates as they are (op/s).
    scale = table["unit"].map({"B/s": 1e9}).fillna(1.0)
    shown = table.assign(
        unit=table["unit"].replace({"B/s": "GB/s"}),
        measured=(table["measured"] / scale).map("{:.4g}".format),
        predicted=(table["predicted"] / scale).map("{:.4g}".format),
        # One iteration has no spread: "-", as an unrecorded CPU share.
        spread_pct=table["spread_pct"].map(lambda pct: "-" if pct != pct else f"{pct:.0f}"),
        error_pct=table["error_pct"].map("{:+.1f}".format),
    )
    print(f"{args.system}: predicted against measured")
    columns = ["run", "ppn", "phase", "unit", "measured", "spread_pct", "predicted", "error_pct"]
    if table[["cpu_busy_measured", "cpu_busy_predicted"]].notna().all(axis=1).any():
        # A testbed's shared cores: how busy each phase kept them, recorded and simulated.
        shown = shown.assign(
            cpu_busy_measured=table["cpu_busy_measured"].map(_percent),
            cpu_busy_predicted=table["cpu_busy_predicted"].map(_percent),
        )
        columns += ["cpu_busy_measured", "cpu_busy_predicted"]
    print(shown[columns].to_string(index=False))
    errors = table["error_pct"].abs()
    print(f"{len(table)} phases: median |error| {errors.median():.1f}%, worst {errors.max():.1f}%")
    return 0


def _percent(share: float) -> str:
    return "-" if share != share else f"{share:.0%}"  # NaN: not recorded or not simulated


#: The tools ``--workload`` takes (``simfs.workloads``; kept here so ``--help`` imports
#: nothing; a test checks the two agree).
WORKLOAD_TOOLS = (
    "dd",
    "ior",
    "mdtest",
    "bonnie++",
    "obdfilter-survey",
    "access-class",
    "benchio",
    "fio",
    "darshan",
    "io500",
    "specsfs2008",
)

#: What each kind of output file may end in (the writers choose the format by suffix).
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def _output_path(text: str, option: str, suffixes: Sequence[str] = ()) -> Path:
    """An output file whose folder exists and whose suffix a writer knows, checked
    before any long computation so a typo does not cost the run."""
    if not text.strip():
        raise SimfsError(f"{option}: an empty file name")
    path = Path(text)
    if suffixes and path.suffix.lower() not in suffixes:
        raise SimfsError(f"{option} {path}: expected a file ending in {', '.join(suffixes)}")
    if path.is_dir():
        raise SimfsError(f"{option} {path}: is a directory; expected a file name")
    if not path.parent.is_dir():
        if path.parent.exists():
            raise SimfsError(f"{option} {path}: {path.parent} is not a directory")
        raise SimfsError(f"{option} {path}: directory {path.parent} does not exist")
    return path


def _output_paths(texts: Sequence[str], option: str, suffixes: Sequence[str]) -> list[Path]:
    """Each of a repeatable output option's files, checked as :func:`_output_path`; the
    same file twice is refused (one would overwrite the other)."""
    paths = [_output_path(text, option, suffixes) for text in texts]
    seen: set[Path] = set()
    for path in paths:
        if path.resolve() in seen:
            raise SimfsError(f"{option} {path}: given twice; expected each file once")
        seen.add(path.resolve())
    return paths


def _command_line(command: str) -> str:
    """The command as the user typed it, for provenance in generated files."""
    if sys.argv[1:2] == [command]:
        return " ".join(["simfs", *sys.argv[1:]])
    return f"simfs {command}"


def _emit(frame, fmt: str) -> None:
    if fmt == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    else:
        from simfs.report.tables import to_json

        sys.stdout.write(to_json(frame) + "\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
