"""The image side of a system: visual-word features and the named image kernels.

:class:`ImageFeaturizer` turns images into spatial-pyramid histograms of colour, texture and
SIFT words (Hodosh, Young & Hockenmaier 2013, Section 3.3); :class:`ImageKernel` turns those
into cached Gram matrices with the kernel functions of :mod:`kcca_desc.kernels.image`.
Feature types and named image kernels are registered in :data:`FEATURE_TYPES` and
:data:`IMAGE_KERNELS`.
"""

from .features import FEATURE_TYPES, FeatureType, ImageFeaturizer
from .kernel import IMAGE_KERNELS, ImageKernel, ImageKernelSpec

__all__ = ["ImageFeaturizer", "FeatureType", "FEATURE_TYPES", "ImageKernel", "ImageKernelSpec", "IMAGE_KERNELS"]
