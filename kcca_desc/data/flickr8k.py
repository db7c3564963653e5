"""The Flickr8K data set (Hodosh, Young & Hockenmaier 2013) from its distribution files.

Expected layout of the data directory (the file names of the original release)::

    Flickr8k.token.txt          IMG.jpg#N<TAB>caption            (N = 0..4)
    Flickr8k.lemma.token.txt    the same captions, lemmatised
    Flickr_8k.trainImages.txt   one image file name per line (6,000)
    Flickr_8k.devImages.txt     (1,000)
    Flickr_8k.testImages.txt    (1,000)
    images/                     the 8,091 image files

The release has one known flaw: the caption file lists the five captions of
``2258277193_586949ec62.jpg`` a second time under the name
``2258277193_586949ec62.jpg.1``, an image that does not exist.  The loader
skips those entries with a warning.  The 91 images that are in no split stay in
the data set without a split.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from ._textfiles import DataFormatError, iter_fields, read_lines
from .dataset import Dataset
from .images import FileImages

__all__ = ["load_flickr8k", "resolve_flickr8k_root", "FLICKR8K_ENV", "SPLIT_FILES", "CAPTION_FILES"]

FLICKR8K_ENV = "KCCA_DESC_FLICKR8K"

CAPTION_FILES = {"raw": "Flickr8k.token.txt", "lemma": "Flickr8k.lemma.token.txt"}

SPLIT_FILES = {
    "train": "Flickr_8k.trainImages.txt",
    "dev": "Flickr_8k.devImages.txt",
    "test": "Flickr_8k.testImages.txt",
}

# Caption-file entries of the original release that name no image (see the module docstring).
KNOWN_SPURIOUS_ENTRIES = frozenset({"2258277193_586949ec62.jpg.1"})


def resolve_flickr8k_root(root: str | os.PathLike | None = None) -> Path:
    """The Flickr8K directory: ``root``, else ``$KCCA_DESC_FLICKR8K``.

    Raises
    ------
    FileNotFoundError
        Saying how to point the toolkit at the data when neither is given or
        the directory does not exist.
    """
    if root is None:
        root = os.environ.get(FLICKR8K_ENV)
        if not root:
            raise FileNotFoundError(
                "Flickr8K data location unknown: pass root=<directory> (CLI: --data-root) or set "
                f"${FLICKR8K_ENV} to the directory holding {CAPTION_FILES['raw']}, "
                f"{', '.join(SPLIT_FILES.values())} and images/"
            )
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"Flickr8K directory not found: {root}")
    return root


def _read_captions(path: Path, images_dir: Path, on_disk: set[str]) -> dict[str, list[str]]:
    """Captions per image from a ``IMG#N<TAB>caption`` file, validated.

    Caption numbers of each image must run 0..n-1 (in any order); the caption
    id ``IMG#N`` of the data set is then exactly the file's id.
    """
    numbered: dict[str, dict[int, str]] = {}
    first_line: dict[tuple[str, int], int] = {}
    skipped: set[str] = set()
    for number, (caption_id, caption) in iter_fields(path, read_lines(path, "Flickr8K caption file"), 2):
        image_id, hash_sign, k = caption_id.rpartition("#")
        if not hash_sign or not image_id or not (k.isascii() and k.isdigit()):
            raise DataFormatError(path, number, f"caption id {caption_id!r} is not of the form IMAGE#N")
        if image_id in KNOWN_SPURIOUS_ENTRIES:
            skipped.add(image_id)
            continue
        if not caption:
            raise DataFormatError(path, number, f"caption {caption_id} is empty")
        captions = numbered.setdefault(image_id, {})
        key = (image_id, int(k))
        if key in first_line:
            raise DataFormatError(
                path, number, f"duplicate caption id {caption_id} (first seen on line {first_line[key]})"
            )
        captions[int(k)] = caption
        first_line[key] = number
        if image_id not in on_disk:
            raise DataFormatError(path, number, f"image {image_id!r} has no file in {images_dir}")
    for image_id in sorted(skipped):
        warnings.warn(
            f"{path}: skipped the captions of {image_id!r}, a known spurious entry of the "
            "Flickr8K release that names no image",
            stacklevel=3,
        )
    result = {}
    for image_id, captions in numbered.items():
        if sorted(captions) != list(range(len(captions))):
            raise DataFormatError(
                path, None,
                f"image {image_id!r} has captions numbered {sorted(captions)}; numbers must run "
                f"0..{len(captions) - 1}",
            )
        result[image_id] = [captions[k] for k in range(len(captions))]
    return result


def _read_split(path: Path, split: str, index: dict[str, int], split_of: dict[int, str]) -> list[int]:
    """Image indices listed in a split file (one image name per line).

    ``split_of`` maps the indices already assigned to a split to its name; it
    is updated with this split's images.
    """
    indices: list[int] = []
    seen: dict[str, int] = {}
    for number, (image_id,) in iter_fields(path, read_lines(path, "Flickr8K split file"), 1, sep=None):
        if image_id not in index:
            raise DataFormatError(path, number, f"unknown image {image_id!r} (no captions for it)")
        if image_id in seen:
            raise DataFormatError(path, number, f"image {image_id!r} listed twice (first on line {seen[image_id]})")
        if index[image_id] in split_of:
            raise DataFormatError(
                path, number, f"image {image_id!r} is also in split {split_of[index[image_id]]!r}"
            )
        seen[image_id] = number
        indices.append(index[image_id])
    split_of.update(dict.fromkeys(indices, split))
    return indices


def load_flickr8k(root: str | os.PathLike | None = None, captions: str = "raw") -> Dataset:
    """Load Flickr8K: 8,091 images with 5 captions each and the official splits.

    Images are referenced, not decoded (loading takes a fraction of a second).

    Parameters
    ----------
    root : path-like, optional
        The data directory (layout in the module docstring).  Defaults to
        ``$KCCA_DESC_FLICKR8K``.
    captions : {"raw", "lemma"}, default="raw"
        Read ``Flickr8k.token.txt`` (raw captions) or
        ``Flickr8k.lemma.token.txt`` (the release's lemmatised copy).

    Returns
    -------
    Dataset
        Named ``"flickr8k"``; images sorted by file name; splits ``"train"``,
        ``"dev"`` and ``"test"`` (6,000 / 1,000 / 1,000 images; the remaining
        91 images belong to no split).  ``hodosh_caption`` is 2, the caption
        the human judgments were collected on.

    Raises
    ------
    FileNotFoundError
        When the directory, a caption or split file, or ``images/`` is missing.
    DataFormatError
        Naming the file and line: a malformed line, an empty caption, a
        duplicate caption id, caption numbers with gaps, an image without a
        file, an unknown or repeated image in a split file, an image in two
        splits.

    Warns
    -----
    UserWarning
        When the release's spurious entry ``2258277193_586949ec62.jpg.1`` is skipped.

    References
    ----------
    M. Hodosh, P. Young and J. Hockenmaier (2013). Framing image description as
    a ranking task: data, models and evaluation metrics. JAIR 47, 853-899.
    """
    if captions not in CAPTION_FILES:
        raise ValueError(f"captions must be one of {sorted(CAPTION_FILES)}, got {captions!r}")
    root = resolve_flickr8k_root(root)
    images_dir = root / "images"
    if not images_dir.is_dir():
        raise FileNotFoundError(f"Flickr8K image directory not found: {images_dir}")
    on_disk = set(os.listdir(images_dir))

    by_image = _read_captions(root / CAPTION_FILES[captions], images_dir, on_disk)
    image_ids = sorted(by_image)
    index = {image_id: i for i, image_id in enumerate(image_ids)}

    split_of: dict[int, str] = {}
    splits = {
        split: _read_split(root / file_name, split, index, split_of)
        for split, file_name in SPLIT_FILES.items()
    }

    return Dataset(
        name="flickr8k",
        images=FileImages([images_dir / image_id for image_id in image_ids], image_ids),
        captions=tuple(tuple(by_image[image_id]) for image_id in image_ids),
        splits=splits,
        hodosh_caption=2,
        metadata={"root": str(root), "captions": captions},
    )
