"""Kernel preprocessing for KCCA: centring, the image-kernel power and the text-kernel diagonal.

Hodosh, Young & Hockenmaier (2013) tune two kernel transforms besides KCCA's own
hyperparameters: the image kernel is raised elementwise to a power ``p`` and the
text kernel's diagonal is multiplied by ``d``.  Both keep a positive
semi-definite kernel positive semi-definite (the Schur product theorem for
integer ``p``; adding a non-negative diagonal for ``d >= 1``).

Centring maps a kernel to the Gram matrix of the feature vectors minus their
training mean, ``Kc = H K H`` with ``H = I - 11'/n``; items outside the training
set must be centred with the *training* means (:class:`KernelCentering`).
"""

from __future__ import annotations

import numbers

import numba
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from .._core.errors import DataError, ParameterError
from .._core.validation import check_is_fitted

__all__ = ["kernel_power", "scale_diagonal", "symmetrised", "KernelCentering"]

#: Side of the square tiles in which :func:`symmetrised` pairs ``K[i, j]`` with ``K[j, i]``.
_TILE = 64


def _check_finite_matrix(K, name: str, *, square: bool) -> np.ndarray:
    K = np.asarray(K)
    if K.ndim != 2:
        raise DataError(f"{name} must be a 2-D kernel matrix, got an array of shape {K.shape}")
    if square and K.shape[0] != K.shape[1]:
        raise DataError(f"{name} must be square, got shape {K.shape}")
    if not np.issubdtype(K.dtype, np.number) or np.iscomplexobj(K):
        raise DataError(f"{name} must hold real numbers, got dtype {K.dtype}")
    if not np.all(np.isfinite(K)):
        raise DataError(f"{name} contains NaN or infinite entries")
    return K


@numba.njit(parallel=True, cache=True)
def _symmetrise_tiles(K, rtol, atol, tiles_i, tiles_j, out):
    # Tiles keep the transposed reads within cache lines; one pass replaces numpy's four
    # (K.T copy, |K - K.T|, the tolerance, (K + K.T) / 2), which took seconds at n = 6,000.
    n = K.shape[0]
    within = np.ones(tiles_i.size, dtype=np.bool_)
    for t in numba.prange(tiles_i.size):
        i0 = tiles_i[t] * _TILE
        j0 = tiles_j[t] * _TILE
        for i in range(i0, min(i0 + _TILE, n)):
            for j in range(j0, min(j0 + _TILE, i + 1)):
                a = K[i, j]
                b = K[j, i]
                if abs(a - b) > atol + rtol * min(abs(a), abs(b)):
                    within[t] = False
                out[i, j] = out[j, i] = 0.5 * (a + b)
    return within.all()


