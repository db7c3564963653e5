"""The named text kernels of ``--text-kernel`` (Hodosh et al. 2013, Sections 3.4-3.5).

Every name is an entry of :data:`TEXT_KERNELS`, a :class:`TextKernelSpec` that says what the
kernel learns from the training items and how it computes a Gram matrix; every word similarity
of the soft trigram kernels is a factory in :data:`WORD_SIMILARITIES`.

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
    The paper's best text kernel (Tri5Sem): the same entry as ``tri5_a_dext_ic_idf``.

The external corpus of ``dext`` defaults to
:func:`kcca_desc.kernels.text.similarity.default_external_corpus` (Wikipedia lead paragraphs, about 0.8M
words), NOT the British National Corpus the paper used, which cannot be shipped; pass
``corpus=`` (raw sentences, e.g. :func:`kcca_desc.kernels.text.similarity.read_corpus_file`) to use another
(``docs/design.md``).

Adding a kernel
---------------
Register one object; :class:`TextKernel`, the systems and the command line pick it up::

    @dataclass(frozen=True)
    class WordOverlap(TextKernelSpec):
        family: ClassVar[str] = "overlap"
        single_caption: bool = False

        def gram(self, kernel, items_a, items_b=None):
            ...

    TEXT_KERNELS.register("overlap", WordOverlap(), help="shared words")
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy
import sklearn
from sklearn.base import BaseEstimator

from .._core.cache import PickleCache, cache_dir, cache_key
from .._core.errors import ParameterError
from ..kernels.text._items import check_items, document_idf, vocabulary_of
from ..kernels.text.bow import bow_kernel
from ..kernels.text.similarity import (
    AlignmentSimilarity,
    AverageSimilarity,
    DistributionalSimilarity,
    LinSimilarity,
    MaxSimilarity,
    TabulatedSimilarity,
    WordSimilarity,
    default_corpus_file,
    default_external_corpus,
)
from ..kernels.text.tagrank import TagRank, tagrank_kernel
from ..kernels.text.trigram import trigram_kernel
from .._core.progress import stage
from .._core.registry import Registry
from .._core.validation import HasMethods, POSITIVE_INT, POSITIVE_REAL, Registered, SEED, ValidatedParams, check_is_fitted
from .preprocess import Preprocessor

__all__ = ["TextKernel", "make_text_kernel", "TEXT_KERNELS", "WORD_SIMILARITIES", "TrainingText",
           "TextStatistics", "TextKernelSpec", "BagOfWords", "TagRankKernel", "Trigram", "max_of", "mean_of",
           "shared", "SHARED_SIMILARITIES", "tabulated_similarity", "SIMILARITY_CACHE_VERSION", "raw_corpus"]


def raw_corpus(corpus: Sequence[str] | None) -> list[str]:
    """The raw sentences of the external ``corpus``: the default corpus, read now, when None."""
    return default_external_corpus() if corpus is None else list(corpus)


@dataclass(frozen=True)
class TrainingText:
    """The training data a text kernel learns from.

    Attributes
    ----------
    kernel : str
        Name of the kernel being fitted (for error messages).
    items : list of items
        Every caption of every training item (an item is a list of token lists).
    tags : list of items or None
        Penn Treebank tags in the same nesting; None when not given.
    view : list of items
        The items the kernel compares against (one seeded caption each for single-caption kernels).
    sentences : list of token lists
        Every training sentence.
    random_state : int
        Seed of the kernel.
    corpus : sequence of str or None
        Raw external sentences (None: the default corpus).
    preprocessor : Preprocessor or None
        Applied to ``corpus`` (None: ``Preprocessor(cache=cache)``, as for captions).
    cache : bool
        Whether fitted word similarities (and the preprocessed corpus) may be read from and
        written to the on-disk cache.
    """

    kernel: str
    items: list
    tags: list | None
    view: list
    sentences: list
    random_state: int
    corpus: Sequence[str] | None = None
    preprocessor: Preprocessor | None = None
    cache: bool = True

    def require_tags(self, what: str) -> list:
        """The tags, or a ValueError naming the kernel and the ``what`` that needs them."""
        if self.tags is None:
            raise ParameterError(f"text kernel {self.kernel!r} needs train_items_tags (POS tags) for its {what}")
        return self.tags

    @functools.cached_property
    def fingerprint(self) -> str:
        """Digest of the training captions and tags, which the word similarities learn from."""
        return cache_key(items=self.items, tags=self.tags)

    @property
    def corpus_preprocessor(self):
        """The preprocessor of the external corpus: ``preprocessor``, or ``Preprocessor(cache=cache)``."""
        return Preprocessor(cache=self.cache) if self.preprocessor is None else self.preprocessor

    @functools.cached_property
    def corpus_fingerprint(self) -> str:
        """Digest of the raw external sentences (the default corpus read now) and their preprocessing.

        The preprocessing is keyed by the corpus preprocessor's ``cache_params`` (its settings and
        the versions of its libraries), the default one's included.  A preprocessor without
        ``cache_params`` cannot say what it computes, so it is keyed by what it computed: the
        preprocessed corpus (:attr:`external_sentences`, computed then even when the word
        similarities are in the cache).
        """
        preprocessor = self.corpus_preprocessor
        if hasattr(preprocessor, "cache_params"):
            preprocessing = preprocessor.cache_params()
        else:
            preprocessing = {"sentences": self.external_sentences}
        return cache_key(corpus=raw_corpus(self.corpus), preprocessor=preprocessing)

    @functools.cached_property
    def external_sentences(self) -> list[list[str]]:
        """The external corpus, preprocessed by :attr:`corpus_preprocessor` (empty sentences dropped)."""
        tokens, _ = self.corpus_preprocessor.process(raw_corpus(self.corpus))
        return [s for s in tokens if s]


# ---------------------------------------------------------------------------- word similarities
#: Name -> factory ``(TrainingText) -> fitted WordSimilarity`` of the soft trigram kernels.
WORD_SIMILARITIES: Registry[Callable[[TrainingText], WordSimilarity]] = Registry("word similarity")


#: Most fitted similarities (sources and tabulated tables) a process keeps for later kernels.
SHARED_SIMILARITIES = 24
_shared: OrderedDict = OrderedDict()


def _shared_fit(key: tuple, fit: Callable[[], WordSimilarity]) -> WordSimilarity:
    """``fit()``, or the similarity fitted under ``key`` earlier in this process.

    The tri5_* kernels of a table run fit the same few sources on the same training captions
    (``a`` alone, in ``a_dic``, ``a_dext`` and ``a_dext_ic``...) and tabulate each kind over
    the same vocabulary: one fit and one table per kind serve them all. A fitted similarity is
    not changed by its use, so sharing the object gives the same values as refitting it.
    """
    if key in _shared:
        _shared.move_to_end(key)
        return _shared[key]
    similarity = _shared[key] = fit()
    while len(_shared) > SHARED_SIMILARITIES:
        _shared.popitem(last=False)
    return similarity


def shared(factory: Callable[[TrainingText], WordSimilarity] | None = None, *, corpus: bool = False):
    """The ``factory``, fitting once per training set per process (see :func:`_shared_fit`).

    ``corpus=True``: the factory learns from the external corpus, whose content is then part of
    what must match (by content: a corpus swapped for another is not served the old fit).
    """
    def wrap(factory):
        @functools.wraps(factory)
        def fit(train: TrainingText) -> WordSimilarity:
            key = ("source", id(factory), train.fingerprint, train.corpus_fingerprint if corpus else "")
            return _shared_fit(key, lambda: factory(train))
        return fit
    return wrap if factory is None else wrap(factory)


def max_of(*sources: Callable[[TrainingText], WordSimilarity]) -> Callable[[TrainingText], WordSimilarity]:
    """A factory of the elementwise maximum of the ``sources``' similarities (fitted in order)."""
    def fit(train: TrainingText) -> WordSimilarity:
        parts = [source(train) for source in sources]
        # Keyed by the fitted parts themselves (kept alive by the entry, so their ids stay theirs).
        return _shared_fit(("max", *map(id, parts)), lambda: MaxSimilarity(parts))
    return fit


