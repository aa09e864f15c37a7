"""Plots of sweeps: aggregate and per-node bandwidth against the varied setting."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # files only; no display needed on a cluster login node
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from simfs.report.files import save_figure  # noqa: E402
from simfs.report.measured import PLOTTED_METRICS  # noqa: E402
from simfs.report.tables import COLLAPSE_THRESHOLD, wide_table  # noqa: E402

if TYPE_CHECKING:
    from simfs.report.measured import Measured


def _mark_curve(ax, group: pd.DataFrame, x_key: str, column: str, bottleneck: str, color: str, unit: str) -> None:  # noqa: ANN001
    """The peak, the collapse after it and the bottleneck changes along one curve."""
    curve = group.sort_values(x_key)
    if len(curve) >= 3 and column in curve:
        values = curve[column].to_numpy()
        xs = curve[x_key].to_numpy()
        peak_index = int(values.argmax())
        ax.plot([xs[peak_index]], [values[peak_index]], "*", markersize=14, color=color, zorder=5)
        ax.annotate(
            f"peak {values[peak_index]:.2f} {unit}",
            (xs[peak_index], values[peak_index]),
            textcoords="offset points",
            xytext=(0, 8),
            ha="center",
            fontsize=8,
            color=color,
        )
        fall = values[-1] / values[peak_index] - 1 if values[peak_index] > 0 else 0.0
        if peak_index < len(values) - 1 and fall < -COLLAPSE_THRESHOLD:
            ax.annotate(
                f"{fall:+.0%}",
                (xs[-1], values[-1]),
                textcoords="offset points",
                xytext=(0, -14),
                ha="center",
                fontsize=8,
                color=color,
            )
    if bottleneck in curve:
        previous = None
        for x, value, label in zip(curve[x_key], curve[column], curve[bottleneck]):
            if label != previous:
                ax.annotate(
                    str(label),
                    (x, value),
                    textcoords="offset points",
                    xytext=(4, -12),
                    fontsize=7,
                    color=color,
                    rotation=-20,
                )
            previous = label


def scaling_plot_data(phases: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """The predicted numbers :func:`scaling_plot` draws: one row per combination of
    ``keys``, per phase its aggregate and per-node rate and its bottleneck (the wide
    table of :func:`simfs.report.tables.wide_table`).  ``--plot FILE.csv`` writes it, so
    a plot's numbers can be read, compared and kept beside the image."""
    return wide_table(phases, keys)


