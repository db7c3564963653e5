"""Named text kernels: registry, training views, fitting from training data only."""

import numpy as np
import pytest
from sklearn.base import clone

from kcca_desc.text.named_kernels import TEXT_KERNELS, make_text_kernel
from kcca_desc.kernels.text.bow import bow_kernel
from kcca_desc.kernels.text.trigram import trigram_kernel
from toys import tagged_items

EXPECTED = {"bow1", "bow5", "bow5_idf", "bow5_sqrtidf", "tagrank", "tri1", "tri5", "tri5_idf", "tri_sem"} | {
    f"tri5_{s}{suffix}" for s in ("lin", "dic", "dext", "dext_ic", "a", "a_dic", "a_dext", "a_dext_ic")
    for suffix in ("", "_idf")}

def test_registry_has_every_name_and_unknown_names_are_listed():
    assert set(TEXT_KERNELS) == EXPECTED
    assert TEXT_KERNELS["tri_sem"] == TEXT_KERNELS["tri5_a_dext_ic_idf"]
    with pytest.raises(ValueError, match="available: bow1, bow5"):
        make_text_kernel("tri7")


def test_single_caption_view_is_seeded():
    items, tags = tagged_items(20, 0)
    a = make_text_kernel("bow1", random_state=4).fit(items, tags)
    b = make_text_kernel("bow1", random_state=4).fit(items, tags)
    c = make_text_kernel("bow1", random_state=5).fit(items, tags)
    assert a.train_items_ == b.train_items_ != c.train_items_
    assert all(len(item) == 1 and item[0] in full for item, full in zip(a.train_items_, items))
    np.testing.assert_allclose(a.train_gram(), bow_kernel(a.train_items_))


@pytest.mark.parametrize("name", ["bow5", "bow5_idf", "bow5_sqrtidf", "tagrank", "tri1", "tri5", "tri5_idf",
                                  "tri5_a", "tri5_dic_idf", "tri5_a_dic_idf", "tri_sem"])
def test_kernels_fit_and_give_valid_grams(name):
    items, tags = tagged_items(30, 1)
    corpus = ["The dog runs on the grass.", "A boy rides a bike.", "The girl swims in the water."] * 5
    kernel = make_text_kernel(name, corpus=corpus).fit(items, tags)
    gram = kernel.train_gram()
    assert gram.shape == (30, 30) and np.all(np.isfinite(gram))
    np.testing.assert_allclose(gram, gram.T, atol=1e-12)
    if name == "tagrank":  # a mean over caption pairs, not normalised: self-similarity of 5 captions < 1
        assert np.all((np.diag(gram) > 0) & (np.diag(gram) <= 1))
    else:
        np.testing.assert_allclose(np.diag(gram), 1.0)
    queries = [[["dog", "swim"]], [["unseenword"]], [[]]]
    cross = kernel.cross_gram(queries)
    assert cross.shape == (3, 30) and np.all(np.isfinite(cross)) and cross.min() >= 0


def test_idf_and_similarity_come_from_training_items():
    items, tags = tagged_items(25, 2)
    kernel = make_text_kernel("tri5_idf").fit(items, tags)
    assert set(kernel.idf_) == {w for item in items for s in item for w in s}
    np.testing.assert_allclose(kernel.train_gram(), trigram_kernel(items, idf=kernel.idf_))


def test_alignment_kernels_need_tags():
    items, _ = tagged_items(5, 3)
    with pytest.raises(ValueError, match="train_items_tags"):
        make_text_kernel("tri5_a").fit(items)


def test_sklearn_conventions():
    kernel = make_text_kernel("tri5", lam=0.3)
    assert clone(kernel).get_params()["lam"] == 0.3
    assert not hasattr(kernel, "train_items_")


def test_soft_kernels_of_one_process_share_their_sources_and_tables_and_equal_unshared_fits(monkeypatch):
    from kcca_desc.text import named_kernels

    items, tags = tagged_items(30, 4)
    corpus = ["The dog runs on the grass.", "A boy rides a bike.", "The girl swims in the water."] * 5
    monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
    fits = {}
    for name in ("tri5_a", "tri5_a_idf", "tri5_dext_ic", "tri5_a_dext_ic"):
        # Not read from the disk cache, which another test may have filled with these tables.
        fits[name] = make_text_kernel(name, corpus=corpus, cache=False).fit(items, tags)
    # One table per kind: the idf variant reuses it; a combination reuses its components' fits.
    assert fits["tri5_a"].similarity_ is fits["tri5_a_idf"].similarity_
    alignment, combined = fits["tri5_a"].similarity_.similarity, fits["tri5_a_dext_ic"].similarity_.similarity
    assert combined.similarities[0] is alignment
    assert combined.similarities[1] is fits["tri5_dext_ic"].similarity_.similarity
    # A different training set is not served another's fit.
    other = make_text_kernel("tri5_a").fit(*tagged_items(30, 5))
    assert other.similarity_ is not fits["tri5_a"].similarity_
    queries = [[["dog", "swim"]], [["unseenword", "dog"]]]
    for name, kernel in fits.items():
        monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
        alone = make_text_kernel(name, corpus=corpus, cache=False).fit(items, tags)  # fitted anew
        assert alone.similarity_ is not kernel.similarity_
        np.testing.assert_array_equal(kernel.train_gram(), alone.train_gram())
        np.testing.assert_array_equal(kernel.cross_gram(queries), alone.cross_gram(queries))


