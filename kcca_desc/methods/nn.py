"""Nearest-neighbour baselines of Hodosh, Young & Hockenmaier (2013, Section 3.1).

Annotation: find the training image closest to the query image under the
image kernel and rank the candidate captions by their text similarity to that
training item's captions.  Search: find the training item whose captions are
closest to the query caption and rank the candidate images by image-kernel
similarity to that item's image.

The paper's main baseline, *NN5 idf F1*, merges each training image's five
captions into one document and measures text similarity by the F1 of
idf-weighted bag-of-words precision and recall (:func:`idf_f1_similarity`);
its appendix variants use the BoW5 or trigram kernels instead (any named text
kernel of :mod:`kcca_desc.text.named_kernels`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from sklearn.base import BaseEstimator

from .._core.errors import DataError
from ..kernels.text import document_idf

from ..data.dataset import Dataset, require_dataset
from ..data.images import ImageSource
from ..image.kernel import IMAGE_KERNELS, ImageKernel
from ..text.named_kernels import TEXT_KERNELS, make_text_kernel
from ..text.preprocess import Preprocessor
from ..evaluate.scores import DirectionalScores
from .._core.registry import Registry
from .._core.validation import (Registered, SEED, StrOptions, ValidatedParams, check_is_fitted, parameter_errors,
                                raise_together, settings_errors)
from .base import RetrievalMethod

__all__ = ["idf_f1_similarity", "nearest_neighbour_scores", "NearestNeighbour"]

#: The word-set similarities of the paper's NN5 baselines, by name; each entry is its system name.
WORD_SET_SIMILARITIES: Registry[str] = Registry("word-set similarity")
WORD_SET_SIMILARITIES.register("idf_f1", "NN5 idf F1", help="F1 of idf-weighted word-set precision and recall")
WORD_SET_SIMILARITIES.register("f1", "NN5 F1", help="F1 of word-set precision and recall")


def _binary_term_matrix(documents: Sequence[Sequence[str]], vocabulary: Mapping[str, int]) -> sp.csr_matrix:
    rows, cols = [], []
    for r, doc in enumerate(documents):
        ids = {vocabulary[w] for w in doc if w in vocabulary}
        rows.extend([r] * len(ids))
        cols.extend(ids)
    data = np.ones(len(rows), dtype=np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(documents), len(vocabulary)))


def idf_f1_similarity(
    queries: Sequence[Sequence[str]],
    documents: Sequence[Sequence[str]],
    *,
    idf: Mapping[str, float] | None = None,
) -> np.ndarray:
    """F1 of idf-weighted word-set precision and recall (Hodosh et al. 2013, NN5 idf F1).

    With Q and D the word sets of a query and a document and w(v) = idf(v)
    (w = 1 when ``idf`` is None, "NN5 F1"):

    .. math::

        P = \\frac{\\sum_{v \\in Q \\cap D} w(v)}{\\sum_{v \\in Q} w(v)},\\quad
        R = \\frac{\\sum_{v \\in Q \\cap D} w(v)}{\\sum_{v \\in D} w(v)},\\quad
        F_1 = \\frac{2PR}{P + R} = \\frac{2 \\sum_{Q \\cap D} w}{\\sum_Q w + \\sum_D w}.

    Words missing from ``idf`` get the largest idf of the vocabulary (they
    are at least as rare as the rarest training word).  A query and document
    that share no weighted word score 0; two empty sets also score 0.

    Parameters
    ----------
    queries, documents : sequence of sequence of str
        Token lists.
    idf : mapping of str to float, optional
        Word weights.

    Returns
    -------
    ndarray of shape (len(queries), len(documents)), float32
    """
    words = sorted({w for d in list(queries) + list(documents) for w in d})
    vocabulary = {w: i for i, w in enumerate(words)}
    if idf is None:
        weights = np.ones(len(words))
    else:
        default = max(idf.values()) if idf else 1.0
        weights = np.array([idf.get(w, default) for w in words], dtype=np.float64)
        if np.any(weights < 0) or not np.all(np.isfinite(weights)):
            raise DataError("idf_f1_similarity: idf weights must be finite and non-negative")
    q = _binary_term_matrix(queries, vocabulary)
    d = _binary_term_matrix(documents, vocabulary)
    overlap = (q.multiply(weights[None, :]).tocsr() @ d.T).toarray()
    q_mass = q @ weights
    d_mass = d @ weights
    denom = q_mass[:, None] + d_mass[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom > 0, 2.0 * overlap / denom, 0.0)
    return f1.astype(np.float32)


def nearest_neighbour_scores(image_to_train: np.ndarray, caption_to_train: np.ndarray,
                             *, caption_to_texts: np.ndarray | None = None,
                             text_item: np.ndarray | None = None) -> DirectionalScores:
    """Scores of the nearest-neighbour rule (Hodosh et al. 2013, Section 3.1).

    Annotation: the query image i's nearest training item is t(i) = argmax_t I[i, t], and
    candidate caption j scores T[j, t(i)], its text similarity to that item.  Search: the query
    caption j's nearest training text is u(j) = argmax_u U[j, u], and candidate image i scores
    I[i, item(u(j))], its image similarity to the image of that text's item::

        annotation[i, j] = T[j, argmax_t I[i, t]]
        search[i, j] = I[i, item(argmax_u U[j, u])]

    Parameters
    ----------
    image_to_train : ndarray of shape (n_images, n_train)
        I: similarity of each image to each training image.
    caption_to_train : ndarray of shape (n_captions, n_train)
        T: similarity of each caption to each training item's text (e.g. its five captions as
        one document, NN5).
    caption_to_texts : ndarray of shape (n_captions, n_texts), optional
        U: similarity of each caption to the training texts searched for the nearest one;
        default T (the texts are the items', item(u) = u).
    text_item : ndarray of int of shape (n_texts,), optional
        item(u): the training item of each text of U (needed with ``caption_to_texts``).

    Returns
    -------
    DirectionalScores
        Both ``(n_images, n_captions)``; ties in an argmax go to the first training item or text.
    """
    if caption_to_texts is None:
        caption_to_texts, text_item = caption_to_train, np.arange(caption_to_train.shape[1])
    nearest_item = np.argmax(image_to_train, axis=1)
    nearest_text_item = np.asarray(text_item)[np.argmax(caption_to_texts, axis=1)]
    return DirectionalScores(annotation=np.ascontiguousarray(caption_to_train[:, nearest_item].T),
                             search=np.ascontiguousarray(image_to_train[:, nearest_text_item]))


class NearestNeighbour(ValidatedParams, BaseEstimator, RetrievalMethod):
    """Nearest-neighbour image–sentence ranker (Hodosh et al. 2013, Section 3.1).

    Parameters
    ----------
    text_similarity : {"idf_f1", "f1"} or str, default="idf_f1"
        ``"idf_f1"`` (NN5 idf F1, the paper's baseline), ``"f1"`` (NN5 F1),
        or the name of a text kernel (e.g. ``"bow5"``, ``"tri5"``) for the
        appendix variants.
    image_kernel : {"pyramid", "histo", "colour_histo"}, default="pyramid"
        Image similarity: the combined spatial-pyramid kernel, its level-0
        histogram variant, or a global colour-histogram intersection.
    image_kernel_params : dict, optional
        Extra parameters of :class:`kcca_desc.image.kernel.ImageKernel`.
    preprocessor : Preprocessor, optional
        Text preprocessing (default: all steps on).
    random_state : int, default=0
        Seed for codebooks.
    cache : bool, default=True
        Cache image features, kernel matrices and (with the default ``preprocessor``)
        preprocessed captions on disk.
    """

    _parameter_constraints = {
        "text_similarity": [StrOptions(set(WORD_SET_SIMILARITIES)), Registered(TEXT_KERNELS, "text kernel")],
        "image_kernel": [Registered(IMAGE_KERNELS, "image kernel")],
        "image_kernel_params": [dict, None],
        "preprocessor": [Preprocessor, None],
        "random_state": [SEED],
        "cache": ["boolean"],
    }

    def __init__(
        self,
        *,
        text_similarity: str = "idf_f1",
        image_kernel: str = "pyramid",
        image_kernel_params: dict | None = None,
        preprocessor: Preprocessor | None = None,
        random_state: int = 0,
        cache: bool = True,
    ):
        self.text_similarity = text_similarity
        self.image_kernel = image_kernel
        self.image_kernel_params = image_kernel_params
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.cache = cache

    def _validate_params(self) -> None:
        errors = parameter_errors(self)
        if "image_kernel_params" not in {e.parameter for e in errors}:
            errors += settings_errors(self, "image_kernel_params", ImageKernel, {
                "kind": "image_kernel", "random_state": "random_state", "cache": "cache"})
        raise_together(errors)

    @property
    def name(self) -> str:
        """The system's label in results and tables: the text similarity's (``NN5 idf F1``...) and the image kernel."""
        text = WORD_SET_SIMILARITIES.get(self.text_similarity, f"NN {self.text_similarity}")
        return f"{text} ({self.image_kernel})"

    def _tokens(self, texts: Sequence[str]) -> list[list[str]]:
        tokens, _ = self.preprocessor_.process(list(texts))
        return tokens

    def fit(self, train: Dataset) -> "NearestNeighbour":
        """Learn the image codebooks and the text statistics (idf or kernel) on ``train``.

        Every parameter, including those passed on to :class:`ImageKernel`, is checked before any
        feature is computed.
        """
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        image_kernel = ImageKernel(kind=self.image_kernel, random_state=self.random_state, cache=self.cache,
                                   **(self.image_kernel_params or {}))
        image_kernel._validate_params()
        text_kernel = None
        if self.text_similarity not in WORD_SET_SIMILARITIES:
            text_kernel = make_text_kernel(self.text_similarity, random_state=self.random_state, cache=self.cache)

        self.preprocessor_ = self.preprocessor if self.preprocessor is not None else Preprocessor(cache=self.cache)
        self.image_kernel_ = image_kernel.fit(train.images)
        self.train_items_, tags = self.preprocessor_.process_items(train.captions)
        self.train_documents_ = [[w for s in item for w in s] for item in self.train_items_]
        self.idf_ = document_idf(self.train_items_) if self.text_similarity == "idf_f1" else None
        self.text_kernel_ = None if text_kernel is None else text_kernel.fit(self.train_items_, tags)
        return self

    def _text_to_train(self, caption_tokens: list[list[str]]) -> np.ndarray:
        """(n_captions, n_train) text similarity of single captions to training items."""
        if self.text_kernel_ is None:
            return idf_f1_similarity(caption_tokens, self.train_documents_, idf=self.idf_)
        return np.asarray(self.text_kernel_.cross_gram([[s] for s in caption_tokens]))

    def score(self, images: ImageSource, captions: Sequence[str]) -> DirectionalScores:
        """Annotation and search scores through the nearest training items.

        Returns
        -------
        DirectionalScores
            ``annotation[i, j]``: text similarity of caption j to the training item nearest to
            image i; ``search[i, j]``: image similarity of image i to the training image of the
            item nearest to caption j.
        """
        check_is_fitted(self, "train_items_")
        scores = nearest_neighbour_scores(self.image_kernel_.cross(images),
                                          self._text_to_train(self._tokens(captions)))
        return DirectionalScores(*(m.astype(np.float32, copy=False) for m in scores))
