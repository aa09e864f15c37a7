"""TCP incast: many servers answering one client at once over Ethernet.

A client reading a striped file asks each of ``N`` servers for its part of a round
(a request of ``q`` bytes each) and waits for all of them.  The servers answer at once,
each with a burst of up to ``b`` bytes (its congestion window) into the one switch port
that leads to the client.  When ``N x b`` exceeds the port's buffer ``P``, packets are
dropped; a flow that loses the tail of its short transfer cannot recover by fast
retransmit and stalls for the minimum retransmission timeout, ``RTO_min`` (200 ms on
Linux), while the client's link idles (Phanishayee et al., "Measurement and analysis of
TCP throughput collapse in cluster-based storage systems", FAST 2008; Chen et al.,
"Understanding TCP incast throughput collapse in datacenter networks", WREN 2009).

Model.  The overflowing fraction ``p = (N b - P) / (N b)`` (0 when the bursts fit) is the
chance that a round suffers a timeout, and a round moves ``N q`` bytes at link rate
``C``, so the link delivers

    goodput / C = (N q / C) / (N q / C + p RTO_min)

of its rate.  This applies to TCP links only (Ethernet); InfiniBand RDMA and Fibre
Channel are credit-based and do not drop.  In simfs the factor makes every byte of such a
read cost ``1 / factor`` of the client's receive link.
"""

from __future__ import annotations


def incast_goodput_factor(
    servers: int,
    request_bytes: float,
    link_Bps: float,
    port_buffer_bytes: float,
    burst_bytes: float,
    rto_min_s: float,
) -> float:
    """Fraction of the client link's rate a synchronized read from ``servers`` keeps."""
    if servers <= 1:
        return 1.0
    if not (request_bytes > 0 and link_Bps > 0 and port_buffer_bytes >= 0 and burst_bytes > 0 and rto_min_s >= 0):
        raise ValueError("incast: request, link rate and burst must be positive; buffer and RTO non-negative")
    offered = servers * min(request_bytes, burst_bytes)
    if offered <= port_buffer_bytes:
        return 1.0
    timeout_chance = (offered - port_buffer_bytes) / offered
    round_s = servers * request_bytes / link_Bps
    return round_s / (round_s + timeout_chance * rto_min_s)
