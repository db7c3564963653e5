"""Spatial-pyramid histograms of visual words (Lazebnik, Schmid & Ponce 2006)."""

from __future__ import annotations

import numpy as np

from ..errors import DataError, ParameterError

__all__ = ["pyramid_histograms", "n_pyramid_cells"]


def n_pyramid_cells(levels: int) -> int:
    """Number of cells of a pyramid with levels 0..L: sum_l 4^l = (4^(L+1) - 1) / 3."""
    return (4 ** (levels + 1) - 1) // 3


def pyramid_histograms(words: np.ndarray, positions: np.ndarray, image_shape: tuple[int, int],
                       n_words: int, *, levels: int = 2) -> np.ndarray:
    """Per-cell visual-word histograms of a spatial pyramid.

    Level l splits the image into 2^l x 2^l equal cells; a feature at (row,
    col) falls in cell (floor(row 2^l / H), floor(col 2^l / W)).  Cells are
    ordered level 0, then level 1 row-major, then level 2 row-major, ... and
    every cell's histogram counts its features' words divided by the image's
    TOTAL feature count n:

        h_c(v) = |{features in cell c with word v}| / n,

    so each level's histograms sum to 1 and the level intersection lies in
    [0, 1] (Hodosh et al. 2013, Section 3.3.2, leave the cell normalisation
    open: ``docs/design.md``).  An image with no features gets all zeros.

    Parameters
    ----------
    words : ndarray of shape (n,), int
        Word index of each feature, in [0, n_words).
    positions : ndarray of shape (n, 2)
        (row, col) pixel coordinates, within [0, H) x [0, W).
    image_shape : (int, int)
        Image height H and width W.
    n_words : int
        Vocabulary size.
    levels : int, default=2
        Finest level L (>= 0).

    Returns
    -------
    histograms : ndarray of shape ((4^(L+1) - 1) / 3, n_words), float32

    See Also
    --------
    kcca_desc.kernels.image.codebook.Codebook : assigns the words.

    References
    ----------
    .. [1] Lazebnik, S., Schmid, C. and Ponce, J. (2006). Beyond bags of
       features: spatial pyramid matching for recognizing natural scene
       categories. CVPR.
    """
    for name, value in (("n_words", n_words), ("levels", levels)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ParameterError(f"{name} must be an integer; got {value!r}")
    if n_words < 1 or levels < 0:
        raise ParameterError(f"need n_words >= 1 and levels >= 0; got n_words={n_words}, levels={levels}")
    height, width = (int(v) for v in image_shape)
    if height < 1 or width < 1:
        raise DataError(f"image_shape must be positive; got {tuple(image_shape)}")
    words = np.asarray(words)
    positions = np.asarray(positions, dtype=np.float64)
    if words.ndim != 1 or positions.shape != (len(words), 2):
        raise DataError(
            f"words must have shape (n,) and positions (n, 2); got {words.shape} and {positions.shape}"
        )
    if len(words) and not np.issubdtype(words.dtype, np.integer):
        raise DataError(f"words must be integers; got dtype {words.dtype}")
    if len(words) and (words.min() < 0 or words.max() >= n_words):
        raise DataError(f"words must lie in [0, {n_words}); got range [{words.min()}, {words.max()}]")
    if not np.all(np.isfinite(positions)) or np.any(positions < 0) or \
            np.any(positions[:, 0] >= height) or np.any(positions[:, 1] >= width):
        raise DataError(f"positions must lie within the image [0, {height}) x [0, {width})")

    n_cells = n_pyramid_cells(levels)
    if len(words) == 0:
        return np.zeros((n_cells, n_words), dtype=np.float32)
    bins = []
    for level in range(levels + 1):
        side = 2**level
        first_cell = n_pyramid_cells(level - 1) if level else 0
        cell_row = np.minimum((positions[:, 0] * side / height).astype(np.int64), side - 1)
        cell_col = np.minimum((positions[:, 1] * side / width).astype(np.int64), side - 1)
        bins.append((first_cell + cell_row * side + cell_col) * n_words + words)
    counts = np.bincount(np.concatenate(bins), minlength=n_cells * n_words)
    return (counts.reshape(n_cells, n_words) / len(words)).astype(np.float32)
