"""Retrieval systems built from the adapters of :mod:`kcca_desc.adapters`.

* :class:`EncoderMethod` — a jointly trained encoder, scored by cosine.
* :class:`PairScorerMethod` — a cross-conditioned model, scored pair by pair.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..adapters.base import Encoder, PairScorer
from .base import RetrievalMethod, TwoTowerMethod

__all__ = ["EncoderMethod", "PairScorerMethod"]


class EncoderMethod(TwoTowerMethod):
    """A jointly trained encoder as a retrieval method: f(i, s) = cos(e(i), e(s)).

    ``fit`` trains the encoder when it has a ``fit(train)`` method (the
    trainable baselines) and is a no-op for frozen encoders.

    Parameters
    ----------
    encoder : Encoder
        Must have ``joint_space = True``.
    name : str, optional
        System name in results (default: the encoder's name).
    """

    def __init__(self, encoder: Encoder, name: str | None = None):
        self.encoder = encoder
        self.name = name or encoder.name

    def fit(self, train: Dataset) -> "EncoderMethod":
        if not getattr(self.encoder, "joint_space", False):
            raise ValueError(
                f"encoder {self.encoder.name!r} embeds images and texts in different spaces; "
                "cosine scores between them are meaningless — use FeatureBridgeMethod")
        if hasattr(self.encoder, "fit"):
            self.encoder.fit(train)
        return self

    def embed_images(self, images: ImageSource) -> np.ndarray:
        return self.encoder.embed_images(images)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.embed_texts(texts)


class PairScorerMethod(RetrievalMethod):
    """A cross-conditioned model as a retrieval method: f(i, s) = scorer(i, s).

    Parameters
    ----------
    scorer : PairScorer
    name : str, optional
    """

    def __init__(self, scorer: PairScorer, name: str | None = None):
        self.scorer = scorer
        self.name = name or scorer.name

    def fit(self, train: Dataset) -> "PairScorerMethod":
        if hasattr(self.scorer, "fit"):
            self.scorer.fit(train)
        return self

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray:
        return self.scorer.score(images, list(captions))
