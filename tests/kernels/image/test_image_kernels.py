"""Image kernels (kcca_desc.kernels.image.intersection / pyramid) against explicit-loop references."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kcca_desc.kernels import _backend
from kcca_desc.kernels._backend import cupy_available, resolve_backend
from kcca_desc.kernels.image.intersection import histogram_intersection
from kcca_desc.kernels.errors import ParameterError
from kcca_desc.kernels.image.pyramid import image_kernel, pyramid_cell_weights, pyramid_kernel

CPU_BACKENDS = ("numba", "numpy")


# ----------------------------------------------------------------------------- references
def loop_intersection(A, B):
    """K_ij = sum_v min(A_iv, B_jv) by explicit loops in float64."""
    K = np.zeros((len(A), len(B)))
    for i in range(len(A)):
        for j in range(len(B)):
            K[i, j] = sum(min(float(a), float(b)) for a, b in zip(A[i], B[j]))
    return K


def level_cells(level):
    start = (4 ** level - 1) // 3
    return range(start, start + 4 ** level)


def loop_pyramid(PA, PB, levels):
    """Lazebnik et al.: K = I^L + sum_{l<L} (I^l - I^{l+1}) / 2^(L-l), level by level."""
    I = [sum(loop_intersection(PA[:, c], PB[:, c]) for c in level_cells(l)) for l in range(levels + 1)]
    return I[levels] + sum((I[l] - I[l + 1]) / 2 ** (levels - l) for l in range(levels))


def normalised_pyramids(rng, n, n_words, levels, zero_fraction=0.5):
    """Random pyramids whose cells sum to their parent cell and whose level sums are 1."""
    finest = rng.random((n, 2 ** levels, 2 ** levels, n_words))
    finest[rng.random(finest.shape) < zero_fraction] = 0
    finest[:, 0, 0, 0] += 1e-3  # no image without features
    finest /= finest.sum(axis=(1, 2, 3), keepdims=True)
    cells, grid = [], finest
    for _ in range(levels + 1):
        cells.insert(0, grid.reshape(n, -1, n_words))
        side = grid.shape[1] // 2
        if side:
            grid = grid.reshape(n, side, 2, side, 2, n_words).sum(axis=(2, 4))
    return np.concatenate(cells, axis=1).astype(np.float32)


histograms = st.integers(1, 6).flatmap(lambda d: st.tuples(
    arrays(np.float32, st.tuples(st.integers(1, 7), st.just(d)),
           elements=st.one_of(st.just(0.0), st.floats(0, 1, width=32))),
    arrays(np.float32, st.tuples(st.integers(1, 7), st.just(d)),
           elements=st.one_of(st.just(0.0), st.floats(0, 1, width=32)))))


# ----------------------------------------------------------------------------- histogram_intersection
@pytest.mark.parametrize("backend", CPU_BACKENDS)
@settings(max_examples=40, deadline=None)
@given(pair=histograms, block_size=st.integers(1, 5))
def test_intersection_matches_loops(backend, pair, block_size):
    A, B = pair
    expected = loop_intersection(A, B)
    K = histogram_intersection(A, B, backend=backend, block_size=block_size)
    assert K.dtype == np.float32 and K.shape == (len(A), len(B))
    np.testing.assert_allclose(K, expected, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(histogram_intersection(A, backend=backend, block_size=block_size),
                               loop_intersection(A, A), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("block_size", [1, 3, 8, 128])
def test_gram_equals_cross_with_itself_and_is_symmetric(block_size):
    A = np.random.default_rng(0).random((37, 2100), dtype=np.float32)  # > one feature tile
    K = histogram_intersection(A, backend="numba", block_size=block_size)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(K, histogram_intersection(A, A, backend="numba", block_size=block_size),
                               rtol=1e-6)
    np.testing.assert_allclose(K, histogram_intersection(A, backend="numpy"), rtol=1e-5)


def test_numba_and_numpy_agree_on_sparse_histograms():
    rng = np.random.default_rng(1)
    A = rng.random((61, 700), dtype=np.float32) * (rng.random((61, 700)) < 0.2)
    B = rng.random((45, 700), dtype=np.float32) * (rng.random((45, 700)) < 0.2)
    A /= A.sum(axis=1, keepdims=True)
    B /= B.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(histogram_intersection(A, B, backend="numba", block_size=16),
                               histogram_intersection(A, B, backend="numpy"), atol=1e-6)


def test_float64_is_computed_in_float64():
    rng = np.random.default_rng(2)
    A, B = rng.random((9, 30)), rng.random((4, 30))
    for backend in CPU_BACKENDS:
        K = histogram_intersection(A, B, backend=backend, dtype=np.float64)
        assert K.dtype == np.float64
        np.testing.assert_allclose(K, loop_intersection(A, B), rtol=1e-12)


def test_identical_normalised_histograms_give_one_and_psd():
    rng = np.random.default_rng(3)
    A = rng.random((40, 25)) * (rng.random((40, 25)) < 0.4)
    A[:, 0] += 1e-3
    A /= A.sum(axis=1, keepdims=True)
    K = histogram_intersection(A, backend="numba")
    np.testing.assert_allclose(np.diag(K), 1, atol=1e-6)
    assert np.linalg.eigvalsh(K.astype(np.float64)).min() >= -1e-5


def test_empty_inputs_give_empty_or_zero_kernels():
    assert histogram_intersection(np.zeros((0, 4)), np.ones((3, 4)), backend="numba").shape == (0, 3)
    np.testing.assert_array_equal(histogram_intersection(np.zeros((2, 0)), backend="numba"), 0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(A=np.ones(3)), "A must be 2-D"),
    (dict(A=np.ones((2, 3)), B=np.ones((2, 3, 1))), "B must be 2-D"),
    (dict(A=np.ones((2, 3)), B=np.ones((2, 4))), "same number of features"),
    (dict(A=[[1.0, -0.5]]), r"A has a negative value \(.*\) at index \(0, 1\)"),
    (dict(A=np.ones((2, 2)), B=[[1.0, np.nan]]), "B has a non-finite value"),
    (dict(A=[["a", "b"]]), "A must be a numeric array"),
    (dict(A=np.ones((2, 2)), backend="torch"), "backend must be one of"),
    (dict(A=np.ones((2, 2)), block_size=0), "block_size must be a positive integer"),
    (dict(A=np.ones((2, 2)), dtype=np.int32), "dtype must be float32 or float64"),
])
def test_intersection_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        histogram_intersection(**kwargs)


# ----------------------------------------------------------------------------- pyramid / image kernel
def test_cell_weights_follow_lazebnik():
    np.testing.assert_allclose(pyramid_cell_weights(0), [1])
    np.testing.assert_allclose(pyramid_cell_weights(1), [1 / 2] + [1 / 2] * 4)
    np.testing.assert_allclose(pyramid_cell_weights(2), [1 / 4] + [1 / 4] * 4 + [1 / 2] * 16)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("levels", [0, 1, 2])
def test_pyramid_matches_level_by_level_formula(backend, levels):
    rng = np.random.default_rng(levels)
    PA, PB = normalised_pyramids(rng, 5, 6, levels), normalised_pyramids(rng, 4, 6, levels)
    np.testing.assert_allclose(pyramid_kernel(PA, PB, levels=levels, backend=backend),
                               loop_pyramid(PA, PB, levels), atol=1e-5)
    K = pyramid_kernel(PA, levels=levels, backend=backend)
    np.testing.assert_allclose(K, loop_pyramid(PA, PA, levels), atol=1e-5)
    np.testing.assert_allclose(np.diag(K), 1, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(levels=st.integers(0, 2), n=st.integers(1, 4), n_words=st.integers(1, 4), seed=st.integers(0, 99))
def test_pyramid_property(levels, n, n_words, seed):
    rng = np.random.default_rng(seed)
    n_cells = (4 ** (levels + 1) - 1) // 3
    P = rng.random((n, n_cells, n_words)).astype(np.float32) * (rng.random((n, n_cells, n_words)) < 0.5)
    np.testing.assert_allclose(pyramid_kernel(P, levels=levels, backend="numba"),
                               loop_pyramid(P, P, levels), atol=1e-5)


def test_pyramid_level_zero_is_histogram_intersection():
    P = normalised_pyramids(np.random.default_rng(5), 8, 10, 0)
    np.testing.assert_allclose(pyramid_kernel(P, levels=0), histogram_intersection(P[:, 0]), atol=1e-6)


def test_pyramid_gram_is_psd():
    P = normalised_pyramids(np.random.default_rng(6), 60, 12, 2)
    K = pyramid_kernel(P, levels=2).astype(np.float64)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() >= -1e-5


@pytest.mark.parametrize("power", [1.0, 2, 3.0])
def test_image_kernel_is_powered_mean_of_feature_kernels(power):
    rng = np.random.default_rng(7)
    a = {"colour": normalised_pyramids(rng, 6, 4, 2), "texture": normalised_pyramids(rng, 6, 5, 2),
         "sift": normalised_pyramids(rng, 6, 3, 2)}
    b = {key: normalised_pyramids(rng, 3, value.shape[2], 2) for key, value in a.items()}
    expected = (sum(loop_pyramid(a[k], b[k], 2) for k in a) / 3) ** power
    np.testing.assert_allclose(image_kernel(a, b, power=power, backend="numba"), expected, atol=1e-5)
    histo = (sum(loop_intersection(a[k][:, 0], b[k][:, 0]) for k in a) / 3) ** power
    np.testing.assert_allclose(image_kernel(a, b, kind="histo", power=power, backend="numpy"), histo,
                               atol=1e-5)
    gram = image_kernel(a, power=power)
    np.testing.assert_allclose(gram, (sum(loop_pyramid(a[k], a[k], 2) for k in a) / 3) ** power, atol=1e-5)
    np.testing.assert_allclose(np.diag(gram), 1, atol=1e-5)


def test_image_kernel_ignores_dict_order():
    rng = np.random.default_rng(8)
    a = {"colour": normalised_pyramids(rng, 4, 4, 1), "sift": normalised_pyramids(rng, 4, 3, 1)}
    b = {"sift": normalised_pyramids(rng, 2, 3, 1), "colour": normalised_pyramids(rng, 2, 4, 1)}
    np.testing.assert_allclose(image_kernel(a, b, levels=1), image_kernel(b, a, levels=1).T, atol=1e-6)


GOOD = np.full((2, 5, 3), 0.1, dtype=np.float32)


@pytest.mark.parametrize("call, message", [
    (lambda: pyramid_kernel(GOOD, levels=2), r"PA has 5 cells but a pyramid with levels=2 has .* 21"),
    (lambda: pyramid_kernel(GOOD, np.full((2, 5, 4), 0.1), levels=1), "PA and PB: the first set has 3 words"),
    (lambda: pyramid_kernel(GOOD[0], levels=1), "PA must be 3-D"),
    (lambda: pyramid_kernel(-GOOD, levels=1), r"PA has a negative value .* at index \(0, 0, 0\)"),
    (lambda: pyramid_kernel(GOOD, levels=-1), "levels must be a non-negative integer"),
    (lambda: image_kernel({"c": GOOD}, levels=1, kind="spatial"), "kind must be one of"),
    (lambda: image_kernel({"c": GOOD}, levels=1, power=0), "power must be a positive finite number"),
    (lambda: image_kernel({"c": GOOD}, levels=1, power=np.inf), "power must be a positive finite"),
    (lambda: image_kernel({}, levels=1), "features_a must be a non-empty dict"),
    (lambda: image_kernel({"c": GOOD}, {"s": GOOD}, levels=1), "same feature types"),
    (lambda: image_kernel({"c": GOOD, "s": GOOD[:1]}, levels=1), "disagree on the number of samples"),
    (lambda: image_kernel({"c": GOOD}, {"c": GOOD[..., :2]}, levels=1), "feature type 'c'"),
    (lambda: image_kernel({"c": GOOD}, {"c": np.full((1, 21, 3), 0.1)}, levels=1),
     r"features_b\['c'\] has 21 cells"),
])
def test_pyramid_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------- backends
def test_auto_falls_back_to_numba_and_logs_once(monkeypatch, caplog):
    monkeypatch.setattr(_backend, "_probe_cupy", lambda: "CUDARuntimeError: no driver (test)")
    with caplog.at_level(logging.INFO, logger="kcca_desc.kernels._backend"):
        assert resolve_backend("auto") == "numba"
        assert resolve_backend("auto") == "numba"
    messages = [r.getMessage() for r in caplog.records if "no driver (test)" in r.getMessage()]
    assert messages == ["CuPy unavailable (CUDARuntimeError: no driver (test)): using Numba"]
    with pytest.raises(ValueError, match="backend='cupy' requested but CuPy cannot run"):
        resolve_backend("cupy")


def test_explicit_cpu_backends_are_kept():
    assert resolve_backend("numba") == "numba" and resolve_backend("numpy") == "numpy"


def test_every_concrete_backend_computes_the_intersection():
    from kcca_desc.kernels.image.intersection import _BACKENDS
    assert set(_BACKENDS) == set(_backend.BACKENDS) - {"auto"}


def emulate_cuda_intersection(A, B, symmetric):
    """NumPy emulation of the CUDA kernel's grid, staging loop, thread mapping and mirroring."""
    from kcca_desc.kernels._cupy_intersection import DEPTH, THREADS, TILE
    n, d = A.shape
    m = B.shape[0]
    K = np.zeros((n, m))
    per_side = TILE // THREADS
    for by in range(-(-n // TILE)):
        for bx in range(-(-m // TILE)):
            if symmetric and by > bx:
                continue
            i0, j0 = by * TILE, bx * TILE
            acc = np.zeros((THREADS, THREADS, per_side, per_side))
            for k0 in range(0, d, DEPTH):
                As = np.full((DEPTH, TILE), np.nan)
                Bs = np.full((DEPTH, TILE), np.nan)
                for tid in range(THREADS * THREADS):
                    for e in range(tid, TILE * DEPTH, THREADS * THREADS):
                        row, col = divmod(e, DEPTH)
                        k, i, j = k0 + col, i0 + row, j0 + row
                        As[col, row] = A[i, k] if i < n and k < d else 0
                        Bs[col, row] = B[j, k] if j < m and k < d else 0
                assert not np.isnan(As).any() and not np.isnan(Bs).any(), "a shared cell was never staged"
                for ty in range(THREADS):
                    for tx in range(THREADS):
                        a = As[:, ty + THREADS * np.arange(per_side)]
                        b = Bs[:, tx + THREADS * np.arange(per_side)]
                        acc[ty, tx] += np.minimum(a[:, :, None], b[:, None, :]).sum(axis=0)
            for ty in range(THREADS):
                for tx in range(THREADS):
                    for r in range(per_side):
                        for c in range(per_side):
                            i, j = i0 + ty + r * THREADS, j0 + tx + c * THREADS
                            if i < n and j < m:
                                K[i, j] = acc[ty, tx, r, c]
    if symmetric:
        K = np.triu(K)
        K += np.triu(K, 1).T
    return K


@pytest.mark.parametrize("shape_a, shape_b", [((70, 19), (5, 19)), ((1, 3), None), ((66, 33), None)])
def test_cuda_tiling_logic_emulated_on_cpu(shape_a, shape_b):
    rng = np.random.default_rng(9)
    A = rng.random(shape_a) * (rng.random(shape_a) < 0.5)
    B = None if shape_b is None else rng.random(shape_b)
    K = emulate_cuda_intersection(A, A if B is None else B, symmetric=B is None)
    np.testing.assert_allclose(K, loop_intersection(A, A if B is None else B), rtol=1e-12)


def test_cuda_source_renders_for_both_precisions():
    from kcca_desc.kernels._cupy_intersection import _SOURCE, DEPTH, THREADS, TILE
    assert TILE % THREADS == 0
    for c_type in ("float", "double"):
        source = _SOURCE.format(T=c_type, TILE=TILE, DEPTH=DEPTH, THREADS=THREADS)
        assert f'void intersection_{c_type}(const {c_type}*' in source and "{" in source


gpu = pytest.mark.skipif(not cupy_available(), reason="CuPy has no working CUDA device")


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, m, d", [(1, 1, 1), (65, 130, 17), (200, 3, 1030)])
def test_cupy_agrees_with_numba(dtype, n, m, d):
    rng = np.random.default_rng(10)
    A = rng.random((n, d)) * (rng.random((n, d)) < 0.3)
    B = rng.random((m, d))
    for args in ((A, B), (A,)):
        K = histogram_intersection(*args, backend="cupy", dtype=dtype)
        assert isinstance(K, np.ndarray) and K.dtype == dtype
        # Sums of d terms accumulated in another order: float32 rounding is relative to the sum.
        np.testing.assert_allclose(K, histogram_intersection(*args, backend="numba", dtype=dtype),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    K = histogram_intersection(A, backend="cupy", dtype=dtype)
    np.testing.assert_array_equal(K, K.T)


@pytest.mark.gpu
@gpu
def test_cupy_image_kernel_agrees_with_numba():
    rng = np.random.default_rng(11)
    a = {"colour": normalised_pyramids(rng, 70, 16, 2), "sift": normalised_pyramids(rng, 70, 32, 2)}
    np.testing.assert_allclose(image_kernel(a, power=2, backend="cupy"),
                               image_kernel(a, power=2, backend="numba"), atol=1e-5)


@pytest.mark.parametrize("levels", [9, 40, 10**6])
def test_levels_beyond_a_sane_pyramid_are_refused(levels):
    with pytest.raises(ParameterError, match=rf"^levels must be at most 8 .*; got {levels}$"):
        pyramid_cell_weights(levels)
    assert pyramid_cell_weights(8).shape == ((4 ** 9 - 1) // 3,)
