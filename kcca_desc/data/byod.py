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

from ._textfiles import DataFormatError, iter_fields, read_lines
from .dataset import Dataset
from .images import FileImages

__all__ = ["SPLIT_ALIASES", "load_karpathy_json", "load_tsv"]

SPLIT_ALIASES = {"train": "train", "restval": "train", "dev": "dev", "val": "dev", "test": "test"}

TSV_HEADER = ("image_path", "caption", "split")


def _split_name(path: Path, line: int | None, split: object, where: str = "") -> str:
    if split not in SPLIT_ALIASES:
        raise DataFormatError(
            path, line, f"{where}unknown split {split!r}; expected one of {', '.join(SPLIT_ALIASES)}"
        )
    return SPLIT_ALIASES[split]


def _make_dataset(
    name: str, paths: list[Path], ids: list[str], captions: list[list[str]], split_of: list[str], metadata: dict
) -> Dataset:
    splits: dict[str, list[int]] = {}
    for i, split in enumerate(split_of):
        splits.setdefault(split, []).append(i)
    return Dataset(name=name, images=FileImages(paths, ids), captions=captions, splits=splits, metadata=metadata)


def load_karpathy_json(path: str | os.PathLike, image_root: str | os.PathLike) -> Dataset:
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

    Returns
    -------
    Dataset
        Named after the file's ``"dataset"`` entry (else the file name); image
        ids are ``filepath/filename`` as written; ``val`` becomes ``dev`` and
        ``restval`` joins ``train``.

    Raises
    ------
    FileNotFoundError
        When the JSON file or ``image_root`` is missing.
    DataFormatError
        Naming the file and the item (``images[i]``), or the line for JSON
        syntax errors: a missing or mistyped field, an unknown split, an empty
        caption, an image listed twice, an image file that does not exist.

    References
    ----------
    A. Karpathy and L. Fei-Fei (2015). Deep visual-semantic alignments for
    generating image descriptions. CVPR.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Karpathy JSON file not found: {path}")
    image_root = Path(image_root)
    if not image_root.is_dir():
        raise FileNotFoundError(f"image directory not found: {image_root}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, None, f"not valid UTF-8 ({exc.reason})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise DataFormatError(path, None, 'expected an object with an "images" list')

    paths, ids, captions, split_of = [], [], [], []
    first_item: dict[str, int] = {}
    for i, item in enumerate(data["images"]):
        where = f"images[{i}]: "
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str) or not item["filename"]:
            raise DataFormatError(path, None, f'{where}expected an object with a "filename" string')
        if not isinstance(item.get("filepath", ""), str):
            raise DataFormatError(path, None, f'{where}"filepath" must be a string, got {item["filepath"]!r}')
        image_id = str(Path(item.get("filepath") or "") / item["filename"])
        where = f"images[{i}] ({image_id}): "
        if image_id in first_item:
            raise DataFormatError(path, None, f"{where}image listed twice (first as images[{first_item[image_id]}])")
        first_item[image_id] = i
        split = _split_name(path, None, item.get("split"), where)
        sentences = item.get("sentences")
        if not isinstance(sentences, list) or not sentences:
            raise DataFormatError(path, None, f'{where}expected a non-empty "sentences" list')
        texts = []
        for k, sentence in enumerate(sentences):
            raw = sentence.get("raw") if isinstance(sentence, dict) else None
            if not isinstance(raw, str) or not raw.strip():
                raise DataFormatError(path, None, f'{where}sentences[{k}] has no non-empty "raw" caption')
            texts.append(raw.strip())
        image_path = image_root / image_id
        if not image_path.is_file():
            raise DataFormatError(path, None, f"{where}image file not found: {image_path}")
        paths.append(image_path)
        ids.append(image_id)
        captions.append(texts)
        split_of.append(split)
    if not ids:
        raise DataFormatError(path, None, "no images")
    name = data.get("dataset") if isinstance(data.get("dataset"), str) else path.stem
    return _make_dataset(name, paths, ids, captions, split_of, {"source": str(path), "image_root": str(image_root)})


def load_tsv(path: str | os.PathLike, image_root: str | os.PathLike | None = None) -> Dataset:
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

    Returns
    -------
    Dataset
        Named after the file (its stem); image ids are the paths as written.
        Split ``val`` becomes ``dev`` and ``restval`` joins ``train``.

    Raises
    ------
    FileNotFoundError
        When the TSV file or ``image_root`` is missing.
    DataFormatError
        Naming the file and line: not three fields, an empty image path or
        caption, an unknown split, an image whose split changes between its
        lines, an image whose lines are not consecutive, an image file that
        does not exist.
    """
    path = Path(path)
    lines = read_lines(path, "TSV data file")
    base = Path(image_root) if image_root is not None else path.parent
    if not base.is_dir():
        raise FileNotFoundError(f"image directory not found: {base}")

    paths, ids, captions, split_of = [], [], [], []
    first_line: dict[str, int] = {}
    for number, (image_id, caption, split) in iter_fields(path, lines, 3):
        if not ids and tuple(f.lower() for f in (image_id, caption, split)) == TSV_HEADER:
            continue
        if not image_id:
            raise DataFormatError(path, number, "empty image path")
        if not caption:
            raise DataFormatError(path, number, f"empty caption for image {image_id!r}")
        split = _split_name(path, number, split)
        if ids and ids[-1] == image_id:
            if split != split_of[-1]:
                raise DataFormatError(
                    path, number,
                    f"image {image_id!r} is in split {split!r} here but {split_of[-1]!r} on line "
                    f"{first_line[image_id]}",
                )
            captions[-1].append(caption)
            continue
        if image_id in first_line:
            raise DataFormatError(
                path, number,
                f"image {image_id!r} first appeared on line {first_line[image_id]} with other images "
                "in between; the lines of one image must be consecutive",
            )
        image_path = base / image_id
        if not image_path.is_file():
            raise DataFormatError(path, number, f"image file not found: {image_path}")
        first_line[image_id] = number
        paths.append(image_path)
        ids.append(image_id)
        captions.append([caption])
        split_of.append(split)
    if not ids:
        raise DataFormatError(path, None, "no data lines")
    return _make_dataset(path.stem, paths, ids, captions, split_of, {"source": str(path), "image_root": str(base)})
