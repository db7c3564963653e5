"""Distributional word similarity: cosine of positive-PMI co-occurrence vectors."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from ...errors import DataError, ParameterError
from .base import VectorSimilarity, check_sentences

__all__ = ["DistributionalSimilarity"]


class DistributionalSimilarity(VectorSimilarity):
    r"""Cosine of positive pointwise-mutual-information vectors (Hodosh et al. 2013, Section 3.5.3).

    Each vocabulary word w gets the vector

    .. math::

        \hat w_D(i) = \max\left(0, \log \frac{p_c(w, w_i)}{p_c(w)\, p_c(w_i)}\right),

    where :math:`p_c(w)` is the fraction of sentences of the corpus c that
    contain w and :math:`p_c(w, w_i)` the fraction that contain both, and
    :math:`\sigma_D(w, w') = \cos(\hat w_D, \hat w'_D)`.  The vocabulary (both
    target words and context dimensions) is the words occurring at least
    ``min_count`` times.  As in the formula, a word is also its own context:
    :math:`\hat w_D(w) = -\log p_c(w)`, so two words that always occur
    together have identical vectors (σ = 1).

    Fitted on the training captions this is :math:`D_{ic}`; fitted on an
    external corpus (see :func:`default_external_corpus`) it is
    :math:`D_{ext}` (the paper's :math:`D_{BNC}`).

    Parameters
    ----------
    threshold : float, default=0.05
        Cosines strictly below this value become 0 (Hodosh et al. zero the tiny
        entries of this word kernel; their cut-off is not legible in our copy of
        the paper; on the Flickr8K training vocabulary 0.05 keeps 23% (D_ic) and 11% (D_ext)
        of the off-diagonal entries).
    min_count : int, default=5
        Minimum number of occurrences of a word in the corpus.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word to row of ``vectors_``.
    vectors_ : scipy.sparse.csr_matrix, shape (n_words, n_words)
        L2-normalised positive-PMI vectors.
    n_sentences_ : int
        Number of sentences the probabilities were estimated on.

    See Also
    --------
    AlignmentSimilarity, LinSimilarity, AverageSimilarity

    References
    ----------
    .. [1] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    .. [2] Church, K. W. and Hanks, P. (1990). Word association norms, mutual
       information, and lexicography. Computational Linguistics 16(1).
    """

    name = "distributional"

    def __init__(self, *, threshold: float = 0.05, min_count: int = 5):
        self.threshold = threshold
        self.min_count = min_count

    def fit(self, sentences: Sequence[Sequence[str]]) -> "DistributionalSimilarity":
        """Estimate the PMI vectors on tokenised ``sentences`` (list of list of str); returns self."""
        self._check_threshold()
        if not isinstance(self.min_count, (int, np.integer)) or self.min_count < 1:
            raise ParameterError(f"DistributionalSimilarity: min_count must be an int >= 1, got {self.min_count!r}")
        sentences = check_sentences(sentences)
        counts = Counter(w for s in sentences for w in s)
        words = sorted(w for w, c in counts.items() if c >= self.min_count)
        if not words:
            raise DataError(f"DistributionalSimilarity: no word occurs min_count={self.min_count} times")
        vocabulary = {w: i for i, w in enumerate(words)}

        # Binary sentence-by-word incidence; X'X counts the sentences shared by two words.
        rows, cols = [], []
        for i, s in enumerate(sentences):
            ids = {vocabulary[w] for w in s if w in vocabulary}
            rows.extend([i] * len(ids))
            cols.extend(ids)
        incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(sentences), len(words)))
        cooccurrence = (incidence.T @ incidence).tocoo()
        sentence_freq = np.asarray(incidence.sum(axis=0)).ravel()

        r, c = cooccurrence.row, cooccurrence.col
        pmi = np.log(cooccurrence.data * len(sentences) / (sentence_freq[r] * sentence_freq[c]))
        positive = pmi > 0
        vectors = sp.csr_matrix((pmi[positive], (r[positive], c[positive])), shape=(len(words), len(words)))

        self.vocabulary_ = vocabulary
        self.vectors_ = normalize(vectors, norm="l2", axis=1)
        self.n_sentences_ = len(sentences)
        return self
