"""Combining kernels: centring, normalisation, weighted sums and centred kernel alignment.

A multiple-kernel system sums base kernels of one view, ``K = Σ_m μ_m K̃_m`` with ``μ_m >= 0``,
each base kernel ``K̃_m`` centred in feature space and normalised on the training items first, so
that no kernel outweighs another by its scale alone.  New items (a test caption, a dev image)
are transformed with the *training* statistics, so the rows of a training item passed again as a
new item reproduce its training rows exactly:

* centring (Schölkopf, Smola & Müller 1998, Eq. B.3), ``Kc = H K H`` with ``H = I - 11'/n``;
  new rows ``Kc_new = K_new - 1 (1'K/n) - (K_new 1/n) 1' + (1'K1/n²)``;
* ``"trace"`` normalisation: ``K̃ = n Kc / tr(Kc)``, the centred training kernel scaled to trace
  ``n`` (the trace of a unit-diagonal kernel: unit trace of ``K̃ / n``), new rows by the same
  factor.  The factor ``n`` is a convention that keeps a solver's regulariser on the scale of a
  single unit-diagonal kernel; it does not change the ratios between kernels;
* ``"diagonal"`` (cosine) normalisation: ``K̃_ij = Kc_ij / sqrt(Kc_ii Kc_jj)``, unit diagonal;
  a new item ``x`` is divided by the square root of its centred self-similarity
  ``k(x, x) - 2 mean_j k(x, j) + 1'K1/n²``, so it needs ``k(x, x)``.

:func:`centered_alignment` is the centred kernel alignment of Cortes, Mohri & Rostamizadeh (2012,
Definition 4), ``ρ(K, L) = <Kc, Lc>_F / (‖Kc‖_F ‖Lc‖_F)``, and :func:`alignment_weights` their
two alignment-based choices of ``μ`` against a target kernel: ``"align"`` (Section 3.1,
``μ_m ∝ ρ(K_m, T)``) and ``"alignf"`` (Section 3.2, Proposition 9: ``μ ∝ v*``,
``v* = argmin_{v >= 0} v'Mv - 2v'a`` with ``M_kl = <K_kc, K_lc>_F`` and ``a_k = <K_kc, T_c>_F``).

Every function works in float64 and holds at most one extra n x n matrix: centred inner products
are computed from row sums (``<HKH, L> = <K, L> - 2/n (K1)'(L1) + (1'K1)(1'L1)/n²`` for symmetric
``K``, ``L``), sums accumulate in place, and the training transform can overwrite its input.

References
----------
.. [1] C. Cortes, M. Mohri and A. Rostamizadeh, "Algorithms for learning kernels based on
   centered alignment", JMLR 13, 795-828, 2012.
.. [2] B. Schölkopf, A. Smola and K.-R. Müller, "Nonlinear component analysis as a kernel
   eigenvalue problem", Neural Computation 10, 1299-1319, 1998.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np
from scipy.optimize import nnls
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

from .errors import DataError, ParameterError
from ._validation import check_array, check_is_fitted, check_settings, kernel_keywords, validate_data

__all__ = ["NORMALIZATIONS", "ALIGNMENT_METHODS", "KernelStatistics", "kernel_statistics", "normalize_train_kernel",
           "normalize_cross_kernel", "weighted_sum", "centered_inner", "centered_alignment", "alignment_weights",
           "alignment_weights_from_products",
           "KernelCombination"]

# Rows of an n x n matrix updated at a time, so a sum needs no n x n temporary.
_BLOCK_ELEMENTS = 2**22


@dataclass(frozen=True)
class KernelStatistics:
    """What transforming a kernel's rows needs of its training kernel ``K`` (n x n).

    Attributes
    ----------
    column_means : ndarray of shape (n,)
        ``1'K/n``.
    grand_mean : float
        ``1'K1/n²``.
    normalization : {"trace", "diagonal", "none"}
    scale : float
        Factor of the centred kernel: ``n / tr(Kc)`` for ``"trace"``, else 1.
    root_diagonal : ndarray of shape (n,) or None
        ``sqrt(diag(Kc))`` for ``"diagonal"`` (floored at a tiny fraction of its largest value, so
        that an item at the training mean divides by no zero), else None.
    """

    column_means: np.ndarray
    grand_mean: float
    normalization: str
    scale: float = 1.0
    root_diagonal: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return self.column_means.shape[0]


# --------------------------------------------------------------------------- normalisations
# Each normalisation is three functions: the statistics it keeps of the training kernel, the
# divisors of new items' rows (only "diagonal" has any) and the scaling of centred rows.
def _trace_statistics(centred_diagonal: np.ndarray, trace: float) -> dict:
    return {"scale": centred_diagonal.shape[0] / trace}


def _trace_scale_rows(block: np.ndarray, rows: slice, statistics: KernelStatistics, root_rows) -> None:
    block *= statistics.scale


def _diagonal_statistics(centred_diagonal: np.ndarray, trace: float) -> dict:
    # Floored, so that an item at the training mean divides by no zero.
    floor = np.finfo(np.float64).eps * centred_diagonal.max()
    return {"root_diagonal": np.sqrt(np.maximum(centred_diagonal, floor))}


def _diagonal_new_roots(statistics: KernelStatistics, row_means: np.ndarray, diagonal_new) -> np.ndarray:
    """``sqrt`` of the new items' centred self-similarities, from their ``k(x, x)``."""
    if diagonal_new is None:
        raise ParameterError("normalization='diagonal' needs diagonal_new, the new items' k(x, x)")
    diagonal_new = np.asarray(diagonal_new, dtype=np.float64).reshape(-1)
    if diagonal_new.shape[0] != row_means.shape[0]:
        raise DataError(f"diagonal_new has {diagonal_new.shape[0]} values for {row_means.shape[0]} new items")
    centred = diagonal_new - 2 * row_means + statistics.grand_mean
    return np.sqrt(np.maximum(centred, np.finfo(np.float64).eps * statistics.root_diagonal.max() ** 2))


