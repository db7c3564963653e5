"""Dense SIFT: OpenCV SIFT descriptors on a regular grid of upright keypoints."""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from ..errors import ParameterError
from .features import _check_step, as_float_grey

__all__ = ["dense_sift", "SIFT_DIM", "OPENCV_SIFT_SIZE_PER_PIXEL"]

SIFT_DIM = 128
#: OpenCV's SIFT spreads its 4 x 4 spatial bins over 4 bins x (3 * size / 2)
#: pixels (``SIFT_DESCR_SCL_FCTR = 3`` times the keypoint scale ``size / 2``),
#: so a descriptor supported on P x P pixels needs ``KeyPoint.size = P / 6``.
OPENCV_SIFT_SIZE_PER_PIXEL = 1.0 / 6.0
# OpenCV scales unit-norm descriptors by 512 before rounding; undo it.
_OPENCV_DESCRIPTOR_SCALE = 512.0


def _sift_grid(length: int, step: int, patch_size: float) -> np.ndarray:
    """Centres along one axis whose whole patch lies inside [0, length - 1], centred."""
    half = patch_size / 2.0
    lo, hi = half - 0.5, length - 0.5 - half
    if hi < lo:
        return np.empty(0)
    count = int(np.floor((hi - lo) / step)) + 1
    offset = lo + ((hi - lo) - (count - 1) * step) / 2.0
    return offset + step * np.arange(count)


@lru_cache(maxsize=32)
def _keypoints(shape: tuple[int, int], step: int, patch_size: float) -> tuple[tuple, np.ndarray]:
    rows = _sift_grid(shape[0], step, patch_size)
    cols = _sift_grid(shape[1], step, patch_size)
    rr, cc = np.meshgrid(rows, cols, indexing="ij")
    positions = np.stack([rr.ravel(), cc.ravel()], axis=1).astype(np.float32)
    size = float(patch_size) * OPENCV_SIFT_SIZE_PER_PIXEL
    # angle=0 makes the descriptors upright; OpenCV's default angle of -1
    # would rotate every descriptor by one degree.
    keypoints = tuple(cv2.KeyPoint(float(c), float(r), size, 0.0) for r, c in positions)
    positions.setflags(write=False)
    return keypoints, positions


def dense_sift(image: np.ndarray, *, step: int = 8, patch_size: float = 16.0) -> tuple[np.ndarray, np.ndarray]:
    """Upright SIFT descriptors on a regular grid (dense SIFT).

    Each descriptor is Lowe's 4 x 4 x 8 histogram of gradient orientations
    over a ``patch_size`` x ``patch_size``-pixel square (4 x 4 spatial bins of
    ``patch_size / 4`` pixels, as VLFeat's ``dsift`` with ``binSize =
    patch_size / 4``), computed by OpenCV at keypoints of fixed orientation 0
    and ``KeyPoint.size = patch_size / 6`` (OpenCV's bin width is 1.5 x size).
    OpenCV smooths the image with a Gaussian of sigma 1.6 first.  Centres lie on
    a grid of spacing ``step``, centred in the image, and only where the whole
    patch fits inside it: an image smaller than one patch yields no descriptor
    (and so, downstream, an all-zero histogram).

    Parameters
    ----------
    image : ndarray
        Any image accepted by :func:`~kcca_desc.kernels.image.features.as_float_rgb`;
        its luminance is quantised to 8 bits (OpenCV's SIFT needs ``uint8``).
    step : int, default=8
        Grid spacing in pixels.
    patch_size : float, default=16
        Side of each descriptor's support in pixels.

    Returns
    -------
    positions : ndarray of shape (k, 2), float32
        (row, col) of each patch centre.
    descriptors : ndarray of shape (k, 128), float32
        Unit-L2-norm SIFT descriptors (all-zero on a flat patch).

    See Also
    --------
    kcca_desc.kernels.image.features.colour_features : per-pixel CIELAB colour.
    kcca_desc.kernels.image.mr8.texture_features : per-pixel MR8 texture.

    References
    ----------
    .. [1] Lowe, D. G. (2004). Distinctive image features from scale-invariant
       keypoints. IJCV 60(2), 91-110.
    .. [2] Vedaldi, A. and Fulkerson, B. (2008). VLFeat: an open and portable
       library of computer vision algorithms. http://www.vlfeat.org/
    """
    step = _check_step(step, "step")
    if not np.isfinite(patch_size) or patch_size <= 0:
        raise ParameterError(f"patch_size must be a positive number of pixels; got {patch_size!r}")
    grey = as_float_grey(image)
    keypoints, positions = _keypoints(grey.shape, step, float(patch_size))
    if not keypoints:
        return np.empty((0, 2), np.float32), np.empty((0, SIFT_DIM), np.float32)
    grey8 = np.round(grey * 255.0).astype(np.uint8)
    computed, descriptors = cv2.SIFT_create().compute(grey8, keypoints)
    if descriptors is None or len(computed) != len(keypoints):
        raise RuntimeError(
            f"OpenCV SIFT returned {0 if descriptors is None else len(computed)} descriptors "
            f"for {len(keypoints)} grid keypoints on a {grey.shape} image"
        )
    return positions.copy(), descriptors.astype(np.float32) / np.float32(_OPENCV_DESCRIPTOR_SCALE)
