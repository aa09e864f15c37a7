"""The Lustre model: paths, caps and the dirty limit, against hand-computed values."""

import numpy as np
import pytest
import simpy

import simfs
from simfs.engine import FluidNetwork
from simfs.filesystems.core import FileSystemInstance, Layout


def instance(name="crtdc-lfs3", nodes=2, **overrides):
    system = simfs.load_system(name, overrides or None)
    return FileSystemInstance(system, FluidNetwork(simpy.Environment()), nodes, np.random.default_rng(0))


def test_write_path_of_a_four_stripe_file_on_lfs3():
    fs = instance()
    # OSTs 0,1 on OSS 0; 2,3 on OSS 1.  Controllers alternate: OST i on controller i % 2.
    layout = Layout((0, 1, 2, 3), 1 << 20)
    path = {entry[0].name: entry[1] for entry in fs.data_path(0, layout, np.full(4, 0.25), "write", copy=True)}
    assert path["client0.cpu"] == pytest.approx(1 / 1e9)
    assert path["client0.nic.tx"] == 1.0
    assert path["fabric.core"] == 1.0
    assert path["oss0.nic.rx"] == pytest.approx(0.5)
    assert path["oss1.nic.rx"] == pytest.approx(0.5)
    assert all(path[f"ost{i}"] == pytest.approx(0.25) for i in range(4))
    # Controller entries are summed by the network; here each appears twice with 0.25.
    assert "controller0" in path and "controller1" in path


def test_read_path_uses_the_other_directions():
    fs = instance("crtdc-lfs5")
    path = {entry[0].name: entry[1] for entry in fs.data_path(1, Layout((0,), 1 << 20), np.ones(1), "read", copy=True)}
    assert "client1.nic.rx" in path and "oss0.nic.tx" in path
    # An SSD read byte costs write_Bps / read_Bps of the OST: 680 / 1000.
    assert path["ost0"] == pytest.approx(0.68)


def test_direct_io_skips_the_copy_and_is_capped_by_latency():
    fs = instance()
    layout = Layout((0, 1, 2, 3), 1 << 20)
    share = np.full(4, 0.25)
    assert all(entry[0].kind != "client-cpu" for entry in fs.data_path(0, layout, share, "write", copy=False))
    cap = fs.rate_cap(layout, share, "write", direct=True, transfer_size_bytes=1 << 20)
    assert cap.reason == "direct-io-latency"
    # One request in flight: the round trip plus the request's transfer on its own path,
    # which for a write ends in the controller's write-back cache.
    system = fs.system
    assert system.controller is not None and system.controller.cache_bytes > 0
    alone = min(
        system.client.network.bandwidth_Bps,
        system.server.network.bandwidth_Bps,
        system.server.cpu_Bps,
        system.controller.bandwidth_Bps,
    )
    assert cap.rate_Bps == pytest.approx((1 << 20) / (1e-3 + (1 << 20) / alone))
    no_cache = instance(**{"mechanisms.controller_cache": False})
    read = no_cache.rate_cap(layout, share, "read", direct=True, transfer_size_bytes=1 << 20)
    alone = min(alone, system.target.bandwidth_Bps("read"))
    assert read.rate_Bps == pytest.approx((1 << 20) / (1e-3 + (1 << 20) / alone))


def test_buffered_cap_is_one_core_unless_the_rpc_window_is_smaller():
    fs = instance()
    layout = Layout((0, 1, 2, 3), 1 << 20)
    share = np.full(4, 0.25)
    assert fs.rate_cap(layout, share, "write", direct=False, transfer_size_bytes=1 << 20).reason == "client-core"
    slow = instance(**{"lustre.rpc_latency_s": 1.0})
    cap = slow.rate_cap(layout, share, "write", direct=False, transfer_size_bytes=1 << 20)
    # 4 OSCs x 8 RPCs x 1 MiB per second.
    assert cap.reason == "rpc-window" and cap.rate_Bps == pytest.approx(32 << 20)


def test_dirty_limit_is_per_osc_bounded_by_the_kernel_share():
    fs = instance()
    layout = Layout((0, 1, 2, 3), 1 << 20)
    share = np.full(4, 0.25)
    assert fs.dirty_limit_bytes(layout, share, ranks_on_node=1) == 4 * (32 << 20)
    tiny = instance(**{"client.memory_bytes": 100e6})
    # 0.4 x 100 MB / 2 ranks = 20 MB.
    assert tiny.dirty_limit_bytes(layout, share, ranks_on_node=2) == pytest.approx(20e6)


def test_an_overstriped_file_has_one_osc_per_target_not_per_object():
    # 8 objects on 4 OSTs (lfs setstripe -C 8): the client's windows and dirty limits are
    # per OSC, so the same as for 4 objects on the same 4 OSTs.
    fs = instance()
    plain, over = Layout((0, 1, 2, 3), 1 << 20), Layout((0, 1, 2, 3) * 2, 1 << 20)
    assert fs.dirty_limit_bytes(over, np.full(8, 0.125), ranks_on_node=1) == fs.dirty_limit_bytes(
        plain, np.full(4, 0.25), ranks_on_node=1
    )
    slow = instance(**{"lustre.rpc_latency_s": 1.0})
    cap = slow.rate_cap(over, np.full(8, 0.125), "write", direct=False, transfer_size_bytes=1 << 20)
    assert cap.reason == "rpc-window" and cap.rate_Bps == pytest.approx(32 << 20)
    # Objects the writer does not touch do not count: two objects, both on OST 0.
    half = np.array([0.5, 0, 0, 0, 0.5, 0, 0, 0])
    assert fs.dirty_limit_bytes(over, half, ranks_on_node=1) == 32 << 20


def test_per_oss_controllers_belong_to_their_server():
    system = simfs.load_system("crtdc-lfs5")
    # OSS 1 holds OSTs 4..7 on its own two HBAs, 2 and 3.
    assert [system.controller_of_target(o) for o in range(4, 8)] == [2, 3, 2, 3]


def test_too_many_nodes_is_named():
    with pytest.raises(ValueError, match="nodes"):
        instance(nodes=10_000)


def test_client_uplink_is_shared_by_every_client_and_absent_by_default():
    assert instance().uplink is None
    ior = "ior -a POSIX -F -w -e -t 1m -b 256m"
    # 32 clients on 1GbE (3.7 GB/s of client links) behind 1 GB/s of uplinks.
    narrow = {"client.network": "1gbe", "fabric.client_uplink_Bps": 1e9}
    result = simfs.simulate("crtdc-lfs3", ior, nodes=32, overrides=narrow)
    write = result.phases.set_index("phase").loc["write"]
    assert write["agg_bw_Bps"] <= 1e9 * 1.001
    assert write["agg_bw_Bps"] > 0.95e9
    assert write["bottleneck"] == "uplink"
    wide = simfs.simulate("crtdc-lfs3", ior, nodes=4, overrides={**narrow, "fabric.client_uplink_Bps": 1e12})
    assert wide.phases.set_index("phase").loc["write"]["bottleneck"] == "client-nic"
