"""Adapter protocol: how a neural model plugs into the evaluation harness.

Two kinds of model exist:

* an :class:`Encoder` maps images and texts to vectors independently
  (``embed_images(images) -> (n, d)``, ``embed_texts(texts) -> (m, d')``); the
  vectors of one modality are cached on disk per item under the encoder's
  :attr:`~Encoder.identity`;
* a :class:`PairScorer` conditions on the image and the text together and can
  only score pairs (``score(images, texts) -> (n, m)``).

Subclasses implement the batch hooks ``_encode_image_batch`` /
``_encode_text_batch`` (or ``_score_batch``); batching, caching and input
validation live here once.  :mod:`kcca_desc.methods.encoders` turns either
kind into a retrieval system.
"""

from __future__ import annotations

from typing import ClassVar, Sequence

import numpy as np

from .._core.cache import cache_key
from .._core.errors import DataError, ParameterError
from ..data.images import ImageSource, require_image_source
from .._core.progress import progress
from .._core.provenance import library_versions
from .._core.validation import POSITIVE_INT, constraint_errors, raise_together
from .store import EmbeddingStore

__all__ = ["Encoder", "PairScorer", "check_texts"]


def check_texts(texts: Sequence[str], name: str = "texts") -> list[str]:
    """Validate a list of texts: each must be a ``str`` (an empty one is allowed).

    Parameters
    ----------
    texts : sequence of str
    name : str, default="texts"
        The argument's name, for the error ("captions" for a method's ``score``).

    Returns
    -------
    list of str

    Raises
    ------
    ParameterError
        If ``texts`` is one string (it would be scored as one text per character), is not a
        sequence, or holds an item that is not a string.
    """
    if isinstance(texts, str):
        raise ParameterError(f"{name} must be a sequence of strings, not a single string (put one in a list)")
    try:
        texts = list(texts)
    except TypeError:
        raise ParameterError(f"{name} must be a sequence of strings, got {type(texts).__name__}") from None
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ParameterError(f"{name}[{i}] is a {type(t).__name__}, expected str")
    return texts


class _CheckedSettings:
    """The settings check of a model that is not an estimator (it has no ``get_params``).

    The method that holds the model calls :meth:`_validate_params` with its own checks, so that
    a bad setting is found before any work; the model calls it again before it runs.
    """

    # The settings checked, where a model has them.
    _parameter_constraints: ClassVar[dict] = {"batch_size": [POSITIVE_INT]}

    def _validate_params(self) -> None:
        """Check the settings of ``_parameter_constraints``, all reported together."""
        raise_together(self._constraint_errors())

    def _constraint_errors(self) -> list:
        """The errors of the settings that break their ``_parameter_constraints``."""
        params = {name: getattr(self, name) for name in self._parameter_constraints if hasattr(self, name)}
        return constraint_errors(self, params, self._parameter_constraints)