def test_a_shared_external_similarity_follows_the_corpus_content(monkeypatch):
    # Keyed by the corpus's sentences, not by corpus=None: another default corpus is another fit.
    from kcca_desc.text import named_kernels

    items, tags = tagged_items(30, 6)
    monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
    first_corpus = ["The dog runs on the grass.", "A boy rides a bike."] * 5
    second_corpus = ["The girl swims in the water.", "A dog swims."] * 5
    monkeypatch.setattr(named_kernels, "default_external_corpus", lambda: list(first_corpus))
    first = make_text_kernel("tri5_dext").fit(items, tags)
    again = make_text_kernel("tri5_dext_idf").fit(items, tags)
    monkeypatch.setattr(named_kernels, "default_external_corpus", lambda: list(second_corpus))
    second = make_text_kernel("tri5_dext").fit(items, tags)
    assert again.similarity_ is first.similarity_ and second.similarity_ is not first.similarity_
    explicit = make_text_kernel("tri5_dext", corpus=second_corpus).fit(items, tags)
    np.testing.assert_array_equal(second.train_gram(), explicit.train_gram())


def test_fitted_similarities_are_read_back_from_disk_equal_to_fresh_fits_and_keyed_by_their_inputs(monkeypatch):
    from kcca_desc.text import named_kernels
    from kcca_desc.kernels.text.similarity import TabulatedSimilarity

    items, tags = tagged_items(30, 7)
    corpus = ["The dog runs on the grass.", "A boy rides a bike.", "The girl swims in the water."] * 5
    tabulated = []
    real_fit = TabulatedSimilarity.fit
    monkeypatch.setattr(TabulatedSimilarity, "fit", lambda self, words: tabulated.append(1) or real_fit(self, words))

    def fit(name="tri_sem", items=items, tags=tags, corpus=corpus, **params):
        monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())  # as in a new process
        before = len(tabulated)
        kernel = make_text_kernel(name, corpus=corpus, **params).fit(items, tags)
        return kernel, len(tabulated) > before

    fresh, fitted = fit(cache=False)
    assert fitted
    written, fitted = fit()
    assert fitted
    read, fitted = fit()
    assert not fitted and read.similarity_ is not written.similarity_
    queries = [[["dog", "swim"]], [["unseenword", "dog"]]]  # a word outside the table: its source answers
    for kernel in (written, read):
        np.testing.assert_array_equal(kernel.train_gram(), fresh.train_gram())
        np.testing.assert_array_equal(kernel.cross_gram(queries), fresh.cross_gram(queries))
    # Each input of the fit changes the key: none of these is served the entry above.
    other_tags = [[list(t) for t in item] for item in tags]
    other_tags[0][0][0] = "VB"
    other_items = [[list(c) for c in item] for item in items]
    other_items[3][1][2] = "bike"
    for changed in ({"items": other_items}, {"tags": other_tags}, {"corpus": corpus[:-1]}, {"name": "tri5_a_dext"}):
        assert fit(**changed)[1], changed
    monkeypatch.setattr(named_kernels, "SIMILARITY_CACHE_VERSION", named_kernels.SIMILARITY_CACHE_VERSION + 1)
    assert fit()[1]


def test_a_damaged_similarity_entry_is_reported_once_and_refitted(monkeypatch, tmp_path):
    from kcca_desc._core.cache import CacheWarning
    from kcca_desc.text import named_kernels

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    items, tags = tagged_items(30, 8)
    monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
    first = make_text_kernel("tri5_a_dic").fit(items, tags)
    (entry,) = (tmp_path / "word_similarity").glob("*.pkl")
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
    with pytest.warns(CacheWarning, match="discarded and recomputed"):
        again = make_text_kernel("tri5_a_dic").fit(items, tags)
    np.testing.assert_array_equal(again.train_gram(), first.train_gram())
    assert entry.read_bytes()[:16] == b"KCCA-DESC-SHA256"  # written again, whole
