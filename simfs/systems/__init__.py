"""Built-in system profiles (``*.toml`` beside this file) and the profile reader."""

from simfs.systems.profile import Profile, builtin_names, load_profile

__all__ = ["Profile", "builtin_names", "load_profile"]
