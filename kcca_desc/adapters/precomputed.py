"""Image features computed elsewhere, read from a file by image id (family ``features``).

A features file is a NumPy ``.npz`` archive holding

``ids``
    (n,) image ids, as the data set names its images (Flickr8K: the file names);
``features``
    (n, d) one row per image (any float dtype; returned as float32);
``name`` (optional)
    the encoder that computed them (a results file's ``image_features``; default the file's stem).

Such a file carries features to a machine that has not got the images or the encoder (a GPU
machine training the trainable models at the papers' sizes), or brings in features a paper
released.  :func:`save_image_features` writes one from any image encoder.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from functools import cached_property
from pathlib import Path

import numpy as np

from .._core.cache import atomic_write_bytes
from ..data.images import ImageSource, require_image_source
from .._core.errors import DataError, MissingDataFileError, first_line
from .._core.progress import counted
from .base import Encoder
from .onnx_models import _file_digest

__all__ = ["PrecomputedImageEncoder", "save_image_features"]


class PrecomputedImageEncoder(Encoder):
    """Image features looked up by image id in a ``.npz`` file (layout in the module docstring).

    Parameters
    ----------
    path : path-like
        The features file.

    Raises
    ------
    MissingDataFileError
        When the file does not exist (on first use).
    DataError
        When it is not a ``.npz`` archive (or a damaged one, or one holding object arrays), lacks
        ``ids`` or ``features``, their lengths differ, an id repeats, a feature is
        not finite, or an image asked for has no row (naming the id and the file).
    """

    modalities = ("image",)

    def __init__(self, path: str | os.PathLike):
        # Nothing to cache: the file is the cache.
        super().__init__(cache=False)
        self.path = path

    @cached_property
    def _table(self) -> tuple[dict[str, int], np.ndarray, str]:
        path = Path(self.path)
        if not path.is_file():
            raise MissingDataFileError(f"image features file not found: {path}")
        ids, features, name = _read_features_file(path)
        if features.ndim != 2 or len(features) != len(ids):
            raise DataError(f"{path}: features of shape {features.shape} for {len(ids)} ids; "
                            "expected one row per id")
        if len(set(ids)) != len(ids):
            raise DataError(f"{path}: repeated image ids")
        features = np.ascontiguousarray(features, dtype=np.float32)
        bad = ~np.isfinite(features).all(axis=1)
        if bad.any():
            raise DataError(f"{path}: {int(bad.sum())} non-finite feature rows, "
                            f"the first for image {ids[int(np.argmax(bad))]!r}")
        return {image_id: i for i, image_id in enumerate(ids)}, features, name

    @property
    def name(self) -> str:
        """The ``name`` stored in the file (the encoder that computed the features)."""
        return self._table[2]

    @property
    def dim(self) -> dict[str, int]:
        return {"image": self._table[1].shape[1]}

    @cached_property
    def _digest(self) -> str:
        return _file_digest(Path(self.path))

    def identity(self, modality: str) -> dict:
        return {**super().identity(modality), "sha256": self._digest}

    def embed_images(self, images: ImageSource) -> np.ndarray:
        """The rows of ``images.ids``, in order.

        Returns
        -------
        ndarray of shape (len(images), d), float32
        """
        require_image_source(images)
        rows, features, _ = self._table
        absent = [image_id for image_id in images.ids if image_id not in rows]
        if absent:
            raise DataError(f"{self.path}: no features for {counted(len(absent), 'image')}, e.g. {absent[0]!r}")
        return features[[rows[image_id] for image_id in images.ids]]

# What a features file must be, said in every error about one that cannot be read as such.
_LAYOUT = "a NumPy .npz archive of 'ids' and 'features' arrays, as save_image_features writes"


def _read_features_file(path: Path) -> tuple[list[str], np.ndarray, str]:
    """The ids, features and name stored in ``path``; a file that is no such archive is a DataError.

    NumPy reports an unreadable file in many ways (a zip error for a damaged or truncated archive,
    a ValueError for one that is not an archive or holds object arrays, an EOFError or zlib error
    for a compressed one cut short), and a plain ``.npy`` file loads as one array, not an archive:
    each becomes one error naming the file, rather than a traceback from inside NumPy.
    """
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise DataError(f"{path}: not a features file ({_LAYOUT}): a .npy file of one array")
        with loaded as archive:
            missing = {"ids", "features"} - set(archive.files)
            if missing:
                raise DataError(f"{path}: lacks {', '.join(sorted(missing))} (has {', '.join(archive.files)})")
            ids, features = archive["ids"], archive["features"]
            name = archive["name"] if "name" in archive.files else path.stem
    except DataError:
        raise
    except OSError as exc:  # the file exists (checked by the caller) but cannot be read
        raise DataError(f"{path}: cannot read the features file ({exc.strerror or first_line(exc)})") from None
    except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        # NumPy's first sentence says what it found; the rest advises allow_pickle, not for users here.
        raise DataError(f"{path}: not a features file ({_LAYOUT}): {first_line(exc).split('. ')[0]}") from None
    if ids.ndim != 1 or features.dtype.kind not in "biuf":
        raise DataError(f"{path}: 'ids' must be a list and 'features' numbers ({_LAYOUT}); "
                        f"found ids of shape {ids.shape}, features of type {features.dtype}")
    return ids.astype(str).tolist(), features, str(name)


def save_image_features(path: str | os.PathLike, encoder: Encoder, images: ImageSource,
                        *, dtype: type = np.float32) -> Path:
    """Write ``encoder``'s features of ``images`` to a features file, atomically.

    Parameters
    ----------
    path : path-like
        The ``.npz`` file to write.
    encoder : Encoder
        Any image encoder; its ``name`` is stored.
    images : ImageSource
    dtype : numpy float type, default=np.float32
        Storage type (``np.float16`` halves the file; features are read back as float32).

    Returns
    -------
    Path
    """
    features = encoder.embed_images(images).astype(dtype)
    path = Path(path)
    atomic_write_bytes(path, lambda f: np.savez_compressed(f, ids=np.array(images.ids), features=features,
                                                            name=np.array(encoder.name)))
    return path
