"""Spatial-pyramid match kernel and the combined image kernel of Hodosh et al. (2013)."""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from .._backend import resolve_backend
from ..errors import DataError, ParameterError
from .intersection import check_histograms, intersection_validated

__all__ = ["pyramid_cell_weights", "whole_image_cell_weights", "pyramid_kernel", "image_kernel"]

_PYRAMID_AXES = ("n_samples", "n_cells", "n_words")


#: The finest pyramid level allowed: a pyramid of L levels has (4^(L+1) - 1) / 3 cells per
#: visual word, 87,381 at L = 8 (22 million histogram bins per image with 256 words); the paper
#: uses L = 2.
MAX_LEVELS = 8


def _check_levels(levels) -> int:
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 0:
        raise ParameterError(f"levels must be a non-negative integer; got {levels!r}")
    if levels > MAX_LEVELS:
        raise ParameterError(f"levels must be at most {MAX_LEVELS} (a pyramid of L levels has (4^(L+1) - 1) / 3 "
                             f"cells per visual word); got {levels!r}")
    return int(levels)


def pyramid_cell_weights(levels: int = 2) -> np.ndarray:
    """Weight of every pyramid cell in the spatial-pyramid match kernel.

    Expanding K = I^L + sum_{l<L} (I^l - I^{l+1}) / 2^{L-l} gives each level intersection I^l
    the weight 1/2^L for l = 0 and 1/2^{L-l+1} for 0 < l <= L (1 for L = 0). Cells are ordered
    level 0, then level 1 row-major, ..., as in :func:`kcca_desc.kernels.image.histograms.pyramid_histograms`.

    Parameters
    ----------
    levels : int, default=2
        Finest level L.

    Returns
    -------
    weights : ndarray of shape ((4^(L+1) - 1) / 3,), float64

    See Also
    --------
    kcca_desc.kernels.image.pyramid_kernel : the kernel these weights define.

    References
    ----------
    .. [1] Lazebnik, S., Schmid, C. and Ponce, J. (2006). Beyond bags of features: spatial
       pyramid matching for recognizing natural scene categories. CVPR.
    """
    levels = _check_levels(levels)
    level_weights = [1.0 / 2 ** levels] + [1.0 / 2 ** (levels - l + 1) for l in range(1, levels + 1)]
    return np.repeat(level_weights, [4 ** l for l in range(levels + 1)])


def whole_image_cell_weights(levels: int = 2) -> np.ndarray:
    """Cell weights of the whole-image histogram intersection: weight 1 on cell 0 only.

    Cell 0 (level 0) is the histogram of the whole image, so these weights turn the
    spatial-pyramid computation of :func:`image_kernel` into a plain histogram intersection
    (Swain and Ballard 1991, "Color indexing", IJCV); the finer cells get no weight whatever
    ``levels`` is.

    Parameters
    ----------
    levels : int, default=2
        Finest level L of the pyramids (checked, otherwise unused).

    Returns
    -------
    weights : ndarray of shape (1,), float64
    """
    _check_levels(levels)
    return np.ones(1)


#: The named cell weightings of :func:`image_kernel`'s ``kind``.
_KINDS: dict[str, Callable[[int], np.ndarray]] = {"pyramid": pyramid_cell_weights,
                                                  "histo": whole_image_cell_weights}


def _cell_weights(kind, levels: int) -> np.ndarray:
    """The weights of ``kind`` (a name of :data:`_KINDS` or a callable) for ``levels``, checked."""
    weigh = _KINDS.get(kind) if isinstance(kind, str) else kind
    if not callable(weigh):
        raise ParameterError(f"kind must be one of {tuple(_KINDS)} or a callable levels -> cell weights; got {kind!r}")
    weights = np.asarray(weigh(levels), dtype=np.float64)
    if weights.ndim != 1 or not 1 <= len(weights) <= _n_cells(levels) \
            or not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ParameterError(f"kind(levels={levels}) must return between 1 and {_n_cells(levels)} non-negative "
                         f"finite cell weights; got {weights!r}")
    return weights


def _n_cells(levels: int) -> int:
    return (4 ** (levels + 1) - 1) // 3


