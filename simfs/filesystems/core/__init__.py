"""The file-system-neutral core: the parts every model is built of (clients, networks, a
metadata service, data servers, targets, controllers, client I/O settings, layouts), the
profile readers they share, and the run-time assembly of resources and paths.

The run-time assembly (:class:`FileSystemInstance`) is loaded on first use (PEP 562): it
needs numpy and SimPy, and describing a system (``simfs show``) needs neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from simfs.filesystems.core.layout import Layout, TargetAllocator, segmented_stripe_bytes, stripe_bytes
from simfs.filesystems.core.system import ClientIo, FileSystem, MetadataSpec

if TYPE_CHECKING:
    from simfs.filesystems.core.instance import FileSystemInstance, RateCap

_LOADED_ON_USE = {"FileSystemInstance": "instance", "RateCap": "instance"}

__all__ = [
    "ClientIo",
    "FileSystem",
    "FileSystemInstance",
    "Layout",
    "MetadataSpec",
    "RateCap",
    "TargetAllocator",
    "segmented_stripe_bytes",
    "stripe_bytes",
]


def __getattr__(name: str) -> object:
    if name not in _LOADED_ON_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LOADED_ON_USE[name]}"), name)
