"""Fractional ("average") ranking along the last axis, vectorised over rows."""

from __future__ import annotations

import numpy as np

__all__ = ["average_ranks"]


def _tied_rows(ordered: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Average ranks of rows that contain ties, from their sorted values and sort order."""
    rows, n = ordered.shape
    position = np.broadcast_to(np.arange(n), (rows, n))
    new_group = np.ones((rows, n), dtype=bool)
    new_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    # First sorted position of each item's group, and one past its last.
    start = np.maximum.accumulate(np.where(new_group, position, 0), axis=1)
    last_of_group = np.ones((rows, n), dtype=bool)
    last_of_group[:, :-1] = new_group[:, 1:]
    end = np.minimum.accumulate(np.where(last_of_group, position + 1, n)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, n), dtype=np.float64)
    np.put_along_axis(ranks, order, (start + 1 + end) / 2, axis=1)
    return ranks


def average_ranks(x: np.ndarray, descending: bool = False) -> np.ndarray:
    """1-based ranks of each row of ``x`` along its last axis, ties sharing their mean rank.

    Equal values that occupy sorted positions ``s+1 .. e`` all get
    ``(s + 1 + e) / 2`` — the ``method="average"`` of
    :func:`scipy.stats.rankdata`.  One argsort serves all rows, and rows
    without ties (the usual case for real-valued scores) skip the tie pass.

    Parameters
    ----------
    x : ndarray of shape (..., n)
    descending : bool, default=False
        Rank 1 for the largest value instead of the smallest.
    """
    x = np.asarray(x)
    shape = x.shape
    flat = x.reshape(-1, shape[-1])
    keys = -flat if descending else flat
    order = np.argsort(keys, axis=1)
    ordered = np.take_along_axis(keys, order, axis=1)
    ranks = np.empty(flat.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, np.arange(1.0, shape[-1] + 1), axis=1)
    tied = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if tied.size:
        ranks[tied] = _tied_rows(ordered[tied], order[tied])
    return ranks.reshape(shape)
