"""Properties of RAID write costs (hypothesis).

* no write costs less drive work than aligned full stripes (cost >= 1);
* the cost depends on the data offset only modulo the full stripe;
* without parity, or with requests of whole stripes on stripe boundaries, the cost is 1;
* a request never lands more bytes on one drive than its size or than a chunk.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simfs.hardware.hdd import HddSpec
from simfs.hardware.raid import RaidSet

DRIVE = HddSpec(100e6)
LEVELS = st.sampled_from(["raid5", "raid6"])
CHUNKS = st.sampled_from([4096, 65536, 131072, 262144])
REQUESTS = st.integers(min_value=512, max_value=8 << 20)
OFFSETS = st.integers(min_value=0, max_value=4 << 20)


@given(LEVELS, st.integers(min_value=3, max_value=16), CHUNKS, OFFSETS, REQUESTS)
def test_write_cost_is_at_least_full_stripe_and_periodic_in_the_offset(level, disks, chunk, offset, request):
    raid = RaidSet(level, disks, DRIVE, chunk_bytes=chunk, data_offset_bytes=offset)
    cost = raid.write_cost(request)
    assert cost >= 1.0
    shifted = RaidSet(level, disks, DRIVE, chunk_bytes=chunk, data_offset_bytes=offset + raid.full_stripe_bytes)
    assert shifted.write_cost(request) == pytest.approx(cost)
    assert raid.drive_request_bytes(request) <= min(request, chunk) + 1e-9


@given(LEVELS, st.integers(min_value=3, max_value=16), CHUNKS, st.integers(1, 8), st.integers(0, 8))
def test_aligned_whole_stripes_cost_nothing_extra(level, disks, chunk, stripes, offset_stripes):
    stripe = RaidSet(level, disks, DRIVE, chunk_bytes=chunk).full_stripe_bytes
    raid = RaidSet(level, disks, DRIVE, chunk_bytes=chunk, data_offset_bytes=offset_stripes * stripe)
    assert raid.write_cost(stripes * raid.full_stripe_bytes) == 1.0
    assert RaidSet("raid0", disks, DRIVE, chunk_bytes=chunk, data_offset_bytes=chunk // 2).write_cost(4096) == 1.0
