"""Pivoted incomplete Cholesky factorisation of a kernel matrix, column by column.

A positive semi-definite kernel ``K`` (n x n) is approximated by ``G G'`` with
``G`` of shape (n, m), ``m << n``, choosing at every step the item whose
residual variance ``K_jj - ||G_j||^2`` is largest (Fine & Scheinberg 2001;
Bach & Jordan 2002, Section 6.1).  Only the ``m`` pivot columns of ``K`` are
ever evaluated, through a :class:`KernelColumns` oracle, so the n x n matrix
need not exist; cost O(n m^2) time and O(n m) memory.

Pivots are greedy (exactly the classical sequence), but the pivot columns are
fetched and updated in blocks of candidates, so that most of the work is a
matrix-matrix product rather than one matrix-vector product per pivot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from .._core.errors import DataError, ParameterError
from .._core.progress import progress_bar

__all__ = [
    "KernelColumns",
    "CallableKernelColumns",
    "MatrixColumns",
    "CenteredMatrixColumns",
    "incomplete_cholesky",
]


@runtime_checkable
class KernelColumns(Protocol):
    """Lazy access to a symmetric positive semi-definite kernel matrix.

    Attributes
    ----------
    n_samples : int
        Order of the kernel matrix.
    """

    n_samples: int

    def diagonal(self) -> np.ndarray:
        """The kernel's diagonal, shape (n_samples,)."""

    def columns(self, indices: np.ndarray) -> np.ndarray:
        """Columns ``K[:, indices]``, shape (n_samples, len(indices))."""


@dataclass(frozen=True)
class CallableKernelColumns:
    """A kernel given by two callables, e.g. a kernel function over training items.

    Parameters
    ----------
    n_samples : int
        Number of training items.
    columns_fn : callable
        ``columns_fn(indices) -> ndarray (n_samples, len(indices))``: the
        kernel between every training item and the items ``indices``.
    diagonal_fn : callable
        ``diagonal_fn() -> ndarray (n_samples,)``: ``K(x_i, x_i)`` for all items.
    """

    n_samples: int
    columns_fn: Callable[[np.ndarray], np.ndarray]
    diagonal_fn: Callable[[], np.ndarray]

    def diagonal(self) -> np.ndarray:
        return self.diagonal_fn()

    def columns(self, indices: np.ndarray) -> np.ndarray:
        return self.columns_fn(indices)


@dataclass(frozen=True)
class MatrixColumns:
    """Columns of an explicit square kernel matrix."""

    matrix: np.ndarray

    @property
    def n_samples(self) -> int:
        return self.matrix.shape[0]

    def diagonal(self) -> np.ndarray:
        return np.diagonal(self.matrix).copy()

    def columns(self, indices: np.ndarray) -> np.ndarray:
        return self.matrix[:, indices]


class CenteredMatrixColumns:
    """Columns of the feature-space-centred kernel ``H K H`` (``H = I - 11'/n``) of a matrix ``K``.

    ``(HKH)_ij = K_ij - m_i - m_j + g`` with ``m`` the row means and ``g`` the
    grand mean, so a column costs O(n) and ``HKH`` is never formed.
    """

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix
        self.n_samples = matrix.shape[0]
        self._means = matrix.mean(axis=1, dtype=np.float64)
        self._grand = float(self._means.mean())

    def diagonal(self) -> np.ndarray:
        return np.diagonal(self.matrix) - 2.0 * self._means + self._grand

    def columns(self, indices: np.ndarray) -> np.ndarray:
        return (
            self.matrix[:, indices]
            - self._means[:, None]
            - self._means[indices][None, :]
            + self._grand
        )


