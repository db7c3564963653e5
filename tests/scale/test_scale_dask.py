"""The Dask path against the single-process path, on a LocalCluster of two worker processes."""

import numpy as np
import pytest

from kcca_bench import synthetic_items
from kcca_desc.evaluate import gold_ranks
from kcca_desc.scale import HistogramIntersection, KernelView, LandmarkKCCA, LinearKernel, dask_engine
from kcca_desc.evaluate.scores import cosine_scores

pytest.importorskip("distributed", reason="the Dask engine needs the dask extra")
pytest.importorskip("zarr", reason="the chunk store needs the dask extra")

N_TRAIN, N_TEST, CAPTIONS = 600, 100, 5


@pytest.fixture(scope="module")
def engine():
    """Two single-threaded worker processes, shut down when the module's tests are done."""
    with dask_engine(n_workers=2, threads_per_worker=1, processes=True, memory_limit=None) as engine:
        assert len(engine.client.scheduler_info()["workers"]) == 2
        yield engine


def _caption_level(n_images, seed, key, start=0, stop=None):
    """Caption-level views of images ``start:stop`` of one draw of ``n_images`` (train and test share topics)."""
    hist, bow = synthetic_items(n_images, CAPTIONS, seed=seed)
    stop = n_images if stop is None else stop
    hist, bow = hist[start:stop], bow[start * CAPTIONS:stop * CAPTIONS]
    image_of = np.repeat(np.arange(hist.shape[0]), CAPTIONS)
    return (KernelView(hist, HistogramIntersection(2.0), index=image_of, key=f"{key}-x"),
            KernelView(bow, LinearKernel(), key=f"{key}-y"), hist)


def _ranks(scores):
    """Annotation and search ranks of the gold items over a test pool of caption-level pairs."""
    annotation = gold_ranks(scores, [np.arange(i * CAPTIONS, (i + 1) * CAPTIONS) for i in range(N_TEST)])
    search = gold_ranks(scores.T, [np.array([j // CAPTIONS]) for j in range(N_TEST * CAPTIONS)])
    return annotation, search


def test_dask_path_equals_single_process_path(engine, tmp_path):
    X, Y, _ = _caption_level(N_TRAIN + N_TEST, 0, "train", stop=N_TRAIN)
    _, Yt, hist_test = _caption_level(N_TRAIN + N_TEST, 0, "test", start=N_TRAIN)
    X_test_images = KernelView(hist_test, HistogramIntersection(2.0), key="test-images")
    settings = dict(n_components=16, reg=5.0, rank=80, chunk_size=256)
    local = LandmarkKCCA(**settings, store=str(tmp_path / "local")).fit(X, Y)
    dask = LandmarkKCCA(**settings, store=str(tmp_path / "dask"), engine=engine).fit(X, Y)
    np.testing.assert_array_equal(dask.map_x_.rows, local.map_x_.rows)
    np.testing.assert_allclose(dask.canonical_correlations_, local.canonical_correlations_, rtol=1e-10)

    projections = {}
    for name, model in (("local", local), ("dask", dask)):
        projections[name] = model.transform(X_test_images, Yt)
    for a, b in zip(projections["dask"], projections["local"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max())
    S_dask, S_local = cosine_scores(*projections["dask"]), cosine_scores(*projections["local"])
    np.testing.assert_allclose(S_dask, S_local, atol=1e-10)
    # per-query ranks: exactly equal wherever no other candidate is within tolerance of the best gold
    annotation_gold = [np.arange(i * CAPTIONS, (i + 1) * CAPTIONS) for i in range(N_TEST)]
    search_gold = [np.array([j // CAPTIONS]) for j in range(N_TEST * CAPTIONS)]
    for ranks_dask, ranks_local, scores, gold in zip(_ranks(S_dask), _ranks(S_local), (S_local, S_local.T),
                                                      (annotation_gold, search_gold)):
        best = np.array([scores[q, g].max() for q, g in enumerate(gold)])
        clear = np.sum(np.abs(scores - best[:, None]) < 1e-8, axis=1) == 1
        assert clear.mean() > 0.9
        np.testing.assert_array_equal(ranks_dask[clear], ranks_local[clear])
        assert np.abs(ranks_dask - ranks_local).max() <= CAPTIONS
    # retrieval works at all (far above chance: R@10 of search)
    assert np.mean(_ranks(S_dask)[1] <= 10) > 0.2


def test_dask_workers_write_the_chunks_a_local_rerun_resumes_from(engine, tmp_path):
    X, Y, _ = _caption_level(200, 2, "resume")
    settings = dict(n_components=4, reg=1.0, rank=30, chunk_size=128, store=str(tmp_path))
    dask = LandmarkKCCA(**settings, engine=engine).fit(X, Y)
    store = dask.store_
    assert store.root == tmp_path
    assert store.missing("factor_x").size == 0 and store.missing("factor_y").size == 0
    local = LandmarkKCCA(**settings).fit(X, Y)
    np.testing.assert_array_equal(local.canonical_correlations_, dask.canonical_correlations_)
    np.testing.assert_array_equal(local.transform(X), dask.transform(X))


def _slow_identity(value):
    import time

    time.sleep(0.02)
    return value


def test_map_reduce_keeps_a_bounded_window_of_chunks_in_flight():
    # Submitted all at once, the chunks ran ahead of their sums and every chunk's r x r partial
    # sums were held (15.7 GiB at 566,435 pairs): at most `window` chunks may be unfinished.
    with dask_engine(n_workers=1, threads_per_worker=1, processes=False) as engine:
        submit, chunks = engine.client.submit, []

        def spy(fn, *args, **kwargs):
            future = submit(fn, *args, **kwargs)
            if fn is _slow_identity:
                assert sum(not f.done() for f in chunks) < engine.window
                chunks.append(future)
            return future

        engine.client.submit = spy
        assert engine.window == 2
        assert engine.map_reduce(_slow_identity, range(20)) == sum(range(20))
        assert len(chunks) == 20
        # In chunk order, as the single-process engine sums.
        letters = [chr(ord("a") + i) for i in range(12)]
        assert engine.map_reduce(_slow_identity, letters) == "".join(letters)
        with pytest.raises(ValueError, match="no tasks"):
            engine.map_reduce(_slow_identity, [])
