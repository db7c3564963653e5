"""Pivoted incomplete Cholesky against dense references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.kcca import (
    CallableKernelColumns,
    CenteredMatrixColumns,
    MatrixColumns,
    incomplete_cholesky,
)
from kcca_desc.kcca.reference import center_kernel


def _gram(seed: int, n: int, dim: int) -> np.ndarray:
    Z = np.random.default_rng(seed).standard_normal((n, dim))
    return Z @ Z.T


def _naive_pivoted_cholesky(K: np.ndarray, rank: int) -> tuple[np.ndarray, list[int]]:
    """Textbook greedy pivoted Cholesky, one column at a time with explicit loops."""
    n = K.shape[0]
    G = np.zeros((n, rank))
    d = np.diag(K).astype(float).copy()
    pivots = []
    for k in range(rank):
        j = int(np.argmax(d))
        pivots.append(j)
        for i in range(n):
            G[i, k] = (K[i, j] - sum(G[i, t] * G[j, t] for t in range(k))) / np.sqrt(d[j])
        d = d - G[:, k] ** 2
        d[pivots] = 0.0
    return G, pivots


@pytest.mark.parametrize("block_size", [1, 3, 64])
def test_matches_textbook_greedy_sequence(block_size):
    K = _gram(0, 30, 12)
    G_ref, pivots_ref = _naive_pivoted_cholesky(K, 8)
    G, pivots = incomplete_cholesky(MatrixColumns(K), tol=0, rank=8, block_size=block_size)
    assert list(pivots) == pivots_ref
    np.testing.assert_allclose(G, G_ref, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), dim=st.integers(1, 50), block=st.integers(1, 16))
def test_full_rank_reproduces_kernel(seed, n, dim, block):
    K = _gram(seed, n, dim)
    G, pivots = incomplete_cholesky(MatrixColumns(K), tol=0, block_size=block)
    assert G.shape[1] == min(n, dim)  # the rank of a generic Z Z^T, Z of shape (n, dim)
    assert len(set(pivots.tolist())) == len(pivots)
    np.testing.assert_allclose(G @ G.T, K, atol=1e-9 * np.abs(K).max())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), tol=st.floats(1e-4, 0.5))
def test_residual_is_psd_and_below_tolerance(seed, n, tol):
    K = _gram(seed, n, 25)
    G, _ = incomplete_cholesky(MatrixColumns(K), tol=tol)
    residual = K - G @ G.T
    assert np.trace(residual) <= tol * np.trace(K) + 1e-9 * np.trace(K)
    assert np.linalg.eigvalsh(residual).min() >= -1e-9 * np.abs(K).max()


def test_centred_columns_are_those_of_HKH():
    K = _gram(1, 25, 6)
    columns = CenteredMatrixColumns(K)
    Kc = center_kernel(K)
    idx = np.array([3, 0, 17])
    np.testing.assert_allclose(columns.columns(idx), Kc[:, idx], atol=1e-12)
    np.testing.assert_allclose(columns.diagonal(), np.diag(Kc), atol=1e-12)


def test_rank_limit_and_callable_oracle_evaluate_only_pivot_columns():
    K = _gram(2, 50, 30)
    requested = []

    def columns(idx):
        requested.extend(np.atleast_1d(idx).tolist())
        return K[:, idx]

    oracle = CallableKernelColumns(50, columns, lambda: np.diag(K).copy())
    G, pivots = incomplete_cholesky(oracle, tol=0, rank=7, block_size=4)
    assert G.shape == (50, 7)
    assert set(pivots.tolist()) <= set(requested)
    assert len(requested) < 50


def test_rank_deficient_kernel_stops_at_its_rank():
    K = _gram(3, 30, 4)
    G, _ = incomplete_cholesky(MatrixColumns(K), tol=0, rank=20)
    assert G.shape[1] == 4


@pytest.mark.parametrize(
    "kwargs, message",
    [({"tol": -1.0}, "tol"), ({"rank": 0}, "rank"), ({"block_size": 0}, "block_size")],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        incomplete_cholesky(MatrixColumns(np.eye(3)), **kwargs)


def test_bad_oracle_output_is_reported():
    bad_shape = CallableKernelColumns(4, lambda idx: np.ones((3, len(idx))), lambda: np.ones(4))
    with pytest.raises(ValueError, match="shape"):
        incomplete_cholesky(bad_shape)
    nan_columns = CallableKernelColumns(4, lambda idx: np.full((4, len(idx)), np.nan), lambda: np.ones(4))
    with pytest.raises(ValueError, match="NaN"):
        incomplete_cholesky(nan_columns)
    negative = CallableKernelColumns(2, lambda idx: np.eye(2)[:, idx], lambda: np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="negative diagonal"):
        incomplete_cholesky(negative)