def incomplete_cholesky(
    kernel: KernelColumns,
    *,
    tol: float = 1e-6,
    rank: int | None = None,
    block_size: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy pivoted incomplete Cholesky factor ``G`` with ``K ~= G G'``.

    At step ``k`` the pivot is ``j = argmax_i d_i`` over the residual diagonal
    ``d_i = K_ii - sum_{t<k} G_it^2``, and the new column is
    ``G[:, k] = (K[:, j] - G[:, :k] G[j, :k]') / sqrt(d_j)``.  The residual
    ``K - G G'`` stays positive semi-definite and its trace is ``sum(d)``.

    Parameters
    ----------
    kernel : KernelColumns
        Symmetric positive semi-definite kernel, accessed by columns.
    tol : float, default=1e-6
        Stop once the residual trace ``sum(d)`` is at most ``tol * trace(K)``.
        ``tol=0`` runs to numerical full rank.
    rank : int or None, default=None
        Maximum number of columns ``m``; ``None`` means no limit but ``tol``.
    block_size : int, default=64
        Number of candidate pivots (the largest residual variances) whose
        columns are fetched and updated together.  Affects speed only: the
        pivot sequence is the greedy one whatever the block size.

    Returns
    -------
    G : ndarray of shape (n_samples, m), float64
        Lower-trapezoidal factor in pivot order (``G[pivots[k], k+1:] == 0``).
    pivots : ndarray of shape (m,), int
        Chosen pivot items, in order.

    Notes
    -----
    Pivots whose residual variance falls below ``n * eps * max(diag(K))``
    are numerically zero; the factorisation stops there, so a rank-deficient
    kernel yields fewer than ``rank`` columns rather than dividing by zero.

    References
    ----------
    Fine, S. & Scheinberg, K. (2001). Efficient SVM training using low-rank
    kernel representations. JMLR 2, 243-264.

    Bach, F. R. & Jordan, M. I. (2002). Kernel independent component analysis.
    JMLR 3, 1-48.
    """
    n = int(kernel.n_samples)
    if not np.isfinite(tol) or tol < 0:
        raise ParameterError(f"tol must be a finite number >= 0, got {tol!r}")
    if rank is not None and (int(rank) != rank or rank < 1):
        raise ParameterError(f"rank must be a positive integer or None, got {rank!r}")
    if int(block_size) != block_size or block_size < 1:
        raise ParameterError(f"block_size must be a positive integer, got {block_size!r}")
    max_rank = n if rank is None else min(int(rank), n)

    d = np.array(kernel.diagonal(), dtype=np.float64)
    if d.shape != (n,):
        raise DataError(f"kernel diagonal must have shape ({n},), got {d.shape}")
    if not np.all(np.isfinite(d)):
        raise DataError("kernel diagonal contains NaN or infinite entries")
    if np.any(d < -np.sqrt(np.finfo(float).eps) * max(np.abs(d).max(), 1e-300)):
        raise DataError("kernel has a negative diagonal entry: it is not positive semi-definite")
    np.maximum(d, 0.0, out=d)
    floor = n * np.finfo(float).eps * max(d.max(), np.finfo(float).tiny)
    stop_trace = tol * d.sum()

    capacity = min(max_rank, max(block_size, 16))
    G = np.empty((n, capacity))
    pivots: list[int] = []
    k = 0
    done = False
    bar = progress_bar(max_rank, "incomplete Cholesky", unit="pivot")
    while k < max_rank and not done:
        # Stable order breaks ties by index, as argmax below does, so the
        # greedy pivot is always the block's first candidate.
        candidates = np.argsort(-d, kind="stable")[: min(block_size, max_rank - k)]
        candidates = candidates[d[candidates] > floor]
        if candidates.size == 0 or d.sum() <= stop_trace:
            break
        residual = np.asarray(kernel.columns(candidates), dtype=np.float64)
        if residual.shape != (n, candidates.size):
            raise DataError(
                f"kernel columns must have shape ({n}, {candidates.size}), got {residual.shape}"
            )
        if not np.all(np.isfinite(residual)):
            raise DataError("kernel columns contain NaN or infinite entries")
        residual -= G[:, :k] @ G[candidates, :k].T
        position = {int(j): c for c, j in enumerate(candidates)}
        while k < max_rank:
            j = int(np.argmax(d))
            if d[j] <= floor or d.sum() <= stop_trace:
                done = True
                break
            c = position.pop(j, None)
            if c is None:  # the greedy pivot is outside this block: fetch a new block
                break
            pivot_value = residual[j, c]
            if pivot_value <= floor:  # cancellation: numerically dependent on earlier pivots
                d[j] = 0.0
                continue
            if k == G.shape[1]:
                G = np.concatenate([G, np.empty((n, min(capacity, max_rank - k)))], axis=1)
                capacity = G.shape[1]
            g = residual[:, c] / np.sqrt(pivot_value)
            G[:, k] = g
            pivots.append(j)
            k += 1
            bar.update()
            d -= g * g
            d[j] = 0.0
            np.maximum(d, 0.0, out=d)
            residual -= np.outer(g, g[candidates])
    bar.close()
    return np.ascontiguousarray(G[:, :k]), np.asarray(pivots, dtype=np.intp)
