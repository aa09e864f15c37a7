"""TCP loss recovery in a fan-in (``simfs.hardware.loss_recovery``): what cannot lose
nothing loses nothing, hand-computed timelines, the ways Linux recovers, and the
direction of every knob."""

import math

import pytest

from simfs.hardware.loss_recovery import FRAME_BYTES, MSS_BYTES, fan_in_goodput_factor, play_fan_in

#: 100 Mbit/s of 1514-byte frames carrying 1448 B of TCP payload each (the testbed's link).
LINK_Bps = 12.5e6 * MSS_BYTES / FRAME_BYTES
FRAME_S = MSS_BYTES / LINK_Bps


def test_a_lone_sender_at_the_port_rate_never_overflows_it():
    # Room for one frame waiting: a store-and-forward port holds a short frame that
    # arrives while the full one before it is still going out.
    outcome = play_fan_in(1, 1 << 20, LINK_Bps, FRAME_BYTES, 0.2, rounds=5)
    assert outcome.drops_per_round == 0 and outcome.goodput_factor == 1.0
    assert fan_in_goodput_factor(1, 65536, LINK_Bps, 0, 0.2) == 1.0


def test_bursts_that_fit_the_buffer_lose_nothing_and_move_at_the_link_rate():
    # 6 senders x 8 segments = 48 frames, under the 86 frames of 128 KiB.
    outcome = play_fan_in(6, 8 * MSS_BYTES, LINK_Bps, 131072, 0.2, rounds=50)
    assert outcome.drops_per_round == 0 and outcome.rtos_per_round == 0
    assert outcome.goodput_factor == 1.0
    # A round is its 48 frames back to back through the port, plus at most the senders'
    # start offsets (a frame time each) and a round trip.
    wire_s = 48 * FRAME_S
    assert wire_s <= outcome.lossless_round_s <= wire_s + 7 * FRAME_S + 1e-4


def test_a_lone_lost_segment_before_any_round_trip_waits_the_initial_rto():
    # Two one-segment answers into a port with no queue: the second arrives while the
    # first is on the wire and is dropped.  Its sender has no RTT sample, so no
    # tail-loss probe; it resends after TCP_TIMEOUT_INIT, 1 s (RFC 6298 section 2.1).
    # Whether it is dropped depends on which request a stream lets arrive first: over the
    # streams played, every drop is one RTO of 1 s and nothing else.
    outcome = play_fan_in(2, MSS_BYTES, LINK_Bps, 0, 0.2, rounds=1)
    assert outcome.drops_per_round == outcome.rtos_per_round > 0
    assert outcome.tail_loss_probes_per_round == 0
    assert outcome.round_s == pytest.approx(1.0 * outcome.rtos_per_round, abs=2e-3)


def test_a_lost_tail_is_recovered_by_a_probe_once_rtts_are_known():
    # Later rounds of the same two senders: the dropped frame is each round's last
    # segment, alone in flight, so Linux's probe waits 2 SRTT + RTO_min, clamped to the
    # RTO: a probe, but a timeout's worth of waiting (about 200 ms a drop).
    lone = play_fan_in(2, MSS_BYTES, LINK_Bps, 0, 0.2, rounds=4)
    assert lone.drops_per_round > 0 and lone.rtos_per_round == 0
    assert lone.tail_loss_probes_per_round == lone.drops_per_round
    assert lone.round_s == pytest.approx(0.2 * lone.drops_per_round, rel=0.05)
    # With many segments out, the probe fires after 2 SRTT + 2 ms: 6 senders of 8
    # segments through a 16 KiB queue recover mostly by fast retransmits and probes.
    many = play_fan_in(6, 8 * MSS_BYTES, LINK_Bps, 16384, 0.2, rounds=200)
    assert many.drops_per_round > 1
    assert many.tail_loss_probes_per_round > many.rtos_per_round


def test_loss_costs_more_with_more_senders_and_less_with_more_buffer():
    per_sender = 16 * MSS_BYTES
    two = fan_in_goodput_factor(2, per_sender, LINK_Bps, 16384, 0.2)
    eight = fan_in_goodput_factor(8, per_sender, LINK_Bps, 16384, 0.2)
    assert eight < two
    deep = fan_in_goodput_factor(8, per_sender, LINK_Bps, 1 << 20, 0.2)
    assert deep == 1.0 and deep > eight


def test_a_shorter_minimum_rto_shortens_the_stalls():
    slow = play_fan_in(8, 16 * MSS_BYTES, LINK_Bps, 16384, 0.2, rounds=200)
    fast = play_fan_in(8, 16 * MSS_BYTES, LINK_Bps, 16384, 0.001, rounds=200)
    assert slow.rtos_per_round > 0
    assert fast.goodput_factor > slow.goodput_factor


def test_the_play_is_deterministic_and_the_seed_only_moves_the_arbitration():
    first = play_fan_in(6, 10923, LINK_Bps, 16384, 0.2, rounds=100)
    again = play_fan_in(6, 10923, LINK_Bps, 16384, 0.2, rounds=100)
    assert first == again
    other = play_fan_in(6, 10923, LINK_Bps, 16384, 0.2, rounds=100, seed=7)
    # Another seed plays other arbitrations (which sender's frame reaches the port first),
    # so the losses and their recoveries differ; the lossless rounds are the same wire.
    assert (other.drops_per_round, other.tail_loss_probes_per_round, other.round_s) != (
        first.drops_per_round,
        first.tail_loss_probes_per_round,
        first.round_s,
    )
    assert other.lossless_round_s == pytest.approx(first.lossless_round_s, rel=0.05)


def test_the_port_counts_bytes_so_a_short_last_frame_fits_where_a_full_one_would_not():
    from simfs.hardware.loss_recovery import _FanIn

    # tbf and bfifo admit a frame while backlog + frame <= limit: with ten full frames
    # waiting behind the one on the wire, 16 KiB has room for 870 bytes more.
    port = _FanIn(2, LINK_Bps, 16384, 0.2, 0.0, 64, seed=0)
    port.play(12, 900, rounds=0)
    for seq in range(11):
        port.arrive_at_port(0.0, 0, seq, 0.0)
    assert port.drops == 0 and port.port_backlog == 10 * FRAME_BYTES
    port.arrive_at_port(0.0, 1, 10, 0.0)  # a full frame of the other sender: dropped
    assert port.drops == 1
    port.senders[1].segments = 12
    port.arrive_at_port(0.0, 1, 11, 0.0)  # its short last frame (900 B + headers): taken
    assert port.drops == 1 and port.port_backlog == 10 * FRAME_BYTES + 900 + FRAME_BYTES - MSS_BYTES


@pytest.mark.parametrize(
    ("senders", "per_sender", "link", "buffer", "rto"),
    [(0, 1, 1, 1, 0.2), (2, 0, 1, 1, 0.2), (2, 1, 0, 1, 0.2), (2, 1, 1, -1, 0.2), (2, 1, 1, 1, -0.1)],
)
def test_bad_arguments_are_refused(senders, per_sender, link, buffer, rto):
    with pytest.raises(ValueError, match="fan-in"):
        play_fan_in(senders, per_sender, link, buffer, rto)


@pytest.mark.slow  # plays thousands of rounds: 14 s
def test_rounds_played_scale_with_the_segments_of_a_round():
    short = play_fan_in(2, MSS_BYTES, LINK_Bps, 1 << 20, 0.2)
    long = play_fan_in(2, 1 << 20, LINK_Bps, 1 << 20, 0.2)
    assert short.rounds > long.rounds >= 4 * 4  # at least 4 rounds from each of 4 streams
    assert math.isfinite(long.round_s)
