"""Judgment-based metrics against hand-computed cases (and the real Flickr8K files when present)."""

import numpy as np
import pytest

from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages
from kcca_desc.evaluate.judgments import (
    crowd_metrics,
    crowd_relevance,
    first_caption_metrics,
    rouge1_recall,
    simple_tokenize,
    unigram_bleu,
)
from kcca_desc.evaluate.scores import DirectionalScores

IDS = ["a.jpg", "b.jpg", "c.jpg"]


def toy_view(protocol="hodosh"):
    images = ArrayImages(np.zeros((3, 2, 2, 3), dtype=np.uint8), ids=IDS)
    captions = [[f"{i} zero", f"{i} one", f"{name} caption two"] for i, name in enumerate(["dog", "cat", "bird"])]
    return Dataset("toy", images, captions, {"test": np.arange(3)}).view("test", protocol)


# Pool captions are the #2 captions a.jpg#2, b.jpg#2, c.jpg#2 (columns 0, 1, 2).
CROWD = {
    ("a.jpg", "b.jpg#2"): (1.0, 3, 0),                  # relevant
    ("a.jpg", "c.jpg#2"): (0.666666666666667, 2, 1),    # relevant (2/3)
    ("b.jpg", "b.jpg#2"): (0.0, 0, 3),                  # original pair: relevant anyway
    ("b.jpg", "a.jpg#2"): (0.333333333333333, 1, 2),    # not relevant
    ("x.jpg", "a.jpg#2"): (1.0, 3, 0),                  # outside the pool: ignored
}

SCORES = np.array([
    [0.1, 0.9, 0.5],   # image a: relevant {0, 1, 2}
    [0.8, 0.2, 0.2],   # image b: relevant {1}
    [0.3, 0.3, 0.3],   # image c: relevant {2}
])


def test_crowd_relevance_threshold_and_original_pairs():
    rel = crowd_relevance(toy_view(), CROWD)
    assert rel.tolist() == [[True, True, True], [False, True, False], [False, False, True]]


def test_crowd_metrics_hand_computed():
    out = crowd_metrics(SCORES, toy_view(), CROWD, ks=(1, 2))
    ann, search = out["annotation"], out["search"]
    # Annotation ranks of the best relevant: a 1; b: 0.8 above and a tied 0.2 -> 3;
    # c: constant row -> 3 (pessimistic).
    assert ann["success_ranks"].tolist() == [1, 3, 3]
    assert ann["S@1"] == pytest.approx(100 / 3) and ann["S@2"] == pytest.approx(100 / 3)
    # R-precision: a: R=3, top 3 all relevant -> 1; b: R=1, top-1 is col 0 -> 0;
    # c: R=1, ties put non-relevant first -> 0.
    assert ann["r_precision"].tolist() == [1.0, 0.0, 0.0]
    assert ann["R-precision"] == pytest.approx(100 / 3)
    # Search: caption 0 relevant {a}: column (.1, .8, .3) -> rank 3; caption 1 relevant {a, b}:
    # (.9, .2, .3) -> 1; caption 2 relevant {a, c}: (.5, .2, .3) -> 1.
    assert search["success_ranks"].tolist() == [3, 1, 1]
    # R-precision: caption 0: R=1, top is b -> 0; caption 1: R=2, top 2 = a, c -> 1/2;
    # caption 2: R=2, top 2 = a, c -> 1.
    assert search["r_precision"].tolist() == [0.0, 0.5, 1.0]
    assert search["mean_relevant"] == pytest.approx(5 / 3)


def test_crowd_metrics_use_the_direction_of_directional_scores():
    search_only = SCORES.copy()
    search_only[:, 0] = [0.9, 0.0, 0.0]        # caption 0 now finds image a first
    out = crowd_metrics(DirectionalScores(SCORES, search_only), toy_view(), CROWD)
    assert out["search"]["success_ranks"][0] == 1
    assert out["annotation"]["success_ranks"].tolist() == [1, 3, 3]


def test_crowd_metrics_errors():
    with pytest.raises(ValueError, match="hodosh"):
        crowd_metrics(np.zeros((3, 9)), toy_view("karpathy"), CROWD)
    with pytest.raises(ValueError, match="no judged pair"):
        crowd_metrics(SCORES, toy_view(), {("x.jpg", "y.jpg#2"): (1.0, 3, 0)})
    with pytest.raises(ValueError, match="shape"):
        crowd_metrics(np.zeros((3, 2)), toy_view(), CROWD)
    with pytest.raises(ValueError, match="NaN"):
        crowd_metrics(np.full((3, 3), np.nan), toy_view(), CROWD)


