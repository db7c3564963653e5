"""Task metrics against hand-computed examples and brute-force references; the vSTS loader."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages
from kcca_desc.methods.base import RetrievalMethod
from kcca_desc.tasks import (average_precision, cosine_similarity_correlations, evaluate_forced_choice,
                             evaluate_off_topic, fit_siamese_regressor, forced_choice_candidates,
                             forced_choice_metrics, leave_one_out_threshold_accuracy, load_vsts,
                             mean_sentence_scores, off_topic_metrics, off_topic_pairs, pearson_r,
                             precision_at_k, seen_images, siamese_features)
from kcca_desc.tasks.metrics import optimal_threshold


# ---------------------------------------------------------------- metrics
def test_average_precision_hand_example():
    # ranking: +, -, +, -  -> precisions at hits 1/1 and 2/3
    assert average_precision([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0.1, 0.9], [1, 0]) == pytest.approx(0.5)


def test_precision_at_k_hand_example():
    assert precision_at_k([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], 2) == 0.5
    assert precision_at_k([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], 3) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="k must be"):
        precision_at_k([1.0], [1], 2)


def test_threshold_hand_examples():
    assert optimal_threshold([1, 2, 5, 6], [0, 0, 1, 1]) == 3.5
    assert leave_one_out_threshold_accuracy([1, 2, 5, 6], [0, 0, 1, 1]) == 1.0
    # inverted classes: the best rule on the others never works on the held-out item
    assert leave_one_out_threshold_accuracy([1, 2, 5, 6], [1, 1, 0, 0]) == 0.0


def brute_force_loo(scores, labels):
    correct = 0
    for k in range(len(scores)):
        others = [i for i in range(len(scores)) if i != k]
        distinct = sorted({scores[i] for i in others})
        candidates = [-np.inf] + [(a + b) / 2 for a, b in zip(distinct, distinct[1:])] + [np.inf]
        acc = [sum((scores[i] >= t) == labels[i] for i in others) for t in candidates]
        best = [t for t, a in zip(candidates, acc) if a == max(acc)]
        t = best[len(best) // 2]
        correct += (scores[k] >= t) == labels[k]
    return correct / len(scores)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1)), min_size=2, max_size=15))
def test_leave_one_out_matches_brute_force(pairs):
    scores = np.array([p[0] for p in pairs], dtype=float)  # small integers: many ties
    labels = np.array([p[1] for p in pairs])
    assert leave_one_out_threshold_accuracy(scores, labels) == pytest.approx(brute_force_loo(scores, labels))


def test_pearson_hand_example_and_errors():
    assert pearson_r([1, 2, 3], [2, 4, 7]) == pytest.approx(np.corrcoef([1, 2, 3], [2, 4, 7])[0, 1])
    assert pearson_r([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    with pytest.raises(ValueError, match="constant"):
        pearson_r([1, 1, 1], [1, 2, 3])


def test_metric_input_errors():
    with pytest.raises(ValueError, match="no positive"):
        average_precision([1.0, 2.0], [0, 0])
    with pytest.raises(ValueError, match="0 or 1"):
        average_precision([1.0, 2.0], [0, 2])
    with pytest.raises(ValueError, match="NaN"):
        average_precision([np.nan, 2.0], [0, 1])


# -------------------------------------------------------------- off-topic
def test_off_topic_pairs_never_pair_a_text_with_its_own_image():
    images, texts, labels = off_topic_pairs(7, seed=3)
    assert np.array_equal(texts, np.r_[np.arange(7), np.arange(7)])
    assert np.array_equal(images[:7], np.arange(7)) and np.all(images[7:] != np.arange(7))
    assert labels.tolist() == [0] * 7 + [1] * 7
    assert np.array_equal(off_topic_pairs(7, seed=3)[0], images)  # seeded


def test_mean_sentence_scores_hand_example():
    S = np.array([[1.0, 3.0, 5.0], [0.0, 2.0, 4.0]])
    np.testing.assert_allclose(mean_sentence_scores(S, np.array([0, 0, 1]), 2), [[2.0, 5.0], [1.0, 4.0]])
    with pytest.raises(ValueError, match="text 2 has no sentence"):
        mean_sentence_scores(S, np.array([0, 0, 1]), 3)


def test_off_topic_metrics_hand_example():
    # affinity: on-topic pairs 0.9, 0.8; off-topic 0.1, 0.85 -> off-topic scores -aff
    m = off_topic_metrics(np.array([0.9, 0.8, 0.1, 0.85]), np.array([0, 0, 1, 1]), k=1)
    # ranking by -aff: 0.1(off), 0.8(on), 0.85(off), 0.9(on): AP = (1 + 2/3) / 2
    assert m["AP"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert m["P@1"] == 100.0 and m["n_pairs"] == 4


class IdentityMethod(RetrievalMethod):
    """Scores sentence j against image i as 1 if the sentence names the image's id."""

    def fit(self, train):
        return self

    def score(self, images, captions):
        return np.array([[float(f"<{i}>" in c) for c in captions] for i in images.ids])


def tiny_images(n):
    return ArrayImages([np.zeros((2, 2, 3), np.uint8) + i for i in range(n)], [str(i) for i in range(n)])


def test_evaluate_off_topic_perfect_method():
    n = 60
    texts = [[f"<{i}> one", f"<{i}> two"] for i in range(n)]
    m = evaluate_off_topic(IdentityMethod(), tiny_images(n), texts, seed=0)
    assert m["AP"] == 100.0 and m["P@50"] == 100.0 and m["accuracy"] == 100.0


