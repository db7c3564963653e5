"""The large-n KCCA in one process: against the in-memory low-rank solver, landmarks, chunks, resume,
items stored in Zarr."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_bench import synthetic_items
from kcca_desc._core.errors import DataError, ParameterError
from kcca_desc.kcca import KCCA, MatrixColumns, incomplete_cholesky
from kcca_desc.scale import (HistogramIntersection, KernelView, LandmarkFeatures, LandmarkKCCA, LinearKernel,
                             SparseRows, base_columns, nystrom_map, running_sum)


def _views(n_images, captions=1, seed=0, key=None):
    hist, bow = synthetic_items(n_images, captions, seed=seed)
    image_of = np.repeat(np.arange(n_images), captions)
    X = KernelView(hist, HistogramIntersection(2.0), index=image_of if captions > 1 else None,
                   key=None if key is None else f"{key}-x")
    Y = KernelView(bow, LinearKernel(), key=None if key is None else f"{key}-y")
    return X, Y


def test_equals_in_memory_lowrank_kcca_on_the_approximated_kernels():
    X, Y = _views(300)
    model = LandmarkKCCA(n_components=5, reg=0.1, rank=40, oversample=100, chunk_size=64).fit(X, Y)
    rows = np.arange(300)
    Gx, Gy = model.map_x_.features(X, rows), model.map_y_.features(Y, rows)
    # pivots over all rows are exactly the in-memory solver's incomplete-Cholesky pivots
    G, pivots = incomplete_cholesky(MatrixColumns(X.kernel(X.items, X.items)), tol=0.0, rank=40)
    np.testing.assert_array_equal(pivots, model.map_x_.rows)
    np.testing.assert_allclose(G @ G.T, Gx @ Gx.T, atol=1e-10)
    K = X.kernel(X.items, X.items)
    assert model.explained_trace_x_ == pytest.approx(np.sum(G * G) / np.trace(K), rel=1e-10)
    assert 0 < model.explained_trace_x_ < 1
    reference = KCCA(n_components=5, reg=0.1, method="lowrank", tol=0.0).fit(MatrixColumns(Gx @ Gx.T),
                                                                          MatrixColumns(Gy @ Gy.T))
    np.testing.assert_allclose(model.canonical_correlations_, reference.canonical_correlations_, rtol=1e-9)
    Xn, Yn = _views(50, seed=1)
    gx, gy = model.map_x_.features(Xn, np.arange(50)), model.map_y_.features(Yn, np.arange(50))
    ours = model.transform(Xn, Yn)
    theirs = reference.transform(gx @ Gx.T, gy @ Gy.T)
    for a, b in zip(ours, theirs):
        # the same directions up to one sign per canonical pair (shared by both views)
        signs = np.sign(np.sum(a * b, axis=0))
        np.testing.assert_allclose(a, b * signs, atol=1e-10 * np.abs(b).max())


def test_chunking_does_not_change_the_fit():
    X, Y = _views(200, captions=3)
    one = LandmarkKCCA(n_components=4, reg=0.5, rank=30, chunk_size=600).fit(X, Y)
    many = LandmarkKCCA(n_components=4, reg=0.5, rank=30, chunk_size=37).fit(X, Y)
    np.testing.assert_allclose(one.canonical_correlations_, many.canonical_correlations_, rtol=1e-10)
    np.testing.assert_allclose(one.transform(X), many.transform(X), atol=1e-9)


def test_path_reuses_the_factorisation_and_matches_a_refit():
    X, Y = _views(200)
    base = LandmarkKCCA(n_components=6, reg=1.0, rank=30).fit(X, Y)
    fx = base.features(X=X)
    assert isinstance(fx, LandmarkFeatures)
    for reg, model in zip((0.1, 10.0), base.path((0.1, 10.0), n_components=4)):
        refit = LandmarkKCCA(n_components=4, reg=reg, rank=30).fit(X, Y)
        np.testing.assert_allclose(model.canonical_correlations_, refit.canonical_correlations_, rtol=1e-12)
        np.testing.assert_allclose(model.transform(fx), refit.transform(X), atol=1e-12)
    with pytest.raises(ValueError, match="refit to change"):
        base.with_params(rank=10)


@pytest.mark.parametrize("power", [1e4, -1e4])
def test_a_weight_power_that_under_or_overflows_is_named_not_scored(power):
    X, Y = _views(60)
    model = LandmarkKCCA(n_components=3, reg=1.0, rank=20).fit(X, Y)
    np.testing.assert_allclose(model.with_params(weight_power=2.0).transform(X),
                               model.transform(X) * model.canonical_correlations_[:3] ** 2)
    with pytest.raises(ParameterError, match=r"^The 'weight_power' parameter of LandmarkKCCA must be such that "
                                             r"the weights rho \*\* weight_power .* (underflow|overflow)"):
        model.with_params(weight_power=power).transform(X)


def test_uniform_landmarks_are_distinct_items_and_caption_level_rows_repeat_images():
    X, Y = _views(100, captions=5)
    model = LandmarkKCCA(n_components=3, rank=20, landmarks="uniform").fit(X, Y)
    items = X.item_numbers(model.map_x_.rows)
    assert len(set(items.tolist())) == 20
    assert X.n_samples == 500
    np.testing.assert_allclose(model.map_x_.features(X, np.arange(5)), model.map_x_.features(X, np.zeros(5, int)))


@pytest.mark.parametrize("landmarks", ["pivots", "uniform"])
def test_a_rank_above_the_training_items_warns_with_the_rank_used(landmarks):
    # The landmarks are distinct training items: a larger rank was capped without a word.
    import warnings

    X, Y = _views(30)
    message = r"^30 training items give at most 30 landmarks per view: rank=30 is used instead of 50$"
    with pytest.warns(UserWarning, match=message):
        model = LandmarkKCCA(n_components=3, rank=50, landmarks=landmarks).fit(X, Y)
    assert model.map_x_.rows.size == model.map_y_.rows.size == 30
    # Caption-level pairs: 30 rows of X, but 10 distinct images; Y's 30 captions hold 20 landmarks.
    X, Y = _views(10, captions=3)
    message = r"^the 10 training items of X give at most 10 landmarks: rank=10 is used for X instead of 20$"
    with pytest.warns(UserWarning, match=message):
        model = LandmarkKCCA(n_components=3, rank=20, landmarks=landmarks).fit(X, Y)
    assert len(set(X.item_numbers(model.map_x_.rows).tolist())) == 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LandmarkKCCA(n_components=3, rank=30, landmarks=landmarks).fit(*_views(30))


def test_nystrom_map_reproduces_the_landmark_block():
    X, _ = _views(80)
    fmap = nystrom_map(X, np.arange(0, 80, 4))
    G = fmap.features(X, np.arange(80))
    K = X.kernel(X.items, X.items)
    # exact on the landmarks' own rows and columns
    np.testing.assert_allclose((G @ G.T)[np.ix_(fmap.rows, fmap.rows)], K[np.ix_(fmap.rows, fmap.rows)], atol=1e-10)


def test_running_sum_adds_from_the_left_as_values_stream_in():
    join = lambda a, b: f"({a}{b})"  # noqa: E731
    assert running_sum(iter("abcd"), join) == "(((ab)c)d)"
    assert running_sum(["a"], join) == "a"
    with pytest.raises(ValueError, match="nothing to reduce"):
        running_sum([], max)


def test_running_sum_holds_one_partial():
    alive, most = [0], [0]

    def values(n):
        for _ in range(n):
            alive[0] += 1
            most[0] = max(most[0], alive[0])
            yield 1

    def combine(a, b):
        alive[0] -= 1  # two partials in, one out
        return a + b

    assert running_sum(values(1000), combine) == 1000
    assert most[0] == 2  # the sum so far and the value being added


class Interrupting:
    """A kernel that raises after ``limit`` chunk blocks, counting them.

    A chunk block is a call of at most ``chunk_size`` rows against the ``rank`` landmarks (the
    landmark choice evaluates its sample of ``4 * rank > chunk_size`` rows, and ``W`` is rank x rank).
    """

    def __init__(self, kernel, rank, limit=None, chunk_size=50):
        self.kernel, self.rank, self.limit, self.chunk_size, self.chunk_calls = kernel, rank, limit, chunk_size, 0

    def __call__(self, a, b):
        rows = a.shape[0]
        if b.shape[0] == self.rank and rows != self.rank and rows <= self.chunk_size:
            self.chunk_calls += 1
            if self.limit is not None and self.chunk_calls > self.limit:
                raise KeyboardInterrupt("killed")
        return self.kernel(a, b)


def test_interrupted_chunked_run_resumes_with_identical_output(tmp_path):
    X, Y = _views(400, key="resume")
    settings = dict(n_components=4, reg=0.3, rank=25, chunk_size=50)
    reference = LandmarkKCCA(**settings, store=str(tmp_path / "one")).fit(X, Y)
    expected = reference.transform(X, Y)

    failing = Interrupting(Y.kernel, 25, limit=3)
    Y_failing = KernelView(Y.items, failing, key=Y.key)
    with pytest.raises(KeyboardInterrupt):
        LandmarkKCCA(**settings, store=str(tmp_path / "two")).fit(X, Y_failing)
    counting = Interrupting(Y.kernel, 25)
    resumed = LandmarkKCCA(**settings, store=str(tmp_path / "two")).fit(X, KernelView(Y.items, counting, key=Y.key))
    # 8 chunks: the first 3 were stored before the interruption; only the others are computed
    assert counting.chunk_calls == 8 - 3
    np.testing.assert_array_equal(resumed.canonical_correlations_, reference.canonical_correlations_)
    for a, b in zip(resumed.transform(X, Y), expected):
        np.testing.assert_array_equal(a, b)
    # a second run computes no chunk at all
    again = Interrupting(Y.kernel, 25)
    LandmarkKCCA(**settings, store=str(tmp_path / "two")).fit(X, KernelView(Y.items, again, key=Y.key))
    assert again.chunk_calls == 0


@pytest.mark.parametrize("damage", ["truncated", "random bytes", "flipped bytes"])
@pytest.mark.parametrize("target", ["factor_y/c/2/0", "factor_y.done/c/5"])
def test_a_damaged_zarr_chunk_is_reported_once_and_recomputed(tmp_path, damage, target):
    import warnings

    from kcca_desc._core.cache import CacheWarning

    X, Y = _views(400, key="damage")
    settings = dict(n_components=4, reg=0.3, rank=25, chunk_size=50)
    reference = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, Y)
    (chunk,) = tmp_path.glob(f"*.zarr/{target}")
    data = chunk.read_bytes()
    chunk.write_bytes({"truncated": data[:len(data) // 2], "random bytes": np.random.default_rng(0).bytes(len(data)),
                       "flipped bytes": data[:-6] + bytes(b ^ 0xFF for b in data[-6:-2]) + data[-2:]}[damage])
    counting = Interrupting(Y.kernel, 25)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        again = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, KernelView(Y.items, counting, key=Y.key))
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and str(chunk) in warned[0], warned
    assert counting.chunk_calls == 1  # only the damaged chunk was computed again
    np.testing.assert_array_equal(again.canonical_correlations_, reference.canonical_correlations_)
    for a, b in zip(again.transform(X, Y), reference.transform(X, Y)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("target, damage", [
    ("zarr.json", "other values"), ("factor_y/zarr.json", "flipped bytes"), ("factor_y.done/zarr.json", "other values"),
    ("seal", "truncated"), ("seal", "other values")])
def test_damaged_zarr_metadata_is_reported_once_and_the_store_recomputed(tmp_path, damage, target):
    import warnings

    from kcca_desc._core.cache import CacheWarning

    X, Y = _views(400, key="metadata")
    settings = dict(n_components=4, reg=0.3, rank=25, chunk_size=50)
    reference = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, Y)
    (group,) = tmp_path.glob("*.zarr")
    document = group.with_name(group.name + ".metadata") if target == "seal" else group / target
    data = document.read_bytes()
    middle = len(data) // 2
    digit = data.index(b'": "') + 4  # the seal's first digest
    document.write_bytes({
        "truncated": data[:middle], "random bytes": np.random.default_rng(0).bytes(len(data)),
        "flipped bytes": data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 4]) + data[middle + 4:],
        # Still valid JSON, which Zarr would read: every flag chunk missing would read as set.
        "other values": (data[:digit] + (b"1" if data[digit:digit + 1] == b"0" else b"0") + data[digit + 1:]
                         if target == "seal" else data.replace(b"false", b"true ").replace(b"{}", b"[]"))}[damage])
    assert document.read_bytes() != data
    counting = Interrupting(Y.kernel, 25)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        again = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, KernelView(Y.items, counting, key=Y.key))
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and f"cache entry {document} is damaged" in warned[0], warned
    assert counting.chunk_calls == 8  # the store is computed again whole
    np.testing.assert_array_equal(again.canonical_correlations_, reference.canonical_correlations_)
    for a, b in zip(again.transform(X, Y), reference.transform(X, Y)):
        np.testing.assert_array_equal(a, b)
    # Sealed again: the next run reads it back without a word.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        counting = Interrupting(Y.kernel, 25)
        LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, KernelView(Y.items, counting, key=Y.key))
    assert counting.chunk_calls == 0 and not [w for w in record if issubclass(w.category, CacheWarning)]


def test_a_zarr_store_without_a_seal_is_recreated_without_a_warning(tmp_path):
    import warnings

    X, Y = _views(400, key="unsealed")
    settings = dict(n_components=4, reg=0.3, rank=25, chunk_size=50)
    reference = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, Y)
    (seal,) = tmp_path.glob("*.zarr.metadata")
    seal.unlink()  # a store of before seals, or a writer killed between a change and its seal
    counting = Interrupting(Y.kernel, 25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = LandmarkKCCA(**settings, store=str(tmp_path)).fit(X, KernelView(Y.items, counting, key=Y.key))
    assert counting.chunk_calls == 8 and seal.is_file()
    np.testing.assert_array_equal(again.canonical_correlations_, reference.canonical_correlations_)


def test_an_array_another_process_creates_meanwhile_keeps_its_chunks(tmp_path, monkeypatch):
    # Two runs find the array missing at once; the other one takes the lock first, creates it and
    # writes its chunks: this one must then find them under the lock, not create the array anew.
    import contextlib

    from kcca_desc.scale import ChunkStore
    from kcca_desc.scale import store as chunk_store

    values = np.arange(1.0, 17.0).reshape(8, 2)
    other, this = ChunkStore("race", tmp_path), ChunkStore("race", tmp_path)
    real_lock = chunk_store.entry_lock

    @contextlib.contextmanager
    def lock_after_the_other_run(path):
        monkeypatch.setattr(chunk_store, "entry_lock", real_lock)
        other.create("factor", (8, 2), 2)
        for chunk in range(4):
            other.write("factor", chunk, values[2 * chunk:2 * chunk + 2])
        with real_lock(path):
            yield

    monkeypatch.setattr(chunk_store, "entry_lock", lock_after_the_other_run)
    this.create("factor", (8, 2), 2)
    assert this.missing("factor").size == 0
    np.testing.assert_array_equal(ChunkStore("race", tmp_path).array("factor")[:], values)


def test_bad_input_is_named():
    X, Y = _views(50)
    with pytest.raises(ValueError, match="same pairs"):
        LandmarkKCCA(rank=10).fit(X, KernelView(Y.items[:40], Y.kernel))
    with pytest.raises(ValueError, match="same pairs"):  # an array is a view of feature rows
        LandmarkKCCA(rank=10).fit(np.eye(40), Y)
    with pytest.raises(ValueError, match="landmark"):
        LandmarkKCCA(landmarks="kmeans").fit(X, Y)
    with pytest.raises(ValueError, match="index"):
        KernelView(X.items, X.kernel, index=np.array([0, 60]))


@pytest.mark.parametrize("params, message", [
    ({"kernel_x": "rbf", "kernel_x_params": {"gama": 0.5}},
     r"^The 'kernel_x_params' parameter of LandmarkKCCA must be a dict of kernel_x='rbf' parameters "
     r"\(gamma, n_jobs\); 'gama' is not one\. Got \{'gama': 0\.5\} instead\.$"),
    ({"kernel_y_params": {"gamma": 0.5}},
     r"^The 'kernel_y_params' parameter of LandmarkKCCA must be a dict of kernel_y='linear' parameters \(n_jobs\); "
     r"'gamma'"),
    ({"kernel_x": lambda x, y, scale=1.0: scale * float(x @ y), "kernel_x_params": {"scale": 2.0, "offset": 1.0}},
     r"kernel_x=<lambda> parameters \(n_jobs, scale\); 'offset' is not one"),
])
def test_kernel_params_name_the_unknown_key_before_any_kernel_is_computed(params, message, monkeypatch):
    # As KCCA checks them (one helper, kcca.estimator.kernel_params_errors); it was Python's
    # TypeError from the first chunk of kernel columns.
    rng = np.random.default_rng(0)
    monkeypatch.setattr("kcca_desc.kcca.estimator.pairwise_kernels", None)  # any kernel computed fails
    monkeypatch.setattr("kcca_desc.scale.views.pairwise_kernels", None)
    with pytest.raises(ParameterError, match=message):
        LandmarkKCCA(rank=5, **params).fit(rng.random((20, 4)), rng.random((20, 3)))


@pytest.mark.parametrize("kernel_x, error, message", [
    ("chi2", DataError, r"^kernel_x='chi2' cannot be computed on X: X contains negative values\.$"),
    (lambda x, y: "near", ParameterError, r"^kernel_x=<lambda> must return one number .*could not convert"),
])
def test_a_kernel_function_that_fails_on_the_data_is_named(kernel_x, error, message):
    # As KCCA names them (kcca.estimator.kernel_block); they were scikit-learn's ValueErrors.
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=message):
        LandmarkKCCA(rank=5, kernel_x=kernel_x).fit(rng.normal(size=(20, 4)), rng.normal(size=(20, 3)))


@pytest.mark.parametrize("kernel, got", [
    (lambda a, b: "x", r"got str 'x'"),
    (lambda a, b: np.ones((2, 2)), r"got shape \(2, 2\)"),
])
def test_a_view_kernel_that_returns_no_block_of_numbers_is_named(kernel, got):
    # It failed in NumPy (a broadcast into the columns) naming neither the view nor its kernel.
    X, Y = _views(30)
    with pytest.raises(ParameterError, match=rf"^KernelView: its kernel <lambda> must return a \(\d+, \d+\) matrix "
                                             rf"of numbers for \d+ items against \d+, {got}$"):
        LandmarkKCCA(rank=5).fit(KernelView(X.items, kernel), Y)


def test_scikit_learn_conventions():
    from sklearn.base import clone

    from kcca_desc.methods.scalable import ScalableRanker

    for estimator in (LandmarkKCCA(n_components=3, rank=12, chunk_size=7, landmarks="uniform"),
                      ScalableRanker(rank=12, pairs="caption")):
        copy = clone(estimator)
        assert copy.get_params() == estimator.get_params()
        assert not [k for k in vars(copy) if k.endswith("_") and not k.startswith("_")]
    X, Y = _views(60)
    model = LandmarkKCCA(n_components=3, rank=12).fit(X, Y)
    assert model.fit(X, Y) is model


def test_map_chunks_in_memory_stored_and_resumed(tmp_path):
    from kcca_desc.scale import ChunkStore, LocalEngine, map_chunks

    calls = []

    def compute(rows, offset):
        calls.append(int(rows[0]))
        if len(calls) == 4 and offset == 1:
            raise KeyboardInterrupt("killed")
        return {"a": rows[:, None, None] * np.ones((1, 2, 3)) + offset, "b": rows.astype(np.int32)}

    rows = np.arange(23)
    payloads = [rows[i:i + 5] for i in range(0, 23, 5)]
    memory = map_chunks(LocalEngine(), compute, payloads, 23, 5, offset=0.5)
    assert memory["a"].shape == (23, 2, 3) and memory["b"].dtype == np.int32
    store = ChunkStore("chunks", tmp_path)
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        map_chunks(LocalEngine(), compute, payloads, 23, 5, store=store, offset=1)
    calls.clear()
    stored = map_chunks(LocalEngine(), compute, payloads, 23, 5, store=store, offset=1)
    assert calls == [15, 20]  # chunks 0-2 were written before the interruption
    np.testing.assert_array_equal(stored["a"][:], memory["a"] + 0.5)
    np.testing.assert_array_equal(stored["b"][:], rows)


@settings(max_examples=25, deadline=None)
@given(n_rows=st.integers(1, 30), n_columns=st.integers(1, 12), density=st.floats(0.0, 0.6),
       chunk_rows=st.integers(1, 8), data=st.data())
def test_stored_sparse_rows_equal_scipy_row_selection(tmp_path_factory, n_rows, n_columns, density, chunk_rows,
                                                     data):
    """Any selection of rows (any order, repeats, empty rows and none) read from Zarr is SciPy's."""
    from kcca_desc.scale import ChunkStore

    matrix = sp.random(n_rows, n_columns, density=density, format="csr",
                       random_state=data.draw(st.integers(0, 2**16)))
    rows = np.array(data.draw(st.lists(st.integers(0, n_rows - 1), max_size=12)), dtype=np.intp)
    stored = ChunkStore("m", tmp_path_factory.mktemp("store")).put_sparse("bow", matrix, chunk_rows)
    assert stored.shape == matrix.shape
    got, expected = stored[rows], matrix[rows]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.toarray(), expected.toarray())
    # In memory the same class reads NumPy arrays.
    in_memory = SparseRows(matrix.data, matrix.indices, matrix.indptr, n_columns)
    np.testing.assert_array_equal(in_memory[rows].toarray(), expected.toarray())
    with pytest.raises(IndexError, match=rf"\[0, {n_rows}\)"):
        stored[np.array([n_rows])]


