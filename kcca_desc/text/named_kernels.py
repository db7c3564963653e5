"""The named text kernels of ``--text-kernel`` (Hodosh et al. 2013, §4.2 and Table 3).

Names
-----
``bow1``, ``bow5``, ``bow5_idf``, ``bow5_sqrtidf``
    Bag of words; ``1``: one fixed, seeded caption per training image, ``5``: all captions merged.
``tagrank``
    Hwang & Grauman's word-position kernel.
``tri1``, ``tri5``, ``tri5_idf``
    Exact subsequence kernel (sequences of up to 3 words).
``tri5_<source>`` and ``tri5_<source>_idf``, source one of ``lin``, ``dic``, ``dext``, ``dext_ic``,
``a``, ``a_dic``, ``a_dext``, ``a_dext_ic``
    Soft subsequence kernel with word similarity: ``lin`` WordNet/Lin, ``dic`` distributional on
    the training captions, ``dext`` distributional on the external corpus, ``dext_ic`` the mean of
    the two, ``a`` IBM Model 1 alignment, ``a_<d>`` the elementwise max of alignment and ``<d>``.
``tri_sem``
    The paper's best text kernel (Tri5Sem): ``tri5_a_dext_ic_idf``.

The external corpus of ``dext`` defaults to
:func:`kcca_desc.kernels.text.similarity.default_external_corpus` (Wikipedia lead paragraphs, about 0.8M
words), NOT the British National Corpus the paper used, which cannot be shipped; pass
``corpus=`` (raw sentences, e.g. :func:`kcca_desc.kernels.text.similarity.read_corpus_file`) to use another.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..cache import cache_dir
from ..kernels.text._items import check_items, document_idf
from ..kernels.text.bow import bow_kernel
from ..kernels.text.similarity import (
    AlignmentSimilarity,
    AverageSimilarity,
    DistributionalSimilarity,
    LinSimilarity,
    MaxSimilarity,
    WordSimilarity,
    default_external_corpus,
)
from ..kernels.text.tagrank import TagRank, tagrank_kernel
from ..kernels.text.trigram import trigram_kernel

__all__ = ["TextKernel", "make_text_kernel", "TEXT_KERNELS"]

_SOURCES = ("lin", "dic", "dext", "dext_ic", "a", "a_dic", "a_dext", "a_dext_ic")


def _registry() -> dict[str, dict]:
    kernels = {
        "bow1": dict(family="bow", single_caption=True, weighting="none"),
        "bow5": dict(family="bow", single_caption=False, weighting="none"),
        "bow5_idf": dict(family="bow", single_caption=False, weighting="idf"),
        "bow5_sqrtidf": dict(family="bow", single_caption=False, weighting="sqrt_idf"),
        "tagrank": dict(family="tagrank", single_caption=False),
        "tri1": dict(family="tri", single_caption=True, use_idf=False, source=None),
        "tri5": dict(family="tri", single_caption=False, use_idf=False, source=None),
        "tri5_idf": dict(family="tri", single_caption=False, use_idf=True, source=None),
    }
    for source in _SOURCES:
        for use_idf in (False, True):
            name = f"tri5_{source}" + ("_idf" if use_idf else "")
            kernels[name] = dict(family="tri", single_caption=False, use_idf=use_idf, source=source)
    kernels["tri_sem"] = dict(kernels["tri5_a_dext_ic_idf"])
    return kernels


#: Name -> configuration of every named text kernel.
TEXT_KERNELS: dict[str, dict] = _registry()


class TextKernel(BaseEstimator):
    """A named text kernel fitted on training items (see the module docstring for the names).

    Parameters
    ----------
    name : str
        One of :data:`TEXT_KERNELS`.
    lam : float, default=0.5
        Trigram weight per matched word.
    max_len : int, default=3
        Longest word sequence of the trigram kernels.
    random_state : int, default=0
        Seed of the caption kept per training image by ``bow1``/``tri1`` and of TagRank's
        bandwidth sample.
    corpus : list of str, default=None
        Raw external sentences for ``dext`` (None: the default corpus, which is not the BNC).
    preprocessor : Preprocessor, default=None
        Applied to ``corpus`` (None: ``kcca_desc.text.preprocess.Preprocessor()``, as for captions).

    Attributes
    ----------
    train_items_ : list of items
        The training items the kernel compares against (one caption each for ``bow1``/``tri1``).
    idf_ : dict of str to float or None
    similarity_ : WordSimilarity or None
    tagrank_ : TagRank or None
    """

    def __init__(self, name: str = "tri5", lam: float = 0.5, max_len: int = 3, random_state: int = 0,
                 corpus: Sequence[str] | None = None, preprocessor=None):
        self.name = name
        self.lam = lam
        self.max_len = max_len
        self.random_state = random_state
        self.corpus = corpus
        self.preprocessor = preprocessor

    def _config(self) -> dict:
        if self.name not in TEXT_KERNELS:
            raise ValueError(f"unknown text kernel {self.name!r}; available: {', '.join(TEXT_KERNELS)}")
        return TEXT_KERNELS[self.name]

    def training_view(self, items: Sequence) -> list:
        """The items as training data: one seeded caption per item for ``bow1``/``tri1``."""
        items = check_items(items, "items")
        if not self._config()["single_caption"]:
            return items
        rng = np.random.default_rng(self.random_state)
        choice = [int(rng.integers(len(item))) if item else 0 for item in items]
        return [[item[c]] if item else [] for item, c in zip(items, choice)]

    def fit(self, train_items_tokens: Sequence, train_items_tags: Sequence | None = None) -> "TextKernel":
        """Learn idf, word similarities and TagRank statistics from training items only.

        Parameters
        ----------
        train_items_tokens : list of items (lists of token lists)
        train_items_tags : same nesting, Penn Treebank tags
            Needed by the alignment sources (names containing ``_a``).

        Returns
        -------
        self : TextKernel
        """
        config = self._config()
        full_items = check_items(train_items_tokens, "train_items_tokens")
        self.train_items_ = self.training_view(full_items)
        sentences = [s for item in full_items for s in item]
        self.idf_ = None
        self.similarity_ = None
        self.tagrank_ = None
        if config["family"] == "tagrank":
            self.tagrank_ = TagRank(random_state=self.random_state).fit(sentences)
        if config.get("weighting", "none") != "none" or config.get("use_idf"):
            self.idf_ = document_idf(self.train_items_)
        if config.get("source"):
            self.similarity_ = self._fit_similarity(config["source"], full_items, train_items_tags, sentences)
        return self

    def _fit_similarity(self, source: str, items, tags, sentences) -> WordSimilarity:
        parts = source.split("_")
        alignment = None
        if parts[0] == "a":
            if tags is None:
                raise ValueError(f"text kernel {self.name!r} needs train_items_tags (POS tags) for its alignment source")
            alignment = AlignmentSimilarity().fit(items, tags)
            parts = parts[1:]
        lexical = "_".join(parts)
        if not lexical:
            return alignment
        if lexical == "lin":
            other = LinSimilarity(data_dir=cache_dir("nltk_data")).fit(sentences)
        elif lexical == "dic":
            other = DistributionalSimilarity().fit(sentences)
        elif lexical == "dext":
            other = DistributionalSimilarity().fit(self._external_sentences())
        else:  # dext_ic
            other = AverageSimilarity([DistributionalSimilarity().fit(self._external_sentences()),
                                       DistributionalSimilarity().fit(sentences)])
        return other if alignment is None else MaxSimilarity([alignment, other])

    def _external_sentences(self) -> list[list[str]]:
        from .preprocess import Preprocessor

        raw = default_external_corpus() if self.corpus is None else list(self.corpus)
        preprocessor = Preprocessor() if self.preprocessor is None else self.preprocessor
        tokens, _ = preprocessor.process(raw)
        return [s for s in tokens if s]

    def gram(self, items_a: Sequence, items_b: Sequence | None = None) -> np.ndarray:
        """Kernel matrix between items (``items_b=None``: ``items_a`` against itself).

        Returns
        -------
        ndarray of shape (len(items_a), len(items_b)), float64
        """
        check_is_fitted(self, "train_items_")
        config = self._config()
        if config["family"] == "bow":
            return bow_kernel(items_a, items_b, weighting=config["weighting"], idf=self.idf_)
        if config["family"] == "tagrank":
            return tagrank_kernel(items_a, items_b, model=self.tagrank_)
        return trigram_kernel(items_a, items_b, lam=self.lam, max_len=self.max_len, idf=self.idf_,
                              similarity=self.similarity_)

    def train_gram(self) -> np.ndarray:
        """Gram matrix of the training items (their training view)."""
        check_is_fitted(self, "train_items_")
        return self.gram(self.train_items_)

    def cross_gram(self, items: Sequence) -> np.ndarray:
        """Kernel between ``items`` (e.g. query captions) and the training items."""
        check_is_fitted(self, "train_items_")
        return self.gram(items, self.train_items_)


def make_text_kernel(name: str, **params) -> TextKernel:
    """A :class:`TextKernel` by name; unknown names raise ValueError listing the available ones."""
    if name not in TEXT_KERNELS:
        raise ValueError(f"unknown text kernel {name!r}; available: {', '.join(TEXT_KERNELS)}")
    return TextKernel(name=name, **params)
