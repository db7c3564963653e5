"""Build the HTML report: gather the figures, tables and galleries, render the template."""

from __future__ import annotations

import datetime
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import jinja2
import matplotlib

from .. import __version__
from .._core.cache import atomic_write_text
from .compare import Comparison, Run, compare_runs, format_p
from ..data.dataset import Dataset
from .._core.errors import ParameterError
from ..evaluate.metrics import METRICS, format_bound
from ..evaluate.ranks import TASKS
from ..evaluate.results import Result
from ..evaluate.statistics import N_PERMUTATIONS, N_RESAMPLES
from .._core.progress import stage
from . import figures, gallery

__all__ = ["build_report"]

def _p_text(p: float) -> str:
    text = format_p(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def _tables(comparison: Comparison) -> list[dict]:
    """One row per run and protocol, one cell per task and metric (value, interval, test)."""
    rows: dict[tuple[str, str], dict] = {}
    for row in comparison.rows:
        entry = rows.setdefault((row["protocol"], row["system"]), {
            "system": row["system"], "protocol": row["protocol"],
            "reference": comparison.reference[row["protocol"]] == row["system"], "cells": {}})
        is_ref = row["p_value"] is None
        entry["cells"][(row["task"], row["metric"])] = {
            "value": METRICS[row["metric"]].format(row["value"]), "marker": row["marker"],
            "ci": f"{format_bound(row['ci_low'])}–{format_bound(row['ci_high'])}",
            "delta": "" if is_ref else f"{row['difference']:+.1f}", "p": "" if is_ref else _p_text(row["p_value"]),
        }
    return list(rows.values())


def _figures(runs: Sequence[Run], comparison: Comparison, directory: Path) -> list[dict]:
    """Every figure as a ``data:`` URI with its caption; PNG and PDF files in ``directory``."""
    made = [
        ("recall_at_k", "Recall at K (K = 1…100) of each run, both tasks.", figures.recall_curves(runs)),
        ("rank_cdf", "Share of queries whose gold item ranks at most r (log scale).", figures.rank_cdf(runs)),
        ("intervals", f"Figures with their {comparison.settings['confidence']:.0%} bootstrap intervals "
                      "(square: the reference run).", figures.forest_plot(comparison)),
        ("training", "Training curves (per epoch) of the runs that record them.", figures.training_curves(runs)),
    ]
    out = []
    for name, caption, fig in made:
        if fig is None:
            continue
        uri = figures.save_figure(fig, directory, name)
        out.append({"name": name, "caption": caption, "uri": uri,
                    "files": [f"figures/{name}.png", f"figures/{name}.pdf"]})
    return out


def _error_analysis(runs: Sequence[Run], comparison: Comparison, dataset: Dataset | None, options: dict,
                    n_gallery: int, n_worst: int, seed: int) -> dict:
    """Gallery, worst queries and disagreements of the first protocol's reference run."""
    protocol = next(iter(comparison.reference))
    group = [run for run in runs if run.result.protocol == protocol]
    first = next(run for run in group if run.label == comparison.reference[protocol])
    second = next((run for run in group if run is not first), None)
    try:
        data = gallery.resolve_dataset(first.result, dataset=dataset, **options)
        view = gallery.result_view(first.result, data)
    except gallery.ReportDataError as exc:
        return {"error": str(exc), "run": first.label, "protocol": protocol}
    thumbs = gallery.Thumbnails(view)
    judgments = gallery.load_judgments(data, options.get("data_root") or
                                       (first.result.extras.get("data_source") or {}).get("root"))
    images = gallery.image_gallery(first, view, thumbs, n=n_gallery, seed=seed, judgments=judgments)
    out = {
        "run": first.label, "protocol": protocol, "dataset": f"{view.dataset}:{view.split}",
        "has_top": bool(first.result.queries.get("top")),
        "captions": gallery.caption_gallery(first, view, thumbs, n=n_gallery, seed=seed),
        "images": images, "judged": gallery.judged(images),
        "worst": {task: gallery.worst_queries(first, view, thumbs, task, n=n_worst) for task in TASKS},
    }
    if second is not None:
        out["other"] = second.label
        out["disagree"] = {task: gallery.disagreements(first, second, view, thumbs, task, n=n_worst) for task in TASKS}
    return out


def build_report(results: Sequence[Result | Run], out: str | os.PathLike, *, dataset: Dataset | None = None,
                 data: str | None = None, data_root: str | None = None, image_root: str | None = None,
                 reference: str | None = None, n_gallery: int = 6, n_worst: int = 5, seed: int = 0,
                 n_resamples: int = N_RESAMPLES, n_permutations: int = N_PERMUTATIONS,
                 title: str | None = None) -> Path:
    """Write the report of ``results`` into the directory ``out``; return the page's path.

    Parameters
    ----------
    results : sequence of Result or Run
        Runs with per-query ranks (:func:`kcca_desc.report.compare.load_runs` reads them from files);
        their top-K retrieved items feed the gallery.
    out : path-like
        Directory of ``report.html``, ``figures/`` and ``comparison.*`` (created).
    dataset : Dataset, optional
        The data set of the runs; else loaded from ``data``/``data_root``/``image_root`` or the
        ``data_source`` the results record (see :func:`gallery.resolve_dataset`). Without one,
        the page says why it has no gallery.
    reference : str, optional
        The run the others are tested against (:func:`kcca_desc.report.compare.compare_runs`).
    n_gallery, n_worst : int
        Queries of each gallery and of each list of worst / most disputed queries.
    seed : int
        Seed of the gallery's sample, the bootstrap and the randomisation tests.
    n_resamples, n_permutations : int
        Bootstrap resamples and random assignments of the randomisation tests.
    title : str, optional
        Heading of the page.

    Returns
    -------
    Path
        ``out/report.html``.
    """
    if int(n_gallery) < 0 or int(n_worst) < 0:
        raise ParameterError(f"n_gallery and n_worst must be >= 0, got {n_gallery} and {n_worst}")
    runs = [r if isinstance(r, Run) else Run(r, "") for r in results]
    if not runs:
        raise ParameterError("build_report: no result to report")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with stage(f"report: comparing {len(runs)} runs"):
        comparison = compare_runs(runs, reference=reference, n_resamples=n_resamples, n_permutations=n_permutations,
                                  seed=seed)
        comparison.write(out / "comparison")
    with stage("report: figures"), matplotlib.rc_context(figures.STYLE):
        made = _figures(runs, comparison, out / "figures")
    with stage("report: gallery"):
        analysis = _error_analysis(runs, comparison, dataset,
                                   {"data": data, "data_root": data_root, "image_root": image_root},
                                   n_gallery, n_worst, seed)
    environment = jinja2.Environment(loader=jinja2.PackageLoader("kcca_desc.report", "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True)
    first = runs[0].result
    page = environment.get_template("report.html.j2").render(
        title=title or f"Retrieval results: {first.dataset}, {first.split} split",
        runs=runs, table=_tables(comparison), comparison=comparison,
        several=max(Counter(run.result.protocol for run in runs).values()) > 1,
        tasks=TASKS, metrics=METRICS, figures=made, analysis=analysis,
        version=__version__, generated=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    path = out / "report.html"
    atomic_write_text(path, page)
    return path
