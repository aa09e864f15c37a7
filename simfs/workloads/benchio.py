"""EPCC benchio: every rank writes a 3-D block of doubles to one shared file, collectively.

benchio (``EPCCed/benchio``, ``shared-file/source``) takes no arguments: each rank holds a
256 x 256 x 256 array of doubles (128 MiB), the ranks form a 3-D grid
(``MPI_Dims_create``), and one ``MPI_File_write_all`` of a subarray file view writes the
global array, timed between barriers with the open and the close.  In the file a rank's
data is 256 x 256 runs of 2 KiB interleaved with its neighbours', so only collective
buffering (two-phase I/O) writes it well: simfs models the phase as collective
(``PhaseSpec.collective``).  The tool repeats the test and prints every repetition's rate,
the best and the average; simfs runs it once (``-i`` in IOR terms), which is the best of
the repetitions where nothing varies.

Accepted forms::

    benchio                         # the tool as built: 256^3 doubles per rank
    benchio --local-size 128x128x128   # a rebuild with another local array size

(``benchio.x``, the executable's name, is accepted too.)  The striping is the directory's,
set outside the tool (``lfs setstripe -c -1``): use the ``stripe_count`` setting.
"""

from __future__ import annotations

from simfs.errors import WorkloadError
from simfs.workloads.spec import PhaseSpec, WorkloadSpec

DOUBLE_BYTES = 8
#: The local array edge the tool is built with (benchio.F90: n1 = n2 = n3 = 256).
DEFAULT_EDGE = 256


def parse_benchio(args: list[str], command: str) -> WorkloadSpec:
    edges = (DEFAULT_EDGE,) * 3
    words = list(args)
    while words:
        word = words.pop(0)
        if word == "--local-size":
            if not words:
                raise WorkloadError("benchio: --local-size needs a value such as 256x256x256")
            edges = _edges(words.pop(0))
        elif word.startswith("--local-size="):
            edges = _edges(word.split("=", 1)[1])
        else:
            raise WorkloadError(f"benchio: unsupported argument {word!r} (benchio takes none; simfs adds --local-size)")
    size = edges[0] * edges[1] * edges[2] * DOUBLE_BYTES
    phase = PhaseSpec("write", size, size, shared_file=True, collective=True)
    options = {"local_size": edges}
    return WorkloadSpec("benchio", command, (phase,), aggregate="makespan", options=options)


def _edges(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise WorkloadError(f"benchio: --local-size {text}: expected three positive integers such as 256x256x256")
    return int(parts[0]), int(parts[1]), int(parts[2])
