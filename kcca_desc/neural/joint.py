"""Joint-embedding models: image and text towers into one unit-normalised space.

f(i, s) = cos(e_img(i), e_txt(s)); trained with the pairwise ranking loss of
:func:`~.losses.hinge_loss` over all in-batch negatives.  A model of several snapshots
embeds with each and concatenates the unit vectors divided by √k, so that the cosine of two
ensemble embeddings is the mean of the snapshots' cosines (snapshot ensembling).
"""

from __future__ import annotations

from numbers import Real
from typing import Sequence

import numpy as np

from ..data.images import ImageSource
from ..evaluate.scores import cosine_scores
from .._core.validation import Interval
from ..adapters.base import Encoder, check_texts
from .losses import hinge_loss
from ._torch import torch_module
from .training import TrainableModel

__all__ = ["JointEmbeddingModel"]

#: Texts embedded per forward pass at evaluation.
_TEXT_CHUNK = 512


class JointEmbeddingModel(TrainableModel, Encoder):
    """A :class:`TrainableModel` that is an :class:`Encoder` of a joint space.

    The network has ``embed_image(features)`` and ``embed_text(ids, lengths)`` (unnormalised).
    Wrap the fitted model in :class:`~kcca_desc.methods.EncoderMethod`.  Embeddings depend on
    the trained weights, so they are never cached on disk (the checkpoint is).
    """

    joint_space = True
    modalities = ("image", "text")
    _parameter_constraints = {**TrainableModel._parameter_constraints,
                              "margin": [Interval(Real, 0, None, closed="left")]}

    def _hardest(self, epoch: int) -> bool:
        """Whether epoch ``epoch`` uses the hardest negative only."""
        return False

    def _batch_loss(self, network, features, ids, lengths, epoch):
        torch = torch_module()
        images = torch.nn.functional.normalize(network.embed_image(features), dim=1)
        texts = torch.nn.functional.normalize(network.embed_text(ids, lengths), dim=1)
        return hinge_loss(images @ texts.T, margin=self.margin, hardest=self._hardest(epoch))

    # ------------------------------------------------------------ embeddings
    def _embed_features(self, networks, features: np.ndarray) -> np.ndarray:
        torch = torch_module()
        x = self._tensor(features)
        with self._inference():
            parts = [torch.nn.functional.normalize(n.embed_image(x), dim=1) for n in networks]
        return (torch.cat(parts, dim=1) / np.sqrt(len(networks))).cpu().numpy()

    def _embed_text_list(self, networks, texts: list[str]) -> np.ndarray:
        torch = torch_module()
        chunks = []
        with self._inference():
            for s in range(0, len(texts), _TEXT_CHUNK):
                ids, lengths = self._encode_texts(texts[s:s + _TEXT_CHUNK])
                parts = [torch.nn.functional.normalize(n.embed_text(ids, lengths), dim=1) for n in networks]
                chunks.append((torch.cat(parts, dim=1) / np.sqrt(len(networks))).cpu().numpy())
        return np.concatenate(chunks) if chunks else np.zeros((0, self.dim["text"]), np.float32)

    def _pair_scores(self, networks, features, texts):
        return cosine_scores(self._embed_features(networks, features), self._embed_text_list(networks, texts))

    @property
    def dim(self) -> dict[str, int]:
        d = self.joint_dim * len(getattr(self, "networks_", [None]))
        return {"image": d, "text": d}

    def embed_images(self, images: ImageSource) -> np.ndarray:
        self._check_fitted()
        return self._embed_features(self.networks_, self._features(images))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted()
        return self._embed_text_list(self.networks_, check_texts(texts))
