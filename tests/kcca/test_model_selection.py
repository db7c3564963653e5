"""scikit-learn model selection with the CCA estimators: ``score``, precomputed kernels, estimator checks."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from kcca_desc import KccaDescError
from kcca_desc.kcca import KCCA, LinearCCA, PrecomputedKernel, heldout_correlations
from kcca_desc.scale.estimator import LandmarkKCCA


def two_views(n=60, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    X = Z @ rng.normal(size=(2, 5)) + 0.3 * rng.normal(size=(n, 5))
    Y = Z @ rng.normal(size=(2, 4)) + 0.3 * rng.normal(size=(n, 4))
    return X, Y


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, (7, 3), elements=st.floats(-10, 10)), arrays(np.float64, (7, 3), elements=st.floats(-10, 10)))
def test_heldout_correlations_are_pearson_per_column(x, y):
    r = heldout_correlations(x, y)
    for k in range(3):
        if np.ptp(x[:, k]) == 0 or np.ptp(y[:, k]) == 0:
            assert r[k] == 0.0  # no relation can be measured on a constant column
        elif min(np.ptp(x[:, k]) / np.abs(x[:, k]).max(), np.ptp(y[:, k]) / np.abs(y[:, k]).max()) < 1e-9:
            continue  # spread at rounding level: either answer is defensible
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                # Pearson's r does not depend on scale; rescaling keeps numpy's squares from underflowing.
                expected = np.corrcoef(x[:, k] / np.abs(x[:, k]).max(), y[:, k] / np.abs(y[:, k]).max())[0, 1]
            if np.isfinite(expected):
                assert r[k] == pytest.approx(expected, abs=1e-9)
    assert np.all(np.abs(r) <= 1 + 1e-12)


@pytest.mark.parametrize("model", [
    KCCA(n_components=2, kernel_x="linear", kernel_y="linear", reg=0.1),
    LinearCCA(n_components=2, reg=0.1),
    LandmarkKCCA(n_components=2, rank=5, reg=0.1),
], ids=["KCCA", "LinearCCA", "LandmarkKCCA"])
def test_score_is_the_mean_heldout_correlation_and_serves_cross_validation(model):
    X, Y = two_views()
    fitted = clone(model).fit(X[:40], Y[:40])
    x_scores, y_scores = fitted.transform(X[40:], Y[40:])
    by_hand = np.mean([np.corrcoef(x_scores[:, k], y_scores[:, k])[0, 1] for k in range(2)])
    assert fitted.score(X[40:], Y[40:]) == pytest.approx(by_hand, abs=1e-9)
    assert by_hand > 0.5  # the shared latent signal is found on new pairs
    scores = cross_val_score(clone(model), X, Y, cv=3)  # no scorer: the estimator's score
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    with pytest.raises(KccaDescError, match="at least 2 held-out pairs"):
        fitted.score(X[:1], Y[:1])


def test_grid_search_on_precomputed_kernels_equals_the_search_on_features():
    X, Y = two_views()
    grid = {"reg": [1e-3, 0.1, 10.0, 1e3]}
    cv = KFold(3, shuffle=True, random_state=0)
    on_features = GridSearchCV(KCCA(n_components=2, kernel_x="linear", kernel_y="linear"), grid, cv=cv).fit(X, Y)
    Kx, Ky = PrecomputedKernel(X @ X.T), PrecomputedKernel(Y @ Y.T)
    on_kernels = GridSearchCV(KCCA(n_components=2, kernel_x=Kx, kernel_y=Ky), grid, cv=cv).fit(Kx.items(), Kx.items())
    np.testing.assert_allclose(on_kernels.cv_results_["mean_test_score"], on_features.cv_results_["mean_test_score"],
                               rtol=1e-7, atol=1e-9)
    assert on_kernels.best_params_ == on_features.best_params_
    # The candidates and folds share the one Gram matrix rather than copying it.
    assert on_kernels.best_estimator_.kernel_x is Kx


def test_precomputed_kernel_blocks_match_the_callable_pair_by_pair():
    X, _ = two_views(n=12)
    kernel = PrecomputedKernel(X @ X.T)
    a, b = kernel.items()[[3, 0, 7]], kernel.items()[[11, 2]]
    slow = pairwise_kernels(a, b, metric=kernel)  # one Python call per pair: the obvious reference
    np.testing.assert_array_equal(kernel.matrix(a, b), slow)
    np.testing.assert_array_equal(kernel.matrix(a), (X @ X.T)[np.ix_([3, 0, 7], [3, 0, 7])])
    assert clone(KCCA(kernel_x=kernel)).kernel_x is kernel and "12 x 12" in repr(kernel)


@pytest.mark.parametrize("items, message", [
    (np.array([[0.5]]), "whole numbers"),
    (np.array([[12.0]]), r"in \[0, 12\)"),
    (np.array([[-1.0]]), r"in \[0, 12\)"),
    (np.zeros((2, 2)), "one column of item numbers"),
])
def test_precomputed_kernel_refuses_items_it_does_not_hold(items, message):
    X, _ = two_views(n=12)
    with pytest.raises(KccaDescError, match=message):
        PrecomputedKernel(X @ X.T).matrix(items)


def test_precomputed_kernel_refuses_bad_grams_and_kernel_params():
    with pytest.raises(KccaDescError, match="square"):
        PrecomputedKernel(np.ones((3, 4)))
    with pytest.raises(KccaDescError, match="not symmetric"):
        PrecomputedKernel(np.arange(9.0).reshape(3, 3))
    X, Y = two_views(n=12)
    kernel = PrecomputedKernel(X @ X.T)
    with pytest.raises(KccaDescError, match="kernel_x_params must be empty"):
        KCCA(kernel_x=kernel, kernel_y="linear", kernel_x_params={"gamma": 1.0}).fit(kernel.items(), Y)


@parametrize_with_checks([
    LinearCCA(n_components=1),
    LandmarkKCCA(n_components=1, rank=8),
    LandmarkKCCA(n_components=1, rank=8, kernel_x="rbf", kernel_y="poly"),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)
