"""validation/testbed/record.py chooses where each series' records go (it runs nothing
here: its ``record`` is replaced)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def record_script(monkeypatch):
    spec = importlib.util.spec_from_file_location("testbed_record", ROOT / "validation" / "testbed" / "record.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    recorded = []
    monkeypatch.setattr(module, "record", recorded.append)

    def run(*arguments: str) -> list:
        monkeypatch.setattr(sys, "argv", ["record.py", *arguments])
        assert module.main() == 0
        return recorded

    return run


def test_series_go_beside_their_cases_by_default(record_script):
    calibration, clients = record_script("calibration", "clients-s4")
    assert calibration.folder == ROOT / "calibration" / "testbed" / "runs"
    assert clients.folder == ROOT / "validation" / "testbed" / "runs" / "clients-s4"


def test_out_keeps_the_committed_records_and_mirrors_their_paths(record_script, tmp_path):
    calibration, clients = record_script("calibration", "clients-s4", "--out", str(tmp_path))
    assert calibration.folder == tmp_path / "calibration" / "testbed" / "runs"
    assert clients.folder == tmp_path / "validation" / "testbed" / "runs" / "clients-s4"
    assert clients.runs and clients.servers == 4  # the series itself unchanged


def test_ci_takes_no_other_argument(record_script, capsys):
    with pytest.raises(SystemExit):
        record_script("--ci", "--out", "/tmp/anywhere")
    assert "--ci records nothing" in capsys.readouterr().err
