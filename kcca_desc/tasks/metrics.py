"""Metrics of the seed papers' auxiliary tasks (off-topic detection, forced choice, vSTS)."""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr

from .._core.errors import DataError, ParameterError

__all__ = ["average_precision", "precision_at_k", "optimal_threshold", "leave_one_out_threshold_accuracy",
           "pearson_r"]


def _check_binary(scores, labels, name: str) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise DataError(f"{name}: scores and labels must be 1-D of one length, got {scores.shape} and {labels.shape}")
    if not np.all(np.isfinite(scores)):
        raise DataError(f"{name}: scores contain NaN or infinite values")
    if not np.all(np.isin(labels, (0, 1))):
        raise DataError(f"{name}: labels must be 0 or 1")
    return scores, labels.astype(bool)


def average_precision(scores, labels) -> float:
    """Average precision of ranking by decreasing ``scores`` for the positive ``labels``.

    AP = (1/P) Σ_{k: label_k = 1} precision@k, over the ranking sorted by
    decreasing score (ties broken by input order, a stable sort).
    """
    scores, labels = _check_binary(scores, labels, "average_precision")
    if not labels.any():
        raise DataError("average_precision: there are no positive labels")
    ranked = labels[np.argsort(-scores, kind="stable")]
    hits = np.cumsum(ranked)
    return float(np.mean((hits / np.arange(1, len(ranked) + 1))[ranked]))


def precision_at_k(scores, labels, k: int) -> float:
    """Share of positives among the ``k`` highest-scoring items (stable ties)."""
    scores, labels = _check_binary(scores, labels, "precision_at_k")
    if not 1 <= k <= len(scores):
        raise ParameterError(f"precision_at_k: k must be in [1, {len(scores)}], got {k}")
    return float(labels[np.argsort(-scores, kind="stable")[:k]].mean())


def optimal_threshold(scores, labels) -> float:
    """Threshold t maximising the accuracy of "positive iff score >= t".

    Candidates are −∞, +∞ and the midpoints between consecutive distinct
    scores; when several are optimal, the middle one (in sorted order) is
    taken, which keeps the cut away from both classes.
    """
    scores, labels = _check_binary(scores, labels, "optimal_threshold")
    order = np.argsort(scores, kind="stable")
    s, y = scores[order], labels[order]
    n = len(s)
    # Cut c predicts items at sorted positions >= c positive.
    negatives_below = np.concatenate([[0], np.cumsum(~y)])
    positives_above = y.sum() - np.concatenate([[0], np.cumsum(y)])
    correct = negatives_below + positives_above
    valid = np.ones(n + 1, dtype=bool)
    valid[1:n] = s[:-1] < s[1:]
    cuts = np.flatnonzero(valid & (correct == correct[valid].max()))
    c = cuts[len(cuts) // 2]
    if c == 0:
        return -np.inf
    if c == n:
        return np.inf
    return float((s[c - 1] + s[c]) / 2)


def leave_one_out_threshold_accuracy(scores, labels) -> float:
    """Accuracy of a threshold chosen without the item it classifies (Rei 2017).

    Each item in turn is held out, :func:`optimal_threshold` is computed on
    the others, and the item is predicted positive iff its score >= that
    threshold.  One O(n log n) pass per held-out item.
    """
    scores, labels = _check_binary(scores, labels, "leave_one_out_threshold_accuracy")
    if len(scores) < 2:
        raise DataError("leave_one_out_threshold_accuracy needs at least 2 items")
    keep = np.ones(len(scores), dtype=bool)
    correct = 0
    for k in range(len(scores)):
        keep[k] = False
        t = optimal_threshold(scores[keep], labels[keep])
        keep[k] = True
        correct += (scores[k] >= t) == labels[k]
    return float(correct / len(scores))


def pearson_r(x, y) -> float:
    """Pearson correlation coefficient of two equally long 1-D samples, :func:`scipy.stats.pearsonr`.

    r = Σ (x_i - x̄)(y_i - ȳ) / sqrt(Σ (x_i - x̄)² Σ (y_i - ȳ)²).  Unlike SciPy, which returns
    NaN with a warning, it raises when r is undefined.

    Raises
    ------
    ValueError
        If the samples are not 1-D of one length >= 2, hold NaN or infinite values, or one of
        them is constant.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 2:
        raise DataError(f"pearson_r: need two 1-D samples of one length >= 2, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise DataError("pearson_r: samples contain NaN or infinite values")
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise DataError("pearson_r: a sample is constant; the correlation is undefined")
    return float(pearsonr(x, y).statistic)