def mean_of(*sources: Callable[[TrainingText], WordSimilarity]) -> Callable[[TrainingText], WordSimilarity]:
    """A factory of the elementwise mean of the ``sources``' similarities (fitted in order)."""
    def fit(train: TrainingText) -> WordSimilarity:
        parts = [source(train) for source in sources]
        return _shared_fit(("mean", *map(id, parts)), lambda: AverageSimilarity(parts))
    return fit


@WORD_SIMILARITIES.register("lin", help="WordNet similarity of Lin (1998)")
@shared
def lin_similarity(train: TrainingText) -> WordSimilarity:
    return LinSimilarity(data_dir=cache_dir("nltk_data")).fit(train.sentences)


@WORD_SIMILARITIES.register("dic", help="distributional similarity on the training captions")
@shared
def captions_similarity(train: TrainingText) -> WordSimilarity:
    return DistributionalSimilarity().fit(train.sentences)


@WORD_SIMILARITIES.register("dext", help="distributional similarity on the external corpus")
@shared(corpus=True)
def external_similarity(train: TrainingText) -> WordSimilarity:
    return DistributionalSimilarity().fit(train.external_sentences)


external_and_captions_similarity = WORD_SIMILARITIES.register(
    "dext_ic", mean_of(external_similarity, captions_similarity), help="mean of the dext and dic similarities")


