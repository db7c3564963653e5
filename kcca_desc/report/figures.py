"""The report's figures, drawn with Matplotlib in one style and saved for papers.

Every figure is built on a :class:`matplotlib.figure.Figure` (no pyplot state, no display
needed) and saved by :func:`save_figure` as PNG (embedded in the HTML page) and PDF (vector,
for a paper), from the same object, so both look the same.

- :func:`recall_curves`: R@K for K = 1..100 of each run, one panel per task (up to the pool's
  size where that is smaller);
- :func:`rank_cdf`: the share of queries whose gold item ranks at most r, r on a log scale;
- :func:`forest_plot`: each figure of each run with its bootstrap interval (from a
  :class:`~kcca_desc.report.compare.Comparison`), R@K of every cut-off the runs carry;
- :func:`training_curves`: per-epoch loss and dev figures of runs that record them.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .._core.cache import atomic_write_bytes
from .compare import Comparison, Run, pool_sizes
from ..evaluate.metrics import metric_entry
from ..evaluate.ranks import TASKS
from ..evaluate.results import TABLE_METRICS

__all__ = ["STYLE", "recall_curves", "recall_k_limits", "rank_cdf", "forest_plot", "training_curves", "save_figure",
           "training_history"]

#: rcParams of every figure: small type for a two-column paper, no top/right spines.
STYLE = {
    "font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8, "legend.fontsize": 7, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
    "grid.alpha": 0.3, "lines.linewidth": 1.3, "savefig.bbox": "tight", "pdf.fonttype": 42,
}
_WIDTH = 7.0  # inches: the text width of a two-column paper
_LINESTYLES = ("-", "--", ":", "-.")


def _style(index: int) -> dict:
    """Colour and line style of the ``index``-th run: ten colours, then the next line style."""
    return {"color": f"C{index % 10}", "linestyle": _LINESTYLES[(index // 10) % len(_LINESTYLES)]}


def _legend(fig: Figure, axes, n_runs: int) -> None:
    """The runs' legend outside the panels (below them; beside them for many runs), never on the curves."""
    handles, labels = axes.get_legend_handles_labels()
    if n_runs > 6:
        fig.legend(handles, labels, loc="outside right center", frameon=False, ncol=1 + n_runs // 24)
    else:
        fig.legend(handles, labels, loc="outside lower center", frameon=False, ncol=min(n_runs, 3))


def _run_label(run: Run, runs: Sequence[Run]) -> str:
    protocols = {r.result.protocol for r in runs}
    return run.label if len(protocols) == 1 else f"{run.label} ({run.result.protocol})"


def recall_k_limits(runs: Sequence[Run], max_k: int = 100) -> dict[str, int]:
    """The largest K of each task's R@K curve: ``max_k``, or the largest pool of the runs when smaller.

    Past its pool's size (12 images, say) every run's R@K is 100%: the curve would be flat.
    """
    return {task: max(1, min(max_k, max(pool_sizes(run.result)[task] for run in runs))) for task in TASKS}


def recall_curves(runs: Sequence[Run], max_k: int = 100) -> Figure:
    """R@K (percent) against K = 1..``max_k``, one line per run, one panel per task.

    Each panel stops at the largest pool of its task when that is smaller than ``max_k``
    (:func:`recall_k_limits`).
    """
    fig = Figure(figsize=(_WIDTH, 2.8), layout="constrained")
    axes = fig.subplots(1, len(TASKS), sharey=True)
    limits = recall_k_limits(runs, max_k)
    for ax, task in zip(axes, TASKS):
        ks = np.arange(1, limits[task] + 1)
        for i, run in enumerate(runs):
            ranks = np.sort(run.result.ranks[task])
            recall = 100.0 * np.searchsorted(ranks, ks, side="right") / ranks.size
            ax.plot(ks, recall, label=_run_label(run, runs), **_style(i))
        ax.set(title=f"{task.capitalize()}", xlabel="K", xlim=(1, max(limits[task], 2)), ylim=(0, 100))
    axes[0].set_ylabel("R@K (%)")
    _legend(fig, axes[0], len(runs))
    return fig


def rank_cdf(runs: Sequence[Run]) -> Figure:
    """Share of queries with gold rank <= r against r (log scale), one line per run and task panel."""
    fig = Figure(figsize=(_WIDTH, 2.8), layout="constrained")
    axes = fig.subplots(1, len(TASKS), sharey=True)
    for ax, task in zip(axes, TASKS):
        for i, run in enumerate(runs):
            ranks = np.sort(run.result.ranks[task])
            share = np.arange(1, ranks.size + 1) / ranks.size
            ax.step(ranks, share, where="post", label=_run_label(run, runs), **_style(i))
        ax.set_xscale("log")
        ax.set(title=f"{task.capitalize()}", xlabel="rank of the gold item", ylim=(0, 1))
    axes[0].set_ylabel("share of queries")
    _legend(fig, axes[0], len(runs))
    return fig


def forest_plot(comparison: Comparison, metrics: Sequence[str] | None = None) -> Figure:
    """Each figure with its bootstrap interval: one panel per task and metric, one row per run.

    Parameters
    ----------
    comparison : Comparison
    metrics : sequence of str, optional
        The panels of each task.  Default: the columns of the results tables,
        :data:`~kcca_desc.evaluate.results.TABLE_METRICS` with the further cut-offs (R@20) of any
        run after R@10; a run without one has no point in its panel.
    """
    if metrics is None:
        metrics = [m for m in comparison.metrics if m.startswith("R@") or m in TABLE_METRICS]
    rows = [row for row in comparison.rows if row["metric"] in metrics]
    labels = list(dict.fromkeys(f"{row['system']} ({row['protocol']})" if len(comparison.reference) > 1
                                else row["system"] for row in rows))
    height = 1.0 + 0.16 * len(labels) * len(TASKS)
    fig = Figure(figsize=(_WIDTH, max(2.5, height)), layout="constrained")
    axes = fig.subplots(len(TASKS), len(metrics), sharey=True, squeeze=False)
    position = {label: i for i, label in enumerate(labels)}
    for row_axes, task in zip(axes, TASKS):
        for ax, metric in zip(row_axes, metrics):
            for row in rows:
                if row["task"] != task or row["metric"] != metric:
                    continue
                label = f"{row['system']} ({row['protocol']})" if len(comparison.reference) > 1 else row["system"]
                y = position[label]
                is_ref = row["p_value"] is None
                ax.errorbar(row["value"], y, xerr=[[row["value"] - row["ci_low"]], [row["ci_high"] - row["value"]]],
                            fmt="s" if is_ref else "o", color="C3" if is_ref else "C0", markersize=3.5,
                            elinewidth=1, capsize=2)
            ax.set_title(f"{task[:3].capitalize()}. {metric_entry(metric).axis_label}")
            ax.grid(axis="y", visible=False)
    axes[0][0].set_yticks(range(len(labels)), labels)
    axes[0][0].invert_yaxis()
    return fig


def training_history(run: Run) -> list[dict] | None:
    """Per-epoch records (``{"epoch": 1, "loss": ..., ...}``) a run keeps, or None.

    Read from ``extras["history"]`` or from ``extras["training"]["history"]`` (the
    ``training_summary()`` of a trainable model).
    """
    extras = run.result.extras
    training = extras.get("training")
    history = extras.get("history", training.get("history") if isinstance(training, Mapping) else None)
    if isinstance(history, list) and history and all(isinstance(h, Mapping) and "epoch" in h for h in history):
        return history
    return None


def training_curves(runs: Sequence[Run]) -> Figure | None:
    """Every per-epoch series (loss, dev figures) of the runs that record a training history."""
    histories = [(i, run, training_history(run)) for i, run in enumerate(runs)]
    histories = [(i, run, h) for i, run, h in histories if h]
    if not histories:
        return None
    series = list(dict.fromkeys(key for _, _, h in histories for record in h for key in record
                                if key != "epoch" and isinstance(record[key], (int, float))))
    n_cols = min(4, len(series))
    n_rows = -(-len(series) // n_cols)
    fig = Figure(figsize=(_WIDTH, 2.3 * n_rows), layout="constrained")
    axes = fig.subplots(n_rows, n_cols, squeeze=False).ravel()
    for ax in axes[len(series):]:
        ax.set_visible(False)
    for ax, key in zip(axes, series):
        for i, run, history in histories:
            points = [(h["epoch"], h[key]) for h in history if isinstance(h.get(key), (int, float))]
            if points:
                ax.plot(*zip(*points), marker="o", markersize=2.5, label=_run_label(run, runs), **_style(i))
        ax.set(title=key, xlabel="epoch")
    _legend(fig, axes[0], len(histories))
    return fig


def save_figure(fig: Figure, directory: str | Path, name: str, *, dpi: int = 150) -> str:
    """Save ``fig`` as ``directory/name.png`` and ``.pdf``; return the PNG as a ``data:`` URI."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    png = buffer.getvalue()
    atomic_write_bytes(directory / f"{name}.png", lambda f: f.write(png))
    # A fixed creation date keeps the PDF byte-identical from run to run.
    atomic_write_bytes(directory / f"{name}.pdf",
                       lambda f: fig.savefig(f, format="pdf", metadata={"CreationDate": None}))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
