"""Caption preprocessing and the named text kernels of the toolkit.

Preprocessing follows Hodosh, Young & Hockenmaier (2013), Section 4.1.1; the text kernels are
those of its Sections 3.4 (BoW, TagRank, Tri) and 3.5 (Tri with lexical similarities).
"""

from .named_kernels import (TEXT_KERNELS, WORD_SIMILARITIES, BagOfWords, TagRankKernel, TextKernel, TextKernelSpec,
                            TextStatistics, TrainingText, Trigram, make_text_kernel)
from .preprocess import Preprocessor

__all__ = ["Preprocessor", "TextKernel", "make_text_kernel", "TEXT_KERNELS", "WORD_SIMILARITIES", "TextKernelSpec",
           "BagOfWords", "TagRankKernel", "Trigram", "TrainingText", "TextStatistics"]
