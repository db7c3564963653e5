"""KCCA estimator: agreement with dense and primal references, re-use, centring, bad input."""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import linalg
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from kcca_desc._core.errors import DataError, ParameterError
from kcca_desc.kcca import KCCA, CallableKernelColumns, reference_kcca
from kcca_desc.kcca.reference import center_kernel


def _paired_views(seed: int, n: int = 40, dim_x: int = 60, dim_y: int = 50, shared: int = 5):
    """Feature matrices of two views sharing ``shared`` latent factors (dims > n: full-rank kernels)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, shared))
    X = Z @ rng.standard_normal((shared, dim_x)) + 0.5 * rng.standard_normal((n, dim_x))
    Y = Z @ rng.standard_normal((shared, dim_y)) + 0.5 * rng.standard_normal((n, dim_y))
    return X, Y


def _kernels(seed: int, n: int = 40):
    X, Y = _paired_views(seed, n)
    # Intersection-like (Laplacian) and polynomial kernels: positive definite, non-linear.
    Kx = np.exp(-np.abs(X[:, None, :] - X[None, :, :]).sum(-1) / X.shape[1])
    Ky = (Y @ Y.T / Y.shape[1] + 1.0) ** 2
    return Kx, Ky


def _max_principal_angle(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.max(linalg.subspace_angles(A, B)))


@pytest.mark.parametrize("method, solve_dtype", [("exact", np.float64), ("lowrank", np.float64),
                                                ("exact", np.float32)])
@pytest.mark.parametrize("reg_form, reg", [("ridge", 0.3), ("ridge", 5.0), ("hardoon", 0.1)])
def test_matches_dense_reference(method, solve_dtype, reg_form, reg):
    Kx, Ky = _kernels(0)
    k = 5
    model = KCCA(n_components=k, reg=reg, reg_form=reg_form, method=method, tol=0,
                 solve_dtype=solve_dtype).fit(Kx, Ky)
    rho, alpha, beta = reference_kcca(Kx, Ky, reg, k, reg_form=reg_form)
    np.testing.assert_allclose(model.canonical_correlations_, rho, atol=1e-6)
    Kxc, Kyc = center_kernel(Kx), center_kernel(Ky)
    # The top correlations are distinct here, so each direction is determined up to sign.
    assert _max_principal_angle(Kxc @ model.alpha_, Kxc @ alpha) < 1e-5
    assert _max_principal_angle(Kyc @ model.beta_, Kyc @ beta) < 1e-5
    # Normalisation alpha' Rx alpha = 1, and the pairs achieve their correlations.
    R = Kxc @ Kxc + reg * Kxc if reg_form == "ridge" else (1 - reg) * Kxc @ Kxc + reg * Kxc
    np.testing.assert_allclose(np.einsum("ik,ij,jk->k", model.alpha_, R, model.alpha_), 1.0, atol=1e-8)
    achieved = np.einsum("ik,ij,jk->k", model.alpha_, Kxc @ Kyc, model.beta_)
    np.testing.assert_allclose(achieved, model.canonical_correlations_, atol=1e-8)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 30), reg=st.floats(1e-2, 1e2))
def test_lowrank_at_full_rank_equals_exact(seed, n, reg):
    Kx, Ky = _kernels(seed, n)
    exact = KCCA(n_components=3, reg=reg, method="exact").fit(Kx, Ky)
    lowrank = KCCA(n_components=3, reg=reg, method="lowrank", tol=0).fit(Kx, Ky)
    np.testing.assert_allclose(lowrank.canonical_correlations_, exact.canonical_correlations_, atol=1e-6)
    assert np.all(np.isfinite(lowrank.transform(Kx, Ky)[0]))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 60), reg=st.floats(1e-3, 1e2),
       k=st.integers(1, 6), form=st.sampled_from(["ridge", "hardoon"]))
def test_single_precision_solve_matches_double(seed, n, reg, k, form):
    # Single precision only locates the subspace; the pairs are computed in double precision,
    # so correlations agree far below float32's eps and the directions span the same subspace.
    reg = min(reg, 1.0) if form == "hardoon" else reg
    Kx, Ky = _kernels(seed, n)
    double = KCCA(n_components=k, reg=reg, reg_form=form).fit(Kx, Ky)
    single = KCCA(n_components=k, reg=reg, reg_form=form, solve_dtype=np.float32).fit(Kx, Ky)
    assert single.alpha_.dtype == np.float64
    np.testing.assert_allclose(single.canonical_correlations_, double.canonical_correlations_, atol=1e-8)
    rho = double.canonical_correlations_
    # Compare only subspaces closed under near-ties (an arbitrary basis inside a tie is fine).
    if k < min(double.rank_x_, double.rank_y_) and rho[-1] > 0.01:
        full = KCCA(n_components=k + 1, reg=reg, reg_form=form).fit(Kx, Ky).canonical_correlations_
        if full[k - 1] - full[k] > 1e-3:
            Kxc = center_kernel(Kx)
            assert _max_principal_angle(Kxc @ single.alpha_, Kxc @ double.alpha_) < 1e-4


def test_single_precision_solve_with_numerically_zero_correlations():
    # sigma = 0 breaks the double-precision route's M'p / sigma (it falls back to a full SVD);
    # the single-precision route's Rayleigh-Ritz step has no division and must stay finite.
    basis = np.linalg.qr(center_kernel(np.eye(30))[:, :7])[0][:, 1:7]
    Kx, Ky = basis[:, :3] @ basis[:, :3].T, basis[:, 3:] @ basis[:, 3:].T
    model = KCCA(n_components=2, reg=0.1, solve_dtype="float32").fit(Kx, Ky)
    np.testing.assert_allclose(model.canonical_correlations_, 0.0, atol=1e-12)
    assert np.all(np.isfinite(model.transform(Kx, Ky)[0]))


def test_linear_kernels_reproduce_regularised_primal_cca():
    X, Y = _paired_views(1, n=60, dim_x=6, dim_y=4)
    X_new, Y_new = _paired_views(2, n=10, dim_x=6, dim_y=4)
    reg, k = 2.0, 3
    model = KCCA(n_components=k, reg=reg, kernel_x="linear", kernel_y="linear").fit(X, Y)
    # Primal: w_x = X_c' alpha turns alpha'(Kx^2 + reg Kx)alpha into w_x'(Cxx + reg I)w_x.
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    Wx = linalg.inv(linalg.sqrtm(Xc.T @ Xc + reg * np.eye(6))).real
    Wy = linalg.inv(linalg.sqrtm(Yc.T @ Yc + reg * np.eye(4))).real
    P, sigma, Qt = linalg.svd(Wx @ Xc.T @ Yc @ Wy)
    np.testing.assert_allclose(model.canonical_correlations_, sigma[:k], atol=1e-10)
    primal_x = (X_new - X.mean(0)) @ Wx @ P[:, :k]
    primal_y = (Y_new - Y.mean(0)) @ Wy @ Qt[:k].T
    dual_x, dual_y = model.transform(X_new, Y_new)
    signs = np.sign(np.sum(primal_x * dual_x, axis=0))
    np.testing.assert_allclose(dual_x * signs, primal_x, atol=1e-9)
    np.testing.assert_allclose(dual_y * signs, primal_y, atol=1e-9)


@pytest.mark.parametrize("method", ["exact", "lowrank"])
def test_transform_of_training_rows_is_training_projection(method):
    Kx, Ky = _kernels(3)
    model = KCCA(n_components=4, reg=1.0, method=method, tol=0).fit(Kx, Ky)
    x_scores, y_scores = model.transform(Kx, Ky)
    np.testing.assert_allclose(x_scores, center_kernel(Kx) @ model.alpha_, atol=1e-9)
    np.testing.assert_allclose(y_scores, center_kernel(Ky) @ model.beta_, atol=1e-9)
    np.testing.assert_allclose(model.transform(Y=Ky), y_scores)
    np.testing.assert_allclose(model.transform(Kx, n_components=2), x_scores[:, :2])


def test_new_items_are_centred_with_training_means():
    X, Y = _paired_views(4, n=50, dim_x=8, dim_y=8)
    train, new = slice(0, 40), slice(40, 50)
    Kx, Ky = X @ X.T, Y @ Y.T
    model = KCCA(n_components=3, reg=0.5).fit(Kx[train, train], Ky[train, train])
    mean = X[train].mean(0)
    centred_new = (X[new] - mean) @ (X[train] - mean).T
    np.testing.assert_allclose(model.transform(Kx[new, train]), centred_new @ model.alpha_, atol=1e-9)


def test_reg_path_and_with_params_equal_separate_fits():
    Kx, Ky = _kernels(5)
    base = KCCA(n_components=3, reg=1.0).fit(Kx, Ky)
    regs = [0.01, 0.5, 20.0]
    for reg, fitted in zip(regs, base.path(regs, n_components=6)):
        separate = KCCA(n_components=6, reg=reg).fit(Kx, Ky)
        np.testing.assert_allclose(fitted.canonical_correlations_, separate.canonical_correlations_, atol=1e-12)
        np.testing.assert_allclose(fitted.transform(Kx), separate.transform(Kx), atol=1e-10)
        assert fitted.reg == reg and fitted.n_components == 6
    assert base.reg == 1.0 and base.alpha_.shape[1] == 3  # the original is untouched
    fewer = base.with_params(n_components=2)
    np.testing.assert_array_equal(fewer.alpha_, base.alpha_[:, :2])
    with pytest.raises(ValueError, match="refit"):
        base.with_params(center=False)


def test_weight_power_scales_dimensions_by_correlation():
    Kx, Ky = _kernels(6)
    plain = KCCA(n_components=4, reg=1.0).fit(Kx, Ky)
    weighted = plain.with_params(weight_power=4.0)
    rho = plain.canonical_correlations_
    np.testing.assert_allclose(weighted.transform(Kx), plain.transform(Kx) * rho**4)


@settings(max_examples=25, deadline=None)
@given(power=st.one_of(st.floats(5e3, 1e300), st.floats(-1e300, -5e3)))
def test_a_weight_power_that_under_or_overflows_is_named_not_scored(power):
    Kx, Ky = _kernels(6, n=20)
    model = KCCA(n_components=3, reg=1.0).fit(Kx, Ky)  # correlations well inside (0, 1)
    with pytest.raises(ParameterError, match=r"^The 'weight_power' parameter of KCCA must be such that the weights "
                                             r"rho \*\* weight_power .* are finite and not all 0; they "
                                             r"(underflow to 0 in every dimension|overflow to infinity)"):
        model.with_params(weight_power=power).transform(Kx, Ky)


def test_deterministic():
    Kx, Ky = _kernels(7)
    runs = [KCCA(n_components=4, reg=0.2, method=m, rank=15).fit(Kx, Ky).transform(Kx) for m in ("lowrank",) * 2]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_column_oracle_fit_matches_matrix_fit_and_never_needs_the_matrix():
    Kx, Ky = _kernels(8)
    requested = []

    def columns(idx):
        requested.append(len(idx))
        return Kx[:, idx]

    oracle = CallableKernelColumns(Kx.shape[0], columns, lambda: np.diag(Kx).copy())
    lazy = KCCA(n_components=3, reg=0.5, tol=0).fit(oracle, Ky)
    dense = KCCA(n_components=3, reg=0.5, method="exact").fit(Kx, Ky)
    assert lazy.method_ == "lowrank"
    np.testing.assert_allclose(lazy.canonical_correlations_, dense.canonical_correlations_, atol=1e-6)
    np.testing.assert_allclose(np.abs(lazy.transform(Kx)), np.abs(dense.transform(Kx)), atol=1e-6)
    truncated = KCCA(n_components=3, reg=0.5, rank=5).fit(
        CallableKernelColumns(Kx.shape[0], columns, lambda: np.diag(Kx).copy()), Ky
    )
    assert truncated.rank_x_ == 5 and 0 < truncated.explained_trace_x_ < 1


def test_auto_method_choice():
    Kx, Ky = _kernels(9, n=20)
    assert KCCA(n_components=2).fit(Kx, Ky).method_ == "exact"
    assert KCCA(n_components=2, rank=10).fit(Kx, Ky).method_ == "lowrank"


def test_get_set_params_clone_and_pickle():
    Kx, Ky = _kernels(10)
    model = KCCA(n_components=3, reg=0.7, rank=12)
    assert clone(model).get_params() == model.get_params()
    model.set_params(reg=0.9).fit(Kx, Ky)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.transform(Kx), model.transform(Kx))


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, message",
    [
        ({"reg": 0.0}, "'reg' parameter of KCCA must be a float in the range \\(0.0, inf\\)"),
        ({"reg": -1.0}, "'reg' parameter of KCCA must be a float in the range \\(0.0, inf\\)"),
        ({"reg": np.nan}, "'reg' parameter of KCCA must be a float in the range \\(0.0, inf\\)"),
        ({"reg": 2.0, "reg_form": "hardoon"}, r"\(0, 1\]"),
        ({"reg_form": "lasso"}, "reg_form"),
        ({"n_components": 0}, "n_components"),
        ({"method": "fast"}, "method"),
        ({"rank": 0}, "rank"),
        ({"tol": -1.0}, "tol"),
        ({"kernel_x": "nonsense"}, "kernel_x"),
        ({"solve_dtype": np.float16}, "solve_dtype"),
        ({"solve_dtype": "double-ish"}, "solve_dtype"),
    ],
)
def test_bad_parameters_are_named(params, message):
    Kx, Ky = _kernels(11, n=10)
    with pytest.raises(ValueError, match=message):
        KCCA(**params).fit(Kx, Ky)


def test_bad_training_kernels_are_named():
    Kx, Ky = _kernels(12, n=10)
    with pytest.raises(ValueError, match="same items"):
        KCCA().fit(Kx, Ky[:9, :9])
    with pytest.raises(ValueError, match="Y must be square"):
        KCCA().fit(Kx, Ky[:, :9])
    with pytest.raises(ValueError, match="X is not symmetric"):
        KCCA().fit(Kx + np.triu(np.ones_like(Kx), 1), Ky)
    for bad in (np.nan, np.inf):
        K = Kx.copy()
        K[0, 1] = K[1, 0] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            KCCA().fit(K, Ky)
    with pytest.raises(ValueError, match="y is None"):
        KCCA().fit(Kx, None)


def _one(x, y, scale=1.0):
    return scale * float(x @ y)


@pytest.mark.parametrize("params, message", [
    ({"kernel_x": "rbf", "kernel_x_params": {"bogus": 1}},
     r"^The 'kernel_x_params' parameter of KCCA must be a dict of kernel_x='rbf' parameters \(gamma, n_jobs\); "
     r"'bogus' is not one\. Got \{'bogus': 1\} instead\.$"),
    ({"kernel_y": "linear", "kernel_y_params": {"gamma": 0.5}},
     r"^The 'kernel_y_params' parameter of KCCA must be a dict of kernel_y='linear' parameters \(n_jobs\); 'gamma'"),
    ({"kernel_x": _one, "kernel_x_params": {"scale": 2.0, "offset": 1.0}},
     r"kernel_x=_one parameters \(n_jobs, scale\); 'offset' is not one"),
    ({"kernel_x": "precomputed", "kernel_x_params": {"gamma": 1.0}}, r"kernel_x='precomputed' parameters \(none\); 'gamma' is not one"),
])
def test_kernel_params_name_the_unknown_key_before_any_kernel_is_computed(params, message, monkeypatch):
    X, Y = _paired_views(16, n=12, dim_x=4, dim_y=3)
    monkeypatch.setattr("kcca_desc.kcca.estimator.pairwise_kernels", None)  # any kernel computed fails
    with pytest.raises(ParameterError, match=message):
        KCCA(n_components=1, **{"kernel_x": "linear", "kernel_y": "linear", **params}).fit(X, Y)


@pytest.mark.parametrize("kernel_x, error, message", [
    ("chi2", DataError, r"^kernel_x='chi2' cannot be computed on X: X contains negative values\.$"),
    (lambda x, y: np.ones(3), ParameterError,
     r"^kernel_x=<lambda> must return one number for each pair of rows \(k\(x, y\) -> float\) .*: ValueError"),
    (lambda x, y: "near", ParameterError, r"^kernel_x=<lambda> must return one number .*could not convert"),
    (lambda x, y: {}, ParameterError, r"^kernel_x=<lambda> must return one number .*: TypeError"),
    (lambda x, y: None, DataError, r"^kernel_x produced NaN or infinite values on X$"),
])
def test_a_kernel_function_that_fails_on_the_data_is_named(kernel_x, error, message):
    X, Y = _paired_views(17, n=12, dim_x=4, dim_y=3)
    with pytest.raises(error, match=message):
        KCCA(n_components=1, kernel_x=kernel_x, kernel_y="linear").fit(X, Y)


def test_too_many_components_for_a_rank_deficient_kernel():
    X, Y = _paired_views(13, n=30, dim_x=3, dim_y=20)
    with pytest.raises(ValueError, match=r"^n_components=5 exceeds the 3 canonical pairs KCCA can find: the training "
                                         r"kernel of X \(30 items\) has numerical rank 3 "):
        KCCA(n_components=5).fit(X @ X.T, Y @ Y.T)
    # Up to the rank it works and gives finite projections.
    model = KCCA(n_components=3).fit(X @ X.T, Y @ Y.T)
    assert np.all(np.isfinite(model.transform(X @ X.T)))


def test_indefinite_kernel_warns_and_stays_finite():
    Kx, Ky = _kernels(14, n=20)
    rng = np.random.default_rng(0)
    S = rng.standard_normal((20, 20))
    indefinite = Kx + 0.5 * (S + S.T)
    with pytest.warns(RuntimeWarning, match="not positive semi-definite"):
        model = KCCA(n_components=2, method="exact").fit(indefinite, Ky)
    assert np.all(np.isfinite(model.transform(indefinite)))


def test_bad_transform_input():
    Kx, Ky = _kernels(15, n=12)
    model = KCCA(n_components=2).fit(Kx, Ky)
    with pytest.raises(ValueError, match="12 training items"):
        model.transform(Kx[:, :5])
    with pytest.raises(ValueError, match="X, Y or both"):
        model.transform()
    with pytest.raises(ValueError, match="n_components"):
        model.transform(Kx, n_components=3)
    K = Kx.copy()
    K[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.transform(K)


@parametrize_with_checks(
    [
        KCCA(n_components=1, kernel_x="linear", kernel_y="linear"),
        KCCA(n_components=1, kernel_x="rbf", kernel_y="poly", method="lowrank", tol=1e-8),
    ]
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def test_uncorrelated_views_give_zero_correlations_and_finite_projections():
    # Two rank-3 kernels on orthogonal, centred subspaces: Ux'Uy = 0, every correlation is 0.
    basis = np.linalg.qr(center_kernel(np.eye(30))[:, :7])[0][:, 1:7]
    Kx, Ky = basis[:, :3] @ basis[:, :3].T, basis[:, 3:] @ basis[:, 3:].T
    model = KCCA(n_components=2, reg=0.1).fit(Kx, Ky)
    np.testing.assert_allclose(model.canonical_correlations_, 0.0, atol=1e-12)
    x_scores, y_scores = model.transform(Kx, Ky)
    assert np.all(np.isfinite(x_scores)) and np.all(np.isfinite(y_scores))
    assert np.linalg.matrix_rank(x_scores) == 2 and np.linalg.matrix_rank(y_scores) == 2


def test_memory_caches_the_exact_decomposition(tmp_path):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 5)), rng.normal(size=(40, 4))
    Kx, Ky = X @ X.T + np.eye(40), Y @ Y.T + np.eye(40)
    plain = KCCA(n_components=3, reg=0.5, method="exact").fit(Kx, Ky)
    cached = KCCA(n_components=3, reg=0.5, method="exact", memory=str(tmp_path)).fit(Kx, Ky)
    # Checksummed entries of the toolkit's cache: one spectrum per kernel, one solution.
    assert len(list((tmp_path / "spectra").glob("*.npz"))) == 2
    assert len(list((tmp_path / "solutions").glob("*.npz"))) == 1
    again = KCCA(n_components=3, reg=0.5, method="exact", memory=str(tmp_path)).fit(Kx, Ky)
    for model in (cached, again):
        np.testing.assert_allclose(model.canonical_correlations_, plain.canonical_correlations_, rtol=1e-12)
        np.testing.assert_allclose(model.transform(Kx[:5], Ky[:5])[0], plain.transform(Kx[:5], Ky[:5])[0],
                                   atol=1e-10)


def test_memory_is_a_directory_and_clones(tmp_path):
    import joblib
    from sklearn.base import clone

    from kcca_desc._core.errors import ParameterError

    model = KCCA(n_components=1, memory=tmp_path)
    assert clone(model).get_params()["memory"] == tmp_path
    # joblib's store loaded its pickles unverified: the toolkit's checksummed one replaces it.
    with pytest.raises(ParameterError, match="'memory' parameter"):
        KCCA(memory=joblib.Memory(tmp_path)).fit(np.eye(4), np.eye(4))


def test_memory_caches_solutions_per_setting(tmp_path):
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(40, 5)), rng.normal(size=(40, 4))
    Kx, Ky = X @ X.T + np.eye(40), Y @ Y.T + np.eye(40)
    plain = [KCCA(n_components=3, reg=reg, method="exact").fit(Kx, Ky) for reg in (0.5, 2.0)]
    first = KCCA(n_components=3, reg=0.5, method="exact", memory=str(tmp_path)).fit(Kx, Ky)
    first.with_params(reg=2.0)
    # A refit finds both solutions: it never needs Ux'Uy.
    again = KCCA(n_components=3, reg=0.5, method="exact", memory=str(tmp_path)).fit(Kx, Ky)
    other = again.with_params(reg=2.0)
    assert "cross" not in vars(again._decomposition)
    for model, reference in ((again, plain[0]), (other, plain[1])):
        np.testing.assert_array_equal(model.canonical_correlations_, reference.canonical_correlations_)
        np.testing.assert_array_equal(model.alpha_, reference.alpha_)
    # A setting not solved before is computed (and the cross product with it).
    third = again.with_params(reg=1.0)
    assert "cross" in vars(again._decomposition)
    np.testing.assert_allclose(third.canonical_correlations_,
                               KCCA(n_components=3, reg=1.0).fit(Kx, Ky).canonical_correlations_, rtol=1e-12)


@given(k=st.integers(1, 12), extra=st.integers(0, 40), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=30, deadline=None)
def test_thin_svd_of_a_wide_matrix_through_its_qr_factors_is_an_svd(k, extra, seed):
    from kcca_desc.kcca.spectral import _svd_of_wide

    S = np.random.default_rng(seed).standard_normal((k, k + extra))
    U, sigma, Vt = _svd_of_wide(S)
    np.testing.assert_allclose(sigma, np.linalg.svd(S, compute_uv=False), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose((U * sigma) @ Vt, S, atol=1e-10)
    np.testing.assert_allclose(U.T @ U, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(Vt @ Vt.T, np.eye(k), atol=1e-10)


@pytest.mark.parametrize("memory", [False, True])
def test_read_only_kernels_as_the_cache_hands_them_out_are_left_unchanged(tmp_path, memory):
    # Entries read from the cache are read-only arrays shared by every caller (kcca_desc._core.cache).
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(30, 5)), rng.normal(size=(30, 4))
    Kx, Ky = X @ X.T + np.eye(30), Y @ Y.T + np.eye(30)
    frozen = [K.copy() for K in (Kx, Ky)]
    for K in frozen:
        K.setflags(write=False)
    params = {"n_components": 3, "reg": 0.5, "method": "exact", "memory": str(tmp_path) if memory else None}
    reference = KCCA(**params).fit(Kx, Ky)
    model = KCCA(**params).fit(*frozen)
    for K, original in zip(frozen, (Kx, Ky)):
        np.testing.assert_array_equal(K, original)
    np.testing.assert_allclose(model.canonical_correlations_, reference.canonical_correlations_, rtol=1e-12)
    np.testing.assert_allclose(model.transform(frozen[0][:5], frozen[1][:5])[0],
                               reference.transform(Kx[:5], Ky[:5])[0], atol=1e-10)
