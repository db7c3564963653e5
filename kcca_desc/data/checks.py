"""Checks of a loaded data set before any feature is computed.

:func:`check_dataset` finds what would stop a run half-way: a split the run needs that the data
set lacks or leaves empty, an image with too few captions for the ``hodosh`` protocol, an image
file that cannot be decoded.  It records each problem in a
:class:`~kcca_desc.data.problems.ProblemLog` beside those the loader found, and
:func:`settle_problems` then raises them all in one error, or drops the bad items with one
warning.  Every check is generic over :class:`~kcca_desc.data.Dataset` and
:class:`~kcca_desc.data.ImageSource`, so a data set registered later is checked the same way.

Decoding every image costs little: :meth:`FileImages.check <kcca_desc.data.FileImages.check>`
decodes JPEGs at an eighth of their size, on threads (about a second and a half for the 8,091
Flickr8K images on one core); and the answers are kept in the cache, keyed by the images'
contents, so that a later run over the same files only hashes them (as it does for its features).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._core.cache import cache_key, cache_root, read_json_entry, write_json_entry
from .dataset import Dataset
from .images import ImageSource
from .problems import ProblemLog

__all__ = ["check_images", "check_dataset", "drop_items", "settle_problems"]


def check_images(images: ImageSource, *, indices: Iterable[int] | None = None,
                 n_jobs: int | None = None, cache: bool = True) -> list[tuple[int, str]]:
    """``(index, what is wrong)`` of every image (of ``indices``) that cannot be decoded.

    Parameters
    ----------
    images : ImageSource
    indices : iterable of int, optional
        The images to check (default: all).
    n_jobs : int, optional
        Threads (default: the CPU count, at most 8; decoders release the GIL).
    cache : bool, default=True
        Read the answers from the on-disk cache, and write them there: one checksummed entry
        keyed by every image's :meth:`~kcca_desc.data.ImageSource.check_key` (the files'
        contents) and the decoder's version.  A source without check keys, or an image whose key
        cannot be found (a missing file), is checked anew.
    """
    indices = list(range(len(images)) if indices is None else indices)
    keys = [images.check_key(i) for i in indices] if cache else None
    if keys is None or None in keys:
        answers = _answers(images, indices, n_jobs)
    else:
        import cv2  # the decoder of FileImages.check: its version decides what it rejects

        path = cache_root() / "image_checks" / f"{cache_key(images=keys, decoder=cv2.__version__)}.json"
        answers = read_json_entry(path)
        if answers is None:
            answers = _answers(images, indices, n_jobs)
            write_json_entry(path, answers)
    return [(i, problem) for i, problem in zip(indices, answers) if problem is not None]


def _answers(images: ImageSource, indices: list[int], n_jobs: int | None) -> list[str | None]:
    """``images.check(i)`` of each of ``indices``, on threads."""
    workers = n_jobs or min(8, os.cpu_count() or 1)
    with ThreadPoolExecutor(max(1, workers)) as pool:
        return list(pool.map(images.check, indices, chunksize=64))


def check_dataset(dataset: Dataset, problems: ProblemLog, *, splits: Mapping[str, str] = (),
                  views: Sequence[tuple[str, str]] = (), images: bool = True, cache: bool = True) -> None:
    """Record in ``problems`` everything about ``dataset`` that would stop a run.

    Parameters
    ----------
    dataset : Dataset
    problems : ProblemLog
        Where each problem is recorded (beside those of the loader).
    splits : mapping of str to str
        The splits the run needs, each with why (``{"dev": "--method kcca selects its models on
        it"}``): a missing or empty one is a fatal problem.
    views : sequence of (split, protocol)
        The retrieval views the run will build: under ``hodosh`` an image of the split with too
        few captions is a problem of that image.
    images : bool, default=True
        Decode every image of the needed splits (all images when no split is named).
    cache : bool, default=True
        Keep the images' answers in the on-disk cache (see :func:`check_images`).
    """
    source = dataset.metadata.get("source") or dataset.metadata.get("root") or dataset.name
    for split, why in dict(splits).items():
        if split not in dataset.splits:
            problems.add(source, None, f"data set {dataset.name!r} has no {split!r} split, but {why}; its "
                                       f"splits: {', '.join(sorted(dataset.splits)) or 'none'}", fatal=True)
        elif not len(dataset.splits[split]):
            problems.add(source, None, f"the {split!r} split of data set {dataset.name!r} has no images, "
                                       f"and {why}", fatal=True)
    for split, protocol in views:
        if protocol != "hodosh" or split not in dataset.splits:
            continue
        for i in dataset.splits[split]:
            n = len(dataset.captions[i])
            if dataset.hodosh_caption >= n:
                problems.add(dataset.images.location(int(i)), None,
                             f"has {n} captions; the hodosh protocol ({split!r} split) needs caption "
                             f"#{dataset.hodosh_caption}, so at least {dataset.hodosh_caption + 1}",
                             item=dataset.image_ids[i])
    if images:
        needed = [dataset.splits[s] for s in splits if s in dataset.splits]
        indices = np.unique(np.concatenate(needed)) if needed else np.arange(len(dataset))
        for i, problem in check_images(dataset.images, indices=indices.tolist(), cache=cache):
            problems.add(dataset.images.location(i), None, problem, item=dataset.image_ids[i])


def drop_items(dataset: Dataset, image_ids: Iterable[str]) -> Dataset:
    """``dataset`` without the images ``image_ids`` (and their captions); splits renumbered."""
    drop = set(image_ids)
    keep = np.array([i for i, image_id in enumerate(dataset.image_ids) if image_id not in drop], dtype=np.int64)
    new_index = np.full(len(dataset), -1, dtype=np.int64)
    new_index[keep] = np.arange(len(keep))
    splits = {}
    for split, indices in dataset.splits.items():
        moved = new_index[indices]
        splits[split] = moved[moved >= 0]
    return Dataset(name=dataset.name, images=dataset.images.subset(keep.tolist()),
                   captions=tuple(dataset.captions[i] for i in keep), splits=splits,
                   hodosh_caption=dataset.hodosh_caption, metadata=dataset.metadata)


def settle_problems(dataset: Dataset, problems: ProblemLog, *, skip_bad_items: bool = False) -> Dataset:
    """Raise every problem in one error, or drop the bad items with one warning.

    Parameters
    ----------
    dataset : Dataset
        The data set as loaded (the loader has left out the items its problems spoil already).
    problems : ProblemLog
    skip_bad_items : bool, default=False
        Drop the images a problem spoils (and the lines that name none) and warn, listing each
        problem and the number of images kept.  Fatal problems are raised all the same.

    Returns
    -------
    Dataset
        ``dataset`` without the bad items.

    Raises
    ------
    DataFormatError
        Listing every problem (when not skipping, or when one is fatal).
    """
    source = dataset.metadata.get("source") or dataset.metadata.get("root") or dataset.name
    if problems.fatal or (problems and not skip_bad_items):
        raise problems.error(source)
    kept = drop_items(dataset, problems.bad_items) if problems.bad_items & set(dataset.image_ids) else dataset
    problems.warn_dropped(source, len(kept))
    return kept
