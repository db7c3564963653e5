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

from typing import Sequence

import numpy as np

from .._core.validation import ValidatedParams, parameter_errors, raise_together, validation_errors
from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..evaluate.scores import DirectionalScores, cosine_scores

__all__ = ["RetrievalMethod", "TwoTowerMethod"]


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
            tasks use different scores returns
            :class:`~kcca_desc.evaluate.scores.DirectionalScores`.
        """
        raise NotImplementedError


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


class WrapsModel(ValidatedParams):
    """Parameter checks of a method that wraps one model: its own, then the model's (if it declares any).

    So that a wrapped model's bad setting (a trainable model's epochs, an encoder's batch size) is
    found with the method's, all in one error, before any data is read, not when the model first
    runs.  The class names the attribute holding the model in ``_model_attribute``.
    """

    _model_attribute: str

    def _validate_params(self) -> None:
        errors = parameter_errors(self)
        if self._model_attribute not in {error.parameter for error in errors}:
            errors += validation_errors(getattr(self, self._model_attribute))
        raise_together(errors)
