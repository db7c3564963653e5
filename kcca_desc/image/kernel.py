"""The image side of a system: codebooks, pyramid histograms and image Gram matrices.

:class:`ImageKernel` ties :class:`kcca_desc.image.features.ImageFeaturizer`
(features, codebooks and cached histograms) to the kernel functions of
:mod:`kcca_desc.kernels.image` and caches the training Gram matrix on disk, keyed by the
training images' identities and every parameter.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..kernels.image import image_kernel

from ..cache import NpzCache
from ..data.images import ImageSource
from .features import ImageFeaturizer

__all__ = ["ImageKernel", "IMAGE_KERNELS"]

#: Image kernels selectable by name: (feature types, kernel kind).
IMAGE_KERNELS = {
    "pyramid": (("colour", "texture", "sift"), "pyramid"),
    "histo": (("colour", "texture", "sift"), "histo"),
    "colour_histo": (("colour",), "histo"),
}


class ImageKernel(BaseEstimator):
    """Combined image kernel K = ((K_colour + K_texture + K_sift) / 3) ** power (SPEC §3).

    Parameters
    ----------
    kind : {"pyramid", "histo", "colour_histo"}, default="pyramid"
        Spatial-pyramid kernel (Lazebnik et al. 2006) over colour, texture and
        SIFT words; its level-0 histogram-intersection variant; or a global
        colour-histogram intersection.
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
    featurizer_ : ImageFeaturizer
        Fitted codebooks.
    train_features_ : dict of str to ndarray
        Pyramid histograms of the training images.
    train_keys_ : list of str
        Identities of the training images (cache keys).
    """

    def __init__(self, kind="pyramid", levels=2, power=1.0, n_words=None, random_state=0,
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

    def _params(self) -> dict:
        return {"kind": self.kind, "levels": self.levels, "power": float(self.power),
                "n_words": self.n_words, "random_state": self.random_state,
                "featurizer_params": self.featurizer_params}

    def fit(self, train_images: ImageSource) -> "ImageKernel":
        """Learn codebooks on ``train_images`` and compute their pyramid histograms."""
        if self.kind not in IMAGE_KERNELS:
            raise ValueError(f"unknown image kernel {self.kind!r}; available: {', '.join(IMAGE_KERNELS)}")
        feature_types, self.kernel_kind_ = IMAGE_KERNELS[self.kind]
        kwargs = dict(self.featurizer_params or {})
        if self.n_words is not None:
            kwargs["n_words"] = self.n_words
        self.featurizer_ = ImageFeaturizer(
            feature_types=feature_types, levels=self.levels, random_state=self.random_state,
            cache=self.cache, progress=self.progress, **kwargs,
        ).fit(train_images)
        self.train_keys_ = [train_images.key(i) for i in range(len(train_images))]
        self.train_features_ = self.featurizer_.transform(train_images)
        return self

    def _kernel(self, features_a: dict, features_b: dict | None) -> np.ndarray:
        return image_kernel(features_a, features_b, kind=self.kernel_kind_, levels=self.levels,
                            power=self.power, backend=self.backend)

    def _cached(self, what: str, keys_a: list, keys_b: list | None, compute) -> np.ndarray:
        store = NpzCache("image_gram", enabled=self.cache)
        return store.get_or_compute(lambda: {"K": compute()}, what=what, a=keys_a, b=keys_b,
                                    **self._params())["K"]

    def train_gram(self) -> np.ndarray:
        """The (n_train, n_train) Gram matrix of the training images (cached on disk)."""
        check_is_fitted(self, "train_features_")
        return self._cached("gram", self.train_keys_, None, lambda: self._kernel(self.train_features_, None))

    def features(self, images: ImageSource) -> dict:
        """Pyramid histograms of ``images`` (see :meth:`ImageFeaturizer.transform`)."""
        check_is_fitted(self, "featurizer_")
        return self.featurizer_.transform(images)

    def cross(self, images: ImageSource) -> np.ndarray:
        """(len(images), n_train) kernel between new images and the training images (cached on disk)."""
        check_is_fitted(self, "train_features_")
        keys = [images.key(i) for i in range(len(images))]
        return self._cached("cross", keys, self.train_keys_,
                            lambda: self._kernel(self.features(images), self.train_features_))

    def gram(self, images: ImageSource) -> np.ndarray:
        """(len(images), len(images)) kernel among new images."""
        return self._kernel(self.features(images), None)
