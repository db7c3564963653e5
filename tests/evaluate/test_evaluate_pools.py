"""COCO 1K fold averaging against a hand-computed example, and the side-by-side table."""

import numpy as np
import pytest

from kcca_desc.data import ArrayImages, Dataset
from kcca_desc.data.karpathy import EvaluationPool
from kcca_desc.evaluate import Result
from kcca_desc.evaluate.pools import evaluate_pool, fold_average, side_by_side


class FixedScores:
    """Scores every pool by the fold-specific matrices given, in call order."""

    name = "fixed"

    def __init__(self, matrices):
        self.matrices = list(matrices)

    def score(self, images, captions):
        S = self.matrices.pop(0)
        assert S.shape == (len(images), len(captions))
        return S


def _dataset(n_images):
    images = ArrayImages([np.zeros((4, 4, 3), np.uint8) for _ in range(n_images)],
                         [f"im{i}" for i in range(n_images)])
    return Dataset("coco", images, [[f"caption {i} {k}" for k in range(5)] for i in range(n_images)],
                   {"test": np.arange(n_images)})


def _scores_with_ranks(image_ranks):
    """A 2-image x 10-caption fold whose image i ranks its first gold caption at image_ranks[i]."""
    S = np.zeros((2, 10))
    for i, rank in enumerate(image_ranks):
        # gold captions 5i..5i+4; the best gold caption gets score 1 - (rank - 1) / 100 and every
        # non-gold caption a score that puts exactly rank - 1 of them above it
        others = [j for j in range(10) if j // 5 != i]
        S[i, 5 * i:5 * i + 5] = 0.5 - 0.01 * np.arange(5)
        S[i, others[:rank - 1]] = 0.9
        S[i, others[rank - 1:]] = 0.0
    return S


def test_coco_1k_fold_average_by_hand():
    # Five folds of two images. Annotation ranks per fold (image 0, image 1):
    ranks = [(1, 1), (2, 6), (1, 3), (4, 4), (1, 2)]
    data = _dataset(10)
    pool = EvaluationPool("coco", pool_images=2, n_folds=5)
    result = evaluate_pool(FixedScores(_scores_with_ranks(r) for r in ranks), data, pool)
    # By hand: R@1 per fold = 100, 0, 50, 0, 50 -> mean 40; R@5 = 100, 50, 100, 100, 100 -> 90;
    # median ranks 1, 4, 2, 4, 1.5 -> mean 2.5 (the median of all ten ranks would be 2);
    # mean ranks 1, 4, 2, 4, 1.5 -> 2.5.
    assert result.annotation["R@1"] == pytest.approx(40.0)
    assert result.annotation["R@5"] == pytest.approx(90.0)
    assert result.annotation["R@10"] == pytest.approx(100.0)
    assert result.annotation["median_rank"] == pytest.approx(2.5)
    assert np.median(result.ranks["annotation"]) == 2.0
    assert result.annotation["mean_rank"] == pytest.approx(2.5)
    assert result.annotation["n_queries"] == 10
    assert result.search["n_queries"] == 50
    assert list(result.ranks["annotation"]) == [r for pair in ranks for r in pair]
    assert result.extras["pool"]["n_folds"] == 5 and result.extras["pool"]["pool_images"] == 2
    assert [f["split"] for f in result.extras["folds"]] == [f"test/fold{k}of5" for k in range(1, 6)]
    assert result.split == "test" and result.protocol == "karpathy"
    # the record survives JSON
    again = Result.from_json(result.to_json())
    assert again.extras["pool"] == result.extras["pool"]


def test_fold_average_checks():
    pool = EvaluationPool("coco", pool_images=2, n_folds=5)
    with pytest.raises(ValueError, match="2 results for a pool of 5 folds"):
        fold_average([None, None], pool)


def test_side_by_side_groups_data_sets():
    def result(system, dataset, r1):
        metrics = {"R@1": r1, "R@5": 2 * r1, "R@10": 3 * r1, "median_rank": 4.0, "mean_rank": 5.0, "n_queries": 10}
        return Result(system, dataset, "karpathy", "test", metrics, metrics,
                      extras={"pool": EvaluationPool(dataset, pool_images=1000).record()})

    table = side_by_side([result("A", "flickr30k", 10.0), result("A", "coco", 20.0), result("B", "coco", 30.0)])
    header, _, row_a, row_b = table.strip().splitlines()
    assert "flickr30k 1000 images: Ann. R@1" in header and "coco 1000 images: Sea. med r" in header
    assert row_a.split(" | ")[1] == "10.0" and row_b.split(" | ")[1] == ""
    assert row_b.split(" | ")[9] == "30.0"
    # A bar in a system name is escaped, not a column of its own.
    table = side_by_side([result("A|B", "coco", 20.0)])
    assert table.splitlines()[2].startswith(r"| A\|B | 20.0 |")


def test_side_by_side_shows_the_further_cut_offs_the_results_carry_as_the_tables_do():
    # Its columns were TABLE_METRICS only: a result evaluated with ks=(1, 5, 10, 20) lost its R@20.
    def result(system, dataset, r20=None):
        metrics = {"R@1": 10.0, "R@5": 20.0, "R@10": 30.0, "median_rank": 4.0, "mean_rank": 5.0, "n_queries": 10}
        if r20 is not None:
            metrics["R@20"] = r20
        return Result(system, dataset, "karpathy", "test", metrics, metrics,
                      extras={"pool": EvaluationPool(dataset, pool_images=1000).record()})

    results = [result("A", "coco", 45.0), result("B", "coco")]
    header, _, row_a, row_b = side_by_side(results).strip().splitlines()
    group = "coco 1000 images"
    assert header.split(" | ")[1:6] == [f"{group}: Ann. {m}" for m in ("R@1", "R@5", "R@10", "R@20", "med r")]
    assert row_a.split(" | ")[4] == "45.0" and row_b.split(" | ")[4] == ""  # blank, as in to_markdown
    assert row_b.split(" | ")[5] == "4.0"
    # Without a further cut-off the columns are those of before; asked for, R@20 is a column too.
    assert side_by_side(results[1:]).splitlines()[0].count("R@20") == 0
    assert side_by_side(results, metrics=["R@20"]).splitlines()[0].endswith(f"{group}: Sea. R@20 |")
    with pytest.raises(ValueError, match=r"unknown metric 'R@50'; available: R@1, R@5, R@10, R@20, median_rank"):
        side_by_side(results, metrics=["R@50"])
