"""Regularised kernel CCA in the eigenbases of the two centred kernels.

With centred kernels ``Kx = Ux Lx Ux'`` and ``Ky = Uy Ly Uy'`` (orthonormal
columns, positive eigenvalues), write the dual weights as ``alpha = Ux a`` and
``beta = Uy b``.  The regularised KCCA objective (Bach & Jordan 2002; Hardoon,
Szedmak & Shawe-Taylor 2004)

    rho = alpha' Kx Ky beta / sqrt(alpha' Rx alpha * beta' Ry beta),
    Rx = Kx^2 + reg Kx                       ("ridge")
    Rx = (1 - reg) Kx^2 + reg Kx             ("hardoon")

becomes, with ``Rx = Ux diag(q(lx)) Ux'`` diagonal in the eigenbasis and the
whitened coordinates ``a~ = q(lx)^(1/2) a``,

    rho = a~' Wx (Ux' Uy) Wy b~ / (||a~|| ||b~||),   Wx = diag(lx / sqrt(q(lx))).

The canonical correlations are therefore the singular values of
``M = Wx (Ux'Uy) Wy`` and the dual weights are
``alpha = Ux diag(q(lx)^(-1/2)) P`` with ``P`` its left singular vectors.
The cross product ``Ux'Uy`` does not depend on ``reg``: every regulariser and
every number of components re-uses one pair of eigendecompositions.

Both solvers of :class:`~kcca_desc.kcca.KCCA` reduce to this form: the exact
one through ``scipy.linalg.eigh`` of each centred kernel, the low-rank one
through the eigendecomposition of a centred incomplete Cholesky factor
(``Kx ~= G G'``, ``G'G = V L V'``, ``Ux = G V L^(-1/2)``).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from threadpoolctl import threadpool_limits

from .._core.errors import DataError, ParameterError, warn_user

_LOGGER = logging.getLogger("kcca_desc.kcca")

__all__ = [
    "KernelSpectrum",
    "rank_cutoff",
    "n_canonical_pairs",
    "INDEFINITE_SHARE_TOLERANCE",
    "spectrum_from_kernel",
    "spectrum_from_factor",
    "spectrum_from_gram",
    "warn_if_indefinite",
    "regularised_norm",
    "CanonicalSolution",
    "solve_canonical",
]


@dataclass(frozen=True)
class KernelSpectrum:
    """Positive part of the spectrum of a centred kernel: ``K ~= vectors diag(values) vectors'``.

    Attributes
    ----------
    vectors : ndarray of shape (n_samples, rank)
        Orthonormal eigenvectors.
    values : ndarray of shape (rank,)
        Positive eigenvalues, in decreasing order.
    trace : float
        Trace of the (centred) kernel that was decomposed, for diagnostics
        (``values.sum() / trace`` is the share of variance kept).
    n_negative : int
        Clearly negative eigenvalues dropped (the kernel is not positive semi-definite).
    smallest : float
        The most negative eigenvalue when there are such, else 0.
    negative_share : float
        The share of the absolute eigenvalue mass that the negative eigenvalues hold.
    """

    vectors: np.ndarray
    values: np.ndarray
    trace: float
    # Plain defaults (class attributes), so that spectra pickled before these fields still load.
    n_negative: int = 0
    smallest: float = 0.0
    negative_share: float = 0.0

    @property
    def rank(self) -> int:
        return self.values.shape[0]


def rank_cutoff(n: int, largest: float) -> float:
    """The numerical-rank tolerance of an n x n symmetric matrix: ``n eps max|lambda|``.

    Eigenvalues at or below it are numerically zero.  It is the tolerance of
    :func:`numpy.linalg.matrix_rank` (Press et al., *Numerical Recipes*, 2nd ed., Section 2.6), whose
    singular values are, for a symmetric matrix, the eigenvalues' magnitudes: a positive
    semi-definite kernel's numerical rank is the number of its eigenvalues above the cutoff.

    Parameters
    ----------
    n : int
        Order of the matrix.
    largest : float
        Its largest eigenvalue magnitude ``max|lambda|``.
    """
    return n * np.finfo(np.float64).eps * largest


def _positive_part(values: np.ndarray, vectors: np.ndarray, trace: float) -> KernelSpectrum:
    """Keep eigenpairs above :func:`rank_cutoff` (as ``numpy.linalg.matrix_rank``), decreasing.

    Centring puts the constant vector in every kernel's null space and
    low-rank kernels have more null directions; their eigenvalues come out as
    tiny numbers of either sign, carry no signal and would blow up the
    whitening ``q(lambda)^(-1/2)``, so they are dropped.  Clearly negative
    eigenvalues mean the kernel is not positive semi-definite: they are
    dropped too (projection onto the PSD cone), and recorded in the spectrum
    for :func:`warn_if_indefinite`.
    """
    # eigh returns ascending eigenvalues, so decreasing order is a reversed view (no copy).
    values, vectors = values[::-1], vectors[:, ::-1]
    scale = np.abs(values).max() if values.size else 0.0
    cutoff = rank_cutoff(max(vectors.shape[0], values.size), scale)
    negative = {}
    if values.size and values[-1] < -np.sqrt(np.finfo(np.float64).eps) * scale:
        below = values[values < 0]
        negative = {"n_negative": int(below.size), "smallest": float(values[-1]),
                    "negative_share": float(-below.sum() / np.abs(values).sum())}
    # Decreasing values: the kept ones are a prefix, and one copy makes them contiguous.
    rank = int(np.count_nonzero(values > cutoff))
    return KernelSpectrum(np.ascontiguousarray(vectors[:, :rank]), values[:rank].copy(), trace, **negative)


def n_canonical_pairs(spectrum_x: KernelSpectrum, spectrum_y: KernelSpectrum, n_components: int, *,
                      names: tuple[str, str] = ("centred kernel X", "centred kernel Y"), clip: bool = False) -> int:
    """The number of canonical pairs to solve for: ``n_components``, within the kernels' ranks.

    KCCA finds ``min(rank_x, rank_y)`` canonical pairs at most: a direction outside either
    kernel's range has no correlation (the ranks are numerical ranks, see :func:`rank_cutoff`).

    Parameters
    ----------
    spectrum_x, spectrum_y : KernelSpectrum
        The two centred kernels' spectra.
    n_components : int
        The pairs asked for.
    names : (str, str)
        What the two kernels are, for messages (e.g. ``"the training kernel of the images"``).
    clip : bool, default=False
        Return ``min(n_components, min(rank_x, rank_y))`` rather than raise when there are fewer pairs.

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        When ``n_components`` exceeds the number of pairs and ``clip`` is False, naming the kernel of lower
        rank and its rank.
    DataError
        When a kernel has rank 0 (its training items are all alike to it): there is no pair at all.
    """
    limit = min(spectrum_x.rank, spectrum_y.rank)
    if n_components <= limit:
        return n_components
    name = names[0] if spectrum_x.rank <= spectrum_y.rank else names[1]
    why = f"{name} has numerical rank {limit} (eigenvalues above n eps lambda_max)"
    if limit == 0:
        raise DataError(f"KCCA finds no canonical pair: {why}, so its training items are all alike to it")
    if not clip:
        raise ParameterError(f"n_components={n_components} exceeds the {limit} canonical pairs KCCA can find: {why}")
    return limit


# Share of a kernel's absolute eigenvalue mass held by negative eigenvalues above which the kernel
# is reported as not positive semi-definite.  KCCA drops the negative directions, i.e. works on the
# nearest PSD kernel, which differs from the given one by exactly the negative mass in trace norm;
# below 0.1 % of the spectrum that change is far smaller than one step of the regulariser grid
# (a factor of 10), so it is not worth the user's attention.  Semantic text kernels are mildly
# indefinite by construction: tri_sem on the default synthetic data has a share of 6e-5.
INDEFINITE_SHARE_TOLERANCE = 1e-3


def warn_if_indefinite(spectrum: KernelSpectrum, name: str) -> None:
    """Warn, in the user's terms and at the user's call, that the kernel ``name`` is not PSD.

    Only when its negative eigenvalues hold more than :data:`INDEFINITE_SHARE_TOLERANCE` of the
    spectrum's absolute mass (``spectrum.negative_share``); a smaller negative part is logged on
    the ``kcca_desc.kcca`` logger at ``DEBUG`` level.  Called after every decomposition, cached
    or not, so that a run read from the cache warns as the run that computed it did; Python shows
    the same warning once per call site, so once per run and kernel.
    """
    if spectrum.n_negative and spectrum.negative_share <= INDEFINITE_SHARE_TOLERANCE:
        _LOGGER.debug("%s: %d negative eigenvalues hold %.2g of the spectrum's weight, within the tolerance %g",
                      name, spectrum.n_negative, spectrum.negative_share, INDEFINITE_SHARE_TOLERANCE)
    elif spectrum.n_negative:
        largest = spectrum.values[0] if spectrum.rank else 0.0
        warn_user(f"{name} is not positive semi-definite: {spectrum.n_negative} of its eigenvalues are negative "
                  f"(smallest {spectrum.smallest:.3g}, largest {largest:.3g}; {spectrum.negative_share:.1%} of the "
                  "spectrum's weight); KCCA ignores those directions", RuntimeWarning)


def spectrum_from_kernel(K_centred: np.ndarray, name: str = "kernel") -> KernelSpectrum:
    """Eigendecompose a dense centred kernel with LAPACK's divide-and-conquer ``syevd``.

    ``K_centred`` is used as workspace and overwritten.
    """
    trace = float(np.trace(K_centred))
    values, vectors = linalg.eigh(K_centred, driver="evd", overwrite_a=True, check_finite=False)
    spectrum = _positive_part(values, vectors, trace)
    warn_if_indefinite(spectrum, name)
    return spectrum


def spectrum_from_gram(gram: np.ndarray, trace: float, *, name: str = "kernel") -> KernelSpectrum:
    """Positive eigenpairs ``G'G = V L V'`` of a factor's small Gram matrix, ``vectors = V``.

    ``G G'`` and ``G'G`` share their positive eigenvalues ``L``, and ``U = G V L^(-1/2)``
    are the eigenvectors of ``G G'``; a solver that keeps ``G`` in blocks accumulates
    ``G'G`` block by block and never needs ``U`` (:mod:`kcca_desc.scale`).
    """
    values, V = linalg.eigh(gram, driver="evd", check_finite=False)
    spectrum = _positive_part(values, V, trace)
    warn_if_indefinite(spectrum, name)
    return spectrum


def spectrum_from_factor(G: np.ndarray, trace: float, *, name: str = "kernel") -> KernelSpectrum:
    """Spectrum of ``G G'`` from the small Gram matrix ``G'G = V L V'``: ``U = G V L^(-1/2)``.

    Costs O(n m^2) for ``G`` of shape (n, m) and never forms an n x n matrix.
    """
    spectrum = spectrum_from_gram(G.T @ G, trace, name=name)
    vectors = G @ (spectrum.vectors / np.sqrt(spectrum.values))
    return dataclasses.replace(spectrum, vectors=vectors)


def regularised_norm(values: np.ndarray, reg: float, form: str) -> np.ndarray:
    """Eigenvalues ``q(lambda)`` of the regularised norm matrix ``R`` for each kernel eigenvalue.

    ``"ridge"``: ``lambda^2 + reg lambda``; ``"hardoon"``: ``(1 - reg) lambda^2 + reg lambda``.
    """
    if form == "ridge":
        return values * (values + reg)
    if form == "hardoon":
        return values * ((1.0 - reg) * values + reg)
    raise ParameterError(f"reg_form must be 'ridge' or 'hardoon', got {form!r}")


@dataclass(frozen=True)
class CanonicalSolution:
    """Top canonical pairs in eigen-coordinates.

    ``alpha = spectrum_x.vectors @ coef_x`` and the training projections are
    ``Kx alpha = spectrum_x.vectors @ (spectrum_x.values[:, None] * coef_x)``.
    """

    correlations: np.ndarray
    coef_x: np.ndarray
    coef_y: np.ndarray

    def directions(self, spectrum_x: KernelSpectrum, spectrum_y: KernelSpectrum) -> tuple[np.ndarray, np.ndarray]:
        """The dual canonical directions ``alpha = Ux coef_x`` and ``beta = Uy coef_y``."""
        return spectrum_x.vectors @ self.coef_x, spectrum_y.vectors @ self.coef_y


def _svd_of_wide(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``S = U diag(sigma) Vt`` of a wide k x m matrix (k << m) through its QR factors.

    ``S' = Q R`` (one threaded BLAS-3 factorisation), then the k x k SVD ``R' = W sigma Z'`` in one
    thread, so ``S = W sigma (Q Z)'``.  The small SVD is a long chain of tiny LAPACK steps on which
    OpenBLAS's threads only add synchronisation: on two busy cores, a 256 x 6,000 ``gesdd`` took
    3-11 s with two threads and 1 s with one, and this route 0.3 s.
    """
    Q, R = linalg.qr(S.T, mode="economic", check_finite=False)
    with threadpool_limits(1):
        W, sigma, Zt = linalg.svd(R.T, lapack_driver="gesdd", check_finite=False)
    return W, sigma, Zt @ Q.T


