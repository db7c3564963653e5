"""Gold ranks and retrieval metrics against hand-worked cases and a brute-force reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kcca_desc._core.errors import DataError
from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages
from kcca_desc.evaluate.ranks import evaluate_scores, gold_ranks, retrieval_metrics
from kcca_desc.evaluate.scores import DirectionalScores, cosine_scores


def reference_rank(row, gold):
    """Rank by explicit enumeration: sort candidates, gold items after ties."""
    gold = set(int(g) for g in gold)
    # Pessimistic: among equal scores non-gold first; best gold position + 1.
    order = sorted(range(len(row)), key=lambda c: (-row[c], c in gold))
    return 1 + min(order.index(g) for g in gold)


def make_view(n_images, n_captions_each, protocol):
    images = ArrayImages(np.zeros((n_images, 4, 4, 3), dtype=np.uint8), ids=[f"im{i}" for i in range(n_images)])
    captions = [[f"caption {k} of image {i}" for k in range(n_captions_each)] for i in range(n_images)]
    data = Dataset("toy", images, captions, {"test": np.arange(n_images)}, hodosh_caption=0)
    return data.view("test", protocol)


def test_hand_worked_ranks_with_ties_and_several_gold():
    scores = np.array([
        [0.9, 0.1, 0.5, 0.5],   # gold 2: one non-gold above (0.9), one tied non-gold (0.5) -> 3
        [0.2, 0.8, 0.8, 0.1],   # gold {1, 2} tied with each other: no non-gold above -> 1
        [0.3, 0.3, 0.3, 0.3],   # constant row, gold 0: all 3 non-gold tie -> 4
        [0.1, 0.7, 0.2, 0.6],   # gold {0, 3}: best gold 0.6, only 0.7 above -> 2
    ])
    gold = [[2], [1, 2], [0], [0, 3]]
    assert gold_ranks(scores, gold).tolist() == [3, 1, 4, 2]


def test_repeated_gold_indices_are_ignored():
    scores = np.array([[0.1, 0.5, 0.5]])
    assert gold_ranks(scores, [[1, 1, 1]]).tolist() == [2]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n_q=st.integers(1, 6), n_c=st.integers(1, 8), chunk=st.integers(1, 4))
def test_matches_enumeration_reference(data, n_q, n_c, chunk):
    # Few distinct values so that ties are common.
    scores = data.draw(hnp.arrays(np.float64, (n_q, n_c), elements=st.sampled_from([0.0, 0.5, 1.0, -2.0])))
    gold = [data.draw(st.lists(st.integers(0, n_c - 1), min_size=1, max_size=3)) for _ in range(n_q)]
    expected = [reference_rank(scores[q], gold[q]) for q in range(n_q)]
    assert gold_ranks(scores, gold, chunk_size=chunk).tolist() == expected


def test_chunking_memmap_and_transposed_views_agree(tmp_path):
    rng = np.random.default_rng(0)
    scores = rng.random((37, 53)).astype(np.float32)
    path = tmp_path / "scores.f32"
    scores.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=scores.shape)
    gold = [rng.choice(53, size=rng.integers(1, 4), replace=False) for _ in range(37)]
    full = gold_ranks(scores, gold)
    assert np.array_equal(gold_ranks(mm, gold, chunk_size=5), full)
    gold_t = [np.array([q % 37]) for q in range(53)]
    assert np.array_equal(gold_ranks(mm.T, gold_t, chunk_size=7), gold_ranks(scores.T.copy(), gold_t))


def test_bad_input_errors_name_the_problem():
    scores = np.zeros((2, 3))
    with pytest.raises(ValueError, match="query 1 has no gold"):
        gold_ranks(scores, [[0], []])
    with pytest.raises(ValueError, match="out of range"):
        gold_ranks(scores, [[0], [3]])
    with pytest.raises(ValueError, match="3 queries|2 queries"):
        gold_ranks(scores, [[0]])
    bad = scores.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="method 'sys'.*query 1 contain NaN"):
        gold_ranks(bad, [[0], [1]], method="sys")
    with pytest.raises(ValueError, match="2-D"):
        gold_ranks(np.zeros(3), [[0]])
    with pytest.raises(ValueError, match="chunk_size"):
        gold_ranks(scores, [[0], [1]], chunk_size=0)


def test_retrieval_metrics_hand_computed():
    m = retrieval_metrics([1, 2, 5, 6, 10, 11, 100, 3])
    assert m == {"R@1": 12.5, "R@5": 50.0, "R@10": 75.0, "median_rank": 5.5, "mean_rank": 17.25, "n_queries": 8}
    with pytest.raises(ValueError, match="1-based"):
        retrieval_metrics([0, 1])
    with pytest.raises(ValueError, match="non-empty"):
        retrieval_metrics([])
    with pytest.raises(ValueError, match="cut-off"):
        retrieval_metrics([1], ks=(0,))


def test_evaluate_scores_both_directions_hodosh():
    view = make_view(3, 2, "hodosh")
    scores = np.array([
        [0.9, 0.1, 0.2],   # image 0: own caption 0 first -> 1
        [0.5, 0.4, 0.3],   # image 1: caption 1 below caption 0 -> 2
        [0.8, 0.0, 0.1],   # image 2: caption 2 below caption 0 -> 2
    ])
    out = evaluate_scores(scores, view)
    assert out["annotation"]["ranks"].tolist() == [1, 2, 2]
    # search: caption 0 column (.9, .5, .8) -> image 0 first; caption 1 (.1, .4, 0) -> 1;
    # caption 2 (.2, .3, .1) -> image 2 last: 3
    assert out["search"]["ranks"].tolist() == [1, 1, 3]
    assert out["search"]["R@1"] == pytest.approx(200 / 3)
    assert out["annotation"]["median_rank"] == 2.0


def test_evaluate_scores_karpathy_best_of_several_gold_and_directional():
    view = make_view(2, 3, "karpathy")   # captions 0-2 of image 0, 3-5 of image 1
    ann = np.array([[0.1, 0.2, 0.9, 0.95, 0.0, 0.0],    # best gold 0.9 below 0.95 -> 2
                    [0.5, 0.1, 0.1, 0.1, 0.2, 0.5]])    # best gold 0.5 ties non-gold 0.5 -> 2
    search = np.where(np.arange(2)[:, None] == view.caption_image[None], 1.0, 0.0)
    out = evaluate_scores(DirectionalScores(ann, search), view)
    assert out["annotation"]["ranks"].tolist() == [2, 2]
    assert out["search"]["ranks"].tolist() == [1] * 6
    assert out["search"]["n_queries"] == 6


def test_evaluate_scores_rejects_wrong_shape_and_nan():
    view = make_view(3, 2, "hodosh")
    with pytest.raises(ValueError, match="method 'x': annotation scores have shape .*needs \\(3, 3\\)"):
        evaluate_scores(np.zeros((3, 4)), view, method="x")
    bad = np.zeros((3, 3))
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        evaluate_scores(bad, view, method="x")


def test_the_view_of_an_empty_split_is_refused_as_having_no_queries():
    view = make_view(3, 2, "hodosh")
    data = Dataset("toy", view.images, [["a dog"]] * 3, {"train": [0, 1, 2], "test": []}, hodosh_caption=0)
    with pytest.raises(DataError, match=r"^method 'x': the karpathy view of toy:test has no queries: the split "
                                        r"'test' holds no image"):
        evaluate_scores(np.zeros((0, 0)), data.view("test", "karpathy"), method="x")
    with pytest.raises(DataError, match=r"^gold_ranks: there are no queries"):
        gold_ranks(np.zeros((0, 3)), [])


def test_random_scores_on_1000_pool_give_chance_recall():
    view = make_view(1000, 1, "hodosh")
    rng = np.random.default_rng(12345)
    out = evaluate_scores(rng.random((1000, 1000)), view)
    for task in ("annotation", "search"):
        # R@10 of a random ranking is Binomial(1000, 0.01)/10 percent: mean 1.0, sd 0.31.
        assert 0.0 <= out[task]["R@10"] <= 2.5
        # Median of 1000 uniform ranks in 1..1000: sd about 9.
        assert 440 <= out[task]["median_rank"] <= 560


def test_cosines_of_a_row_that_is_rounding_noise_of_zero_are_exact_zeros():
    # A caption without a word projects to ~1e-17 rather than 0: it must tie, not rank images.
    rng = np.random.default_rng(0)
    images, captions = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    captions[1] = rng.normal(size=3) * 1e-17
    captions[2] = 0.0
    scores = cosine_scores(images, captions)
    assert not scores[:, 1].any() and not scores[:, 2].any()
    # Every other row is divided by its norm exactly, as before.
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)
    assert np.array_equal(scores[:, [0, 3]], unit(images) @ unit(captions[[0, 3]]).T)
    # The floor follows the scale of the data: large rows leave noise larger than 1e-12.
    big = cosine_scores(images * 1e6, np.vstack([captions[0] * 1e6, captions[1] * 1e11]))
    assert not big[:, 1].any()
    np.testing.assert_allclose(big[:, 0], scores[:, 0], rtol=1e-12)
