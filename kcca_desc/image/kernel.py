"""The image side of a system: codebooks, pyramid histograms and image Gram matrices.

:class:`ImageKernel` ties :class:`kcca_desc.image.features.ImageFeaturizer`
(features, codebooks and cached histograms) to the kernel functions of
:mod:`kcca_desc.kernels.image` and caches the training Gram matrix on disk, keyed by the
training images' identities, every parameter and what keys the histograms (the codebooks'
centres and the extractors' settings and version, :meth:`ImageFeaturizer.cache_params`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator

from ..kernels._backend import BACKENDS
from ..kernels.image import image_kernel, pyramid_cell_weights, whole_image_cell_weights

from .._core.cache import NpzCache
from ..data.images import ImageSource, require_image_source
from .._core.profile import profiled
from .._core.progress import stage
from .._core.registry import Registry
from .._core.validation import (
    NON_NEGATIVE_INT,
    POSITIVE_REAL,
    SEED,
    Registered,
    StrOptions,
    ValidatedParams,
    check_is_fitted,
    parameter_errors,
    raise_together,
    settings_errors,
)
from .features import ImageFeaturizer

__all__ = ["ImageKernel", "ImageKernelSpec", "IMAGE_KERNELS"]


@dataclass(frozen=True)
class ImageKernelSpec:
    """A named image kernel: the feature types it averages and how it weighs pyramid cells.

    Attributes
    ----------
    feature_types : tuple of str
        Names in :data:`kcca_desc.image.features.FEATURE_TYPES`.
    cell_weights : callable
        ``cell_weights(levels) -> w``, the weights of the first ``len(w)`` pyramid cells
        (the ``kind`` of :func:`kcca_desc.kernels.image.image_kernel`).
    """

    feature_types: tuple[str, ...]
    cell_weights: Callable[[int], np.ndarray]


_ALL_TYPES = ("colour", "texture", "sift")
#: Name -> :class:`ImageKernelSpec` of the image kernels selectable by name.
IMAGE_KERNELS: Registry[ImageKernelSpec] = Registry("image kernel")
IMAGE_KERNELS.register("pyramid", ImageKernelSpec(_ALL_TYPES, pyramid_cell_weights),
                       help="spatial-pyramid kernel over colour, texture and SIFT words (Lazebnik et al. 2006)")
IMAGE_KERNELS.register("histo", ImageKernelSpec(_ALL_TYPES, whole_image_cell_weights),
                       help="whole-image histogram intersection of colour, texture and SIFT words")
IMAGE_KERNELS.register("colour_histo", ImageKernelSpec(("colour",), whole_image_cell_weights),
                       help="whole-image histogram intersection of colour words")


class ImageKernel(ValidatedParams, BaseEstimator):
    """Combined image kernel K = ((K_colour + K_texture + K_sift) / 3) ** power.

    The average of the three feature kernels is that of Hodosh, Young & Hockenmaier (2013),
    Sections 3.3.1-3.3.2; they square or cube it (``power``, Section 4.1.3).

    Parameters
    ----------
    kind : str, default="pyramid"
        A name in :data:`IMAGE_KERNELS`: ``"pyramid"``, the spatial-pyramid kernel (Lazebnik
        et al. 2006) over colour, texture and SIFT words; ``"histo"``, its level-0
        histogram-intersection variant; ``"colour_histo"``, a global colour-histogram
        intersection; or any kernel registered there.
    levels : int, default=2
        Pyramid levels L.
    power : float, default=1.0
        Exponent p applied to the averaged kernel.
    n_words : dict, optional
        Codebook sizes per feature type (default 128 colour, 256 texture, 256 SIFT).
    random_state : int, default=0
        Seed of the codebooks.
    backend : str, default="auto"
        Kernel backend (``"auto"``, ``"numba"``, ``"cupy"``, ``"numpy"``).
    featurizer_params : dict, optional
        Further :class:`ImageFeaturizer` parameters (SIFT grid, pixel step...).
    cache : bool, default=True
        Cache features and kernel matrices on disk.
    progress : bool, default=True
        Print feature-extraction progress to stderr.

    Attributes
    ----------
    spec_ : ImageKernelSpec
        The registered entry of ``kind`` at fit time.
    featurizer_ : ImageFeaturizer
        Fitted codebooks.
    train_features_ : dict of str to ndarray
        Pyramid histograms of the training images, computed (or read from the cache) when first
        needed: a run whose Grams are all in the cache never needs them.
    train_images_ : ImageSource
        The training images.
    train_keys_ : list of str
        Identities of the training images (cache keys).
    """

    def __init__(self, *, kind="pyramid", levels=2, power=1.0, n_words=None, random_state=0,
                 backend="auto", featurizer_params=None, cache=True, progress=True):
        self.kind = kind
        self.levels = levels
        self.power = power
        self.n_words = n_words
        self.random_state = random_state
        self.backend = backend
        self.featurizer_params = featurizer_params
        self.cache = cache
        self.progress = progress

    _parameter_constraints = {
        "kind": [Registered(IMAGE_KERNELS, "image kernel")],
        "levels": [NON_NEGATIVE_INT],
        "power": [POSITIVE_REAL],
        "n_words": [dict, None],
        "random_state": [SEED],
        "backend": [StrOptions(set(BACKENDS))],
        "featurizer_params": [dict, None],
        "cache": ["boolean"],
        "progress": ["boolean"],
    }

    def _params(self) -> dict:
        return {"kind": self.kind, "levels": self.levels, "power": float(self.power),
                "n_words": self.n_words, "random_state": self.random_state,
                "featurizer_params": self.featurizer_params}

    def _featurizer(self) -> ImageFeaturizer:
        kwargs = dict(self.featurizer_params or {})
        if self.n_words is not None:
            kwargs["n_words"] = self.n_words
        return ImageFeaturizer(feature_types=IMAGE_KERNELS[self.kind].feature_types, levels=self.levels,
                               random_state=self.random_state, cache=self.cache, progress=self.progress, **kwargs)

    def _validate_params(self) -> None:
        # The featurizer's parameters too, all reported together: its fit would check them only
        # after the caller's earlier stages (e.g. a ranker's caption preprocessing) had run.
        errors = parameter_errors(self)
        reported = {e.parameter for e in errors}
        if "featurizer_params" not in reported:
            set_by = {"feature_types": "kind", "levels": "levels", "random_state": "random_state", "cache": "cache",
                      "progress": "progress", **({} if self.n_words is None else {"n_words": "n_words"})}
            errors += settings_errors(self, "featurizer_params", ImageFeaturizer, set_by)
            reported |= {e.parameter for e in errors}
        if not reported & {"kind", "featurizer_params"}:
            errors += [e for e in parameter_errors(self._featurizer()) if e.parameter not in reported]
        raise_together(errors)

    def fit(self, train_images: ImageSource) -> "ImageKernel":
        """Learn codebooks on ``train_images``; their pyramid histograms follow when first needed.

        A warm re-run finds every Gram of the training images in the cache: reading their
        histograms (half a gigabyte at Flickr8K's 6,000) took it 2-3 s for nothing.
        """
        self.fit_codebooks(train_images)
        self.train_keys_ = [train_images.key(i) for i in range(len(train_images))]
        self.train_images_ = train_images
        self._train_features = None
        return self

    @property
    def train_features_(self) -> dict:
        check_is_fitted(self, "train_images_")
        if self._train_features is None:
            with profiled("image features"):
                self._train_features = self.featurizer_.transform(self.train_images_)
        return self._train_features

    def fit_codebooks(self, train_images: ImageSource) -> "ImageKernel":
        """Learn the codebooks only; :meth:`features` then computes histograms in parts (as Dask workers do)."""
        self._validate_params()
        require_image_source(train_images, "train_images")
        self.spec_ = IMAGE_KERNELS[self.kind]
        with profiled("codebooks", watch=False):
            self.featurizer_ = self._featurizer().fit(train_images)
        return self

    def kernel_function(self) -> Callable[[dict, dict], np.ndarray]:
        """The kernel between two feature dicts as a picklable function, for workers that hold no ImageKernel."""
        check_is_fitted(self, "spec_")
        return functools.partial(image_kernel, kind=self.spec_.cell_weights, levels=self.levels,
                                 power=self.power, backend=self.backend)

    def _kernel(self, features_a: dict, features_b: dict | None) -> np.ndarray:
        n_a = len(next(iter(features_a.values())))
        n_b = n_a if features_b is None else len(next(iter(features_b.values())))
        with stage(f"image kernel {self.kind} ({n_a} x {n_b})"):
            return image_kernel(features_a, features_b, kind=self.spec_.cell_weights, levels=self.levels,
                                power=self.power, backend=self.backend)

    def _cached(self, what: str, keys_a: list, keys_b: list | None, compute) -> np.ndarray:
        # Keyed by the histograms' own key (codebook centres, extractor settings and version) too:
        # the parameters alone miss a change of an extractor's code, or of the codebooks.
        store = NpzCache("image_gram", enabled=self.cache)
        return store.get_or_compute(lambda: {"K": compute()}, what=what, a=keys_a, b=keys_b,
                                    histograms=self.featurizer_.cache_params(), **self._params())["K"]

    def train_gram(self) -> np.ndarray:
        """The (n_train, n_train) Gram matrix of the training images (cached on disk)."""
        check_is_fitted(self, "train_keys_")
        return self._cached("gram", self.train_keys_, None, lambda: self._kernel(self.train_features_, None))

    def features(self, images: ImageSource) -> dict:
        """Pyramid histograms of ``images`` (see :meth:`ImageFeaturizer.transform`)."""
        check_is_fitted(self, "featurizer_")
        return self.featurizer_.transform(images)

    def cross(self, images: ImageSource) -> np.ndarray:
        """(len(images), n_train) kernel between new images and the training images (cached on disk)."""
        check_is_fitted(self, "train_keys_")
        keys = [images.key(i) for i in range(len(images))]
        return self._cached("cross", keys, self.train_keys_,
                            lambda: self._kernel(self.features(images), self.train_features_))

    def gram(self, images: ImageSource) -> np.ndarray:
        """(len(images), len(images)) kernel among new images."""
        return self._kernel(self.features(images), None)
