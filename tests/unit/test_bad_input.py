"""Generated bad input: every case must give exit status 2, one line on stderr
(``simfs: error: ...``), no traceback, nothing written, and no hang (issue 17).

The cases are generated, not hand-picked: every field of several built-in profiles
replaced by values of the wrong kind, every option of every workload tool given values
it cannot take, the command's own flags, and input paths that are not files.  The count
per family is recorded in ``docs/reference/bad-input.md`` and checked below.

Each case runs ``simfs.cli.main`` in this process (milliseconds each; a subprocess per
case would cost minutes), with an alarm as the hang guard.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import tomllib
from pathlib import Path

import pytest

from simfs.cli import main
from simfs.systems.profile import BUILTIN_DIR

#: Seconds before a case counts as hung (a refused input takes milliseconds).
HANG_GUARD_S = 60
#: Profiles whose every field is replaced: one per file-system model family.
PROFILES = ("crtdc-lfs5", "crtdc-lfs3", "crtdc-panfs", "tud-cxfs", "olcf-alpine")
#: Free-text fields: any string is a valid name or description.
FREE_TEXT = {("system", "name"), ("system", "description")}
SIMPLE_WORKLOAD = "dd bs=1M count=4"
ROOT = Path(__file__).resolve().parents[2]


class _HangError(Exception):
    pass


def run_cli(argv: list[str], directory: Path) -> tuple[object, str, list[str]]:
    """Exit status (or what was raised), stderr, and files that appeared in ``directory``."""
    before = set(os.listdir(directory))
    errors, output = io.StringIO(), io.StringIO()

    def on_alarm(number, frame):
        raise _HangError()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(HANG_GUARD_S)
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(output):
            status: object = main(argv)
    except _HangError:
        status = "hang"
    except SystemExit as exc:
        status = exc.code
    except BaseException as exc:  # a traceback a user would see
        status = f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return status, errors.getvalue(), sorted(set(os.listdir(directory)) - before)


def assert_refused(argv: list[str], directory: Path) -> None:
    status, errors, new_files = run_cli(argv, directory)
    lines = [line for line in errors.splitlines() if not line.startswith("simfs: warning:")]
    assert status == 2, f"{argv}: exit {status!r}, stderr {errors!r}"
    assert len(lines) == 1 and lines[0].startswith("simfs: error: "), f"{argv}: stderr {errors!r}"
    assert "Traceback" not in errors
    assert not new_files, f"{argv}: wrote {new_files}"


# -- profiles ------------------------------------------------------------------------------
def _leaves(node: dict, prefix: tuple = ()):
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*prefix, key))
        else:
            yield (*prefix, key), value


def _wrong_values(key: tuple, value: object) -> list[object]:
    if key in FREE_TEXT or key[:2] == ("system", "sources"):
        return []
    if isinstance(value, bool):
        return ["yes", 1]
    if isinstance(value, (int, float)):
        return [
            "fast",
            True,
            -7,
            math.nan,
            math.inf,
            1e308,
            5e-324,
            10**400,
        ]  # the last three: slips that overflow or vanish
    if isinstance(value, str):
        return [5, "no-such-choice"]
    if isinstance(value, list) and key[0] == "calibration":
        return ["x", [1.0], list(reversed(value)) if len(value) == 2 else [-1.0]]
    return []


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'


def _dump(data: dict) -> str:
    lines: list[str] = []

    def table(prefix: str, node: dict) -> None:
        if prefix:
            lines.append(f"[{prefix}]")
        for name, value in node.items():
            if not isinstance(value, dict):
                lines.append(f"{_key(name)} = {_toml(value)}")
        for name, value in node.items():
            if isinstance(value, dict):
                table(f"{prefix}.{_key(name)}" if prefix else _key(name), value)

    table("", data)
    return "\n".join(lines) + "\n"


def profile_cases() -> list[tuple[str, tuple, object]]:
    cases = []
    for name in PROFILES:
        data = tomllib.loads((BUILTIN_DIR / f"{name}.toml").read_text(encoding="utf-8"))
        for key, value in _leaves(data):
            cases += [(name, key, wrong) for wrong in _wrong_values(key, value)]
        # A misspelt field in every table (``count`` -> ``cuont``) and an unknown table.
        for key, _ in _leaves(data):
            if key[0] not in ("system", "calibration", "mechanisms"):
                cases.append((name, (*key[:-1], key[-1][::-1] + "_typo"), 1))
                break
        cases.append((name, ("no_such_table", "field"), 1))
        cases.append((name, ("calibration", "frees", "client.copy_write_Bps"), [1.0, 2.0]))
    return cases


PROFILE_CASES = profile_cases()


@pytest.mark.parametrize(
    "name, key, wrong", PROFILE_CASES, ids=lambda v: str(v) if not isinstance(v, tuple) else ".".join(v)
)
def test_a_wrong_profile_field_is_refused(name, key, wrong, tmp_path):
    data = tomllib.loads((BUILTIN_DIR / f"{name}.toml").read_text(encoding="utf-8"))
    node = data
    for part in key[:-1]:
        node = node.setdefault(part, {})
    node[key[-1]] = wrong
    profile = tmp_path / "profile.toml"
    profile.write_text(_dump(data), encoding="utf-8")
    assert_refused(["simulate", "--system", str(profile), "--workload", SIMPLE_WORKLOAD], tmp_path)


def test_the_profile_writer_round_trips():
    # The cases above are only wrong where they were made wrong.
    for name in PROFILES:
        data = tomllib.loads((BUILTIN_DIR / f"{name}.toml").read_text(encoding="utf-8"))
        assert tomllib.loads(_dump(data)) == data


# -- workloads -----------------------------------------------------------------------------
_NOT_A_COUNT = ["0", "-1", "abc", "1.5", "1e20", "99999999999999999999", "%", "0x10", "''"]
_NOT_A_SIZE = ["0", "-1", "abc", "1.5", "1e20", "4q", "1g:2g", "99999999999999999999t", "%", "''"]
#: (base command, option, wrong values).
WORKLOAD_OPTIONS = [
    ("dd bs=1M count=4", "bs=", _NOT_A_SIZE),
    ("dd bs=1M count=4", "count=", _NOT_A_COUNT),
    ("ior -a POSIX -t 1m -b 4m", "-t ", _NOT_A_SIZE),
    ("ior -a POSIX -t 1m -b 4m", "-b ", _NOT_A_SIZE),
    ("ior -a POSIX -t 1m -b 4m", "-s ", _NOT_A_COUNT),
    ("ior -a POSIX -t 1m -b 4m", "-i ", _NOT_A_COUNT),
    ("ior -a POSIX -t 1m -b 4m -C", "-Q ", _NOT_A_COUNT),
    ("ior -a POSIX -t 1m -b 4m", "-D ", [v for v in _NOT_A_COUNT if v != "0"]),  # -D 0: no deadline
    ("ior -a POSIX -t 1m -b 4m", "-t=", _NOT_A_SIZE),
    ("mdtest -F -C", "-n ", _NOT_A_COUNT),
    ("mdtest -n 10 -F -C", "-i ", _NOT_A_COUNT),
    ("mdtest -n 10 -F -C", "-w ", [v for v in _NOT_A_SIZE if v != "0"]),
    ("mdtest -n 10", "-N ", [v for v in _NOT_A_COUNT if v != "0"]),
    ("mdtest -n 10 -F -C", "-W ", [v for v in _NOT_A_COUNT if v != "0"]),  # -W 0: no deadline
    ("bonnie++ -n 0 -f", "-s ", _NOT_A_SIZE),
    ("bonnie++ -s 1g -n 0 -f", "-x ", _NOT_A_COUNT),
    ("bonnie++ -s 1g -n 0 -f", "-r ", [v for v in _NOT_A_COUNT if v != "0"]),
]
WHOLE_WORKLOADS = [
    "",
    "   ",
    "nosuchtool -x",
    "dd",
    "dd bs=1M count=4 foo=1",
    "dd bs=1M count=4 conv=nope",
    "dd bs=1M count=4 oflag=sync",
    "dd bs=1M count=4 extra",
    "dd bs=1024000 count=99999999999999999999",
    "ior -a POSIX -t 1m -b 4m -Z",
    "ior -a HDF5 -t 1m -b 4m",
    "ior -a S3 -t 1m -b 4m",
    "mdtest -n 10 -z 2 -b 2 -I 3 -u",
    "ior -a POSIX -t 1m -b 4m --posix.odirect=maybe",
    "ior -a POSIX -t 1m -b 4m --posix.odirectt",
    "ior -a POSIX -t 1m -b 4m --posix.gpfs.finegrainwritesharin",
    "ior -a POSIX -t 1m -b 4m -u",
    "ior -t 3m -b 4m",
    "ior -t 1m -b 4m -o",
    "ior -a POSIX -t 1m -b 4m -O nonsense",
    "ior -a POSIX -F -t 1m -b 1g -s 9223372036854775807",
    "mdtest",
    "mdtest -n 10 -F -D",
    "mdtest -n 10 -Z",
    "mdtest -n 10 -a HDF5",
    "mdtest -n 2 -z 2",
    "mdtest -n 10 -e 100",
    "mdtest -n 1000000000",
    "bonnie++ -s 1g -n 0",
    "bonnie++ -s 1g -n 5 -f",
    "bonnie++ -s 1g:2g -n 0 -f",
    'ior -t 1m -b 4m "unclosed',
]
WORKLOAD_CASES = [f"{base} {option}{wrong}" for base, option, values in WORKLOAD_OPTIONS for wrong in values]
WORKLOAD_CASES += WHOLE_WORKLOADS


@pytest.mark.parametrize("workload", WORKLOAD_CASES)
def test_a_wrong_workload_is_refused(workload, tmp_path):
    assert_refused(["simulate", "--system", "crtdc-lfs5", "--workload", workload, "--nodes", "1"], tmp_path)


@pytest.mark.parametrize("workload", WORKLOAD_CASES[::4])
def test_a_wrong_workload_is_refused_by_a_sweep_before_it_starts(workload, tmp_path):
    argv = ["sweep", "--system", "crtdc-lfs5", "--workload", workload, "--vary", "nodes=1,2", "--no-progress"]
    assert_refused(argv, tmp_path)


# -- the command's own flags -----------------------------------------------------------------
_SIM = ["simulate", "--system", "crtdc-lfs5", "--workload", SIMPLE_WORKLOAD]
_SWEEP = ["sweep", "--system", "crtdc-lfs5", "--workload", SIMPLE_WORKLOAD, "--no-progress"]
FLAG_CASES = (
    [[*_SIM, "--nodes", value] for value in ("0", "-1", "abc", "1.5", "")]
    + [[*_SIM, "--ppn", value] for value in ("0", "-1", "abc", "1.5")]
    + [[*_SIM, "--repeats", value] for value in ("0", "-2", "x")]
    + [[*_SIM, "--format", "xml"], [*_SIM, "--nodes", "2", "--set", "nodes=8"], [*_SIM, "--ppn", "2", "--set", "ppn=4"]]
    + [[*_SIM, "--set", "nodes=4", "--set", "nodes=8"], [*_SIM, "--set", "nodes"], [*_SIM, "--set", "=3"]]
    + [
        [*_SIM, "--set", f"{key}={value}"]
        for key, value in (
            ("nodes", "abc"),
            ("nodes", "0"),
            ("nodes", "451"),
            ("ppn", "-3"),
            ("stripe_count", "0"),
            ("stripe_count", "999"),
            ("stripe_size", "1000"),
            ("stripe_offset", "99"),
            ("seed", "-1"),
            ("seed", "x"),
            ("mode", "fast"),
            ("background_nodes", "2"),
            ("background", "nosuchtool"),
            ("no.such.field", "1"),
            ("oss.count", "abc"),
            ("oss.count", "0"),
            ("oss.count", "-4"),
            ("client.network", "carrier-pigeon"),
            ("ost.drive", "tape"),
            ("mechanisms.hdd_seek", "maybe"),
            ("mechanisms.no_such", "true"),
            ("oss.count", "10000000"),
            ("ppn", "999999"),
        )
    ]
    + [[*_SIM, "--timeline", name] for name in ("out.xyz", "out", "no/such/dir/t.png", ".")]
    + [[*_SIM, "--repeats", "2", "--timeline", "t.png"], [*_SIM, "--repeats", "2", "--per-rank"]]
    + [[*_SWEEP, "--vary", value] for value in ("nodes", "nodes=", "=1,2", "nodes=,,", "nodes=0,1", "nodes=a,b")]
    + [[*_SWEEP, "--vary", "nodes=1,2", "--vary", "nodes=4"], [*_SWEEP, "--vary", "nodes=1,2", "--set", "nodes=4"]]
    + [[*_SWEEP, "--vary", "background=garbage"], [*_SWEEP, "--vary", "oss.count=1,abc"]]
    + [[*_SWEEP, "--vary", "nodes=1,2", "--plot", name] for name in ("out.xyz", "no/such/dir/p.png", ".")]
    + [[*_SWEEP, "--vary", "nodes=1,2", "--plot", "p.png", "--plot", "./p.png"]]
    + [[*_SIM, "--timeline", "t.csv", "--timeline", "t.csv"]]
    + [["show", "no-such-system"], ["show", "crtdc-lfs5", "--set", "oss.count=x"], ["show", "missing.toml"]]
    + [
        [*_SWEEP, "--vary", "nodes=1,2", "--measured", name]
        for name in ("missing.toml", "/dev/zero", str(ROOT / "validation/crtdc-lfs3/lfs3-dd-nodes-write.toml"))
    ]
)


@pytest.mark.parametrize("argv", FLAG_CASES, ids=lambda argv: " ".join(argv[5:]) or " ".join(argv))
def test_a_wrong_flag_is_refused(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_refused(argv, tmp_path)


def test_argparse_errors_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    # argparse prints a usage line before its error; the usage is not a traceback and
    # the exit status is 2, as for every other refusal.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", "--system", "crtdc-lfs5"])
    assert exit_info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


# -- input paths that are not files ---------------------------------------------------------------
def path_cases(tmp_path: Path) -> list[Path]:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.toml"
    loop.symlink_to(tmp_path / "loop2.toml")
    (tmp_path / "loop2.toml").symlink_to(loop)
    latin = tmp_path / "latin1.toml"
    latin.write_bytes('[system]\nname = "caf\xe9"\n'.encode("latin-1"))
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"# padding\n" * 200_000)
    empty_dir = tmp_path / "adir.toml"
    empty_dir.mkdir()
    return [Path("/dev/zero"), Path("/dev/null"), fifo, loop, latin, huge, empty_dir, tmp_path / "missing.toml"]


def test_a_profile_path_that_is_not_a_profile_is_refused(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for path in path_cases(tmp_path):
        assert_refused(["show", str(path)], work)
        assert_refused(["simulate", "--system", str(path), "--workload", SIMPLE_WORKLOAD], work)


def test_an_lctl_path_that_is_not_lctl_output_is_refused(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for path in path_cases(tmp_path):
        assert_refused(["simulate", "--system", "crtdc-lfs5", "--workload", SIMPLE_WORKLOAD, "--lctl", str(path)], work)


def test_a_validation_case_path_that_is_not_a_case_is_refused(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for path in path_cases(tmp_path):
        if path.name in ("adir.toml", "null", "missing.toml"):
            continue  # a folder of cases, an empty file and a missing one have their own messages
        assert_refused(["validate", str(path)], work)


# -- the counts the docs state -------------------------------------------------------------------
def test_the_documented_case_counts_are_the_generated_ones():
    page = (ROOT / "docs" / "reference" / "bad-input.md").read_text(encoding="utf-8")
    counts = {
        "profile fields": len(PROFILE_CASES),
        "workloads": len(WORKLOAD_CASES),
        "sweeps": len(WORKLOAD_CASES[::4]),
        "flags": len(FLAG_CASES),
        "input paths": 3 * 8 + 5,
    }
    for family, count in counts.items():
        assert f"| {family} | {count} |" in page, f"docs/reference/bad-input.md: {family} should say {count}"
    assert f"| total | {sum(counts.values())} |" in page


# -- misspelt fields and free parameters: named where they are first missed ----------------
VM_DISK = ROOT / "calibration" / "live" / "vm-disk.toml"
MISSPELT = [
    # (what to change in calibration/live/vm-disk.toml, the command, what the one line says)
    (
        ("memory_bytes =", "memroy_bytes ="),
        "simulate",
        "missing field machine.memory_bytes (the profile sets machine.memroy_bytes: a typo?)",
    ),
    (
        ("copy_read_Bps = 5.0e9", "copy_raed_Bps = 5.0e9"),
        "calibrate",
        "which the profile does not set (the profile sets machine.copy_raed_Bps: a typo?)",
    ),
    (('kind = "ssd"', 'kind = "sdd"'), "calibrate", "vm-disk.toml: device.kind: expected one of"),
    (("read_Bps = 1", "read_Bps = -1"), "calibrate", "device.read_Bps: a free parameter must be a positive number"),
    (
        ("[2.0e8, 2.0e10]", "[2.0e10, 2.0e8]"),
        "calibrate",
        "vm-disk.toml: calibration.free.machine.copy_write_Bps: bounds",
    ),
    (("[2.0e8, 2.0e10]", "[2.0e8, 1.0e9]"), "calibrate", "machine.copy_write_Bps = 2e+09 lies outside its bounds"),
]


@pytest.mark.parametrize(("change", "command", "message"), MISSPELT, ids=lambda value: str(value)[:30])
def test_a_misspelt_or_impossible_profile_field_is_named_once(change, command, message, tmp_path):
    text = VM_DISK.read_text()
    assert change[0] in text
    profile = tmp_path / "vm-disk.toml"
    profile.write_text(text.replace(change[0], change[1], 1))
    if command == "simulate":
        argv = ["simulate", "--system", str(profile), "--workload", "dd bs=1M count=10"]
    else:
        argv = ["calibrate", "--system", str(profile), str(VM_DISK.with_suffix("")), "--out", "out.toml"]
    assert_refused(argv, tmp_path)
    _, errors, _ = run_cli(argv, tmp_path)
    assert message in errors and "--set" not in errors, errors


def test_a_misspelling_is_a_letter_or_two_in_the_same_table():
    from simfs.systems.profile import misspelling_of

    assert misspelling_of("machine.copy_read_Bps", ["machine.copy_raed_Bps", "machine.copy_write_Bps"]) == (
        "machine.copy_raed_Bps"
    )
    # Another real field is not a misspelling of this one, nor is one in another table.
    assert misspelling_of("machine.copy_read_Bps", ["machine.copy_write_Bps"]) is None
    assert misspelling_of("ost.ssd.read_Bps", ["ost.ssd.write_Bps", "oss.read_Bps"]) is None
    assert misspelling_of("mds.create_per_s", ["mds.remove_per_s"]) is None
