"""Ranks of gold items and the retrieval metrics built on them.

R@K, median and mean rank of the original (gold) item, as in Hodosh, Young &
Hockenmaier (2013), Section 4.3.1.

A score matrix has shape ``(n_images, n_captions)`` and higher means more
related.  Image annotation ranks the captions of each row; image search ranks
the images of each column.

Rank convention
---------------
Ranks are 1-based.  The rank of a query is the rank of its *best-ranked* gold
item, and ties are broken *pessimistically*: every non-gold candidate whose
score equals the best gold score is counted as ranked above it::

    rank(q) = 1 + #{c not gold for q : s(q, c) >= max_{g gold for q} s(q, g)}

Gold items tied with each other do not push one another down (only the best
gold item counts).  A constant score matrix therefore gives every query the
worst rank ``n_candidates - n_gold + 1``, never a lucky rank 1, so a system
cannot gain from ties.  The paper does not say how it breaks ties; this rule
is our choice (``docs/design.md``).

References
----------
.. [1] M. Hodosh, P. Young and J. Hockenmaier, "Framing image description as a
   ranking task: data, models and evaluation metrics", JAIR 47, 853-899, 2013.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .._core.errors import DataError, ParameterError
from ..data.dataset import RetrievalView
from .scores import DirectionalScores

__all__ = ["gold_ranks", "top_candidates", "retrieval_metrics", "evaluate_scores", "TASKS", "METRIC_KEYS",
           "REQUIRED_KS", "recall_ks"]

#: The two retrieval directions: annotation ranks captions for an image, search images for a caption.
TASKS = ("annotation", "search")
#: The metrics of each task that every results file stores, recomputable from its per-query gold ranks.
METRIC_KEYS = ("R@1", "R@5", "R@10", "median_rank", "mean_rank", "n_queries")
#: The recall cut-offs of :data:`METRIC_KEYS`; an evaluation may add further ones (``R@20``...).
REQUIRED_KS = (1, 5, 10)
_RECALL = re.compile(r"R@([1-9][0-9]*)")


def recall_ks(metrics) -> tuple[int, ...]:
    """The cut-offs K of the ``R@K`` keys of one task's metrics, in increasing order.

    >>> recall_ks({"R@10": 30.0, "R@1": 8.0, "R@20": 41.0, "R@5": 21.0, "median_rank": 34.0})
    (1, 5, 10, 20)
    """
    return tuple(sorted(int(m.group(1)) for m in map(_RECALL.fullmatch, metrics) if m))

# Temporaries of one chunk (the block, its comparison mask) stay near this size.
_CHUNK_BYTES = 64 * 2**20


def _describe(method: str | None) -> str:
    return f"method {method!r}: " if method else ""


def _flatten_gold(gold: Sequence, n_queries: int, n_candidates: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-query gold index arrays as (sorted unique columns, query offsets)."""
    if len(gold) != n_queries:
        raise DataError(f"{what}: {n_queries} queries but gold items for {len(gold)}")
    if not n_queries:
        raise DataError(f"{what}: there are no queries (scores of shape (0, {n_candidates}))")
    columns, offsets = [], np.zeros(n_queries + 1, dtype=np.int64)
    for q, g in enumerate(gold):
        g = np.unique(np.asarray(g).ravel())
        if g.size == 0:
            raise DataError(f"{what}: query {q} has no gold item")
        if not np.issubdtype(g.dtype, np.integer):
            raise ParameterError(f"{what}: gold items of query {q} must be integer indices, got {g.dtype}")
        if g[0] < 0 or g[-1] >= n_candidates:
            raise DataError(
                f"{what}: gold item of query {q} out of range [0, {n_candidates}): {g[0] if g[0] < 0 else g[-1]}"
            )
        columns.append(g)
        offsets[q + 1] = offsets[q] + g.size
    return np.concatenate(columns), offsets


