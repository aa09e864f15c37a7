"""Validation: predictions against measurements, split into calibration and held-out points."""

from simfs.validate.case import ValidationCase, find_cases, load_case
from simfs.validate.report import write_report
from simfs.validate.run import CaseOutcome, run_case, run_cases, summarise

__all__ = [
    "CaseOutcome",
    "ValidationCase",
    "find_cases",
    "load_case",
    "run_case",
    "run_cases",
    "summarise",
    "write_report",
]
