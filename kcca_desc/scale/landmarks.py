"""Landmarks of the Nyström feature map: which m items every kernel column is computed against.

With landmarks ``L`` (m items) and ``W = K[L, L]``, the Nyström approximation
(Williams & Seeger 2001) is ``K ~= K[:, L] W^+ K[L, :] = G G'`` with the
feature map ``g(x) = k(x, L) T``, ``T = Q diag(w)^(-1/2)`` over the positive
eigenpairs ``W = Q diag(w) Q'``.  ``g`` is defined for any item, so training
rows, dev and test items are all mapped by kernel columns against the same m
landmarks, block by block, and nothing n x n is formed.

Pivoted incomplete Cholesky (Fine & Scheinberg 2001; Bach & Jordan 2002) is the
same approximation with the landmarks chosen greedily: its factor satisfies
``G G' = K[:, P] K[P, P]^(-1) K[P, :]`` for its pivots ``P``.  The choices of
:data:`LANDMARKS`:

``pivots``
    Greedy incomplete-Cholesky pivots among a seeded uniform sample of
    ``oversample * m`` rows (all rows when the sample would hold them all).
    Only the m pivot columns of the sample's kernel are evaluated.
``uniform``
    A seeded uniform sample of m distinct items.

Which one the solver uses by default was decided by dev retrieval at equal rank
(``docs/design.md``, "Landmarks of the large-n solver").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import linalg

from ..kcca import CallableKernelColumns, incomplete_cholesky
from .._core.registry import Registry
from .views import KernelView, take

__all__ = ["LANDMARKS", "NystromMap", "uniform_landmarks", "pivot_landmarks", "nystrom_map", "nystrom_transform"]


def _distinct_rows(view: KernelView, rows: np.ndarray) -> np.ndarray:
    """The first row of each distinct item among ``rows`` (caption-level views repeat items)."""
    _, first = np.unique(view.item_numbers(rows), return_index=True)
    return rows[np.sort(first)]


def uniform_landmarks(view: KernelView, m: int, rng: np.random.Generator, *, oversample: float = 4.0) -> np.ndarray:
    """``m`` rows of distinct items drawn uniformly without replacement (sorted)."""
    rows = _distinct_rows(view, rng.permutation(view.n_samples))
    return np.sort(rows[:m])


def pivot_landmarks(view: KernelView, m: int, rng: np.random.Generator, *, oversample: float = 4.0) -> np.ndarray:
    """Greedy incomplete-Cholesky pivots of the kernel of a uniform sample of ``oversample * m`` rows.

    The sample is all rows when ``oversample * m >= n``: the pivots are then exactly those of
    :func:`~kcca_desc.kcca.incomplete_cholesky` on the whole (uncentred) kernel, which the
    in-memory low-rank :class:`~kcca_desc.kcca.KCCA` uses.
    """
    n = view.n_samples
    size = int(min(n, max(m, np.ceil(oversample * m))))
    sample = np.arange(n) if size == n else np.sort(rng.choice(n, size=size, replace=False))
    sample_items = view.rows(sample)
    oracle = CallableKernelColumns(
        sample.size,
        lambda idx: view.block(sample, take(sample_items, np.asarray(idx))),
        lambda: view.diagonal(sample),
    )
    _, pivots = incomplete_cholesky(oracle, tol=0.0, rank=m)
    return sample[pivots]


#: Name -> ``select(view, m, rng, oversample) -> rows`` of every landmark choice.
LANDMARKS: Registry[Callable[..., np.ndarray]] = Registry("landmark choice")
LANDMARKS.register("pivots", pivot_landmarks, help="greedy incomplete-Cholesky pivots of a uniform sample")
LANDMARKS.register("uniform", uniform_landmarks, help="a uniform sample of distinct items")


@dataclass(frozen=True, eq=False)
class NystromMap:
    """The feature map ``g(x) = k(x, L) T`` of one view (picklable, small: m items and m x r).

    Attributes
    ----------
    landmarks : items
        The landmark items ``L``.
    rows : ndarray of int
        The training rows they were taken from.
    transform : ndarray of shape (m, r)
        ``T = Q diag(w)^(-1/2)`` over the ``r`` eigenvalues of ``W`` above ``m eps max(w)``.
    """

    landmarks: Any
    rows: np.ndarray
    transform: np.ndarray

    @property
    def rank(self) -> int:
        return self.transform.shape[1]

    def features(self, view: KernelView, rows: np.ndarray) -> np.ndarray:
        """``g`` of ``rows`` of ``view``, shape (len(rows), r)."""
        return view.block(rows, self.landmarks) @ self.transform


def nystrom_map(view: KernelView, rows: np.ndarray) -> NystromMap:
    """The Nyström feature map of ``view`` on the landmarks at ``rows`` (:func:`nystrom_transform`)."""
    rows = np.asarray(rows, dtype=np.intp)
    landmarks = view.rows(rows)
    return NystromMap(landmarks, rows, nystrom_transform(view.block(rows, landmarks)))


def nystrom_transform(W: np.ndarray) -> np.ndarray:
    """``T = Q diag(w)^(-1/2)`` of the landmarks' kernel ``W`` (m x m), so that ``T T' = W^+``.

    Eigenvalues of ``W`` at or below ``m eps max(w)`` (numerically dependent landmarks) are
    dropped, so ``T`` has full column rank and ``G'G`` stays well conditioned.
    """
    W = 0.5 * (W + W.T)
    values, vectors = linalg.eigh(W, driver="evd", check_finite=False)
    keep = values > W.shape[0] * np.finfo(np.float64).eps * max(values.max(), np.finfo(np.float64).tiny)
    values, vectors = values[keep][::-1], vectors[:, keep][:, ::-1]
    return np.ascontiguousarray(vectors / np.sqrt(values))
