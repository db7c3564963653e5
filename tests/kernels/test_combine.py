"""Kernel combination (kcca_desc.kernels.combine) against slow references: centring and
normalisation by explicit loops, sums as Grams of concatenated feature maps, alignment by the
definition, and scikit-learn's estimator checks for the transformer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from kcca_desc.kernels.combine import (KernelCombination, alignment_weights, centered_alignment, centered_inner,
                                       kernel_statistics, normalize_cross_kernel, normalize_train_kernel,
                                       weighted_sum)
from kcca_desc.kernels.errors import DataError, ParameterError


def _rbf(A, B):
    return np.exp(-0.3 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def _poly(A, B):
    return (A @ B.T + 1.0) ** 2


def reference_transform(K_train, K_new, diag_new, normalization):
    """Centring (Schölkopf et al. 1998, Eq. B.3) and normalisation with one loop per entry."""
    n, m = K_train.shape[0], K_new.shape[0]
    col = [sum(K_train[k, j] for k in range(n)) / n for j in range(n)]
    grand = sum(col) / n
    train_c = np.array([[K_train[i, j] - col[j] - col[i] + grand for j in range(n)] for i in range(n)])
    new_c = np.empty((m, n))
    new_diag = np.empty(m)
    for i in range(m):
        row = sum(K_new[i, k] for k in range(n)) / n
        new_diag[i] = diag_new[i] - 2 * row + grand
        for j in range(n):
            new_c[i, j] = K_new[i, j] - col[j] - row + grand
    if normalization == "trace":
        scale = n / sum(train_c[i, i] for i in range(n))
        return train_c * scale, new_c * scale
    if normalization == "diagonal":
        d = [train_c[i, i] for i in range(n)]
        train = np.array([[train_c[i, j] / np.sqrt(d[i] * d[j]) for j in range(n)] for i in range(n)])
        new = np.array([[new_c[i, j] / np.sqrt(new_diag[i] * d[j]) for j in range(n)] for i in range(m)])
        return train, new
    return train_c, new_c


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(3, 9), m=st.integers(1, 5),
       normalization=st.sampled_from(["trace", "diagonal", "none"]), kernel=st.sampled_from([_rbf, _poly]))
def test_centring_and_normalisation_match_the_loops(seed, n, m, normalization, kernel):
    rng = np.random.default_rng(seed)
    X, Z = rng.standard_normal((n, 3)), rng.standard_normal((m, 3))
    K, K_new, diag_new = kernel(X, X), kernel(Z, X), np.diagonal(kernel(Z, Z))
    stats = kernel_statistics(K, normalization=normalization)
    train, new = reference_transform(K, K_new, diag_new, normalization)
    np.testing.assert_allclose(normalize_train_kernel(K, stats), train, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(normalize_cross_kernel(K_new, stats, diagonal_new=diag_new), new,
                               rtol=1e-10, atol=1e-10)
    # The training items as new items reproduce the training kernel: train and test treated alike.
    np.testing.assert_allclose(normalize_cross_kernel(K, stats, diagonal_new=np.diagonal(K)), train,
                               rtol=1e-10, atol=1e-10)


def test_centring_is_h_k_h_and_in_place_overwrites_only_when_asked():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((7, 2))
    K = _rbf(X, X)
    H = np.eye(7) - np.ones((7, 7)) / 7
    stats = kernel_statistics(K, normalization="none")
    kept = K.copy()
    np.testing.assert_allclose(normalize_train_kernel(K, stats), H @ K @ H, atol=1e-12)
    np.testing.assert_array_equal(K, kept)
    out = normalize_train_kernel(K, stats, copy=False)
    assert out is K
    np.testing.assert_allclose(K, H @ kept @ H, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 8), dims=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       data=st.data())
def test_a_weighted_sum_of_linear_kernels_is_the_gram_of_the_scaled_concatenation(seed, n, dims, data):
    rng = np.random.default_rng(seed)
    blocks = [rng.standard_normal((n, d)) for d in dims]
    weights = data.draw(st.lists(st.floats(0.0, 5.0), min_size=len(dims), max_size=len(dims)).filter(any))
    summed = weighted_sum([B @ B.T for B in blocks], weights)
    concatenated = np.hstack([np.sqrt(w) * B for w, B in zip(weights, blocks)])
    np.testing.assert_allclose(summed, concatenated @ concatenated.T, rtol=1e-12, atol=1e-12)


def test_the_combined_transformer_is_the_linear_gram_of_centred_scaled_blocks():
    # Each block's centred linear kernel normalised to trace n is the linear kernel of its centred
    # features times sqrt(n / ‖X_c‖²): the combination is one linear kernel of the scaled concatenation.
    rng = np.random.default_rng(1)
    X, Z = rng.standard_normal((12, 5)), rng.standard_normal((4, 5))
    parts = [slice(0, 2), slice(2, 5)]
    kernels = [lambda A, B, s=s: A[:, s] @ B[:, s].T for s in parts]
    weights = np.array([0.3, 1.7])
    model = KernelCombination(kernels=kernels, weights=weights).fit(X)
    mean = X.mean(axis=0)
    scales = [np.sqrt(w / w_sum * 12 / np.sum((X[:, s] - mean[s]) ** 2))
              for w, w_sum, s in zip(weights, [weights.sum()] * 2, parts)]

    def features(A):
        return np.hstack([c * (A[:, s] - mean[s]) for c, s in zip(scales, parts)])

    np.testing.assert_allclose(model.transform(Z), features(Z) @ features(X).T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.fit_transform(X), features(X) @ features(X).T, rtol=1e-10, atol=1e-12)


def test_centred_alignment_follows_the_definition():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((9, 3))
    K, L = _rbf(X, X), _poly(X, X)
    H = np.eye(9) - np.ones((9, 9)) / 9
    Kc, Lc = H @ K @ H, H @ L @ H
    assert centered_inner(K, L) == pytest.approx(np.sum(Kc * Lc), rel=1e-12)
    assert centered_alignment(K, L) == pytest.approx(np.sum(Kc * Lc) / np.linalg.norm(Kc) / np.linalg.norm(Lc),
                                                     rel=1e-12)
    assert centered_alignment(K, K) == pytest.approx(1.0)


def test_align_weights_are_proportional_to_each_kernels_alignment():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((10, 3))
    kernels, target = [_rbf(X, X), _poly(X, X), X @ X.T], X[:, :1] @ X[:, :1].T
    rho = np.array([centered_alignment(K, target) for K in kernels])
    np.testing.assert_allclose(alignment_weights(kernels, target, method="align"), rho / rho.sum(), rtol=1e-12)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_alignf_weights_maximise_the_alignment_of_the_combination(seed):
    # Cortes et al. (2012, Proposition 9): no other non-negative weighting aligns better.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 4))
    kernels = [_rbf(X, X), _poly(X, X), X[:, :2] @ X[:, :2].T, X[:, 2:] @ X[:, 2:].T]
    y = X @ rng.standard_normal(4)
    target = np.outer(y, y)
    mu = alignment_weights(kernels, target, method="alignf")
    assert mu.min() >= 0 and mu.sum() == pytest.approx(1.0)
    best = centered_alignment(weighted_sum(kernels, mu), target)
    for other in rng.dirichlet(np.ones(4), size=50):
        assert centered_alignment(weighted_sum(kernels, other), target) <= best + 1e-9


def test_bad_inputs_are_one_clear_error():
    K = np.eye(4)
    with pytest.raises(ParameterError, match="normalization"):
        kernel_statistics(K, normalization="unit")
    with pytest.raises(DataError, match="constant"):
        kernel_statistics(np.ones((4, 4)))
    with pytest.raises(ParameterError, match="non-negative"):
        weighted_sum([K, K], [1.0, -1.0])
    with pytest.raises(ParameterError, match="2 kernel weights for 1"):
        weighted_sum([K], [1.0, 1.0])
    with pytest.raises(ParameterError, match="diagonal_new"):
        normalize_cross_kernel(K[:2], kernel_statistics(K, normalization="diagonal"))
    with pytest.raises(DataError, match="training items"):
        normalize_cross_kernel(K[:, :3], kernel_statistics(K))
    with pytest.raises(ParameterError, match="pass y"):
        KernelCombination(weights="align").fit(np.random.default_rng(0).standard_normal((5, 2)))
    with pytest.raises(ParameterError, match="unknown kernel 'gauss'"):
        KernelCombination(kernels=("gauss",)).fit(np.eye(3))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 30), level=st.floats(-1e6, 1e6, allow_nan=False).filter(lambda c: abs(c) > 1e-6),
       method=st.sampled_from(["align", "alignf"]), seed=st.integers(0, 2**32 - 1))
def test_a_constant_kernel_or_target_is_named_not_weighted_from_round_off(n, level, method, seed):
    X = np.random.default_rng(seed).standard_normal((n, 3))
    K, C = X @ X.T, np.full((n, n), level)
    with pytest.raises(DataError, match=r"^alignment_weights: the centred matrix of kernel 1 is zero \(a constant"):
        alignment_weights([K, C], K, method=method)
    with pytest.raises(DataError, match=r"^alignment_weights: the target's centred matrix is zero"):
        alignment_weights([K, K @ K], C, method=method)
    with pytest.raises(DataError, match="constant"):
        kernel_statistics(C)


def test_degenerate_kernels_and_weights_are_one_clear_error():
    X = np.random.default_rng(1).standard_normal((10, 3))
    K = X @ X.T
    with pytest.raises(DataError, match=r"centred matrix of kernel 0 is zero"):
        alignment_weights([0 * K, 0 * K], K, method="alignf")
    with pytest.raises(DataError, match=r"^kernel 1 contains NaN or infinite values$"):
        weighted_sum([K, K * np.nan], [1.0, 1.0])
    weighted_sum([K, K * np.nan], [1.0, 0.0])  # a kernel of weight 0 is skipped
    with pytest.raises(ParameterError, match=r"^kernel weights must be a sequence of numbers, one per kernel; got dict"):
        weighted_sum([K, K], {"a": 1, "b": 1})
    with pytest.raises(ParameterError, match=r"^kernel weights must be a sequence of numbers"):
        weighted_sum([K, K], ["a", "b"])
    with pytest.raises(DataError, match=r"trace -\S+ < 0: the kernel is not positive semi-definite"):
        kernel_statistics(-K)
    with pytest.raises(ParameterError, match=r"^The 'kernel_params\[1\]' parameter of KernelCombination must be a dict "
                                             r"of kernel 'rbf' parameters \(gamma, n_jobs\); 'gama' is not one\."):
        KernelCombination(kernels=("linear", "rbf"), kernel_params=[{}, {"gama": 1}]).fit(X)
    with pytest.raises(ParameterError, match=r"kernel '_rbf' parameters \(none\); 'gamma' is not one"):
        KernelCombination(kernels=(_rbf,), kernel_params=[{"gamma": 1}]).fit(X)


@parametrize_with_checks([KernelCombination(kernels=("linear", "rbf"), normalization="diagonal"),
                          KernelCombination(kernels=("linear", "rbf", "poly"), weights="alignf")])
def test_kernel_combination_is_a_scikit_learn_transformer(estimator, check):
    check(estimator)
