"""File-system models that assemble hardware into a system: Lustre (PanFS, CXFS later)."""

from __future__ import annotations

from simfs.errors import ProfileError
from simfs.filesystems.lustre import LustreSystem
from simfs.systems.profile import Profile

_MODELS = {"lustre": LustreSystem}


def system_from_profile(profile: Profile) -> LustreSystem:
    """Build the file-system model named by the profile's ``system.filesystem``."""
    kind = profile.data.get("system", {}).get("filesystem")
    if kind not in _MODELS:
        raise ProfileError(f"{profile.origin}: system.filesystem: expected one of {', '.join(_MODELS)}, got {kind!r}")
    return _MODELS[kind].from_profile(profile)


__all__ = ["LustreSystem", "system_from_profile"]
