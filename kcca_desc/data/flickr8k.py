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
from pathlib import Path

from .._core.errors import MissingDataFileError, ParameterError
from ._textfiles import iter_fields, read_lines
from .dataset import Dataset
from .images import FileImages
from .problems import ProblemLog, file_fingerprint, warn_data_once

__all__ = ["load_flickr8k", "resolve_flickr8k_root", "FLICKR8K_ENV", "SPLIT_FILES", "CAPTION_FILES"]

FLICKR8K_ENV = "KCCA_DESC_FLICKR8K"

CAPTION_FILES = {"raw": "Flickr8k.token.txt", "lemma": "Flickr8k.lemma.token.txt"}

SPLIT_FILES = {
    "train": "Flickr_8k.trainImages.txt",
    "dev": "Flickr_8k.devImages.txt",
    "test": "Flickr_8k.testImages.txt",
}

#: What a Flickr8K directory holds, as the errors that point at one name it.
_LAYOUT = f"{CAPTION_FILES['raw']}, {', '.join(SPLIT_FILES.values())} and images/"

# Caption-file entries of the original release that name no image (see the module docstring).
KNOWN_SPURIOUS_ENTRIES = frozenset({"2258277193_586949ec62.jpg.1"})


def resolve_flickr8k_root(root: str | os.PathLike | None = None) -> Path:
    """The Flickr8K directory: ``root``, else ``$KCCA_DESC_FLICKR8K``.

    Raises
    ------
    MissingDataFileError
        A ``FileNotFoundError`` saying how to point the toolkit at the data when neither is
        given, the directory does not exist, or ``root`` is a file (one of the release's).
    """
    if root is None:
        root = os.environ.get(FLICKR8K_ENV)
        if not root:
            raise MissingDataFileError(
                "Flickr8K data location unknown: pass root=<directory> (CLI: --data-root) or set "
                f"${FLICKR8K_ENV} to the directory holding {_LAYOUT}"
            )
    root = Path(root)
    if root.is_file():
        # The commonest slip is naming one of the release's files (the caption file) instead of its folder.
        raise MissingDataFileError(f"Flickr8K directory {root} is a file, not a directory: give the directory "
                                   f"holding {_LAYOUT} (for this file, {root.parent})")
    if not root.is_dir():
        raise MissingDataFileError(f"Flickr8K directory not found: {root}")
    return root


def _read_captions(path: Path, images_dir: Path, on_disk: set[str], problems: ProblemLog) -> dict[str, list[str]]:
    """Captions per image from a ``IMG#N<TAB>caption`` file, each problem recorded in ``problems``.

    Caption numbers of each image must run 0..n-1 (in any order); the caption
    id ``IMG#N`` of the data set is then exactly the file's id.
    """
    numbered: dict[str, dict[int, str]] = {}
    first_line: dict[tuple[str, int], int] = {}
    skipped: set[str] = set()
    without_file: set[str] = set()
    lines = read_lines(path, "Flickr8K caption file", problems)
    for number, (caption_id, caption) in iter_fields(path, lines, 2, problems=problems):
        image_id, hash_sign, k = caption_id.rpartition("#")
        if not hash_sign or not image_id or not (k.isascii() and k.isdigit()):
            problems.add(path, number, f"caption id {caption_id!r} is not of the form IMAGE#N")
            continue
        if image_id in KNOWN_SPURIOUS_ENTRIES:
            skipped.add(image_id)
            continue
        captions = numbered.setdefault(image_id, {})
        key = (image_id, int(k))
        if not caption:
            problems.add(path, number, f"caption {caption_id} is empty", item=image_id)
        elif key in first_line:
            problems.add(path, number, f"duplicate caption id {caption_id} (first seen on line {first_line[key]})",
                         item=image_id)
        else:
            captions[int(k)] = caption
            first_line[key] = number
        if image_id not in on_disk and image_id not in without_file:
            without_file.add(image_id)
            problems.add(path, number, f"image {image_id!r} has no file in {images_dir}", item=image_id)
    for image_id in sorted(skipped):
        warn_data_once(file_fingerprint(path), f"{path}: skipped the captions of {image_id!r}, a known spurious "
                                               "entry of the Flickr8K release that names no image")
    bad = problems.bad_items
    result = {}
    for image_id, captions in numbered.items():
        if sorted(captions) != list(range(len(captions))) and image_id not in bad:
            problems.add(path, None, f"image {image_id!r} has captions numbered {sorted(captions)}; numbers must "
                                     f"run 0..{len(captions) - 1}", item=image_id)
        result[image_id] = [captions[k] for k in sorted(captions)]
    return result


