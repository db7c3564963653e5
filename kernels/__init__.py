"""Reusable image and text kernel functions with Numba (CPU) and CuPy (GPU) backends.

This package never imports :mod:`kcca_desc`.

Image kernels (:mod:`kcca_desc.kernels.image`): :func:`histogram_intersection`, :func:`pyramid_kernel`,
:func:`image_kernel`. Text kernels (:mod:`kcca_desc.kernels.text`): :func:`bow_kernel`,
:func:`tagrank_kernel`, :func:`trigram_kernel`, with word similarities in
:mod:`kcca_desc.kernels.text.similarity`. Combining kernels (:mod:`kcca_desc.kernels.combine`):
centring and normalisation with training statistics, weighted sums, centred kernel alignment and
alignment-based weights (Cortes, Mohri & Rostamizadeh 2012), :class:`KernelCombination`.
"""

from ._backend import BACKENDS, cupy_available, resolve_backend
from .combine import (ALIGNMENT_METHODS, NORMALIZATIONS, KernelCombination, KernelStatistics, alignment_weights,
                      alignment_weights_from_products, centered_alignment, centered_inner, kernel_statistics, normalize_cross_kernel,
                      normalize_train_kernel, weighted_sum)
from .image import histogram_intersection, image_kernel, pyramid_cell_weights, pyramid_kernel
from .text import bow_kernel, document_idf, subsequence_features, tagrank_kernel, trigram_kernel

__all__ = [
    "BACKENDS", "cupy_available", "resolve_backend",
    "histogram_intersection", "pyramid_kernel", "pyramid_cell_weights", "image_kernel",
    "bow_kernel", "document_idf", "tagrank_kernel", "trigram_kernel", "subsequence_features",
    "NORMALIZATIONS", "ALIGNMENT_METHODS", "KernelStatistics", "kernel_statistics", "normalize_train_kernel",
    "normalize_cross_kernel", "weighted_sum", "centered_inner", "centered_alignment", "alignment_weights",
    "alignment_weights_from_products",
    "KernelCombination",
]
