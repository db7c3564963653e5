"""The image side of a system: visual-word features and the named image kernels.

:class:`ImageFeaturizer` turns images into spatial-pyramid histograms of colour, texture and
SIFT words (Hodosh, Young & Hockenmaier 2013, Section 4.1); :class:`ImageKernel` turns those
into cached Gram matrices with the kernel functions of :mod:`kcca_desc.kernels.image`.
"""

from .features import ImageFeaturizer
from .kernel import IMAGE_KERNELS, ImageKernel

__all__ = ["ImageFeaturizer", "ImageKernel", "IMAGE_KERNELS"]
