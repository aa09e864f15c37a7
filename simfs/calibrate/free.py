"""Free parameters: the profile fields a calibrator may change, with their bounds.

The declaration is read and checked in :mod:`simfs.systems.free_parameters` (every
command checks it when it loads a profile, without importing the calibrator); this
module is where the calibrator finds it.
"""

from __future__ import annotations

from simfs.systems.free_parameters import (
    FreeParameter,
    declared_followers,
    declared_free_parameters,
    followed_values,
)

__all__ = ["FreeParameter", "declared_followers", "declared_free_parameters", "followed_values"]
