"""The Lustre model: MDS, OSS, OSTs, striping, client RPC window and dirty limit."""

from simfs.filesystems.lustre.system import LustreSystem

__all__ = ["LustreSystem"]
