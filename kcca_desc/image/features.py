"""Image featurisation: codebooks learnt on training images, cached pyramid histograms.

:class:`ImageFeaturizer` runs the extractors of :mod:`kcca_desc.kernels.image`
(CIELAB colour, MR8 texture, dense SIFT) over an :class:`ImageSource` in
parallel threads (OpenCV, SciPy's FFT and BLAS release the GIL), quantises the
features with one :class:`~kcca_desc.kernels.image.codebook.Codebook` per feature type
and returns spatial-pyramid histograms (Hodosh et al. 2013, Section 3.3; Lazebnik et al.
2006).  Codebooks are learnt on our training images, not on PASCAL images as in the
paper's Section 3.3.1 (``docs/design.md``).

Both codebooks and histograms are cached on disk (:mod:`kcca_desc._core.cache`).
Histograms live in one store per (feature type, feature parameters, pyramid
levels, codebook): a directory of *chunks*, each an ``.npz`` entry with the cache
keys of the images it holds and their histograms.  A request reads the chunks,
computes only the images they lack, ``chunk_size`` images at a time, and writes each
finished chunk as a new entry.  So any subset of a featurised collection (train, dev,
test...) is a cache hit; an interrupted run keeps every finished chunk and its re-run
resumes from there; and runs on different splits add chunks side by side instead of
rewriting one file (each would drop the other's rows).  A chunk is computed under a lock
(:meth:`kcca_desc._core.cache.NpzCache.lock`), so a concurrent run that needs the same images
waits for them instead of computing them twice.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from numbers import Integral
from typing import Callable, Iterator, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

from ..kernels.image.codebook import Codebook, TooFewDescriptorsError
from ..kernels.image.features import colour_features
from ..kernels.image.histograms import n_pyramid_cells, pyramid_histograms
from ..kernels.image.mr8 import texture_features
from ..kernels.image.pyramid import MAX_LEVELS
from ..kernels.image.sift import dense_sift

from .._core.cache import ChunkCache, NpzCache, cache_key
from ..data.images import ImageReadError, ImageSource, require_image_source
from .._core.errors import DataError, NotFittedError, warn_user
from .._core.progress import progress, progress_bar
from .._core.registry import Registry
from .._core.validation import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    Interval,
    MappingOf,
    Options,
    Registered,
    SequenceOf,
    ValidatedParams,
    check_is_fitted,
)

__all__ = ["ImageFeaturizer", "FeatureType", "FEATURE_TYPES"]

# Bump when an extractor's output changes, so that stale cache entries are never read (it keys the
# codebooks, the histograms and, through ImageFeaturizer.cache_params, the Grams of them).
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
        Finest pyramid level L, at most :data:`~kcca_desc.kernels.image.pyramid.MAX_LEVELS` (8);
        each image gets (4^(L+1) - 1) / 3 cells.
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
        Show progress while computing (:mod:`kcca_desc._core.progress`: a bar on a terminal, a
        line per stage otherwise; silenced globally by ``--quiet``).
    chunk_size : int, default=128
        Histograms are computed and cached this many images at a time: an interrupted
        :meth:`transform` keeps every finished chunk (at most one chunk's work is lost).

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

    def __init__(self, *, feature_types: Sequence[str] = ("colour", "texture", "sift"), n_words: dict | None = None,
                 levels: int = 2, pixel_step: int = 2, sift_step: int = 8, sift_size: float = 16.0,
                 max_samples: int = 50, n_fit_images: int = 1000, max_iter: int = 50,
                 random_state: int = 0, n_jobs: int = -1, cache: bool = True, progress: bool = True,
                 chunk_size: int = 128):
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
        self.chunk_size = chunk_size

    # ----------------------------------------------------------- parameters
    # Checked up front: inside the extractors a bad value would surface as an error about the
    # first image, after minutes of work.
    _parameter_constraints = {
        "feature_types": [Registered(FEATURE_TYPES, "feature type"),
                          SequenceOf(Registered(FEATURE_TYPES, "feature type"), distinct=True)],
        "n_words": [MappingOf(Registered(FEATURE_TYPES, "feature type"), POSITIVE_INT), None],
        "levels": [Interval(Integral, 0, MAX_LEVELS, closed="both")],
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
        "chunk_size": [POSITIVE_INT],
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
        require_image_source(train_images, "train_images")
        types, vocabulary = self._types(), self._vocabulary()
        if len(train_images) == 0:
            raise DataError("ImageFeaturizer.fit: no training images")
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
        with contextlib.ExitStack() as locks:
            for t in missing:
                locks.enter_context(store.lock(keys[t]))
            # Learnt by a concurrent run while this one waited for the locks?
            for t in missing:
                hit = store.load(keys[t])
                if hit is not None:
                    _restore(codebooks[t], hit)
            missing = [t for t in missing if not hasattr(codebooks[t], "cluster_centers_")]
            if missing:
                chunks = ChunkCache(f"codebook_samples/{cache_key(codebooks=[keys[t] for t in missing])}",
                                    enabled=self.cache)
                samples = self._codebook_samples(train_images, subset, codebooks, missing, chunks)
                # k-means takes minutes on Flickr8K (a silent gap after the descriptors without this).
                for feature_type in progress(missing, desc="codebook k-means", unit="codebook",
                                             enabled=self.progress):
                    _fit_codebook(codebooks[feature_type], samples[feature_type], feature_type)
                    store.save(keys[feature_type], {"cluster_centers": codebooks[feature_type].cluster_centers_,
                                                    "n_samples_fit": np.array(codebooks[feature_type].n_samples_fit_)})
                chunks.clear()
        _warn_smaller_codebooks(codebooks, vocabulary, len(subset))
        self.codebooks_ = codebooks
        self.n_cells_ = n_pyramid_cells(self.levels)
        return self

    def _codebook_samples(self, images: ImageSource, subset: np.ndarray, codebooks: dict[str, Codebook],
                          types: list[str], chunks: ChunkCache) -> dict[str, list[np.ndarray]]:
        """The descriptors k-means samples from each image of ``subset``, per feature type.

        Computed ``chunk_size`` images at a time, each finished chunk cached in ``chunks``, so
        that an interrupted fit resumes from its last finished chunk (the caller removes the
        chunks once the codebooks are stored).
        """
        def sample(position: int) -> dict[str, np.ndarray]:
            image = _load(images, int(subset[position]))
            return {t: codebooks[t].subsample(self._describe(images, int(subset[position]), image, t)[1], position)
                    for t in types}

        samples: dict[str, list[np.ndarray]] = {t: [] for t in types}
        bar = progress_bar(len(subset), f"codebook features ({', '.join(types)})", unit="image",
                           enabled=self.progress)
        try:
            for start in range(0, len(subset), self.chunk_size):
                stop = min(start + self.chunk_size, len(subset))
                name = f"{start:09d}-{stop:09d}"
                chunk = chunks.load(name)
                if chunk is None:
                    computed = list(self._map(lambda p: sample(start + p), stop - start, bar))
                    chunk = {f"{t}/{p}": got[t] for p, got in enumerate(computed) for t in types}
                    chunks.save(name, chunk)
                else:
                    bar.update(stop - start)
                for t in types:
                    samples[t] += [chunk[f"{t}/{p}"] for p in range(stop - start)]
        finally:
            bar.close()
        return samples

    def _fit_subset(self, n_images: int) -> np.ndarray:
        if n_images <= self.n_fit_images:
            return np.arange(n_images)
        rng = np.random.default_rng(self.random_state)
        return np.sort(rng.choice(n_images, self.n_fit_images, replace=False))

    def cache_params(self) -> dict[str, dict]:
        """What determines the histograms of an image, per feature type, for keying caches of them.

        The extractor's settings and :data:`_EXTRACTOR_VERSION`, the pyramid levels and the
        codebook's centres (an array, which a cache key digests): the codebooks are learnt on the
        training images, so histograms (and kernels of them) made with another training set's
        codebooks are never served.

        Returns
        -------
        dict of str to dict
            ``{feature_type: {"features": ..., "levels": ..., "codebook": centres}}``.
        """
        check_is_fitted(self, "codebooks_")
        return {t: {"features": self._feature_params(t), "levels": self.levels,
                    "codebook": self.codebooks_[t].cluster_centers_} for t in self._types()}

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
        require_image_source(images)
        types = self._types()
        if set(types) - set(self.codebooks_):
            raise NotFittedError(f"feature_types {sorted(set(types) - set(self.codebooks_))} were not fitted: "
                                 f"fit this {type(self).__name__} again after changing feature_types")
        n_cells = n_pyramid_cells(self.levels)
        image_keys = [images.key(i) for i in range(len(images))]
        params = self.cache_params()
        stores = {t: _HistogramStore(cache_key(kind="pyramid_histograms", **params[t]),
                                     enabled=self.cache, wanted=set(image_keys)) for t in types}
        out = {t: np.zeros((len(images), n_cells, self.codebooks_[t].n_words), np.float32) for t in types}
        missing = reduce(np.union1d, [stores[t].fill(image_keys, out[t]) for t in types])
        if len(missing):
            bar = progress_bar(len(missing), f"image features ({', '.join(types)})", unit="image",
                               enabled=self.progress)
            try:
                for start in range(0, len(missing), self.chunk_size):
                    self._transform_chunk(images, image_keys, missing[start:start + self.chunk_size],
                                          stores, out, bar)
            finally:
                bar.close()
        _warn_empty_histograms(out, images)
        return out

    def _transform_chunk(self, images: ImageSource, image_keys: list[str], chunk: np.ndarray,
                         stores: dict[str, "_HistogramStore"], out: dict[str, np.ndarray],
                         bar) -> None:
        """Histograms of the images ``chunk`` (indices) lacking from ``stores``, saved as one chunk."""
        chunk_keys = [image_keys[i] for i in chunk]
        chunk_id = cache_key(kind="histogram_chunk", images=chunk_keys)
        with contextlib.ExitStack() as locks:
            for t in sorted(stores):
                locks.enter_context(stores[t].cache.lock(chunk_id))
            # Another run may have computed some of them while this one waited for the locks.
            needed = {t: set(chunk[store.fill(chunk_keys, out[t], rows=chunk)].tolist())
                      for t, store in stores.items()}
            todo = [int(i) for i in chunk if any(i in needed[t] for t in stores)]

            def histograms(position: int) -> dict[str, np.ndarray]:
                index = todo[position]
                image = _load(images, index)
                result = {}
                for t in stores:
                    if index in needed[t]:
                        positions, descriptors = self._describe(images, index, image, t)
                        words = self.codebooks_[t].assign(descriptors)
                        result[t] = pyramid_histograms(words, positions, image.shape[:2],
                                                       self.codebooks_[t].n_words, levels=self.levels)
                return result

            for index, result in zip(todo, self._map(histograms, len(todo), bar)):
                for t, hist in result.items():
                    out[t][index] = hist
            for t, store in stores.items():
                rows = sorted(needed[t])
                if rows:
                    store.add([image_keys[i] for i in rows], out[t][rows])
        if len(chunk) > len(todo):  # computed by another run
            bar.update(len(chunk) - len(todo))

    def fit_transform(self, images: ImageSource, y=None) -> dict[str, np.ndarray]:
        """``fit(images)`` then ``transform(images)``."""
        return self.fit(images).transform(images)

    # -------------------------------------------------------------- helpers
    def _describe(self, images: ImageSource, index: int, image: np.ndarray, feature_type: str):
        try:
            return self._extract(image, feature_type)
        except ValueError as exc:
            raise DataError(f"image {images.ids[index]!r} (item {index}): {exc}") from exc

    def _map(self, func: Callable[[int], dict], n_items: int, bar) -> Iterator[dict]:
        """``func(0), ..., func(n_items - 1)`` in order, over worker threads.

        ``bar`` is a progress line to advance, or the description of a new one.
        """
        own_bar = isinstance(bar, str)
        if own_bar:
            bar = progress_bar(n_items, bar, unit="image", enabled=self.progress)
        workers = min(self._n_workers(), max(n_items, 1))
        # Images are the unit of parallelism: a multi-threaded BLAS inside each
        # worker only oversubscribes the cores (measured 4-25x slower assignment).
        limits = threadpool_limits(limits=1, user_api="blas")
        try:
            # Counted before it is yielded: a caller that zips the results with a list of n_items
            # stops at the last item, so an update after the last yield would never run.
            if workers == 1:
                for i in range(n_items):
                    result = func(i)
                    bar.update()
                    yield result
            else:
                pool = ThreadPoolExecutor(workers)
                try:
                    for result in pool.map(func, range(n_items)):
                        bar.update()
                        yield result
                finally:
                    # On an error (e.g. a corrupt file) report it now, not
                    # after every queued image has been processed.
                    pool.shutdown(wait=True, cancel_futures=True)
        finally:
            limits.restore_original_limits()
            if own_bar:
                bar.close()


def _load(images: ImageSource, index: int) -> np.ndarray:
    try:
        return images.load(index)
    except ImageReadError:
        raise
    except (OSError, ValueError) as exc:
        raise ImageReadError(f"cannot read image {images.ids[index]!r} (item {index}): {exc}") from exc


def _fit_codebook(codebook: Codebook, samples: list[np.ndarray], feature_type: str) -> None:
    """Fit ``codebook``, with fewer words when the sample holds fewer distinct descriptors.

    A small training set (a dozen images) samples fewer distinct colours than the default 128
    words; the codebook then has one word per distinct descriptor (:func:`_warn_smaller_codebooks`
    says so), and a sample with no descriptor at all is an error naming the feature.
    """
    try:
        codebook.fit(samples)
    except TooFewDescriptorsError as exc:
        if exc.n_distinct == 0:
            raise DataError(f"the training images give no {feature_type} descriptors (every one is too small "
                            f"for the feature); use larger images or leave out the {feature_type} features") from None
        codebook.set_params(n_words=exc.n_distinct).fit(samples)


def _warn_smaller_codebooks(codebooks: dict[str, Codebook], asked: dict[str, int], n_images: int) -> None:
    """One warning naming each codebook that has fewer words than asked for (see :func:`_fit_codebook`)."""
    smaller = {t: c.n_words for t, c in codebooks.items() if c.n_words < asked[t]}
    if smaller:
        changes = ", ".join(f"{t} {asked[t]} -> {n} words (n_words[{t!r}], command line --{t}-words)"
                            for t, n in smaller.items())
        warn_user(f"the {n_images} training images sampled too few distinct descriptors for the codebook "
                  f"sizes asked for, so the codebooks are smaller: {changes}; use more training images "
                  "or ask for fewer words")


def _warn_empty_histograms(histograms: dict[str, np.ndarray], images: ImageSource) -> None:
    """One warning counting the images that gave a feature no descriptor (too small for it).

    Their histograms of that feature are all zero: they still rank, on the other features.
    """
    counts = []
    for t, h in histograms.items():
        empty = np.flatnonzero(~h.reshape(len(h), -1).any(axis=1))
        if len(empty):
            names = ", ".join(repr(images.ids[i]) for i in empty[:5]) + (", ..." if len(empty) > 5 else "")
            counts.append(f"{len(empty)} of {len(h)} images give no {t} descriptor ({names})")
    if counts:
        warn_user(f"{'; '.join(counts)}: too small for the feature, so its histograms are all zero")


def _restore(codebook: Codebook, cached: dict[str, np.ndarray]) -> None:
    """Set a cached codebook's learnt attributes (and its size, smaller when the data supported fewer words)."""
    codebook.cluster_centers_ = np.asarray(cached["cluster_centers"], dtype=np.float32)
    codebook.set_params(n_words=len(codebook.cluster_centers_))
    codebook.n_features_in_ = codebook.cluster_centers_.shape[1]
    codebook.n_samples_fit_ = int(cached["n_samples_fit"])


