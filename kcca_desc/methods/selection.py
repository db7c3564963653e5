"""Model selection on dev data: measure candidate settings on a dev view and choose among them.

Two rules share :func:`dev_metrics`, the retrieval metrics of one candidate's dev scores:

* the paper's (Hodosh, Young & Hockenmaier 2013, Section 4.1.3), :func:`select_models` and
  :func:`select_per_task`: for each task keep the ``k`` settings with the best dev R@1, the ``k``
  best by R@5 and the ``k`` best by R@10 (15 models), whose test rankings are then fused by
  Borda count (:func:`kcca_desc.methods.fusion.borda_fuse`);
* one best setting, :func:`select_best` of :func:`recall_sum` (R@1 + R@5 + R@10 of both tasks),
  which chooses what the paper fixes by hand or does not have: the kernel options p, d and the
  weight power q (``benchmarks/hodosh_tuning.py``), the settings of the neural feature bridges
  (``benchmarks/neural.py``).

References
----------
.. [1] M. Hodosh, P. Young and J. Hockenmaier, "Framing image description as a
   ranking task: data, models and evaluation metrics", JAIR 47, 853-899, 2013.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from .._core.errors import DataError, ParameterError
from ..data.dataset import RetrievalView
from ..evaluate.ranks import TASKS, evaluate_scores
from ..evaluate.scores import DirectionalScores

__all__ = ["SELECTION_METRICS", "DEV_METRICS", "dev_metrics", "select_models", "select_per_task", "recall_sum",
           "select_best"]

#: The dev metrics that select models, all higher-is-better.
SELECTION_METRICS = ("R@1", "R@5", "R@10")
#: The dev metrics recorded per setting by default: the paper's R@K and median rank.
DEV_METRICS = SELECTION_METRICS + ("median_rank",)

T = TypeVar("T")


def dev_metrics(scores: np.ndarray | DirectionalScores, view: RetrievalView,
                *, keys: Sequence[str] | None = DEV_METRICS) -> dict[str, dict[str, float]]:
    """The retrieval metrics of both tasks of one candidate's scores on a dev view.

    Parameters
    ----------
    scores : ndarray of shape (n_images, n_captions) or DirectionalScores
        The candidate's scores of the view's pools (higher = better).
    view : RetrievalView
        The dev pools and gold items.
    keys : sequence of str or None, default=("R@1", "R@5", "R@10", "median_rank")
        The metrics kept; None keeps every metric of
        :func:`kcca_desc.evaluate.ranks.retrieval_metrics` (mean rank and number of queries too).

    Returns
    -------
    dict
        ``{"annotation": {...}, "search": {...}}``, without the per-query ranks.
    """
    metrics = evaluate_scores(scores, view)
    return {task: {name: value for name, value in metrics[task].items()
                   if name != "ranks" and (keys is None or name in keys)} for task in TASKS}


def select_models(dev_metrics: Sequence[tuple[Hashable, Mapping[str, float]]], *, k: int = 5,
                  metrics: Sequence[str] = SELECTION_METRICS) -> list:
    """The dev-selected settings whose rankings are fused (Hodosh et al. 2013, Section 4.1.3).

    For one task, the ``k`` settings with the best dev R@1, then the ``k``
    best by R@5, then the ``k`` best by R@10: ``3k`` settings (15 with the
    default ``k = 5``, as in Hodosh et al. 2013).

    A setting in several of the lists is kept once per list: duplicates count
    separately, so such a setting votes more than once in
    :func:`~kcca_desc.methods.fusion.borda_fuse`.  This keeps the paper's fixed 15 models.

    Ties within one metric are broken by the sum of the other selection
    metrics (higher first), then by the order of ``dev_metrics`` (earlier
    first), so the selection is deterministic.

    Parameters
    ----------
    dev_metrics : sequence of (setting, dict)
        Each setting (any object, e.g. ``(n_components, reg)``) with its dev
        metrics of one task; the dicts need the keys in ``metrics``.
    k : int, default=5
        Settings per metric.  With fewer than ``k`` settings, every setting
        is kept in each list (in that list's order).
    metrics : sequence of str, default=("R@1", "R@5", "R@10")
        Selection metrics, all higher-is-better.

    Returns
    -------
    list
        ``min(k, len(dev_metrics)) * len(metrics)`` settings, grouped by
        metric, best first.

    Raises
    ------
    ValueError
        If ``dev_metrics`` is empty, ``k < 1``, or a setting lacks a metric
        or has a non-finite value.
    """
    if not dev_metrics:
        raise DataError("select_models: no dev results to select from")
    if int(k) != k or k < 1:
        raise ParameterError(f"select_models: k must be a positive integer, got {k!r}")
    table = np.empty((len(dev_metrics), len(metrics)), dtype=np.float64)
    for i, (setting, values) in enumerate(dev_metrics):
        for j, name in enumerate(metrics):
            if name not in values:
                raise DataError(f"select_models: setting {setting!r} has no {name}")
            table[i, j] = values[name]
            if not np.isfinite(table[i, j]):
                raise DataError(f"select_models: setting {setting!r} has {name} = {values[name]}")
    settings = [setting for setting, _ in dev_metrics]
    position = np.arange(len(settings))
    selected = []
    for j in range(len(metrics)):
        others = table.sum(axis=1) - table[:, j]
        # lexsort: last key is primary; position makes the order total.
        order = np.lexsort((position, -others, -table[:, j]))
        selected += [settings[i] for i in order[:k]]
    return selected


def select_per_task(dev_results: Sequence[tuple[Hashable, Mapping[str, Mapping[str, float]]]], *, k: int = 5,
                    metrics: Sequence[str] = SELECTION_METRICS) -> dict[str, list]:
    """The settings to fuse for each task: :func:`select_models` of each task's dev metrics.

    Parameters
    ----------
    dev_results : sequence of (setting, dict)
        Each setting with its :func:`dev_metrics` (``{"annotation": {...}, "search": {...}}``).
    k, metrics
        As in :func:`select_models`.

    Returns
    -------
    dict
        ``{"annotation": [...], "search": [...]}``, ``3k`` settings each by default.
    """
    return {task: select_models([(setting, values[task]) for setting, values in dev_results], k=k, metrics=metrics)
            for task in TASKS}


def recall_sum(metrics: Mapping[str, Mapping[str, float]], keys: Sequence[str] = SELECTION_METRICS) -> float:
    """Σ_K (R@K of annotation + R@K of search): one number to compare candidates by.

    Parameters
    ----------
    metrics : mapping
        ``{"annotation": {...}, "search": {...}}`` as returned by :func:`dev_metrics`.
    keys : sequence of str, default=("R@1", "R@5", "R@10")
    """
    return sum(sum(metrics[task][key] for task in TASKS) for key in keys)


def select_best(candidates: Iterable[T], objective: Callable[[T], float]) -> tuple[T, float]:
    """The first candidate with the largest ``objective``, and its objective.

    Candidates are drawn one at a time, so a generator of fitted models keeps at most two
    alive (the best so far and the one being measured).  Ties go to the earlier candidate.

    Parameters
    ----------
    candidates : iterable
        Anything ``objective`` measures, e.g. (fitted model, parameters) pairs.
    objective : callable
        Higher is better, e.g. ``lambda c: recall_sum(dev_metrics(c[0].score(...), dev))``.

    Returns
    -------
    (candidate, value)

    Raises
    ------
    ValueError
        If there is no candidate.
    """
    best = None
    for candidate in candidates:
        value = objective(candidate)
        if best is None or value > best[1]:
            best = (candidate, value)
    if best is None:
        raise DataError("select_best: no candidates to select from")
    return best
