"""Image sources: where a data set's pixels come from.

An image source is an indexable collection of images that knows, for each
image, a stable *cache key* (so that features computed from it can be cached
on disk) and how to decode it.  Two implementations cover every data set the
toolkit reads: :class:`FileImages` (image files on disk) and
:class:`ArrayImages` (images held in memory, e.g. the synthetic data set);
:class:`~kcca_desc.data.RenderedImages` draws synthetic images again on each load.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._core.errors import DataError, ParameterError

__all__ = ["ImageSource", "FileImages", "ArrayImages", "ImageReadError", "require_image_source"]


class ImageReadError(DataError):
    """An image file is missing, unreadable or corrupt (a ``ValueError``)."""


class ImageSource:
    """Abstract indexable collection of images.

    Subclasses implement :meth:`load`, :meth:`key`, :meth:`subset` and
    ``__len__``.  ``ids`` gives each image's name (e.g. its file name).
    """

    ids: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.ids)

    def load(self, index: int) -> np.ndarray:
        """Decode image ``index`` as an ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)`` array.

        Channel order is RGB(A); the dtype is that of the source (``uint8`` or
        ``uint16`` for files).
        """
        raise NotImplementedError

    def key(self, index: int) -> str:
        """A string that changes whenever image ``index``'s pixels may change."""
        raise NotImplementedError

    def subset(self, indices: Sequence[int]) -> "ImageSource":
        """The images at ``indices``, in that order."""
        raise NotImplementedError

    def check(self, index: int) -> str | None:
        """What stops image ``index`` from being decoded, or None when it decodes.

        Called on every image before any feature is computed
        (:func:`kcca_desc.data.checks.check_images`), so a source whose :meth:`load` is costly
        overrides it with something cheaper that fails on the same images.
        """
        try:
            self.load(index)
        except (OSError, ValueError) as exc:
            return str(exc)
        return None

    def check_key(self, index: int) -> str | None:
        """A string that changes whenever :meth:`check`'s answer on image ``index`` may change.

        Lets :func:`kcca_desc.data.checks.check_images` keep the answers of a costly check on
        disk; None (the default) when there is none, and the image is checked on every run.
        """
        return None

    def location(self, index: int) -> str:
        """Where image ``index`` comes from, for messages (its file, or its name)."""
        return f"image {self.ids[index]!r}"


def require_image_source(value: object, name: str = "images") -> ImageSource:
    """``value`` if it is an :class:`ImageSource`; otherwise one clear error naming ``name``.

    Checked before any work: an image source's methods are first called deep inside feature
    extraction, whose ``AttributeError`` would name neither the argument nor what it should be.

    Raises
    ------
    ParameterError
        If ``value`` is not an ImageSource.
    """
    if not isinstance(value, ImageSource):
        raise ParameterError(f"{name} must be an ImageSource (kcca_desc.data: FileImages, ArrayImages, a "
                             f"data set's images), got {type(value).__name__}")
    return value