class _HistogramStore:
    """Cached histograms of one (feature type, parameters, codebook), keyed by image.

    A directory of chunk entries, each named by the digest of the image keys it holds, so
    that a chunk is never rewritten with other images.  A store written before chunks (one
    entry beside the directory) is read as one more chunk and never rewritten.

    Only the histograms of ``wanted`` images are kept in memory: a partition of a large
    collection (4,096 of COCO's 113,287 training images, on a Dask worker) reads every chunk
    the other partitions wrote, and kept them all (up to 6 GB per worker at the end).
    """

    def __init__(self, key: str, enabled: bool, wanted: set[str]):
        self.cache = ChunkCache(f"pyramid_histograms/{key}", enabled=enabled)
        self.wanted = wanted
        self.rows: dict[str, np.ndarray] = {}
        legacy = NpzCache("pyramid_histograms", enabled=enabled).load(key)
        self._take([] if legacy is None else [legacy])

    def _take(self, chunks) -> None:
        for chunk in chunks:
            self.rows.update((key, hist) for key, hist in zip(chunk["image_keys"].tolist(), chunk["histograms"])
                             if key in self.wanted)

    def refresh(self) -> None:
        """Read the chunks written since the last call, by this run or a concurrent one."""
        self._take(self.cache.unread())

    def fill(self, image_keys: Sequence[str], out: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Copy the stored histograms of ``image_keys`` into ``out[rows]``; the positions not stored.

        Returns
        -------
        ndarray of int
            Positions in ``image_keys`` (and ``rows``) of the images the store lacks.
        """
        self.refresh()
        rows = np.arange(len(image_keys)) if rows is None else rows
        absent = []
        for position, (key, row) in enumerate(zip(image_keys, rows)):
            hist = self.rows.get(key)
            if hist is None:
                absent.append(position)
            else:
                out[row] = hist
        return np.array(absent, dtype=np.int64)

    def add(self, image_keys: Sequence[str], histograms: np.ndarray) -> None:
        """Save new images' histograms as one chunk (written atomically, with its checksum)."""
        self.rows.update(zip(image_keys, histograms))
        self.cache.save(cache_key(kind="histogram_chunk", images=list(image_keys)),
                        {"image_keys": np.array(image_keys), "histograms": histograms})


