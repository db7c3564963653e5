"""Histogram intersection kernel K_ij = sum_v min(a_iv, b_jv) on NumPy, Numba and CuPy."""

from __future__ import annotations

from typing import Callable

import numpy as np
from numba import njit, prange

from .._backend import resolve_backend
from ..errors import DataError, ParameterError

__all__ = ["histogram_intersection"]

#: Feature columns per Numba tile: two rows of A and four of B (6 x 1024 float32 = 24 KiB) stay
#: in L1 while the micro-kernel sweeps them, and a (block_size x 1024) tile of B stays in L2.
_FEATURE_TILE = 1024

#: Bytes a single temporary of the NumPy reference may take.
_NUMPY_CHUNK_BYTES = 256 * 2**20


def check_histograms(X, name: str, dtype=np.float32, *,
                     axes: tuple[str, ...] = ("n_samples", "n_features")) -> np.ndarray:
    """Validate an array of non-negative, finite histograms and return it C-contiguous.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or the shape ``axes`` names
        Histograms, one per row.
    name : str
        Parameter name used in error messages.
    dtype : {np.float32, np.float64}, default=np.float32
        Floating type of the returned array.
    axes : tuple of str, default=("n_samples", "n_features")
        Names of the expected axes; their number is the required dimensionality.

    Returns
    -------
    X : ndarray of shape ``axes``, C-contiguous, of type ``dtype``

    Raises
    ------
    ValueError
        If ``X`` has the wrong number of dimensions, is not numeric, or holds a NaN, an
        infinity or a negative value (the message gives the first offending index).
    """
    try:
        X = np.ascontiguousarray(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a numeric array; {exc}") from None
    if X.ndim != len(axes):
        raise DataError(f"{name} must be {len(axes)}-D ({', '.join(axes)}); got shape {X.shape}")
    for bad, what in ((~np.isfinite(X), "a non-finite value"), (X < 0, "a negative value")):
        if bad.any():
            index = tuple(int(k) for k in np.argwhere(bad)[0])
            raise DataError(f"{name} has {what} ({X[index]!r}) at index {index} "
                             f"({', '.join(axes)}); histograms must be finite and non-negative")
    return X


def _check_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ParameterError(f"dtype must be float32 or float64; got {dtype}")
    return dtype


def _check_block_size(block_size) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ParameterError(f"block_size must be a positive integer; got {block_size!r}")
    return int(block_size)


def histogram_intersection(A, B=None, *, backend: str = "auto", block_size: int = 128,
                           dtype=np.float32) -> np.ndarray:
    """Histogram intersection kernel between the rows of A and the rows of B.

    .. math::

        K_{ij} = \\sum_{v=1}^{d} \\min(A_{iv}, B_{jv})

    The kernel of Swain & Ballard (1991); it is positive definite on non-negative histograms
    (Barla et al. 2003) and, for histograms that each sum to 1, ``K_ii = 1``.

    Parameters
    ----------
    A : array-like of shape (n_samples_A, n_features)
        Non-negative, finite histograms.
    B : array-like of shape (n_samples_B, n_features), default=None
        Non-negative, finite histograms. ``None`` computes the symmetric Gram matrix of A,
        evaluating each unordered pair once and mirroring it.
    backend : {"auto", "numba", "cupy", "numpy"}, default="auto"
        ``"numba"``: multi-threaded tiled CPU loops; ``"cupy"``: a shared-memory tiled CUDA
        kernel; ``"numpy"``: chunked broadcasting (the slow reference); ``"auto"``: CuPy when a
        CUDA device works, else Numba (see :func:`kcca_desc.kernels._backend.resolve_backend`).
    block_size : int, default=128
        Rows of A and of B per Numba tile (ignored by the other backends). Memory beyond the
        output stays O(block_size * 1024).
    dtype : {np.float32, np.float64}, default=np.float32
        Precision of the computation and of the result.

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B), of type ``dtype``
        A NumPy array whatever the backend.

    Raises
    ------
    ValueError
        If A or B is not 2-D, has a negative or non-finite value, or if their numbers of
        features differ; if ``backend``, ``block_size`` or ``dtype`` is invalid.

    See Also
    --------
    kcca_desc.kernels.image.pyramid_kernel : weighted intersection over spatial-pyramid cells.
    sklearn.metrics.pairwise.additive_chi2_kernel : a related additive histogram kernel.

    Notes
    -----
    Padding a histogram with zeros leaves the kernel unchanged (``min(0, b) = 0`` for
    ``b >= 0``), which is what lets the CUDA kernel zero-fill its partial edge tiles.

    References
    ----------
    .. [1] Swain, M. J. and Ballard, D. H. (1991). Color indexing. IJCV 7(1), 11-32.
    .. [2] Barla, A., Odone, F. and Verri, A. (2003). Histogram intersection kernel for image
       classification. ICIP.

    Examples
    --------
    >>> import numpy as np
    >>> from kcca_desc.kernels.image.intersection import histogram_intersection
    >>> X = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    >>> histogram_intersection(X, backend="numpy")
    array([[1. , 0.5],
           [0.5, 1. ]], dtype=float32)
    """
    dtype = _check_dtype(dtype)
    block_size = _check_block_size(block_size)
    backend = resolve_backend(backend)
    A = check_histograms(A, "A", dtype)
    if B is not None:
        B = check_histograms(B, "B", dtype)
        if B.shape[1] != A.shape[1]:
            raise DataError(f"A and B must have the same number of features; "
                             f"got {A.shape[1]} and {B.shape[1]}")
    return intersection_validated(A, B, backend, block_size)


def intersection_validated(A: np.ndarray, B: np.ndarray | None, backend: str,
                           block_size: int = 128) -> np.ndarray:
    """:func:`histogram_intersection` of already validated arrays and a resolved backend.

    For callers (such as :func:`kcca_desc.kernels.image.pyramid.pyramid_kernel`) that validate their own,
    differently shaped inputs and should not pay for a second pass over them.
    """
    return _BACKENDS[backend](A, B, block_size)


def _intersection_cupy(A: np.ndarray, B: np.ndarray | None, block_size: int) -> np.ndarray:
    """The shared-memory tiled CUDA kernel; CuPy (optional) is imported only when it is asked for."""
    from .._cupy_intersection import cupy_histogram_intersection
    return cupy_histogram_intersection(A, B)


def _intersection_numpy(A: np.ndarray, B: np.ndarray | None, block_size: int) -> np.ndarray:
    """Broadcast min and sum over (rows, cols, features) chunks of at most ~256 MiB (no tiles)."""
    B = A if B is None else B
    n, d = A.shape
    m = B.shape[0]
    K = np.zeros((n, m), dtype=A.dtype)
    feature_chunk = max(1, min(d, _NUMPY_CHUNK_BYTES // (A.itemsize * max(m, 1))))
    row_chunk = max(1, _NUMPY_CHUNK_BYTES // (A.itemsize * max(m, 1) * feature_chunk))
    for v0 in range(0, d, feature_chunk):
        for i0 in range(0, n, row_chunk):
            a = A[i0:i0 + row_chunk, None, v0:v0 + feature_chunk]
            K[i0:i0 + row_chunk] += np.minimum(a, B[None, :, v0:v0 + feature_chunk]).sum(axis=2)
    return K


def _tile_pairs(n_row_tiles: int, n_col_tiles: int, symmetric: bool) -> np.ndarray:
    """(row tile, column tile) pairs to compute: the upper triangle when symmetric."""
    rows, cols = np.meshgrid(np.arange(n_row_tiles), np.arange(n_col_tiles), indexing="ij")
    keep = cols >= rows if symmetric else np.ones_like(rows, dtype=bool)
    return np.stack([rows[keep], cols[keep]], axis=1).astype(np.int64)


def _intersection_numba(A: np.ndarray, B: np.ndarray | None, block_size: int) -> np.ndarray:
    """Multi-threaded (block_size x block_size) tiles; without B, the upper triangle mirrored."""
    symmetric = B is None
    B = A if symmetric else B
    n, m = A.shape[0], B.shape[0]
    K = np.zeros((n, m), dtype=A.dtype)
    if n == 0 or m == 0 or A.shape[1] == 0:
        return K
    pairs = _tile_pairs(-(-n // block_size), -(-m // block_size), symmetric)
    _accumulate_tiles(A, B, K, pairs, block_size, _FEATURE_TILE)
    if symmetric:
        _mirror_upper(K)
    return K


#: The computation of each concrete backend (:func:`~kcca_desc.kernels._backend.resolve_backend`'s
#: results): ``(A, B or None for the Gram matrix of A, block_size) -> K``.
_BACKENDS: dict[str, Callable[[np.ndarray, np.ndarray | None, int], np.ndarray]] = {
    "numba": _intersection_numba, "cupy": _intersection_cupy, "numpy": _intersection_numpy}


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _accumulate_tiles(A, B, K, pairs, block_size, feature_tile):  # pragma: no cover - compiled
    """K[i, j] += sum_v min(A[i, v], B[j, v]) over the listed (block_size x block_size) tiles.

    Each tile is swept feature-tile by feature-tile with a 2 x 4 register micro-kernel: two rows
    of A against four rows of B share every load, so each pass over contiguous float32 columns
    does eight SIMD min+add for six loads. Edge rows are clamped to the last valid row and their
    duplicate results discarded. fastmath only lets LLVM reorder the sums (vectorise them);
    inputs are validated finite, so no NaN/inf assumption can change a result.
    """
    n, d = A.shape
    m = B.shape[0]
    for p in prange(pairs.shape[0]):
        i_start = pairs[p, 0] * block_size
        i_stop = min(n, i_start + block_size)
        j_start = pairs[p, 1] * block_size
        j_stop = min(m, j_start + block_size)
        for v0 in range(0, d, feature_tile):
            v1 = min(d, v0 + feature_tile)
            for i in range(i_start, i_stop, 2):
                i2 = min(i + 1, i_stop - 1)
                a = A[i, v0:v1]
                c = A[i2, v0:v1]
                for j in range(j_start, j_stop, 4):
                    j1 = min(j + 1, j_stop - 1)
                    j2 = min(j + 2, j_stop - 1)
                    j3 = min(j + 3, j_stop - 1)
                    b0 = B[j, v0:v1]
                    b1 = B[j1, v0:v1]
                    b2 = B[j2, v0:v1]
                    b3 = B[j3, v0:v1]
                    s0, s1, s2, s3 = K[i, j], K[i, j1], K[i, j2], K[i, j3]
                    t0, t1, t2, t3 = K[i2, j], K[i2, j1], K[i2, j2], K[i2, j3]
                    for v in range(v1 - v0):
                        x = a[v]
                        y = c[v]
                        e0 = b0[v]
                        e1 = b1[v]
                        e2 = b2[v]
                        e3 = b3[v]
                        s0 += min(x, e0)
                        s1 += min(x, e1)
                        s2 += min(x, e2)
                        s3 += min(x, e3)
                        t0 += min(y, e0)
                        t1 += min(y, e1)
                        t2 += min(y, e2)
                        t3 += min(y, e3)
                    # A clamped index repeats its predecessor: store each distinct cell once.
                    _store_row(K, i, j, j1, j2, j3, s0, s1, s2, s3)
                    if i2 != i:
                        _store_row(K, i2, j, j1, j2, j3, t0, t1, t2, t3)


# Inlined into the compiled micro-kernel (no call at run time).
@njit(inline="always", cache=True, nogil=True)
def _store_row(K, i, j, j1, j2, j3, s0, s1, s2, s3):  # pragma: no cover - compiled
    """K[i, (j, j1, j2, j3)] = (s0, s1, s2, s3), each distinct cell once.

    The column indices are clamped to the tile's last column, so a repeated index equals its
    predecessor and holds the same sum.
    """
    K[i, j] = s0
    if j1 != j:
        K[i, j1] = s1
    if j2 != j1:
        K[i, j2] = s2
    if j3 != j2:
        K[i, j3] = s3


@njit(parallel=True, cache=True, nogil=True)
def _mirror_upper(K):  # pragma: no cover - compiled
    """Copy the upper triangle onto the lower one, so that K is exactly symmetric."""
    n = K.shape[0]
    for i in prange(1, n):
        for j in range(i):
            K[i, j] = K[j, i]
