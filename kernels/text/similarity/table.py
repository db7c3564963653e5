"""A word similarity tabulated once over a vocabulary, so that kernel blocks only gather from it."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ...errors import DataError, ParameterError
from ..._validation import check_is_fitted
from .base import WordSimilarity, check_words, vocabulary_rows

__all__ = ["TabulatedSimilarity"]


class TabulatedSimilarity(WordSimilarity):
    """The values of another word similarity over a vocabulary, computed once and stored sparse.

    Hodosh et al. (2013, Section 3.5.1) precompute their word-kernel matrices over the
    vocabulary and zero their tiny entries, which keeps them sparse.  A soft trigram kernel
    computed in blocks (a training set too large for one Gram, against landmark items) asks for
    the similarities between the words of every block; a source such as the distributional
    similarity recomputes each of them from sparse products of nearly dense co-occurrence
    vectors, by far the largest cost of a block at MS-COCO's vocabulary.  This wrapper computes
    ``similarity.pairwise(vocabulary)`` once, in row blocks, as a sparse matrix, and answers
    ``pairwise`` by gathering rows and columns of it; words outside the vocabulary (those of
    new captions) are passed to ``similarity``.

    Values equal ``similarity.pairwise(vocabulary)``: symmetric, 1 on equal words.  Between two
    vocabulary words they are the mean of both orders of the source's products (which can differ
    in the last bit), as in a symmetric Gram, rather than the one order a non-symmetric call of
    the source would compute.  Only the strict upper triangle is stored: the matrix is symmetric
    with a unit diagonal, and at the COCO-sized benchmark's 25,045 word types the alignment
    similarity leaves 44% of the square non-zero (278 million entries, 2.2 GB stored whole),
    a copy of which every process holding the fitted kernel keeps.

    Parameters
    ----------
    similarity : WordSimilarity
        A fitted similarity.
    block_rows : int, default=1024
        Vocabulary rows computed at a time (bounds the dense memory while tabulating).

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word to row (and column) of ``upper_``.
    upper_ : scipy.sparse.csr_matrix of float32, shape (n_words, n_words)
        The similarities between words ``i < j`` at ``(i, j)``; its explicit entries are the
        non-zero ones.
    """

    def __init__(self, similarity: WordSimilarity, *, block_rows: int = 1024):
        self.similarity = similarity
        self.block_rows = block_rows

    @property
    def name(self) -> str:
        return self._source().name

    def _source(self) -> WordSimilarity:
        if not isinstance(self.similarity, WordSimilarity):
            raise ParameterError(f"TabulatedSimilarity: similarity must be a WordSimilarity, "
                            f"got {type(self.similarity).__name__}")
        return self.similarity

    def fit(self, vocabulary: Sequence[str]) -> "TabulatedSimilarity":
        """Tabulate the similarity between every two words of ``vocabulary``.

        Parameters
        ----------
        vocabulary : sequence of str
            Distinct words (e.g. those of the training captions).

        Returns
        -------
        self : TabulatedSimilarity
        """
        source = self._source()
        if not (isinstance(self.block_rows, (int, np.integer)) and self.block_rows >= 1):
            raise ParameterError(f"TabulatedSimilarity: block_rows must be a positive integer, got {self.block_rows!r}")
        words = check_words(vocabulary, "vocabulary")
        index = {}
        for i, word in enumerate(words):
            if index.setdefault(word, i) != i:
                raise DataError(f"TabulatedSimilarity: vocabulary[{i}] repeats the word {word!r}")
        n = len(words)
        columns, values, row_counts = [], [], [np.zeros(1, dtype=np.int64)]
        for start in range(0, n, self.block_rows):
            stop = min(start + self.block_rows, n)
            # Rows start..stop-1 right of the diagonal, as the mean of both orders of the source's
            # products (float32 sums, as WordSimilarity.pairwise(words) computes it).
            block = source.pairwise(words[start:stop], words[start:])
            block += source.pairwise(words[start:], words[start:stop]).T
            block *= np.float32(0.5)
            part = sp.csr_matrix(np.triu(block, 1))
            columns.append(part.indices.astype(np.int32) + np.int32(start))
            values.append(part.data)
            row_counts.append(np.diff(part.indptr))
        indptr = np.cumsum(np.concatenate(row_counts))
        # One array at a time: the parts and the whole of one array coexist, never of both.
        data = np.concatenate(values) if values else np.zeros(0, dtype=np.float32)
        del values
        indices = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int32)
        del columns
        self.vocabulary_ = index
        self.upper_ = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        return self

    def _gather(self, ids_a: np.ndarray, ids_b: np.ndarray) -> np.ndarray:
        """Dense similarities between vocabulary rows ``ids_a`` and ``ids_b``, 0 between equal words.

        ``sigma(a, b)`` is stored at ``(a, b)`` when ``a < b`` and at ``(b, a)`` otherwise: the
        upper part comes from the rows of ``ids_a``, the lower from those of ``ids_b``.
        """
        sim = self.upper_[ids_a][:, ids_b].toarray()
        sim += self.upper_[ids_b][:, ids_a].toarray().T
        return sim

    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        check_is_fitted(self, ["vocabulary_", "upper_"])
        rows_a, rows_b = vocabulary_rows(self.vocabulary_, words_a), vocabulary_rows(self.vocabulary_, words_b)
        known_a, known_b = rows_a >= 0, rows_b >= 0
        if known_a.all() and known_b.all():
            # Training words only (every block of the factor pass): no second dense matrix.
            return self._gather(rows_a, rows_b)
        sim = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        if known_a.any() and known_b.any():
            sim[np.ix_(known_a, known_b)] = self._gather(rows_a[known_a], rows_b[known_b])
        new_a, new_b = np.flatnonzero(~known_a), np.flatnonzero(~known_b)
        if new_a.size:
            sim[new_a] = self._source().pairwise([words_a[i] for i in new_a], words_b)
        if new_b.size:
            sim[:, new_b] = self._source().pairwise(words_a, [words_b[j] for j in new_b])
        return sim
