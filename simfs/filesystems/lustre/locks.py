"""Shared-file extent-lock contention (N-1 writes).

Lustre protects each stripe object with extent locks held by clients.  When writers on
different nodes write interleaved regions of one object, a writer whose transfer falls in
an extent another client holds must wait for that lock to be called back (the holder
flushes its dirty pages and cancels) and granted to it: a lock hand-off costs about
``lock_handoff_s`` and only one hand-off per object is in progress at a time
(Lustre Operations Manual, "Lustre Distributed Lock Manager"; the N-1 write penalty is
measured, e.g., by Bent et al., "PLFS: a checkpoint filesystem for parallel
applications", SC'09).

Model.  Each OST holds one lock resource whose capacity is ``1 / lock_handoff_s``
hand-offs per second.  A shared-file write transfer conflicts with another node's lock
with probability ``c``:

* ``c = 0`` when the ranks' blocks are stripe aligned (the block size a multiple of the
  stripe size): each stripe unit has one writer, and after the first grants every client
  holds locks on its own units;
* otherwise the two stripe units at each end of a block are shared with the neighbouring
  ranks' blocks.  The transfers touching them are a fraction
  ``f = min(1, 2 max(transfer, stripe) / block)`` of a rank's transfers, and each such
  transfer finds the unit's lock at another node with probability ``1 - 1/W`` (``W``
  writing nodes): ``c = f (1 - 1/W)``.  Strided N-1 patterns with blocks no larger than a
  stripe (``ior -t 47k -b 47k -s 1000``) conflict on nearly every transfer.

A write flow crosses the lock resources of the OSTs its bytes land on with weight
``c x share / transfer_size`` hand-offs per byte, so the aggregate N-1 write rate per
object is at most ``transfer_size / (c x lock_handoff_s)``: worse with more writers and
with smaller or unaligned transfers.  Two shared files on one OST share its lock
resource (an approximation: one shared file per OST at a time is the usual case).
"""

from __future__ import annotations


def conflict_probability(writer_nodes: int, transfer_bytes: int, block_bytes: int, stripe_bytes: int) -> float:
    """Chance that a shared-file transfer needs a lock another node holds."""
    if writer_nodes <= 1 or block_bytes % stripe_bytes == 0:
        return 0.0
    touching = min(1.0, 2.0 * max(transfer_bytes, stripe_bytes) / block_bytes)
    return touching * (1.0 - 1.0 / writer_nodes)
