"""The Zipfian pseudo-word vocabulary of the synthetic captions."""

import numpy as np
import pytest

from kcca_desc.data import make_synthetic
from kcca_desc.data.synthetic_vocabulary import ZipfVocabulary, pseudo_word


def test_pseudo_words_are_distinct_and_pronounceable():
    words = [pseudo_word(i) for i in range(30_000)]
    assert len(set(words)) == len(words)
    assert all(w.isalpha() and w.islower() and len(w) >= 4 for w in words[:100])
    with pytest.raises(ValueError):
        pseudo_word(-1)


def test_frequencies_follow_zipf():
    vocabulary = ZipfVocabulary(1000, exponent=1.0)
    ranks = np.searchsorted(vocabulary._cdf, np.random.default_rng(0).random(200_000))
    counts = np.bincount(ranks, minlength=1000)
    # p(r) ~ 1/r: rank 1 about twice rank 2 and ten times rank 10
    assert counts[0] / counts[1] == pytest.approx(2.0, rel=0.1)
    assert counts[0] / counts[9] == pytest.approx(10.0, rel=0.15)


def test_synthetic_captions_with_a_large_vocabulary():
    plain = make_synthetic(n_images=300, seed=4, image_size=16)
    rich = make_synthetic(n_images=300, seed=4, image_size=16, vocabulary=25_000)
    # same images and the same scene words: the pseudo-words come from their own stream
    assert all(np.array_equal(plain.images.load(i), rich.images.load(i)) for i in range(300))
    for a, b in zip(plain.captions[0], rich.captions[0]):
        assert b.startswith(a.removesuffix(" ."))
    types = {w for caps in rich.captions for c in caps for w in c.split()}
    plain_types = {w for caps in plain.captions for c in caps for w in c.split()}
    assert len(types) > len(plain_types) + 1000
    assert rich.metadata["vocabulary"] == 25_000
    with pytest.raises(ValueError, match="vocabulary must be a positive integer"):
        make_synthetic(n_images=5, vocabulary=0)
