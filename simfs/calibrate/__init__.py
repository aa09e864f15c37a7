"""Calibrators: fit a profile's free parameters to Measurements (scikit-learn contract)."""

from simfs.calibrate.calibrator import IdentifiabilityWarning, ProfileCalibrator
from simfs.calibrate.free import FreeParameter, declared_free_parameters

__all__ = ["FreeParameter", "IdentifiabilityWarning", "ProfileCalibrator", "declared_free_parameters"]
