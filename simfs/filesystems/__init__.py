"""File-system models, peers on one neutral core (``simfs.filesystems.core``): Lustre,
PanFS, CXFS, IBM Spectrum Scale (GPFS), MooseFS, GlusterFS and a local file system."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from simfs.errors import ProfileError
from simfs.filesystems.core import FileSystem
from simfs.systems.profile import Profile

if TYPE_CHECKING:
    from simfs.filesystems.cxfs import CxfsSystem
    from simfs.filesystems.glusterfs import GlusterFsSystem
    from simfs.filesystems.gpfs import GpfsSystem
    from simfs.filesystems.localfs import LocalSystem
    from simfs.filesystems.lustre import LustreSystem
    from simfs.filesystems.moosefs import MooseFsSystem
    from simfs.filesystems.panfs import PanfsSystem

#: ``system.filesystem`` -> (module, class).  A model is imported when a profile names it
#: (PEP 562 for the class names): ``simfs show`` loads one model, not seven.
_MODELS: dict[str, tuple[str, str]] = {
    "lustre": ("simfs.filesystems.lustre", "LustreSystem"),
    "panfs": ("simfs.filesystems.panfs", "PanfsSystem"),
    "cxfs": ("simfs.filesystems.cxfs", "CxfsSystem"),
    "gpfs": ("simfs.filesystems.gpfs", "GpfsSystem"),
    "local": ("simfs.filesystems.localfs", "LocalSystem"),
    "moosefs": ("simfs.filesystems.moosefs", "MooseFsSystem"),
    "glusterfs": ("simfs.filesystems.glusterfs", "GlusterFsSystem"),
}


def model_class(kind: str) -> type[FileSystem]:
    """The model class of ``system.filesystem = kind``."""
    module, name = _MODELS[kind]
    return getattr(importlib.import_module(module), name)


def __getattr__(name: str) -> object:
    for module, class_name in _MODELS.values():
        if class_name == name:
            return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def system_from_profile(profile: Profile) -> FileSystem:
    """Build the file-system model named by the profile's ``system.filesystem``."""
    kind = profile.raw("system.filesystem")  # "missing field system.filesystem" without it
    if not isinstance(kind, str) or kind not in _MODELS:
        raise ProfileError(f"{profile.origin}: system.filesystem: expected one of {', '.join(_MODELS)}, got {kind!r}")
    _check_calibration(profile)
    return model_class(kind).from_profile(profile)


def _check_calibration(profile: Profile) -> None:
    """The ``[calibration]`` table is read only by ``simfs calibrate``; checked here so a
    typo in it is found when the profile is first used, not at the first calibration."""
    table = profile.data.get("calibration")
    if table is None:
        return
    if not isinstance(table, dict):
        raise ProfileError(f"{profile.origin}: calibration: expected a table ([calibration.free] and its results)")
    unknown = sorted(set(table) - {"free", "follow", "fitted", "fit"})
    if unknown:
        raise ProfileError(
            f"{profile.origin}: calibration.{unknown[0]}: unknown table (expected calibration.free and "
            "calibration.follow, and calibration.fitted and calibration.fit as simfs calibrate writes them)"
        )
    if table.get("free") or table.get("follow"):
        from simfs.systems.free_parameters import declared_followers, declared_free_parameters

        try:
            declared_free_parameters(profile)
            declared_followers(profile)
        except ProfileError as exc:
            message = str(exc)
            raise ProfileError(
                message if message.startswith(profile.origin) else f"{profile.origin}: {message}"
            ) from None


__all__ = [
    "CxfsSystem",
    "FileSystem",
    "GlusterFsSystem",
    "GpfsSystem",
    "LocalSystem",
    "LustreSystem",
    "MooseFsSystem",
    "PanfsSystem",
    "system_from_profile",
]
