"""Regularised linear canonical correlation analysis (primal form).

Used to bridge two embedding spaces (e.g. MiniLM sentences and ViT images)
and, over explicit kernel feature maps (Nyström), as low-rank kernel CCA.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin

from .._core.errors import DataError
from .._core.validation import POSITIVE_INT, POSITIVE_REAL, ValidatedParams, check_array, check_is_fitted, invalid_parameter
from .scoring import CanonicalScoreMixin

__all__ = ["LinearCCA"]


def _inverse_sqrt(c: np.ndarray) -> np.ndarray:
    values, vectors = linalg.eigh(c)
    return (vectors / np.sqrt(values)) @ vectors.T


class LinearCCA(ValidatedParams, CanonicalScoreMixin, TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Regularised linear CCA (Hotelling 1936; Vinod 1976).

    Finds directions w_x, w_y maximising

        w_x' C_xy w_y / sqrt( w_x' (C_xx + r_x I) w_x · w_y' (C_yy + r_y I) w_y ),

    with C the covariances of the centred training views and ridge terms
    r_x = reg · tr(C_xx)/d_x, r_y = reg · tr(C_yy)/d_y (scale-free: ``reg`` is a
    fraction of the mean variance).  Solved exactly through the SVD of
    (C_xx + r_x I)^{-1/2} C_xy (C_yy + r_y I)^{-1/2}, whose singular values are
    the canonical correlations.  Cost O(n d² + d³).

    Over Nyström features Φ with K ≈ ΦΦ' this is kernel CCA in the
    α'K²α + κα'Kα regularised form (Bach & Jordan 2002).

    Parameters
    ----------
    n_components : int, default=128
        Number of canonical pairs kept.
    reg : float, default=1e-2
        Relative ridge; must be > 0 (plain CCA overfits high-dimensional views).

    Attributes
    ----------
    n_features_in_ : int
        Columns of ``X``.
    x_mean_, y_mean_ : ndarray
        Training means.
    x_weights_, y_weights_ : ndarray of shape (d_x, k), (d_y, k)
        Projection matrices; the training projections have unit regularised variance.
    correlations_ : ndarray of shape (k,)
        Regularised canonical correlations, decreasing.

    See Also
    --------
    sklearn.cross_decomposition.CCA : iterative (NIPALS) CCA without ridge.

    References
    ----------
    Hotelling, H. (1936). Relations between two sets of variates. Biometrika 28.

    Vinod, H. D. (1976). Canonical ridge and econometrics of joint production.

    Bach, F. & Jordan, M. (2002). Kernel independent component analysis. JMLR 3.
    """

    def __init__(self, *, n_components: int = 128, reg: float = 1e-2):
        self.n_components = n_components
        self.reg = reg

    _parameter_constraints = {"n_components": [POSITIVE_INT], "reg": [POSITIVE_REAL]}

    def fit(self, X: np.ndarray, Y: np.ndarray) -> "LinearCCA":
        """Fit on paired rows of ``X`` (n, d_x) and ``Y`` (n, d_y)."""
        self._validate_params()
        X = self._check(X, "X")
        Y = self._check(Y, "Y")
        self.n_features_in_ = X.shape[1]
        if X.shape[0] != Y.shape[0]:
            raise DataError(f"X and Y must have the same number of rows, got {X.shape[0]} and {Y.shape[0]}")
        if X.shape[0] < 2:
            raise DataError(f"LinearCCA needs at least 2 paired samples, got n_samples = {X.shape[0]}")
        k_max = min(X.shape[1], Y.shape[1])
        if self.n_components > k_max:
            raise invalid_parameter(self, "n_components", f"at most min(d_x, d_y) = {k_max}", self.n_components)
        self.x_mean_ = X.mean(axis=0)
        self.y_mean_ = Y.mean(axis=0)
        Xc, Yc = X - self.x_mean_, Y - self.y_mean_
        n = X.shape[0]
        cxx = Xc.T @ Xc / (n - 1)
        cyy = Yc.T @ Yc / (n - 1)
        cxy = Xc.T @ Yc / (n - 1)
        cxx[np.diag_indices_from(cxx)] += self._ridge(cxx)
        cyy[np.diag_indices_from(cyy)] += self._ridge(cyy)
        wx, wy = _inverse_sqrt(cxx), _inverse_sqrt(cyy)
        u, s, vt = linalg.svd(wx @ cxy @ wy, full_matrices=False)
        k = self.n_components
        self.x_weights_ = wx @ u[:, :k]
        self.y_weights_ = wy @ vt[:k].T
        self.correlations_ = s[:k]
        return self

    def _ridge(self, c: np.ndarray) -> float:
        # A constant view still gets a positive ridge so the inverse exists.
        return self.reg * max(np.trace(c) / c.shape[0], np.finfo(float).tiny)

    @staticmethod
    def _check(A, name: str) -> np.ndarray:
        # A 1-D Y is one feature (as a regression target); X must be 2-D.
        A = check_array(A, dtype=np.float64, ensure_2d=name == "X", input_name=name)
        return A[:, None] if A.ndim == 1 else A

    def _project(self, A, name: str, mean: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Rows of view ``name``, centred by its training ``mean``, times its canonical ``weights``."""
        A = self._check(A, name)
        if A.shape[1] != mean.shape[0]:
            raise DataError(f"{name} has {A.shape[1]} features, but LinearCCA is expecting {mean.shape[0]} "
                            "features as input")
        return (A - mean) @ weights

    def transform_x(self, X: np.ndarray) -> np.ndarray:
        """Project rows of ``X`` onto the canonical directions, (n, k)."""
        check_is_fitted(self, "x_weights_")
        return self._project(X, "X", self.x_mean_, self.x_weights_)

    def transform_y(self, Y: np.ndarray) -> np.ndarray:
        """Project rows of ``Y`` onto the canonical directions, (n, k)."""
        check_is_fitted(self, "y_weights_")
        return self._project(Y, "Y", self.y_mean_, self.y_weights_)

    def transform(self, X: np.ndarray, Y: np.ndarray | None = None):
        """``transform_x(X)``, or ``(transform_x(X), transform_y(Y))`` when Y is given."""
        if Y is None:
            return self.transform_x(X)
        return self.transform_x(X), self.transform_y(Y)
