"""The PanFS model: per-file RAID, blade incast, blade failure, against hand values."""

import numpy as np
import pytest
import simpy

import simfs
from simfs.engine import FluidNetwork
from simfs.errors import ProfileError
from simfs.filesystems import PanfsSystem
from simfs.filesystems.core import FileSystemInstance
from simfs.hardware.loss_recovery import fan_in_goodput_factor
from tests.unit.phases import phase

DD = "dd bs=1024000 count=50000"


def test_panfs_profile_assembles_shelves_and_blades():
    system = simfs.load_system("crtdc-panfs")
    assert isinstance(system, PanfsSystem)
    assert (system.server_count, system.targets_per_server, system.target_count) == (7, 10, 70)
    # 9 data + 1 parity: the client sends 10/9 bytes per byte written.
    assert system.write_redundancy == pytest.approx(10 / 9)
    text = system.describe()
    assert "StorageBlades: 70" in text and "DirectorBlade" in text


def test_client_sends_parity_so_one_writer_gets_the_link_over_the_redundancy():
    # Without the page cache's write-behind, dd sees the network's pace.
    no_cache = {"mechanisms.dirty_limit": False}
    result = simfs.simulate("crtdc-panfs", DD, nodes=1, overrides=no_cache)
    link = simfs.load_system("crtdc-panfs").client.network.bandwidth_Bps
    assert phase(result, "write")["agg_bw_Bps"] == pytest.approx(link * 9 / 10, rel=0.01)
    assert phase(result, "read")["agg_bw_Bps"] == pytest.approx(link, rel=0.01)
    assert phase(result, "write")["bottleneck"] == "client-nic"
    mirrored = simfs.simulate("crtdc-panfs", DD, nodes=1, overrides={**no_cache, "panfs.raid_width": 2})
    assert phase(mirrored, "write")["agg_bw_Bps"] == pytest.approx(link / 2, rel=0.01)


def test_incast_senders_are_the_data_blades_of_one_parity_stripe():
    system = simfs.load_system("crtdc-panfs")
    assert system.incast_senders(list(range(70))) == 9
    assert system.incast_senders([3, 4]) == 2
    lustre = simfs.load_system("crtdc-lfs3")
    assert lustre.incast_senders([0, 1, 2, 3]) == 2  # two OSS answer for four OSTs


def test_shallow_switch_buffers_collapse_a_single_reader_and_the_switch_restores_it():
    shallow = {"fabric.port_buffer_bytes": 32768}
    result = simfs.simulate("crtdc-panfs", DD, nodes=1, overrides=shallow)
    link = 1.17e8
    # Nine blades answer each 64 KB stripe unit at once into a port of 21 frames.
    factor = fan_in_goodput_factor(9, 65536, link, 32768, 0.2, 50e-6, 65536)
    assert factor < 0.5
    assert phase(result, "read")["agg_bw_Bps"] == pytest.approx(link * factor, rel=0.02)
    off = simfs.simulate("crtdc-panfs", DD, nodes=1, overrides={**shallow, "mechanisms.tcp_incast": False})
    assert phase(off, "read")["agg_bw_Bps"] == pytest.approx(link, rel=0.01)


def test_a_failed_blade_gets_no_new_files_and_a_rebuild_costs_every_other_blade():
    system = simfs.load_system("crtdc-panfs", {"panfs.failed_blades": [5]})
    instance = FileSystemInstance(system, FluidNetwork(simpy.Environment()), 4, np.random.default_rng(1))
    layouts = [instance.allocate(system.io.stripe_count, 65536) for _ in range(20)]
    # Files a GiB per RAID group: each file on whole groups of ten cut from the 69 live
    # blades, the allocator's start moving so that the files cover all of them.
    assert all(5 not in layout.targets and len(layout.targets) == 60 for layout in layouts)
    assert set().union(*(layout.targets for layout in layouts)) == set(range(70)) - {5}
    healthy = phase(simfs.simulate("crtdc-panfs", DD, nodes=64), "write")["agg_bw_Bps"]
    rebuilding = phase(
        simfs.simulate("crtdc-panfs", DD, nodes=64, overrides={"panfs.failed_blades": [5], "panfs.rebuilding": True}),
        "write",
    )["agg_bw_Bps"]
    # Blade-bound at 64 nodes. Healthy: 64 files each over all 70 blades (seven whole
    # groups), 64 files on every blade. Rebuilding: each file over 60 of the 69 live blades
    # at 70% speed, the most loaded blade setting every file's pace.
    files_per_blade = np.zeros(70)
    for _ in range(64):
        files_per_blade[list(instance.allocate(system.io.stripe_count, 65536).targets)] += 1
    expected = (0.7 * 60 / files_per_blade.max()) / (70 / 64)
    assert expected < 0.7 * 69 / 70  # the uneven cover costs more than the lost blade
    assert rebuilding / healthy == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"panfs.failed_blades": [70]}, "panfs.failed_blades"),
        ({"panfs.failed_blades": "all"}, "panfs.failed_blades"),
        ({"panfs.raid_width": 1}, "panfs.raid_width"),
        ({"panfs.stripe_unit_bytes": 100000}, "panfs.stripe_unit_bytes"),
        ({"blade.drive": "ssd"}, "blade.drive"),
    ],
)
def test_bad_panfs_fields_are_named(overrides, message):
    with pytest.raises(ProfileError, match=message):
        simfs.load_system("crtdc-panfs", overrides)
