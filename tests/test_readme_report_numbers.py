"""The README quotes the validation report's numbers; they are the report's numbers.

``validation/REPORT.md`` is checked current by the slow suite
(``tests/regression/test_calibrated_profiles.py`` regenerates it), so checking the README
against the committed report here is checking it against what ``simfs validate
validation/`` prints, without the minutes that takes."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = " ".join((ROOT / "README.md").read_text().split())  # sentences across line breaks
REPORT = (ROOT / "validation" / "REPORT.md").read_text()


def systems() -> dict[tuple[str, str], dict[str, str]]:
    """The report's per-system table, by (system, split)."""
    rows = {}
    for line in REPORT.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 7 and cells[1] in ("calibration", "held-out"):
            rows[(cells[0], cells[1])] = dict(
                zip(["points", "median", "worst", "worst_case", "within"], cells[2:]), system=cells[0]
            )
    return rows


def held_out_errors(cases: str) -> list[float]:
    """Absolute errors (%) of the held-out points of the cases whose name matches."""
    errors = []
    for line in REPORT.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1] == "held-out" and re.fullmatch(cases, cells[0]):
            errors.append(abs(float(cells[5].rstrip("%").replace(",", ""))))
    return errors


def percent(text: str) -> float:
    return float(text.rstrip("%"))


def test_the_headline_over_all_held_out_points():
    match = re.search(
        r"\*\*(\d+) held-out points: median absolute error ([\d.]+)%, worst ([\d.]+)%.*?(\d+) of \d+ within", REPORT
    )
    points, median, worst, within = match.groups()
    assert f"over all {points} held-out points (seeds included) the median error is {round(float(median))}%" in README
    assert f"{within} are within their tolerance" in README
    assert f"+{round(float(worst)):,}%" in README


def test_the_crtdc_lustre_systems():
    errors = held_out_errors(r"lfs[345]-.*")
    assert errors, "no lfs3/4/5 held-out points in the report"
    assert f"median {round(statistics.median(errors))}% and at worst {round(max(errors))}%" in README


def test_cxfs_the_worst_seed_system():
    cxfs = systems()[("tud-cxfs-fitted", "held-out")]
    assert cxfs["within"] == f"0 of {cxfs['points']}"
    assert f"none of its {cxfs['points']} held-out points is within tolerance" in README
    assert f"median error {round(percent(cxfs['median']))}%, worst +{round(percent(cxfs['worst']))}%" in README


@pytest.mark.parametrize("system, file_system", [("vm-disk-fitted", "ext4"), ("vm-tmpfs-fitted", "tmpfs")])
def test_the_local_machine(system, file_system):
    median = round(percent(systems()[(system, "held-out")]["median"]))
    assert re.search(rf"on {file_system} within (a median )?{median}%", README), f"README: {file_system} {median}%"
