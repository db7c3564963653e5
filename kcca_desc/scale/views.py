"""One view of the training pairs as the large-n solver sees it: items, a kernel, and a key.

A :class:`KernelView` never holds a kernel matrix.  It holds the items (a NumPy
array, a Zarr array read chunk by chunk, sparse rows stored in Zarr
(:class:`SparseRows`), a mapping of such arrays as the image kernels take, or a
list such as token lists) and a picklable kernel function
``kernel(items_a, items_b) -> ndarray``, so a worker handed a view and a range
of rows computes that block of kernel columns and nothing else.  ``index``
maps rows to items, so caption-level pairs repeat an image's features without
copying them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from .._core.errors import DataError, ParameterError
from ..kcca.estimator import kernel_block
from ..kernels.image.intersection import histogram_intersection

__all__ = ["KernelView", "SparseRows", "take", "HistogramIntersection", "LinearKernel", "PairwiseKernel"]


def take(items: Any, indices: np.ndarray) -> Any:
    """Items ``indices`` of ``items``: array rows, each array of a mapping, or list entries.

    Consecutive indices are read as one slice, which a Zarr array serves chunk by chunk.
    """
    indices = np.asarray(indices, dtype=np.intp)
    if isinstance(items, Mapping):
        return {key: take(value, indices) for key, value in items.items()}
    if isinstance(items, (list, tuple)):
        return [items[i] for i in indices]
    if not hasattr(items, "oindex"):  # NumPy or SciPy sparse rows
        return items[indices]
    # An array read from storage (Zarr): sorted rows that fill most of their span (a chunk of
    # rows, or caption-level rows repeating their images) as one slice, others by one orthogonal
    # selection of the distinct rows; either way only the chunks needed are read.
    if not indices.size:
        return np.asarray(items[0:0])
    low, high = int(indices.min()), int(indices.max()) + 1
    if high - low <= 2 * indices.size and np.all(np.diff(indices) >= 0):
        return np.asarray(items[low:high])[indices - low]
    distinct, inverse = np.unique(indices, return_inverse=True)
    return np.asarray(items.oindex[distinct])[inverse]


@dataclass(frozen=True, eq=False)
class SparseRows:
    """A CSR matrix whose ``data``, ``indices`` and ``indptr`` are arrays read in parts (Zarr).

    Selecting rows reads their ``indptr`` entries and then only the stretches of ``data``
    and ``indices`` that hold them, so a worker that computes one chunk of kernel columns
    reads that chunk's rows and never the whole matrix (bags of words of half a million
    captions, say).  NumPy arrays work too.

    Parameters
    ----------
    data, indices, indptr : array-like
        The CSR arrays (``indptr`` of length n_rows + 1).
    n_columns : int
    """

    data: Any
    indices: Any
    indptr: Any
    n_columns: int

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.indptr.shape[0]) - 1, int(self.n_columns)

    def __getitem__(self, rows) -> sp.csr_matrix:
        """Rows ``rows`` (integer array, any order, repeats allowed) as a ``csr_matrix``."""
        rows = np.asarray(rows, dtype=np.intp)
        n_rows = self.shape[0]
        if rows.size and (rows.min() < 0 or rows.max() >= n_rows):
            raise IndexError(f"SparseRows: rows must lie in [0, {n_rows}), got {rows.min()} to {rows.max()}")
        # One read of the indptr entries needed (a slice when the rows are a chunk).
        bounds = np.union1d(rows, rows + 1)
        pointers = take(self.indptr, bounds)
        starts, ends = pointers[np.searchsorted(bounds, rows)], pointers[np.searchsorted(bounds, rows + 1)]
        counts = (ends - starts).astype(np.intp)
        # The positions in data/indices of every selected row's entries, row after row.
        offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        positions = np.arange(int(counts.sum()), dtype=np.intp) + offsets.astype(np.intp)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return sp.csr_matrix((take(self.data, positions), take(self.indices, positions), indptr),
                             shape=(rows.size, self.n_columns))


def _length(items: Any) -> int:
    if isinstance(items, Mapping):
        lengths = {_length(v) for v in items.values()}
        if len(lengths) != 1:
            raise DataError(f"KernelView: the arrays of a mapping of items differ in length: {sorted(lengths)}")
        return lengths.pop()
    shape = getattr(items, "shape", None)  # arrays, sparse matrices and Zarr arrays
    return int(shape[0]) if shape is not None else len(items)


@dataclass(frozen=True, eq=False)
class KernelView:
    """Items of one view, the kernel between them, and what identifies both.

    Parameters
    ----------
    items : array, Zarr array, mapping of arrays, or list
        The distinct items (e.g. one feature row per image).
    kernel : callable
        ``kernel(items_a, items_b) -> ndarray (len(items_a), len(items_b))``; must be picklable
        (a module-level function or a dataclass instance) to run on Dask workers.
    index : ndarray of int, optional
        Row ``r`` of the view is item ``index[r]`` (caption-level pairs: the image of each
        caption); default one row per item.
    key : str, optional
        What determines the items and the kernel (:func:`kcca_desc._core.cache.cache_key` of them):
        chunked results of the view are stored and resumed under it.  None: nothing is stored.
    landmarks : ndarray of int, optional
        Rows that :class:`~kcca_desc.scale.LandmarkKCCA` must take as landmarks, whatever its
        ``landmarks`` choice: a view whose kernel has its columns against them cached
        (:class:`~kcca_desc.scale.BaseColumns`).  None: the solver chooses.

    Notes
    -----
    A kernel with a ``diagonal(items)`` method gives :meth:`diagonal` directly (no kernel blocks).
    """

    items: Any
    kernel: Callable[[Any, Any], np.ndarray]
    index: np.ndarray | None = None
    key: str | None = None
    landmarks: np.ndarray | None = None

    def __post_init__(self):
        if not callable(self.kernel):
            raise ParameterError(f"KernelView: kernel must be callable, got {type(self.kernel).__name__}")
        n_items = _length(self.items)
        if n_items < 1:
            raise DataError("KernelView: no items")
        if self.index is not None:
            index = np.asarray(self.index, dtype=np.intp)
            if index.ndim != 1 or index.size == 0 or index.min() < 0 or index.max() >= n_items:
                raise ParameterError(f"KernelView: index must be a non-empty 1-D array of item numbers in [0, {n_items})")
            object.__setattr__(self, "index", index)

    @property
    def n_samples(self) -> int:
        """Number of rows (pairs) of the view."""
        return _length(self.items) if self.index is None else int(self.index.size)

    def item_numbers(self, rows: np.ndarray) -> np.ndarray:
        """Item number of each row in ``rows``."""
        rows = np.asarray(rows, dtype=np.intp)
        return rows if self.index is None else self.index[rows]

    def rows(self, rows: Sequence[int] | np.ndarray) -> Any:
        """The items of ``rows``."""
        return take(self.items, self.item_numbers(rows))

    def _checked_kernel(self, items_a: Any, items_b: Any) -> np.ndarray:
        """The kernel's block of ``items_a`` against ``items_b``, checked to be the finite numbers its contract says.

        A kernel of the user's that returns something else failed in NumPy, several calls
        later (a broadcast into the block of columns), naming neither the view nor its kernel.
        """
        shape = (_length(items_a), _length(items_b))
        value = self.kernel(items_a, items_b)
        try:
            K = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            K = None
        if K is None or K.shape != shape:
            label = getattr(self.kernel, "__name__", type(self.kernel).__name__)
            got = f"shape {K.shape}" if K is not None else f"{type(value).__name__} {value!r:.60}"
            raise ParameterError(f"KernelView: its kernel {label} must return a {shape} matrix of numbers for "
                                 f"{shape[0]} items against {shape[1]}, got {got}")
        if not np.all(np.isfinite(K)):
            raise DataError("KernelView: the kernel produced NaN or infinite values")
        return K

    def block(self, rows: np.ndarray, other: Any) -> np.ndarray:
        """Kernel between ``rows`` of the view and the items ``other``, float64."""
        return self._checked_kernel(self.rows(rows), other)

    def diagonal(self, rows: np.ndarray, block_size: int = 256) -> np.ndarray:
        """``k(x_r, x_r)`` of ``rows``, from small diagonal blocks (O(len(rows) * block_size) kernel values)."""
        rows = np.asarray(rows, dtype=np.intp)
        # Read once: items in storage would otherwise be read again for every block.
        items = self.rows(rows)
        known = getattr(self.kernel, "diagonal", None)
        if known is not None:
            return np.asarray(known(items), dtype=np.float64)
        out = np.empty(rows.size)
        for start in range(0, rows.size, block_size):
            part = take(items, np.arange(start, min(start + block_size, rows.size)))
            out[start:start + block_size] = np.diagonal(self._checked_kernel(part, part))
        return out


@dataclass(frozen=True)
class HistogramIntersection:
    """``sum_d min(a_d, b_d)`` raised to ``power``: the pyramid-like kernel of the benchmarks."""

    power: float = 1.0

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        K = histogram_intersection(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                   dtype=np.float64)
        return K if self.power == 1 else K ** self.power


@dataclass(frozen=True)
class LinearKernel:
    """``a b'`` of dense rows or sparse CSR rows (cosine when the rows are L2-normalised)."""

    def __call__(self, a, b) -> np.ndarray:
        product = a @ b.T
        return product.toarray() if hasattr(product, "toarray") else np.asarray(product)


