"""Score matrices, the neutral type between the systems and their evaluation.

Every retrieval system (:mod:`kcca_desc.methods`) produces an affinity
``f(i, s)`` of images against captions, an array of shape
``(n_images, n_captions)`` where higher means more related, or a
:class:`DirectionalScores` when the two tasks are scored differently.  The
evaluation (:mod:`kcca_desc.evaluate`) and the other tasks
(:mod:`kcca_desc.tasks`) consume these and never import a system.  This module
also holds the two score utilities both sides share: the cosine of two
embeddings and fractional ("average") ranking.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

# The error tree's root module imports nothing, so this module stays neutral (pyproject.toml).
from ..kernels.errors import DataError

__all__ = ["DirectionalScores", "Scorer", "cosine_scores", "average_ranks"]


class DirectionalScores(NamedTuple):
    """Separate score matrices for the two directions, both ``(n_images, n_captions)``.

    Some systems score the two tasks differently: the nearest-neighbour
    baseline ranks captions by text similarity to the image's nearest training
    item but ranks images by image similarity; Borda fusion selects different
    models per task.  ``annotation`` ranks each row's captions, ``search``
    ranks each column's images.
    """

    annotation: np.ndarray
    search: np.ndarray


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores images against captions: a fitted retrieval system.

    The evaluation and the tasks need only this method of a system, so they
    type against this protocol instead of importing :mod:`kcca_desc.methods`.
    """

    def score(self, images: Any, captions: Sequence[str]) -> np.ndarray | DirectionalScores:
        """Affinity of every image (rows) against every caption (columns); higher is closer."""
        ...


def cosine_scores(a: np.ndarray, b: np.ndarray, *, eps: float = 1e-12) -> np.ndarray:
    """Cosine similarity between the rows of ``a`` (n, d) and ``b`` (m, d).

    Zero rows get similarity 0 rather than NaN, and so do rows of norm at most ``eps`` times the
    largest row norm of ``a`` and ``b`` (or ``eps`` when that is below 1): such a row is rounding
    noise of a zero row, not a direction.  (A caption without a word projects to zero in exact
    arithmetic, but to about 1e-17 when its centred kernel row is -column means + grand mean of a
    combined kernel; scaled up to unit length, that noise ranked every image in one fixed order
    instead of tying them.)  Other rows are divided by their norm exactly.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise DataError(f"cosine_scores: incompatible shapes {a.shape} and {b.shape}")
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    largest = max((float(n.max()) for n in (na, nb) if n.size), default=0.0)
    tiny = eps * max(1.0, largest)
    # Dividing by infinity makes a negligible row exactly zero, so its scores tie exactly.
    return (a / np.where(na > tiny, na, np.inf)) @ (b / np.where(nb > tiny, nb, np.inf)).T


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
