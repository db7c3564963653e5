"""Caption preprocessing and the named text kernels of the toolkit (SPEC §2, §4)."""

from .named_kernels import TEXT_KERNELS, TextKernel, make_text_kernel
from .preprocess import Preprocessor

__all__ = ["Preprocessor", "TextKernel", "make_text_kernel", "TEXT_KERNELS"]
