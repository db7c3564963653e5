"""The nearest-neighbour baseline: idf-weighted F1 against an explicit reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.methods.nn import idf_f1_similarity

WORDS = st.sampled_from(["dog", "cat", "runs", "red", "ball", "grass"])


def f1_reference(query, document, idf):
    q, d = set(query), set(document)
    w = (lambda v: idf.get(v, max(idf.values()))) if idf else (lambda v: 1.0)
    overlap = sum(w(v) for v in q & d)
    if overlap == 0:
        return 0.0
    precision = overlap / sum(w(v) for v in q)
    recall = overlap / sum(w(v) for v in d)
    return 2 * precision * recall / (precision + recall)


@settings(max_examples=60, deadline=None)
@given(
    queries=st.lists(st.lists(WORDS, max_size=5), min_size=1, max_size=4),
    documents=st.lists(st.lists(WORDS, max_size=8), min_size=1, max_size=4),
    use_idf=st.booleans(),
)
def test_idf_f1_matches_reference(queries, documents, use_idf):
    idf = {"dog": 0.5, "cat": 1.5, "runs": 0.1, "red": 2.0} if use_idf else None  # ball, grass unseen
    got = idf_f1_similarity(queries, documents, idf=idf)
    want = np.array([[f1_reference(q, d, idf) for d in documents] for q in queries])
    assert got.shape == want.shape
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_identical_sets_give_one_and_disjoint_zero():
    got = idf_f1_similarity([["a", "b"], ["c"]], [["b", "a", "a"]], idf={"a": 1.0, "b": 2.0, "c": 3.0})
    np.testing.assert_allclose(got, [[1.0], [0.0]])


def test_empty_query_is_zero_not_nan():
    got = idf_f1_similarity([[]], [[], ["a"]])
    np.testing.assert_array_equal(got, [[0.0, 0.0]])
