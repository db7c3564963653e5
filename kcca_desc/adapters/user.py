"""A researcher's own model as an :class:`~kcca_desc.adapters.Encoder`, from a class with two methods.

The class needs no base class: it implements ``embed_texts(texts)`` (a list of strings, one
batch) and/or ``embed_images(images)`` (a list of RGB(A) arrays, one batch), each returning an
``(n, d)`` array.  :class:`UserEncoder` wraps it with what every encoder of the toolkit has —
batching, input checks, shape and finiteness checks, the per-item embedding cache — so that it
runs as a system of its own (:class:`~kcca_desc.methods.EncoderMethod`, when the class sets
``joint_space = True``) and under CCA, KCCA and NN over its features
(:class:`~kcca_desc.methods.FeatureBridgeMethod`).

Optional attributes of the class: ``joint_space`` (default False), ``dim`` (an int, or a dict
per modality; otherwise found by embedding one item when an empty input needs it) and
``identity()`` (anything JSON-serialisable that changes whenever the vectors may: a version,
a weights digest).  Without ``identity()`` nothing is cached on disk, since nothing would
notice a changed model.
"""

from __future__ import annotations

import numpy as np

from .._core.errors import ParameterError
from .base import Encoder
from .store import EmbeddingStore

__all__ = ["UserEncoder"]

_METHODS = {"image": "embed_images", "text": "embed_texts"}


class UserEncoder(Encoder):
    """Batching, checks and caching around a user's model object.

    Parameters
    ----------
    model : object
        Has ``embed_texts(list[str])`` and/or ``embed_images(list[ndarray])`` returning
        ``(n, d)`` arrays (see the module docstring).
    name : str, optional
        Name in results; default: the class name.
    batch_size : int, default=32
    cache : bool, default=True
        Cache on disk; only effective when ``model`` has ``identity()``.
    """

    def __init__(self, model, name: str | None = None, batch_size: int = 32, cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.model = model
        self.name = name or type(model).__name__
        modalities = tuple(m for m, method in _METHODS.items() if callable(getattr(model, method, None)))
        if not modalities:
            raise ParameterError(f"{type(model).__name__} has neither embed_texts(texts) nor embed_images(images); "
                            "a user encoder needs at least one of them")
        self.modalities = modalities
        self.joint_space = bool(getattr(model, "joint_space", False))

    def identity(self, modality: str) -> dict:
        own = self.model.identity() if callable(getattr(self.model, "identity", None)) else None
        cls = type(self.model)
        return {**super().identity(modality), "class": f"{cls.__module__}.{cls.__qualname__}", "model": own}

    def _store(self, modality: str) -> EmbeddingStore:
        if callable(getattr(self.model, "identity", None)):
            return super()._store(modality)
        # Without the model's own identity a changed model could not be told apart: no disk cache.
        return EmbeddingStore(self.identity(modality), enabled=False)

    @property
    def dim(self) -> dict[str, int]:
        declared = getattr(self.model, "dim", None)
        if isinstance(declared, dict):
            return declared
        if isinstance(declared, int):
            return {m: declared for m in self.modalities}
        probes = {"image": lambda: self.model.embed_images([np.zeros((8, 8, 3), np.uint8)]),
                  "text": lambda: self.model.embed_texts([""])}
        return {m: np.asarray(probes[m]()).shape[1] for m in self.modalities}

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        return self._checked(self.model.embed_images(arrays), len(arrays), "embed_images")

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        return self._checked(self.model.embed_texts(texts), len(texts), "embed_texts")

    def _checked(self, out, n: int, method: str) -> np.ndarray:
        out = np.asarray(out, dtype=np.float32)
        if out.ndim != 2 or out.shape[0] != n:
            raise ParameterError(f"{type(self.model).__name__}.{method} returned shape {out.shape} for {n} items; "
                             f"expected ({n}, d)")
        return out

