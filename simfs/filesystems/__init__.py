"""File-system models, peers on one neutral core (``simfs.filesystems.core``): Lustre,
PanFS, CXFS, IBM Spectrum Scale (GPFS) and a local file system."""

from __future__ import annotations

from simfs.errors import ProfileError
from simfs.filesystems.core import FileSystem
from simfs.filesystems.cxfs import CxfsSystem
from simfs.filesystems.gpfs import GpfsSystem
from simfs.filesystems.localfs import LocalSystem
from simfs.filesystems.lustre import LustreSystem
from simfs.filesystems.panfs import PanfsSystem
from simfs.systems.profile import Profile

_MODELS: dict[str, type[FileSystem]] = {
    "lustre": LustreSystem,
    "panfs": PanfsSystem,
    "cxfs": CxfsSystem,
    "gpfs": GpfsSystem,
    "local": LocalSystem,
}


def system_from_profile(profile: Profile) -> FileSystem:
    """Build the file-system model named by the profile's ``system.filesystem``."""
    kind = profile.data.get("system", {}).get("filesystem")
    if kind not in _MODELS:
        raise ProfileError(f"{profile.origin}: system.filesystem: expected one of {', '.join(_MODELS)}, got {kind!r}")
    return _MODELS[kind].from_profile(profile)


__all__ = [
    "CxfsSystem",
    "FileSystem",
    "GpfsSystem",
    "LocalSystem",
    "LustreSystem",
    "PanfsSystem",
    "system_from_profile",
]
