"""validation/live/compare_summary.py: the paired runner-against-tool summary."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "validation" / "live" / "compare_summary.py"


@pytest.fixture(scope="module")
def summary():
    spec = importlib.util.spec_from_file_location("compare_summary", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratios_are_paired_by_round(summary, tmp_path, capsys):
    # The tool drifts by 2x between rounds; within each round the runner is 5% below it.
    lines = tmp_path / "lines"
    lines.write_text(
        "".join(
            f"{r} dd read-direct {rate}\n{r} simfs-dd read-direct {rate * 0.95}\n"
            for r, rate in enumerate([1, 2, 1, 2, 1], 1)
        )
    )
    summary.main(str(lines))
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:3] == ["dd", "read-direct", "5"]
    assert float(row[5]) == pytest.approx(0.95)
    assert row[-3:] == ["yes,", "whole", "interval"]


def test_the_tools_against_each_other_give_the_floor(summary, tmp_path, capsys):
    # dd reads 20% faster than fio in every round: the directory itself separates two tools.
    lines = tmp_path / "lines"
    lines.write_text(
        "".join(f"{r} fio read-direct {rate}\n{r} dd read-direct {rate * 1.2}\n" for r, rate in enumerate([1, 2, 1], 1))
    )
    summary.main(str(lines))
    out = capsys.readouterr().out.splitlines()
    assert "(the tools against each other)" in out[1]  # no runner lines: the floor follows the header
    row = out[2].split()
    assert row[:3] == ["dd", "read-direct", "3"]
    assert float(row[5]) == pytest.approx(1.2)
    assert row[-3:] == ["no,", "whole", "interval"]


def test_a_bad_line_names_file_and_line(summary, tmp_path):
    lines = tmp_path / "lines"
    lines.write_text("1 dd read-direct 1.0\n2 dd read-direct fast\n")
    with pytest.raises(SystemExit, match=r"lines:2: round and GB/s must be numbers"):
        summary.main(str(lines))