def symmetrised(K: np.ndarray, *, rtol: float = 1e-6, atol: float = 0.0) -> tuple[np.ndarray, bool]:
    """Symmetric part ``(K + K') / 2`` of a square matrix, and whether ``K`` was symmetric.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Finite float64 matrix.
    rtol, atol : float
        ``K`` counts as symmetric when ``|K_ij - K_ji| <= atol + rtol min(|K_ij|, |K_ji|)``
        for every pair, i.e. ``numpy.allclose(K, K.T, rtol, atol)``.

    Returns
    -------
    S : ndarray of shape (n, n)
        A new array, ``(K + K') / 2``.
    symmetric : bool
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise DataError(f"symmetrised needs a square matrix, got shape {K.shape}")
    tiles_i, tiles_j = np.tril_indices(-(-K.shape[0] // _TILE))
    out = np.empty_like(K)
    symmetric = _symmetrise_tiles(K, float(rtol), float(atol), tiles_i, tiles_j, out)
    return out, bool(symmetric)


def kernel_power(K, p: float) -> np.ndarray:
    """Raise a kernel matrix elementwise to the power ``p``: ``K_ij ** p``.

    Hodosh et al. (2013, Sections 3.3 and 4.1.3) use ``((K_colour + K_texture + K_sift) / 3) ** p``
    with ``p`` in {2, 3} for the image kernel.  For a positive semi-definite ``K``
    and integer ``p`` the result is again positive semi-definite (Schur product
    theorem); non-integer powers require ``K >= 0`` entrywise.

    Parameters
    ----------
    K : array-like of shape (n_samples_X, n_samples_Y)
        Kernel matrix (training or new-by-training rows alike).
    p : float
        Power, ``p > 0``.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)

    References
    ----------
    Hodosh, M., Young, P. & Hockenmaier, J. (2013). Framing image description as
    a ranking task. JAIR 47, 853-899.
    """
    K = _check_finite_matrix(K, "K", square=False)
    if not isinstance(p, numbers.Real) or not np.isfinite(p) or p <= 0:
        raise ParameterError(f"kernel power p must be a positive finite number, got {p!r}")
    if float(p).is_integer():
        return np.power(K, int(p))
    if np.any(K < 0):
        raise DataError(f"kernel power p={p} is not an integer and K has negative entries")
    return np.power(K, float(p))


def scale_diagonal(K, d: float) -> np.ndarray:
    """Multiply the diagonal of a square training kernel by ``d``: ``K + (d - 1) diag(K)``.

    Hodosh et al. (2013) tune this multiplier ``d >= 1`` on the text kernel;
    it acts like an item-specific ridge that makes each caption more similar to
    itself than to any other.  It only applies to the training kernel: the
    kernel rows of new items are left as they are.

    Parameters
    ----------
    K : array-like of shape (n_samples, n_samples)
        Square training kernel.
    d : float
        Diagonal multiplier, ``d >= 1``.

    Returns
    -------
    ndarray of shape (n_samples, n_samples)
    """
    K = _check_finite_matrix(K, "K", square=True)
    if not isinstance(d, numbers.Real) or not np.isfinite(d) or d < 1:
        raise ParameterError(f"diagonal multiplier d must be a finite number >= 1, got {d!r}")
    out = np.array(K, dtype=np.result_type(K.dtype, np.float64 if K.dtype.kind in "iub" else K.dtype))
    out[np.diag_indices_from(out)] *= d
    return out


class KernelCentering(TransformerMixin, BaseEstimator):
    """Centre kernels in feature space with the training mean.

    With training kernel ``K`` (n x n), feature-space centring gives
    ``Kc = K - 1K/n - K1/n + 1K1/n^2``.  A new-by-training kernel block
    ``K_new`` (m x n) is centred with the same training mean,

    ``Kc_new = K_new - 1_m (1'K/n) - (K_new 1/n) 1' + (1'K1/n^2) 1_m 1'``,

    so that passing the training rows again reproduces ``Kc`` exactly
    (Schölkopf, Smola & Müller 1998, Eq. B.3; as scikit-learn's
    ``KernelCenterer``).

    Attributes
    ----------
    column_means_ : ndarray of shape (n_samples,)
        ``1'K/n``, the mean of every training column.
    grand_mean_ : float
        ``1'K1/n^2``.
    """

    def fit(self, K, y=None) -> "KernelCentering":
        """Record the training means of the square kernel ``K`` (``y`` is ignored)."""
        K = _check_finite_matrix(K, "K", square=True)
        return self._set_means(K.mean(axis=0, dtype=np.float64))

    def fit_factor(self, G) -> "KernelCentering":
        """Record the training means of the low-rank kernel ``G G'`` (G of shape n x m)."""
        G = np.asarray(G, dtype=np.float64)
        return self._set_means(G @ G.mean(axis=0))

    def _set_means(self, column_means: np.ndarray) -> "KernelCentering":
        self.column_means_ = np.asarray(column_means, dtype=np.float64)
        self.grand_mean_ = float(self.column_means_.mean())
        return self

    def transform(self, K_new) -> np.ndarray:
        """Centre new-by-training kernel rows ``K_new`` of shape (m, n) with the training means."""
        check_is_fitted(self, "column_means_")
        K_new = _check_finite_matrix(K_new, "K_new", square=False)
        n = self.column_means_.shape[0]
        if K_new.shape[1] != n:
            raise DataError(
                f"K_new must have one column per training item ({n}), got shape {K_new.shape}"
            )
        row_means = K_new.mean(axis=1, dtype=np.float64)[:, None]
        return K_new - self.column_means_[None, :] - row_means + self.grand_mean_
