"""Flickr30K and MS-COCO on the Karpathy split, and their test pools.

The papers that followed Hodosh et al. (2013) report Flickr30K and MS-COCO on
the split of Karpathy & Fei-Fei (2015), read from their ``dataset_flickr30k.json``
and ``dataset_coco.json`` with the images in a directory beside them:

==============  =====================  ================================================
pool            test images per pool   reported figure
==============  =====================  ================================================
flickr30k_1k    1,000 (one pool)       the metrics of the pool
coco_5k         5,000 (one pool)       the metrics of the pool
coco_1k         1,000 (five folds)     the mean of each metric over the five folds of
                                       the 5,000 test images (Faghri et al. 2018, VSE++)
==============  =====================  ================================================

Every pool keeps five captions per image (the ``karpathy`` protocol of
:meth:`Dataset.view`): annotation ranks the 5n captions of the pool for each
image, search the n images for each caption.  A few COCO images have six or
seven captions; like the papers, the loaders keep the first five (and record
how many images were cut).  Images are referenced by path and read only when
features are computed (:class:`~kcca_desc.data.FileImages`).

References
----------
A. Karpathy and L. Fei-Fei (2015). Deep visual-semantic alignments for generating
image descriptions. CVPR.

F. Faghri, D. J. Fleet, J. R. Kiros and S. Fidler (2018). VSE++: Improving
visual-semantic embeddings with hard negatives. BMVC.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np

from .._core.errors import DataError, ParameterError
from .._core.registry import Registry
from .byod import load_karpathy_json
from .dataset import Dataset, RetrievalView

__all__ = ["EvaluationPool", "EVALUATION_POOLS", "load_flickr30k", "load_coco", "normalise_caption"]

#: Captions per image of the Flickr30K and COCO protocols.
CAPTIONS_PER_IMAGE = 5


@dataclass(frozen=True)
class EvaluationPool:
    """A test pool of a benchmark: its split, size and how folds are averaged.

    Attributes
    ----------
    dataset : str
        The data set it belongs to (``"flickr30k"``, ``"coco"``).
    split : str
        The split its images come from.
    pool_images : int
        Images per pool.
    n_folds : int
        The split is cut into ``n_folds`` consecutive pools of ``pool_images`` images
        (in the order of the JSON file, as VSE++ does); the reported figure is the
        mean of each metric over the folds.
    captions_per_image : int
        Captions per pool image (the ``karpathy`` protocol).
    """

    dataset: str
    split: str = "test"
    pool_images: int = 1000
    n_folds: int = 1
    captions_per_image: int = CAPTIONS_PER_IMAGE

    def __post_init__(self):
        for name in ("pool_images", "n_folds", "captions_per_image"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ParameterError(f"EvaluationPool.{name} must be a positive integer, got {value!r}")

    def record(self) -> dict:
        """What a result records of the pool (protocol, pool size, captions, split, folds)."""
        return {"dataset": self.dataset, "protocol": "karpathy", "split": self.split,
                "pool_images": int(self.pool_images), "captions_per_image": int(self.captions_per_image),
                "n_folds": int(self.n_folds),
                "fold_averaging": "mean over folds of each metric" if self.n_folds > 1 else "none"}

    def views(self, dataset: Dataset) -> list[RetrievalView]:
        """The pools of ``dataset``: one :class:`RetrievalView` per fold, in order.

        Raises
        ------
        ValueError
            When the split does not hold ``pool_images * n_folds`` images, or an image
            has other than ``captions_per_image`` captions.
        """
        idx = dataset.split_indices(self.split)
        expected = self.pool_images * self.n_folds
        if idx.size != expected:
            raise DataError(
                f"data set {dataset.name!r}: split {self.split!r} has {idx.size} images, but a pool of "
                f"{self.n_folds} x {self.pool_images} images needs {expected}")
        wrong = [dataset.image_ids[i] for i in idx if len(dataset.captions[i]) != self.captions_per_image]
        if wrong:
            raise DataError(f"data set {dataset.name!r}: image {wrong[0]!r} (and {len(wrong) - 1} more) has "
                             f"not {self.captions_per_image} captions")
        if self.n_folds == 1:
            return [dataset.view(self.split, "karpathy")]
        folds = {self.fold_name(k): idx[k * self.pool_images:(k + 1) * self.pool_images]
                 for k in range(self.n_folds)}
        # One data set holding every fold as a split, so each view is built by Dataset.view.
        folded = dataclasses.replace(dataset, splits={**dataset.splits, **folds})
        return [folded.view(name, "karpathy") for name in folds]

    def fold_name(self, k: int) -> str:
        """Split name of fold ``k`` (0-based) in results: ``"test/fold1of5"``..."""
        return f"{self.split}/fold{k + 1}of{self.n_folds}"


#: Name -> :class:`EvaluationPool` of the published Flickr30K and COCO test pools.
EVALUATION_POOLS: Registry[EvaluationPool] = Registry("evaluation pool")
EVALUATION_POOLS.register("flickr30k_1k", EvaluationPool("flickr30k", pool_images=1000),
                    help="Flickr30K, Karpathy test split: 1,000 images, 5,000 captions")
EVALUATION_POOLS.register("coco_5k", EvaluationPool("coco", pool_images=5000),
                    help="MS-COCO, Karpathy test split: 5,000 images, 25,000 captions")
EVALUATION_POOLS.register("coco_1k", EvaluationPool("coco", pool_images=1000, n_folds=5),
                    help="MS-COCO 1K: mean over the five folds of 1,000 images of the 5K test split")


def normalise_caption(text: str) -> str:
    """One line of single-spaced text: COCO captions carry newlines, tabs and doubled spaces."""
    return " ".join(text.split())


def _load(path, image_root, name: str) -> Dataset:
    data = load_karpathy_json(path, image_root)
    cut = sum(len(c) > CAPTIONS_PER_IMAGE for c in data.captions)
    short = [data.image_ids[i] for i, c in enumerate(data.captions) if len(c) < CAPTIONS_PER_IMAGE]
    if short:
        raise DataError(f"{path}: image {short[0]!r} (and {len(short) - 1} more) has fewer than "
                         f"{CAPTIONS_PER_IMAGE} captions; the {name} protocol needs {CAPTIONS_PER_IMAGE} per image")
    captions = [[normalise_caption(c) for c in caps[:CAPTIONS_PER_IMAGE]] for caps in data.captions]
    metadata = {**data.metadata, "captions_per_image": CAPTIONS_PER_IMAGE, "images_with_captions_cut": cut,
                "split_sizes": {split: int(idx.size) for split, idx in data.splits.items()}}
    return Dataset(name=name, images=data.images, captions=captions, splits=data.splits, metadata=metadata)


def load_flickr30k(path: str | os.PathLike, image_root: str | os.PathLike) -> Dataset:
    """Flickr30K from Karpathy's ``dataset_flickr30k.json`` and its image directory.

    Splits ``train`` (29,000 images), ``dev`` (``val``, 1,014) and ``test`` (1,000) on the
    real file; test pool :data:`EVALUATION_POOLS` ``["flickr30k_1k"]``.  Captions are
    whitespace-normalised (:func:`normalise_caption`), five per image.

    Raises
    ------
    FileNotFoundError, DataFormatError
        As :func:`~kcca_desc.data.load_karpathy_json`.
    ValueError
        When an image has fewer than five captions.
    """
    return _load(path, image_root, "flickr30k")


def load_coco(path: str | os.PathLike, image_root: str | os.PathLike) -> Dataset:
    """MS-COCO from Karpathy's ``dataset_coco.json`` and the directory holding ``train2014/``, ``val2014/``.

    Splits ``train`` (``train`` and ``restval``: 113,287 images), ``dev`` (``val``, 5,000) and
    ``test`` (5,000) on the real file; test pools ``coco_5k`` and ``coco_1k`` of
    :data:`EVALUATION_POOLS`.  The first five captions of each image are kept, whitespace-normalised;
    errors as :func:`load_flickr30k`.
    """
    return _load(path, image_root, "coco")