class Encoder(_CheckedSettings):
    """A model that embeds images and/or texts independently.

    Attributes
    ----------
    name : str
        The model's name; with the weights, it identifies the vectors in the cache.
    label : str
        The model's name in a run's label: :attr:`name`, shortened where it spells a local path.
    joint_space : bool
        True when image and text vectors live in one space, so that their
        cosine is a meaningful affinity (a jointly trained model).  Encoders of
        separate spaces (e.g. MiniLM + ViT) need a bridge
        (:class:`kcca_desc.methods.FeatureBridgeMethod`).
    batch_size : int
        Items per forward pass.
    cache : bool
        Whether embeddings are cached on disk.
    """

    name: str = "encoder"
    joint_space: bool = False
    modalities: tuple[str, ...] = ("image", "text")
    #: Modality -> the distributions whose code makes its vectors (the model's code and runtime,
    #: the tokenizer, the image transforms): their installed versions key that modality's cache,
    #: so that an upgrade that changes the vectors is not served the old ones.  Per modality, so
    #: that a tokenizer upgrade keeps the image vectors.  None listed: no versions keyed.
    libraries: ClassVar[dict[str, tuple[str, ...]]] = {}
    _parameter_constraints: ClassVar[dict] = {**_CheckedSettings._parameter_constraints,
                                              "n_threads": [POSITIVE_INT, None]}

    def __init__(self, *, batch_size: int = 32, cache: bool = True):
        self.batch_size = batch_size
        self.cache = cache

    @property
    def label(self) -> str:
        return self.name

    # ---------------------------------------------------------------- hooks
    def identity(self, modality: str) -> dict:
        """Everything that determines this encoder's ``modality`` vectors.

        Subclasses extend it with their model file digest and preprocessing
        parameters; it keys the embedding cache.  The versions of the libraries of
        :meth:`library_names` are keyed under ``"libraries"`` when there are any.
        """
        identity = {"encoder": type(self).__qualname__, "name": self.name, "modality": modality}
        if names := self.library_names(modality):
            identity["libraries"] = library_versions(names)
        return identity

    def library_names(self, modality: str) -> tuple[str, ...]:
        """The distributions whose versions key the ``modality`` vectors (:attr:`libraries`)."""
        return self.libraries.get(modality, ())

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    @property
    def dim(self) -> dict[str, int]:
        """Output dimension per modality (used to shape empty outputs)."""
        raise NotImplementedError

    # --------------------------------------------------------------- public
    def embed_images(self, images: ImageSource) -> np.ndarray:
        """Embed every image of ``images``.

        Returns
        -------
        ndarray of shape (len(images), d_image), float32
        """
        self._require("image")
        require_image_source(images)
        keys = [images.key(i) for i in range(len(images))]

        def compute(positions: list[int]) -> np.ndarray:
            return self._batched(positions, lambda chunk: self._encode_image_batch(
                [images.load(i) for i in chunk]))

        return self._lookup("image", keys, compute)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Embed every text of ``texts``.

        Returns
        -------
        ndarray of shape (len(texts), d_text), float32
        """
        self._require("text")
        texts = check_texts(texts)

        def compute(positions: list[int]) -> np.ndarray:
            return self._batched(positions, lambda chunk: self._encode_text_batch(
                [texts[i] for i in chunk]))

        return self._lookup("text", texts, compute)

    # -------------------------------------------------------------- helpers
    def _require(self, modality: str) -> None:
        if modality not in self.modalities:
            raise ParameterError(f"encoder {self.name!r} does not embed {modality}s")

    def _lookup(self, modality: str, keys: list[str], compute) -> np.ndarray:
        if not keys:
            return np.zeros((0, self.dim[modality]), dtype=np.float32)
        return self._store(modality).get_or_compute(keys, compute)

    def _store(self, modality: str) -> EmbeddingStore:
        # Memoised per identity so shards are read once, yet a set_params that
        # changes the identity (or `cache`) gets a fresh store.
        identity = self.identity(modality)
        memo_key = (cache_key(**identity), self.cache)
        memo = self.__dict__.setdefault("_store_memo", {})
        if memo_key not in memo:
            memo[memo_key] = EmbeddingStore(identity, enabled=self.cache)
        return memo[memo_key]

    def _batched(self, positions: list[int], encode) -> np.ndarray:
        self._validate_params()
        batches = progress(range(0, len(positions), self.batch_size), desc=f"{self.name} encoder", unit="batch")
        out = [np.asarray(encode(positions[s:s + self.batch_size]), dtype=np.float32) for s in batches]
        return np.concatenate(out, axis=0)


class PairScorer(_CheckedSettings):
    """A model that scores (image, text) pairs jointly (cross-conditioned).

    Subclasses implement ``_score_batch(arrays, texts) -> (len(arrays), len(texts))``;
    :meth:`score` loads the images in batches of ``batch_size``.
    """

    name: str = "pair_scorer"

    def __init__(self, *, batch_size: int = 32):
        self.batch_size = batch_size

    def _score_batch(self, arrays: list[np.ndarray], texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def score(self, images: ImageSource, texts: Sequence[str]) -> np.ndarray:
        """Affinity of every image with every text, ``(len(images), len(texts))``."""
        self._validate_params()
        require_image_source(images)
        texts = check_texts(texts)
        rows = []
        for s in progress(range(0, len(images), self.batch_size), desc=f"{self.name} pair scores", unit="batch"):
            chunk = [images.load(i) for i in range(s, min(s + self.batch_size, len(images)))]
            block = np.asarray(self._score_batch(chunk, texts), dtype=np.float64)
            if block.shape != (len(chunk), len(texts)):
                raise DataError(
                    f"pair scorer {self.name!r} returned shape {block.shape}, "
                    f"expected {(len(chunk), len(texts))}")
            rows.append(block)
        scores = np.concatenate(rows) if rows else np.zeros((0, len(texts)))
        if not np.all(np.isfinite(scores)):
            raise DataError(f"pair scorer {self.name!r} returned non-finite scores")
        return scores