EXPERT = {
    ("a.jpg", "b.jpg#2"): (4, 4, 3),     # 11/3
    ("b.jpg", "a.jpg#2"): (2, 2, 2),     # 2
}


def test_first_caption_expert_metrics():
    out = first_caption_metrics(SCORES, toy_view(), expert=EXPERT)
    assert out["top_caption"].tolist() == [1, 0, 0]            # c: constant row -> lowest column
    assert out["n_unscored"] == 1                               # (c.jpg, a.jpg#2) unjudged
    assert out["mean_expert_score"] == pytest.approx((11 / 3 + 2) / 2)
    shares = out["expert_at_least"]
    assert shares["4"] == 0.0 and shares["3.66"] == 50.0 and shares["3.33"] == 50.0
    assert shares["2"] == 100.0
    assert out["expert_scored"].tolist() == [True, True, False]
    with pytest.raises(ValueError, match="no top caption"):
        first_caption_metrics(SCORES, toy_view(), expert={("c.jpg", "c.jpg#2"): (4, 4, 4)})


def test_unigram_bleu_and_rouge_hand_computed():
    cand = ["the", "the", "the", "cat"]
    refs = [["the", "cat", "sat"], ["the", "the", "dog"]]
    # Clipped: the -> min(3, max(1, 2)) = 2, cat -> 1: 3/4.
    assert unigram_bleu(cand, refs) == pytest.approx(3 / 4)
    # ROUGE-1 recall: ref 1 matches the, cat (2 of 3); ref 2 matches the, the (2 of 3): 4/6.
    assert rouge1_recall(cand, refs) == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="no token"):
        unigram_bleu([], refs)
    with pytest.raises(ValueError, match="no reference"):
        rouge1_recall(cand, [])
    with pytest.raises(TypeError, match="list of token strings"):
        unigram_bleu("the cat", refs)


def test_first_caption_text_overlap_metrics():
    view = toy_view()
    refs = [[["dog", "runs"]], [["a", "cat"], ["cat"]], [["bird"]]]
    out = first_caption_metrics(SCORES, view, references=refs)
    # Tops: a -> "cat caption two", b -> "dog caption two", c -> "dog caption two".
    assert simple_tokenize(view.captions[1]) == ["cat", "caption", "two"]
    assert out["bleu1_per_query"].tolist() == pytest.approx([0.0, 0.0, 0.0])
    flipped = SCORES.copy()
    flipped[1] = [0.0, 1.0, 0.0]                 # b now picks its own caption
    out = first_caption_metrics(flipped, view, references=refs)
    assert out["bleu1_per_query"][1] == pytest.approx(1 / 3)
    assert out["rouge1_per_query"][1] == pytest.approx(2 / 3)
    assert out["bleu1"] == pytest.approx(100 / 9)
    with pytest.raises(ValueError, match="references for 2 images"):
        first_caption_metrics(SCORES, view, references=refs[:2])
    with pytest.raises(ValueError, match="image 'a.jpg'.*no reference"):
        first_caption_metrics(SCORES, view, references=[[], *refs[1:]])


@pytest.mark.flickr8k
@pytest.mark.filterwarnings("ignore:.*spurious entry")
def test_real_flickr8k_judgments_on_the_test_pool(flickr8k_root):
    from kcca_desc.data.flickr8k import load_flickr8k
    from kcca_desc.data.judgments import load_flickr8k_judgments

    view = load_flickr8k(flickr8k_root).view("test", "hodosh")
    judgments = load_flickr8k_judgments(flickr8k_root)
    rel = crowd_relevance(view, judgments.crowdflower)
    assert rel.shape == (1000, 1000) and rel.diagonal().all()
    # Perfect scores: the gold caption first, so S@1 = 100.
    perfect = crowd_metrics(np.eye(1000), view, judgments.crowdflower)
    assert perfect["annotation"]["S@1"] == 100.0 and perfect["search"]["S@1"] == 100.0
    rng = np.random.default_rng(0)
    random = crowd_metrics(rng.random((1000, 1000)), view, judgments.crowdflower)
    assert random["annotation"]["S@10"] < 20.0
    first = first_caption_metrics(np.eye(1000), view, expert=judgments.expert)
    assert first["n_unscored"] + int(first["expert_scored"].sum()) == 1000