@WORD_SIMILARITIES.register("a", help="IBM Model 1 alignment of the captions of an image")
@shared
def alignment_similarity(train: TrainingText) -> WordSimilarity:
    return AlignmentSimilarity().fit(train.items, train.require_tags("alignment source"))


WORD_SIMILARITIES.register("a_dic", max_of(alignment_similarity, captions_similarity),
                           help="max of the a and dic similarities")
WORD_SIMILARITIES.register("a_dext", max_of(alignment_similarity, external_similarity),
                           help="max of the a and dext similarities")
WORD_SIMILARITIES.register("a_dext_ic", max_of(alignment_similarity, external_and_captions_similarity),
                           help="max of the a and dext_ic similarities")


#: Version of the fitted word similarities kept on disk, part of their key and of the key of the
#: text Grams of the soft trigram kernels: raised whenever a registered source or the tabulation
#: changes what it computes, so that no entry of an earlier version is read.
SIMILARITY_CACHE_VERSION = 1


def tabulated_similarity(source: str, train: TrainingText, *, reads_corpus: bool) -> TabulatedSimilarity:
    """The word similarity ``source`` of :data:`WORD_SIMILARITIES` fitted on ``train``, tabulated over its words.

    Tabulated once (Hodosh et al. 2013, Section 3.5.1): kernel blocks (landmark columns, chunks,
    test queries) then gather their words' similarities instead of recomputing them.  Fitting
    Tri5Sem's sources (IBM Model 1 alignment, distributional vectors of the captions and of the
    external corpus) and tabulating them takes seconds on Flickr8K, on every run; so the fitted
    table (with its sources, which answer for words outside the vocabulary) is kept in the on-disk
    cache (``word_similarity``: a checksummed pickle, written atomically under its lock), keyed by
    everything it depends on: the source's name and :data:`SIMILARITY_CACHE_VERSION`, the training
    captions and tags (:attr:`TrainingText.fingerprint`, whose words are the vocabulary), the
    external corpus and its preprocessing when the source reads it (``reads_corpus``), and the
    versions of the libraries whose objects are pickled.  ``train.cache`` False fits anew.  Within
    a process, the kernels sharing a table share the object (:func:`_shared_fit`).
    """
    corpus = train.corpus_fingerprint if reads_corpus else ""

    def fit() -> TabulatedSimilarity:
        vocabulary = vocabulary_of(train.items)
        fitted = WORD_SIMILARITIES[source](train)
        with stage(f"word similarity {source}, tabulated over {len(vocabulary)} words"):
            return TabulatedSimilarity(fitted).fit(vocabulary)

    def read_or_fit() -> TabulatedSimilarity:
        if not train.cache:
            return fit()
        return PickleCache("word_similarity").get_or_compute(
            fit, kind="tabulated_word_similarity", source=source, version=SIMILARITY_CACHE_VERSION,
            train=train.fingerprint, corpus=corpus, libraries={"scipy": scipy.__version__, "sklearn": sklearn.__version__})

    return _shared_fit(("table", source, train.fingerprint, corpus), read_or_fit)


