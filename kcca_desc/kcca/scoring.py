"""Held-out canonical correlations: the ``score`` of the CCA estimators.

scikit-learn's model selection (:class:`~sklearn.model_selection.GridSearchCV`,
:func:`~sklearn.model_selection.cross_val_score`) calls ``estimator.score(X, Y)`` on each
held-out fold when no scorer is given. For CCA the natural figure is how well the canonical
directions learnt on the training pairs correlate the two views of new pairs: the mean, over the
top ``n_components`` directions, of the Pearson correlation between the projections of the
held-out ``X`` and ``Y``. Held-out correlation is the usual criterion for the regulariser of
kernel CCA, whose training correlations approach 1 as the regulariser shrinks (Hardoon,
Szedmak & Shawe-Taylor 2004).
"""

from __future__ import annotations

import numpy as np

from .._core.errors import DataError
from .._core.validation import invalid_parameter

__all__ = ["CanonicalScoreMixin", "heldout_correlations", "correlation_weights"]


def correlation_weights(correlations, weight_power: float, *, owner="KCCA") -> np.ndarray:
    """Each projected dimension's weight ``rho_k ** weight_power``, refused when it is degenerate.

    A ``weight_power`` so large that every weight underflows to 0 makes every projection 0 (all
    scores tie), and a negative one on a correlation of 0, or one so negative that the weights
    overflow, makes them infinite (NaN scores): both are :class:`InvalidParameterError` naming
    ``weight_power``, rather than scores that rank nothing.

    Parameters
    ----------
    correlations : array-like of shape (k,)
        The canonical correlations of the dimensions projected.
    weight_power : float
    owner : estimator or str, default="KCCA"
        Whose parameter it is, for the message.
    """
    rho = np.asarray(correlations, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", under="ignore", invalid="ignore"):
        weights = rho ** weight_power
    if rho.size and (not np.isfinite(weights).all() or not weights.any()):
        what = "overflow to infinity" if not np.isfinite(weights).all() else "underflow to 0 in every dimension"
        raise invalid_parameter(
            owner, "weight_power", f"such that the weights rho ** weight_power of the canonical correlations "
            f"(here {rho.min():.3g} to {rho.max():.3g}) are finite and not all 0; they {what}, so every score "
            "would tie or be NaN", weight_power)
    return weights


def heldout_correlations(x_scores: np.ndarray, y_scores: np.ndarray) -> np.ndarray:
    """Pearson correlation of each pair of projected columns.

    .. math:: r_k = \\frac{\\sum_i (u_{ik} - \\bar u_k)(v_{ik} - \\bar v_k)}
                     {\\sqrt{\\sum_i (u_{ik} - \\bar u_k)^2 \\sum_i (v_{ik} - \\bar v_k)^2}}

    Parameters
    ----------
    x_scores, y_scores : ndarray of shape (n, k)
        Projections of n paired items of the two views.

    Returns
    -------
    ndarray of shape (k,)
        ``r_k`` in [-1, 1]; 0 for a direction on which either view's projections are constant
        (no linear relation can be measured there).
    """
    def standardised(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Each column divided by its largest magnitude first: r does not depend on scale, and
        # tiny or huge projections neither underflow nor overflow when squared.
        peak = np.abs(scores).max(axis=0, initial=0.0)
        centred = scores / np.where(peak > 0, peak, 1.0)
        centred = centred - centred.mean(axis=0)
        return centred, np.sqrt((centred * centred).sum(axis=0))

    (x, norm_x), (y, norm_y) = standardised(x_scores), standardised(y_scores)
    # A column is constant when its spread is rounding error (the mean of equal floats need not
    # equal them exactly), not only when it is exactly zero.
    tolerance = x_scores.shape[0] * np.finfo(float).eps
    varies = (norm_x > tolerance) & (norm_y > tolerance)
    covariance = (x * y).sum(axis=0)
    r = np.divide(covariance, norm_x * norm_y, out=np.zeros_like(covariance), where=varies)
    return np.clip(r, -1.0, 1.0)


class CanonicalScoreMixin:
    """``score(X, y)``: the mean held-out canonical correlation (see the module docstring).

    The estimator's ``transform(X, Y)`` must return the pair of projections.
    """

    def score(self, X, y, sample_weight=None) -> float:
        """Mean held-out correlation of the top ``n_components`` canonical directions.

        .. math:: \\mathrm{score} = \\frac{1}{k} \\sum_{j=1}^{k} \\mathrm{corr}(X_{new} w_{x,j}, Y_{new} w_{y,j})

        Larger is better, as scikit-learn's model selection expects. The top directions
        correlate most, so compare settings at the same ``n_components`` with it (regularisers,
        kernels); to choose ``n_components``, score the retrieval it serves instead.

        Parameters
        ----------
        X, y : array-like
            At least two new pairs, as ``transform(X, Y)`` takes them (the second view is
            named ``y`` here because scikit-learn's model selection passes it so).
        sample_weight : None
            Not supported (kept for scikit-learn's signature).

        Returns
        -------
        float
            In [-1, 1].
        """
        if sample_weight is not None:
            raise DataError(f"{type(self).__name__}.score does not take sample weights")
        x_scores, y_scores = self.transform(X, y)
        if x_scores.shape[0] < 2:
            raise DataError(f"{type(self).__name__}.score needs at least 2 held-out pairs, got {x_scores.shape[0]}")
        return float(np.mean(heldout_correlations(x_scores, y_scores)))
