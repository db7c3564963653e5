"""Evaluation on the published test pools (Flickr30K 1K, COCO 5K, COCO 1K) and tables across data sets.

A pool of :data:`kcca_desc.data.karpathy.EVALUATION_POOLS` is one or several folds of
a test split.  :func:`evaluate_pool` scores each fold with the same fitted
system and, for several folds, reports the mean of every metric over the folds
(:func:`fold_average`), as Faghri et al. (2018) and the papers after them report
COCO 1K: the mean of the five folds' R@K and of their median ranks (not the
median of the pooled ranks).  Every result records its pool in
``extras["pool"]`` (protocol, pool size, captions per image, split, folds and
how they were averaged).  :func:`side_by_side` lays results of several data sets
out as one table with a column group per data set and pool.
"""

from __future__ import annotations

import time
from typing import Iterable, Mapping, Sequence

import numpy as np

from .._core.errors import DataError, ParameterError
from .._core.profile import add_tables
from ..data.dataset import Dataset
from ..data.karpathy import EvaluationPool
from .harness import _system_name, result_from_scores
from .metrics import metric_entry
from .ranks import METRIC_KEYS, TASKS
from .results import TABLE_METRICS, Result, _recall_columns, _table_metrics, markdown_table, table_results

__all__ = ["evaluate_pool", "evaluate_pool_folds", "fold_average", "side_by_side"]


def fold_average(results: Sequence[Result], pool: EvaluationPool, *, split: str | None = None) -> Result:
    """The mean over folds of every metric of ``results`` (one per fold, same system).

    ``R@K``, median rank and mean rank of each task are the arithmetic means of the folds'
    values; ``n_queries`` is the sum.  The per-query ranks of the folds are concatenated
    (each within its own fold's pool), so statistics can still pair queries.

    Parameters
    ----------
    results : sequence of Result
        One per fold, in fold order, of one system.
    pool : EvaluationPool
        The pool they were measured on; ``len(results)`` must be ``pool.n_folds``.
    split : str, optional
        Split name of the averaged result; default ``pool.split``.

    Returns
    -------
    Result
        With ``extras["pool"]`` (see :meth:`EvaluationPool.record`) and ``extras["folds"]``: each
        fold's metrics.
    """
    if len(results) != pool.n_folds:
        raise DataError(f"fold_average: {len(results)} results for a pool of {pool.n_folds} folds")
    systems = {r.system for r in results}
    if len(systems) != 1:
        raise DataError(f"fold_average: results of several systems {sorted(systems)}")
    averaged = {}
    for task in TASKS:
        metrics = {}
        for key in getattr(results[0], task):
            values = [r.metric(task, key) for r in results]
            metrics[key] = int(sum(values)) if key == "n_queries" else float(np.mean(values))
        averaged[task] = metrics
    first = results[0]
    ranks = {task: np.concatenate([r.ranks[task] for r in results]) for task in TASKS
             if all(task in r.ranks for r in results)}
    timings = add_tables(r.timings_s for r in results)
    return Result(system=first.system, dataset=first.dataset, protocol="karpathy", split=split or pool.split,
                  annotation=averaged["annotation"], search=averaged["search"], params=first.params,
                  timings_s=timings, ranks=ranks,
                  extras={"pool": pool.record(),
                          "folds": [{"split": r.split, "annotation": r.annotation, "search": r.search}
                                    for r in results]})


