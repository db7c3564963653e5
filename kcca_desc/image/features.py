"""Image featurisation: codebooks learnt on training images, cached pyramid histograms.

:class:`ImageFeaturizer` runs the extractors of :mod:`kcca_desc.kernels.image`
(CIELAB colour, MR8 texture, dense SIFT) over an :class:`ImageSource` in
parallel threads (OpenCV, SciPy's FFT and BLAS release the GIL), quantises the
features with one :class:`~kcca_desc.kernels.image.codebook.Codebook` per feature type
and returns spatial-pyramid histograms (Hodosh et al. 2013, Section 3.3; Lazebnik et al.
2006).  Codebooks are learnt on our training images, not on PASCAL images as in the
paper's Section 3.3.1 (``docs/design.md``).

Both codebooks and histograms are cached on disk (:mod:`kcca_desc.cache`).
Histograms live in one store per (feature type, feature parameters, pyramid
levels, codebook): an ``.npz`` with the cache keys of the images it holds and
their histograms.  A request loads the store, computes only the images it
lacks and rewrites the store atomically with them added, so any subset of a
featurised collection (train, dev, test...) is a cache hit.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from typing import Callable, Iterator, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..kernels.image.codebook import Codebook
from ..kernels.image.features import colour_features
from ..kernels.image.histograms import n_pyramid_cells, pyramid_histograms
from ..kernels.image.mr8 import texture_features
from ..kernels.image.sift import dense_sift

from ..cache import NpzCache, cache_key
from ..data.images import ImageReadError, ImageSource
from ..registry import Registry
from ..validation import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    MappingOf,
    Options,
    Registered,
    SequenceOf,
    ValidatedParams,
)

__all__ = ["ImageFeaturizer", "FeatureType", "FEATURE_TYPES"]

# Bump when an extractor's output changes, so that stale cache entries are never read.
_EXTRACTOR_VERSION = 1


@dataclass(frozen=True)
class FeatureType:
    """One type of local image feature: how it is extracted and how many visual words it gets.

    Attributes
    ----------
    extract : callable
        ``extract(image, **settings) -> (positions, descriptors)``: (k, 2) (row, col) positions
        and (k, d) descriptors of one image.
    settings : callable
        ``settings(featurizer) -> dict``: the keyword arguments of ``extract`` taken from the
        :class:`ImageFeaturizer`'s parameters.  They key the cached codebooks and histograms.
    n_words : int
        Default codebook size.
    """

    extract: Callable[..., tuple[np.ndarray, np.ndarray]]
    settings: Callable[["ImageFeaturizer"], dict]
    n_words: int


def _pixel_sampling(featurizer: "ImageFeaturizer") -> dict:
    return {"pixel_step": featurizer.pixel_step}


def _sift_grid(featurizer: "ImageFeaturizer") -> dict:
    return {"step": featurizer.sift_step, "patch_size": float(featurizer.sift_size)}


#: Name -> :class:`FeatureType`; the vocabulary sizes are those of Hodosh et al. (2013):
#: 128 colour, 256 texture, 256 SIFT words.
FEATURE_TYPES: Registry[FeatureType] = Registry("feature type")
FEATURE_TYPES.register("colour", FeatureType(colour_features, _pixel_sampling, n_words=128),
                       help="CIELAB colour of sampled pixels")
FEATURE_TYPES.register("texture", FeatureType(texture_features, _pixel_sampling, n_words=256),
                       help="MR8 texture responses of sampled pixels (Varma & Zisserman 2005)")
FEATURE_TYPES.register("sift", FeatureType(dense_sift, _sift_grid, n_words=256),
                       help="dense SIFT descriptors on a grid (Lowe 2004)")


class ImageFeaturizer(ValidatedParams, BaseEstimator):
    """Spatial-pyramid visual-word histograms of colour, texture and SIFT features.

    Parameters
    ----------
    feature_types : sequence of str, default=("colour", "texture", "sift")
        Feature types to compute, names in :data:`FEATURE_TYPES`.
    n_words : dict, optional
        Codebook size per feature type; missing entries take the feature type's
        ``n_words`` (128 colour, 256 texture, 256 SIFT).
    levels : int, default=2
        Finest pyramid level L; each image gets (4^(L+1) - 1) / 3 cells.
    pixel_step : int, default=2
        Colour and texture are computed on every ``pixel_step``-th pixel in
        each direction (1 = every pixel; 2 gives 12,544 samples on a 224 x 224
        image and 3-4x faster texture).
    sift_step : int, default=8
        Spacing of the dense SIFT grid in pixels.
    sift_size : float, default=16
        Side of each SIFT descriptor's support in pixels.  Images smaller than
        one support have no SIFT features and an all-zero SIFT histogram.
    max_samples : int, default=50
        Descriptors drawn per training image per feature type for k-means.
    n_fit_images : int, default=1000
        Codebooks are learnt from a seeded random subset of this many training
        images (all when there are fewer), so k-means sees at most
        ``n_fit_images * max_samples`` descriptors (50,000 by default: about
        200 per word, and 30 s rather than minutes for 128-d SIFT on 2 cores).
    max_iter : int, default=50
        k-means (Lloyd) iterations at most.
    random_state : int, default=0
        Seed of the image subset, the descriptor samples and k-means.
    n_jobs : int, default=-1
        Worker threads (-1: one per CPU).
    cache : bool, default=True
        Read and write codebooks and histograms in the on-disk cache.
    progress : bool, default=True
        Print a progress line to stderr while computing.

    Attributes
    ----------
    codebooks_ : dict of str to Codebook
        The fitted codebook of each feature type.
    n_cells_ : int
        Pyramid cells per image.

    References
    ----------
    .. [1] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    .. [2] Lazebnik, S., Schmid, C. and Ponce, J. (2006). Beyond bags of
       features: spatial pyramid matching. CVPR.
    """

    def __init__(self, feature_types: Sequence[str] = ("colour", "texture", "sift"), n_words: dict | None = None,
                 levels: int = 2, pixel_step: int = 2, sift_step: int = 8, sift_size: float = 16.0,
                 max_samples: int = 50, n_fit_images: int = 1000, max_iter: int = 50,
                 random_state: int = 0, n_jobs: int = -1, cache: bool = True, progress: bool = True):
        self.feature_types = feature_types
        self.n_words = n_words
        self.levels = levels
        self.pixel_step = pixel_step
        self.sift_step = sift_step
        self.sift_size = sift_size
        self.max_samples = max_samples
        self.n_fit_images = n_fit_images
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.cache = cache
        self.progress = progress

    # ----------------------------------------------------------- parameters
    # Checked up front: inside the extractors a bad value would surface as an error about the
    # first image, after minutes of work.
    _parameter_constraints = {
        "feature_types": [Registered(FEATURE_TYPES, "feature type"),
                          SequenceOf(Registered(FEATURE_TYPES, "feature type"), distinct=True)],
        "n_words": [MappingOf(Registered(FEATURE_TYPES, "feature type"), POSITIVE_INT), None],
        "levels": [NON_NEGATIVE_INT],
        "pixel_step": [POSITIVE_INT],
        "sift_step": [POSITIVE_INT],
        "sift_size": [POSITIVE_REAL],
        "max_samples": [POSITIVE_INT],
        "n_fit_images": [POSITIVE_INT],
        "max_iter": [POSITIVE_INT],
        "random_state": [SEED],
        "n_jobs": [POSITIVE_INT, Options(int, {-1})],
        "cache": ["boolean"],
        "progress": ["boolean"],
    }

    def _types(self) -> tuple[str, ...]:
        return (self.feature_types,) if isinstance(self.feature_types, str) else tuple(self.feature_types)

    def _vocabulary(self) -> dict[str, int]:
        return {name: feature.n_words for name, feature in FEATURE_TYPES.items()} | dict(self.n_words or {})

    def _feature_params(self, feature_type: str) -> dict:
        """Every parameter that determines the raw features of one type."""
        return {"feature": feature_type, "version": _EXTRACTOR_VERSION,
                **FEATURE_TYPES[feature_type].settings(self)}

    def _extract(self, image: np.ndarray, feature_type: str) -> tuple[np.ndarray, np.ndarray]:
        feature = FEATURE_TYPES[feature_type]
        return feature.extract(image, **feature.settings(self))

    def _n_workers(self) -> int:
        return (os.cpu_count() or 1) if self.n_jobs == -1 else self.n_jobs

    # ------------------------------------------------------------------ fit
    def fit(self, train_images: ImageSource, y=None) -> "ImageFeaturizer":
        """Learn one codebook per feature type from (a subset of) the training images.

        Parameters
        ----------
        train_images : ImageSource
            Training images only: the codebooks must not see evaluation images.
        y : ignored

        Returns
        -------
        self : ImageFeaturizer
        """
        self._validate_params()
        types, vocabulary = self._types(), self._vocabulary()
        if len(train_images) == 0:
            raise ValueError("ImageFeaturizer.fit: no training images")
        subset = self._fit_subset(len(train_images))
        subset_keys = [train_images.key(int(i)) for i in subset]
        store = NpzCache("codebooks", enabled=self.cache)
        codebooks, keys = {}, {}
        for feature_type in types:
            codebooks[feature_type] = Codebook(
                n_words=vocabulary[feature_type], max_samples_per_image=self.max_samples,
                max_samples=len(subset) * self.max_samples, max_iter=self.max_iter,
                random_state=self.random_state,
            )
            keys[feature_type] = cache_key(kind="codebook", images=subset_keys,
                                           features=self._feature_params(feature_type),
                                           codebook=codebooks[feature_type].get_params())
            hit = store.load(keys[feature_type])
            if hit is not None:
                _restore(codebooks[feature_type], hit)
        missing = [t for t in types if not hasattr(codebooks[t], "cluster_centers_")]
        if missing:
            def sample(position: int) -> dict[str, np.ndarray]:
                image = _load(train_images, int(subset[position]))
                return {t: codebooks[t].subsample(self._describe(train_images, int(subset[position]), image, t)[1],
                                                  position) for t in missing}

            samples = list(self._map(sample, len(subset), f"codebook features ({', '.join(missing)})"))
            for feature_type in missing:
                codebooks[feature_type].fit([s[feature_type] for s in samples])
                store.save(keys[feature_type], {"cluster_centers": codebooks[feature_type].cluster_centers_,
                                                "n_samples_fit": np.array(codebooks[feature_type].n_samples_fit_)})
        self.codebooks_ = codebooks
        self.n_cells_ = n_pyramid_cells(self.levels)
        return self

    def _fit_subset(self, n_images: int) -> np.ndarray:
        if n_images <= self.n_fit_images:
            return np.arange(n_images)
        rng = np.random.default_rng(self.random_state)
        return np.sort(rng.choice(n_images, self.n_fit_images, replace=False))

    # ------------------------------------------------------------ transform
    def transform(self, images: ImageSource) -> dict[str, np.ndarray]:
        """Pyramid histograms of every image.

        Parameters
        ----------
        images : ImageSource

        Returns
        -------
        histograms : dict of str to ndarray of shape (n_images, n_cells, n_words), float32
            One entry per feature type, cells ordered as in
            :func:`~kcca_desc.kernels.image.histograms.pyramid_histograms`.

        Raises
        ------
        ImageReadError
            Naming the file of an unreadable image.
        ValueError
            Naming the image whose array has an unsupported shape or dtype.
        """
        check_is_fitted(self, "codebooks_")
        types = self._types()
        if set(types) - set(self.codebooks_):
            raise ValueError(f"feature types {sorted(set(types) - set(self.codebooks_))} were not fitted")
        n_cells = n_pyramid_cells(self.levels)
        image_keys = [images.key(i) for i in range(len(images))]
        stores = {t: _HistogramStore(cache_key(kind="pyramid_histograms", features=self._feature_params(t),
                                               levels=self.levels,
                                               codebook=self.codebooks_[t].cluster_centers_),
                                     enabled=self.cache) for t in types}
        out = {t: np.zeros((len(images), n_cells, self.codebooks_[t].n_words), np.float32) for t in types}
        todo = {t: [] for t in types}
        for t in types:
            rows = stores[t].lookup(image_keys)
            found = rows >= 0
            if found.any():
                out[t][found] = stores[t].histograms[rows[found]]
            todo[t] = np.flatnonzero(~found)
        missing = reduce(np.union1d, todo.values())
        if len(missing):
            todo_sets = {t: set(todo[t].tolist()) for t in types}
            needed = {i: [t for t in types if i in todo_sets[t]] for i in missing.tolist()}

            def histograms(position: int) -> dict[str, np.ndarray]:
                index = int(missing[position])
                image = _load(images, index)
                result = {}
                for t in needed[index]:
                    positions, descriptors = self._describe(images, index, image, t)
                    words = self.codebooks_[t].assign(descriptors)
                    result[t] = pyramid_histograms(words, positions, image.shape[:2],
                                                   self.codebooks_[t].n_words, self.levels)
                return result

            computed = self._map(histograms, len(missing), f"image features ({', '.join(types)})")
            for index, result in zip(missing, computed):
                for t, hist in result.items():
                    out[t][index] = hist
            for t in types:
                if len(todo[t]):
                    stores[t].add([image_keys[i] for i in todo[t]], out[t][todo[t]])
        return out

    def fit_transform(self, images: ImageSource, y=None) -> dict[str, np.ndarray]:
        """``fit(images)`` then ``transform(images)``."""
        return self.fit(images).transform(images)

    # -------------------------------------------------------------- helpers
    def _describe(self, images: ImageSource, index: int, image: np.ndarray, feature_type: str):
        try:
            return self._extract(image, feature_type)
        except ValueError as exc:
            raise ValueError(f"image {images.ids[index]!r} (item {index}): {exc}") from exc

    def _map(self, func: Callable[[int], dict], n_items: int, description: str) -> Iterator[dict]:
        """``func(0), ..., func(n_items - 1)`` in order, over worker threads, with progress."""
        bar = _Progress(n_items, description, enabled=self.progress)
        workers = min(self._n_workers(), max(n_items, 1))
        # Images are the unit of parallelism: a multi-threaded BLAS inside each
        # worker only oversubscribes the cores (measured 4-25x slower assignment).
        limits = threadpool_limits(limits=1, user_api="blas")
        try:
            if workers == 1:
                for i in range(n_items):
                    yield func(i)
                    bar.update()
            else:
                pool = ThreadPoolExecutor(workers)
                try:
                    for result in pool.map(func, range(n_items)):
                        yield result
                        bar.update()
                finally:
                    # On an error (e.g. a corrupt file) report it now, not
                    # after every queued image has been processed.
                    pool.shutdown(wait=True, cancel_futures=True)
        finally:
            limits.restore_original_limits()
            bar.close()


def _load(images: ImageSource, index: int) -> np.ndarray:
    try:
        return images.load(index)
    except ImageReadError:
        raise
    except (OSError, ValueError) as exc:
        raise ImageReadError(f"cannot read image {images.ids[index]!r} (item {index}): {exc}") from exc


def _restore(codebook: Codebook, cached: dict[str, np.ndarray]) -> None:
    """Set a cached codebook's learnt attributes."""
    codebook.cluster_centers_ = np.asarray(cached["cluster_centers"], dtype=np.float32)
    codebook.n_features_in_ = codebook.cluster_centers_.shape[1]
    codebook.n_samples_fit_ = int(cached["n_samples_fit"])


