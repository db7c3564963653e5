"""Significance tests, confidence intervals and agreement statistics.

Every test here is *paired*: two systems are evaluated on the same queries
and the per-query outcomes (a hit at K, a rank, an R-precision, an expert
score) are compared query by query, as in Hodosh, Young & Hockenmaier
(2013, Sections 4.2 and 4.3).

- :func:`mcnemar_test` — binary outcomes (R@K, S@K; Sections 4.2.1, 4.3.1).
- :func:`paired_randomization_test` — any statistic of real outcomes (mean
  rank, median rank, R-precision, expert score); Fisher's test
  (Sections 4.2.1, 4.3.3).
- :func:`bootstrap_ci`, :func:`metric_cis` — percentile bootstrap intervals
  (not in the paper; see ``docs/design.md``); :func:`bootstrap_intervals` — the same
  intervals of any statistics of one sample (the other tasks' figures), stratified on request.
- :func:`spearman_rho`, :func:`kendall_tau` — agreement of two rankings of
  systems (Section 4.3.5); :func:`cohens_kappa` — agreement of two raters
  (Section 4.3.2 and Appendix A).
- :func:`paired_tests` — every test of a run against a baseline, as
  ``python -m kcca_desc.compare`` and the Hodosh table benchmark report them.
- :func:`add_confidence_intervals`, :func:`add_significance` — write
  intervals and p-values into a :class:`~kcca_desc.evaluate.results.Result`
  for the tables.

Every random choice takes a seed: same seed, same figures.
"""

from __future__ import annotations

import collections.abc
from numbers import Real
from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np
from scipy.stats import binom, chi2, kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from .._core.errors import DataError, ParameterError
from .._core.validation import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    SEED,
    Interval,
    MappingOf,
    SequenceOf,
    StrOptions,
    constraint_errors,
    raise_together,
)
from .metrics import METRICS, metric_entry
from .ranks import TASKS, recall_ks, retrieval_metrics
from .results import Result, checked_result

__all__ = [
    "McNemarResult", "RandomizationResult", "mcnemar_test", "paired_randomization_test",
    "bootstrap_ci", "metric_cis", "bootstrap_intervals", "interval_settings", "spearman_rho", "kendall_tau",
    "cohens_kappa",
    "add_confidence_intervals", "add_significance", "paired_tests", "bootstrap_groups",
    "N_RESAMPLES", "N_PERMUTATIONS", "CONFIDENCE",
]

#: Bootstrap resamples of a confidence interval: percentile bounds need some thousands of draws
#: to be stable in the tails.
N_RESAMPLES = 2000
#: Random sign assignments of a paired randomisation test: the Monte Carlo error of a p-value
#: near 0.05 is then about 0.002.
N_PERMUTATIONS = 10_000
#: Coverage of a confidence interval.
CONFIDENCE = 0.95

# Resampled values held at once (batches of bootstrap or permutation draws).
_BATCH_ELEMENTS = 2**22

# What each setting of the functions here may be (those of the command line, cli.preflight, alike).
_SETTINGS = {
    "n_resamples": [POSITIVE_INT], "n_permutations": [POSITIVE_INT],
    "confidence": [Interval(Real, 0, 1, closed="neither")], "seed": [SEED],
    "statistic": [StrOptions({"mean", "median"}), callable],
    "exact_threshold": [NON_NEGATIVE_INT], "exact_max": [NON_NEGATIVE_INT],
    "ks": [SequenceOf(POSITIVE_INT)], "n_items": [NON_NEGATIVE_INT],
    "statistics": [MappingOf(str, callable)], "groups": [collections.abc.Mapping, None],
}


def _check_settings(owner: str, **settings) -> None:
    """Refuse the settings of ``owner`` that break :data:`_SETTINGS` (all of them in one error), before any work.

    A wrong type (``n_resamples=None``, ``confidence="0.9"``, ``seed="x"``) failed with Python's
    ``TypeError`` from NumPy or from a comparison, naming neither the function nor the setting.
    """
    raise_together(constraint_errors(owner, settings, _SETTINGS))


