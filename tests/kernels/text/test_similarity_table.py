"""TabulatedSimilarity: a source's similarities over a vocabulary, computed once and gathered."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from kcca_desc.kernels.text.similarity import (
    AlignmentSimilarity,
    DistributionalSimilarity,
    MaxSimilarity,
    TabulatedSimilarity,
)

WORDS = list("abcdefgh")
sentences_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2, max_size=12)


@settings(max_examples=30, deadline=None)
@given(sentences_st, st.floats(0.0, 0.5), st.integers(1, 5), st.data())
def test_table_equals_its_source(sentences, threshold, block_rows, data):
    source = DistributionalSimilarity(min_count=1, threshold=threshold).fit(sentences)
    vocabulary = sorted({w for s in sentences for w in s})
    table = TabulatedSimilarity(source, block_rows=block_rows).fit(vocabulary)
    # The square matrix over the vocabulary: exactly the source's symmetric one.
    square = source.pairwise(vocabulary)
    np.testing.assert_array_equal(table.pairwise(vocabulary), square)
    # Stored: the non-zero entries of the strict upper triangle, nothing else.
    assert table.upper_.dtype == np.float32 and table.upper_.nnz == np.count_nonzero(np.triu(square, 1))
    np.testing.assert_array_equal(table.upper_.toarray(), np.triu(square, 1))
    # Any two word lists, with words outside the vocabulary and repeats: the source's values
    # (one order of its products against the mean of both: equal to float32 rounding).
    pool = vocabulary + ["<new>", "zz"]
    words_a = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))
    words_b = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))
    np.testing.assert_allclose(table.pairwise(words_a, words_b), source.pairwise(words_a, words_b), atol=1e-6)
    np.testing.assert_allclose(table.pairwise(words_a), source.pairwise(words_a), atol=1e-6)
    assert table.name == source.name


def test_table_of_a_combination_and_new_words():
    sentences = [["a", "b"], ["a", "b", "c"], ["c"], ["c", "d"], ["a", "d"]]
    items = [[["a", "c"], ["b", "c"]], [["d"], ["a"]]]
    tags = [[["NN", "NN"], ["NN", "NN"]], [["NN"], ["NN"]]]
    source = MaxSimilarity([DistributionalSimilarity(min_count=1).fit(sentences),
                            AlignmentSimilarity(min_noun_count=1, min_verb_count=1).fit(items, tags)])
    table = TabulatedSimilarity(source).fit(["a", "b", "c"])  # "d" is known to the source, not the table
    words = ["d", "a", "zzz", "c", "d"]
    np.testing.assert_allclose(table.pairwise(words), source.pairwise(words), atol=1e-6)
    np.testing.assert_allclose(table.pairwise(["b", "d"], words), source.pairwise(["b", "d"], words), atol=1e-6)
    assert table.pairwise(["zzz"], ["zzz", "a"]).tolist() == [[1.0, 0.0]]


def test_conventions_and_bad_input():
    source = DistributionalSimilarity(min_count=1).fit([["a", "b"], ["b", "c"]])
    table = TabulatedSimilarity(source, block_rows=2)
    assert not hasattr(table, "upper_") and clone(table).get_params()["block_rows"] == 2
    assert table.fit(["a", "b"]) is table
    with pytest.raises(ValueError, match=r"vocabulary\[2\] repeats the word 'a'"):
        TabulatedSimilarity(source).fit(["a", "b", "a"])
    with pytest.raises(ValueError, match="block_rows must be a positive integer"):
        TabulatedSimilarity(source, block_rows=0).fit(["a"])
    with pytest.raises(TypeError, match="similarity must be a WordSimilarity"):
        TabulatedSimilarity("distributional").fit(["a"])
    with pytest.raises(TypeError, match=r"vocabulary\[1\] must be a str"):
        TabulatedSimilarity(source).fit(["a", 3])
