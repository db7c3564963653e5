"""Kernel power, diagonal multiplier and out-of-sample centring."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.kcca import KernelCentering, kernel_power, scale_diagonal
from kcca_desc.kcca.preprocessing import symmetrised
from kcca_desc.kcca.reference import center_kernel


def test_kernel_power_is_elementwise():
    K = np.array([[1.0, 0.5], [0.5, 2.0]])
    np.testing.assert_array_equal(kernel_power(K, 2), [[1.0, 0.25], [0.25, 4.0]])
    np.testing.assert_allclose(kernel_power(K, 0.5), np.sqrt(K))


def test_kernel_power_rejects_bad_input():
    with pytest.raises(ValueError, match="power p"):
        kernel_power(np.eye(2), 0)
    with pytest.raises(ValueError, match="negative entries"):
        kernel_power(-np.eye(2), 1.5)
    with pytest.raises(ValueError, match="NaN"):
        kernel_power(np.full((2, 2), np.nan), 2)


def test_scale_diagonal_only_touches_the_diagonal():
    K = np.arange(9.0).reshape(3, 3)
    out = scale_diagonal(K, 3.0)
    np.testing.assert_array_equal(out, K + 2.0 * np.diag(np.diag(K)))
    np.testing.assert_array_equal(K, np.arange(9.0).reshape(3, 3))  # input untouched
    with pytest.raises(ValueError, match="d must be"):
        scale_diagonal(K, 0.5)
    with pytest.raises(ValueError, match="square"):
        scale_diagonal(np.ones((2, 3)), 2.0)


def test_centring_new_items_matches_explicit_feature_centring():
    rng = np.random.default_rng(0)
    train, new = rng.standard_normal((20, 4)), rng.standard_normal((6, 4))
    centering = KernelCentering().fit(train @ train.T)
    mean = train.mean(axis=0)
    expected = (new - mean) @ (train - mean).T
    np.testing.assert_allclose(centering.transform(new @ train.T), expected, atol=1e-12)
    np.testing.assert_allclose(centering.transform(train @ train.T), center_kernel(train @ train.T), atol=1e-12)


def test_centring_from_a_factor_uses_its_means():
    G = np.random.default_rng(1).standard_normal((15, 3))
    exact = KernelCentering().fit(G @ G.T)
    from_factor = KernelCentering().fit_factor(G)
    np.testing.assert_allclose(from_factor.column_means_, exact.column_means_, atol=1e-12)
    assert from_factor.grand_mean_ == pytest.approx(exact.grand_mean_)


def test_centring_rejects_wrong_width():
    centering = KernelCentering().fit(np.eye(4))
    with pytest.raises(ValueError, match="one column per training item"):
        centering.transform(np.ones((2, 3)))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 150), seed=st.integers(0, 2**32 - 1), bump=st.sampled_from([0.0, 1e-9, 1e-3]))
def test_symmetrised_matches_numpy(n, seed, bump):
    # Sizes around the 64-wide tiles, one perturbed entry anywhere (above or below the diagonal).
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    K = A + A.T
    i, j = rng.integers(0, n, 2)
    K[i, j] += bump
    S, symmetric = symmetrised(K, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(S, (K + K.T) / 2)
    assert symmetric == np.allclose(K, K.T, rtol=1e-6, atol=1e-8)


def test_symmetrised_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        symmetrised(np.ones((2, 3)))
