"""Word-similarity protocol and the cosine-of-word-vectors base shared by the sources.

A word similarity σ(w, w') ∈ [0, 1] plays the role of the lexical kernel inside
the soft trigram kernels of Hodosh, Young & Hockenmaier (2013): it is 1 for
equal words, 0 between two different words that the source knows nothing
about (identity), and otherwise comes from the source (Bloehdorn et al. 2006).
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...errors import DataError, ParameterError
from ..._validation import check_is_fitted

__all__ = ["WordSimilarity", "VectorSimilarity", "check_words", "check_sentences"]

_BLOCK_ROWS = 2048


def check_words(words: Sequence[str], name: str) -> list[str]:
    """Validate a sequence of words (strings) and return it as a list."""
    if isinstance(words, str):
        raise ParameterError(f"{name} must be a sequence of words, not a single string {words!r}")
    words = list(words)
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise ParameterError(f"{name}[{i}] must be a str, got {type(w).__name__} {w!r}")
        if not w:
            raise DataError(f"{name}[{i}] is an empty string, not a word")
    return words


def check_sentences(sentences: Sequence[Sequence[str]], name: str = "sentences") -> list[list[str]]:
    """Validate a corpus of tokenised sentences (each a list of str)."""
    if isinstance(sentences, str):
        raise ParameterError(f"{name} must be a sequence of tokenised sentences, not a string")
    checked = [check_words(s, f"{name}[{i}]") for i, s in enumerate(sentences)]
    if not any(checked):
        raise DataError(f"{name} contains no tokens")
    return checked


def _equal_word_positions(words_a: list[str], words_b: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices (i, j) with ``words_a[i] == words_b[j]``.

    Computed as the sparse product of one-hot word-identity matrices, so the
    cost is proportional to the number of matches, not to len(a) * len(b).
    """
    index: dict[str, int] = {}
    ids_a = np.fromiter((index.setdefault(w, len(index)) for w in words_a), np.int64, len(words_a))
    ids_b = np.fromiter((index.setdefault(w, len(index)) for w in words_b), np.int64, len(words_b))
    one_hot_a = sp.csr_matrix((np.ones(len(ids_a)), (np.arange(len(ids_a)), ids_a)), shape=(len(ids_a), len(index)))
    one_hot_b = sp.csr_matrix((np.ones(len(ids_b)), (np.arange(len(ids_b)), ids_b)), shape=(len(ids_b), len(index)))
    matches = (one_hot_a @ one_hot_b.T).tocoo()
    return matches.row, matches.col


def vocabulary_rows(vocabulary: dict[str, int], words: list[str]) -> np.ndarray:
    """Row of each word in a fitted ``vocabulary`` (word -> row), -1 for words outside it."""
    return np.fromiter((vocabulary.get(w, -1) for w in words), np.int64, len(words))


class WordSimilarity(BaseEstimator, metaclass=ABCMeta):
    """A word similarity σ(w, w') in [0, 1] with σ(w, w) = 1.

    Subclasses implement :meth:`_similarity`; :meth:`pairwise` adds input
    validation, the identity on equal words, symmetry and the float32 output
    that the trigram kernels consume.
    """

    name: str = "word"

    @abstractmethod
    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        """Dense float32 (len(a), len(b)) similarities in [0, 1], before the identity."""

    def pairwise(self, words_a: Sequence[str], words_b: Sequence[str] | None = None) -> np.ndarray:
        """Similarity matrix between two word lists.

        Parameters
        ----------
        words_a : sequence of str
        words_b : sequence of str, optional
            Defaults to ``words_a``; the result is then exactly symmetric.

        Returns
        -------
        ndarray of float32, shape (len(words_a), len(words_b))
            σ(words_a[i], words_b[j]) in [0, 1]; exactly 1 where the words are
            equal and 0 between different words outside the source's vocabulary.
        """
        a = check_words(words_a, "words_a")
        b = a if words_b is None else check_words(words_b, "words_b")
        sim = np.asarray(self._similarity(a, b), dtype=np.float32)
        if words_b is None:
            # Sparse products need not sum (i, j) and (j, i) in the same order.
            np.add(sim, sim.T, out=sim)
            sim *= 0.5
        rows, cols = _equal_word_positions(a, b)
        sim[rows, cols] = 1.0
        return sim


class VectorSimilarity(WordSimilarity):
    """σ(w, w') = cos(ŵ, ŵ'), the cosine of word vectors learned by ``fit``.

    Fitted subclasses set ``vocabulary_`` (word -> row) and ``vectors_``
    (sparse, one L2-normalised non-negative row per vocabulary word; an
    all-zero row for a word without any evidence).  Cosines below
    ``threshold`` are set to 0: Hodosh et al. (2013, Section 3.5.1) zero the tiny
    entries of the alignment and distributional word-kernel matrices because
    "most of these similarities are very close to zero" yet make the kernel
    dense.  Subclasses take that cut-off as their ``threshold`` parameter.
    """

    def _check_threshold(self) -> None:
        if not (isinstance(self.threshold, (int, float, np.floating)) and 0.0 <= self.threshold <= 1.0):
            raise ParameterError(f"{type(self).__name__}: threshold must be a number in [0, 1], got {self.threshold!r}")

    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        check_is_fitted(self, ["vocabulary_", "vectors_"])
        self._check_threshold()
        rows_a, rows_b = vocabulary_rows(self.vocabulary_, words_a), vocabulary_rows(self.vocabulary_, words_b)
        known_a, known_b = np.flatnonzero(rows_a >= 0), np.flatnonzero(rows_b >= 0)
        sim = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        if known_a.size == 0 or known_b.size == 0:
            return sim
        vectors_b_t = self.vectors_[rows_b[known_b]].T.tocsc()
        all_b_known = known_b.size == len(words_b)
        # Row blocks bound the memory of the sparse products, which are nearly dense for large vocabularies.
        for start in range(0, known_a.size, _BLOCK_ROWS):
            block = known_a[start : start + _BLOCK_ROWS]
            cosines = (self.vectors_[rows_a[block]] @ vectors_b_t).toarray().astype(np.float32, copy=False)
            np.minimum(cosines, 1.0, out=cosines)  # unit non-negative vectors: only rounding exceeds 1
            cosines[cosines < self.threshold] = 0.0
            if all_b_known:
                sim[block] = cosines
            else:
                sim[np.ix_(block, known_b)] = cosines
        return sim
