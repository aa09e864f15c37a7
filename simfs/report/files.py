"""Writing output files whole or not at all: write beside the target, then rename.

An interrupted run (Ctrl-C, a full disk) then leaves the previous file or none, never
half a PNG or half a report.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from simfs.errors import SimfsError

if TYPE_CHECKING:  # matplotlib takes 0.5-0.6 s to import; simfs measure needs none of it
    import matplotlib.figure
    import pandas


def _write_whole(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write`` on a partial file beside ``path``, then rename it into place."""
    path = Path(path)
    partial = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        write(partial)
        os.replace(partial, path)
    except OSError as exc:
        raise SimfsError(f"{path}: cannot write ({exc.strerror})") from None
    finally:
        partial.unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    return _write_whole(path, lambda partial: partial.write_text(text, encoding="utf-8"))


def write_frame(path: str | Path, frame: pandas.DataFrame) -> Path:
    """A table as CSV, or as Parquet when ``path`` ends in ``.parquet`` (needs pyarrow)."""
    if Path(path).suffix != ".parquet":
        return write_text(path, frame.to_csv(index=False))
    require_parquet(str(path))
    return _write_whole(path, lambda partial: frame.to_parquet(partial, index=False))


def require_parquet(what: str) -> None:
    """Fail before any work is done when Parquet output is asked for without pyarrow."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise SimfsError(f"{what}: Parquet needs pyarrow (pip install 'simfs[parquet]'); use .csv") from None


def save_figure(figure: matplotlib.figure.Figure, path: str | Path, dpi: int = 110) -> Path:
    """Save and close ``figure``; the format follows the suffix (PNG, SVG, PDF)."""
    import matplotlib.pyplot as plt

    try:
        return _write_whole(path, lambda partial: figure.savefig(partial, dpi=dpi))
    finally:
        plt.close(figure)
