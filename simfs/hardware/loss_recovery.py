"""TCP loss recovery in a fan-in: many servers answering one client at once over Ethernet.

A client reading from ``N`` servers at once (a striped or dispersed file) asks each for
its part of a round and waits for all of them.  The servers answer together into the one
switch port that leads to the client; when their bursts outsize the port's buffer, packets
are dropped (TCP incast: Phanishayee et al., FAST 2008; Chen et al., WREN 2009).  What a
drop costs depends on how the sender finds out, and Linux has three ways:

* **fast recovery** (RFC 6675 SACK, RACK-TLP RFC 8985): a later segment of the same flow
  arrives, its SACK shows the hole, and the sender resends it about one round trip later;
* **tail-loss probe** (TLP, RFC 8985 section 7): the flow's *last* segments were lost, so
  nothing later arrives to reveal them; after a probe timeout (PTO: twice the smoothed
  round trip plus 2 ms, or plus ``RTO_min`` when one segment is out; Linux
  ``tcp_schedule_loss_probe``) the sender resends its last segment, whose SACK reveals the
  rest;
* **retransmission timeout** (RTO, RFC 6298): the probe or a resent segment is lost too;
  the sender waits ``srtt + max(4 rttvar, RTO_min)`` (``RTO_min`` 200 ms on Linux:
  ``TCP_RTO_MIN``), doubling on every further timeout, and starts again from a window of
  one segment.

A closed form that charges a full ``RTO_min`` per overflowing round (this module's
predecessor) predicts collapse wherever bursts outsize the buffer; Linux recovers most
losses by the first two in milliseconds, so the fall is far smaller and comes later
(issue 18's testbed: a 4-brick GlusterFS volume read in 1 MiB requests through a 16 KiB
port lost 24%, where the closed form gave 80%).  This module therefore plays the rounds
out, segment by segment, as the senders' TCP would:

* each sender has ``ceil(bytes / MSS)`` segments per round and a congestion window kept
  from round to round (CUBIC's multiplicative decrease ``beta = 0.7`` on loss; slow start
  below ``ssthresh``, one segment per window above it; back to ``min(cwnd,
  initial window)`` after an idle longer than its RTO, Linux ``tcp_slow_start_after_idle``),
  capped at ``window_cap_bytes``;
* the requests reach the senders a frame-time apart, with a random fraction of a frame
  time more each (which of two packets arriving together a switch takes is arbitrary);
  each sender's link and the client's port move one frame per ``MSS / rate``;
* the port is a FIFO of ``floor(buffer / frame)`` frames plus the one on the wire, and a
  frame arriving when it is full is dropped (tail drop, as ``tbf`` and shallow switch
  buffers do);
* the client acknowledges every second segment, data out of order or filling a hole at
  once, and a lone last segment with its next request (delayed ACKs; 40 ms at most); a
  segment is deemed lost (RACK) when one sent after it is acknowledged and its reordering
  window has passed; lost segments are resent first, within the window, at the pace of
  returning ACKs in recovery (PRR); after an RTO no probe and no second cut of the window
  until what was out is acknowledged (Linux's Loss state);
* a round ends when the client holds every segment of every sender; the next begins.

The goodput factor of a configuration is the time of its rounds through an unbounded
buffer over their time through the real one: what loss recovery costs beyond what the
windows and links cost anyway (those are the fluid model's; ``instance.py``).  It is the
steady state: the rounds in which the windows first grow (a tenth of those played) are
not counted, and the rounds are played from ``SEEDS`` random streams and summed, because
the rare timeouts that set a collapsed rate vary from one stream to the next by as much
as a validation case's tolerance.
The counts of drops, tail-loss probes and RTOs per round are kept
(:class:`FanInOutcome`), so a prediction can be checked against the counters a live run
records (``simfs testbed run`` records them: ``testbed.tcp``, ``switch_port_drops``).

Not modelled: quick-ack mode (Linux ACKs every segment for a while after a connection
starts or loss), the client's own traffic on the port, pacing, ECN, undo of spurious
window cuts, and loss on the way back (ACKs are small and the reverse port is empty).
InfiniBand RDMA and Fibre Channel are credit-based and never drop: the factor is 1 for
them (``instance.py`` asks only for TCP links).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: TCP payload of one full Ethernet frame with timestamps (1500 - 20 IP - 32 TCP).
MSS_BYTES = 1448
#: The frame on the wire and in a switch's buffer: MSS + headers + 14 B Ethernet.
FRAME_BYTES = 1514
#: Linux's initial congestion window (RFC 6928), segments.
INITIAL_WINDOW = 10
#: CUBIC's multiplicative decrease (Linux ``tcp_cubic`` beta = 717/1024).
BETA = 0.7
#: The longest a receiver holds an ACK back (Linux ``TCP_DELACK_MIN``).
DELAYED_ACK_S = 0.04
#: CUBIC's Reno-friendly window growth per round trip, 3 (1 - beta) / (1 + beta).
FRIENDLY_GROWTH = 3 * (1 - BETA) / (1 + BETA)
#: The extra PTO when more than one segment is out (Linux ``TCP_TIMEOUT_MIN_US``).
TLP_EXTRA_S = 0.002
#: Segments played per random stream, and the rounds that makes (at least 4, at most
#: 400): a tenth more are played first and not counted, for the windows to settle.
_SEGMENTS_PLAYED = 20_000
_MIN_ROUNDS, _MAX_ROUNDS = 4, 400
#: Random streams averaged: the rare timeouts that set a collapsed rate vary from one
#: stream to another by as much as a case's tolerance.
SEEDS = 4


@dataclass(frozen=True)
class FanInOutcome:
    """What ``rounds`` synchronized rounds cost: mean round time through the real buffer
    and through an unbounded one, and the losses and recoveries per round."""

    rounds: int
    round_s: float
    lossless_round_s: float
    drops_per_round: float
    tail_loss_probes_per_round: float
    rtos_per_round: float

    @property
    def goodput_factor(self) -> float:
        """Fraction of the lossless rate the port delivers (1: loss costs nothing)."""
        return min(1.0, self.lossless_round_s / self.round_s)


class _Sender:
    """One server's TCP state across rounds (and, for its round, what the client holds)."""

    def __init__(self, window_cap: int) -> None:
        self.cwnd = float(min(INITIAL_WINDOW, window_cap))
        self.ssthresh = float(window_cap)
        self.srtt = 0.0
        self.rttvar = 0.0
        self.min_rtt = math.inf
        self.idle_since = 0.0
        self.backoff = 1
        self.wire_free = 0.0
        self.last_arrival = -math.inf
        self.timer_epoch = 0
        self.held_acks: list[tuple[int, float]] = []
        self.delack_epoch = 0
        self.start_round(0)

    def start_round(self, segments: int) -> None:
        self.segments = segments
        self.next_new = 0
        #: The sender's view: cumulatively acknowledged, selectively acknowledged, lost.
        self.una = 0
        self.sacked: set[int] = set()
        self.lost: set[int] = set()
        self.sent_at: dict[int, float] = {}
        self.highest_sent = -1
        #: RACK: send time and round trip of the most recently sent segment delivered.
        self.rack_sent = -math.inf
        self.rack_rtt = 0.0
        self.in_recovery = False
        self.recovery_point = -1
        #: After an RTO (Linux's Loss state) until what was out then is acknowledged.
        self.in_loss = False
        self.loss_point = -1
        self.prr_delivered = self.prr_out = 0
        self.max_flight = 0
        self.recover_flight = 1
        self.tlp_out = False
        self.reo_epoch = 0
        #: The client's view: segments it holds, all of them below ``received_through``,
        #: and the ACKs it holds back (delayed ACKs).
        self.received: set[int] = set()
        self.received_through = 0
        self.highest_received = -1

    def rto(self, rto_min_s: float) -> float:
        base = self.srtt + max(4 * self.rttvar, rto_min_s) if self.srtt else 1.0
        return base * self.backoff

    def outstanding(self) -> list[int]:
        return [seq for seq in range(self.una, self.next_new) if seq not in self.sacked]

    def outstanding_count(self) -> int:
        # ``sacked`` and ``lost`` hold only sequence numbers in [una, next_new), apart.
        return self.next_new - self.una - len(self.sacked)

    def pipe(self) -> int:
        """Segments in flight (RFC 6675): sent, not acknowledged, not deemed lost."""
        return self.next_new - self.una - len(self.sacked) - len(self.lost)

    def reorder_window(self) -> float:
        """RACK's reordering window (Linux ``tcp_rack_reo_wnd``): none in recovery or
        once three segments beyond a hole are acknowledged; else a quarter of the
        minimum round trip, at most the smoothed one."""
        if self.in_recovery or len(self.sacked) >= 3 or not math.isfinite(self.min_rtt):
            return 0.0
        return min(self.min_rtt / 4, self.srtt)


