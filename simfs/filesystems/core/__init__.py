"""The file-system-neutral core: the parts every model is built of (clients, networks, a
metadata service, data servers, targets, controllers, client I/O settings, layouts), the
profile readers they share, and the run-time assembly of resources and paths."""

from simfs.filesystems.core.instance import FileSystemInstance, RateCap
from simfs.filesystems.core.layout import Layout, TargetAllocator, segmented_stripe_bytes, stripe_bytes
from simfs.filesystems.core.system import ClientIo, FileSystem, MetadataSpec

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
