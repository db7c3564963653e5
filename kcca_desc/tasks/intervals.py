"""Bootstrap intervals of the tasks' figures, resampling what each task's test samples.

* forced choice: the queries (:func:`forced_choice_intervals`);
* off-topic detection: the (image, text) pairs, on-topic and off-topic pairs resampled apart so
  that every draw keeps both classes and AP stays defined (:func:`off_topic_intervals`);
* vSTS: the sentence pairs (:func:`pearson_interval`).

The draws and the percentile intervals are those of the retrieval figures
(:func:`~kcca_desc.evaluate.statistics.bootstrap_intervals`: same seed, resamples and
confidence).  Each statistic is recomputed on every draw, vectorised over the draws: a draw is
a row of item indices, and its figure is the figure of the items it holds (a multiset, so the
order of a draw never matters; ties in a ranking are broken by item order, as
:func:`~kcca_desc.tasks.metrics.average_precision` breaks them by input order).
"""

from __future__ import annotations

import numpy as np

from .._core.errors import DataError
from ..evaluate.statistics import CONFIDENCE, N_RESAMPLES, bootstrap_intervals, interval_settings
from .metrics import pearson_r

__all__ = ["forced_choice_intervals", "off_topic_intervals", "pearson_interval", "resampled_leave_one_out_accuracy"]

# Draws × items held per chunk by the leave-one-out accuracy.
_CHUNK_ELEMENTS = 2**19


def _ci(intervals: dict) -> dict[str, list[float]]:
    """Intervals as results files hold them: ``[low, high]`` lists."""
    return {name: list(interval) for name, interval in intervals.items()}