def _diagonal_scale_rows(block: np.ndarray, rows: slice, statistics: KernelStatistics, root_rows) -> None:
    block /= root_rows[rows, None]
    block /= statistics.root_diagonal[None, :]


def _no_statistics(centred_diagonal: np.ndarray, trace: float) -> dict:
    return {}


def _no_scale_rows(block: np.ndarray, rows: slice, statistics: KernelStatistics, root_rows) -> None:
    pass


class _Normalization(NamedTuple):
    """What one normalisation does at each step of the transform (see the module docstring)."""

    #: ``(diag(Kc), tr(Kc)) -> dict``: the fields of :class:`KernelStatistics` it sets.
    statistics: Callable[[np.ndarray, float], dict]
    #: ``(block, rows, statistics, root_rows) -> None``: scales a block of centred rows in place.
    scale_rows: Callable[[np.ndarray, slice, KernelStatistics, np.ndarray | None], None]
    #: ``(statistics, row_means, diagonal_new) -> root_rows`` of new items, or None when it needs
    #: no ``k(x, x)``.
    new_roots: Callable[[KernelStatistics, np.ndarray, object], np.ndarray] | None = None


_NORMALIZATIONS: dict[str, _Normalization] = {
    "trace": _Normalization(_trace_statistics, _trace_scale_rows),
    "diagonal": _Normalization(_diagonal_statistics, _diagonal_scale_rows, _diagonal_new_roots),
    "none": _Normalization(_no_statistics, _no_scale_rows),
}
#: Normalisations of a centred base kernel (see the module docstring).
NORMALIZATIONS = tuple(_NORMALIZATIONS)


def _check_normalization(normalization: str) -> None:
    if normalization not in NORMALIZATIONS:
        raise ParameterError(f"normalization must be one of {', '.join(NORMALIZATIONS)}; got {normalization!r}")


def _square(K, name: str) -> np.ndarray:
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 2:
        raise DataError(f"{name} must be a square training kernel of at least 2 items, got shape {K.shape}")
    if not np.isfinite(K).all():
        raise DataError(f"{name} contains NaN or infinite values")
    return K


#: A centred kernel whose trace or squared norm is at most this share of the uncentred one's
#: magnitude is zero up to round-off: the kernel is constant.
_ZERO_RTOL = 1e-10


def _magnitude(K: np.ndarray) -> float:
    """The scale of ``K``'s centred trace: its absolute diagonal plus n times its absolute mean."""
    return float(np.abs(np.diagonal(K)).sum() + K.shape[0] * abs(K.mean()))


