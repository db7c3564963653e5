"""Bag-of-words cosine kernel (Hodosh et al. 2013, Section 3.4.1 "BoW")."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ..errors import ParameterError
from ._items import Items, check_pair, document_idf, idf_vector, normalise_gram, vocabulary_of

__all__ = ["bow_kernel", "document_idf", "WEIGHTINGS"]

#: Accepted values of ``bow_kernel``'s ``weighting``.
WEIGHTINGS = ("none", "idf", "sqrt_idf")


def _count_matrix(items: list, column: dict[str, int]) -> sp.csr_matrix:
    """Word counts of each item's merged captions, items x vocabulary."""
    rows, cols = [], []
    for i, item in enumerate(items):
        for sentence in item:
            rows.extend([i] * len(sentence))
            cols.extend(column[token] for token in sentence)
    data = np.ones(len(rows), dtype=np.float64)
    counts = sp.csr_matrix((data, (rows, cols)), shape=(len(items), len(column)))
    counts.sum_duplicates()
    return counts


def bow_kernel(
    items_a: Items,
    items_b: Items | None = None,
    *,
    weighting: str = "none",
    idf: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Cosine of (weighted) word-count vectors of items.

    Each item's sentences are merged into one document with count vector ``c``; with weights
    ``v_w`` (1, ``idf(w)`` or ``sqrt(idf(w))``),

    .. math:: K(A, B) = \\frac{\\sum_w v_w^2 c_{A,w} c_{B,w}}
                             {\\lVert v \\odot c_A \\rVert \\, \\lVert v \\odot c_B \\rVert}

    Parameters
    ----------
    items_a : sequence of items
        Each item a list of sentences, each a list of tokens.
    items_b : sequence of items, default=None
        None computes ``K(items_a, items_a)``.
    weighting : {"none", "idf", "sqrt_idf"}, default="none"
    idf : mapping of str to float, default=None
        Word idf values (:func:`document_idf` of the training items). Required for the idf
        weightings; words it does not know get its largest value.

    Returns
    -------
    ndarray of shape (len(items_a), len(items_b)), float64
        In [0, 1]. An item without words has kernel 0 with every other item (1 with itself on
        the diagonal of a symmetric Gram).

    See Also
    --------
    document_idf : idf values over training items.
    kcca_desc.kernels.text.trigram.trigram_kernel : subsequence kernel; its ``max_len=1`` is unnormalised BoW.

    References
    ----------
    .. [1] Hodosh, Young & Hockenmaier (2013), "Framing image description as a ranking task:
       data, models and evaluation metrics", JAIR 47, 853-899.
    """
    if weighting not in WEIGHTINGS:
        raise ParameterError(f"bow_kernel: weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if weighting != "none" and idf is None:
        raise ParameterError(f"bow_kernel: weighting={weighting!r} needs idf (see document_idf)")
    items_a, items_b, symmetric = check_pair(items_a, items_b)
    vocabulary = vocabulary_of(items_a, items_b)
    column = {word: j for j, word in enumerate(vocabulary)}
    counts_a = _count_matrix(items_a, column)
    counts_b = counts_a if symmetric else _count_matrix(items_b, column)
    if weighting != "none":
        weights = idf_vector(vocabulary, idf)
        if weighting == "sqrt_idf":
            weights = np.sqrt(weights)
        scaling = sp.diags(weights)
        counts_a = counts_a @ scaling
        counts_b = counts_a if symmetric else counts_b @ scaling
    cross = (counts_a @ counts_b.T).toarray()
    self_a = np.asarray(counts_a.multiply(counts_a).sum(axis=1)).ravel()
    self_b = self_a if symmetric else np.asarray(counts_b.multiply(counts_b).sum(axis=1)).ravel()
    return normalise_gram(cross, self_a, self_b, symmetric)
