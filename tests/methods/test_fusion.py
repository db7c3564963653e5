"""Borda fusion and dev-set model selection against hand-worked examples and a slow reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import rankdata

from kcca_desc.evaluate.scores import average_ranks
from kcca_desc.evaluate.ranks import gold_ranks
from kcca_desc.methods.fusion import borda_fuse
from kcca_desc.methods.selection import select_models


def reference_order(score_rows):
    """Borda by explicit loops for one query: the fused order of the N items.

    Returns items best first, as (total points, median rank) keys; ties
    within one model get the mean of the ranks they span.
    """
    n = len(score_rows[0])
    all_ranks = []
    for row in score_rows:
        ranks = []
        for i in range(n):
            better = sum(1 for j in range(n) if row[j] > row[i])
            equal = sum(1 for j in range(n) if row[j] == row[i])
            ranks.append(better + (equal + 1) / 2)
        all_ranks.append(ranks)
    keys = []
    for i in range(n):
        r = sorted(model[i] for model in all_ranks)
        m = len(r)
        median = r[m // 2] if m % 2 else (r[m // 2 - 1] + r[m // 2]) / 2
        keys.append((sum(n - model[i] for model in all_ranks), -median))
    return keys


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.sampled_from([0.0, 1.0, 2.5, -1.0])), st.booleans())
def test_average_ranks_match_scipy_rankdata(x, descending):
    expected = rankdata(-x if descending else x, axis=-1)
    assert np.array_equal(average_ranks(x, descending), expected)


def test_hand_worked_borda_with_median_tie_break():
    # Three models, four captions of one image.  Ranks per model:
    # m1: a1 b2 c3 d4   m2: b1 a2 d3 c4   m3: c1 a2 b3 d4
    # points (4 - r): a 3+2+2=7  b 2+3+1=6  c 1+0+3=4  d 0+1+0=1
    m1 = [[4.0, 3.0, 2.0, 1.0]]
    m2 = [[3.0, 4.0, 1.0, 2.0]]
    m3 = [[3.0, 2.0, 4.0, 1.0]]
    fused = borda_fuse([m1, m2, m3], axis=1)
    assert np.argsort(-fused[0]).tolist() == [0, 1, 2, 3]
    assert np.allclose(np.round(fused[0]), [7, 6, 4, 1])


def test_full_ties_stay_tied_and_more_models_change_the_order():
    # N = 4.  Two models: x (1, 4) 3 points, median 2.5; y (2, 2) 4 points, median 2;
    # z (3, 1) 4 points, median 2; w (4, 3) 1 point.  y and z tie in total AND median.
    ranks_1 = [[1, 2, 3, 4]]
    ranks_2 = [[4, 2, 1, 3]]
    fused = borda_fuse([ranks_1, ranks_2], axis=1, kind="ranks")
    assert fused[0, 1] == fused[0, 2]
    assert fused[0, 1] > fused[0, 0] > fused[0, 3]
    # Third model (2, 3, 1, 4): x (1, 4, 2) 5 points, median 2; y (2, 2, 3) 5, median 2;
    # z (3, 1, 1) 7; w (4, 3, 4) 1.
    ranks_3 = [[2, 3, 1, 4]]
    fused = borda_fuse([ranks_1, ranks_2, ranks_3], axis=1, kind="ranks")
    assert fused[0, 2] > fused[0, 0] == fused[0, 1] > fused[0, 3]
    # Fourth model (3, 1, 2, 4): points x 6, y 8, z 9, w 1.
    ranks_4 = [[3, 1, 2, 4]]
    fused = borda_fuse([ranks_1, ranks_2, ranks_3, ranks_4], axis=1, kind="ranks")
    assert np.argsort(-fused[0], kind="stable").tolist() == [2, 1, 0, 3]


def test_median_only_breaks_equal_totals():
    # Item 0 ranks (1, 1, 3): points 2+2+0 = 4, median 1.
    # Item 1 ranks (2, 2, 1): points 1+1+2 = 4, median 2.  Equal totals: item 0 wins on the median.
    # Item 2 ranks (3, 3, 2): points 0+0+1 = 1.
    fused = borda_fuse([[[1, 2, 3]], [[1, 2, 3]], [[3, 1, 2]]], axis=1, kind="ranks")
    assert fused[0, 0] > fused[0, 1] > fused[0, 2]
    assert np.floor(fused[0, 0]) == np.floor(fused[0, 1]) == 3   # 4 - median / 7


def test_ties_within_a_model_share_points_and_axis_zero_ranks_columns():
    scores = np.array([[0.5, 0.1],
                       [0.5, 0.9],
                       [0.2, 0.3]])
    fused = borda_fuse([scores], axis=0)
    # Column 0: rows 0 and 1 tie on ranks 1-2 (1.5 each), row 2 rank 3.
    assert fused[0, 0] == fused[1, 0] > fused[2, 0]
    # Column 1: row 1 > row 2 > row 0.
    assert fused[1, 1] > fused[2, 1] > fused[0, 1]
    assert fused.shape == scores.shape


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n_models=st.integers(1, 5), n=st.integers(1, 7), n_queries=st.integers(1, 3))
def test_matches_slow_reference(data, n_models, n, n_queries):
    mats = [data.draw(hnp.arrays(np.float64, (n_queries, n), elements=st.sampled_from([0.0, 1.0, 2.0, 3.0])))
            for _ in range(n_models)]
    fused = borda_fuse(mats, axis=1)
    for q in range(n_queries):
        keys = reference_order([m[q] for m in mats])
        for i in range(n):
            for j in range(n):
                assert (keys[i] > keys[j]) == (fused[q, i] > fused[q, j])
                assert (keys[i] == keys[j]) == (fused[q, i] == fused[q, j])


def test_fused_scores_feed_the_rank_metrics():
    rng = np.random.default_rng(3)
    base = rng.random((20, 20))
    # Monotone transforms of one score matrix: the same rankings, so the fused ranking is that one.
    models = [base, base**2, 3 * base + 1]
    fused = borda_fuse(models, axis=1)
    gold = [[i] for i in range(20)]
    assert np.array_equal(gold_ranks(fused, gold), gold_ranks(base, gold))


def test_chunked_fusion_equals_one_pass(monkeypatch):
    import kcca_desc.methods.fusion as fusion
    rng = np.random.default_rng(1)
    mats = [rng.integers(0, 5, size=(9, 11)).astype(float) for _ in range(4)]
    whole = borda_fuse(mats, axis=0)
    monkeypatch.setattr(fusion, "_CHUNK_ELEMENTS", 50)
    assert np.array_equal(borda_fuse(mats, axis=0), whole)


def test_borda_rejects_bad_input():
    with pytest.raises(ValueError, match="no matrices"):
        borda_fuse([])
    with pytest.raises(ValueError, match="matrix 1 has shape"):
        borda_fuse([np.zeros((2, 3)), np.zeros((3, 2))])
    with pytest.raises(ValueError, match="matrix 0 contains NaN"):
        borda_fuse([np.full((2, 2), np.nan)])
    with pytest.raises(ValueError, match=r"ranks in \[1, 3\]"):
        borda_fuse([[[0, 1, 2]]], kind="ranks")
    with pytest.raises(ValueError, match="kind"):
        borda_fuse([np.zeros((2, 2))], kind="votes")
    with pytest.raises(ValueError, match="axis"):
        borda_fuse([np.zeros((2, 2))], axis=2)


def grid():
    """(n, reg) settings with dev metrics built so each list is known."""
    rows = {
        (16, 0.1): (5.0, 20.0, 30.0),
        (32, 0.1): (6.0, 18.0, 31.0),
        (64, 0.1): (7.0, 17.0, 29.0),
        (16, 1.0): (4.0, 21.0, 28.0),
        (32, 1.0): (6.0, 19.0, 33.0),   # ties (32, 0.1) on R@1; higher R@5 + R@10 wins
        (64, 1.0): (3.0, 22.0, 27.0),
        (128, 1.0): (2.0, 10.0, 34.0),
    }
    return [(s, {"R@1": a, "R@5": b, "R@10": c, "median_rank": 50.0}) for s, (a, b, c) in rows.items()]


def test_select_models_keeps_duplicates_and_documented_tie_break():
    chosen = select_models(grid(), k=3)
    assert chosen[:3] == [(64, 0.1), (32, 1.0), (32, 0.1)]
    assert chosen[3:6] == [(64, 1.0), (16, 1.0), (16, 0.1)]
    assert chosen[6:] == [(128, 1.0), (32, 1.0), (32, 0.1)]
    assert len(chosen) == 9 and chosen.count((32, 1.0)) == 2


def test_select_models_default_is_fifteen_and_input_order_breaks_full_ties():
    rows = [((n, r), {"R@1": 1.0, "R@5": 2.0, "R@10": 3.0}) for n in (8, 16, 32) for r in (0.1, 1.0)]
    chosen = select_models(rows)
    assert len(chosen) == 15
    assert chosen[:5] == chosen[5:10] == chosen[10:] == [s for s, _ in rows[:5]]
    # Fewer settings than k: every setting in each list.
    assert select_models(rows[:2]) == [s for s, _ in rows[:2]] * 3


def test_select_models_rejects_bad_input():
    with pytest.raises(ValueError, match="no dev results"):
        select_models([])
    with pytest.raises(ValueError, match="positive integer"):
        select_models(grid(), k=0)
    with pytest.raises(ValueError, match=r"\(1, 2\) has no R@5"):
        select_models([((1, 2), {"R@1": 1.0, "R@10": 2.0})])
    with pytest.raises(ValueError, match="nan"):
        select_models([((1, 2), {"R@1": float("nan"), "R@5": 1.0, "R@10": 2.0})])
