"""Striping arithmetic and OST allocation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simfs.filesystems.core import layout as layout_module
from simfs.filesystems.core.layout import TargetAllocator, segmented_stripe_bytes, stripe_bytes


def brute_force(offset, length, stripe_size, stripe_count):
    result = np.zeros(stripe_count)
    for byte in range(offset, offset + length):
        result[(byte // stripe_size) % stripe_count] += 1
    return result


def test_stripe_bytes_hand_case():
    # Bytes 3..12 with 4-byte stripes over 3 objects: unit 0 holds byte 3 (1 B, object
    # 0), unit 1 bytes 4-7 (object 1), unit 2 bytes 8-11 (object 2), unit 3 byte 12 (object 0).
    assert list(stripe_bytes(3, 10, 4, 3)) == [2, 4, 4]


@given(
    offset=st.integers(0, 200),
    length=st.integers(0, 300),
    stripe_size=st.integers(1, 16),
    stripe_count=st.integers(1, 6),
)
def test_stripe_bytes_matches_brute_force(offset, length, stripe_size, stripe_count):
    assert np.array_equal(
        stripe_bytes(offset, length, stripe_size, stripe_count), brute_force(offset, length, stripe_size, stripe_count)
    )


@given(
    first=st.integers(0, 50),
    block=st.integers(1, 20),
    ranks=st.integers(1, 5),
    segments=st.integers(1, 40),
    stripe_size=st.integers(1, 8),
    stripe_count=st.integers(1, 5),
)
def test_segmented_matches_sum_of_segments(first, block, ranks, segments, stripe_size, stripe_count):
    stride = block * ranks
    expected = sum(stripe_bytes(first + k * stride, block, stripe_size, stripe_count) for k in range(segments))
    got = segmented_stripe_bytes(first, block, stride, segments, stripe_size, stripe_count)
    assert np.array_equal(got, expected)


@given(
    owner=st.integers(0, 9_999),
    ranks=st.integers(1, 10_000),
    block=st.sampled_from([47_008, 47_001, 1 << 20, 3_000_000]),
    segments=st.integers(1, 300),
    stripe_size=st.sampled_from([64 << 10, 1 << 20, 4 << 20, 16 << 20]),
    stripe_count=st.integers(1, 2_000),
    far=st.sampled_from([0, 1 << 44]),
)
def test_segmented_is_the_per_block_sum_bit_for_bit(owner, ranks, block, segments, stripe_size, stripe_count, far):
    # IO500 ior-hard sizes (47,008 B records over thousands of ranks), and offsets past
    # 16 TiB: the sums of whole bytes are exact, so the answer must be the per-block one's.
    first, stride = far + (owner % ranks) * block, block * ranks
    expected = np.zeros(stripe_count)
    for k in range(segments):
        expected += stripe_bytes(first + k * stride, block, stripe_size, stripe_count)
    got = segmented_stripe_bytes(first, block, stride, segments, stripe_size, stripe_count)
    assert np.array_equal(got, expected)


def test_segmented_in_chunks_is_the_same(monkeypatch):
    # A period longer than one chunk of offsets held in memory is summed chunk by chunk.
    arguments = (5 * 47_008, 47_008, 47_008 * 1_000, 5_000, 1 << 20, 64)
    whole = segmented_stripe_bytes(*arguments)
    monkeypatch.setattr(layout_module, "_STRIDED_CHUNK", 7)
    assert np.array_equal(segmented_stripe_bytes(*arguments), whole)
    assert whole.sum() == 5_000 * 47_008


def test_round_robin_interleaves_oss_and_advances_by_stripe_count():
    # 3 OSS x 2 OSTs (OST 0,1 on OSS 0; 2,3 on OSS 1; 4,5 on OSS 2): RR order 0,2,4,1,3,5.
    allocator = TargetAllocator([0, 0, 1, 1, 2, 2], -1, np.random.default_rng(0))
    start = allocator._next
    order = [0, 2, 4, 1, 3, 5]
    first = allocator.allocate(2, 1 << 20).targets
    second = allocator.allocate(2, 1 << 20).targets
    assert first == (order[start], order[(start + 1) % 6])
    assert second == (order[(start + 2) % 6], order[(start + 3) % 6])


def test_fixed_offset_puts_every_file_on_the_same_osts():
    allocator = TargetAllocator([0, 0, 1, 1], 1, np.random.default_rng(0))
    assert allocator.allocate(2, 1 << 20).targets == (1, 2)
    assert allocator.allocate(2, 1 << 20).targets == (1, 2)


def test_overstriping_goes_round_the_targets_again():
    # lfs setstripe -C 8 over 2 OSS x 2 OSTs (RR order 0,2,1,3): each OST holds two of
    # the file's objects; the next file starts one further on, as after a full-width file.
    allocator = TargetAllocator([0, 0, 1, 1], -1, np.random.default_rng(0))
    start = allocator._next
    order = [0, 2, 1, 3]
    first = allocator.allocate(8, 1 << 20, overstriping=True).targets
    assert first == tuple(order[(start + k) % 4] for k in range(8))
    assert allocator._next == (start + 1) % 4
    with pytest.raises(ValueError, match=r"stripe_count: expected 1..4"):
        allocator.allocate(8, 1 << 20)


def test_random_start_depends_on_seed_only():
    starts = {TargetAllocator(list(range(16)), -1, np.random.default_rng(seed))._next for seed in range(20)}
    assert len(starts) > 1
    assert (
        TargetAllocator(list(range(16)), -1, np.random.default_rng(7))._next
        == TargetAllocator(list(range(16)), -1, np.random.default_rng(7))._next
    )


def test_stripe_count_minus_one_means_all():
    allocator = TargetAllocator([0, 1, 2, 3], -1, np.random.default_rng(0))
    assert sorted(allocator.allocate(-1, 1 << 20).targets) == [0, 1, 2, 3]


def test_bad_stripe_count_is_named():
    allocator = TargetAllocator([0, 1], -1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="stripe_count"):
        allocator.allocate(3, 1 << 20)


def test_a_hashed_draw_is_uniform_over_the_usable_targets_only():
    # GlusterFS's DHT: each file on a target drawn alone, never on an excluded one.
    allocator = TargetAllocator([0, 0, 1, 1, 2, 2], -1, np.random.default_rng(5), excluded=(3,))
    drawn = [allocator.draw(65536).targets for _ in range(3000)]
    assert all(len(targets) == 1 for targets in drawn)
    counts = np.bincount([targets[0] for targets in drawn], minlength=6)
    assert counts[3] == 0
    # Five usable targets, 600 draws each expected: within 4 standard deviations (~22).
    assert all(abs(count - 600) < 88 for i, count in enumerate(counts) if i != 3)