def evaluate_pool_folds(method, dataset: Dataset, pool: EvaluationPool, *, name: str | None = None,
                        params: Mapping | None = None, ks: Sequence[int] = (1, 5, 10)) -> list[Result]:
    """Score every fold of ``pool`` with a fitted method: one result per fold, with its ranks.

    Parameters
    ----------
    method : RetrievalMethod
        Fitted; ``method.score(view.images, view.captions)`` is called once per fold.
    dataset : Dataset
        Holds the pool's split.
    pool : EvaluationPool
    name : str, optional
        The run's label in the results; default ``method.name``.
    params : mapping, optional
        Recorded hyperparameters.
    ks : sequence of int, default=(1, 5, 10)
        Recall cut-offs; the results format needs 1, 5 and 10 among them.

    Returns
    -------
    list of Result
        One per fold, in order, each recording the pool in ``extras["pool"]``.
    """
    label = _system_name(method, name)
    results = []
    for view in pool.views(dataset):
        start = time.perf_counter()
        scores = method.score(view.images, view.captions)
        result = result_from_scores(scores, view, label, params=params, timings={"score": time.perf_counter() - start},
                                    ks=ks, top_k=0)
        result.extras = {**result.extras, "pool": pool.record()}
        results.append(result)
    return results


def evaluate_pool(method, dataset: Dataset, pool: EvaluationPool, *, name: str | None = None,
                  params: Mapping | None = None, ks: Sequence[int] = (1, 5, 10)) -> Result:
    """The figure a paper reports for ``pool``: its one fold's result, or the mean over its folds.

    See :func:`evaluate_pool_folds` for the parameters and :func:`fold_average` for the mean.
    """
    results = evaluate_pool_folds(method, dataset, pool, name=name, params=params, ks=ks)
    return results[0] if pool.n_folds == 1 else fold_average(results, pool)


def _pool_label(result: Result) -> str:
    pool = result.extras.get("pool")
    if not pool:
        return f"{result.dataset} {result.split} ({result.protocol})"
    folds = f", mean of {pool['n_folds']} folds" if pool["n_folds"] > 1 else ""
    return f"{result.dataset} {pool['pool_images']} images{folds}"


def _header(metric: str) -> str:
    # The table metrics and every R@K by their short label, as in every results table; any other
    # key of ``retrieval_metrics`` (mean rank, number of queries) as named in the results file.
    return metric_entry(metric).label if metric in TABLE_METRICS or metric.startswith("R@") else metric


def side_by_side(results: Iterable[Result], metrics: Sequence[str] | None = None) -> str:
    """A Markdown table with one row per system and one column group per data set and pool.

    Parameters
    ----------
    results : sequence of Result
        Any number of systems on any number of data sets / pools; a missing
        (system, pool) cell is left blank.
    metrics : sequence of str, optional
        Columns per task within each group: keys of
        :func:`~kcca_desc.evaluate.ranks.retrieval_metrics`, or ``R@K`` of a further cut-off the
        results carry.  Default: the columns of every results table, :data:`TABLE_METRICS` with
        the further cut-offs of any result after R@10 (blank for a result without them).

    Raises
    ------
    ParameterError
        If ``results`` is not an iterable of Results (naming the item, ``results[i]``), or a
        metric is unknown.
    DataError
        If ``results`` is empty.
    """
    results = table_results(results, "side_by_side")
    if not results:
        raise DataError("a results table needs at least one result")
    recalls = _recall_columns(results)
    available = [*recalls, *(k for k in METRIC_KEYS if k not in recalls)]
    metrics = _table_metrics(results) if metrics is None else metrics
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise ParameterError(f"side_by_side: unknown metric {unknown[0]!r}; available: {', '.join(available)}")
    groups = list(dict.fromkeys(_pool_label(r) for r in results))
    systems = list(dict.fromkeys(r.system for r in results))
    cells = {(r.system, _pool_label(r)): r for r in results}
    header = ["System"] + [f"{g}: {task[:3].capitalize()}. {_header(m)}"
                           for g in groups for task in TASKS for m in metrics]
    rows = []
    for system in systems:
        row = [system]
        for g in groups:
            r = cells.get((system, g))
            # A further cut-off that another result of the table has is blank, as in every results table.
            row += [("" if r is None or m not in getattr(r, task) else f"{r.metric(task, m):.1f}")
                    for task in TASKS for m in metrics]
        rows.append(row)
    return markdown_table(header, rows)