def _floats(values, name: str, what: str) -> np.ndarray:
    """``values`` as a float64 array; values that are no numbers (strings, objects, ragged lists) are a DataError."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        shown = values.tolist() if isinstance(values, np.ndarray) else values
        raise DataError(f"{name}: {what} must be numbers, got {shown!r:.60}") from None


class McNemarResult(NamedTuple):
    statistic: float
    pvalue: float
    n_a_only: int
    n_b_only: int
    method: str


class RandomizationResult(NamedTuple):
    difference: float
    pvalue: float
    n_permutations: int
    exact: bool


def _same_shape(a, b, name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        a, b = np.asarray(a), np.asarray(b)
    except ValueError:  # ragged nested lists
        raise DataError(f"{name}: outcomes must be two non-empty 1-D arrays of one length, got ragged lists") from None
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise DataError(f"{name}: outcomes must be two non-empty 1-D arrays of one length, "
                         f"got shapes {a.shape} and {b.shape}")
    return a, b


def _paired(a, b, name: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = _same_shape(a, b, name)
    a, b = _floats(a, name, "outcomes"), _floats(b, name, "outcomes")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise DataError(f"{name}: outcomes contain NaN or infinite values")
    return a, b


def _binary(x: np.ndarray, name: str, which: str) -> np.ndarray:
    if x.dtype != bool and not np.isin(x, (0, 1)).all():
        raise DataError(f"{name}: outcomes of {which} must be binary (0/1 or bool)")
    return x.astype(bool)


def mcnemar_test(a, b, *, exact_threshold: int = 25) -> McNemarResult:
    """McNemar's test of paired binary outcomes (two-sided).

    With ``n_a`` queries where only system A succeeds and ``n_b`` where only
    B does, under H0 each discordant query is A's with probability 1/2.

    - ``n_a + n_b < exact_threshold``: exact binomial test,
      ``p = min(1, 2 P[Bin(n_a + n_b, 1/2) <= min(n_a, n_b)])``
      (statistic: ``min(n_a, n_b)``).
    - otherwise: chi-square with continuity correction (Edwards 1948),
      ``X² = (|n_a - n_b| - 1)² / (n_a + n_b)``, ``p = P[χ²_1 >= X²]``.
    - no discordant query: ``p = 1``.

    Parameters
    ----------
    a, b : array-like of bool, shape (n_queries,)
        Per-query outcomes of the two systems (e.g. ``ranks <= 10``).
    exact_threshold : int, default=25
        Discordant count below which the exact test is used.

    Returns
    -------
    McNemarResult
        ``(statistic, pvalue, n_a_only, n_b_only, method)``, ``method``
        being ``"exact"``, ``"chi2"`` or ``"none"``.

    References
    ----------
    .. [1] Q. McNemar, "Note on the sampling error of the difference between
       correlated proportions or percentages", Psychometrika 12, 1947.
    .. [2] A. L. Edwards, "Note on the correction for continuity in testing
       the significance of the difference between correlated proportions",
       Psychometrika 13, 1948.
    """
    _check_settings("mcnemar_test", exact_threshold=exact_threshold)
    a, b = _same_shape(a, b, "mcnemar_test")
    a, b = _binary(a, "mcnemar_test", "a"), _binary(b, "mcnemar_test", "b")
    n_a, n_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    n = n_a + n_b
    if n == 0:
        return McNemarResult(0.0, 1.0, 0, 0, "none")
    if n < exact_threshold:
        k = min(n_a, n_b)
        return McNemarResult(float(k), float(min(1.0, 2.0 * binom.cdf(k, n, 0.5))), n_a, n_b, "exact")
    statistic = (abs(n_a - n_b) - 1) ** 2 / n
    return McNemarResult(float(statistic), float(chi2.sf(statistic, 1)), n_a, n_b, "chi2")


def _statistic_of(statistic: Callable | str) -> Callable:
    """The function of ``statistic`` (checked by :func:`_check_settings`): a name or a callable."""
    return {"mean": np.mean, "median": np.median}[statistic] if isinstance(statistic, str) else statistic


def paired_randomization_test(a, b, *, statistic: Callable | str = "mean", n_permutations: int = N_PERMUTATIONS,
                              seed: int = 0, exact_max: int = 16) -> RandomizationResult:
    """Fisher's paired randomisation test of ``statistic(a) - statistic(b)`` (two-sided).

    Under H0 the two outcomes of each query are exchangeable, so every
    assignment that swaps the pair of some queries is equally likely.  The
    p-value is the share of assignments whose difference is at least as
    large in absolute value as the observed one.  Swapping a query whose two
    outcomes are equal changes nothing, so only the ``d`` queries that differ
    are permuted:

    - ``d <= exact_max``: all ``2^d`` assignments are enumerated (exact p);
    - otherwise ``n_permutations`` random assignments (seeded) give
      ``p = (1 + #{|T*| >= |T|}) / (1 + n_permutations)``, which never
      returns 0 (Phipson & Smyth 2010).

    Parameters
    ----------
    a, b : array-like of float, shape (n_queries,)
        Per-query outcomes of the two systems.
    statistic : {"mean", "median"} or callable, default="mean"
        A callable must accept ``(values, axis=1)`` on a 2-D array.
    n_permutations : int, default=10000
    seed : int, default=0
    exact_max : int, default=16
        Largest number of differing queries enumerated exactly.

    Returns
    -------
    RandomizationResult
        ``(difference, pvalue, n_permutations, exact)``.

    References
    ----------
    .. [1] R. A. Fisher, The Design of Experiments, 1935, §21.
    .. [2] B. Phipson and G. K. Smyth, "Permutation p-values should never be
       zero", Stat. Appl. Genet. Mol. Biol. 9(1), 2010.
    """
    _check_settings("paired_randomization_test", statistic=statistic, n_permutations=n_permutations, seed=seed,
                    exact_max=exact_max)
    a, b = _paired(a, b, "paired_randomization_test")
    stat = _statistic_of(statistic)
    observed = float(stat(a[None], axis=1)[0] - stat(b[None], axis=1)[0])
    differ = np.flatnonzero(a != b)
    d = differ.size
    exact = d <= exact_max
    total = 2**d if exact else int(n_permutations)
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_ELEMENTS // a.size)
    # Tolerance so that assignments equal to the observed one count despite rounding.
    tol = 1e-9 * max(1.0, abs(observed))
    extreme = 0
    for start in range(0, total, batch):
        stop = min(start + batch, total)
        if exact:
            codes = np.arange(start, stop, dtype=np.int64)
            swap_differ = ((codes[:, None] >> np.arange(d)) & 1).astype(bool)
        else:
            swap_differ = rng.random((stop - start, d)) < 0.5
        swap = np.zeros((stop - start, a.size), dtype=bool)
        swap[:, differ] = swap_differ
        a_perm = np.where(swap, b, a)
        b_perm = np.where(swap, a, b)
        diffs = stat(a_perm, axis=1) - stat(b_perm, axis=1)
        extreme += int(np.sum(np.abs(diffs) >= abs(observed) - tol))
    pvalue = extreme / total if exact else (1 + extreme) / (1 + total)
    return RandomizationResult(observed, float(pvalue), total, exact)


def _index_batches(n_items: int, n_resamples: int, seed: int, strata: Sequence[np.ndarray] | None = None):
    """Bootstrap draws in batches: ``(start, stop, idx)``, ``idx`` of shape (stop - start, n_items).

    Row r of ``idx`` holds the items of draw ``start + r``, drawn with replacement (seeded).
    With ``strata`` (arrays of item indices that partition the items) each stratum is
    resampled on its own, keeping its size, its draws in the columns of its members; one
    stratum of all items gives the unstratified draws, draw for draw.
    """
    rng = np.random.default_rng(seed)
    strata = [np.arange(n_items)] if strata is None else list(strata)
    batch = max(1, _BATCH_ELEMENTS // max(n_items, 1))
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        parts = [members[rng.integers(0, members.size, size=(stop - start, members.size))] for members in strata]
        yield start, stop, parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _resampled(values: np.ndarray, statistic: Callable, n_resamples: int, seed: int) -> np.ndarray:
    out = np.empty(n_resamples, dtype=np.float64)
    for start, stop, idx in _index_batches(values.size, n_resamples, seed):
        out[start:stop] = statistic(values[idx], axis=1)
    return out


def _check_bootstrap(values, name: str) -> np.ndarray:
    values = _floats(values, name, "values")
    if values.ndim != 1 or values.size == 0:
        raise DataError(f"{name}: values must be a non-empty 1-D array, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise DataError(f"{name}: values contain NaN or infinite values")
    return values


def bootstrap_ci(values, *, statistic: Callable | str = "mean", n_resamples: int = N_RESAMPLES,
                 confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of a per-query statistic.

    Queries are resampled with replacement ``n_resamples`` times (seeded);
    the interval is the ``(1 - confidence)/2`` and ``(1 + confidence)/2``
    quantiles of the resampled statistic (Efron & Tibshirani 1993, §13.3).

    Parameters
    ----------
    values : array-like, shape (n_queries,)
        Per-query values (ranks, hits, R-precisions...).
    statistic : {"mean", "median"} or callable, default="mean"
        A callable must accept ``(values, axis=1)`` on a 2-D array; e.g.
        ``lambda r, axis: 100 * np.mean(r <= 10, axis=axis)`` for R@10.
    n_resamples : int, default=2000
    confidence : float, default=0.95
    seed : int, default=0

    Returns
    -------
    (low, high) : tuple of float

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, An Introduction to the Bootstrap,
       Chapman & Hall, 1993.
    """
    _check_settings("bootstrap_ci", statistic=statistic, n_resamples=n_resamples, confidence=confidence, seed=seed)
    values = _check_bootstrap(values, "bootstrap_ci")
    return _percentile_interval(_resampled(values, _statistic_of(statistic), int(n_resamples), seed), confidence)


def metric_cis(ranks, *, ks: Sequence[int] = (1, 5, 10), n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
               seed: int = 0, groups: Sequence | np.ndarray | None = None) -> dict[str, tuple[float, float]]:
    """Bootstrap intervals of R@K (percent), median and mean rank from per-query ranks.

    All metrics use the same resampled query sets, so the intervals are those
    of one bootstrap (see :func:`bootstrap_ci`).

    Parameters
    ----------
    ranks : array-like of shape (n_queries,)
    ks : sequence of int, default=(1, 5, 10)
    n_resamples : int, default=2000
    confidence : float, default=0.95
    seed : int, default=0
    groups : array-like of shape (n_queries,), optional
        A cluster label per query.  Queries of one cluster are not
        independent — under the karpathy protocol the five captions of an
        image are five search queries about the same image — so whole
        clusters are resampled (the cluster bootstrap, Davison & Hinkley 1997,
        §3.8): each draw picks as many clusters as there are, with
        replacement, and every metric is computed over all their queries.
        With one query per cluster this is the ordinary bootstrap, draw for
        draw.

    Returns
    -------
    dict
        ``(low, high)`` of ``R@K`` for each K, ``median_rank`` and ``mean_rank``.

    References
    ----------
    .. [1] A. C. Davison and D. V. Hinkley, Bootstrap Methods and their
       Application, Cambridge University Press, 1997.
    """
    _check_settings("metric_cis", ks=ks, n_resamples=n_resamples, confidence=confidence, seed=seed)
    ranks = _check_bootstrap(ranks, "metric_cis")
    if groups is None:
        draws = _query_draws(ranks, ks, int(n_resamples), seed)
    else:
        groups = np.asarray(groups)
        if groups.shape != ranks.shape:
            raise DataError(f"metric_cis: groups must give one label per query ({ranks.size}), "
                             f"got shape {groups.shape}")
        draws = _cluster_draws(ranks, groups, ks, int(n_resamples), seed)
    return {name: _percentile_interval(d, confidence) for name, d in draws.items()}


def bootstrap_intervals(statistics: Mapping[str, Callable[[np.ndarray], np.ndarray]], n_items: int, *,
                        strata: Sequence | np.ndarray | None = None, n_resamples: int = N_RESAMPLES,
                        confidence: float = CONFIDENCE, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of several statistics of one sample, from the same draws.

    The draws are those of :func:`bootstrap_ci` (same seed, same items drawn); every statistic
    is computed on each of them, as :func:`metric_cis` does for the retrieval figures.

    Parameters
    ----------
    statistics : mapping of str to callable
        Name -> function of an (n_draws, n_items) array of item indices (row r: the items of
        one draw) returning the statistic of each draw, shape (n_draws,).  A draw on which a
        statistic is undefined (a correlation of a constant resample) may return NaN: the
        interval is then that of the other draws (the bootstrap distribution conditional on
        the statistic being defined).
    n_items : int
        Items in the sample.
    strata : array-like of shape (n_items,), optional
        A stratum label per item; each stratum is resampled on its own, keeping its size
        (the stratified bootstrap of several samples, Davison & Hinkley 1997, §3.2), e.g. positives and
        negatives of a detection task, so that every draw has both classes.
    n_resamples, confidence, seed : as :func:`bootstrap_ci`.

    Returns
    -------
    dict
        ``(low, high)`` of each statistic.

    Raises
    ------
    ValueError
        If a statistic is undefined on every draw.
    """
    _check_settings("bootstrap_intervals", statistics=statistics, n_items=n_items, n_resamples=n_resamples,
                    confidence=confidence, seed=seed)
    if n_items < 1:
        raise DataError(f"bootstrap_intervals: need at least one item, got {n_items}")
    members = None
    if strata is not None:
        strata = np.asarray(strata)
        if strata.shape != (n_items,):
            raise DataError(f"bootstrap_intervals: strata must give one label per item ({n_items}), "
                             f"got shape {strata.shape}")
        members = [np.flatnonzero(strata == label) for label in np.unique(strata)]
    draws = {name: np.empty(int(n_resamples)) for name in statistics}
    for start, stop, idx in _index_batches(int(n_items), int(n_resamples), seed, members):
        for name, statistic in statistics.items():
            draws[name][start:stop] = statistic(idx)
    out = {}
    for name, values in draws.items():
        values = values[~np.isnan(values)]
        if values.size == 0:
            raise DataError(f"bootstrap_intervals: {name} is undefined on every resample of the {n_items} items")
        out[name] = _percentile_interval(values, confidence)
    return out


def _percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    low, high = np.quantile(draws, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def interval_settings(resampled, *, n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
                      seed: int = 0) -> dict:
    """The ``"ci_settings"`` record written beside every ``"ci"`` of a results file.

    ``resampled`` says what was resampled (``"queries"``, ``"pairs"``... or one such word per
    task); the other keys are the bootstrap's settings.
    """
    _check_settings("interval_settings", n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {"method": "percentile bootstrap", "n_resamples": int(n_resamples), "confidence": float(confidence),
            "seed": int(seed), "resampled": resampled}


def _empty_draws(ks: Sequence[int], n_resamples: int) -> dict[str, np.ndarray]:
    return {name: np.empty(n_resamples) for name in [f"R@{k}" for k in ks] + ["median_rank", "mean_rank"]}


def _query_draws(ranks: np.ndarray, ks: Sequence[int], n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    draws = _empty_draws(ks, n_resamples)
    for start, stop, idx in _index_batches(ranks.size, n_resamples, seed):
        sample = ranks[idx]
        for k in ks:
            draws[f"R@{k}"][start:stop] = 100.0 * np.mean(sample <= k, axis=1)
        draws["median_rank"][start:stop] = np.median(sample, axis=1)
        draws["mean_rank"][start:stop] = np.mean(sample, axis=1)
    return draws


def _cluster_draws(ranks: np.ndarray, groups: np.ndarray, ks: Sequence[int], n_resamples: int,
                   seed: int) -> dict[str, np.ndarray]:
    # A draw is a multiplicity per cluster; each query then counts that many
    # times, so metrics are weighted sums over the queries sorted by rank and
    # clusters of unequal size need no ragged arrays.
    _, cluster = np.unique(groups, return_inverse=True)
    n_clusters = int(cluster.max()) + 1
    order = np.argsort(ranks, kind="stable")
    sorted_ranks, sorted_cluster = ranks[order], cluster[order]
    rng = np.random.default_rng(seed)
    draws = _empty_draws(ks, n_resamples)
    batch = max(1, _BATCH_ELEMENTS // max(ranks.size, n_clusters))
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        picks = rng.integers(0, n_clusters, size=(stop - start, n_clusters))
        flat = (np.arange(stop - start)[:, None] * n_clusters + picks).ravel()
        counts = np.bincount(flat, minlength=(stop - start) * n_clusters).reshape(stop - start, n_clusters)
        weights = counts[:, sorted_cluster]
        cumulative = np.cumsum(weights, axis=1)
        total = cumulative[:, -1]
        for k in ks:
            n_hits = int(np.searchsorted(sorted_ranks, k, side="right"))
            hits = cumulative[:, n_hits - 1] if n_hits else np.zeros_like(total)
            draws[f"R@{k}"][start:stop] = 100.0 * hits / total
        # The median of the expanded sample: its middle positions fall in the
        # first sorted query whose cumulative count exceeds them.
        middle = [np.sum(cumulative <= pos[:, None], axis=1) for pos in ((total - 1) // 2, total // 2)]
        draws["median_rank"][start:stop] = (sorted_ranks[middle[0]] + sorted_ranks[middle[1]]) / 2
        draws["mean_rank"][start:stop] = weights @ sorted_ranks / total
    return draws


def _check_pair(x, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = _paired(x, y, name)
    if x.size < 2:
        raise DataError(f"{name}: needs at least 2 systems")
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise DataError(f"{name}: undefined when one ranking gives every system the same value")
    return x, y


def spearman_rho(x, y) -> float:
    """Spearman's rank correlation of two scorings of the same systems.

    ρ is the Pearson correlation of the average ranks of ``x`` and ``y`` (ties share the mean
    rank), computed by :func:`scipy.stats.spearmanr`.  Unlike SciPy, which returns NaN with a
    warning, it raises when ρ is undefined.

    Raises
    ------
    ValueError
        If the inputs are not two 1-D arrays of one length >= 2 of finite numbers, or one of
        them gives every system the same value.
    """
    x, y = _check_pair(x, y, "spearman_rho")
    return float(spearmanr(x, y).statistic)


def kendall_tau(x, y) -> float:
    """Kendall's τ-b of two scorings of the same systems (ties corrected).

    τ_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)), with P concordant and Q discordant pairs,
    T_x pairs tied only in x, T_y tied only in y (Kendall 1945), computed by
    :func:`scipy.stats.kendalltau`.  Raises where SciPy returns NaN, as :func:`spearman_rho`.
    """
    x, y = _check_pair(x, y, "kendall_tau")
    return float(kendalltau(x, y).statistic)


def cohens_kappa(a, b) -> float:
    """Cohen's κ between two raters' labels of the same items.

    κ = (p_o - p_e) / (1 - p_e), p_o the observed agreement and
    p_e = Σ_c p_a(c) p_b(c) the agreement expected by chance (Cohen 1960), computed by
    :func:`sklearn.metrics.cohen_kappa_score`.  Unlike scikit-learn, which returns NaN with a
    warning, it raises when κ is undefined.

    Raises
    ------
    ValueError
        If the inputs differ in length or are empty, or κ is undefined
        (p_e = 1: both raters give every item the same single label).
    """
    try:
        a, b = np.asarray(a), np.asarray(b)
    except ValueError:  # ragged nested lists
        raise DataError("cohens_kappa: labels must be two non-empty 1-D arrays of one length, got ragged lists"
                        ) from None
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise DataError(f"cohens_kappa: labels must be two non-empty 1-D arrays of one length, "
                         f"got shapes {a.shape} and {b.shape}")
    if a.dtype.kind == "O" or b.dtype.kind == "O":  # dicts, None...: no labels to compare and sort
        raise DataError(f"cohens_kappa: labels must be numbers or strings, got {[*a[:3]]!r:.60}")
    if np.unique(np.concatenate([a, b])).size == 1:
        raise DataError("cohens_kappa: undefined when both raters use one and the same label throughout")
    return float(cohen_kappa_score(a, b))


def caption_images(result: Result) -> np.ndarray | None:
    """The pool image of each search query (caption), where ``result`` records it.

    From ``result.queries["caption_image"]`` (:func:`~kcca_desc.evaluate.evaluate_fitted` keeps
    it), else ``result.extras["caption_image"]`` (a benchmark's records); None without either.
    """
    result = checked_result(result, "caption_images")
    found = result.queries.get("caption_image", result.extras.get("caption_image"))
    return None if found is None else np.asarray(found, dtype=np.int64)


def bootstrap_groups(result: Result) -> dict[str, np.ndarray]:
    """The bootstrap clusters of each task of ``result``: the karpathy captions of one image are one.

    Under the hodosh protocol every query is its own cluster (the ordinary bootstrap: ``{}``);
    under the karpathy protocol the search queries are grouped by their image
    (``{"search": caption_images(result)}``), so that the five captions of an image are resampled
    together. :func:`add_confidence_intervals` uses it by default, and
    :func:`kcca_desc.report.compare.compare_runs` always.

    Raises
    ------
    DataError
        If a karpathy result does not record the image of each caption, or records one for
        another number of search queries.
    """
    result = checked_result(result, "bootstrap_groups")
    if result.protocol != "karpathy":
        return {}
    groups = caption_images(result)
    if groups is None:
        raise DataError(f"karpathy result {result.system!r} does not record the image of each caption "
                        "(caption_image), which the cluster bootstrap needs")
    if "search" in result.ranks and groups.size != len(result.ranks["search"]):
        raise DataError(f"result {result.system!r}: {groups.size} caption images for "
                        f"{len(result.ranks['search'])} search queries")
    return {"search": groups}


def add_confidence_intervals(result: Result, *, n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
                             seed: int = 0, groups: Mapping[str, Sequence] | None = None) -> Result:
    """Store bootstrap intervals of every metric in ``result.extras["ci"]`` (needs ``result.ranks``).

    Every recall of the result has one: R@1, R@5, R@10 and any further cut-off it was evaluated
    with (``ks=(1, 5, 10, 20)`` of :func:`~kcca_desc.evaluate.harness.evaluate_fitted`).

    ``groups`` maps a task to a cluster label per query (see :func:`metric_cis`). By default
    (None) they are :func:`bootstrap_groups`: under the karpathy protocol the five captions of
    an image are resampled together (search queries clustered by the image the result records
    in ``queries["caption_image"]``), as ``python -m kcca_desc.compare`` and the report do;
    under hodosh every query is resampled on its own. ``groups={}`` resamples every query on
    its own under either protocol. ``extras["ci_settings"]["resampled"]`` says which was done
    (``"clusters"`` or ``"queries"`` per task).

    Returns
    -------
    Result
        ``result`` itself, changed in place (returned for chaining; copy it first,
        ``copy.deepcopy(result)``, to keep one without intervals).

    Raises
    ------
    ParameterError
        If ``result`` is no :class:`~kcca_desc.evaluate.results.Result` (``None``, a result's dict)
        or a setting is of the wrong type or range, before any resampling.
    DataError
        If ``result`` lacks per-query ranks, or, with the default groups, is a karpathy result
        without the image of each caption (pass ``groups`` then).
    """
    result = checked_result(result, "add_confidence_intervals")
    _check_settings("add_confidence_intervals", n_resamples=n_resamples, confidence=confidence, seed=seed,
                    groups=groups)
    missing = [t for t in TASKS if t not in result.ranks]
    if missing:
        raise DataError(f"result of {result.system!r} has no per-query ranks for {', '.join(missing)}")
    groups = bootstrap_groups(result) if groups is None else dict(groups)
    unknown = set(groups) - set(TASKS)
    if unknown:
        raise ParameterError(f"groups: unknown task(s) {sorted(unknown)}; expected some of {list(TASKS)}")
    result.extras["ci"] = {
        task: {name: list(interval) for name, interval in
               metric_cis(result.ranks[task], ks=recall_ks(getattr(result, task)), n_resamples=n_resamples,
                          confidence=confidence, seed=seed, groups=groups.get(task)).items()}
        for task in TASKS
    }
    result.extras["ci_settings"] = interval_settings({t: "clusters" if t in groups else "queries" for t in TASKS},
                                                     n_resamples=n_resamples, confidence=confidence, seed=seed)
    return result


def _check_paired(owner: str, result: object, baseline: object, n_permutations: object, seed: object) -> None:
    """The arguments of ``owner`` (:func:`paired_tests`, :func:`add_significance`), checked before any test."""
    checked_result(result, owner, name="result")
    checked_result(baseline, owner, name="baseline")
    _check_settings(owner, n_permutations=n_permutations, seed=seed)


def paired_tests(result: Result, baseline: Result, *, n_permutations: int = N_PERMUTATIONS,
                 seed: int = 0) -> dict[str, dict[str, dict]]:
    """Paired tests of ``result`` against ``baseline`` on their per-query ranks.

    R@K: McNemar's test of the hits ``rank <= K`` (:func:`mcnemar_test`); median and mean
    rank: Fisher's paired randomisation test of the statistic
    (:func:`paired_randomization_test`, seeded). Both results must come from the same view
    (same queries in the same order).

    Returns
    -------
    dict
        ``{task: {metric: {"p_value", "test", "difference"}}}`` for the metrics of
        :data:`~kcca_desc.evaluate.metrics.METRICS` and the further ``R@K`` either result was
        evaluated with (each with its ``paired_test``), ``difference`` being ``result``'s figure
        minus ``baseline``'s.
    """
    _check_paired("paired_tests", result, baseline, n_permutations, seed)
    out: dict[str, dict[str, dict]] = {}
    for task in TASKS:
        if task not in result.ranks or task not in baseline.ranks:
            raise DataError(f"{result.system!r} vs {baseline.system!r}: per-query {task} ranks are missing")
        ours, theirs = result.ranks[task], baseline.ranks[task]
        if ours.shape != theirs.shape:
            raise DataError(f"{result.system!r} vs {baseline.system!r}: {task} has {ours.size} and "
                             f"{theirs.size} queries; compare results of one view")
        ks = sorted({*recall_ks(getattr(result, task)), *recall_ks(getattr(baseline, task))})
        ours_m, theirs_m = retrieval_metrics(ours, ks), retrieval_metrics(theirs, ks)
        names = [*(f"R@{k}" for k in ks), *(m for m in METRICS if not m.startswith("R@"))]
        tests = {}
        for metric, entry in ((m, metric_entry(m)) for m in names):
            if metric.startswith("R@"):
                k = int(metric[2:])
                p = mcnemar_test(ours <= k, theirs <= k).pvalue
            else:
                p = paired_randomization_test(ours, theirs, statistic=metric.split("_")[0],
                                              n_permutations=n_permutations, seed=seed).pvalue
            tests[metric] = {"p_value": p, "test": entry.paired_test, "difference": ours_m[metric] - theirs_m[metric]}
        out[task] = tests
    return out


def add_significance(result: Result, baseline: Result, *, n_permutations: int = N_PERMUTATIONS,
                     seed: int = 0) -> Result:
    """Store p-values of ``result`` against ``baseline`` in ``result.extras["significance"]``.

    The p-values of :func:`paired_tests` (McNemar for R@K, paired randomisation for median
    and mean rank), by task and metric.  Both results must come from the same view (same
    queries in the same order).

    Returns
    -------
    Result
        ``result`` itself, changed in place (returned for chaining).

    Raises
    ------
    ParameterError
        If ``result`` or ``baseline`` is no :class:`~kcca_desc.evaluate.results.Result`, or
        ``n_permutations`` or ``seed`` no whole number of its range, before any test.
    DataError
        If the two results lack per-query ranks or come from different views.
    """
    _check_paired("add_significance", result, baseline, n_permutations, seed)
    tests = paired_tests(result, baseline, n_permutations=n_permutations, seed=seed)
    result.extras["significance"] = {task: {metric: test["p_value"] for metric, test in by_metric.items()}
                                     for task, by_metric in tests.items()}
    result.extras["significance_baseline"] = baseline.system
    return result