def _row_blocks(n_rows: int, n_cols: int):
    step = max(1, _BLOCK_ELEMENTS // max(n_cols, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def kernel_statistics(K, *, normalization: str = "trace") -> KernelStatistics:
    """The centring and normalisation statistics of a symmetric training kernel ``K``.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Uncentred training kernel.
    normalization : {"trace", "diagonal", "none"}, default="trace"

    Returns
    -------
    KernelStatistics

    Raises
    ------
    DataError
        If ``K`` is not square and finite, or its centred trace is not positive: zero up to
        round-off (a constant kernel), or negative (a kernel that is not positive semi-definite).
    """
    _check_normalization(normalization)
    K = _square(K, "K")
    n = K.shape[0]
    column_means = K.mean(axis=0)
    grand_mean = float(column_means.mean())
    # diag(HKH)_i = K_ii - 2 mean_j K_ij + 1'K1/n² for symmetric K.
    centred_diagonal = np.diagonal(K) - 2 * column_means + grand_mean
    trace = float(centred_diagonal.sum())
    # Round-off of the formula above is relative to the magnitudes it cancels.
    if trace < -_ZERO_RTOL * _magnitude(K):
        raise DataError(f"the centred training kernel has trace {trace:.3g} < 0: the kernel is not positive "
                        f"semi-definite on the {n} training items (a distance or a negated kernel?), so it "
                        "cannot be normalised")
    if not trace > _ZERO_RTOL * _magnitude(K):
        raise DataError(f"the centred training kernel has trace {trace:.3g}: the kernel is constant on the "
                        f"{n} training items, so it cannot be normalised")
    return KernelStatistics(column_means, grand_mean, normalization,
                            **_NORMALIZATIONS[normalization].statistics(centred_diagonal, trace))


def normalize_train_kernel(K, statistics: KernelStatistics, *, copy: bool = True) -> np.ndarray:
    """The centred, normalised training kernel ``K̃`` (see the module docstring).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The training kernel ``statistics`` were computed from.
    statistics : KernelStatistics
    copy : bool, default=True
        False overwrites ``K`` when it is a writable C-contiguous float64 array, instead of
        allocating another n x n matrix (as scikit-learn's ``copy=False``: a copy only when needed).
    """
    K = np.array(K, dtype=np.float64, copy=True) if copy else _writable(K)
    _transform_rows(K, statistics, K.mean(axis=1), statistics.root_diagonal)
    return K


def normalize_cross_kernel(K_new, statistics: KernelStatistics, *, diagonal_new=None,
                           copy: bool = True) -> np.ndarray:
    """Rows of new items against the training items, transformed as the training kernel was.

    Parameters
    ----------
    K_new : array-like of shape (m, n)
        ``k(x_i, t_j)`` of new items ``x_i`` and training items ``t_j``.
    statistics : KernelStatistics
        Of the training kernel (:func:`kernel_statistics`).
    diagonal_new : array-like of shape (m,), optional
        ``k(x_i, x_i)``, needed by ``"diagonal"`` normalisation only.
    copy : bool, default=True
        False overwrites ``K_new`` when it is a writable C-contiguous float64 array.

    Returns
    -------
    ndarray of shape (m, n)
    """
    K_new = np.asarray(K_new, dtype=np.float64)
    n = statistics.n_samples
    if K_new.ndim != 2 or K_new.shape[1] != n:
        raise DataError(f"K_new must hold rows against the {n} training items, got shape {K_new.shape}")
    if not np.isfinite(K_new).all():
        raise DataError("K_new contains NaN or infinite values")
    K_new = np.array(K_new, copy=True) if copy else _writable(K_new)
    row_means = K_new.mean(axis=1)
    new_roots = _NORMALIZATIONS[statistics.normalization].new_roots
    root_new = None if new_roots is None else new_roots(statistics, row_means, diagonal_new)
    _transform_rows(K_new, statistics, row_means, root_new)
    return K_new


def _writable(K) -> np.ndarray:
    """``K`` itself when it can be overwritten (a writable C-contiguous float64 array), else a float64 copy."""
    if isinstance(K, np.ndarray) and K.dtype == np.float64 and K.flags.c_contiguous and K.flags.writeable:
        return K
    return np.array(K, dtype=np.float64, order="C")


def _transform_rows(K: np.ndarray, statistics: KernelStatistics, row_means: np.ndarray,
                    root_rows: np.ndarray | None) -> None:
    """Centre and normalise the rows of ``K`` in place, a block of rows at a time."""
    scale_rows = _NORMALIZATIONS[statistics.normalization].scale_rows
    for rows in _row_blocks(*K.shape):
        block = K[rows]
        block -= statistics.column_means[None, :]
        block -= (row_means[rows] - statistics.grand_mean)[:, None]
        scale_rows(block, rows, statistics, root_rows)


def weighted_sum(kernels: Sequence[np.ndarray], weights, *, out: np.ndarray | None = None) -> np.ndarray:
    """``Σ_m μ_m K_m``, accumulated in one matrix (no temporary of the kernels' size).

    Parameters
    ----------
    kernels : sequence of ndarray, all of one shape
    weights : array-like of shape (len(kernels),)
        Non-negative; a zero weight skips its kernel.
    out : ndarray, optional
        Where to write the sum (not one of ``kernels``).

    Raises
    ------
    ParameterError
        If a weight is negative or not finite, all are zero, or their number differs from the kernels'.
    DataError
        If a kernel of positive weight holds NaN or infinite values.
    """
    weights = check_weights(weights, len(kernels))
    shape = np.shape(kernels[0])
    for m, K in enumerate(kernels):
        if np.shape(K) != shape:
            raise DataError(f"kernel {m} has shape {np.shape(K)}, kernel 0 {shape}")
    if out is None:
        out = np.zeros(shape, dtype=np.float64)
    else:
        out[...] = 0.0
    for weight, K in zip(weights, kernels):
        if weight == 0:
            continue
        K = np.asarray(K, dtype=np.float64)
        for rows in _row_blocks(*shape):
            out[rows] += weight * K[rows]
    if not np.isfinite(out).all():  # one pass over the sum; the kernels are searched only then
        bad = next((m for m, (weight, K) in enumerate(zip(weights, kernels))
                    if weight and not np.isfinite(K).all()), None)
        raise DataError("the weighted sum of the kernels overflows" if bad is None
                        else f"kernel {bad} contains NaN or infinite values")
    return out


def check_weights(weights, n_kernels: int) -> np.ndarray:
    """``weights`` as a float64 vector of ``n_kernels`` non-negative values, not all zero."""
    if isinstance(weights, (Mapping, str, bytes)):
        raise ParameterError(f"kernel weights must be a sequence of numbers, one per kernel; got "
                             f"{type(weights).__name__} {weights!r}")
    try:
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ParameterError(f"kernel weights must be a sequence of numbers, one per kernel; got {weights!r}") from None
    if weights.shape[0] != n_kernels:
        raise ParameterError(f"{weights.shape[0]} kernel weights for {n_kernels} kernels")
    if not np.isfinite(weights).all() or (weights < 0).any() or not weights.any():
        raise ParameterError(f"kernel weights must be finite, non-negative and not all zero; got {weights.tolist()}")
    return weights


def centered_inner(K, L) -> float:
    """``<H K H, H L H>_F`` of two symmetric n x n kernels, without forming the centred matrices.

    ``<HKH, HLH> = <K, L> - 2/n (K1)'(L1) + (1'K1)(1'L1)/n²`` (H is symmetric and idempotent).
    """
    K = _square(K, "K")
    L = _square(L, "L")
    if K.shape != L.shape:
        raise DataError(f"kernels of {K.shape[0]} and {L.shape[0]} items cannot be aligned")
    n = K.shape[0]
    rows_k, rows_l = K.sum(axis=1), L.sum(axis=1)
    return float(np.vdot(K.reshape(-1), L.reshape(-1)) - 2.0 / n * rows_k @ rows_l
                 + rows_k.sum() * rows_l.sum() / n**2)


def centered_alignment(K, L) -> float:
    """Centred kernel alignment ``ρ(K, L) = <Kc, Lc>_F / (‖Kc‖_F ‖Lc‖_F)`` (Cortes et al. 2012, Def. 4).

    Raises
    ------
    DataError
        If either centred kernel is zero (a constant kernel has no alignment).
    """
    kk, ll = centered_inner(K, K), centered_inner(L, L)
    if _is_zero(kk, K) or _is_zero(ll, L):
        raise DataError("centred alignment of a constant kernel: its centred matrix is zero")
    return centered_inner(K, L) / np.sqrt(kk * ll)


def _is_zero(centred_norm2: float, K) -> bool:
    """Whether ``‖HKH‖²_F`` (``centred_norm2``) is zero up to the round-off of :func:`centered_inner`."""
    K = np.asarray(K, dtype=np.float64)
    return not centred_norm2 > _ZERO_RTOL * float(np.vdot(K.reshape(-1), K.reshape(-1)))


# --------------------------------------------------------------------------- alignment methods
def _align_weights(M: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``"align"``: each kernel's alignment with the target on its own, ``max(ρ(K_m, T), 0)``."""
    return np.maximum(a / np.sqrt(np.diagonal(M)), 0.0)


def _alignf_weights(M: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``"alignf"``: ``argmin_{v >= 0} v'Mv - 2v'a``, the combination's own alignment."""
    m = a.shape[0]
    # v'Mv - 2v'a = ‖Bv - c‖² - c'c with M = B'B, B = S^½ U', c = S^-½ U'a (a lies in M's range).
    s, U = np.linalg.eigh(M)
    keep = s > s.max() * m * np.finfo(np.float64).eps
    B = np.sqrt(s[keep])[:, None] * U[:, keep].T
    c = (U[:, keep].T @ a) / np.sqrt(s[keep])
    weights, _ = nnls(B, c)
    return weights


class _AlignmentMethod(NamedTuple):
    """An alignment-based choice of kernel weights."""

    #: ``(M, a) -> weights``, not yet rescaled to sum 1 (:func:`alignment_weights_from_products`).
    weights: Callable[[np.ndarray, np.ndarray], np.ndarray]
    #: Whether it reads the products of different kernels (``M``'s off-diagonal entries).
    cross_products: bool


_ALIGNMENT_METHODS: dict[str, _AlignmentMethod] = {
    "align": _AlignmentMethod(_align_weights, cross_products=False),
    "alignf": _AlignmentMethod(_alignf_weights, cross_products=True),
}
#: Alignment-based weights of Cortes, Mohri & Rostamizadeh (2012).
ALIGNMENT_METHODS = tuple(_ALIGNMENT_METHODS)


def alignment_weights(kernels: Sequence[np.ndarray], target, *, method: str = "align") -> np.ndarray:
    """Kernel weights from the centred alignment of each kernel with a target (Cortes et al. 2012).

    Parameters
    ----------
    kernels : sequence of ndarray of shape (n, n)
        The base kernels (centred or not: only their centred forms count).
    target : ndarray of shape (n, n)
        The target kernel: ``yy'`` of labels in Cortes et al., here typically the other view's
        kernel of a two-view method.
    method : {"align", "alignf"}, default="align"
        ``"align"`` (Section 3.1): ``μ_m ∝ max(ρ(K_m, T), 0)``, each kernel on its own.
        ``"alignf"`` (Section 3.2, Proposition 9): the weights maximising the alignment of the
        combination ``Σ μ_m K_m`` itself, ``μ ∝ argmin_{v >= 0} v'Mv - 2v'a`` (a non-negative
        least-squares problem), which accounts for kernels that carry the same information.

    Returns
    -------
    ndarray of shape (len(kernels),)
        Non-negative weights summing to 1 (the scale of a sum of normalised kernels is left to
        the solver's regulariser).

    Raises
    ------
    DataError
        If the target or a kernel is constant (its centred matrix is zero, up to round-off: it
        has no alignment), or no kernel aligns positively with the target.
    """
    if not len(kernels):
        raise ParameterError("alignment_weights: no kernels to weight")
    _check_alignment_method(method)
    if _is_zero(centered_inner(target, target), target):
        raise DataError("alignment_weights: the target's centred matrix is zero (a constant target kernel): "
                        "no kernel can align with it")
    a = np.array([centered_inner(K, target) for K in kernels])
    m = len(kernels)
    M = np.zeros((m, m))
    cross_products = _ALIGNMENT_METHODS[method].cross_products
    for k in range(m):
        for l in range(k, m if cross_products else k + 1):
            M[k, l] = M[l, k] = centered_inner(kernels[k], kernels[l])
        if _is_zero(M[k, k], kernels[k]):
            M[k, k] = 0.0  # refused by alignment_weights_from_products, naming the kernel
    return alignment_weights_from_products(M, a, method=method)


def _check_alignment_method(method: str) -> None:
    if method not in ALIGNMENT_METHODS:
        raise ParameterError(f"method must be one of {', '.join(ALIGNMENT_METHODS)}; got {method!r}")


def alignment_weights_from_products(M, a, *, method: str = "align") -> np.ndarray:
    """:func:`alignment_weights` from the kernels' centred inner products rather than the kernels.

    Parameters
    ----------
    M : array-like of shape (m, m)
        ``M_kl = <K_kc, K_lc>_F`` (``"align"`` reads its diagonal only).
    a : array-like of shape (m,)
        ``a_k = <K_kc, T_c>_F`` with the target.
    method : {"align", "alignf"}, default="align"

    Returns
    -------
    ndarray of shape (m,)
        Non-negative weights summing to 1.  ``"align"``'s ``ρ(K_m, T)`` drops the target's norm,
        which scales every weight alike.

    Raises
    ------
    DataError
        If a kernel's centred matrix is zero (``M_kk`` not positive: a constant kernel), or no
        kernel aligns positively with the target.

    Notes
    -----
    What the landmark solver uses: the products of kernels too large to form, from their
    Nyström factors (:func:`kcca_desc.scale.centred_inner_products`).
    """
    _check_alignment_method(method)
    M, a = np.asarray(M, dtype=np.float64), np.asarray(a, dtype=np.float64)
    if not (np.isfinite(M).all() and np.isfinite(a).all()):
        raise DataError("alignment_weights: the kernels' centred inner products hold NaN or infinite values")
    zero = [k for k, mkk in enumerate(np.diagonal(M)) if not mkk > 0]
    if zero:
        raise DataError(f"alignment_weights: the centred matrix of kernel {zero[0]} is zero (a constant kernel): "
                        "it has no alignment with the target; drop it")
    weights = _ALIGNMENT_METHODS[method].weights(M, a)
    if not weights.any():
        raise DataError("no kernel aligns positively with the target: alignment gives every weight 0")
    return weights / weights.sum()


# --------------------------------------------------------------------------- estimator
def _metric_name(kernel) -> str:
    return kernel if isinstance(kernel, str) else getattr(kernel, "__name__", type(kernel).__name__)


class KernelCombination(TransformerMixin, BaseEstimator):
    """A weighted sum of centred, normalised kernels over feature arrays, as a transformer.

    :meth:`fit` computes each base kernel on the training rows, its statistics
    (:func:`kernel_statistics`) and the weights; :meth:`transform` returns the combined kernel
    rows of new items against the training items, ``Σ_m μ_m K̃_m(X_new, X_train)`` (m x n),
    which a precomputed-kernel estimator (``SVC(kernel="precomputed")``, KCCA) takes.
    ``fit_transform(X)`` is the combined training kernel.

    Parameters
    ----------
    kernels : sequence of str or callable, default=("linear",)
        Metrics of :func:`sklearn.metrics.pairwise.pairwise_kernels` (``"linear"``, ``"rbf"``,
        ``"cosine"``...) or callables ``f(A, B) -> (len(A), len(B))`` array.
    kernel_params : sequence of dict or None, default=None
        Keyword arguments of each kernel (e.g. ``{"gamma": 0.1}``).
    weights : None, {"align", "alignf"} or array-like, default=None
        None: equal weights; ``"align"``/``"alignf"``: :func:`alignment_weights` against the
        target ``Y Y'`` of ``y`` given to :meth:`fit`; an array: explicit non-negative weights
        (rescaled to sum 1).
    normalization : {"trace", "diagonal", "none"}, default="trace"

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
    statistics_ : list of KernelStatistics
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((20, 3))
    >>> K = KernelCombination(kernels=("linear", "rbf")).fit_transform(X)
    >>> K.shape, bool(np.allclose(K, K.T))
    ((20, 20), True)
    """

    def __init__(self, *, kernels: Sequence[str | Callable] = ("linear",), kernel_params=None, weights=None,
                 normalization: str = "trace"):
        self.kernels = kernels
        self.kernel_params = kernel_params
        self.weights = weights
        self.normalization = normalization

    def _check_params(self) -> list[dict]:
        if isinstance(self.kernels, str) or not len(self.kernels):
            raise ParameterError(f"kernels must be a non-empty sequence of metric names or callables; "
                                 f"got {self.kernels!r}")
        for kernel in self.kernels:
            if not callable(kernel) and kernel not in PAIRWISE_KERNEL_FUNCTIONS:
                raise ParameterError(f"unknown kernel {kernel!r}; available: "
                                     f"{', '.join(sorted(PAIRWISE_KERNEL_FUNCTIONS))}, or a callable")
        params = list(self.kernel_params) if self.kernel_params is not None else [{}] * len(self.kernels)
        if len(params) != len(self.kernels):
            raise ParameterError(f"{len(params)} kernel_params for {len(self.kernels)} kernels")
        for m, (kernel, settings) in enumerate(zip(self.kernels, params)):
            accepted = kernel_keywords(kernel, pairwise=not callable(kernel))
            if accepted is not None:
                check_settings("KernelCombination", f"kernel_params[{m}]", settings, accepted,
                               target=f"kernel {_metric_name(kernel)!r}")
        _check_normalization(self.normalization)
        if isinstance(self.weights, str) and self.weights not in ALIGNMENT_METHODS:
            raise ParameterError(f"weights must be None, {' or '.join(map(repr, ALIGNMENT_METHODS))} or an array; "
                                 f"got {self.weights!r}")
        return [dict(p or {}) for p in params]

    def _kernel(self, m: int, A: np.ndarray, B: np.ndarray | None) -> np.ndarray:
        kernel, params = self.kernels[m], self._params[m]
        K = kernel(A, A if B is None else B, **params) if callable(kernel) else \
            pairwise_kernels(A, B, metric=kernel, **params)
        K = np.asarray(K, dtype=np.float64)
        if not np.isfinite(K).all():
            raise DataError(f"kernel {_metric_name(kernel)} gave NaN or infinite values")
        return K

    def _self_similarities(self, m: int, X: np.ndarray) -> np.ndarray:
        # The diagonal of k(X, X) a block at a time: only "diagonal" normalisation needs it.
        step = 256
        return np.concatenate([np.diagonal(self._kernel(m, X[s:s + step], None)) for s in range(0, len(X), step)])

    def fit(self, X, y=None) -> "KernelCombination":
        """Compute the base kernels' statistics and the weights on the training rows ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets), optional
            The target of alignment weights (its linear kernel ``Y Y'``); ignored otherwise.
        """
        self._params = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        grams, self.statistics_ = [], []
        for m in range(len(self.kernels)):
            K = self._kernel(m, X, None)
            self.statistics_.append(kernel_statistics(K, normalization=self.normalization))
            grams.append(normalize_train_kernel(K, self.statistics_[-1], copy=False))
        if self.weights is None:
            weights = np.ones(len(grams))
        elif isinstance(self.weights, str):
            if y is None:
                raise ParameterError(f"weights={self.weights!r} aligns the kernels with the target y; pass y to fit")
            Y = check_array(y, dtype=np.float64, ensure_2d=False, input_name="y").reshape(len(X), -1)
            weights = alignment_weights(grams, Y @ Y.T, method=self.weights)
        else:
            weights = check_weights(self.weights, len(grams))
        self.weights_ = weights / weights.sum()
        self.X_fit_ = X
        return self

    def transform(self, X) -> np.ndarray:
        """Combined kernel rows of ``X`` against the training rows, shape (n_samples, n_train)."""
        check_is_fitted(self, "weights_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = np.zeros((X.shape[0], self.X_fit_.shape[0]))
        # Only a normalisation that divides new rows by their roots needs the items' k(x, x).
        needs_diagonal = _NORMALIZATIONS[self.normalization].new_roots is not None
        for m, (weight, statistics) in enumerate(zip(self.weights_, self.statistics_)):
            if weight == 0:
                continue
            diagonal = self._self_similarities(m, X) if needs_diagonal else None
            out += weight * normalize_cross_kernel(self._kernel(m, X, self.X_fit_), statistics,
                                                   diagonal_new=diagonal, copy=False)
        return out
