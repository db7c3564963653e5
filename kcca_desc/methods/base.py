"""The method protocol that every retrieval system implements.

A *method* learns from a training :class:`~kcca_desc.data.Dataset` and then
scores any set of images against any list of captions::

    method.fit(train_dataset)                      # returns the method
    S = method.score(images, captions)             # (n_images, n_captions), higher = better

Kernel systems (NN, KCCA) implement :class:`RetrievalMethod` directly.
Two-tower models (neural encoders) may instead implement
:class:`TwoTowerMethod` — ``embed_images`` / ``embed_texts`` — and inherit a
``score`` that takes the cosine of the two embeddings.  The evaluation
harness only ever calls ``fit`` and ``score``, so every system is measured by
the same code.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..data.dataset import Dataset
from ..data.images import ImageSource

__all__ = ["RetrievalMethod", "TwoTowerMethod", "DirectionalScores", "cosine_scores"]


class DirectionalScores(NamedTuple):
    """Separate score matrices for the two directions, both ``(n_images, n_captions)``.

    Some systems score the two tasks differently: the nearest-neighbour
    baseline ranks captions by text similarity to the image's nearest training
    item but ranks images by image similarity; Borda fusion selects different
    models per task.  ``annotation`` ranks each row's captions, ``search``
    ranks each column's images.
    """

    annotation: np.ndarray
    search: np.ndarray


class RetrievalMethod:
    """Base class of retrieval systems.

    Subclasses override :meth:`fit` and :meth:`score`.  ``name`` is the system
    name written into results.
    """

    name: str = "method"

    def fit(self, train: Dataset) -> "RetrievalMethod":
        """Learn from the images and captions of ``train``; return ``self``."""
        raise NotImplementedError

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray | DirectionalScores:
        """Affinity f(i, s) of every image against every caption.

        Returns
        -------
        ndarray of shape (len(images), len(captions)) or DirectionalScores
            Higher means more related.  Must be finite.  A method whose two
            tasks use different scores returns :class:`DirectionalScores`.
        """
        raise NotImplementedError


def cosine_scores(a: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Cosine similarity between the rows of ``a`` (n, d) and ``b`` (m, d).

    Zero rows get similarity 0 rather than NaN.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"cosine_scores: incompatible shapes {a.shape} and {b.shape}")
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    return (a / np.maximum(na, eps)) @ (b / np.maximum(nb, eps)).T


class TwoTowerMethod(RetrievalMethod):
    """A method that embeds images and texts separately; scores are cosines."""

    def embed_images(self, images: ImageSource) -> np.ndarray:
        """``(len(images), d)`` image embeddings."""
        raise NotImplementedError

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` text embeddings in the same space."""
        raise NotImplementedError

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray:
        return cosine_scores(self.embed_images(images), self.embed_texts(list(captions)))
