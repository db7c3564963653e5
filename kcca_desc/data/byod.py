"""Bring-your-own-data loaders: Karpathy-style JSON and a plain TSV format.

Both produce a :class:`~kcca_desc.data.Dataset` of image files with their
captions and ``train`` / ``dev`` / ``test`` splits.  Split names follow the
toolkit's convention; the aliases in :data:`SPLIT_ALIASES` translate the names
used by Karpathy & Fei-Fei's split files (``val`` is the development split,
``restval`` extra training images).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._core.errors import MissingDataFileError
from ._textfiles import iter_fields, read_lines, require_file, shorten
from .dataset import Dataset
from .images import FileImages
from .problems import DataFormatError, ProblemLog

__all__ = ["SPLIT_ALIASES", "load_karpathy_json", "load_tsv"]

SPLIT_ALIASES = {"train": "train", "restval": "train", "dev": "dev", "val": "dev", "test": "test"}

TSV_HEADER = ("image_path", "caption", "split")


def _require_an_image(path: Path, image_root: Path, image_paths: dict[str, Path]) -> None:
    """Raise when not one of ``image_paths`` (image id -> file) is a file: the image folder is wrong.

    A list of every image as not found would not say so, and ``--skip-bad-items`` would keep
    nothing.  Stops at the first image found: one file status when the folder is right.
    """
    if image_paths and all(_image_file_problem(image) for image in image_paths.values()):
        raise DataFormatError(path, None, f"none of its {len(image_paths)} images is under "
                                          f"{os.path.abspath(image_root)} (the first: {next(iter(image_paths))}): "
                                          "give image_root (CLI: --image-root), the folder its image paths are "
                                          "relative to")


def _image_file_problem(path: Path) -> str | None:
    """Why ``path`` is no image file, or None when it is a file.

    A name the file system rejects (too long...) is a file not found, not an error of its own.
    """
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return f"image path is a directory, not a file: {path}"
    except (OSError, ValueError):
        pass
    return f"image file not found: {path}"


def _make_dataset(path: Path, image_root: Path, name: str, items: dict[str, tuple[Path, list[str], str]],
                  problems: ProblemLog, *, raise_problems: bool, empty: str) -> Dataset:
    """The data set read from ``path``: ``items`` (image id -> path, captions, split) less those a problem spoils.

    With ``raise_problems`` (the caller passed no log of its own) every recorded problem is raised
    together instead; a file that gave neither an item nor a problem raises ``empty``.
    """
    if raise_problems:
        problems.raise_if_any(path)
    if not items and not problems:
        raise DataFormatError(path, None, empty)
    bad = problems.bad_items
    kept = [(image_id, item) for image_id, item in items.items() if image_id not in bad]
    splits: dict[str, list[int]] = {}
    for i, (_, (_, _, split)) in enumerate(kept):
        splits.setdefault(split, []).append(i)
    return Dataset(name=name, images=FileImages([item[0] for _, item in kept], [image_id for image_id, _ in kept]),
                   captions=[item[1] for _, item in kept], splits=splits,
                   metadata={"source": str(path), "image_root": str(image_root)})


def load_karpathy_json(path: str | os.PathLike, image_root: str | os.PathLike,
                       *, problems: ProblemLog | None = None) -> Dataset:
    """Load a data set described by a Karpathy-style JSON file.

    The format of Karpathy & Fei-Fei's ``dataset_{flickr8k,flickr30k,coco}.json``::

        {"dataset": "flickr8k",
         "images": [{"filename": "IMG.jpg", "filepath": "optional/subdir",
                     "split": "train" | "restval" | "val" | "test",
                     "sentences": [{"raw": "A caption ."}, ...]}, ...]}

    Parameters
    ----------
    path : path-like
        The JSON file.
    image_root : path-like
        Directory the image files (``filepath/filename``) are relative to.
    problems : ProblemLog, optional
        Where to record each problem; the images they spoil are left out of the data set, and
        the caller decides whether to raise (:meth:`ProblemLog.raise_if_any`).  Without it,
        every problem found is raised together in one :class:`DataFormatError`.

    Returns
    -------
    Dataset
        Named after the file's ``"dataset"`` entry (else the file name); image
        ids are ``filepath/filename`` as written; ``val`` becomes ``dev`` and
        ``restval`` joins ``train``.

    Raises
    ------
    MissingDataFileError
        When the JSON file or ``image_root`` is missing (a ``FileNotFoundError``).
    DataFormatError
        Listing every problem, each naming the file and the item (``images[i]``), or the line
        for JSON syntax errors: a missing or mistyped field, an unknown split, an empty
        caption, an image listed twice, an image file that does not exist.

    References
    ----------
    A. Karpathy and L. Fei-Fei (2015). Deep visual-semantic alignments for
    generating image descriptions. CVPR.
    """
    path = Path(path)
    require_file(path, "Karpathy JSON file")
    image_root = Path(image_root)
    if not image_root.is_dir():
        raise MissingDataFileError(f"image directory not found: {image_root}")
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, None, f"not valid UTF-8 ({exc.reason}); save the file as UTF-8") from None
    except RecursionError:
        raise DataFormatError(path, None, "invalid JSON: nested too deeply for a data set file") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise DataFormatError(path, None, 'expected an object with an "images" list')

    log = ProblemLog() if problems is None else problems
    items: dict[str, tuple[Path, list[str], str]] = {}
    listed: dict[str, Path] = {}
    first_item: dict[str, int] = {}
    for i, item in enumerate(data["images"]):
        where = f"images[{i}]: "
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str) or not item["filename"]:
            log.add(path, None, f'{where}expected an object with a "filename" string')
            continue
        if not isinstance(item.get("filepath", ""), str):
            log.add(path, None, f'{where}"filepath" must be a string, got {shorten(repr(item["filepath"]))}')
            continue
        image_id = str(Path(item.get("filepath") or "") / item["filename"])
        where = f"images[{i}] ({image_id}): "
        if image_id in first_item:
            # The later listing is the bad item: the first stands.
            log.add(path, None, f"{where}image listed twice (first as images[{first_item[image_id]}])")
            continue
        first_item[image_id] = i
        found = len(log)
        split = item.get("split")
        if not isinstance(split, str) or split not in SPLIT_ALIASES:
            log.add(path, None, f"{where}unknown split {shorten(repr(split))}; expected one of "
                                f"{', '.join(SPLIT_ALIASES)}", item=image_id)
        sentences = item.get("sentences")
        texts = []
        if not isinstance(sentences, list) or not sentences:
            log.add(path, None, f'{where}expected a non-empty "sentences" list', item=image_id)
        else:
            for k, sentence in enumerate(sentences):
                raw = sentence.get("raw") if isinstance(sentence, dict) else None
                if not isinstance(raw, str) or not raw.strip():
                    log.add(path, None, f'{where}sentences[{k}] has no non-empty "raw" caption', item=image_id)
                else:
                    texts.append(raw.strip())
        image_path = listed[image_id] = image_root / image_id
        if problem := _image_file_problem(image_path):
            log.add(path, None, f"{where}{problem}", item=image_id)
        if len(log) == found:
            items[image_id] = (image_path, texts, SPLIT_ALIASES[split])
    _require_an_image(path, image_root, listed)
    name = data.get("dataset") if isinstance(data.get("dataset"), str) else path.stem
    return _make_dataset(path, image_root, name, items, log, raise_problems=problems is None, empty="no images")


def load_tsv(path: str | os.PathLike, *, image_root: str | os.PathLike | None = None,
             problems: ProblemLog | None = None) -> Dataset:
    """Load a data set from a tab-separated file ``image_path<TAB>caption<TAB>split``.

    One line per caption; the lines of one image are consecutive and give
    its captions in order (caption ``k`` of an image has id ``image_path#k``).
    Blank lines and an optional header line ``image_path<TAB>caption<TAB>split``
    are ignored.

    Parameters
    ----------
    path : path-like
        The TSV file (UTF-8).
    image_root : path-like, optional
        Directory relative image paths are resolved against; defaults to the
        TSV file's directory.  Absolute paths are used as they are.
    problems : ProblemLog, optional
        Where to record each problem; the images they spoil are left out of the data set, and
        the caller decides whether to raise (:meth:`ProblemLog.raise_if_any`).  Without it,
        every problem found is raised together in one :class:`DataFormatError`.

    Returns
    -------
    Dataset
        Named after the file (its stem); image ids are the paths as written.
        Split ``val`` becomes ``dev`` and ``restval`` joins ``train``.

    Raises
    ------
    MissingDataFileError
        When the TSV file or ``image_root`` is missing (a ``FileNotFoundError``).
    DataFormatError
        Listing every problem, each naming the file and line: not three fields (on no line at all:
        one error saying the file is not a TSV data file), an empty image path or
        caption, an unknown split, an image whose split changes between its
        lines, an image whose lines are not consecutive, an image file that
        does not exist.
    """
    path = Path(path)
    log = ProblemLog() if problems is None else problems
    lines = read_lines(path, "TSV data file", log)
    base = Path(image_root) if image_root is not None else path.parent
    if not base.is_dir():
        raise MissingDataFileError(f"image directory not found: {base}")

    items: dict[str, tuple[Path, list[str], str | None]] = {}
    first_line: dict[str, int] = {}
    previous = None
    known = len(log)
    for number, (image_id, caption, split) in iter_fields(path, lines, 3, problems=log):
        if previous is None and tuple(f.lower() for f in (image_id, caption, split)) == TSV_HEADER:
            continue
        if not image_id:
            log.add(path, number, "empty image path")
            continue
        if not caption:
            log.add(path, number, f"empty caption for image {image_id!r}", item=image_id)
        if split not in SPLIT_ALIASES:
            log.add(path, number, f"unknown split {shorten(repr(split))}; expected one of {', '.join(SPLIT_ALIASES)}",
                    item=image_id)
        split = SPLIT_ALIASES.get(split)
        if image_id == previous:
            if split is not None and items[image_id][2] is not None and split != items[image_id][2]:
                log.add(path, number, f"image {image_id!r} is in split {split!r} here but {items[image_id][2]!r} "
                                      f"on line {first_line[image_id]}", item=image_id)
        elif image_id in first_line:
            log.add(path, number, f"image {image_id!r} first appeared on line {first_line[image_id]} with other "
                                  "images in between; the lines of one image must be consecutive", item=image_id)
        else:
            image_path = base / image_id
            if problem := _image_file_problem(image_path):
                log.add(path, number, problem, item=image_id)
            first_line[image_id] = number
            items[image_id] = (image_path, [], split)
        previous = image_id
        if caption:
            items[image_id][1].append(caption)
    if previous is None and len(log) > known:
        # Not one line of three fields: another kind of file (a results file, a dataset.json), whose
        # every line listed as a bad caption line would not say so, and --skip-bad-items would keep nothing.
        first = list(log)[known]
        raise DataFormatError(path, None, "no line has the three tab-separated fields image_path, caption and "
                                          f"split (line {first.line}: {first.message}): is it a TSV data file? "
                                          "A Karpathy-style dataset.json is read with --data json")
    _require_an_image(path, base, {image_id: item[0] for image_id, item in items.items()})
    return _make_dataset(path, base, path.stem, items, log, raise_problems=problems is None, empty="no data lines")