def _auto_chunk(n_candidates: int) -> int:
    return max(1, _CHUNK_BYTES // (8 * max(n_candidates, 1)))


def gold_ranks(scores, gold: Sequence, *, chunk_size: int | None = None, method: str | None = None) -> np.ndarray:
    """Rank of the best-ranked gold item of each query (pessimistic ties).

    ``rank(q) = 1 + #{c not in gold[q] : scores[q, c] >= max_{g in gold[q]} scores[q, g]}``

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_candidates)
        Query ``q`` is row ``q``; higher is better.  May be a ``numpy.memmap``
        or a strided view (e.g. the transpose of a score matrix): it is read
        ``chunk_size`` rows at a time and never copied whole.
    gold : sequence of array-like of int
        ``gold[q]`` are the candidate indices that are correct for query
        ``q`` (at least one; repeats are ignored).
    chunk_size : int, optional
        Queries processed at once.  By default about 64 MB of float64
        temporaries per chunk, whatever the matrix size.
    method : str, optional
        Name of the system that produced ``scores``, used in error messages.

    Returns
    -------
    ranks : ndarray of shape (n_queries,), dtype int64
        1-based ranks.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D, contains NaN or infinite values (naming the
        method and the first bad query), or ``gold`` does not match it.

    See Also
    --------
    retrieval_metrics : R@K, median and mean rank of these ranks.
    evaluate_scores : both tasks of a retrieval view.

    Examples
    --------
    >>> gold_ranks(np.array([[0.9, 0.5, 0.5], [0.2, 0.2, 0.1]]), [[1], [0]])
    array([3, 2])
    """
    what = f"{_describe(method)}gold_ranks"
    if not hasattr(scores, "shape") or not hasattr(scores, "dtype"):
        scores = np.asarray(scores)
    if scores.ndim != 2:
        raise DataError(f"{what}: scores must be 2-D (queries x candidates), got shape {scores.shape}")
    if not (np.issubdtype(scores.dtype, np.floating) or np.issubdtype(scores.dtype, np.integer)):
        raise ParameterError(f"{what}: scores must be real numbers, got dtype {scores.dtype}")
    n_queries, n_candidates = scores.shape
    columns, offsets = _flatten_gold(gold, n_queries, n_candidates, what)
    if chunk_size is None:
        chunk_size = _auto_chunk(n_candidates)
    elif int(chunk_size) < 1:
        raise ParameterError(f"{what}: chunk_size must be >= 1, got {chunk_size}")
    chunk_size = int(chunk_size)
    query_of_gold = np.repeat(np.arange(n_queries), np.diff(offsets))
    ranks = np.empty(n_queries, dtype=np.int64)
    for start in range(0, n_queries, chunk_size):
        stop = min(start + chunk_size, n_queries)
        block = np.asarray(scores[start:stop])
        if not np.isfinite(block).all():
            bad = start + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise DataError(f"{what}: scores of query {bad} contain NaN or infinite values")
        lo, hi = offsets[start], offsets[stop]
        gold_scores = block[query_of_gold[lo:hi] - start, columns[lo:hi]]
        best = np.maximum.reduceat(gold_scores, offsets[start:stop] - lo)
        at_least_best = (block >= best[:, None]).sum(axis=1)
        gold_at_least_best = np.add.reduceat(gold_scores >= best[query_of_gold[lo:hi] - start],
                                             offsets[start:stop] - lo)
        ranks[start:stop] = 1 + at_least_best - gold_at_least_best
    return ranks


def top_candidates(scores, gold: Sequence, *, k: int = 10, chunk_size: int | None = None) -> np.ndarray:
    """The ``k`` best-scored candidates of each query, best first, ties broken as :func:`gold_ranks`.

    Candidates are sorted by decreasing score; among equal scores the non-gold ones come first
    (then by index), the pessimistic rule of :func:`gold_ranks`, so a query of rank ``r <= k``
    has its first gold item at position ``r`` of its row.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_candidates)
        Higher is better; read ``chunk_size`` rows at a time like :func:`gold_ranks`.
    gold : sequence of array-like of int
        The gold candidates of each query.
    k : int, default=10
        Candidates kept per query (all of them when there are fewer).
    chunk_size : int, optional
        Queries sorted at once; by default about 64 MB of temporaries per chunk.

    Returns
    -------
    ndarray of shape (n_queries, min(k, n_candidates)), dtype int64
        Candidate (pool) indices.

    Examples
    --------
    >>> top_candidates(np.array([[0.9, 0.5, 0.5], [0.2, 0.2, 0.1]]), [[1], [0]], k=2)
    array([[0, 2],
           [1, 0]])
    """
    if int(k) != k or k < 1:
        raise ParameterError(f"top_candidates: k must be a positive integer, got {k!r}")
    if not hasattr(scores, "shape") or not hasattr(scores, "dtype"):
        scores = np.asarray(scores)
    if scores.ndim != 2:
        raise DataError(f"top_candidates: scores must be 2-D (queries x candidates), got shape {scores.shape}")
    n_queries, n_candidates = scores.shape
    columns, offsets = _flatten_gold(gold, n_queries, n_candidates, "top_candidates")
    k = min(int(k), n_candidates)
    chunk_size = _auto_chunk(n_candidates) if chunk_size is None else max(1, int(chunk_size))
    query_of_gold = np.repeat(np.arange(n_queries), np.diff(offsets))
    top = np.empty((n_queries, k), dtype=np.int64)
    for start in range(0, n_queries, chunk_size):
        stop = min(start + chunk_size, n_queries)
        block = np.asarray(scores[start:stop], dtype=np.float64)
        is_gold = np.zeros(block.shape, dtype=bool)
        lo, hi = offsets[start], offsets[stop]
        is_gold[query_of_gold[lo:hi] - start, columns[lo:hi]] = True
        # Only candidates scoring at least the k-th best score can be in a top list: take the
        # `width` best of every row (every such candidate, ties included), then sort those alone.
        kth_best = np.partition(block, n_candidates - k, axis=1)[:, n_candidates - k]
        width = int((block >= kth_best[:, None]).sum(axis=1).max())
        if width < n_candidates:
            part = np.argpartition(-block, width - 1, axis=1)[:, :width]
        else:
            part = np.broadcast_to(np.arange(n_candidates), block.shape)
        rows = np.arange(stop - start)[:, None]
        # lexsort's last key is the primary one: score descending, then non-gold first, then index.
        order = np.lexsort((part, is_gold[rows, part], -block[rows, part]), axis=-1)
        top[start:stop] = np.take_along_axis(part, order[:, :k], axis=1)
    return top


def retrieval_metrics(ranks, ks: Sequence[int] = (1, 5, 10)) -> dict[str, float | int]:
    """Recall at K, median and mean rank of per-query gold ranks.

    ``R@K = 100 * #{q : rank(q) <= K} / n_queries``, a percentage as in
    Hodosh et al. (2013), Section 4.3.1.

    Parameters
    ----------
    ranks : array-like of int, shape (n_queries,)
        1-based ranks, e.g. from :func:`gold_ranks`.
    ks : sequence of int, default=(1, 5, 10)
        Cut-offs K >= 1.

    Returns
    -------
    dict
        ``"R@K"`` for each K (percent, 0-100), ``"median_rank"``,
        ``"mean_rank"`` and ``"n_queries"``.
    """
    ranks = np.asarray(ranks)
    if ranks.ndim != 1 or ranks.size == 0:
        raise DataError(f"retrieval_metrics: ranks must be a non-empty 1-D array, got shape {ranks.shape}")
    if not np.issubdtype(ranks.dtype, np.integer):
        if not (np.isfinite(ranks).all() and np.all(ranks == np.round(ranks))):
            raise DataError("retrieval_metrics: ranks must be whole numbers")
        ranks = ranks.astype(np.int64)
    if ranks.min() < 1:
        raise DataError(f"retrieval_metrics: ranks are 1-based, got {ranks.min()}")
    out: dict[str, float | int] = {}
    for k in ks:
        if int(k) != k or k < 1:
            raise ParameterError(f"retrieval_metrics: cut-off K must be a positive integer, got {k!r}")
        out[f"R@{int(k)}"] = float(100.0 * np.mean(ranks <= k))
    out["median_rank"] = float(np.median(ranks))
    out["mean_rank"] = float(np.mean(ranks))
    out["n_queries"] = int(ranks.size)
    return out


def _task_scores(scores) -> tuple[object, object]:
    if isinstance(scores, DirectionalScores):
        return scores.annotation, scores.search
    return scores, scores


def evaluate_scores(scores, view: RetrievalView, *, ks: Sequence[int] = (1, 5, 10),
                    method: str | None = None, chunk_size: int | None = None, top_k: int = 0) -> dict[str, dict]:
    """Annotation and search metrics of a score matrix over a retrieval view.

    Parameters
    ----------
    scores : array-like of shape (n_images, n_captions) or DirectionalScores
        ``scores[i, j]`` scores pool image ``i`` against pool caption ``j``.
        A :class:`~kcca_desc.methods.base.DirectionalScores` gives one matrix
        per task.  Memmaps are read in chunks.
    view : RetrievalView
        The pools and gold items (``annotation_gold``, ``search_gold``).
    ks : sequence of int, default=(1, 5, 10)
        Recall cut-offs.
    method : str, optional
        System name for error messages.
    chunk_size : int, optional
        Queries per chunk, see :func:`gold_ranks`.
    top_k : int, default=0
        With ``top_k > 0``, also the ``top_k`` best candidates of each query
        (:func:`top_candidates`).

    Returns
    -------
    dict
        ``{"annotation": {...}, "search": {...}}``, each with the keys of
        :func:`retrieval_metrics` plus ``"ranks"``, the per-query ranks
        (annotation: one per image; search: one per caption), and ``"top"``
        with ``top_k``.

    Raises
    ------
    ValueError
        If a matrix's shape does not match the view, or it holds NaN/inf.
    """
    shape = (view.n_images, view.n_captions)
    if not view.n_images:
        raise DataError(f"{_describe(method)}the {view.protocol} view of {view.dataset}:{view.split} has no queries: "
                        f"the split {view.split!r} holds no image")
    out = {}
    for task, matrix in zip(TASKS, _task_scores(scores)):
        if not hasattr(matrix, "shape"):
            matrix = np.asarray(matrix)
        if tuple(matrix.shape) != shape:
            raise DataError(
                f"{_describe(method)}{task} scores have shape {tuple(matrix.shape)}, but the "
                f"{view.protocol} view of {view.dataset}:{view.split} needs {shape} (images x captions)"
            )
        queries, gold = (matrix, view.annotation_gold) if task == "annotation" else (matrix.T, view.search_gold)
        ranks = gold_ranks(queries, gold, chunk_size=chunk_size, method=method)
        out[task] = {**retrieval_metrics(ranks, ks), "ranks": ranks}
        if top_k:
            out[task]["top"] = top_candidates(queries, gold, k=top_k, chunk_size=chunk_size)
    return out