def _check_pyramid(P, name: str, levels: int) -> np.ndarray:
    P = check_histograms(P, name, np.float32, axes=_PYRAMID_AXES)
    if P.shape[1] != _n_cells(levels):
        raise DataError(f"{name} has {P.shape[1]} cells but a pyramid with levels={levels} has "
                         f"(4^(L+1) - 1) / 3 = {_n_cells(levels)}")
    return P


def _weighted_rows(pyramids: list[np.ndarray], cell_weights: np.ndarray) -> np.ndarray:
    """(n, sum_t n_cells * n_words_t) rows of cell histograms scaled by their cell weights.

    min(w a, w b) = w min(a, b) for w >= 0, so one intersection over these rows is the weighted
    sum of the per-cell intersections. Only the first ``len(cell_weights)`` cells are used.
    """
    n_cells = len(cell_weights)
    rows = np.empty((len(pyramids[0]), sum(n_cells * P.shape[2] for P in pyramids)), np.float32)
    offset = 0
    for P in pyramids:
        n_words = P.shape[2]
        for cell, weight in enumerate(cell_weights.astype(np.float32)):
            np.multiply(P[:, cell], weight, out=rows[:, offset:offset + n_words])
            offset += n_words
    return rows


def _weighted_intersection(pyramids_a: list[np.ndarray], pyramids_b: list[np.ndarray] | None,
                           cell_weights: np.ndarray, backend: str) -> np.ndarray:
    A = _weighted_rows(pyramids_a, cell_weights)
    B = None if pyramids_b is None else _weighted_rows(pyramids_b, cell_weights)
    return intersection_validated(A, B, backend)


def _check_same_words(PA: np.ndarray, PB: np.ndarray, what: str) -> None:
    if PA.shape[2] != PB.shape[2]:
        raise DataError(f"{what}: the first set has {PA.shape[2]} words per cell, the second "
                         f"{PB.shape[2]}")


def pyramid_kernel(PA, PB=None, *, levels: int = 2, backend: str = "auto") -> np.ndarray:
    """Spatial-pyramid match kernel between two sets of pyramid histograms.

    .. math::

        K = I^L + \\sum_{l=0}^{L-1} \\frac{I^l - I^{l+1}}{2^{L-l}},
        \\qquad I^l_{ij} = \\sum_{c \\in \\text{level } l} \\sum_v \\min(h_{ic}(v), h_{jc}(v))

    computed as a single histogram intersection over cell histograms pre-scaled by
    :func:`pyramid_cell_weights`. With cell histograms normalised by the image's total feature
    count, every level sums to 1 and ``K_ii = 1`` for an image with features.

    Parameters
    ----------
    PA : array-like of shape (n_samples_A, (4^(L+1) - 1) / 3, n_words)
        Non-negative cell histograms, cells ordered level 0, level 1 row-major, level 2, ...
    PB : array-like of shape (n_samples_B, (4^(L+1) - 1) / 3, n_words), default=None
        Same for the second set; ``None`` computes the symmetric Gram matrix of PA.
    levels : int, default=2
        Finest pyramid level L.
    backend : {"auto", "numba", "cupy", "numpy"}, default="auto"
        See :func:`kcca_desc.kernels.image.histogram_intersection`.

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B), float32

    Raises
    ------
    ValueError
        If an input is not 3-D, has a negative or non-finite value, has a number of cells that
        does not match ``levels``, or if the vocabularies of PA and PB differ.

    See Also
    --------
    kcca_desc.kernels.image.histogram_intersection : the underlying kernel.
    kcca_desc.kernels.image.image_kernel : the mean over feature types, raised to a power.

    References
    ----------
    .. [1] Lazebnik, S., Schmid, C. and Ponce, J. (2006). Beyond bags of features: spatial
       pyramid matching for recognizing natural scene categories. CVPR.
    """
    levels = _check_levels(levels)
    backend = resolve_backend(backend)
    PA = _check_pyramid(PA, "PA", levels)
    if PB is not None:
        PB = _check_pyramid(PB, "PB", levels)
        _check_same_words(PA, PB, "PA and PB")
    return _weighted_intersection([PA], None if PB is None else [PB],
                                  pyramid_cell_weights(levels), backend)


