"""The command line the corpus benchmarks share: ``--corpus PATH`` with the default beside
the repository (``../shared/corpus/<name>``), and the one-line refusal when it is absent
(a user's clone has no corpus)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"


def corpus_parser(description: str, name: str) -> argparse.ArgumentParser:
    """A parser with ``--corpus`` defaulting to ``../shared/corpus/<name>``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=SHARED / name)
    return parser


def corpus_found(corpus: Path) -> bool:
    """Whether ``corpus`` is there; says so on stderr when it is not."""
    if corpus.is_dir():
        return True
    print(f"corpus not found at {corpus} (it is not part of a clone; pass --corpus)", file=sys.stderr)
    return False