def _top_singular_triplets(
    M: np.ndarray, k: int, dtype: np.dtype = np.float64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top ``k`` singular triplets of ``M`` through the eigenvectors of its smaller Gram matrix.

    ``eigh(M M', subset_by_index=...)`` (LAPACK ``syevr``) computes only the
    wanted eigenvectors and, after one matrix product, costs about half a full
    ``gesdd`` SVD of a square ``M``.  Squaring costs accuracy only for tiny
    singular values (absolute error ~ eps ||M||^2 / sigma); when one of the
    wanted ``sigma^2`` is below ``r eps max(sigma_max^2, 1)``, numerically zero, the partner vectors
    ``M' p / sigma`` are undefined, so the full SVD is used instead.

    With ``dtype=float32`` the Gram product and ``ssyevr`` run in single
    precision (1.6 times as fast at r = 6,000: the tridiagonal reduction
    is memory bound) and only find the subspace; the triplets are then computed in
    double precision by Rayleigh-Ritz, the SVD of ``P' M`` for the
    orthonormalised single-precision vectors ``P``.  The singular values are
    then exact double-precision Ritz values of that subspace (within
    ~eps_single^2 of the true ones relative to ``||M||``, second order in the
    subspace error) and the vectors exact singular vectors of ``P P' M``;
    Rayleigh-Ritz needs no division by ``sigma``, so numerically zero
    singular values need no fallback.
    """
    transpose = M.shape[0] > M.shape[1]
    A = M.T if transpose else M
    r = A.shape[0]
    A_solve = A.astype(dtype, copy=False)
    values, P = linalg.eigh(A_solve @ A_solve.T, subset_by_index=[r - k, r - 1], driver="evr",
                            check_finite=False)
    del A_solve
    values, P = values[::-1], P[:, ::-1]
    if P.dtype != np.float64:
        basis, _ = linalg.qr(P.astype(np.float64), mode="economic", check_finite=False)
        U_small, sigma, Vt = _svd_of_wide(basis.T @ A)
        P, Q = basis @ U_small, Vt.T
        return (Q, sigma, P) if transpose else (P, sigma, Q)
    # Correlations live on the scale of 1, whatever the largest one is.
    if values[-1] <= r * np.finfo(np.float64).eps * max(values[0], 1.0):
        U, sigma, Vt = linalg.svd(M, full_matrices=False, lapack_driver="gesdd", check_finite=False)
        return U[:, :k], sigma[:k], Vt[:k].T
    sigma = np.sqrt(np.maximum(values, 0.0))
    Q = (A.T @ P) / sigma
    return (Q, sigma, P) if transpose else (P, sigma, Q)


def solve_canonical(
    spectrum_x: KernelSpectrum,
    spectrum_y: KernelSpectrum,
    cross: np.ndarray,
    reg: float,
    form: str,
    n_components: int,
    *,
    dtype: np.dtype = np.float64,
) -> CanonicalSolution:
    """Top ``n_components`` canonical correlations and weights from ``cross = Ux'Uy``.

    ``dtype=float32`` finds the singular subspace in single precision and
    refines it in double (see ``_top_singular_triplets``).

    Singular vectors' signs are fixed so that each ``x`` direction's largest
    entry is positive (as ``sklearn.utils.extmath.svd_flip``), making results
    deterministic.
    """
    qx = regularised_norm(spectrum_x.values, reg, form)
    qy = regularised_norm(spectrum_y.values, reg, form)
    wx = spectrum_x.values / np.sqrt(qx)
    wy = spectrum_y.values / np.sqrt(qy)
    P, sigma, Q = _top_singular_triplets(wx[:, None] * cross * wy[None, :], n_components, dtype)
    signs = np.sign(P[np.abs(P).argmax(axis=0), np.arange(P.shape[1])])
    signs[signs == 0] = 1.0
    P, Q = P * signs, Q * signs
    return CanonicalSolution(sigma, P / np.sqrt(qx)[:, None], Q / np.sqrt(qy)[:, None])