# ---------------------------------------------------------- forced choice
def test_forced_choice_candidates_are_valid_and_seeded():
    caption_image = np.repeat(np.arange(10), 5)
    c = forced_choice_candidates(caption_image, n_choices=6, seed=1)
    assert c.shape == (10, 6)
    assert np.all(caption_image[c[:, 0]] == np.arange(10))
    assert np.all(caption_image[c[:, 1:]] != np.arange(10)[:, None])
    assert all(len(set(row)) == 6 for row in c)
    assert np.array_equal(c, forced_choice_candidates(caption_image, n_choices=6, seed=1))


def test_forced_choice_metrics_hand_example():
    s = np.array([[0.9, 0.1, 0.2], [0.3, 0.5, 0.1], [0.4, 0.4, 0.0]])  # a tie is not a win
    m = forced_choice_metrics(s)
    assert m["accuracy"] == pytest.approx(100 / 3)
    assert m["mean_positive"] == pytest.approx((0.9 + 0.3 + 0.4) / 3)
    assert m["mean_negative"] == pytest.approx((0.1 + 0.2 + 0.5 + 0.1 + 0.4 + 0.0) / 6)


def test_evaluate_forced_choice_perfect_method():
    n = 8
    data = Dataset("t", tiny_images(n), [[f"<{i}> a", f"<{i}> b", f"<{i}> c"] for i in range(n)],
                   {"test": np.arange(n)})
    m = evaluate_forced_choice(IdentityMethod(), data.view("test", "karpathy"), n_choices=6)
    assert m["accuracy"] == 100.0 and m["mean_negative"] == 0.0


# ------------------------------------------------------------------- vSTS
HEADER = "id\tsource\tsent1\timage1\tsent2\timage2\tsim\n"


def write_vsts(root, body):
    (root / "train-dev-test").mkdir(parents=True, exist_ok=True)
    (root / "visual_sts.v2.0.all.tsv").write_text(HEADER + body, encoding="utf-8")


def test_vsts_loader_keeps_quotes_and_matches_file_names(tmp_path):
    write_vsts(tmp_path, 'a\tSTS2015\tA "quoted\tim/x/a.jpg\tB\tim/x/b.jpg\t2.5\n'
                         'b\tcoco\tC\tim/c.jpg\tD\tim/a.jpg\t0\n')
    pairs = load_vsts(tmp_path)
    assert pairs.sent1[0] == 'A "quoted' and pairs.image1 == ("a.jpg", "c.jpg")
    np.testing.assert_allclose(pairs.sim, [2.5, 0.0])
    images = tmp_path / "imgs"
    images.mkdir()
    for name in ("a.jpg", "b.jpg"):
        (images / name).write_bytes(b"x")
    kept = pairs.with_images_in(images)
    assert kept.ids == ("a",)
    assert seen_images(pairs, {"a.jpg"}) == {"pairs": 2, "both_seen": 0, "one_seen": 2, "none_seen": 0}


@pytest.mark.parametrize("body, match", [
    ("a\tS\tA\ti.jpg\tB\tj.jpg\n", "expected 7"),
    ("a\tS\tA\ti.jpg\tB\tj.jpg\tx\n", "not a number"),
    ("a\tS\tA\ti.jpg\tB\tj.jpg\t7\n", "outside"),
])
def test_vsts_loader_errors_name_the_line(tmp_path, body, match):
    write_vsts(tmp_path, body)
    with pytest.raises(ValueError, match=f"all.tsv:2: .*{match}"):
        load_vsts(tmp_path)


def test_vsts_loader_missing_file_and_split(tmp_path):
    with pytest.raises(FileNotFoundError, match="vSTS file not found"):
        load_vsts(tmp_path)
    with pytest.raises(ValueError, match="unknown vSTS split"):
        load_vsts(tmp_path, "validation")


@pytest.mark.vsts
@pytest.mark.flickr8k
def test_vsts_real_data_has_455_flickr8k_pairs(vsts_root, flickr8k_root):
    assert len(load_vsts(vsts_root)) == 2677
    assert len(load_vsts(vsts_root).with_images_in(flickr8k_root / "images")) == 455


def test_cosine_correlations_and_siamese_features():
    rng = np.random.default_rng(0)
    tl, tr = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    il, ir = rng.normal(size=(30, 3)), rng.normal(size=(30, 3))
    sim = rng.uniform(0, 5, 30)
    r = cosine_similarity_correlations(sim, (tl, tr), (il, ir))
    cos = lambda a, b: np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)  # noqa: E731
    assert r["text"] == pytest.approx(np.corrcoef(cos(tl, tr), sim)[0, 1])
    assert r["image"] == pytest.approx(np.corrcoef(cos(il, ir), sim)[0, 1])
    # concatenated unit vectors: cosine is the mean of the two cosines
    assert r["concat"] == pytest.approx(np.corrcoef((cos(tl, tr) + cos(il, ir)) / 2, sim)[0, 1])
    F = siamese_features(np.array([[1.0, -2.0]]), np.array([[3.0, 1.0]]))
    np.testing.assert_allclose(F, [[3.0, -2.0, 2.0, 3.0]])


def test_siamese_regressor_learns_a_similarity():
    rng = np.random.default_rng(0)

    def make(n):
        left = rng.normal(size=(n, 5))
        right = left + rng.normal(scale=rng.uniform(0.1, 2, (n, 1)), size=(n, 5))
        return left, right, 5 * np.exp(-np.linalg.norm(left - right, axis=1) / 3)

    model, info = fit_siamese_regressor(make(300), make(100), hidden_sizes=(20,), seed=0)
    left, right, sim = make(100)
    assert pearson_r(model.predict(siamese_features(left, right)), sim) > 0.7
    assert info["hidden"] == 20
