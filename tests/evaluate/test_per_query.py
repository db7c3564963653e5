"""Per-query output: ranks, query ids and top-K lists round-trip and give back every figure."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.data.registry import load_dataset
from kcca_desc.evaluate import TASKS, Result, result_from_scores, retrieval_metrics
from kcca_desc.evaluate.ranks import gold_ranks, top_candidates
from kcca_desc.evaluate.results import load_results, save_results


@pytest.fixture(scope="module")
def views():
    dataset = load_dataset("synthetic", n_images=100, seed=0)
    return {p: dataset.view("test", p) for p in ("hodosh", "karpathy")}


def _scores(view, seed, levels=None):
    rng = np.random.default_rng(seed)
    scores = rng.random((view.n_images, view.n_captions))
    # Few distinct values: many ties, the case where the top-K order and the ranks could disagree.
    return np.floor(scores * levels) if levels else scores


@pytest.mark.parametrize("protocol", ["hodosh", "karpathy"])
def test_results_file_round_trips_and_its_ranks_give_every_figure(views, tmp_path, protocol):
    view = views[protocol]
    result = result_from_scores(_scores(view, 1), view, "random", top_k=10)
    path = tmp_path / "results.json"
    save_results([result], path, include_ranks=True)
    (loaded,) = load_results(path)
    assert loaded.queries["images"] == list(view.images.ids)
    assert loaded.queries["captions"] == list(view.caption_ids)
    np.testing.assert_array_equal(loaded.queries["caption_image"], view.caption_image)
    for task in TASKS:
        np.testing.assert_array_equal(loaded.ranks[task], result.ranks[task])
        np.testing.assert_array_equal(loaded.queries["top"][task], result.queries["top"][task])
        n_candidates = view.n_captions if task == "annotation" else view.n_images
        assert loaded.queries["top"][task].shape == (len(result.ranks[task]), min(10, n_candidates))
        recomputed = retrieval_metrics(loaded.ranks[task])
        for key, value in getattr(loaded, task).items():
            assert value == pytest.approx(recomputed[key], rel=1e-12), (task, key)
    # The JSON form keeps the top lists as indices into the id lists, not as repeated ids.
    assert loaded.to_dict(include_ranks=True) == result.to_dict(include_ranks=True)
    assert "queries" not in result.to_dict()
    # Compact: each list of numbers on one line (a rank per line made files three times as large).
    text = path.read_text()
    assert f'"search": {result.ranks["search"].tolist()}' in text
    assert str(result.queries["top"]["annotation"][0].tolist()) in text


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), levels=st.sampled_from([None, 2, 5]), k=st.integers(1, 12))
def test_top_candidates_agree_with_gold_ranks(views, seed, levels, k):
    """A query of rank r <= K has its first gold item at position r of its top list (ties included)."""
    view = views["karpathy"]
    scores = _scores(view, seed, levels)
    for matrix, gold in ((scores, view.annotation_gold), (scores.T, view.search_gold)):
        ranks = gold_ranks(matrix, gold)
        top = top_candidates(matrix, gold, k=k, chunk_size=7)
        for q, (rank, row) in enumerate(zip(ranks, top)):
            is_gold = np.isin(row, gold[q])
            if rank <= k:
                assert is_gold[rank - 1] and not is_gold[:rank - 1].any()
            else:
                assert not is_gold.any()
            # The slow obvious order: score descending, non-gold first among equal scores, then index.
            keys = sorted(range(matrix.shape[1]), key=lambda c: (-matrix[q, c], c in set(gold[q].tolist()), c))
            assert row.tolist() == keys[:k]


def test_top_candidates_reject_bad_k_and_mismatched_queries():
    with pytest.raises(ValueError, match="k must be a positive integer"):
        top_candidates(np.zeros((3, 3)), [[0], [1], [2]], k=0)
    with pytest.raises(ValueError, match="3 queries but gold items for 2"):
        top_candidates(np.zeros((3, 3)), [[0], [1]])


def test_stored_queries_must_match_the_ranks(views):
    view = views["hodosh"]
    data = result_from_scores(_scores(view, 2), view, "random").to_dict(include_ranks=True)
    data["queries"]["captions"] = data["queries"]["captions"][:-1]
    with pytest.raises(ValueError, match="per-query search entries but .* query ids"):
        Result.from_dict(data)