def _check_features(features, name: str, levels: int) -> dict[str, np.ndarray]:
    if not isinstance(features, Mapping) or not features:
        raise DataError(f"{name} must be a non-empty dict of feature type -> (n_samples, "
                         f"n_cells, n_words) array; got {type(features).__name__}")
    checked = {key: _check_pyramid(value, f"{name}[{key!r}]", levels) for key, value in features.items()}
    sizes = {key: len(value) for key, value in checked.items()}
    if len(set(sizes.values())) > 1:
        raise DataError(f"{name}: feature types disagree on the number of samples: {sizes}")
    return checked


def image_kernel(features_a: Mapping[str, np.ndarray], features_b: Mapping[str, np.ndarray] | None = None,
                 *, kind: str | Callable[[int], np.ndarray] = "pyramid", levels: int = 2, power: float = 1.0,
                 backend: str = "auto") -> np.ndarray:
    """Combined image kernel: the mean over feature types of pyramid (or histogram) kernels.

    .. math::

        K_{img} = \\Big( \\frac{1}{|T|} \\sum_{t \\in T} K_t \\Big)^p

    with T the given feature types (colour, texture and SIFT words in Hodosh et al. 2013) and
    K_t = sum_c w_c sum_v min(h_{ic}(v), h_{jc}(v)) a weighted intersection of the pyramid cells:
    the spatial-pyramid kernel (``kind="pyramid"``, w from :func:`pyramid_cell_weights`) or the
    intersection of the level-0, whole-image histograms (``kind="histo"``, w from
    :func:`whole_image_cell_weights`). All types are weighted, concatenated and intersected in
    one pass.

    Parameters
    ----------
    features_a : dict of str to array-like of shape (n_samples_A, (4^(L+1) - 1) / 3, n_words_t)
        Pyramid cell histograms of each feature type (see :func:`pyramid_kernel`).
    features_b : dict of str to array-like of shape (n_samples_B, ...), default=None
        Same feature types and vocabularies; ``None`` computes the symmetric Gram matrix.
    kind : {"pyramid", "histo"} or callable, default="pyramid"
        Spatial-pyramid kernel, or histogram intersection of level 0 only (cell 0); or a
        callable ``levels -> w`` giving the weights of the first ``len(w)`` cells.
    levels : int, default=2
        Finest level L of the given pyramids (their number of cells is checked against it).
    power : float, default=1.0
        Exponent p > 0 (Hodosh et al. use p in {2, 3}).
    backend : {"auto", "numba", "cupy", "numpy"}, default="auto"
        See :func:`kcca_desc.kernels.image.histogram_intersection`.

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B), float32

    Raises
    ------
    ValueError
        On an unknown ``kind`` or invalid cell weights, a non-positive or non-finite ``power``,
        feature types or vocabularies that differ between the two sets, or an invalid histogram
        array.

    See Also
    --------
    kcca_desc.kernels.image.pyramid_kernel : one feature type.

    References
    ----------
    .. [1] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image description as a
       ranking task: data, models and evaluation metrics. JAIR 47, 853-899.
    .. [2] Lazebnik, S., Schmid, C. and Ponce, J. (2006). Beyond bags of features. CVPR.
    .. [3] Swain, M. J. and Ballard, D. H. (1991). Color indexing. IJCV 7(1), 11-32.
    """
    if isinstance(power, bool) or not isinstance(power, (int, float, np.number)) \
            or not np.isfinite(power) or power <= 0:
        raise ParameterError(f"power must be a positive finite number; got {power!r}")
    levels = _check_levels(levels)
    cell_weights = _cell_weights(kind, levels)
    backend = resolve_backend(backend)
    features_a = _check_features(features_a, "features_a", levels)
    if features_b is not None:
        features_b = _check_features(features_b, "features_b", levels)
        if set(features_b) != set(features_a):
            raise DataError(f"features_a and features_b must have the same feature types; got "
                             f"{sorted(features_a)} and {sorted(features_b)}")
        for key in features_a:
            _check_same_words(features_a[key], features_b[key], f"feature type {key!r}")

    # Dividing every weight by |T| makes the single intersection the mean of the per-type kernels.
    types = sorted(features_a)
    K = _weighted_intersection([features_a[key] for key in types],
                               None if features_b is None else [features_b[key] for key in types],
                               cell_weights / len(types), backend)
    if power != 1:
        np.power(K, power, out=K)
    return K