def decode_image_file(path: str | os.PathLike) -> np.ndarray:
    """Read an image file into an RGB(A) array, keeping its bit depth.

    Raises
    ------
    ImageReadError
        Naming the file, when it is missing or cannot be decoded.
    """
    import cv2

    path = Path(path)
    if not path.is_file():
        raise ImageReadError(f"image file not found: {path}")
    data = np.fromfile(path, dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if data.size else None
    if image is None:
        raise ImageReadError(f"cannot decode image file (corrupt or unsupported format): {path}")
    if image.ndim == 3 and image.shape[2] == 3:
        image = image[:, :, ::-1]
    elif image.ndim == 3 and image.shape[2] == 4:
        image = image[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(image)


class FileImages(ImageSource):
    """Images stored as files.

    Parameters
    ----------
    paths : sequence of path-like
        One file per image.
    ids : sequence of str, optional
        Image names; defaults to the file names.
    """

    def __init__(self, paths: Sequence[str | os.PathLike], ids: Sequence[str] | None = None):
        self.paths = tuple(Path(p) for p in paths)
        self.ids = tuple(ids) if ids is not None else tuple(p.name for p in self.paths)
        if len(self.ids) != len(self.paths):
            raise DataError("FileImages: ids and paths differ in length")

    def load(self, index: int) -> np.ndarray:
        return decode_image_file(self.paths[index])

    def key(self, index: int) -> str:
        """A SHA-1 of the file's bytes (see :func:`file_key`)."""
        return file_key(self.paths[index])

    def subset(self, indices: Sequence[int]) -> "FileImages":
        return FileImages([self.paths[i] for i in indices], [self.ids[i] for i in indices])

    def check(self, index: int) -> str | None:
        """Decode the file with the decoder :meth:`load` uses, so that it rejects the same files; a
        JPEG (nearly every photo) decodes straight to an eighth of its size, in a fraction of the time."""
        import cv2

        try:
            data = np.fromfile(self.paths[index], dtype=np.uint8)
        except OSError as exc:
            return "file not found" if isinstance(exc, FileNotFoundError) else f"cannot read the file ({exc.strerror})"
        if not data.size:
            return "empty file (0 bytes)"
        # Other formats decode whole: OpenCV would decode them whole and then shrink them (and fail
        # to shrink a 1-pixel image).
        mode = cv2.IMREAD_REDUCED_GRAYSCALE_8 if data[:2].tobytes() == b"\xff\xd8" else cv2.IMREAD_UNCHANGED
        if cv2.imdecode(data, mode) is None:
            return "cannot decode image file (corrupt or unsupported format)"
        return None

    def check_key(self, index: int) -> str | None:
        """The file's content key (:meth:`key`), which run after run it takes no decoding to find;
        None for a file that cannot be read (checked, and reported, each time)."""
        try:
            return self.key(index)
        except ImageReadError:
            return None

    def location(self, index: int) -> str:
        return str(self.paths[index])


# (device, inode, size, mtime) → content key: each file is read once per process.
_FILE_KEYS: dict[tuple, str] = {}


def file_key(path: Path) -> str:
    """The cache key of an image file: a SHA-1 of its bytes.

    A key of the content rather than of the path and modification time lets every cache
    (features, kernels, trained models) survive a copy, a move or a fresh checkout of the data,
    and lets two machines with the same files share them; a changed file gets a new key.  The
    digest is remembered per process under the file's device, inode, size and modification time,
    so it is recomputed only when one of them changes (hashing Flickr8K's 179 MB takes about a
    second; decoding its images takes minutes).
    """
    try:
        st = path.stat()
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp not in _FILE_KEYS:
            _FILE_KEYS[stamp] = "sha1:" + hashlib.sha1(path.read_bytes()).hexdigest()
    except FileNotFoundError as exc:
        raise ImageReadError(f"image file not found: {path}") from exc
    except OSError as exc:
        raise ImageReadError(f"cannot read image file {path} ({exc.strerror})") from exc
    return _FILE_KEYS[stamp]


def array_key(image: np.ndarray) -> str:
    """The cache key of an image held as an array: a SHA-1 of its bytes, shape and dtype."""
    a = np.ascontiguousarray(image)
    digest = hashlib.sha1(a.tobytes())
    digest.update(f"{a.shape}{a.dtype}".encode())
    return "array:" + digest.hexdigest()


def _may_change(image: np.ndarray) -> bool:
    """Whether the bytes of ``image`` can be written through any array or buffer it shares them with.

    Read-only arrays down to one that owns its data (or to immutable ``bytes``) cannot; a writable
    array on the way, a writable buffer or a memory map (whose file can change) can.
    """
    while isinstance(image, np.ndarray):
        if image.flags.writeable:
            return True
        image = image.base
    return image is not None and not isinstance(image, bytes)


def frozen_array(image) -> np.ndarray:
    """``image`` as an array whose bytes nothing can change: itself when none can, else a read-only copy."""
    a = np.asarray(image)
    if _may_change(a):
        a = a.copy()
        a.flags.writeable = False
    return a


class ArrayImages(ImageSource):
    """Images held in memory (one array per image).

    The cache key of each image is a SHA-1 of its bytes, shape and dtype, computed once.  So
    that no change can make it stale, the source holds arrays nothing can write: its own
    read-only copy of each array that could change (a writable one, a view of one, a memory
    map), the array itself when it and the arrays it views are read-only.  A change of the
    caller's arrays after construction is therefore not seen, and :meth:`load` returns a
    read-only array.  The copy costs about as long as computing the keys once (measured: 0.1 to
    0.4 s for 1,000 images of 500 x 375, 562 MB, whose keys take 0.4 s) and the pixels' memory
    while the caller keeps the originals; freeze them (``a.flags.writeable = False``) to have
    them shared instead.
    """

    def __init__(self, arrays: Sequence[np.ndarray], ids: Sequence[str]):
        self._arrays = tuple(frozen_array(a) for a in arrays)
        self.ids = tuple(ids)
        if len(self.ids) != len(self._arrays):
            raise DataError("ArrayImages: ids and arrays differ in length")
        self._keys: dict[int, str] = {}

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The read-only images (not settable: the memoised keys are theirs)."""
        return self._arrays

    def load(self, index: int) -> np.ndarray:
        return self._arrays[index]

    def key(self, index: int) -> str:
        if index not in self._keys:
            self._keys[index] = array_key(self._arrays[index])
        return self._keys[index]

    def subset(self, indices: Sequence[int]) -> "ArrayImages":
        # The arrays are read-only already: shared, not copied again.
        return ArrayImages([self._arrays[i] for i in indices], [self.ids[i] for i in indices])
