"""A time-bounded phase's rate from a bounded sample of its requests.

A stonewalled phase (IOR ``-D``, mdtest ``-W``) runs until its deadline, and a phase that
redoes what one left (the IO500's reads, stats and deletes, bounded by the stonewall's
count) is as long: its result is a rate, not a size.  The IO500 runs every phase for
300 s; on a metadata server doing 50,000 creates a second that is 15 million creates,
each of which simfs simulates request by request (16 us each, :mod:`simfs.cost`), and an
``ior-hard`` write of 47,008-byte records through the lock manager is 210 us a write.

The simulator therefore runs such a phase's request-level part on a bounded sample
(but for an IOR ``-D`` shared-file write without wear-out, whose rate depends on the
phase's length: see :func:`_sample`):
at most :data:`SAMPLE_ITEMS` metadata items and :data:`SAMPLE_WRITES` request-level writes
over all ranks, and never fewer than :data:`MIN_ITEMS_PER_RANK` items or
:data:`MIN_WRITES_PER_RANK` writes per rank, so that the phase's fixed costs (open,
create, the first lock grants, the barrier) are small beside its steady part.  The rate
of the sample is the rate of the phase: the models have no state that grows over a phase's duration (no metadata
cache, no log that fills), and a fluid data phase, whose cost does not depend on its
size, is simulated whole.  What the sample leaves is the start-up transient (the first
requests of every rank queue together), measured on ``generic-lustre``
(calibration/io500), 10 nodes x 128 ranks: mdtest-easy creates at 44,048/s with 32
items a rank and 44,067/s with 200; mdtest-hard creates (3,901-byte files, one directory)
at 43,480/s with 32 and 42,444/s with 200 (2.4% high), 42,857/s with 64.  On
``csd3-lustre``, 10 x 32 ranks, the whole 300 s mdtest-easy create (5.1 million creates,
96 s of CPU) runs at 16,853.9/s and a 100-item sample at 16,853.2/s (1.2 s); ior-hard
writes reach 1.64 GB/s at 16 records a rank and 1.62 at 32 (docs/reference/workloads.md,
"Time-bounded phases").  Every sampled phase says so in the result's notes.
"""

from __future__ import annotations

import dataclasses
import math

from simfs.workloads.spec import PhaseSpec, WorkloadSpec

#: Metadata items (mdtest files) simulated per time-bounded phase, over all ranks.
SAMPLE_ITEMS = 20_000
#: Fewest items a rank handles in a sample (the start-up transient within ~2.5%: module docstring).
MIN_ITEMS_PER_RANK = 32
#: Request-level writes simulated per time-bounded shared-file write phase, over all ranks.
SAMPLE_WRITES = 5_000
#: Fewest writes a rank makes in a sample (the rate is within 2% of its plateau from 16).
MIN_WRITES_PER_RANK = 32
#: Operations an open-loop phase (SPECsfs2008) measures in a sample, over all ranks.
SAMPLE_OPEN_LOOP_OPS = 60_000
#: The warm-up simulated before an open-loop phase's sampled interval, seconds.
OPEN_LOOP_WARMUP_S = 0.5
#: The shortest sampled interval of an open-loop phase, seconds: past saturation the
#: processes achieve less than the load asked, and the interval must outlast their waits.
MIN_OPEN_LOOP_WINDOW_S = 1.0


def steady_state_sample(
    workload: WorkloadSpec, ranks: int, *, request_level_writes: bool
) -> tuple[WorkloadSpec, tuple[str, ...]]:
    """``workload`` with its time-bounded phases' request-level parts cut to a sample,
    and one note per phase cut.  ``request_level_writes``: shared-file writes go through
    the lock manager request by request on this system and experiment."""
    phases, notes = [], []
    for phase in workload.phases:
        sampled, note = _sample(phase, ranks, request_level_writes)
        phases.append(sampled)
        if note:
            notes.append(note)
    if not notes:
        return workload, ()
    return dataclasses.replace(workload, phases=tuple(phases)), tuple(notes)


