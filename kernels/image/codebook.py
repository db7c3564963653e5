"""Visual-word codebooks: k-means on descriptors sampled from training images."""

from __future__ import annotations

from typing import Iterable

import numba
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans

from ..errors import DataError, ParameterError
from .._validation import check_is_fitted

__all__ = ["Codebook", "nearest_centres", "TooFewDescriptorsError"]

# Rows per block in nearest_centres: bounds the (rows x n_words) distance block
# to a few MB while keeping the matrix product large enough for BLAS.
_ASSIGN_BLOCK_ROWS = 4096
# Up to this dimension (colour: 3, MR8: 8) a fused loop beats BLAS 2-4x: the
# product is too thin for BLAS, and the loop never materialises the distances.
_FUSED_MAX_DIM = 16
# Seed stream of the total-sample cap, distinct from every per-image stream.
_CAP_STREAM = 2**32 - 1


class TooFewDescriptorsError(DataError):
    """The sample holds fewer distinct descriptors than the codebook has words.

    Attributes
    ----------
    n_distinct : int
        The number of distinct descriptors sampled: the most words the sample supports.
    """

    def __init__(self, message: str, n_distinct: int):
        super().__init__(message)
        self.n_distinct = n_distinct


def nearest_centres(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre (squared Euclidean distance) of each row of ``X``.

    argmin_j ||x - c_j||^2 = argmin_j (||c_j||^2 / 2 - x . c_j), in float32:
    for d <= 16 with a fused Numba loop (no distance matrix), otherwise as a
    matrix product in blocks of rows, so memory stays bounded.  Ties go to the
    lowest index.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Descriptors.
    centres : ndarray of shape (k, d)
        Cluster centres.

    Returns
    -------
    words : ndarray of shape (n,), int32
    """
    X = np.asarray(X, dtype=np.float32)
    centres = np.asarray(centres, dtype=np.float32)
    if X.ndim != 2 or centres.ndim != 2 or X.shape[1] != centres.shape[1]:
        raise DataError(
            f"descriptors of shape {X.shape} do not match centres of shape {centres.shape}"
        )
    if not np.all(np.isfinite(X)):
        raise DataError("descriptors contain NaN or infinite values")
    half_sq_norms = 0.5 * np.einsum("ij,ij->i", centres, centres)
    if X.shape[1] <= _FUSED_MAX_DIM:
        return _nearest_centres_fused(np.ascontiguousarray(X), np.ascontiguousarray(centres), half_sq_norms)
    words = np.empty(len(X), dtype=np.int32)
    for start in range(0, len(X), _ASSIGN_BLOCK_ROWS):
        block = X[start:start + _ASSIGN_BLOCK_ROWS]
        words[start:start + len(block)] = np.argmin(half_sq_norms - block @ centres.T, axis=1)
    return words


@numba.njit(nogil=True, cache=True)
def _nearest_centres_fused(X, centres, half_sq_norms):
    # Serial on purpose: callers parallelise over images (nogil lets threads run it).
    words = np.empty(X.shape[0], dtype=np.int32)
    for i in range(X.shape[0]):
        best, best_j = np.inf, 0
        for j in range(centres.shape[0]):
            score = half_sq_norms[j]
            for t in range(X.shape[1]):
                score -= X[i, t] * centres[j, t]
            if score < best:
                best, best_j = score, j
        words[i] = best_j
    return words


class Codebook(BaseEstimator):
    """A k-means codebook of visual words (Hodosh et al. 2013, Section 3.3.1).

    ``fit`` draws at most ``max_samples_per_image`` descriptors from each
    training image (without replacement, seeded by ``(random_state, image
    index)`` so a draw never depends on which other images are present or in
    which order they were processed), keeps at most ``max_samples`` of them in
    all (seeded), and runs k-means (k-means++ initialisation, Lloyd
    iterations) on the sample.

    Parameters
    ----------
    n_words : int, default=256
        Number of visual words k.
    max_samples_per_image : int, default=50
        Descriptors drawn from each image.
    max_samples : int, default=50_000
        Cap on the total sample k-means sees.
    max_iter : int, default=50
        Lloyd iterations at most.
    random_state : int, default=0
        Seed of the sampling and of k-means.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_words, d), float32
        The visual words.
    n_features_in_ : int
        Descriptor dimension d.
    n_samples_fit_ : int
        Size of the sample the codebook was learnt from.

    See Also
    --------
    kcca_desc.kernels.image.histograms.pyramid_histograms : histograms of assigned words.

    References
    ----------
    .. [1] Sivic, J. and Zisserman, A. (2003). Video Google: a text retrieval
       approach to object matching in videos. ICCV.
    .. [2] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    """

    def __init__(self, *, n_words: int = 256, max_samples_per_image: int = 50, max_samples: int = 50_000,
                 max_iter: int = 50, random_state: int = 0):
        self.n_words = n_words
        self.max_samples_per_image = max_samples_per_image
        self.max_samples = max_samples
        self.max_iter = max_iter
        self.random_state = random_state

    def _check_params(self) -> None:
        for name in ("n_words", "max_samples_per_image", "max_samples", "max_iter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ParameterError(f"Codebook: {name} must be a positive integer; got {value!r}")
        if isinstance(self.random_state, bool) or not isinstance(self.random_state, (int, np.integer)):
            raise ParameterError(f"Codebook: random_state must be an integer seed; got {self.random_state!r}")

    def subsample(self, descriptors: np.ndarray, image_index: int) -> np.ndarray:
        """The descriptors of training image ``image_index`` that ``fit`` keeps.

        A seeded draw of ``min(len(descriptors), max_samples_per_image)`` rows
        without replacement, returned in their original order, as float32.
        Applying it to its own output returns that output unchanged, so callers
        may subsample while extracting (to bound memory) and pass the result to
        :meth:`fit`.
        """
        self._check_params()
        descriptors = np.asarray(descriptors, dtype=np.float32)
        if descriptors.ndim != 2:
            raise DataError(f"descriptors of image {image_index} must be 2-d; got shape {descriptors.shape}")
        if len(descriptors) <= self.max_samples_per_image:
            return descriptors
        rng = np.random.default_rng([int(self.random_state), int(image_index)])
        keep = np.sort(rng.choice(len(descriptors), self.max_samples_per_image, replace=False))
        return descriptors[keep]

    def fit(self, descriptors: Iterable[np.ndarray], y=None) -> "Codebook":
        """Learn the words from per-image descriptor arrays.

        Parameters
        ----------
        descriptors : iterable of ndarray of shape (k_i, d)
            One array per training image (may be a generator; each array is
            subsampled as soon as it arrives, so memory stays bounded).
        y : ignored

        Returns
        -------
        self : Codebook
        """
        self._check_params()
        samples = [self.subsample(d, i) for i, d in enumerate(descriptors)]
        if not samples:
            raise DataError("Codebook.fit: no training images given")
        dims = {s.shape[1] for s in samples}
        if len(dims) != 1:
            raise DataError(f"Codebook.fit: descriptor dimensions differ across images: {sorted(dims)}")
        sample = np.concatenate(samples)
        if not np.all(np.isfinite(sample)):
            raise DataError("Codebook.fit: descriptors contain NaN or infinite values")
        if len(sample) > self.max_samples:
            rng = np.random.default_rng([int(self.random_state), _CAP_STREAM])
            sample = sample[np.sort(rng.choice(len(sample), self.max_samples, replace=False))]
        rows_as_bytes = np.ascontiguousarray(sample).view(np.dtype((np.void, sample.shape[1] * 4)))
        n_distinct = len(np.unique(rows_as_bytes))
        if n_distinct < self.n_words:
            raise TooFewDescriptorsError(
                f"Codebook.fit: {n_distinct} distinct descriptors sampled, fewer than n_words={self.n_words}; "
                "use more training images, a larger max_samples_per_image or fewer words", n_distinct)
        kmeans = KMeans(n_clusters=self.n_words, init="k-means++", n_init=1, max_iter=self.max_iter,
                        random_state=int(self.random_state)).fit(sample)
        self.cluster_centers_ = kmeans.cluster_centers_.astype(np.float32)
        self.n_features_in_ = sample.shape[1]
        self.n_samples_fit_ = len(sample)
        return self

    def assign(self, descriptors: np.ndarray) -> np.ndarray:
        """Word index (nearest centre) of each descriptor, int32 of shape (k,)."""
        check_is_fitted(self, "cluster_centers_")
        descriptors = np.asarray(descriptors)
        if descriptors.ndim != 2 or descriptors.shape[1] != self.n_features_in_:
            raise DataError(
                f"Codebook.assign: expected descriptors of shape (k, {self.n_features_in_}); "
                f"got {descriptors.shape}"
            )
        return nearest_centres(descriptors, self.cluster_centers_)
