"""kcca_desc: classical kernel-CCA image-sentence ranking (Hodosh, Young & Hockenmaier 2013).

The stages, each usable alone: data sets (:mod:`kcca_desc.data`), caption preprocessing and
named text kernels (:mod:`kcca_desc.text`), image features and kernels
(:class:`ImageKernel`), the KCCA solver (:class:`KCCA`), systems
(:class:`ImageSentenceRanker`, :class:`NearestNeighbour`) and evaluation
(:mod:`kcca_desc.evaluate`).  Every problem a user can fix raises a :class:`KccaDescError`.
"""

from ._core.errors import (CacheError, DataError, InsufficientMemoryError, KccaDescError, MissingDataFileError,
                           MissingDependencyError, MissingModelFileError, ModelUnavailableError, NotFittedError,
                           ParameterError, UnreachableServiceError, UnwritableOutputError)
from .data import Dataset, load_dataset
from .evaluate import evaluate_fitted, evaluate_method, format_table
from .image import ImageKernel
from .kcca import KCCA
from .methods import ImageSentenceRanker, NearestNeighbour
from .text import Preprocessor, make_text_kernel

__version__ = "0.1.0"

__all__ = [
    "Dataset", "load_dataset", "Preprocessor", "make_text_kernel", "ImageKernel", "KCCA",
    "ImageSentenceRanker", "NearestNeighbour", "evaluate_fitted", "evaluate_method", "format_table",
    "KccaDescError", "ParameterError", "DataError", "MissingDataFileError", "MissingModelFileError",
    "ModelUnavailableError", "MissingDependencyError", "UnwritableOutputError", "CacheError",
    "InsufficientMemoryError", "NotFittedError", "UnreachableServiceError",
]