def test_a_fit_over_stored_items_equals_the_fit_in_memory(tmp_path):
    """Views whose items live in Zarr (dense histograms, sparse bags of words) give the same model."""
    from kcca_desc.scale import ChunkStore

    X, Y = _views(60, captions=3)
    store = ChunkStore("inputs", tmp_path)
    X_stored = KernelView(store.put("histograms", X.items, 16), X.kernel, index=X.index)
    Y_stored = KernelView(store.put_sparse("bags_of_words", Y.items, 16), Y.kernel)
    settings = dict(n_components=4, reg=0.3, rank=20, chunk_size=32)
    reference = LandmarkKCCA(**settings).fit(X, Y)
    stored = LandmarkKCCA(**settings).fit(X_stored, Y_stored)
    np.testing.assert_array_equal(stored.canonical_correlations_, reference.canonical_correlations_)
    for a, b in zip(stored.transform(X_stored, Y_stored), reference.transform(X, Y)):
        np.testing.assert_array_equal(a, b)


def test_base_columns_warn_when_rank_is_above_the_rows_and_use_every_row():
    # mkl_scalable's --rank above the training items was capped without a word.
    X = np.random.default_rng(0).normal(size=(12, 3))
    views = {"a": KernelView(X, LinearKernel()), "b": KernelView(X[:, :2], LinearKernel())}
    with pytest.warns(UserWarning, match=r"^12 training items give at most 12 landmarks per view: rank=12 is used "
                                         r"instead of 50$"):
        columns = base_columns(views, 50, landmarks="uniform")
    assert sorted(columns.landmarks.rows) == list(range(12))
