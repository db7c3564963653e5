"""Low-rank kernels: the numerical rank KCCA measures is numpy's, and too many components are
clipped to it on request, or refused naming the kernel and its rank."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc._core.errors import DataError, ParameterError
from kcca_desc.kcca import KCCA
from kcca_desc.kcca.reference import center_kernel
from kcca_desc.kcca.spectral import spectrum_from_kernel


def _low_rank_kernel(rng: np.random.Generator, n: int, rank: int) -> np.ndarray:
    """A PSD kernel ``Z Z'`` of ``n`` items in ``rank`` dimensions (centred rank: ``rank`` when < n)."""
    Z = rng.standard_normal((n, rank)) * rng.uniform(0.1, 10.0, rank)
    return Z @ Z.T


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), rank=st.integers(1, 45), seed=st.integers(0, 2**16))
def test_the_numerical_rank_is_numpy_matrix_rank(n, rank, seed):
    K = center_kernel(_low_rank_kernel(np.random.default_rng(seed), n, rank))
    assert spectrum_from_kernel(K.copy()).rank == np.linalg.matrix_rank(K) == min(rank, n - 1)


def test_a_bag_of_words_kernel_has_the_rank_of_its_vocabulary():
    # 30 captions over a vocabulary of 4 words: the centred kernel has rank 4 at most.
    counts = np.random.default_rng(1).integers(0, 3, (30, 4)).astype(float)
    K = center_kernel(counts @ counts.T)
    assert spectrum_from_kernel(K.copy()).rank == np.linalg.matrix_rank(K) == 4
    # Five distinct captions, each repeated six times: still rank 4 (5 distinct items, centred).
    repeated = np.repeat(counts[:5], 6, axis=0)
    K = center_kernel(repeated @ repeated.T)
    assert spectrum_from_kernel(K.copy()).rank == np.linalg.matrix_rank(K) == 4


@pytest.fixture
def low_rank_pair():
    rng = np.random.default_rng(3)
    Kx = _low_rank_kernel(rng, 40, 25)
    Ky = _low_rank_kernel(rng, 40, 6)
    return Kx, Ky


@pytest.mark.parametrize("method", ["exact", "lowrank"])
def test_too_many_components_name_the_kernel_and_its_rank(low_rank_pair, method):
    with pytest.raises(ParameterError, match=r"^n_components=10 exceeds the 6 canonical pairs KCCA can find: the "
                                             r"training kernel of the captions \(40 items\) has numerical rank 6 "):
        KCCA(n_components=10, method=method, tol=0, view_names=("the images", "the captions")).fit(*low_rank_pair)


@pytest.mark.parametrize("method", ["exact", "lowrank"])
def test_clip_to_rank_keeps_every_pair_there_is(low_rank_pair, method):
    clipped = KCCA(n_components=10, method=method, tol=0, clip_to_rank=True).fit(*low_rank_pair)
    exact = KCCA(n_components=6, method=method, tol=0).fit(*low_rank_pair)
    assert (clipped.n_components_, clipped.rank_y_, clipped.n_components) == (6, 6, 10)
    assert clipped.alpha_.shape == (40, 6)
    np.testing.assert_allclose(clipped.canonical_correlations_, exact.canonical_correlations_)
    np.testing.assert_allclose(clipped.transform(low_rank_pair[0]), exact.transform(low_rank_pair[0]))
    # Fewer components slice the clipped pairs; more are clipped again.
    fewer = clipped.with_params(n_components=8)
    assert fewer.n_components_ == 6 and fewer.transform(low_rank_pair[0]).shape == (40, 6)
    assert clipped.with_params(n_components=3).transform(low_rank_pair[0]).shape == (40, 3)
    assert clipped.with_params(n_components=20, reg=0.5).n_components_ == 6


def test_a_kernel_of_rank_zero_is_a_data_error(low_rank_pair):
    constant = np.ones((40, 40))
    with pytest.raises(DataError, match=r"no canonical pair: the training kernel of Y \(40 items\) has numerical "
                                        r"rank 0 .*all alike"):
        KCCA(n_components=1, clip_to_rank=True).fit(low_rank_pair[0], constant)
