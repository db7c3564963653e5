"""Retrieval systems built from the adapters of :mod:`kcca_desc.adapters`.

* :class:`EncoderMethod` — a jointly trained encoder, scored by cosine.
* :class:`PairScorerMethod` — a cross-conditioned model, scored pair by pair.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from .._core.errors import ParameterError
from ..data.dataset import Dataset, require_dataset
from ..data.images import ImageSource
from ..adapters.base import Encoder, PairScorer
from .._core.validation import HasMethods
from .base import RetrievalMethod, TwoTowerMethod, WrapsModel

__all__ = ["EncoderMethod", "PairScorerMethod"]


class EncoderMethod(WrapsModel, BaseEstimator, TwoTowerMethod):
    """A jointly trained encoder as a retrieval method: f(i, s) = cos(e(i), e(s)).

    ``fit`` trains the encoder in place when it has a ``fit(train)`` method (the trainable
    baselines) and is a no-op for frozen encoders, so an encoder trained beforehand can be
    scored without ``fit``.

    Parameters
    ----------
    encoder : Encoder
        Must have ``joint_space = True``.  Its ``name`` is the system name.
    """

    _parameter_constraints = {"encoder": [HasMethods(["embed_images", "embed_texts"])]}
    _model_attribute = "encoder"

    def __init__(self, encoder: Encoder):
        self.encoder = encoder

    @property
    def name(self) -> str:
        """The system's label in results and tables: the encoder's (its spec)."""
        return self.encoder.label

    def fit(self, train: Dataset) -> "EncoderMethod":
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        if not getattr(self.encoder, "joint_space", False):
            raise ParameterError(
                f"EncoderMethod: encoder {self.encoder.name!r} embeds images and texts in different spaces "
                "(joint_space=False); cosine scores between them are meaningless — use FeatureBridgeMethod")
        if hasattr(self.encoder, "fit"):
            self.encoder.fit(train)
        return self

    def embed_images(self, images: ImageSource) -> np.ndarray:
        return self.encoder.embed_images(images)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.embed_texts(texts)


class PairScorerMethod(WrapsModel, BaseEstimator, RetrievalMethod):
    """A cross-conditioned model as a retrieval method: f(i, s) = scorer(i, s).

    Parameters
    ----------
    scorer : PairScorer
        Trained in place by ``fit`` when it has a ``fit(train)`` method.  Its ``name`` is the
        system name.
    """

    _parameter_constraints = {"scorer": [HasMethods(["score"])]}
    _model_attribute = "scorer"

    def __init__(self, scorer: PairScorer):
        self.scorer = scorer

    @property
    def name(self) -> str:
        """The system's label in results and tables: the pair scorer's ``name``."""
        return self.scorer.name

    def fit(self, train: Dataset) -> "PairScorerMethod":
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        if hasattr(self.scorer, "fit"):
            self.scorer.fit(train)
        return self

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray:
        return self.scorer.score(images, list(captions))
