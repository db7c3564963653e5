"""Dense reference solver for regularised kernel CCA, for testing on small inputs.

Solves the full 2n x 2n symmetric-definite generalised eigenproblem of
Bach & Jordan (2002) / Hardoon et al. (2004),

    [[0, Kx Ky], [Ky Kx, 0]] v = rho [[Rx, 0], [0, Ry]] v,   v = (alpha, beta),

with ``Rx = Kx^2 + reg Kx`` (ridge) or ``(1 - reg) Kx^2 + reg Kx`` (Hardoon),
directly with ``scipy.linalg.eigh``.  It is O(n^3) on a 2n problem and
written for clarity, not speed.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._core.errors import ParameterError

__all__ = ["reference_kcca", "center_kernel"]


def center_kernel(K: np.ndarray) -> np.ndarray:
    """``H K H`` with the explicit centring matrix ``H = I - 11'/n``."""
    n = K.shape[0]
    H = np.eye(n) - np.full((n, n), 1.0 / n)
    return H @ K @ H


def reference_kcca(
    Kx: np.ndarray,
    Ky: np.ndarray,
    reg: float,
    n_components: int,
    *,
    reg_form: str = "ridge",
    center: bool = True,
    jitter: float = 1e-12,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top canonical correlations and dual weights by the dense generalised eigenproblem.

    Parameters
    ----------
    Kx, Ky : ndarray of shape (n, n)
        Training kernels (centred here when ``center``).
    reg : float
        Regulariser kappa.
    n_components : int
        Number of canonical pairs returned.
    reg_form : {"ridge", "hardoon"}
        Regularised norm, as in :class:`~kcca_desc.kcca.KCCA`.
    center : bool
        Centre both kernels with ``H = I - 11'/n`` first.
    jitter : float
        Centred kernels are singular (the constant vector is in their null
        space), so the right-hand side ``blockdiag(Rx, Ry)`` is only
        semi-definite; ``jitter * max(diag)`` is added to its diagonal to make
        it definite.  Null-space directions then get eigenvalue 0 and the
        others move by O(jitter / smallest non-zero eigenvalue of R).

    Returns
    -------
    correlations : ndarray of shape (n_components,)
    alpha, beta : ndarray of shape (n, n_components)
        Dual weights normalised so that ``alpha' Rx alpha = 1``.
    """
    if center:
        Kx, Ky = center_kernel(Kx), center_kernel(Ky)
    n = Kx.shape[0]
    if reg_form == "ridge":
        Rx, Ry = Kx @ Kx + reg * Kx, Ky @ Ky + reg * Ky
    elif reg_form == "hardoon":
        Rx, Ry = (1 - reg) * Kx @ Kx + reg * Kx, (1 - reg) * Ky @ Ky + reg * Ky
    else:
        raise ParameterError(f"reg_form must be 'ridge' or 'hardoon', got {reg_form!r}")
    zero = np.zeros((n, n))
    A = np.block([[zero, Kx @ Ky], [Ky @ Kx, zero]])
    B = np.block([[Rx, zero], [zero, Ry]])
    B += jitter * np.abs(np.diag(B)).max() * np.eye(2 * n)
    A = (A + A.T) / 2
    values, vectors = linalg.eigh(A, (B + B.T) / 2)
    top = np.argsort(values)[::-1][:n_components]
    alpha, beta = vectors[:n, top], vectors[n:, top]
    # Within a pair, alpha' Rx alpha = beta' Ry beta; rescale each to 1.
    alpha = alpha / np.sqrt(np.einsum("ik,ij,jk->k", alpha, Rx, alpha))
    beta = beta / np.sqrt(np.einsum("ik,ij,jk->k", beta, Ry, beta))
    return values[top], alpha, beta
