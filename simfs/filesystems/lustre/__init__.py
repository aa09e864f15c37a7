"""The Lustre model: MDS, OSS, OSTs, striping, client RPC window and dirty limit."""

from simfs.filesystems.lustre.instance import LustreInstance, RateCap
from simfs.filesystems.lustre.layout import Layout, OstAllocator, segmented_stripe_bytes, stripe_bytes
from simfs.filesystems.lustre.system import LustreSystem, LustreTunables, MdsSpec

__all__ = [
    "Layout",
    "LustreInstance",
    "LustreSystem",
    "LustreTunables",
    "MdsSpec",
    "OstAllocator",
    "RateCap",
    "segmented_stripe_bytes",
    "stripe_bytes",
]
