"""Device models: links, switches, clients, servers, HDD, SSD, RAID sets, controllers."""

from simfs.hardware.client import ClientNode, ClientSpec
from simfs.hardware.controller import ControllerSpec
from simfs.hardware.hdd import HddSpec
from simfs.hardware.links import LINK_PRESETS, LinkSpec, nic_resources
from simfs.hardware.raid import PARITY_DISKS, RaidSet
from simfs.hardware.server import Server, ServerSpec
from simfs.hardware.shared_host import SharedHost
from simfs.hardware.ssd import SsdSpec
from simfs.hardware.switch import SwitchSpec

__all__ = [
    "LINK_PRESETS",
    "PARITY_DISKS",
    "ClientNode",
    "ClientSpec",
    "ControllerSpec",
    "HddSpec",
    "LinkSpec",
    "RaidSet",
    "Server",
    "ServerSpec",
    "SharedHost",
    "SsdSpec",
    "SwitchSpec",
    "nic_resources",
]