def scaling_plot(
    phases: pd.DataFrame,
    keys: Sequence[str],
    path: str | Path,
    title: str = "",
    measured: Sequence[Measured] = (),
) -> Path:
    """Two panels (aggregate GB/s, per-node MB/s; for metadata workloads ops/s; for an
    open-loop one, SPECsfs2008, the operations carried and the mean response time in ms)
    against ``keys[0]``; one line per phase and per combination of the other keys.

    On each curve of three or more points the peak is marked (a star and its value), a
    fall of more than 10% after it is labelled with its size at the last point, and the
    bottleneck (with the mechanism that made it bind) is written where it changes along
    the curve.  ``measured`` values (:mod:`simfs.report.measured`) are drawn beside the
    prediction, each on its metric's panel (``PLOTTED_METRICS``): points as black-edged
    diamonds, a curve's measured peak as a dashed line."""
    x_key, other = keys[0], list(keys[1:])
    table = scaling_plot_data(phases, keys)
    phase_names = list(dict.fromkeys(phases["phase"]))
    # mdtest: rates in operations per second (its -w/-e data is incidental); SPECsfs2008:
    # the load carried and the mean response time, as its results are drawn.  Which a
    # phase is, the table has decided (simfs.report.tables.wide_rows).
    metadata = all(f"{phase} ops/s" in table for phase in phase_names)
    open_loop = metadata and all(f"{phase} response ms" in table for phase in phase_names)
    fig, (ax_agg, ax_node) = plt.subplots(1, 2, figsize=(11, 4.2))
    groups = table.groupby(other, sort=False) if other else [((), table)]
    colors: dict[tuple[str, tuple], str] = {}
    for values, group in groups:
        values = values if isinstance(values, tuple) else (values,)
        suffix = ", ".join(f"{k}={v}" for k, v in zip(other, values))
        for phase in phase_names:
            label = f"{phase} ({suffix})" if suffix else phase
            if open_loop:
                aggregate, second = f"{phase} ops/s", f"{phase} response ms"
            elif metadata:
                aggregate, second = f"{phase} ops/s", f"{phase} per-node ops/s"
            else:
                aggregate, second = f"{phase} agg GB/s", f"{phase} per-node MB/s"
            line = ax_agg.plot(group[x_key], group[aggregate], marker="o", label=label)[0]
            colors[(phase, tuple(zip(other, values)))] = line.get_color()
            ax_node.plot(group[x_key], group[second], marker="o", label=label)
            if not metadata:
                _mark_curve(ax_agg, group, x_key, aggregate, f"{phase} bottleneck", line.get_color(), "GB/s")
    axes = (ax_agg, ax_node)
    drawn: set[str] = set()
    for row in measured:
        panel = PLOTTED_METRICS[row.metric]
        ax, value = axes[panel.index], row.value * panel.scale
        # The colour of the curve it is measured on: the one whose other keys it fixes.
        fixed = dict(row.where)
        on = [
            curve_color
            for (phase, setting), curve_color in colors.items()
            if phase == row.phase and all(fixed.get(key, curve_value) == curve_value for key, curve_value in setting)
        ]
        color = on[0] if on else "black"
        where = "".join(f", {key}={value}" for key, value in row.where)
        if row.x is None:
            label = f"measured peak, {row.phase}{where}"
            ax.axhline(value, color=color, linestyle="--", linewidth=1, label=label)
        else:
            label = f"measured, {row.phase}{where}"
            ax.plot(
                [row.x], [value], "D", color=color, markeredgecolor="black", label=None if label in drawn else label
            )
        drawn.add(label)
    numeric = pd.api.types.is_numeric_dtype(table[x_key])
    xs = set(table[x_key]) | ({row.x for row in measured if isinstance(row.x, (int, float))} if numeric else set())
    if open_loop:
        labels = ("operations carried (ops/s)", "mean response time (ms)")
    elif metadata:
        labels = ("aggregate rate (ops/s)", "per-node rate (ops/s)")
    else:
        labels = ("aggregate bandwidth (GB/s)", "per-node bandwidth (MB/s)")
    for ax, ylabel in zip((ax_agg, ax_node), labels):
        if numeric and min(xs) > 0 and max(xs) / min(xs) >= 8:
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(xs), [str(v) for v in sorted(xs)])
        ax.set_xlabel(x_key)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)  # room above the highest point and marker
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def timeline_plot(
    timeline: pd.DataFrame,
    path: str | Path,
    title: str = "",
    phases: Sequence[tuple[str, float, float]] = (),
) -> Path:
    """Utilisation (the busiest resource of each kind) and flows per resource over time.

    ``phases`` (label, first open, last close), e.g. from :func:`phase_spans`, are shaded
    and labelled on every panel, so a change in the curves can be read against the phase
    that caused it.  The legends sit beside the panels, not over the data.

    The network records a row per resource at every re-solve; values hold until the next
    row, so both panels are step plots.  A kind pinned at utilisation 1 is the bottleneck;
    its flow count is the number of streams it is serving (the queue it keeps).
    """
    kinds = timeline.groupby(["time_s", "kind"]).agg(
        utilisation=("utilisation", "max"), flows=("flow_count", "mean"), fraction=("capacity_fraction", "min")
    )
    kinds = kinds.reset_index()
    fig, (ax_util, ax_flows, ax_capacity) = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for kind, group in kinds.groupby("kind"):
        if group["flows"].max() == 0:
            continue
        ax_util.step(group["time_s"], group["utilisation"], where="post", label=kind)
        ax_flows.step(group["time_s"], group["flows"], where="post", label=kind)
        if group["fraction"].min() < 1:
            ax_capacity.step(group["time_s"], group["fraction"], where="post", label=kind)
    ax_capacity.set_ylabel("effective / nominal\ncapacity (lowest)")
    ax_capacity.set_ylim(0, 1.05)
    ax_util.set_ylabel("utilisation of the busiest\nresource of the kind")
    ax_util.set_ylim(0, 1.05)
    ax_flows.set_ylabel("flows per resource\n(mean over the kind)")
    ax_capacity.set_xlabel("simulated time (s)")
    _shade_phases((ax_util, ax_flows, ax_capacity), phases, label_y=1.07)
    return _finish_panels(fig, (ax_util, ax_flows, ax_capacity), path, title)


def _shade_phases(axes: Sequence[Any], phases: Sequence[tuple[str, float, float]], label_y: float) -> None:
    """Each phase's span shaded on every panel (alternating greys), its label above the first."""
    for number, (label, start, end) in enumerate(phases):
        for ax in axes:
            ax.axvspan(start, end, color="0.85" if number % 2 == 0 else "0.93", zorder=0)
        axes[0].text((start + end) / 2, label_y, label, ha="center", va="bottom", fontsize=7, clip_on=False)


def _finish_panels(fig: Any, axes: Sequence[Any], path: str | Path, title: str) -> Path:
    """Grids, legends beside the panels (not over the data), the title; saved."""
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def queue_timeline_plot(
    queues: Mapping[str, Sequence[tuple[float, int]]],
    path: str | Path,
    title: str = "",
    phases: Sequence[tuple[str, float, float]] = (),
) -> Path:
    """The requests in each request-level queue as every arrival found them (a run's
    ``request_queues``), for a run whose phases moved nothing as fluid flows (mdtest,
    shared-file writes at request level), shaded by phase as :func:`timeline_plot` does."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for name, samples in queues.items():
        if samples:
            times, counts = zip(*samples)
            ax.step(times, counts, where="post", label=name)
    top = max((count for samples in queues.values() for _, count in samples), default=1)
    _shade_phases((ax,), phases, label_y=top * 1.02)
    ax.set_ylabel("requests in the queue\n(seen by each arrival)")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylim(0, top * 1.1)
    return _finish_panels(fig, (ax,), path, title)


def phase_spans(ranks: pd.DataFrame) -> list[tuple[str, float, float]]:
    """Per (iteration, phase) of a result's ``ranks`` table: its label, first open and
    last close, in the order they ran (what :func:`timeline_plot` shades)."""
    spans = ranks.groupby(["iteration", "phase"], sort=False).agg(start=("open_s", "min"), end=("close_s", "max"))
    iterations = ranks["iteration"].nunique()
    return [
        (phase if iterations == 1 else f"{iteration}: {phase}", float(row.start), float(row.end))
        for (iteration, phase), row in spans.sort_values("start").iterrows()
    ]
