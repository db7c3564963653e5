"""On-disk cache for features and kernel matrices.

Entries are NumPy ``.npz`` archives (or pickles) named by a SHA-1 of every
parameter that determines them, so a changed parameter can never return a
stale entry.  Writes go to a temporary file in the same directory followed by
:func:`os.replace`, which is atomic on POSIX: an interrupted run leaves either
the old entry or none, never a truncated one.

The cache lives in ``$KCCA_DESC_CACHE`` (default ``~/.cache/kcca_desc``).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["cache_dir", "cache_key", "atomic_write_bytes", "atomic_write_text", "NpzCache", "PickleCache"]


def cache_dir(subdir: str = "") -> Path:
    """The cache directory (created on demand), optionally a sub-directory of it."""
    root = Path(os.environ.get("KCCA_DESC_CACHE", Path.home() / ".cache" / "kcca_desc"))
    path = root / subdir if subdir else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return {"__ndarray__": hashlib.sha1(np.ascontiguousarray(obj).tobytes()).hexdigest(),
                "shape": list(obj.shape), "dtype": str(obj.dtype)}
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cache_key: cannot key on a value of type {type(obj).__name__}")


def cache_key(**params: Any) -> str:
    """SHA-1 hex digest of ``params`` (nested dicts, lists, scalars, arrays)."""
    blob = json.dumps(_jsonable(params), sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(blob.encode()).hexdigest()


def atomic_write_bytes(path: str | os.PathLike, write: Callable[[Any], None]) -> None:
    """Call ``write(fileobj)`` on a temporary file, then move it to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, as :func:`atomic_write_bytes`."""
    data = text.encode("utf-8")
    atomic_write_bytes(path, lambda f: f.write(data))


class NpzCache:
    """A directory of ``.npz`` entries keyed by parameters.

    Examples
    --------
    >>> cache = NpzCache("demo")
    >>> cache.get_or_compute(lambda: {"x": np.arange(3)}, kind="demo", n=3)["x"]  # computed, or read back
    array([0, 1, 2])
    >>> cache.path(cache_key(kind="demo", n=3)).is_file()
    True
    """

    #: File suffix of the entries, and the errors by which a damaged entry shows when read.
    suffix = ".npz"
    damaged = (OSError, ValueError)

    def __init__(self, subdir: str, enabled: bool = True):
        self.subdir = subdir
        self.enabled = enabled

    def path(self, key: str) -> Path:
        return cache_dir(self.subdir) / f"{key}{self.suffix}"

    def load(self, key: str) -> Any | None:
        """The entry ``key``, or None when caching is off or the entry is missing or damaged."""
        if not self.enabled:
            return None
        path = self.path(key)
        if not path.exists():
            return None
        try:
            return self._read(path)
        except self.damaged:
            # A damaged entry is recomputed, not trusted.
            return None

    def save(self, key: str, value: Any) -> None:
        if self.enabled:
            atomic_write_bytes(self.path(key), lambda f: self._write(f, value))

    @staticmethod
    def _read(path: Path) -> dict[str, np.ndarray]:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    @staticmethod
    def _write(f, arrays: dict[str, np.ndarray]) -> None:
        np.savez(f, **arrays)

    def get_or_compute(self, compute: Callable[[], dict[str, np.ndarray]], **params: Any) -> dict[str, np.ndarray]:
        key = cache_key(**params)
        hit = self.load(key)
        if hit is not None:
            return hit
        arrays = compute()
        self.save(key, arrays)
        return arrays


class PickleCache(NpzCache):
    """Like :class:`NpzCache` for arbitrary picklable Python objects."""

    suffix = ".pkl"
    damaged = (OSError, pickle.UnpicklingError, EOFError)

    @staticmethod
    def _read(path: Path) -> Any:
        with open(path, "rb") as f:
            return pickle.load(f)

    @staticmethod
    def _write(f, obj: Any) -> None:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
