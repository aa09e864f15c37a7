"""Writing output files whole or not at all: write beside the target, then rename.

An interrupted run (Ctrl-C, a full disk) then leaves the previous file or none, never
half a PNG or half a report.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.figure

from simfs.errors import SimfsError


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.stem}.partial{path.suffix}")


def write_text(path: str | Path, text: str) -> Path:
    path = Path(path)
    partial = _partial(path)
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        raise SimfsError(f"{path}: cannot write ({exc.strerror})") from None
    finally:
        partial.unlink(missing_ok=True)
    return path


def save_figure(figure: matplotlib.figure.Figure, path: str | Path, dpi: int = 110) -> Path:
    """Save and close ``figure``; the format follows the suffix (PNG, SVG, PDF)."""
    import matplotlib.pyplot as plt

    path = Path(path)
    partial = _partial(path)
    try:
        figure.savefig(partial, dpi=dpi)
        os.replace(partial, path)
    except OSError as exc:
        raise SimfsError(f"{path}: cannot write ({exc.strerror})") from None
    finally:
        plt.close(figure)
        partial.unlink(missing_ok=True)
    return path
