"""Borda-count fusion of the rankings of several models.

Hodosh, Young & Hockenmaier (2013, Section 4.1.3) do not pick one KCCA setting: for each
task they keep 15 (n, κ) settings chosen on dev (:func:`kcca_desc.methods.selection.select_models`)
and combine their test rankings by Borda count, breaking ties by the median of each item's ranks.

References
----------
.. [1] M. Hodosh, P. Young and J. Hockenmaier, "Framing image description as a
   ranking task: data, models and evaluation metrics", JAIR 47, 853-899, 2013.
.. [2] J. C. de Borda, "Mémoire sur les élections au scrutin", Histoire de
   l'Académie Royale des Sciences, 1781.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._core.errors import DataError, ParameterError
from .._core.profile import profiled
from ..evaluate.scores import average_ranks

__all__ = ["borda_fuse"]

# Rows (queries) fused at once: bounds the (n_models, chunk, N) rank stack.
_CHUNK_ELEMENTS = 4 * 2**20


def _as_query_rows(matrix: np.ndarray, axis: int) -> np.ndarray:
    """``matrix`` viewed with candidates on the last axis."""
    return np.moveaxis(matrix, axis, -1)


def _check_inputs(matrices: Sequence, axis: int, kind: str) -> list[np.ndarray]:
    if kind not in ("scores", "ranks"):
        raise ParameterError(f"borda_fuse: kind must be 'scores' or 'ranks', got {kind!r}")
    if axis not in (0, 1, -1, -2):
        raise ParameterError(f"borda_fuse: axis must be 0 (rank each column) or 1 (rank each row), got {axis!r}")
    arrays = [np.asarray(m) for m in matrices]
    if not arrays:
        raise DataError("borda_fuse: no matrices to fuse")
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.ndim != 2 or a.shape != shape:
            raise DataError(f"borda_fuse: matrix {i} has shape {a.shape}, expected 2-D {shape}")
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise ParameterError(f"borda_fuse: matrix {i} must hold real numbers, got dtype {a.dtype}")
        if not np.isfinite(a).all():
            raise DataError(f"borda_fuse: matrix {i} contains NaN or infinite values")
        if kind == "ranks":
            n = shape[axis]
            if a.min() < 1 or a.max() > n or not np.all(2 * a == np.round(2 * a)):
                raise DataError(
                    f"borda_fuse: rank matrix {i} must hold ranks in [1, {n}] that are whole or half numbers"
                )
    return arrays


def borda_fuse(matrices: Sequence, *, axis: int = 1, kind: str = "scores") -> np.ndarray:
    """Fuse the rankings of several models by Borda count (Hodosh et al. 2013, Section 4.1.3).

    Each model ranks the ``N`` candidates of every query (the lines along
    ``axis``).  The item at rank ``r`` (1-based) gets ``N - r`` points; points
    are summed over the ``M`` models.  Ties in the total are broken by the
    median of the item's ranks across models, lower median first.  The
    result is a score matrix (higher = better) that encodes this order::

        fused = Σ_m (N - r_m) - median_m(r_m) / (2N + 1)

    Totals differ by at least 1/2 between items that are not tied, and the
    median term differs by less than N / (2N + 1) < 1/2, so the median only
    orders items with equal totals.  Items with equal total and equal median
    get equal fused scores (the harness then ranks them pessimistically).

    Within one model, tied scores get the mean of the ranks they span
    (fractional ranking), so tied items receive equal points.

    Parameters
    ----------
    matrices : sequence of array-like of shape (n_images, n_captions)
        One matrix per model: scores (higher = better) or, with
        ``kind="ranks"``, 1-based ranks along ``axis`` (1 = best).  A model
        may appear several times; it then votes several times.
    axis : {1, 0}, default=1
        ``1`` ranks the captions of each image (annotation); ``0`` ranks the
        images of each caption (search).
    kind : {"scores", "ranks"}, default="scores"

    Returns
    -------
    fused : ndarray of shape (n_images, n_captions), float64
        Higher = better along ``axis``.

    Raises
    ------
    ValueError
        If the matrices are empty, differ in shape, hold NaN/inf, or rank
        matrices hold values that are not ranks in [1, N].

    See Also
    --------
    kcca_desc.methods.selection.select_models : the 15 dev-selected settings whose rankings are fused.

    References
    ----------
    .. [1] Hodosh, Young & Hockenmaier, JAIR 47, 2013, Section 4.1.3 ("The systems").

    Examples
    --------
    Two models rank three captions of one image as (1, 2, 3) and (3, 1, 2):
    points 2, 3, 1; medians 2, 1.5, 2.5.

    >>> borda_fuse([[[3.0, 2.0, 1.0]], [[1.0, 3.0, 2.0]]], axis=1)
    array([[1.71428571, 2.78571429, 0.64285714]])
    """
    arrays = _check_inputs(matrices, axis, kind)
    n_models = len(arrays)
    views = [_as_query_rows(a, axis) for a in arrays]
    n_queries, n = views[0].shape
    fused = np.empty((n_queries, n), dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // max(n_models * n, 1))
    # Unwatched: a scalable system fuses one block of queries at a time, many times a second.
    with profiled("fusion", watch=False):
        for start in range(0, n_queries, chunk):
            stop = min(start + chunk, n_queries)
            block = np.stack([v[start:stop] for v in views]).astype(np.float64, copy=False)
            ranks = average_ranks(block, descending=True) if kind == "scores" else block
            total = (n - ranks).sum(axis=0)
            fused[start:stop] = total - np.median(ranks, axis=0) / (2 * n + 1)
    return np.moveaxis(fused, -1, axis)