# -------------------------------------------------------------------------------- text kernels
@dataclass(frozen=True)
class TextStatistics:
    """What a text kernel learnt from its training items (see :attr:`TextKernel.idf_` etc.)."""

    idf: dict[str, float] | None = None
    similarity: WordSimilarity | None = None
    tagrank: TagRank | None = None


class TextKernelSpec:
    """Base of the entries of :data:`TEXT_KERNELS`: what one named text kernel computes.

    Subclasses are frozen dataclasses whose fields, with the class variable ``family``, say
    what the kernel computes (:attr:`description`); they override :meth:`gram`, and
    :meth:`fit` when the kernel learns statistics from the training items.  Each sets the
    field ``single_caption``: compare against one seeded caption per training item rather
    than all of them.
    """

    family: ClassVar[str]
    single_caption: bool

    @property
    def description(self) -> dict:
        """A JSON-able description of what the kernel computes: the key of cached Grams.

        Aliases are one entry, so they share the description and the cached Grams.
        """
        return {"family": self.family, **dataclasses.asdict(self)}

    @property
    def reads_external_corpus(self) -> bool:
        """Whether the kernel learns from the external corpus (checked before any work)."""
        return False

    def fit(self, train: TrainingText) -> TextStatistics:
        """Statistics learnt from the training data (none by default)."""
        return TextStatistics()

    def gram(self, kernel: "TextKernel", items_a: Sequence, items_b: Sequence | None = None) -> np.ndarray:
        """Kernel matrix between items, given the fitted ``kernel`` (its statistics and parameters)."""
        raise NotImplementedError


@dataclass(frozen=True)
class BagOfWords(TextKernelSpec):
    """Cosine of (weighted) word counts, :func:`~kcca_desc.kernels.text.bow.bow_kernel`."""

    family: ClassVar[str] = "bow"
    single_caption: bool = False
    weighting: str = "none"

    def fit(self, train: TrainingText) -> TextStatistics:
        return TextStatistics(idf=None if self.weighting == "none" else document_idf(train.view))

    def gram(self, kernel, items_a, items_b=None):
        return bow_kernel(items_a, items_b, weighting=self.weighting, idf=kernel.idf_)


@dataclass(frozen=True)
class TagRankKernel(TextKernelSpec):
    """Word-position kernel of Hwang & Grauman, :func:`~kcca_desc.kernels.text.tagrank.tagrank_kernel`."""

    family: ClassVar[str] = "tagrank"
    single_caption: bool = False

    def fit(self, train: TrainingText) -> TextStatistics:
        return TextStatistics(tagrank=TagRank(random_state=train.random_state).fit(train.sentences))

    def gram(self, kernel, items_a, items_b=None):
        return tagrank_kernel(items_a, items_b, model=kernel.tagrank_)


@dataclass(frozen=True)
class Trigram(TextKernelSpec):
    """Subsequence kernel, exact or soft, :func:`~kcca_desc.kernels.text.trigram.trigram_kernel`.

    ``source`` names the word similarity in :data:`WORD_SIMILARITIES` (None: exact matches).
    """

    family: ClassVar[str] = "tri"
    single_caption: bool = False
    use_idf: bool = False
    source: str | None = None

    @property
    def reads_external_corpus(self) -> bool:
        # The sources named with dext (dext, dext_ic, a_dext, a_dext_ic) include external_similarity.
        return self.source is not None and "dext" in self.source.split("_")

    def fit(self, train: TrainingText) -> TextStatistics:
        similarity = None if self.source is None else tabulated_similarity(
            self.source, train, reads_corpus=self.reads_external_corpus)
        return TextStatistics(idf=document_idf(train.view) if self.use_idf else None, similarity=similarity)

    def gram(self, kernel, items_a, items_b=None):
        return trigram_kernel(items_a, items_b, lam=kernel.lam, max_len=kernel.max_len, idf=kernel.idf_,
                              similarity=kernel.similarity_, self_cache=kernel.self_similarities_)