@dataclass(frozen=True)
class PairwiseKernel:
    """A kernel of :func:`sklearn.metrics.pairwise.pairwise_kernels` on dense feature rows.

    Parameters
    ----------
    metric : str or callable
        A metric name (``"linear"``, ``"rbf"``, ...) or a callable ``k(x, y) -> float``.
    params : tuple of (str, value) pairs, default=()
        Keyword arguments of the metric (a tuple, so the kernel stays hashable and picklable).
    setting : str, default=""
        The estimator parameter that chose the metric (``"kernel_x"`` of
        :class:`~kcca_desc.scale.LandmarkKCCA`): a metric that cannot be computed on the rows, or
        a callable that returns no number per pair, is then an error naming it and the view
        (:func:`kcca_desc.kcca.estimator.kernel_block`), not scikit-learn's or the callable's own.
    """

    metric: str | Callable = "linear"
    params: tuple = ()
    setting: str = field(default="", compare=False)

    def __call__(self, a, b) -> np.ndarray:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if self.setting:
            # kernel_x names the view X (kernel_y, Y), as KCCA's messages do.
            return kernel_block(a, b, self.metric, dict(self.params), setting=self.setting,
                                data=self.setting.rpartition("_")[2].upper())
        return pairwise_kernels(a, b, metric=self.metric, **dict(self.params))
