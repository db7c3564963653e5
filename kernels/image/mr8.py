"""Varma-Zisserman MR8 texture descriptors, computed with one FFT per image.

The Root Filter Set (RFS) holds 38 filters: first-derivative ("edge") and
second-derivative ("bar") anisotropic Gaussians at three scales and six
orientations, plus an isotropic Gaussian and a Laplacian of Gaussian.  MR8
keeps, per pixel, the maximum edge and bar response over orientations at each
scale (6 rotation-invariant responses) and the two isotropic responses.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.fft

from ..errors import DataError, ParameterError
from .features import _check_step, _grid_points, as_float_grey, grid_positions

__all__ = ["rfs_filter_bank", "mr8_responses", "texture_features"]

#: (sigma_x, sigma_y) of the oriented filters: sigma along the edge/bar is 3x
#: the sigma across it (Varma & Zisserman 2005, §2.2).
RFS_SCALES = ((1.0, 3.0), (2.0, 6.0), (4.0, 12.0))
RFS_N_ORIENTATIONS = 6
RFS_ISOTROPIC_SIGMA = 10.0
#: Weber-law contrast-normalisation constant (Varma & Zisserman 2005, §2.2).
CONTRAST_CONSTANT = 0.03
_FLAT_STD = 1.0 / 65535


def _gauss1d(sigma: float, x: np.ndarray, order: int) -> np.ndarray:
    """Gaussian (order 0) or its first/second derivative at ``x``."""
    variance = sigma**2
    g = np.exp(-(x**2) / (2 * variance)) / np.sqrt(2 * np.pi * variance)
    if order == 1:
        return -g * x / variance
    if order == 2:
        return g * (x**2 - variance) / variance**2
    return g


def _zero_mean_l1(f: np.ndarray) -> np.ndarray:
    f = f - f.mean()
    return f / np.abs(f).sum()


def rfs_filter_bank(support: int = 49) -> np.ndarray:
    """The 38 filters of the Root Filter Set (RFS) of Varma & Zisserman.

    With (u, v) the pixel offset rotated by orientation theta = pi k / 6,
    k = 0..5, the oriented filters are

        edge(u, v) = G(u; 3 s) G'(v; s),    bar(u, v) = G(u; 3 s) G''(v; s),

    for s = 1, 2, 4 (G' and G'' the first and second derivatives of the 1-d
    Gaussian G), each made zero-mean and L1-normalised, as in the authors'
    ``makeRFSfilters.m``.  The Laplacian of Gaussian (sigma = 10) is made
    zero-mean and L1-normalised too; the Gaussian (sigma = 10) is only
    L1-normalised (sum 1): zero-meaning it, as ``makeRFSfilters.m`` also does,
    would turn the bank's only low-pass filter into a band-pass one.

    Parameters
    ----------
    support : int, default=49
        Odd side length of every filter, in pixels.

    Returns
    -------
    bank : ndarray of shape (38, support, support), float64
        Filters 0-17 are edges (scale-major, then orientation), 18-35 bars in
        the same order, 36 the Gaussian and 37 the Laplacian of Gaussian.
        Row index grows downwards, so ``bank[i][r, c]`` weighs the pixel at
        offset (r - support // 2, c - support // 2).

    References
    ----------
    .. [1] Varma, M. and Zisserman, A. (2005). A statistical approach to
       texture classification from single images. IJCV 62(1/2), 61-81.
    """
    if isinstance(support, bool) or not isinstance(support, (int, np.integer)) or support < 3 or support % 2 == 0:
        raise ParameterError(f"support must be an odd integer >= 3; got {support!r}")
    half = support // 2
    # x to the right, y upwards, as in makeRFSfilters.m.
    x, y = np.meshgrid(np.arange(-half, half + 1), np.arange(half, -half - 1, -1))
    edges, bars = [], []
    for sigma_across, sigma_along in RFS_SCALES:
        for k in range(RFS_N_ORIENTATIONS):
            angle = np.pi * k / RFS_N_ORIENTATIONS
            u = np.cos(angle) * x - np.sin(angle) * y
            v = np.sin(angle) * x + np.cos(angle) * y
            along = _gauss1d(sigma_along, u, 0)
            edges.append(_zero_mean_l1(along * _gauss1d(sigma_across, v, 1)))
            bars.append(_zero_mean_l1(along * _gauss1d(sigma_across, v, 2)))
    r2 = x**2 + y**2
    s2 = RFS_ISOTROPIC_SIGMA**2
    gaussian = np.exp(-r2 / (2 * s2))
    log = gaussian * (r2 - 2 * s2) / s2**2
    return np.stack(edges + bars + [gaussian / gaussian.sum(), _zero_mean_l1(log)])


@lru_cache(maxsize=16)
def _bank_spectrum(support: int, fft_shape: tuple[int, int]) -> np.ndarray:
    """Conjugate real-FFT spectrum of the bank, centred at the origin (read-only)."""
    bank = rfs_filter_bank(support)
    padded = np.zeros((bank.shape[0],) + fft_shape)
    padded[:, :support, :support] = bank
    padded = np.roll(padded, (-(support // 2), -(support // 2)), axis=(1, 2))
    # Correlation, like cv2.filter2D: multiply by the conjugate spectrum.
    spectrum = np.conj(scipy.fft.rfft2(padded)).astype(np.complex64)
    spectrum.setflags(write=False)
    return spectrum


def _fft_length(min_length: int, step: int) -> int:
    """Smallest multiple of ``step`` >= ``min_length`` whose quotient FFTs fast."""
    return step * scipy.fft.next_fast_len(-(-min_length // step), real=True)


def _padded_axis(length: int, start: int, step: int, half: int) -> tuple[int, int]:
    """(before, total) padding of one axis for the folded FFT.

    ``before`` >= ``half`` is chosen so that output sample ``start`` lands on a
    multiple of ``step`` in padded coordinates; ``total`` leaves ``half``
    pixels after the image so that no needed output wraps around.
    """
    before = half + (-(half + start)) % step
    return before, _fft_length(before + length + half, step)


def _rfs_responses_on_grid(grey: np.ndarray, step: int, support: int) -> np.ndarray:
    """All 38 RFS correlations of ``grey`` on the grid of spacing ``step``.

    The image is reflect-padded (OpenCV's BORDER_REFLECT_101), multiplied by
    the bank's spectrum, and the spectrum is folded (aliased) by the grid step
    before the inverse FFT: the inverse transform of the s-fold-aliased
    spectrum is exactly the response sampled every s pixels, so only the
    sampled responses are ever computed.
    """
    half = support // 2
    rows, cols = grid_positions(grey.shape, step)
    top, height = _padded_axis(grey.shape[0], int(rows[0]), step, half)
    left, width = _padded_axis(grey.shape[1], int(cols[0]), step, half)
    padded = np.pad(grey, ((top, height - top - grey.shape[0]), (left, width - left - grey.shape[1])),
                    mode="reflect")
    spectrum = scipy.fft.rfft2(padded.astype(np.float32)) * _bank_spectrum(support, (height, width))
    folded = spectrum.reshape(spectrum.shape[0], step, height // step, -1).sum(axis=1) / np.float32(step)
    sampled_rows = scipy.fft.irfft2(folded, s=(height // step, width))
    first_row = (top + int(rows[0])) // step
    return sampled_rows[:, first_row:first_row + len(rows), left + cols]


def _contrast_normalise(responses: np.ndarray) -> np.ndarray:
    """F <- F log(1 + L / 0.03) / L with L = ||F||_2 over the last axis (0 where L = 0)."""
    norm = np.linalg.norm(responses, axis=-1, keepdims=True)
    gain = np.divide(np.log1p(norm / CONTRAST_CONSTANT), norm, out=np.zeros_like(norm), where=norm > 0)
    return responses * gain


def mr8_responses(grey: np.ndarray, *, pixel_step: int = 1, support: int = 49) -> np.ndarray:
    """MR8 responses of a grey image on a regular grid.

    The image is first normalised to zero mean and unit variance (constant
    images become all-zero), correlated with the 38 filters of
    :func:`rfs_filter_bank` (reflected borders), and reduced to 8 responses per
    pixel:

        [max_theta |edge_s1|, max_theta |edge_s2|, max_theta |edge_s4|,
         max_theta bar_s1, max_theta bar_s2, max_theta bar_s4, gaussian, log].

    Edge filters at theta and theta + pi differ only in sign, so the maximum of
    the absolute edge response over the six orientations in [0, pi) is the
    maximum over all twelve directions on the circle (full rotation
    invariance); bar filters are symmetric under a half turn.  Finally each
    8-vector F is contrast-normalised following Weber's law,
    F <- F log(1 + L / 0.03) / L with L = ||F||_2.

    Parameters
    ----------
    grey : ndarray of shape (H, W)
        Grey image, float in [0, 1].
    pixel_step : int, default=1
        Spacing of the output grid (:func:`~kcca_desc.kernels.image.features.grid_positions`).
    support : int, default=49
        Filter side length.

    Returns
    -------
    responses : ndarray of shape (n_rows, n_cols, 8), float32
        The MR8 vector at each grid pixel.

    See Also
    --------
    rfs_filter_bank : the filters.
    texture_features : this descriptor on any image, with positions.

    References
    ----------
    .. [1] Varma, M. and Zisserman, A. (2005). A statistical approach to
       texture classification from single images. IJCV 62(1/2), 61-81.
    """
    grey = np.asarray(grey)
    if grey.ndim != 2 or grey.size == 0:
        raise DataError(f"grey must be a non-empty 2-d array; got shape {grey.shape}")
    grey = grey.astype(np.float64)
    spread = grey.std()
    # Below a 16-bit grey level the image is flat; dividing by a rounding-error
    # spread would blow noise up into textures.
    normalised = (grey - grey.mean()) / spread if spread > _FLAT_STD else np.zeros_like(grey)
    raw = _rfs_responses_on_grid(normalised, _check_step(pixel_step, "pixel_step"), support)
    n_scales, n_orient = len(RFS_SCALES), RFS_N_ORIENTATIONS
    n_oriented = n_scales * n_orient
    grid_shape = raw.shape[1:]
    edge = np.abs(raw[:n_oriented]).reshape(n_scales, n_orient, *grid_shape).max(axis=1)
    bar = raw[n_oriented:2 * n_oriented].reshape(n_scales, n_orient, *grid_shape).max(axis=1)
    mr8 = np.concatenate([edge, bar, raw[2 * n_oriented:]], axis=0)
    return _contrast_normalise(np.moveaxis(mr8, 0, -1)).astype(np.float32)


def texture_features(image: np.ndarray, pixel_step: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel MR8 texture of an image's luminance (Hodosh et al. 2013, Section 3.3.1).

    Parameters
    ----------
    image : ndarray
        Any image accepted by :func:`~kcca_desc.kernels.image.features.as_float_rgb`.
    pixel_step : int, default=2
        Only pixels on the centred grid with this spacing are described.

    Returns
    -------
    positions : ndarray of shape (k, 2), float32
        (row, col) of each sampled pixel.
    descriptors : ndarray of shape (k, 8), float32
        Its contrast-normalised MR8 vector (:func:`mr8_responses`).

    See Also
    --------
    kcca_desc.kernels.image.features.colour_features : per-pixel CIELAB colour.
    kcca_desc.kernels.image.sift.dense_sift : dense SIFT descriptors.
    """
    grey = as_float_grey(image)
    responses = mr8_responses(grey, pixel_step=pixel_step)
    rows, cols = grid_positions(grey.shape, pixel_step)
    return _grid_points(rows, cols), responses.reshape(-1, 8)