#: Name -> :class:`TextKernelSpec` of every named text kernel.
TEXT_KERNELS: Registry[TextKernelSpec] = Registry("text kernel")
TEXT_KERNELS.register("bow1", BagOfWords(single_caption=True), help="bag of words of one seeded caption per image")
TEXT_KERNELS.register("bow5", BagOfWords(), help="bag of words of all captions of an image")
TEXT_KERNELS.register("bow5_idf", BagOfWords(weighting="idf"), help="idf-weighted bag of words")
TEXT_KERNELS.register("bow5_sqrtidf", BagOfWords(weighting="sqrt_idf"), help="sqrt(idf)-weighted bag of words")
TEXT_KERNELS.register("tagrank", TagRankKernel(), help="TagRank word-position kernel (Hwang & Grauman 2012)")
TEXT_KERNELS.register("tri1", Trigram(single_caption=True), help="subsequence kernel of one seeded caption per image")
TEXT_KERNELS.register("tri5", Trigram(), help="subsequence kernel of all captions")
TEXT_KERNELS.register("tri5_idf", Trigram(use_idf=True), help="idf-weighted subsequence kernel")
for _source in WORD_SIMILARITIES:
    TEXT_KERNELS.register(f"tri5_{_source}", Trigram(source=_source),
                          help=f"soft subsequence kernel, {WORD_SIMILARITIES.help(_source)}")
    TEXT_KERNELS.register(f"tri5_{_source}_idf", Trigram(use_idf=True, source=_source),
                          help=f"idf-weighted soft subsequence kernel, {WORD_SIMILARITIES.help(_source)}")
del _source
TEXT_KERNELS.register("tri_sem", TEXT_KERNELS["tri5_a_dext_ic_idf"],
                      help="Tri5Sem, the paper's best text kernel: tri5_a_dext_ic_idf")


