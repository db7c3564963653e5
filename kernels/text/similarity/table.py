"""A word similarity tabulated once over a vocabulary, so that kernel blocks only gather from it."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

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
    the source would compute.

    Parameters
    ----------
    similarity : WordSimilarity
        A fitted similarity.
    block_rows : int, default=1024
        Vocabulary rows computed at a time (bounds the dense memory while tabulating).

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word to row (and column) of ``table_``.
    table_ : scipy.sparse.csr_matrix of float32, shape (n_words, n_words)
        The similarities; its explicit entries are the non-zero ones.
    """

    def __init__(self, similarity: WordSimilarity, block_rows: int = 1024):
        self.similarity = similarity
        self.block_rows = block_rows

    @property
    def name(self) -> str:
        return self._source().name

    def _source(self) -> WordSimilarity:
        if not isinstance(self.similarity, WordSimilarity):
            raise TypeError(f"TabulatedSimilarity: similarity must be a WordSimilarity, "
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
            raise ValueError(f"TabulatedSimilarity: block_rows must be a positive integer, got {self.block_rows!r}")
        words = check_words(vocabulary, "vocabulary")
        index = {}
        for i, word in enumerate(words):
            if index.setdefault(word, i) != i:
                raise ValueError(f"TabulatedSimilarity: vocabulary[{i}] repeats the word {word!r}")
        blocks = [sp.csr_matrix(source.pairwise(words[start:start + self.block_rows], words))
                  for start in range(0, len(words), self.block_rows)]
        one_order = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, 0), dtype=np.float32)
        del blocks
        # The mean of both orders, as WordSimilarity.pairwise(words) computes it (float32 sums),
        # halved in place (the table is the largest object of a COCO-sized text kernel); the
        # diagonal stays 1 (each block's pairwise set it).
        table = (one_order + one_order.T).tocsr()
        del one_order
        table.data *= np.float32(0.5)
        table.eliminate_zeros()
        table.sort_indices()
        self.vocabulary_ = index
        self.table_ = table  # float32 already: the source's pairwise returns float32
        return self

    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        check_is_fitted(self, ["vocabulary_", "table_"])
        rows_a, rows_b = vocabulary_rows(self.vocabulary_, words_a), vocabulary_rows(self.vocabulary_, words_b)
        known_a, known_b = rows_a >= 0, rows_b >= 0
        sim = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        if known_a.any() and known_b.any():
            # The table is symmetric: select the rows of the shorter list first, so that a block
            # against a few words (one landmark's column) copies few of the table's entries.
            ids_a, ids_b = rows_a[known_a], rows_b[known_b]
            if ids_a.size <= ids_b.size:
                sim[np.ix_(known_a, known_b)] = self.table_[ids_a][:, ids_b].toarray()
            else:
                sim[np.ix_(known_a, known_b)] = self.table_[ids_b][:, ids_a].toarray().T
        new_a, new_b = np.flatnonzero(~known_a), np.flatnonzero(~known_b)
        if new_a.size:
            sim[new_a] = self._source().pairwise([words_a[i] for i in new_a], words_b)
        if new_b.size:
            sim[:, new_b] = self._source().pairwise(words_a, [words_b[j] for j in new_b])
        return sim
