"""Nearest-neighbour baselines of Hodosh, Young & Hockenmaier (2013, §5).

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
from sklearn.utils.validation import check_is_fitted

from ..kernels.text import document_idf

from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..image.kernel import ImageKernel
from ..text.named_kernels import make_text_kernel
from ..text.preprocess import Preprocessor
from ..scores import DirectionalScores
from .base import RetrievalMethod

__all__ = ["idf_f1_similarity", "NearestNeighbour"]


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
            raise ValueError("idf_f1_similarity: idf weights must be finite and non-negative")
    q = _binary_term_matrix(queries, vocabulary)
    d = _binary_term_matrix(documents, vocabulary)
    overlap = (q.multiply(weights[None, :]).tocsr() @ d.T).toarray()
    q_mass = q @ weights
    d_mass = d @ weights
    denom = q_mass[:, None] + d_mass[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom > 0, 2.0 * overlap / denom, 0.0)
    return f1.astype(np.float32)


class NearestNeighbour(BaseEstimator, RetrievalMethod):
    """Nearest-neighbour image–sentence ranker (Hodosh et al. 2013, §5).

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
    """

    def __init__(
        self,
        text_similarity: str = "idf_f1",
        image_kernel: str = "pyramid",
        image_kernel_params: dict | None = None,
        preprocessor: Preprocessor | None = None,
        random_state: int = 0,
    ):
        self.text_similarity = text_similarity
        self.image_kernel = image_kernel
        self.image_kernel_params = image_kernel_params
        self.preprocessor = preprocessor
        self.random_state = random_state

    @property
    def name(self) -> str:
        text = {"idf_f1": "NN5 idf F1", "f1": "NN5 F1"}.get(self.text_similarity, f"NN {self.text_similarity}")
        return f"{text} ({self.image_kernel})"

    def _tokens(self, texts: Sequence[str]) -> list[list[str]]:
        tokens, _ = self.preprocessor_.process(list(texts))
        return tokens

    def fit(self, train: Dataset) -> "NearestNeighbour":
        """Learn the image codebooks and the text statistics (idf or kernel) on ``train``."""
        self.preprocessor_ = self.preprocessor if self.preprocessor is not None else Preprocessor()
        self.image_kernel_ = ImageKernel(
            kind=self.image_kernel, random_state=self.random_state, **(self.image_kernel_params or {})
        ).fit(train.images)
        self.train_items_, tags = self.preprocessor_.process_items(train.captions)
        self.train_documents_ = [[w for s in item for w in s] for item in self.train_items_]
        if self.text_similarity in ("idf_f1", "f1"):
            self.idf_ = document_idf(self.train_items_) if self.text_similarity == "idf_f1" else None
            self.text_kernel_ = None
        else:
            self.text_kernel_ = make_text_kernel(self.text_similarity, random_state=self.random_state)
            self.text_kernel_.fit(self.train_items_, tags)
        return self

    def _text_to_train(self, caption_tokens: list[list[str]]) -> np.ndarray:
        """(n_captions, n_train) text similarity of single captions to training items."""
        if self.text_kernel_ is None:
            return idf_f1_similarity(caption_tokens, self.train_documents_, self.idf_)
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
        caption_tokens = self._tokens(captions)
        image_to_train = self.image_kernel_.cross(images)           # (n_images, n_train)
        text_to_train = self._text_to_train(caption_tokens)         # (n_captions, n_train)
        # Annotation: captions ranked by text similarity to the query image's nearest training item.
        nearest_item = np.argmax(image_to_train, axis=1)
        annotation = text_to_train[:, nearest_item].T
        # Search: images ranked by image similarity to the query caption's nearest training item.
        nearest_text = np.argmax(text_to_train, axis=1)
        search = image_to_train[:, nearest_text]
        return DirectionalScores(
            annotation=np.ascontiguousarray(annotation, dtype=np.float32),
            search=np.ascontiguousarray(search, dtype=np.float32),
        )
