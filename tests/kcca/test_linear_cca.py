"""LinearCCA against a dense generalised-eigenproblem reference."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import linalg
from sklearn.base import clone

from kcca_desc.kcca.linear import LinearCCA


def reference_correlations(X, Y, reg):
    """Solve [0 Cxy; Cyx 0] v = ρ [Cxx+rI 0; 0 Cyy+rI] v densely."""
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    n = len(X)
    cxx, cyy, cxy = Xc.T @ Xc / (n - 1), Yc.T @ Yc / (n - 1), Xc.T @ Yc / (n - 1)
    cxx += reg * np.trace(cxx) / cxx.shape[0] * np.eye(cxx.shape[0])
    cyy += reg * np.trace(cyy) / cyy.shape[0] * np.eye(cyy.shape[0])
    dx, dy = cxx.shape[0], cyy.shape[0]
    A = np.zeros((dx + dy, dx + dy))
    A[:dx, dx:], A[dx:, :dx] = cxy, cxy.T
    B = linalg.block_diag(cxx, cyy)
    return np.sort(linalg.eigh(A, B, eigvals_only=True))[::-1]


def paired(n=200, dx=5, dy=4, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    X = Z @ rng.normal(size=(3, dx)) + 0.5 * rng.normal(size=(n, dx))
    Y = Z @ rng.normal(size=(3, dy)) + 0.5 * rng.normal(size=(n, dy))
    return X, Y


def test_correlations_match_dense_reference():
    X, Y = paired()
    cca = LinearCCA(n_components=4, reg=0.05).fit(X, Y)
    np.testing.assert_allclose(cca.correlations_, reference_correlations(X, Y, 0.05)[:4], atol=1e-10)


def test_projections_are_canonical():
    X, Y = paired()
    reg = 1e-8
    cca = LinearCCA(n_components=4, reg=reg).fit(X, Y)
    U, V = cca.transform(X, Y)
    C = np.corrcoef(U.T, V.T)
    np.testing.assert_allclose(np.diag(C[:4, 4:]), cca.correlations_, atol=1e-6)
    np.testing.assert_allclose(C[:4, :4], np.eye(4), atol=1e-6)  # uncorrelated within a view


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 40), dx=st.integers(1, 5), dy=st.integers(1, 5),
       reg=st.floats(1e-4, 10), seed=st.integers(0, 10**6))
def test_correlations_bounded_and_sorted(n, dx, dy, reg, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n, dx)), rng.normal(size=(n, dy))
    k = min(dx, dy)
    cca = LinearCCA(n_components=k, reg=reg).fit(X, Y)
    rho = cca.correlations_
    assert np.all(np.isfinite(rho)) and np.all(rho >= -1e-12) and np.all(rho <= 1 + 1e-9)
    assert np.all(np.diff(rho) <= 1e-12)
    np.testing.assert_allclose(rho, reference_correlations(X, Y, reg)[:k], atol=1e-7)


def test_constant_column_is_handled():
    X, Y = paired()
    X[:, 0] = 3.0
    cca = LinearCCA(n_components=2, reg=0.1).fit(X, Y)
    assert np.all(np.isfinite(cca.transform_x(X)))


@pytest.mark.parametrize("kwargs, match", [
    ({"reg": 0}, "reg"), ({"reg": np.nan}, "reg"), ({"n_components": 9}, "n_components"),
    ({"n_components": 0}, "n_components")])
def test_bad_parameters(kwargs, match):
    X, Y = paired()
    with pytest.raises(ValueError, match=match):
        LinearCCA(**kwargs).fit(X, Y)


def test_bad_data():
    X, Y = paired()
    with pytest.raises(ValueError, match="same number of rows"):
        LinearCCA(n_components=2).fit(X, Y[:-1])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        LinearCCA(n_components=2).fit(Xn, Y)
    cca = LinearCCA(n_components=2).fit(X, Y)
    with pytest.raises(ValueError, match="^Y has 5 features, but LinearCCA is expecting 4 features as input$"):
        cca.transform_y(X)
    with pytest.raises(ValueError, match="^X has 4 features, but LinearCCA is expecting 5 features as input$"):
        cca.transform_x(Y)
    np.testing.assert_array_equal(cca.transform(X, Y)[1], (Y - Y.mean(0)) @ cca.y_weights_)


def test_sklearn_conventions():
    est = LinearCCA(n_components=3, reg=0.5)
    assert clone(est).get_params() == {"n_components": 3, "reg": 0.5}
    assert est.set_params(reg=0.1) is est and est.reg == 0.1
    X, Y = paired()
    assert est.fit(X, Y) is est