class TextKernel(ValidatedParams, BaseEstimator):
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
        Applied to ``corpus`` (None: ``kcca_desc.text.preprocess.Preprocessor(cache=cache)``, as for
        captions).
    cache : bool, default=True
        Read the fitted word similarities of the soft trigram kernels from the on-disk cache, and
        write them there (see :func:`tabulated_similarity`); False also keeps the preprocessed
        external corpus off the disk.  The values are the same either way.

    Attributes
    ----------
    spec_ : TextKernelSpec
        The registered entry of ``name`` at fit time.
    train_items_ : list of items
        The training items the kernel compares against (one caption each for ``bow1``/``tri1``).
    idf_ : dict of str to float or None
    similarity_ : WordSimilarity or None
    tagrank_ : TagRank or None
    self_similarities_ : dict
        Unnormalised self-similarities of items seen by soft trigram kernels (see
        :func:`~kcca_desc.kernels.text.trigram.trigram_kernel`'s ``self_cache``).
    corpus_fingerprint_ : str or None
        :attr:`TrainingText.corpus_fingerprint` of the external corpus the kernel learnt from (the
        digest of its content, the default corpus as read at fit time, and of its preprocessing);
        None when the kernel reads no corpus.
    """

    def __init__(self, *, name: str = "tri5", lam: float = 0.5, max_len: int = 3, random_state: int = 0,
                 corpus: Sequence[str] | None = None, preprocessor=None, cache: bool = True):
        self.name = name
        self.lam = lam
        self.max_len = max_len
        self.random_state = random_state
        self.corpus = corpus
        self.preprocessor = preprocessor
        self.cache = cache

    _parameter_constraints = {
        "name": [Registered(TEXT_KERNELS, "text kernel")],
        "lam": [POSITIVE_REAL],
        "max_len": [POSITIVE_INT],
        "random_state": [SEED],
        "corpus": ["array-like", None],
        "preprocessor": [HasMethods(["process"]), None],
        "cache": ["boolean"],
    }

    def _validate_params(self) -> None:
        super()._validate_params()
        # The default corpus comes from an optional extra: a missing one is named before any work
        # (a ranker checks its stages before the image features), not after them.
        if self.corpus is None and TEXT_KERNELS[self.name].reads_external_corpus:
            default_corpus_file()

    def training_view(self, items: Sequence) -> list:
        """The items as training data: one seeded caption per item for ``bow1``/``tri1``."""
        items = check_items(items, "items")
        if not TEXT_KERNELS[self.name].single_caption:
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
        self._validate_params()
        spec = TEXT_KERNELS[self.name]
        full_items = check_items(train_items_tokens, "train_items_tokens")
        self.spec_ = spec
        self.train_items_ = self.training_view(full_items)
        train = TrainingText(
            kernel=self.name, items=full_items, tags=train_items_tags, view=self.train_items_,
            sentences=[s for item in full_items for s in item], random_state=self.random_state,
            corpus=self.corpus, preprocessor=self.preprocessor, cache=self.cache)
        statistics = spec.fit(train)
        # Already computed by the fit when the kernel reads the corpus (a cached property).
        self.corpus_fingerprint_ = train.corpus_fingerprint if spec.reads_external_corpus else None
        self.idf_ = statistics.idf
        self.similarity_ = statistics.similarity
        # Soft kernels' self-similarities of items seen (landmarks, a pivot sample), reused by
        # later blocks of the same items.
        self.self_similarities_ = {}
        self.tagrank_ = statistics.tagrank
        return self

    def gram(self, items_a: Sequence, items_b: Sequence | None = None) -> np.ndarray:
        """Kernel matrix between items (``items_b=None``: ``items_a`` against itself).

        Returns
        -------
        ndarray of shape (len(items_a), len(items_b)), float64
        """
        check_is_fitted(self, "train_items_")
        n_b = len(items_a) if items_b is None else len(items_b)
        with stage(f"text kernel {self.name} ({len(items_a)} x {n_b})"):
            return self.spec_.gram(self, items_a, items_b)

    def train_gram(self) -> np.ndarray:
        """Gram matrix of the training items (their training view)."""
        check_is_fitted(self, "train_items_")
        return self.gram(self.train_items_)

    def cross_gram(self, items: Sequence) -> np.ndarray:
        """Kernel between ``items`` (e.g. query captions) and the training items."""
        check_is_fitted(self, "train_items_")
        return self.gram(items, self.train_items_)


def make_text_kernel(name: str, **params) -> TextKernel:
    """A :class:`TextKernel` by name, the name checked at once.

    Parameters
    ----------
    name : str
        One of :data:`TEXT_KERNELS` (``"bow5"``, ``"tri5"``, ``"tri_sem"``...).
    **params
        The other parameters of :class:`TextKernel` (``lam``, ``max_len``, ``random_state``,
        ``corpus``, ``preprocessor``, ``cache``), checked by its ``fit``.

    Returns
    -------
    TextKernel
        Unfitted.

    Raises
    ------
    UnknownNameError
        If ``name`` is not registered, listing the available names (a ``ValueError`` and a
        ``KeyError``).

    Examples
    --------
    >>> make_text_kernel("tri_sem", lam=0.3)
    TextKernel(lam=0.3, name='tri_sem')
    """
    TEXT_KERNELS[name]  # an unknown name raises, listing the known ones
    settings = set(TextKernel._get_param_names()) - {"name"}
    if set(params) - settings:
        raise ParameterError(f"make_text_kernel({name!r}): unknown parameters {sorted(set(params) - settings)}; "
                             f"TextKernel takes {sorted(settings)}")
    return TextKernel(name=name, **params)
