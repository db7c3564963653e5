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

Workers open the store by path, so a Dask cluster needs the store on a file
system that all of its workers see (local disk for a ``LocalCluster``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._core.cache import cache_dir
from .._core.errors import import_optional
from .views import SparseRows

__all__ = ["ChunkStore"]


def _zarr():
    return import_optional("zarr", "dask", "storing chunks")


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

    def __reduce__(self):
        # Workers reopen the group by path rather than receiving open handles.
        return (ChunkStore, (self.key, self.root))

    def _group(self):
        return _zarr().open_group(str(self.path), mode="a")

    def create(self, name: str, shape: tuple[int, ...], chunk_rows: int, dtype=np.float64) -> None:
        """Create ``name`` of ``shape`` (rows first) unless it exists so; a changed one is recreated, flags reset."""
        group = self._group()
        shape = tuple(int(s) for s in shape)
        chunks = (int(chunk_rows), *shape[1:])
        n_chunks = -(-shape[0] // chunk_rows)
        if name in group:
            array, done = group[name], group[f"{name}.done"]
            if array.shape == shape and array.chunks == chunks and done.shape == (n_chunks,) \
                    and array.dtype == np.dtype(dtype):
                return
        group.create_array(name, shape=shape, chunks=chunks, dtype=dtype, overwrite=True, fill_value=0)
        group.create_array(f"{name}.done", shape=(n_chunks,), chunks=(1,), dtype=bool, overwrite=True,
                           fill_value=False)

    def names(self) -> list[str] | None:
        """The arrays of a mapping stored by :func:`~kcca_desc.scale.chunked.map_chunks`, None before."""
        names = self._group().attrs.get("arrays")
        return None if names is None else list(names)

    def set_names(self, names: list[str]) -> None:
        self._group().attrs["arrays"] = list(names)

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
