"""Image features and image kernels (Hodosh et al. 2013, Section 3.3; Lazebnik et al. 2006).

Features: per-pixel CIELAB colour, MR8 texture responses and dense SIFT on a grid, quantised
against seeded k-means codebooks into spatial-pyramid histograms. Kernels: histogram
intersection and the spatial-pyramid kernel, with Numba (CPU) and CuPy (GPU) backends.
"""

from .codebook import Codebook, nearest_centres
from .features import as_float_grey, as_float_rgb, colour_features, grid_positions
from .histograms import n_pyramid_cells, pyramid_histograms
from .intersection import histogram_intersection
from .mr8 import mr8_responses, rfs_filter_bank, texture_features
from .pyramid import image_kernel, pyramid_cell_weights, pyramid_kernel, whole_image_cell_weights
from .sift import dense_sift

__all__ = [
    "as_float_rgb", "as_float_grey", "grid_positions", "colour_features",
    "rfs_filter_bank", "mr8_responses", "texture_features", "dense_sift",
    "Codebook", "nearest_centres", "pyramid_histograms", "n_pyramid_cells",
    "histogram_intersection", "pyramid_kernel", "pyramid_cell_weights", "whole_image_cell_weights", "image_kernel",
]