def forced_choice_intervals(candidate_scores: np.ndarray, *, n_resamples: int = N_RESAMPLES,
                            confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Intervals of the forced-choice accuracy and mean scores, resampling the queries.

    ``candidate_scores`` is the (n_queries, N) matrix of
    :func:`~kcca_desc.tasks.forced_choice.forced_choice_metrics`, column 0 the gold item.

    Returns
    -------
    dict
        ``{"ci": {"accuracy", "mean_positive", "mean_negative": [low, high]}, "ci_settings": {...}}``.
    """
    s = np.asarray(candidate_scores, dtype=np.float64)
    correct = 100.0 * (s[:, 0] > s[:, 1:].max(axis=1))
    positive, negative = s[:, 0], s[:, 1:].mean(axis=1)
    statistics = {"accuracy": lambda idx: correct[idx].mean(axis=1),
                  "mean_positive": lambda idx: positive[idx].mean(axis=1),
                  "mean_negative": lambda idx: negative[idx].mean(axis=1)}
    settings = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {"ci": _ci(bootstrap_intervals(statistics, s.shape[0], **settings)),
            "ci_settings": interval_settings("queries", **settings)}


def _ranked(scores: np.ndarray, labels: np.ndarray, idx: np.ndarray, descending: bool) -> tuple[np.ndarray, ...]:
    """The scores and labels of each draw in ranking order (ties by item order)."""
    order = np.argsort(-scores if descending else scores, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    ranked = order[np.sort(position[idx], axis=1)]
    return scores[ranked], labels[ranked]


def _average_precision_rows(labels: np.ndarray) -> np.ndarray:
    """AP of each row of ranked 0/1 labels (best first), as :func:`~kcca_desc.tasks.metrics.average_precision`."""
    hits = np.cumsum(labels, axis=1)
    precision = hits / np.arange(1, labels.shape[1] + 1)
    return np.sum(precision * labels, axis=1) / hits[:, -1]


def resampled_leave_one_out_accuracy(scores: np.ndarray, labels: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`~kcca_desc.tasks.metrics.leave_one_out_threshold_accuracy` of each draw, vectorised.

    Row r of ``idx`` (n_draws, m) holds the items of draw r.  Holding out the item at sorted
    position j changes every cut's count of correct items by a constant on each side of j
    (−y_j left of it, −(1 − y_j) right of it) and merges the two cuts around it, so the optimal
    cuts without it follow from prefix and suffix maxima of the full counts; the middle one of
    several optimal cuts (the tie rule of :func:`~kcca_desc.tasks.metrics.optimal_threshold`)
    is found among the first (left of j) or last (right of j) cuts of the maximal count, by
    searching the cuts sorted by (draw, count, position).  O(m log m) per draw instead of
    O(m² log m).
    """
    idx = np.asarray(idx)
    # Some twenty (draws × items) arrays are alive at once: chunks of draws bound the memory.
    step = max(1, _CHUNK_ELEMENTS // max(idx.shape[1], 1))
    return np.concatenate([_loo_accuracy(scores, labels, idx[start:start + step])
                           for start in range(0, idx.shape[0], step)])


def _loo_accuracy(scores: np.ndarray, labels: np.ndarray, idx: np.ndarray) -> np.ndarray:
    s, y = _ranked(np.asarray(scores, np.float64), np.asarray(labels).astype(np.int64), idx, descending=False)
    n_draws, m = s.shape
    if m < 2:
        raise DataError("leave_one_out_threshold_accuracy needs at least 2 items")
    rows = np.arange(n_draws)[:, None]
    # Cut c (0..m) predicts sorted positions >= c positive; correct[c] as in optimal_threshold.
    zero = np.zeros((n_draws, 1), np.int64)
    negatives_below = np.hstack([zero, np.cumsum(1 - y, axis=1)])
    positives_above = y.sum(axis=1, keepdims=True) - np.hstack([zero, np.cumsum(y, axis=1)])
    correct = negatives_below + positives_above
    valid = np.ones((n_draws, m + 1), dtype=bool)
    valid[:, 1:m] = s[:, :-1] < s[:, 1:]
    none = -1  # a count below every real one: no cut
    counted = np.where(valid, correct, none)
    # Best count of the valid cuts left of j (c < j) and right of j + 1 (c >= j + 2).
    left_best = np.hstack([np.full((n_draws, 1), none), np.maximum.accumulate(counted, axis=1)[:, :m - 1]])
    right_best = np.hstack([np.maximum.accumulate(counted[:, ::-1], axis=1)[:, ::-1][:, 2:],
                            np.full((n_draws, 1), none)])
    j = np.arange(m)
    # Without item j the cuts j and j + 1 become one; it is valid at either end or between distinct neighbours.
    middle_valid = (j == 0) | (j == m - 1)
    middle_valid = np.broadcast_to(middle_valid, (n_draws, m)).copy()
    middle_valid[:, 1:m - 1] |= s[:, :m - 2] < s[:, 2:]
    left_value = np.where(left_best == none, none, left_best - y)
    right_value = np.where(right_best == none, none, right_best - (1 - y))
    middle_value = np.where(middle_valid, correct[:, :m] - y, none)
    best = np.maximum(np.maximum(left_value, right_value), middle_value)

    # Valid cuts sorted by (draw, count, position): the cuts of one count in one draw are a run.
    span = m + 1
    key = (rows * (m + 2) + np.where(valid, correct, m + 1)) * span + np.arange(span)
    table = np.sort(key, axis=None)

    def first_at(count, position):
        """Index in ``table`` of the first cut of ``count`` at ``position`` or beyond, per (draw, j)."""
        return np.searchsorted(table, (rows * (m + 2) + np.maximum(count, 0)) * span + position)

    n_left = np.where(left_value == best, first_at(left_best, j) - first_at(left_best, 0), 0)
    n_right = np.where(right_value == best, first_at(right_best, span) - first_at(right_best, j + 2), 0)
    n_middle = (middle_value == best).astype(np.int64)
    q = (n_left + n_middle + n_right) // 2
    # The q-th optimal cut: a left cut (the first cuts of its count), the merged one, or a right cut.
    left_cut = table[np.minimum(first_at(left_best, 0) + q, table.size - 1)] % span
    right_cut = table[np.minimum(first_at(right_best, j + 2) + q - n_left - n_middle, table.size - 1)] % span
    pick_left, pick_middle = q < n_left, (q == n_left) & (n_middle == 1)
    cut = np.where(pick_left, left_cut, np.where(pick_middle, j, right_cut))
    # The threshold between the sorted scores around the cut, without item j; -inf / +inf at the ends.
    # The merged cut lies between j - 1 and j + 1; any other between cut - 1 and cut.
    below, above = cut - 1, cut + pick_middle
    lower_end = (pick_left | pick_middle) & (cut == 0)
    upper_end = np.where(pick_middle, j == m - 1, ~pick_left & (cut == m))
    threshold = (np.take_along_axis(s, np.clip(below, 0, m - 1), axis=1)
                 + np.take_along_axis(s, np.clip(above, 0, m - 1), axis=1)) / 2
    threshold = np.where(lower_end, -np.inf, np.where(upper_end, np.inf, threshold))
    return np.mean((s >= threshold) == (y == 1), axis=1)


def off_topic_intervals(off_topic_score: np.ndarray, labels: np.ndarray, *, k: int, n_resamples: int = N_RESAMPLES,
                        confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Intervals of off-topic AP, P@k and leave-one-out accuracy, resampling the pairs.

    On-topic and off-topic pairs are resampled apart (a stratified bootstrap), so every draw
    has as many of each as the sample and AP is always defined.  The leave-one-out threshold
    is chosen anew within each draw (:func:`resampled_leave_one_out_accuracy`).

    Parameters
    ----------
    off_topic_score : array-like of shape (n_pairs,)
        The ranking score of the off-topic class (the negated affinity).
    labels : array-like of shape (n_pairs,)
        1 for an off-topic pair.
    k : int
        The cutoff of P@k.
    n_resamples : int, default=2000
        Bootstrap draws.
    confidence : float, default=0.95
        Coverage of each percentile interval.
    seed : int, default=0
        Seed of the draws.

    Returns
    -------
    dict
        ``{"ci": {"AP", "P@k", "accuracy": [low, high]}, "ci_settings": {...}}``.
    """
    x = np.asarray(off_topic_score, dtype=np.float64)
    y = np.asarray(labels).astype(np.int64)

    def average_precision(idx):
        return 100 * _average_precision_rows(_ranked(x, y, idx, descending=True)[1])

    def precision(idx):
        return 100 * _ranked(x, y, idx, descending=True)[1][:, :k].mean(axis=1)

    statistics = {"AP": average_precision, f"P@{k}": precision,
                  "accuracy": lambda idx: 100 * resampled_leave_one_out_accuracy(x, y, idx)}
    settings = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {"ci": _ci(bootstrap_intervals(statistics, x.size, strata=y, **settings)),
            "ci_settings": interval_settings("pairs (on- and off-topic apart)", **settings)}


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair; NaN where a row is constant (r undefined)."""
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    sxx, syy = np.sum(dx * dx, axis=1), np.sum(dy * dy, axis=1)
    # A constant draw: every value equal (its deviations exactly zero).
    constant = np.all(x == x[:, :1], axis=1) | np.all(y == y[:, :1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.sum(dx * dy, axis=1) / np.sqrt(sxx * syy)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def pearson_interval(x, y, *, n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
                     seed: int = 0) -> dict:
    """Interval of Pearson r (:func:`~kcca_desc.tasks.metrics.pearson_r`), resampling the pairs.

    A draw in which either sample is constant has no r and is left out (the interval is
    conditional on r being defined); some draw has one unless a sample is constant, which
    raises as :func:`~kcca_desc.tasks.metrics.pearson_r` does.

    Returns
    -------
    dict
        ``{"ci": [low, high], "ci_settings": {...}}``.
    """
    pearson_r(x, y)  # the checks of the figure itself: shapes, NaN, a constant sample
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    settings = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    (low, high), = bootstrap_intervals({"r": lambda idx: _pearson_rows(x[idx], y[idx])}, x.size,
                                       **settings).values()
    return {"ci": [low, high], "ci_settings": interval_settings("sentence pairs", **settings)}
