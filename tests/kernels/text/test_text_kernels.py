"""Text kernels (BoW, trigram exact/soft, TagRank) against brute-force references."""

import itertools
import math
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kcca_desc.kernels.text._items import document_idf
from kcca_desc.kernels.text.bow import bow_kernel
from kcca_desc.kernels.text.tagrank import TagRank, tagrank_kernel
from kcca_desc.kernels.text import trigram
from kcca_desc.kernels.errors import ParameterError
from kcca_desc.kernels.text.trigram import _LANES, trigram_kernel

WORDS = ["a", "b", "c", "d", "e"]
sentences = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6)
items = st.lists(st.lists(sentences, min_size=1, max_size=3), min_size=1, max_size=4)


class MatrixSimilarity:
    """A word similarity read from a fixed matrix over WORDS + ["z"] (identity elsewhere)."""

    name = "matrix"

    def __init__(self, matrix):
        self.matrix = matrix
        self.words = WORDS + ["z"]

    def pairwise(self, words_a, words_b=None):
        words_b = words_a if words_b is None else words_b
        out = np.array([[self._sigma(x, y) for y in words_b] for x in words_a], dtype=np.float32)
        return out.reshape(len(words_a), len(words_b))

    def _sigma(self, x, y):
        if x in self.words and y in self.words:
            return self.matrix[self.words.index(x), self.words.index(y)]
        return float(x == y)


def random_similarity(seed):
    """A random positive-definite similarity with unit diagonal and entries in [0, 1].

    Positive definite (smallest eigenvalue at least 1/2), as a word similarity must be for the
    soft trigram kernel to be positive semi-definite: half the identity plus half the cosines of
    random non-negative vectors.
    """
    rng = np.random.default_rng(seed)
    vectors = rng.random((6, 6))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    m = 0.5 * np.eye(6) + 0.5 * vectors @ vectors.T
    return MatrixSimilarity(m.astype(np.float32).astype(np.float64))


def subsequence_counts(sentence, n):
    return Counter(tuple(sentence[i] for i in c) for c in itertools.combinations(range(len(sentence)), n))


def reference_sentence_kernel(s, t, lam, max_len, idf, sigma):
    unknown = max(idf.values()) if idf else 1.0
    weight = (lambda w: math.prod(idf.get(x, unknown) for x in w) ** (1 / len(w))) if idf else (lambda w: 1.0)
    total = 0.0
    for n in range(1, max_len + 1):
        for w, cw in subsequence_counts(s, n).items():
            for v, cv in subsequence_counts(t, n).items():
                match = math.prod(sigma(x, y) for x, y in zip(w, v))
                total += cw * cv * lam**n * match * math.sqrt(weight(w) * weight(v))
    return total


def reference_item_kernel(a, b, lam=0.5, max_len=3, idf=None, sigma=lambda x, y: float(x == y)):
    """Unnormalised S(A, B): the sentence kernel summed over all caption pairs."""
    return sum(reference_sentence_kernel(x, y, lam, max_len, idf, sigma) for x in a for y in b)


def reference_gram(items_a, items_b, lam=0.5, max_len=3, idf=None, sigma=lambda x, y: float(x == y)):
    def s(a, b):
        return reference_item_kernel(a, b, lam, max_len, idf, sigma)

    gram = np.zeros((len(items_a), len(items_b)))
    for i, a in enumerate(items_a):
        for j, b in enumerate(items_b):
            norm = math.sqrt(s(a, a) * s(b, b))
            gram[i, j] = s(a, b) / norm if norm > 0 else 0.0
    return gram


def assert_symmetric_gram(gram):
    assert np.all(np.isfinite(gram))
    np.testing.assert_allclose(gram, gram.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(gram), 1.0)
    assert np.linalg.eigvalsh(gram).min() > -1e-9


