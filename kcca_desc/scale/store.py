"""Chunked, resumable storage of row blocks (factors, features, projections) in Zarr.

A :class:`ChunkStore` is one Zarr group per key, in ``cache_dir("scale")`` by
default, the key being :func:`kcca_desc._core.cache.cache_key` of everything that
determines the arrays (as every cache entry of the toolkit).  Each array is cut
into row chunks; a chunk is written as one Zarr chunk, which Zarr's local store
writes to a temporary file and renames into place (atomic on POSIX), and only
then is the chunk's flag in the array's ``<name>.done`` companion set (one Zarr
chunk per flag, so flags are written atomically too).  A killed run therefore
leaves whole chunks with their flags, or chunks without a flag that are
recomputed: a rerun computes only the missing chunks (:meth:`missing`), and its
output is identical because every chunk is a deterministic function of the key.

Every chunk (data and flags) carries a CRC-32C (Zarr's ``crc32c`` codec).  When a run reopens a
store, :meth:`ChunkStore.verify` reads each flagged chunk back: a damaged one (truncated, random
or flipped bytes) is named in one :class:`~kcca_desc._core.cache.CacheWarning`, deleted and its
flag cleared, so that it is recomputed like a missing one and the results stay those of a clean
run.  Arrays written before chunks carried checksums are recreated.

The group's metadata (its own and each array's ``zarr.json``: shapes, codecs, fill values, the
names of a mapping's arrays) carries no checksum of Zarr's, so each change of it is sealed: the
SHA-256 of every metadata document is written beside the group, ``<key>.zarr.metadata``, a
checksummed cache entry of its own (:func:`~kcca_desc._core.cache.write_json_entry`).  When a
process first opens the group, it compares the documents with their seal: a damaged document
(or seal) is named in one :class:`~kcca_desc._core.cache.CacheWarning` and the whole group is
deleted and computed again, since its chunks cannot be read without their metadata.  A group
without a seal (one of before seals, or one whose writer was killed between a change and its
seal) is recreated without a warning, as are arrays of before chunk checksums.

Workers open the store by path, so a Dask cluster needs the store on a file
system that all of its workers see (local disk for a ``LocalCluster``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._core.cache import (
    DamagedEntryError,
    cache_dir,
    discard_damaged,
    entry_lock,
    read_json_entry,
    write_json_entry,
)
from .._core.errors import import_optional
from .views import SparseRows

__all__ = ["ChunkStore"]


def _zarr():
    return import_optional("zarr", "dask", "storing chunks")


def _checksummed_codecs():
    codecs = _zarr().codecs
    return [codecs.ZstdCodec(), codecs.Crc32cCodec()]


def _checksummed(array) -> bool:
    return any(type(codec).__name__ == "Crc32cCodec" for codec in array.compressors)


class ChunkStore:
    """A Zarr group of row-chunked arrays with per-chunk completion flags.

    Parameters
    ----------
    key : str
        Names the group (a :func:`~kcca_desc._core.cache.cache_key`).
    root : path-like, optional
        Directory of the groups; default ``cache_dir("scale")``.
    """

    def __init__(self, key: str, root: str | os.PathLike | None = None):
        self.key = key
        self.root = Path(root) if root is not None else cache_dir("scale")
        self.path = self.root / f"{key}.zarr"
        self.seal = self.root / f"{key}.zarr.metadata"
        self._checked = False

    def __reduce__(self):
        # Workers reopen the group by path rather than receiving open handles.
        return (ChunkStore, (self.key, self.root))

    def _group(self):
        if not self._checked:
            self._checked = True
            self._check_metadata()
        return _zarr().open_group(str(self.path), mode="a")

    def _metadata_digests(self) -> dict[str, str]:
        """SHA-256 of each metadata document of the group, by its path in the group."""
        documents = [self.path / "zarr.json", *self.path.glob("*/zarr.json")]
        return {path.relative_to(self.path).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
                for path in sorted(documents) if path.is_file()}

    def _seal_metadata(self) -> None:
        """Record the digests of the group's metadata as it now is (under the group's lock)."""
        write_json_entry(self.seal, self._metadata_digests())

    def _check_metadata(self) -> None:
        """Compare the group's metadata with its seal; a damaged document (or seal) is reported,
        and the group is deleted, as is a group without a seal (see the module's notes)."""
        if not self.path.exists():
            return
        # Under the lock of the group's changes, so that a writer's change is seen with its seal.
        with entry_lock(self.path):
            sealed = read_json_entry(self.seal)  # a damaged seal: reported, deleted, None
            digests = self._metadata_digests()
            if sealed == digests:
                return
            damaged = [name for name, digest in (sealed or {}).items() if digests.get(name) != digest]
            if damaged:
                discard_damaged(self.path / damaged[0], DamagedEntryError(
                    f"it does not match the digest sealed in {self.seal}; the whole store is recomputed"))
            shutil.rmtree(self.path, ignore_errors=True)
            self.seal.unlink(missing_ok=True)

    def create(self, name: str, shape: tuple[int, ...], chunk_rows: int, dtype=np.float64) -> None:
        """Create ``name`` of ``shape`` (rows first) unless it exists so; a changed one is recreated, flags reset.

        An array that exists so is never recreated, even by processes that find it missing at
        the same time: the one that takes the group's lock first creates it, and the others find
        it there under the lock (recreating it would wipe the chunks written since).
        """
        shape = tuple(int(s) for s in shape)
        chunks = (int(chunk_rows), *shape[1:])
        n_chunks = -(-shape[0] // chunk_rows)
        exists = lambda group: self._exists(group, name, shape, chunks, n_chunks, np.dtype(dtype))
        if not exists(self._group()):
            with entry_lock(self.path):
                group = self._group()  # as it is now that no other process can change it
                if not exists(group):
                    group.create_array(name, shape=shape, chunks=chunks, dtype=dtype, overwrite=True, fill_value=0,
                                       compressors=_checksummed_codecs())
                    group.create_array(f"{name}.done", shape=(n_chunks,), chunks=(1,), dtype=bool, overwrite=True,
                                       fill_value=False, compressors=_checksummed_codecs())
                    self._seal_metadata()
                    return
        self.verify(name)

    @staticmethod
    def _exists(group, name: str, shape: tuple, chunks: tuple, n_chunks: int, dtype: np.dtype) -> bool:
        """Whether ``name`` and its flags are in ``group`` as :meth:`create` would make them."""
        if name not in group or f"{name}.done" not in group:
            return False
        array, done = group[name], group[f"{name}.done"]
        return (array.shape == shape and array.chunks == chunks and done.shape == (n_chunks,)
                and array.dtype == dtype and _checksummed(array) and _checksummed(done))

    def _discard(self, array, name: str, chunk: int, exc: Exception) -> None:
        """Warn that chunk ``chunk`` of ``name`` is damaged and delete its file (read back as unwritten)."""
        key = array.metadata.encode_chunk_key((chunk, *[0] * (array.ndim - 1)))
        discard_damaged(self.path / name / key, exc)

    def verify(self, name: str) -> None:
        """Read back every flagged chunk of ``name``, checking its CRC-32C; a damaged one (or a
        damaged flag) is reported, deleted and unflagged, so that it is recomputed."""
        group = self._group()
        array, done = group[name], group[f"{name}.done"]
        flags = np.zeros(done.shape[0], dtype=bool)
        for chunk in range(done.shape[0]):
            try:
                flags[chunk] = done[chunk]
            except Exception as exc:  # a codec's error: the checksum's, or the decompressor's
                self._discard(done, f"{name}.done", chunk, exc)
        rows = array.chunks[0]
        for chunk in np.flatnonzero(flags):
            try:
                array[chunk * rows:(chunk + 1) * rows]
            except Exception as exc:  # a codec's error: the checksum's, or the decompressor's
                self._discard(array, name, int(chunk), exc)
                done[chunk] = False

    def names(self) -> list[str] | None:
        """The arrays of a mapping stored by :func:`~kcca_desc.scale.chunked.map_chunks`, None before."""
        names = self._group().attrs.get("arrays")
        return None if names is None else list(names)

    def set_names(self, names: list[str]) -> None:
        group = self._group()
        with entry_lock(self.path):
            group.attrs["arrays"] = list(names)
            self._seal_metadata()

    def array(self, name: str):
        """The Zarr array ``name`` (read lazily, chunk by chunk)."""
        return self._group()[name]

    def missing(self, name: str) -> np.ndarray:
        """Numbers of the chunks of ``name`` not yet written."""
        return np.flatnonzero(~self._group()[f"{name}.done"][:])

    def write(self, name: str, chunk: int, block: np.ndarray) -> None:
        """Write row chunk ``chunk`` of ``name``, then its flag."""
        group = self._group()
        array = group[name]
        start = chunk * array.chunks[0]
        array[start:start + block.shape[0]] = block
        group[f"{name}.done"][chunk] = True

    def read(self, name: str, chunk: int) -> np.ndarray:
        """Row chunk ``chunk`` of ``name``."""
        array = self._group()[name]
        start = chunk * array.chunks[0]
        return np.asarray(array[start:start + array.chunks[0]])

    def put(self, name: str, values: np.ndarray, chunk_rows: int):
        """Store the whole array ``values`` as ``name``, chunk by chunk, and return the Zarr array.

        Inputs held in memory go to disk this way, so that workers read the rows of their chunk
        instead of each receiving the whole array.
        """
        values = np.asarray(values)
        self.create(name, values.shape, chunk_rows, values.dtype)
        for chunk, start in enumerate(range(0, values.shape[0], chunk_rows)):
            self.write(name, chunk, values[start:start + chunk_rows])
        return self.array(name)

    def put_sparse(self, name: str, matrix: sp.spmatrix, chunk_rows: int) -> SparseRows:
        """Store a sparse matrix as its CSR arrays ``<name>.data``, ``<name>.indices``, ``<name>.indptr``.

        The data and indices are chunked to hold about ``chunk_rows`` rows' entries each.
        """
        matrix = sp.csr_matrix(matrix)
        per_row = max(1, -(-matrix.nnz // max(1, matrix.shape[0])))
        arrays = {part: self.put(f"{name}.{part}", values, chunk_rows * (per_row if part != "indptr" else 1))
                  for part, values in (("data", matrix.data), ("indices", matrix.indices),
                                       ("indptr", matrix.indptr))}
        return SparseRows(arrays["data"], arrays["indices"], arrays["indptr"], matrix.shape[1])
