"""One image-only and one text-only encoder used as a single :class:`~kcca_desc.adapters.Encoder`."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._core.validation import invalid_parameter, raise_together, validation_errors
from ..data.images import ImageSource
from .base import Encoder

__all__ = ["PairedEncoder"]


class PairedEncoder(Encoder):
    """An image-only and a text-only encoder used together.

    Each side keeps its own cache.  ``joint_space`` is False: the two spaces
    are unrelated until a bridge (CCA, KCCA) is learnt.

    Parameters
    ----------
    image_encoder, text_encoder : Encoder
    """

    joint_space = False

    def __init__(self, image_encoder: Encoder, text_encoder: Encoder):
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder

    def _validate_params(self) -> None:
        """Check that each side embeds its modality, and both encoders' settings, all reported together.

        A side of the wrong modality would fail only when the fit first embeds it, after the data
        were loaded.
        """
        errors = []
        for parameter, modality in (("image_encoder", "image"), ("text_encoder", "text")):
            encoder = getattr(self, parameter)
            if modality in getattr(encoder, "modalities", (modality,)):
                errors += validation_errors(encoder)
            else:
                errors.append(invalid_parameter(self, parameter, f"an encoder of {modality}s",
                                                getattr(encoder, "name", encoder)))
        raise_together(errors)

    @property
    def name(self) -> str:
        """``<image encoder>+<text encoder>``, the names of the two encoders."""
        return f"{self.image_encoder.name}+{self.text_encoder.name}"

    @property
    def label(self) -> str:
        return f"{self.image_encoder.label}+{self.text_encoder.label}"

    @property
    def dim(self) -> dict[str, int]:
        return {"image": self.image_encoder.dim["image"], "text": self.text_encoder.dim["text"]}

    def embed_images(self, images: ImageSource) -> np.ndarray:
        return self.image_encoder.embed_images(images)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self.text_encoder.embed_texts(texts)