def play_fan_in(
    senders: int,
    bytes_per_sender: float,
    link_Bps: float,
    port_buffer_bytes: float,
    rto_min_s: float,
    *,
    latency_s: float = 0.0,
    window_cap_bytes: float = 4 << 20,
    rounds: int | None = None,
    seed: int = 0,
    seeds: int = SEEDS,
) -> FanInOutcome:
    """Play ``rounds`` rounds of ``senders`` servers each answering ``bytes_per_sender``
    into one port of ``port_buffer_bytes`` draining at ``link_Bps`` (payload bytes/s),
    and the same rounds through an unbounded buffer, after warm-up rounds that are not
    counted, once for each of ``seeds`` random streams (see the module docstring)."""
    if senders < 1 or bytes_per_sender <= 0 or link_Bps <= 0 or port_buffer_bytes < 0 or rto_min_s < 0:
        raise ValueError(
            "fan-in: senders and bytes per sender must be positive, the link rate positive, "
            "the buffer and minimum RTO non-negative"
        )
    segments = max(1, math.ceil(bytes_per_sender / MSS_BYTES))
    last_bytes = bytes_per_sender - (segments - 1) * MSS_BYTES
    if rounds is None:
        rounds = int(min(_MAX_ROUNDS, max(_MIN_ROUNDS, _SEGMENTS_PLAYED // (segments * senders))))
    warm_up = max(2, rounds // 10) if rounds > 1 else 0
    window_cap = max(2, int(window_cap_bytes // MSS_BYTES))
    shape = (segments, last_bytes, link_Bps)
    lossy = np.zeros(4)
    lossless = np.zeros(4)
    for stream in range(seed, seed + seeds):
        timing = (rto_min_s, latency_s, window_cap, rounds, warm_up, stream)
        lossy += _play(senders, *shape, port_buffer_bytes, *timing)
        lossless += _play(senders, *shape, math.inf, *timing)
    played = rounds * seeds
    return FanInOutcome(
        rounds=played,
        round_s=float(lossy[0]) / played,
        lossless_round_s=float(lossless[0]) / played,
        drops_per_round=float(lossy[1]) / played,
        tail_loss_probes_per_round=float(lossy[2]) / played,
        rtos_per_round=float(lossy[3]) / played,
    )


@lru_cache(maxsize=256)
def fan_in_goodput_factor(
    senders: int,
    bytes_per_sender: float,
    link_Bps: float,
    port_buffer_bytes: float,
    rto_min_s: float,
    latency_s: float = 0.0,
    window_cap_bytes: float = 4 << 20,
) -> float:
    """Fraction of the client link's rate a synchronized read from ``senders`` keeps
    (1 for a single sender: nothing fans in)."""
    if senders <= 1:
        return 1.0
    return play_fan_in(
        senders,
        bytes_per_sender,
        link_Bps,
        port_buffer_bytes,
        rto_min_s,
        latency_s=latency_s,
        window_cap_bytes=window_cap_bytes,
    ).goodput_factor


def _play(
    sender_count: int,
    segments: int,
    last_bytes: float,
    link_Bps: float,
    buffer_bytes: float,
    rto_min_s: float,
    latency_s: float,
    window_cap: int,
    rounds: int,
    warm_up: int,
    seed: int,
) -> tuple[float, int, int, int]:
    """(total time, drops, tail-loss probes, RTOs) of ``rounds`` rounds after ``warm_up``."""
    fan_in = _FanIn(sender_count, link_Bps, buffer_bytes, rto_min_s, latency_s, window_cap, seed)
    return fan_in.play(segments, last_bytes, rounds, warm_up)


class _FanIn:
    """The event loop of :func:`play_fan_in`: senders, one port, the client."""

    def __init__(
        self,
        sender_count: int,
        link_Bps: float,
        buffer_bytes: float,
        rto_min_s: float,
        latency_s: float,
        window_cap: int,
        seed: int,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.frame_s = MSS_BYTES / link_Bps
        self.buffer_bytes = buffer_bytes
        self.rto_min_s = rto_min_s
        self.latency_s = latency_s
        self.window_cap = window_cap
        self.senders = [_Sender(window_cap) for _ in range(sender_count)]
        self.events: list[tuple[float, int, str, int, int, float]] = []
        self.counter = 0
        self.drops = self.probes = self.timeouts = 0
        #: (departure time, frame bytes) of the frames queued or on the wire, and the
        #: bytes waiting (all but the one on the wire), as a byte-limited FIFO counts them.
        self.port_frames: deque[tuple[float, int]] = deque()
        self.port_backlog = 0
        self.port_last = 0.0
        self.last_frame = FRAME_BYTES

    def push(self, time: float, kind: str, index: int, value: int = 0, extra: float = 0.0) -> None:
        self.counter += 1
        heapq.heappush(self.events, (time, self.counter, kind, index, value, extra))

    def play(self, segments: int, last_bytes: float, rounds: int, warm_up: int = 0) -> tuple[float, int, int, int]:
        """(time, drops, probes, RTOs) of ``rounds`` rounds after ``warm_up`` rounds."""
        totals = self._play_rounds(segments, last_bytes, warm_up)
        after = self._play_rounds(segments, last_bytes, rounds, start=totals[0])
        return tuple(b - a for a, b in zip(totals, after))  # type: ignore[return-value]

    def _play_rounds(
        self, segments: int, last_bytes: float, rounds: int, start: float = 0.0
    ) -> tuple[float, int, int, int]:
        # A round's last segment carries what is left: a small frame, which a byte-limited
        # queue (tbf, bfifo) may still take when it has no room for a full one.
        self.last_frame = int(math.ceil(last_bytes)) + FRAME_BYTES - MSS_BYTES
        clock = start
        initial = float(min(INITIAL_WINDOW, self.window_cap))
        for _ in range(rounds):
            offsets = self.rng.random(len(self.senders))
            for index, sender in enumerate(self.senders):
                sender.start_round(segments)
                arrive = clock + self.latency_s + (index + offsets[index]) * self.frame_s
                if arrive - sender.idle_since > sender.rto(self.rto_min_s):
                    sender.cwnd = min(sender.cwnd, initial)  # tcp_slow_start_after_idle
                self.push(arrive, "request", index)
            clock = self.run_round(segments)
            # ACKs the client still holds go out with its next requests.
            for index, sender in enumerate(self.senders):
                held, sender.held_acks = sender.held_acks, []
                sender.delack_epoch += 1
                for seq, sent in held:
                    self.on_ack(clock + 2 * self.latency_s, index, seq, sent)
        return clock, self.drops, self.probes, self.timeouts

    def run_round(self, segments: int) -> float:
        """Play events until the client holds every segment; return that time.  What is
        still in flight then (late ACKs, duplicates) lands before the next requests."""
        waiting = len(self.senders)
        end = 0.0
        while self.events:
            now, _, kind, index, value, extra = heapq.heappop(self.events)
            sender = self.senders[index]
            if not waiting and kind in ("request", "tlp", "rto", "reo", "delack"):
                continue  # timers of finished flows
            if kind == "request":
                self.flush_acks(now, index)  # the request carries the held ACK
                self.send(now, index)
            elif kind == "delack":
                if value == sender.delack_epoch:
                    self.flush_acks(now, index)
            elif kind == "port":
                self.arrive_at_port(now, index, value, extra)
            elif kind == "deliver":
                if value in sender.received:
                    continue  # the original and its resend both arrived
                self.receive(now, index, value, extra)
                if len(sender.received) == segments:
                    waiting -= 1
                    end = max(end, now)
            elif kind == "ack":
                self.on_ack(now, index, value, extra)
            elif kind == "tlp":
                self.on_probe_timeout(now, index, value)
            elif kind == "rto":
                self.on_retransmission_timeout(now, index, value)
            elif kind == "reo":
                if value == sender.reo_epoch:
                    self.detect_loss(now, index)
                    self.send(now, index)
        return end

    # -- the port -----------------------------------------------------------------------
    def frame_bytes(self, index: int, seq: int) -> int:
        return self.last_frame if seq == self.senders[index].segments - 1 else FRAME_BYTES

    def arrive_at_port(self, now: float, index: int, seq: int, sent: float) -> None:
        frames = self.port_frames
        while frames and frames[0][0] <= now:
            frames.popleft()
            if frames:
                self.port_backlog -= frames[0][1]  # the next frame goes on the wire
        size = self.frame_bytes(index, seq)
        if frames and self.port_backlog + size > self.buffer_bytes:
            self.drops += 1
            return
        self.port_last = max(now, self.port_last) + self.frame_s * size / FRAME_BYTES
        if frames:
            self.port_backlog += size
        frames.append((self.port_last, size))
        self.push(self.port_last + self.latency_s, "deliver", index, seq, sent)

    # -- the client -----------------------------------------------------------------------
    def receive(self, now: float, index: int, seq: int, sent: float) -> None:
        """The client's ACK policy (Linux ``__tcp_ack_snd_check``): data out of order, or
        filling a hole, is acknowledged at once; in-order data every second segment; a
        lone in-order segment waits for the next one, the delayed-ACK timer
        (``TCP_DELACK_MIN``, 40 ms) or the next request, which carries the ACK."""
        sender = self.senders[index]
        in_order = seq == sender.received_through
        filled_hole = in_order and sender.highest_received > seq
        sender.received.add(seq)
        sender.highest_received = max(sender.highest_received, seq)
        while sender.received_through in sender.received:
            sender.received_through += 1
        sender.held_acks.append((seq, sent))
        if not in_order or filled_hole or len(sender.held_acks) >= 2:
            self.flush_acks(now, index)
        else:
            sender.delack_epoch += 1
            self.push(now + DELAYED_ACK_S, "delack", index, sender.delack_epoch)

    def flush_acks(self, now: float, index: int) -> None:
        sender = self.senders[index]
        for seq, sent in sender.held_acks:
            self.push(now + self.latency_s, "ack", index, seq, sent)
        sender.held_acks.clear()
        sender.delack_epoch += 1

    # -- a sender -------------------------------------------------------------------------
    def transmit(self, now: float, index: int, seq: int) -> None:
        sender = self.senders[index]
        start = max(now, sender.wire_free)
        wire_s = self.frame_s * self.frame_bytes(index, seq) / FRAME_BYTES
        sender.wire_free = start + wire_s
        sender.sent_at[seq] = start
        sender.highest_sent = max(sender.highest_sent, seq)
        # Which of two frames arriving within one frame time a switch takes first is a
        # matter of nanoseconds no sender controls: each frame is late by a random part
        # of a frame time (without it, one flow paced at the port's rate keeps a full
        # buffer to itself and locks the others out, a phase effect no real port shows).
        # A sender's own frames stay a frame time apart: its link serialises them.
        jitter = self.rng.random() * self.frame_s
        arrive = max(start + wire_s + self.latency_s + jitter, sender.last_arrival + wire_s)
        sender.last_arrival = arrive
        self.push(arrive, "port", index, seq, start)

    def send(self, now: float, index: int, budget: float = math.inf) -> None:
        """Send lost segments first, then new ones, while the window (and in recovery
        PRR's ``budget``) allows; then arm the timers."""
        sender = self.senders[index]
        while budget >= 1 and sender.pipe() < int(sender.cwnd):
            if sender.lost:
                seq = min(sender.lost)
                sender.lost.discard(seq)
            elif sender.next_new < sender.segments:
                seq = sender.next_new
                sender.next_new += 1
            else:
                break
            self.transmit(now, index, seq)
            sender.max_flight = max(sender.max_flight, sender.pipe())
            budget -= 1
            if sender.in_recovery:
                sender.prr_out += 1
        if sender.outstanding_count():
            self.arm_timers(now, index)

    def arm_timers(self, now: float, index: int) -> None:
        """One timer, as Linux's: in the open state a tail-loss probe 2 SRTT (+ 2 ms, or
        + RTO_min with one segment out) after the last send, at most the RTO away
        (``tcp_schedule_loss_probe``); otherwise the RTO."""
        sender = self.senders[index]
        sender.timer_epoch += 1
        rto = sender.rto(self.rto_min_s)
        if not sender.in_recovery and not sender.in_loss and not sender.tlp_out and sender.srtt:
            pto = 2 * sender.srtt + (self.rto_min_s if sender.outstanding_count() == 1 else TLP_EXTRA_S)
            self.push(max(now, sender.wire_free) + min(pto, rto), "tlp", index, sender.timer_epoch)
        else:
            self.push(now + rto, "rto", index, sender.timer_epoch)

    def on_ack(self, now: float, index: int, seq: int, sent: float) -> None:
        sender = self.senders[index]
        if seq < sender.una or seq in sender.sacked:
            return
        flight_before = sender.pipe()
        sender.sacked.add(seq)
        sender.lost.discard(seq)  # deemed lost, yet it arrived
        while sender.una in sender.sacked:
            sender.sacked.discard(sender.una)
            sender.lost.discard(sender.una)
            sender.una += 1
        rtt = now - sent
        sender.min_rtt = min(sender.min_rtt, rtt)
        if sender.srtt:
            sender.rttvar = 0.75 * sender.rttvar + 0.25 * abs(sender.srtt - rtt)
            sender.srtt = 0.875 * sender.srtt + 0.125 * rtt
        else:
            sender.srtt, sender.rttvar = rtt, rtt / 2
        sender.backoff = 1
        sender.idle_since = now
        sender.tlp_out = False
        if sent >= sender.rack_sent:
            sender.rack_sent, sender.rack_rtt = sent, rtt
        if sender.in_recovery and sender.una > sender.recovery_point:
            sender.in_recovery = False
            sender.cwnd = sender.ssthresh
        if sender.in_loss and sender.una > sender.loss_point:
            sender.in_loss = False
        if sender.una >= sender.segments:
            sender.timer_epoch += 1  # all acknowledged: no timer runs
            self._grow(sender, flight_before)
            return
        self.detect_loss(now, index)
        if sender.in_recovery:
            # Proportional rate reduction (RFC 6937, PRR-SSRB): in recovery, send as
            # the ACKs come back, falling towards ssthresh.
            sender.prr_delivered += 1
            pipe = sender.pipe()
            if pipe > sender.ssthresh:
                allowed = math.ceil(sender.prr_delivered * sender.ssthresh / sender.recover_flight) - sender.prr_out
            else:
                allowed = min(sender.ssthresh - pipe, max(sender.prr_delivered - sender.prr_out, 1) + 1)
            sender.cwnd = pipe + max(0, allowed)
            self.send(now, index, budget=max(0, allowed))
        else:
            self._grow(sender, flight_before)
            self.send(now, index)

    def _grow(self, sender: _Sender, flight_before: int) -> None:
        """Window growth on an ACK, only while the window limits the sender (Linux
        ``tcp_is_cwnd_limited``: in slow start below twice the most in flight; above
        it, when the flight filled the window): a sender with little to send does not
        grow a window it never uses.  Above ``ssthresh`` CUBIC's TCP-friendly growth,
        ``3 (1 - beta) / (1 + beta)`` segments per round trip, which is what it does at
        round trips of a millisecond (its cubic term needs seconds to matter)."""
        if sender.cwnd < sender.ssthresh:
            if sender.cwnd < 2 * sender.max_flight:
                sender.cwnd = min(sender.cwnd + 1.0, float(self.window_cap))
        elif flight_before >= int(sender.cwnd):
            sender.cwnd = min(sender.cwnd + FRIENDLY_GROWTH / sender.cwnd, float(self.window_cap))

    def detect_loss(self, now: float, index: int) -> None:
        """RACK: a segment sent before the latest delivered one is lost once its reordering
        window has passed; a reordering timer waits for the rest (``tcp_rack_detect_loss``)."""
        sender = self.senders[index]
        window = sender.reorder_window()
        newly = False
        wait = 0.0
        for seq in range(sender.una, sender.next_new):
            if seq in sender.sacked or seq in sender.lost:
                continue
            sent = sender.sent_at[seq]
            if sent >= sender.rack_sent:
                continue
            remaining = sent + sender.rack_rtt + window - now
            if remaining <= 0:
                sender.lost.add(seq)
                newly = True
            else:
                wait = max(wait, remaining)
        if wait > 0:
            sender.reo_epoch += 1
            self.push(now + wait, "reo", index, sender.reo_epoch)
        if newly and not sender.in_recovery and not sender.in_loss:
            sender.in_recovery = True
            sender.recovery_point = sender.highest_sent
            sender.recover_flight = max(1, sender.outstanding_count())
            sender.prr_delivered = sender.prr_out = 0
            sender.ssthresh = max(2.0, sender.cwnd * BETA)

    def on_probe_timeout(self, now: float, index: int, epoch: int) -> None:
        sender = self.senders[index]
        if epoch != sender.timer_epoch or not sender.outstanding_count():
            return
        self.probes += 1
        sender.tlp_out = True
        if sender.next_new < sender.segments:
            seq = sender.next_new
            sender.next_new += 1
        else:
            seq = max(sender.outstanding())
            sender.lost.discard(seq)
        self.transmit(now, index, seq)
        sender.timer_epoch += 1
        self.push(now + sender.rto(self.rto_min_s), "rto", index, sender.timer_epoch)

    def on_retransmission_timeout(self, now: float, index: int, epoch: int) -> None:
        sender = self.senders[index]
        if epoch != sender.timer_epoch or not sender.outstanding_count():
            return
        self.timeouts += 1
        # Linux's tcp_enter_loss cuts ssthresh coming from the open state, not again
        # from recovery or from an earlier timeout's loss state.
        if not sender.in_recovery and not sender.in_loss:
            sender.ssthresh = max(2.0, sender.cwnd * BETA)
        sender.cwnd = 1.0
        sender.in_recovery = False
        sender.in_loss = True
        sender.loss_point = sender.highest_sent
        sender.tlp_out = False
        sender.lost.update(sender.outstanding())
        sender.backoff *= 2
        self.send(now, index)