def _read_split(path: Path, split: str, index: dict[str, int], split_of: dict[str, str],
                problems: ProblemLog) -> list[str]:
    """Image names listed in a split file (one image name per line), each problem recorded.

    ``split_of`` maps the images already assigned to a split to its name; it is updated with
    this split's images.
    """
    listed: list[str] = []
    seen: dict[str, int] = {}
    lines = read_lines(path, "Flickr8K split file", problems)
    for number, (image_id,) in iter_fields(path, lines, 1, sep=None, problems=problems):
        if image_id not in index:
            problems.add(path, number, f"unknown image {image_id!r} (no captions for it)")
        elif image_id in seen:
            problems.add(path, number, f"image {image_id!r} listed twice (first on line {seen[image_id]})")
        elif image_id in split_of:
            problems.add(path, number, f"image {image_id!r} is also in split {split_of[image_id]!r}", item=image_id)
        else:
            seen[image_id] = number
            listed.append(image_id)
    split_of.update(dict.fromkeys(listed, split))
    return listed


def load_flickr8k(root: str | os.PathLike | None = None, *, captions: str = "raw",
                  problems: ProblemLog | None = None) -> Dataset:
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
    problems : ProblemLog, optional
        Where to record each problem of the files; the images they spoil are left out of the
        data set, and the caller decides whether to raise (:meth:`ProblemLog.raise_if_any`).
        Without it, every problem found is raised together in one :class:`DataFormatError`.

    Returns
    -------
    Dataset
        Named ``"flickr8k"``; images sorted by file name; splits ``"train"``,
        ``"dev"`` and ``"test"`` (6,000 / 1,000 / 1,000 images; the remaining
        91 images belong to no split).  ``hodosh_caption`` is 2, the caption
        the human judgments were collected on.

    Raises
    ------
    MissingDataFileError
        When the directory, a caption or split file, or ``images/`` is missing (a ``FileNotFoundError``;
        when all of them are, one saying that the directory is not Flickr8K's).
    DataFormatError
        Listing every problem, each naming the file and line: a malformed line, an empty caption, a
        duplicate caption id, caption numbers with gaps, an image without a
        file, an unknown or repeated image in a split file, an image in two
        splits.

    Warns
    -----
    UserWarning
        When the release's spurious entry ``2258277193_586949ec62.jpg.1`` is skipped (once per
        caption file and process: :func:`~kcca_desc.data.problems.warn_data_once`).

    References
    ----------
    M. Hodosh, P. Young and J. Hockenmaier (2013). Framing image description as
    a ranking task: data, models and evaluation metrics. JAIR 47, 853-899.
    """
    if captions not in CAPTION_FILES:
        raise ParameterError(f"captions must be one of {sorted(CAPTION_FILES)}, got {captions!r}")
    root = resolve_flickr8k_root(root)
    if not any((root / name).exists() for name in (CAPTION_FILES["raw"], *SPLIT_FILES.values(), "images")):
        # A folder above or beside the data: say what belongs in it rather than name the first file missed.
        raise MissingDataFileError(f"{root} is not a Flickr8K directory: none of {_LAYOUT} is in it; give the "
                                   "directory that holds them")
    images_dir = root / "images"
    if not images_dir.is_dir():
        raise MissingDataFileError(f"Flickr8K image directory not found: {images_dir}")
    on_disk = set(os.listdir(images_dir))

    log = ProblemLog() if problems is None else problems
    by_image = _read_captions(root / CAPTION_FILES[captions], images_dir, on_disk, log)
    split_of: dict[str, str] = {}
    listed = {split: _read_split(root / file_name, split, by_image, split_of, log)
              for split, file_name in SPLIT_FILES.items()}
    if problems is None:
        log.raise_if_any(root)
    image_ids = sorted(set(by_image) - log.bad_items)
    index = {image_id: i for i, image_id in enumerate(image_ids)}

    return Dataset(
        name="flickr8k",
        images=FileImages([images_dir / image_id for image_id in image_ids], image_ids),
        captions=tuple(tuple(by_image[image_id]) for image_id in image_ids),
        splits={split: [index[i] for i in names if i in index] for split, names in listed.items()},
        hodosh_caption=2,
        metadata={"root": str(root), "captions": captions},
    )
