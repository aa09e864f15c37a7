"""fio as a workload: a job file (``fio jobs.fio``) or fio's command-line jobs
(``fio --name=w --rw=write --bs=1m --size=4g --direct=1``).

simfs runs a fio job as the IOR run that does the same I/O (the mapping of
:func:`simfs.ingest.fio.ior_equivalent`, which the fio result reader uses too): a
``rw=write``, ``read``, ``randwrite`` or ``randread`` job (random ones as IOR ``-z``: each
block once in a random order, fio's random map), one ``bs``, a ``size`` that is a multiple of it,
one call in flight per process (``ioengine`` sync, psync, vsync, pvsync, pvsync2, or
libaio with ``iodepth=1``), a file per process, ``direct=1`` for O_DIRECT,
``end_fsync=1``/``fsync_on_close=1`` for an fsync inside the timed phase.  ``runtime=S``
without ``time_based`` stops the job after S seconds, as IOR's ``-D`` does.  Anything else
is an error naming the job and the option.

Processes are the experiment's: ``numjobs`` other than 1 is an error asking for ``--ppn``
instead (every node runs the job file's processes).  Jobs of a file run one after another
only when each one after the first waits for the previous (``stonewall``, in the job or
in ``[global]``); fio runs jobs without it at the same time, which simfs does not model.
Aggregate bandwidth is the sum of the processes' rates, as fio's group report and a
set of fio runs on several nodes add up.
"""

from __future__ import annotations

import configparser
import dataclasses
from pathlib import Path

from simfs.errors import WorkloadError
from simfs.workloads.ior import parse_ior
from simfs.workloads.spec import PhaseSpec, WorkloadSpec


def parse_fio(args: list[str], command: str) -> WorkloadSpec:
    if len(args) == 1 and not args[0].startswith("-"):
        jobs = _job_file(Path(args[0]))
    else:
        jobs = _command_line_jobs(args)
    if not jobs:
        raise WorkloadError("fio: no job (give a job file or --name=NAME and the job's options)")
    from simfs.ingest.fio import ior_equivalent

    phases = []
    for index, (name, options) in enumerate(jobs):
        where = f"fio: job {name!r}"
        if index and "stonewall" not in options and "wait_for" not in options:
            raise WorkloadError(
                f"{where}: runs at the same time as the job before it (fio's default); simfs runs jobs one "
                "after another: add stonewall to it or to [global]"
            )
        if options.get("numjobs", "1") != "1":
            raise WorkloadError(
                f"{where}: numjobs={options['numjobs']}: processes per node are an experiment setting here: "
                f"use --ppn {options['numjobs']} (and --nodes for fio on several nodes)"
            )
        if "time_based" in options:
            raise WorkloadError(f"{where}: time_based (rewinding the file until runtime) is not modelled")
        runtime = options.pop("runtime", "")
        options = {key: value for key, value in options.items() if key not in ("stonewall", "wait_for")}
        # The job's own direction (randread: its read); ior_equivalent refuses other rw modes.
        ior, reason = ior_equivalent(options, options.get("rw", options.get("readwrite", "read")))
        if ior is None:
            raise WorkloadError(f"{where}: {reason}")
        if runtime:
            seconds = _seconds(runtime, where)
            ior += f" -D {seconds}"
        phase = parse_ior(ior.split()[1:], ior).phases[0]
        phases.append(_labelled(phase, name, len(jobs)))
    return WorkloadSpec(
        "fio", command, tuple(phases), aggregate="sum_of_ranks", options={"jobs": [name for name, _ in jobs]}
    )


def _labelled(phase: PhaseSpec, name: str, job_count: int) -> PhaseSpec:
    if job_count == 1:
        return phase
    # A job is usually named after what it does ("[write]"): its name alone then.
    return dataclasses.replace(phase, label=name if phase.op in name.split() else f"{name} {phase.op}")


def _seconds(text: str, where: str) -> int:
    value = text.strip().lower()
    scale = 1
    for suffix, factor in (("ms", None), ("s", 1), ("m", 60), ("h", 3600)):
        if value.endswith(suffix):
            if factor is None:
                raise WorkloadError(f"{where}: runtime={text}: give whole seconds")
            value, scale = value[: -len(suffix)], factor
            break
    if not value.isdigit() or int(value) == 0:
        raise WorkloadError(f"{where}: runtime={text}: expected whole seconds above 0")
    return int(value) * scale


def _command_line_jobs(args: list[str]) -> list[tuple[str, dict[str, str]]]:
    jobs: list[tuple[str, dict[str, str]]] = []
    common: dict[str, str] = {}
    for arg in args:
        if not arg.startswith("--"):
            raise WorkloadError(f"fio: {arg!r}: expected --option=value (or one job file)")
        key, _, value = arg[2:].partition("=")
        if key in ("output", "output-format", "minimal", "eta", "status-interval"):
            continue  # what fio prints, not what it does
        if key == "name":
            jobs.append((value, dict(common)))
        elif jobs:
            jobs[-1][1][key] = value
        else:
            common[key] = value  # before the first --name: fio's global options
    return jobs


def _job_file(path: Path) -> list[tuple[str, dict[str, str]]]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise WorkloadError(f"fio: {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WorkloadError(f"fio: {path}: not a text file (expected a fio job file)") from None
    parser = configparser.ConfigParser(
        interpolation=None, allow_no_value=True, strict=True, comment_prefixes=(";", "#"), default_section="global"
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as exc:
        raise WorkloadError(f"fio: {path}: not a fio job file ({str(exc).splitlines()[0]})") from None
    jobs = []
    for name in parser.sections():
        # A bare option (``direct``, ``group_reporting``) is fio's "=1".
        options = {key: "1" if value is None else value for key, value in parser.items(name)}
        jobs.append((name, options))
    return jobs
