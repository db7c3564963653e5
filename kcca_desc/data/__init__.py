"""Data sets, image sources and retrieval protocol views."""

from .dataset import PROTOCOLS, Dataset, RetrievalView
from .images import ArrayImages, FileImages, ImageReadError, ImageSource

__all__ = [
    "PROTOCOLS",
    "Dataset",
    "RetrievalView",
    "ImageSource",
    "FileImages",
    "ArrayImages",
    "ImageReadError",
]
