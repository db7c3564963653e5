"""Regularised kernel canonical correlation analysis (Hodosh, Young & Hockenmaier 2013, Section 3.2)."""

from .estimator import KCCA
from .incomplete_cholesky import (
    CallableKernelColumns,
    CenteredMatrixColumns,
    KernelColumns,
    MatrixColumns,
    incomplete_cholesky,
)
from .linear import LinearCCA
from .precomputed import PrecomputedKernel
from .preprocessing import KernelCentering, kernel_power, scale_diagonal
from .reference import reference_kcca
from .scoring import CanonicalScoreMixin, heldout_correlations

__all__ = [
    "KCCA",
    "LinearCCA",
    "PrecomputedKernel",
    "CanonicalScoreMixin",
    "heldout_correlations",
    "KernelColumns",
    "CallableKernelColumns",
    "MatrixColumns",
    "CenteredMatrixColumns",
    "incomplete_cholesky",
    "KernelCentering",
    "kernel_power",
    "scale_diagonal",
    "reference_kcca",
]
