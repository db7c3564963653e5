"""Build the HTML report: gather the figures, tables and galleries, render the template."""

from __future__ import annotations

import datetime
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import jinja2
import matplotlib
import numpy as np
import scipy.stats

from .. import __version__
from .._core.cache import atomic_write_text
from .compare import Comparison, Run, compare_runs, format_p, gold_captions, load_runs, pool_sizes
from ..data.dataset import Dataset
from .._core.errors import DataError, ParameterError, warn_user
from ..evaluate.metrics import format_bound, metric_entry
from ..evaluate.ranks import TASKS
from ..evaluate.results import Result, format_task_figure
from ..evaluate.statistics import N_PERMUTATIONS, N_RESAMPLES
from .._core.progress import stage
from .._core.validation import listed_items
from . import figures, gallery
from .gallery import gallery_run

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
            "value": metric_entry(row["metric"]).format(row["value"]), "marker": row["marker"],
            "ci": f"{format_bound(row['ci_low'])}–{format_bound(row['ci_high'])}",
            "delta": "" if is_ref else f"{row['difference']:+.1f}", "p": "" if is_ref else _p_text(row["p_value"]),
        }
    return list(rows.values())


def _task_table(comparison: Comparison) -> dict:
    """The other tasks' figures: their (task, figure) columns and one row per run and protocol."""
    columns = list(dict.fromkeys((row["task"], row["metric"]) for row in comparison.task_rows))
    rows: dict[tuple[str, str], dict] = {}
    for row in comparison.task_rows:
        entry = rows.setdefault((row["protocol"], row["system"]),
                                {"system": row["system"], "protocol": row["protocol"], "cells": {}})
        entry["cells"][(row["task"], row["metric"])] = {
            "value": format_task_figure(row["value"]),
            "ci": "" if row["ci_low"] is None else
            f"{format_task_figure(row['ci_low'])}–{format_task_figure(row['ci_high'])}"}
    return {"columns": columns, "rows": list(rows.values()),
            "with_intervals": any(row["ci_low"] is not None for row in comparison.task_rows)}


