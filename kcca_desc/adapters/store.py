"""Item-level on-disk store of embeddings.

An encoder's embeddings are cached per *item* (an image's cache key or a
text's exact string), under the encoder's identity, so that embedding the test
split after the whole data set is a cache hit, and so that a changed model
file, preprocessing parameter or image file can never return a stale vector.

Each call that computes new vectors writes one *shard* — an ``.npz`` holding
the SHA-1 digests of the items and their vectors — atomically and with its
checksum, as a chunk of a :class:`kcca_desc._core.cache.ChunkCache`.  An interrupted run
therefore loses at most the shard it was writing; the shards already written stay
valid, and a damaged one is discarded with a warning and its items recomputed.
Missing items are computed under the store's lock, so a concurrent run that needs
them waits and reads them back rather than computing them again.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .._core.cache import ChunkCache, cache_key, cache_root
from .._core.errors import DataError

__all__ = ["EmbeddingStore", "item_digest"]


def item_digest(item_key: str) -> str:
    """SHA-1 hex digest naming one item (an image key or a text) in a store."""
    return hashlib.sha1(item_key.encode("utf-8")).hexdigest()


class EmbeddingStore:
    """Embeddings of one encoder and modality, cached per item on disk.

    Parameters
    ----------
    identity : dict
        Everything that determines the vectors: model name, model file digest,
        pooling, preprocessing, modality.  Hashed with :func:`kcca_desc._core.cache.cache_key`.
    enabled : bool, default=True
        When False nothing is read or written (every call computes).
    """

    def __init__(self, identity: dict, enabled: bool = True):
        self.identity = dict(identity)
        self.enabled = enabled
        self._memory: dict[str, np.ndarray] = {}
        self._shards = ChunkCache(f"embeddings/{cache_key(**self.identity)}", enabled=enabled)

    @property
    def directory(self) -> Path:
        return cache_root() / self._shards.subdir

    def _load(self) -> dict[str, np.ndarray]:
        """Every vector stored so far, reading the shards written since the last call."""
        for shard in self._shards.unread():
            self._memory.update(zip(shard["digests"].tolist(), shard["vectors"]))
        return self._memory

    def get_or_compute(
        self,
        item_keys: Sequence[str],
        compute: Callable[[list[int]], np.ndarray],
    ) -> np.ndarray:
        """Vectors for ``item_keys``, computing only the missing ones.

        Parameters
        ----------
        item_keys : sequence of str
            One key per item, in output order.
        compute : callable
            ``compute(positions)`` returns the ``(len(positions), d)`` vectors
            of the items at those positions of ``item_keys``.

        Returns
        -------
        ndarray of shape (len(item_keys), d), float32
        """
        digests = [item_digest(k) for k in item_keys]
        known = self._load() if self.enabled else {}
        if any(d not in known for d in digests):
            with self._shards.lock("compute"):
                self._fill(digests, known, compute)
        if not digests:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([known[d] for d in digests]).astype(np.float32, copy=False)

    def _fill(self, digests: list[str], known: dict[str, np.ndarray],
              compute: Callable[[list[int]], np.ndarray]) -> None:
        """Compute and store the vectors of ``digests`` missing from ``known``.

        Under the lock: the shards a concurrent run wrote meanwhile are read first.
        """
        if self.enabled:
            self._load()  # ``known`` is the store's memory: read in place
        missing_digests = list(dict.fromkeys(d for d in digests if d not in known))
        if missing_digests:
            first_position = {}
            for pos, d in enumerate(digests):
                first_position.setdefault(d, pos)
            positions = [first_position[d] for d in missing_digests]
            vectors = np.asarray(compute(positions), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(positions):
                raise DataError(
                    f"encoder returned an array of shape {vectors.shape} for {len(positions)} items"
                )
            if not np.all(np.isfinite(vectors)):
                raise DataError("encoder returned non-finite embeddings")
            known.update(zip(missing_digests, vectors))
            self._shards.save(uuid.uuid4().hex, {"digests": np.array(missing_digests), "vectors": vectors})