@settings(max_examples=30, deadline=None)
@given(items, items, st.booleans())
def test_exact_trigram_matches_enumeration(items_a, items_b, use_idf):
    idf = document_idf(items_b) if use_idf else None
    np.testing.assert_allclose(trigram_kernel(items_a, items_b, idf=idf), reference_gram(items_a, items_b, idf=idf),
                               atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(items, items, st.booleans(), st.integers(0, 1000))
def test_soft_trigram_matches_enumeration(items_a, items_b, use_idf, seed):
    similarity = random_similarity(seed)
    idf = document_idf(items_b) if use_idf else None
    expected = reference_gram(items_a, items_b, idf=idf, sigma=similarity._sigma)
    np.testing.assert_allclose(trigram_kernel(items_a, items_b, idf=idf, similarity=similarity), expected, atol=1e-9)


@pytest.mark.parametrize("max_len, use_idf", [(1, True), (2, True), (4, True), (5, True), (2, False), (4, False)])
def test_soft_trigram_other_lengths_match_enumeration(max_len, use_idf):
    rng = np.random.default_rng(max_len)

    def draw(n):
        return [[list(rng.choice(WORDS, rng.integers(0, 7))) for _ in range(rng.integers(1, 4))] for _ in range(n)]

    items_a, items_b = draw(5), draw(4)
    similarity = random_similarity(max_len)
    idf = document_idf(items_b) if use_idf else None
    expected = reference_gram(items_a, items_b, max_len=max_len, idf=idf, sigma=similarity._sigma)
    np.testing.assert_allclose(trigram_kernel(items_a, items_b, max_len=max_len, idf=idf, similarity=similarity),
                               expected, atol=1e-9)


def test_soft_trigram_with_more_sentences_of_one_length_than_lanes():
    # The DP runs up to _LANES column sentences of one length side by side: cover full and
    # partial lane blocks, the symmetric upper triangle (rows near both ends, and the mirrored
    # lower triangle) and the diagonal self-kernels of a cross Gram.
    rng = np.random.default_rng(7)
    n_items = 3 * _LANES
    items_all = [[list(rng.choice(WORDS, rng.integers(1, 4))) for _ in range(rng.integers(1, 4))]
                 for _ in range(n_items)]
    assert min(Counter(len(s) for item in items_all for s in item).values()) > _LANES
    similarity = random_similarity(3)
    idf = document_idf(items_all)

    def raw(a, b):
        return reference_item_kernel(a, b, idf=idf, sigma=similarity._sigma)

    self_values = np.array([raw(a, a) for a in items_all])
    rows = [0, 1, 5, n_items - 2, n_items - 1]
    expected = np.array([[raw(items_all[r], b) for b in items_all] for r in rows])
    expected /= np.sqrt(np.outer(self_values[rows], self_values))
    symmetric = trigram_kernel(items_all, idf=idf, similarity=similarity)
    np.testing.assert_allclose(symmetric[rows], expected, atol=1e-9)
    np.testing.assert_allclose(symmetric[:, rows], expected.T, atol=1e-9)
    cross = trigram_kernel([items_all[r] for r in rows], items_all, idf=idf, similarity=similarity)
    np.testing.assert_allclose(cross, expected, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(items, st.booleans())
def test_soft_with_identity_equals_exact_and_gram_properties(items_a, use_idf):
    idf = document_idf(items_a) if use_idf else None
    soft = trigram_kernel(items_a, idf=idf, similarity=MatrixSimilarity(np.eye(6)))
    exact = trigram_kernel(items_a, idf=idf)
    np.testing.assert_allclose(soft, exact, atol=1e-12)
    assert_symmetric_gram(exact)


@settings(max_examples=20, deadline=None)
@given(items, st.integers(0, 1000))
def test_soft_symmetric_gram_equals_cross_gram(items_a, seed):
    similarity = random_similarity(seed)
    symmetric = trigram_kernel(items_a, similarity=similarity)
    cross = trigram_kernel(items_a, items_a, similarity=similarity)
    off_diagonal = ~np.eye(len(items_a), dtype=bool)
    np.testing.assert_allclose(symmetric[off_diagonal], cross[off_diagonal], atol=1e-12)
    assert_symmetric_gram(symmetric)



@settings(max_examples=20, deadline=None)
@given(items, items, st.booleans(), st.integers(0, 1000))
def test_soft_cross_gram_after_a_training_gram_reads_its_diagonal_and_equals_the_unshared_one(
        items_a, items_b, use_idf, seed):
    # The training Gram fills the self cache from its diagonal; the query kernel against the
    # training items then computes the queries' self terms only, to the same values.
    similarity = random_similarity(seed)
    idf = document_idf(items_a) if use_idf else None
    cache = {}
    train = trigram_kernel(items_a, idf=idf, similarity=similarity, self_cache=cache)
    assert set(cache) == {tuple(map(tuple, item)) for item in items_a}
    shared = trigram_kernel(items_b, items_a, idf=idf, similarity=similarity, self_cache=cache)
    np.testing.assert_allclose(shared, trigram_kernel(items_b, items_a, idf=idf, similarity=similarity),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(train, trigram_kernel(items_a, idf=idf, similarity=similarity))


class ResidueSimilarity:
    """Words ``w<k>`` are similar (0.3) when their numbers agree modulo 7: per residue class
    0.7 I + 0.3 J, positive definite. Records the shape of every ``pairwise`` call."""

    name = "residue"

    def __init__(self):
        self.calls = []

    def pairwise(self, words_a, words_b=None):
        words_b = words_a if words_b is None else words_b
        self.calls.append((len(words_a), len(words_b)))
        ka = np.array([int(w[1:]) for w in words_a])[:, None]
        kb = np.array([int(w[1:]) for w in words_b])[None, :]
        return np.where(ka == kb, 1.0, np.where(ka % 7 == kb % 7, 0.3, 0.0)).astype(np.float32)


@pytest.mark.parametrize("use_idf", [False, True])
def test_soft_cross_gram_reads_the_two_sides_words_only_and_equals_the_joint_gram(use_idf, monkeypatch):
    # A block against a few landmark items must not gather similarities over the joint vocabulary
    # squared (at COCO's 25,000 words that was 19 of every 21 seconds of a block), and each block
    # of rows gathers its own words only (bounded memory for a block of thousands of rows).
    monkeypatch.setattr(trigram, "_CROSS_ROWS", 128)
    rng = np.random.default_rng(0)

    def item(low, high):
        return [[f"w{k}" for k in rng.integers(low, high, rng.integers(1, 8))] for _ in range(rng.integers(1, 4))]

    def n_words(side):
        return len({w for it in side for sentence in it for w in sentence})

    items_a = [item(0, 400) for _ in range(300)]  # row blocks of 128, 128, 44; self groups of 256, 44
    items_b = [item(350, 420) for _ in range(3)]
    idf = document_idf(items_a) if use_idf else None
    similarity = ResidueSimilarity()
    cross = trigram_kernel(items_a, items_b, idf=idf, similarity=similarity)
    joint = trigram_kernel(items_a + items_b, idf=idf, similarity=ResidueSimilarity())
    np.testing.assert_allclose(cross, joint[:300, 300:], rtol=1e-12, atol=1e-15)
    assert similarity.calls[:3] == [(n_words(items_a[s:s + 128]), n_words(items_b)) for s in (0, 128, 256)]
    # Then the self-similarities: items_a in groups of 256 and 44, items_b in one group.
    assert len(similarity.calls) == 3 + 3
    assert all(a == b <= n_words(items_a) for a, b in similarity.calls[3:])

    # With a self cache the second block against the same items computes only the cross part.
    cached, cache = ResidueSimilarity(), {}
    first = trigram_kernel(items_a[:200], items_b, idf=idf, similarity=cached, self_cache=cache)
    second = trigram_kernel(items_a, items_b, idf=idf, similarity=cached, self_cache=cache)
    np.testing.assert_array_equal(first, cross[:200])
    np.testing.assert_array_equal(second, cross)
    assert len(cache) == len({tuple(map(tuple, item)) for item in items_a + items_b})
    # First call: two row blocks, one self group per side; second: three row blocks, then the
    # 100 new items of items_a in one self group.
    assert len(cached.calls) == (2 + 1 + 1) + (3 + 1)


@settings(max_examples=30, deadline=None)
@given(items)
def test_trigram_length_one_is_unnormalised_bow(items_a):
    counts = [Counter(t for s in item for t in s) for item in items_a]
    inner = np.array([[sum(c[w] * d[w] for w in c) for d in counts] for c in counts], dtype=float)
    norms = np.sqrt(np.diag(inner))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    expected = inner * scale[:, None] * scale[None, :]
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_allclose(trigram_kernel(items_a, max_len=1), expected, atol=1e-12)
    np.testing.assert_allclose(bow_kernel(items_a), expected, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(items, items, st.sampled_from(["idf", "sqrt_idf"]))
def test_bow_weighted_cosine(items_a, items_b, weighting):
    idf = document_idf(items_b)
    unknown = max(idf.values()) if idf else 1.0
    power = 1.0 if weighting == "idf" else 0.5

    def vector(item):
        c = Counter(t for s in item for t in s)
        return {w: n * idf.get(w, unknown) ** power for w, n in c.items()}

    expected = np.zeros((len(items_a), len(items_b)))
    for i, a in enumerate(items_a):
        for j, b in enumerate(items_b):
            va, vb = vector(a), vector(b)
            na = math.sqrt(sum(x * x for x in va.values()))
            nb = math.sqrt(sum(x * x for x in vb.values()))
            expected[i, j] = sum(va[w] * vb.get(w, 0) for w in va) / (na * nb) if na * nb > 0 else 0.0
    np.testing.assert_allclose(bow_kernel(items_a, items_b, weighting=weighting, idf=idf), expected, atol=1e-12)


def test_document_idf_formula():
    idf = document_idf([[["a", "b"], ["a"]], [["a", "c"]], [["d"]], [["b"]]])
    assert idf == pytest.approx({"a": math.log(2), "b": math.log(2), "c": math.log(4), "d": math.log(4)})


def test_empty_and_unknown_give_defined_values():
    train = [[["dog", "run"], ["dog"]], [["cat", "sit"]]]
    queries = [[[]], [["zebra"]], [["dog", "zebra"]]]
    idf = document_idf(train)
    for gram in (trigram_kernel(queries, train, idf=idf), bow_kernel(queries, train, weighting="idf", idf=idf),
                 trigram_kernel(queries, train, similarity=MatrixSimilarity(np.eye(6)), idf=idf)):
        assert np.all(np.isfinite(gram))
        np.testing.assert_array_equal(gram[:2], 0.0)
        assert gram[2, 0] > 0
    empty_gram = trigram_kernel([[[]], [["a"]]])
    np.testing.assert_array_equal(empty_gram, np.eye(2))


def test_parameter_errors_name_the_parameter():
    with pytest.raises(ValueError, match="max_len"):
        trigram_kernel([[["a"]]], max_len=0)
    with pytest.raises(ValueError, match="lam"):
        trigram_kernel([[["a"]]], lam=float("nan"))
    with pytest.raises(ValueError, match="weighting"):
        bow_kernel([[["a"]]], weighting="tfidf")
    with pytest.raises(ValueError, match="needs idf"):
        bow_kernel([[["a"]]], weighting="idf")
    with pytest.raises(TypeError, match=r"items_a\[0\]\[0\]"):
        trigram_kernel([["a b"]])
    with pytest.raises(TypeError, match=r"items_b\[1\]\[0\]\[0\]"):
        bow_kernel([[["a"]]], [[["a"]], [[3]]])
    with pytest.raises(TypeError, match=r"items_a\[0\]\[1\]\[2\] must be a non-empty str, got ''"):
        trigram_kernel([[["a"], ("b", "c", "", "d")]])
    with pytest.raises(TypeError, match=r"items_a\[1\]\[0\]\[1\] must be a non-empty str, got b'c'"):
        trigram_kernel([[["a"]], [["b", b"c"]]])


def test_soft_rejects_bad_similarity_values():
    bad = MatrixSimilarity(np.full((6, 6), 2.0))
    with pytest.raises(ValueError, match="outside"):
        trigram_kernel([[["a", "b"]]], similarity=bad)


def tagrank_reference(model, train, s, t):
    def vectors(sentence):
        positions = {}
        for i, w in enumerate(sentence, 1):
            positions.setdefault(w, []).append(i)
        absolute, relative = {}, {}
        for w, ps in positions.items():
            p = np.mean(ps)
            absolute[w] = 1 / math.log2(1 + p)
            occurrences = [i for u in train for i, x in enumerate(u, 1) if x == w]
            relative[w] = 1 - sum(i <= p for i in occurrences) / len(occurrences) if occurrences else 0.0
        return absolute, relative

    def chi2(x, y):
        keys = set(x) | set(y)
        return sum((x.get(k, 0) - y.get(k, 0)) ** 2 / (x.get(k, 0) + y.get(k, 0))
                   for k in keys if x.get(k, 0) + y.get(k, 0) > 0)

    (a, r), (a2, r2) = vectors(s), vectors(t)
    return 0.5 * (math.exp(-chi2(r, r2) / model.beta_) + math.exp(-chi2(a, a2) / model.alpha_))


@settings(max_examples=15, deadline=None)
@given(st.lists(sentences, min_size=3, max_size=12).filter(lambda s: len({tuple(x) for x in s}) > 1), items, items)
def test_tagrank_matches_reference(train, items_a, items_b):
    try:
        model = TagRank(n_pairs=50).fit(train)
    except ValueError:  # the sampled pairs all have equal rank vectors: covered below
        assume(False)
    items_b = [[s + ["z"] for s in item] for item in items_b]  # a word unseen in training
    expected = np.array([[np.mean([tagrank_reference(model, train, s, t) for s in a for t in b]) for b in items_b]
                         for a in items_a])
    np.testing.assert_allclose(tagrank_kernel(items_a, items_b, model=model), expected, atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.lists(sentences, min_size=3, max_size=12).filter(lambda s: len({tuple(x) for x in s}) > 1),
       st.lists(st.lists(sentences, min_size=1, max_size=3), min_size=1, max_size=7))
def test_tagrank_gram_matches_reference(train, items_a):
    # The Gram of items against themselves runs the mirrored upper triangle, rows paired from both ends.
    try:
        model = TagRank(n_pairs=50).fit(train)
    except ValueError:
        assume(False)
    expected = np.array([[np.mean([tagrank_reference(model, train, s, t) for s in a for t in b]) for b in items_a]
                         for a in items_a])
    np.testing.assert_allclose(tagrank_kernel(items_a, model=model), expected, atol=1e-12)


def test_tagrank_bandwidths_are_mean_chi2_and_seeded():
    train = [["dog", "run", "park"], ["man", "dog"], ["park", "man", "run", "dog"], ["cat"]]
    first = TagRank(n_pairs=200, random_state=3).fit(train)
    second = TagRank(n_pairs=200, random_state=3).fit(train)
    assert (first.alpha_, first.beta_) == (second.alpha_, second.beta_)
    assert first.alpha_ > 0 and first.beta_ > 0
    gram = tagrank_kernel([[s] for s in train], model=first)
    np.testing.assert_allclose(np.diag(gram), 1.0)
    np.testing.assert_allclose(gram, gram.T)


def test_tagrank_degenerate_training_data_is_a_clear_error():
    with pytest.raises(ValueError, match="bandwidths"):
        TagRank().fit([["dog"], ["dog"]])
    with pytest.raises(ValueError, match="no sentences"):
        tagrank_kernel([[]], model=TagRank().fit([["dog"], ["cat", "dog"]]))


def rank_vectors_reference(model, sentences):
    """Rank vectors of :class:`TagRank`, one word at a time: ids sorted per sentence, a, r, offsets."""
    unknown, ids, absolute, relative, ptr = {}, [], [], [], [0]
    for sentence in sentences:
        positions = {}
        for position, token in enumerate(sentence, start=1):
            v = model.vocabulary_.get(token)
            if v is None:
                v = unknown.setdefault(token, len(model.vocabulary_) + len(unknown))
            positions.setdefault(v, []).append(position)
        for v in sorted(positions):
            p = float(np.mean(positions[v]))
            ids.append(v)
            absolute.append(1.0 / np.log2(1.0 + p))
            shares = model.cumulative_share_[v] if v < len(model.vocabulary_) else None
            relative.append(0.0 if shares is None else 1.0 - shares[min(int(p), shares.size) - 1])
        ptr.append(len(ids))
    return ids, absolute, relative, ptr


@settings(max_examples=30, deadline=None)
@given(st.lists(sentences, min_size=3, max_size=12).filter(lambda s: len({tuple(x) for x in s}) > 1),
       st.lists(st.lists(st.sampled_from(WORDS + ["y", "z"]), max_size=8), max_size=6))
def test_tagrank_rank_vectors_equal_the_word_by_word_reference(train, query_sentences):
    try:
        model = TagRank(n_pairs=50).fit(train)
    except ValueError:  # the sampled pairs all have equal rank vectors
        assume(False)
    for got, expected in zip(model._rank_vectors(query_sentences), rank_vectors_reference(model, query_sentences)):
        np.testing.assert_array_equal(got, np.asarray(expected, dtype=got.dtype))


@pytest.mark.parametrize("similarity", [lambda a, b: 1.0, "glove", 0.5])
def test_a_similarity_that_is_no_word_similarity_is_named(similarity):
    with pytest.raises(ParameterError, match=r"^trigram_kernel: similarity must be None or a WordSimilarity \(an object "
                                             r"with pairwise\(words_a, words_b\)\), got "):
        trigram_kernel([[["man", "ride", "horse"]], [["dog"]]], similarity=similarity)


def test_a_very_long_sentence_warns_naming_it_and_its_length():
    long = [f"w{i}" for i in range(151)]
    with pytest.warns(UserWarning, match=r"^trigram_kernel: items_b\[0\]\[1\] \(\"w0 w1 w2 w3 w4 w5 \.\.\.\"\) has 151 "
                                         r"tokens; the trigram kernel's cost grows steeply"):
        K = trigram_kernel([[["w1", "w2"]]], [[["a"], long]])
    assert np.isfinite(K).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trigram_kernel([[long[:150]], [["w1"]]])  # at the threshold: no warning