def _figures(runs: Sequence[Run], comparison: Comparison, directory: Path) -> list[dict]:
    """Every figure as a ``data:`` URI with its caption; PNG and PDF files in ``directory``."""
    limits = figures.recall_k_limits(runs)
    ks = (f"K = 1…{limits['annotation']}" if len(set(limits.values())) == 1 else
          ", ".join(f"K = 1…{k} for {task}" for task, k in limits.items()))
    made = [
        ("recall_at_k", f"Recall at K ({ks}) of each run, both tasks.", figures.recall_curves(runs)),
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


def _error_analysis(runs: Sequence[Run], comparison: Comparison, shown: Run, dataset: Dataset | None,
                    options: dict, n_gallery: int, n_worst: int, seed: int) -> dict:
    """Gallery and worst queries of the run ``shown``; its disagreements with its protocol's reference.

    When ``shown`` is the reference, the disagreements are with the next run of its protocol.
    """
    protocol = shown.result.protocol
    group = [run for run in runs if run.result.protocol == protocol]
    reference = next(run for run in group if run.label == comparison.reference[protocol])
    other = reference if reference is not shown else next((run for run in group if run is not shown), None)
    try:
        data = gallery.resolve_dataset(shown.result, dataset=dataset, **options)
        view = gallery.result_view(shown.result, data)
    except gallery.ReportDataError as exc:
        # The tables and figures are still worth having: the page and a warning say what is missing.
        warn_user(f"the report has no retrieval gallery: {exc}")
        return {"error": str(exc), "run": shown.label, "protocol": protocol}
    thumbs = gallery.Thumbnails(view)
    judgments = gallery.load_judgments(data, options.get("data_root") or
                                       (shown.result.extras.get("data_source") or {}).get("root"))
    images = gallery.image_gallery(shown, view, thumbs, n=n_gallery, seed=seed, judgments=judgments)
    out = {
        "run": shown.label, "protocol": protocol, "dataset": f"{view.dataset}:{view.split}",
        "has_top": bool(shown.result.queries.get("top")),
        "captions": gallery.caption_gallery(shown, view, thumbs, n=n_gallery, seed=seed),
        "images": images, "judged": gallery.judged(images),
        "worst": {task: gallery.worst_queries(shown, view, thumbs, task, n=n_worst) for task in TASKS},
    }
    if other is not None:
        out["other"] = other.label
        out["disagree"] = {task: gallery.disagreements(shown, other, view, thumbs, task, n=n_worst) for task in TASKS}
    return out


def _summary(runs: Sequence[Run]) -> str:
    """What the page holds, counted as a reader counts: systems, results per protocol, files."""
    per_protocol = Counter(run.result.protocol for run in runs)
    systems = len({run.label for run in runs})
    files = len({run.source for run in runs if run.source})
    text = f"{systems} system{'s' if systems != 1 else ''}"
    if len(per_protocol) > 1 or systems != len(runs):
        text += f", {len(runs)} results (" + ", ".join(f"{n} {protocol}" for protocol, n in per_protocol.items()) + ")"
    if files:
        text += f" from {files} file{'s' if files != 1 else ''}"
    return text


def _counted_runs(runs: Sequence[Run]) -> str:
    """The runs as the progress line counts them: ``"3 runs, 2 protocols"``, not one per result.

    A results file of both protocols holds two results of one run (a system and its file).
    """
    n_runs = len({(run.label, run.source) for run in runs})
    protocols = len({run.result.protocol for run in runs})
    return f"{n_runs} run{'s' if n_runs != 1 else ''}" + (f", {protocols} protocols" if protocols > 1 else "")


#: A run and task is noted for ties when at least this many of its queries, and this share of
#: them, rank their gold item last of the pool, and so many that a ranking without ties would
#: put that many there by chance with probability below :data:`TIED_CHANCE`.
TIED_QUERIES, TIED_SHARE, TIED_CHANCE = 5, 0.01, 0.001


def _last_rank(run: Run, task: str) -> tuple[np.ndarray, np.ndarray]:
    """The last rank of the pool of each query of ``task``, and the chance that a random ranking puts it there.

    A search query has one gold image among the pool's images; an annotation query has its
    ``g`` gold captions among the pool's ``n`` captions, and ranks last (rank ``n - g + 1``)
    when all of them come after every other caption, with chance ``1 / C(n, g)``.
    """
    pool = pool_sizes(run.result)[task]
    n_queries = len(run.result.ranks[task])
    if task == "search":
        return np.full(n_queries, pool), np.full(n_queries, 1.0 / max(pool, 1))
    gold = gold_captions(run.result)
    chance = np.array([1.0 / math.comb(pool, int(g)) if 0 < g <= pool else 0.0 for g in gold])
    return pool - gold + 1, chance


def _tie_notes(runs: Sequence[Run]) -> list[str]:
    """One line per run and task with more queries ranking their gold item last than chance explains.

    A system that gives many candidates the same score (nearest neighbours scoring 0 when no
    caption of a neighbour shares a word with the query) ranks a tied gold item after every
    tied candidate (:func:`~kcca_desc.evaluate.ranks.gold_ranks`): a gold item scoring the
    lowest score ties with the rest and takes the last rank of the pool. The results keep the
    ranks, not the scores, so the ties themselves are not counted: a run is noted when its
    queries at the last rank are many more than a ranking without ties would put there by chance
    (one in the pool's size per search query; so with five captions per image, five times as
    many search queries as images, about five queries rank their image last).
    """
    notes = []
    for run in runs:
        for task in TASKS:
            ranks = np.asarray(run.result.ranks[task])
            last, chance = _last_rank(run, task)
            if ranks.size != last.size:
                continue
            at_last = ranks == last
            n_last, expected = int(np.count_nonzero(at_last)), float(chance.sum())
            if (n_last >= TIED_QUERIES and n_last >= TIED_SHARE * ranks.size
                    and scipy.stats.poisson.sf(n_last - 1, expected) < TIED_CHANCE):
                where = f"rank {int(last[0]):,}" if np.all(last == last[0]) else "its last rank"
                notes.append(f"{run.label} ({run.result.protocol}, {task}): {n_last:,} of {ranks.size:,} queries "
                             f"({n_last / ranks.size:.0%}) rank their gold item last of the pool ({where}), where "
                             f"a ranking without ties would put about {expected:.2g} by chance: their gold item "
                             "most likely ties with the candidates it is ranked after.")
    return notes


def _runs(results: object) -> list[Run]:
    """``results`` as runs, in order: Runs as given, Results as runs of no file, results files read.

    The files are read together with :func:`~kcca_desc.report.compare.load_runs`, as the command
    line reads them: runs of one system in several files are labelled with the file's name.
    """
    # One of them alone is a list of one.
    items = listed_items(results, (Result, Run, str, os.PathLike), owner="build_report", name="results",
                         expected="a list of Results, Runs or results files",
                         item="a Result, a Run or the path of a results file",
                         hint="read a results file with kcca_desc.evaluate.load_results, or pass its path")
    files = [Path(item) for item in items if isinstance(item, (str, os.PathLike))]
    read: dict[str, list[Run]] = {}
    for run in load_runs(files) if files else ():
        read.setdefault(run.source, []).append(run)
    runs = []
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            runs += read.get(str(Path(item)), [])
        else:
            runs.append(item if isinstance(item, Run) else Run(item, ""))
    return runs


def build_report(results: Sequence[Result | Run | str | os.PathLike], out: str | os.PathLike, *, dataset: Dataset | None = None,
                 data: str | None = None, data_root: str | None = None, image_root: str | None = None,
                 reference: str | None = None, n_gallery: int = 6, n_worst: int = 5, seed: int = 0,
                 n_resamples: int = N_RESAMPLES, n_permutations: int = N_PERMUTATIONS,
                 title: str | None = None, gallery: str | None = None) -> Path:
    """Write the report of ``results`` into the directory ``out``; return the page's path.

    Parameters
    ----------
    results : sequence of Result, Run or path-like
        Runs with per-query ranks; their top-K retrieved items feed the gallery.  A path is a
        results file (``python -m kcca_desc.fit --out``, a benchmark's records), read with
        :func:`kcca_desc.report.compare.load_runs` as the command line reads it, so that
        ``reference`` and ``gallery`` can name it.
    out : path-like
        Directory of ``report.html``, ``figures/`` and ``comparison.*`` (created).
    dataset : Dataset, optional
        The data set of the runs; else loaded from ``data``/``data_root``/``image_root`` or the
        ``data_source`` the results record (see :func:`gallery.resolve_dataset`). Without one,
        the page says why it has no gallery.
    data : str, optional
        Name of the data set to load when ``dataset`` is None (a name of
        :data:`~kcca_desc.data.registry.DATASETS`); default the one the results record.
    data_root : str, optional
        Its root (the Flickr8K directory, or the JSON / TSV file); default the one the results
        record when ``data`` is None, else the loader's default.
    image_root : str, optional
        Folder of its images (the ``image_root`` option of the json and tsv data sets); default
        the one the results record when ``data`` is None.
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
    gallery : str, optional
        The run whose retrievals the gallery and error analysis show (a label, system name or
        file, as ``reference``); default the first run. Its disagreements are listed against
        its protocol's reference (or, when it is the reference, the next run).

    Returns
    -------
    Path
        ``out/report.html``.

    Raises
    ------
    ParameterError
        If an item of ``results`` is none of a Result, a Run and a path.
    ComparisonError
        If a results file cannot be read or holds no result with per-query ranks.
    DataError
        Before any work, if a result lacks its per-query ranks (saved by
        :func:`~kcca_desc.evaluate.results.save_results` without ``include_ranks=True``).
    """
    if int(n_gallery) < 0 or int(n_worst) < 0:
        raise ParameterError(f"n_gallery and n_worst must be >= 0, got {n_gallery} and {n_worst}")
    runs = _runs(results)
    if not runs:
        raise ParameterError("build_report: no result to report")
    for run in runs:
        # Every table, interval and test is recomputed from the per-query ranks, which
        # save_results leaves out unless asked: say so before any work.
        missing = [task for task in TASKS if task not in run.result.ranks]
        if missing:
            where = f" ({run.source})" if run.source else ""
            raise DataError(f"build_report: per-query {' and '.join(missing)} ranks are missing from result "
                            f"{run.result.system!r} ({run.result.protocol}){where}; save it with "
                            "save_results(..., include_ranks=True) to report it")
    shown = gallery_run(runs, gallery)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with stage(f"report: comparing {_counted_runs(runs)}"):
        comparison = compare_runs(runs, reference=reference, n_resamples=n_resamples, n_permutations=n_permutations,
                                  seed=seed)
        comparison.write(out / "comparison")
    with stage("report: figures"), matplotlib.rc_context(figures.STYLE):
        made = _figures(runs, comparison, out / "figures")
    with stage("report: gallery"):
        analysis = _error_analysis(runs, comparison, shown, dataset,
                                   {"data": data, "data_root": data_root, "image_root": image_root},
                                   n_gallery, n_worst, seed)
    environment = jinja2.Environment(loader=jinja2.PackageLoader("kcca_desc.report", "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True)
    first = runs[0].result
    page = environment.get_template("report.html.j2").render(
        title=title or f"Retrieval results: {first.dataset}, {first.split} split",
        runs=runs, summary=_summary(runs), tie_notes=_tie_notes(runs), table=_tables(comparison),
        task_table=_task_table(comparison),
        comparison=comparison,
        several=max(Counter(run.result.protocol for run in runs).values()) > 1,
        tasks=TASKS, metrics={m: metric_entry(m) for m in comparison.metrics}, figures=made, analysis=analysis,
        version=__version__, generated=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    path = out / "report.html"
    atomic_write_text(path, page)
    return path