def _sample(phase: PhaseSpec, ranks: int, request_level_writes: bool) -> tuple[PhaseSpec, str]:
    if phase.is_open_loop:
        return _open_loop_sample(phase)
    if not phase.time_bounded:
        return phase, ""
    bound = "its stonewall" if phase.stonewall_s else "an earlier stonewall's count"
    if phase.is_metadata:
        keep = max(MIN_ITEMS_PER_RANK, SAMPLE_ITEMS // ranks)
        if phase.items_per_rank <= keep:
            return phase, ""
        return phase.with_items(keep), (
            f"{phase.label}: bounded by {bound}, so its steady rate: simulated {keep:,} of "
            f"{phase.items_per_rank:,} items per rank"
        )
    shared_write = phase.op == "write" and phase.shared_file and not phase.collective and not phase.same_data
    if not (shared_write and request_level_writes):
        return phase, ""  # a fluid phase costs the same whatever its size
    keep = max(MIN_WRITES_PER_RANK, SAMPLE_WRITES // ranks)
    transfers = phase.bytes_per_rank // phase.transfer_size_bytes
    if transfers <= keep:
        return phase, ""
    if phase.stonewall_s and not phase.wear_out:
        # IOR -D without wear-out: the phase's bytes are what all ranks did by the
        # deadline, and the lock manager lets some ranks run ahead while others wait, so
        # the rate depends on how long the phase runs (Roadrunner's N-1 47,001 B writes at
        # 2 nodes: 6.6 MB/s with -D 36, 4.9 MB/s with -D 120) and a sample of writes per
        # rank would measure something else (1.98-2.12 MB/s: every rank the same share).
        # Such a phase is simulated whole, up to its deadline.
        return phase, ""
    # With wear-out (the IO500's) every rank goes on to the count of the one that made
    # most, so the same count per rank is what the phase measures.
    if phase.random_offsets:
        # IOR -z: each rank's transfers land anywhere in its own blocks.  Shrinking the
        # blocks would put the ranks' regions inside one lock unit; the first `keep` of
        # the rank's random order in one whole block keeps them apart, as they were.
        return dataclasses.replace(phase.with_segments(1), transfer_limit=keep), (
            f"{phase.label}: bounded by {bound}, so its steady rate: simulated {keep:,} of {transfers:,} "
            "writes per rank (at random offsets in one block of each rank) through the lock manager"
        )
    per_block = max(phase.block_size_bytes // phase.transfer_size_bytes, 1)
    if phase.segment_count > 1 and per_block < keep:
        # IOR's interleaving is by segment: keep whole segments, each block as it is.
        segments = math.ceil(keep / per_block)
        sampled = phase.with_segments(segments)
        kept = segments * per_block
    else:
        kept = keep
        sampled = dataclasses.replace(phase, segment_count=1, bytes_per_rank=kept * phase.transfer_size_bytes)
    return sampled, (
        f"{phase.label}: bounded by {bound}, so its steady rate: simulated {kept:,} of {transfers:,} "
        "writes per rank through the lock manager"
    )


def _open_loop_sample(phase: PhaseSpec) -> tuple[PhaseSpec, str]:
    """An open-loop phase (SPECsfs2008) on a sample: its response time is a steady
    state's mean, which the time :data:`SAMPLE_OPEN_LOOP_OPS` operations are asked for in
    (at least :data:`MIN_OPEN_LOOP_WINDOW_S`) after a warm-up of :data:`OPEN_LOOP_WARMUP_S`
    measures (the requests have no state that grows over a run)."""
    runtime = min(phase.runtime_s, max(SAMPLE_OPEN_LOOP_OPS / phase.load_per_s, MIN_OPEN_LOOP_WINDOW_S))
    warmup = min(phase.warmup_s, OPEN_LOOP_WARMUP_S)
    if runtime == phase.runtime_s and warmup == phase.warmup_s:
        return phase, ""
    return dataclasses.replace(phase, runtime_s=runtime, warmup_s=warmup), (
        f"{phase.label}: an open-loop steady state: simulated {warmup:.3g} s of the {phase.warmup_s:g} s "
        f"warm-up and {runtime:.3g} s of the {phase.runtime_s:g} s measured interval"
    )