class _HistogramStore:
    """Cached histograms of one (feature type, parameters, codebook), keyed by image."""

    def __init__(self, key: str, enabled: bool):
        self.key = key
        self.cache = NpzCache("pyramid_histograms", enabled=enabled)
        hit = self.cache.load(key)
        self.keys = [] if hit is None else [str(k) for k in hit["image_keys"]]
        self.histograms = None if hit is None else hit["histograms"]

    def lookup(self, image_keys: Sequence[str]) -> np.ndarray:
        """Row of each image key in the store, -1 when absent."""
        row_of = {k: i for i, k in enumerate(self.keys)}
        return np.array([row_of.get(k, -1) for k in image_keys], dtype=np.int64)

    def add(self, image_keys: Sequence[str], histograms: np.ndarray) -> None:
        """Add new images' histograms and rewrite the store atomically."""
        if not self.cache.enabled:
            return
        stored = set(self.keys)
        unique = {k: i for i, k in enumerate(image_keys) if k not in stored}
        rows = np.fromiter(unique.values(), dtype=np.int64, count=len(unique))
        self.keys = self.keys + list(unique)
        new = histograms[rows]
        self.histograms = new if self.histograms is None else np.concatenate([self.histograms, new])
        self.cache.save(self.key, {"image_keys": np.array(self.keys), "histograms": self.histograms})


class _Progress:
    """A one-line progress report on stderr (count, rate, time left)."""

    def __init__(self, total: int, description: str, enabled: bool, interval: float = 0.5):
        self.total, self.description, self.enabled, self.interval = total, description, enabled, interval
        self.done = 0
        self.start = self.last = time.perf_counter()

    def update(self) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.enabled and (now - self.last >= self.interval or self.done == self.total):
            self.last = now
            rate = self.done / max(now - self.start, 1e-9)
            left = (self.total - self.done) / rate
            sys.stderr.write(f"\r{self.description}: {self.done}/{self.total} "
                             f"[{now - self.start:.0f}s elapsed, {left:.0f}s left, {rate:.1f} images/s]")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\n")
            sys.stderr.flush()
