"""Weighted sums of base kernels on landmarks: each base kernel's columns computed once, any weights summed.

A view of a multiple-kernel system is ``K = Σ_m w_m K_m``.  Its Nyström approximation on
landmarks ``L`` (Williams & Seeger 2001), ``K ≈ K[:, L] K[L, L]^+ K[L, :]``, needs only the
columns ``K[:, L] = Σ_m w_m K_m[:, L]``, weighted sums of the base kernels' own columns, so
:func:`base_columns` computes every base kernel's columns against one set of landmarks once, in
chunks (:class:`BaseColumns`), and :meth:`BaseColumns.view` is the training view of any weights:
:class:`~kcca_desc.scale.LandmarkKCCA` reads its landmark columns (and diagonal) from that cache.  A
search over weights therefore costs one pass of kernel evaluations, and nothing n x n is formed.
New items get their columns against the same landmarks once (:meth:`Landmarks.columns`), for
every weight setting too.

The landmarks are chosen once, before any weight is known, on the sum of the base kernels each
scaled to unit centred trace (estimated on a sample of items), the sum of uniform weights.

Centring needs nothing here: a sum of centred kernels is the centred sum, ``Σ_m w_m H K_m H =
H (Σ_m w_m K_m) H``, which the landmark solver centres in feature space.  What normalising a base
kernel to unit trace needs is :meth:`BaseColumns.centred_traces`.

References
----------
.. [1] C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
   NIPS 13, 2001.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .._core.errors import DataError, warn_user
from ..kernels.combine import check_weights
from .engine import LocalEngine
from .chunked import map_chunks
from .estimator import DEFAULT_CHUNK_SIZE
from .landmarks import LANDMARKS, nystrom_transform
from .views import KernelView, take

__all__ = ["ROW", "KernelSum", "Landmarks", "BaseColumns", "base_columns", "centred_inner_products"]

#: Key of the row numbers among the items of a :class:`BaseColumns` view.
ROW = "_row"
# Items whose kernel block estimates a base kernel's mean value when the landmarks are chosen.
_SAMPLE = 256


@dataclass(frozen=True)
class KernelSum:
    """``Σ_m w_m k_m(a[name_m], b[name_m])`` over items that are mappings of each base kernel's items.

    Attributes
    ----------
    kernels : tuple of (str, callable)
        Each base kernel's name and function ``k(items_a, items_b) -> ndarray`` (picklable).
    weights : tuple of float
        One per kernel; a zero weight skips its kernel.
    """

    kernels: tuple[tuple[str, Callable], ...]
    weights: tuple[float, ...]

    def combine(self, part: Callable[[str, Callable], np.ndarray]) -> np.ndarray:
        """``Σ_m w_m part(name_m, k_m)`` over the kernels of non-zero weight."""
        total = None
        for (name, kernel), weight in zip(self.kernels, self.weights):
            if weight:
                term = weight * np.asarray(part(name, kernel), dtype=np.float64)
                total = term if total is None else total.__iadd__(term)
        return total

    def __call__(self, a: Mapping, b: Mapping) -> np.ndarray:
        return self.combine(lambda name, kernel: kernel(a[name], b[name]))


@dataclass(frozen=True, eq=False)
class _CachedSum:
    """A :class:`KernelSum` whose columns of known rows against the landmarks are read from a cache.

    Items carrying their :data:`ROW` numbers, against landmarks carrying theirs, are looked up;
    any other pair of items is computed.
    """

    total: KernelSum
    columns: Mapping[str, np.ndarray]
    diagonals: Mapping[str, np.ndarray] | None
    landmarks: np.ndarray

    def __call__(self, a: Mapping, b: Mapping) -> np.ndarray:
        if ROW in a and ROW in b:
            position = {int(row): j for j, row in enumerate(self.landmarks)}
            columns = [position.get(int(row)) for row in b[ROW]]
            if None not in columns:
                rows = np.asarray(a[ROW])
                return self.total.combine(lambda name, kernel: take(self.columns[name], rows)[:, columns])
        return self.total(a, b)

    def diagonal(self, items: Mapping) -> np.ndarray:
        """``k(x, x)`` of training rows, from the base kernels' cached diagonals."""
        return self.total.combine(lambda name, kernel: self.diagonals[name][np.asarray(items[ROW])])


@dataclass(frozen=True, eq=False)
class Landmarks:
    """The landmarks of one view's base kernels: small (m items of each base kernel), kept by a fitted system.

    Attributes
    ----------
    kernels : tuple of (str, callable)
        The base kernels' names and functions.
    rows : ndarray of int
        The training rows of the landmarks.
    items : mapping of str to items
        Each base kernel's items of the landmarks.
    """

    kernels: tuple[tuple[str, Callable], ...]
    rows: np.ndarray
    items: Mapping[str, Any]

    def columns(self, items: Mapping[str, Any], *, engine=None, chunk_size: int = DEFAULT_CHUNK_SIZE) -> "BaseColumns":
        """Every base kernel's columns of new items (each base kernel's items of them) against the landmarks."""
        views = {name: KernelView(items[name], kernel) for name, kernel in self.kernels}
        return BaseColumns(self, dict(items), _columns(views, self.items, engine, chunk_size), None)


@dataclass(frozen=True, eq=False)
class BaseColumns:
    """Every base kernel's columns against the same landmarks, on the training rows or on new items.

    Attributes
    ----------
    landmarks : Landmarks
    items : mapping of str to items
        Each base kernel's items of these rows.
    columns : mapping of str to ndarray of shape (n, m)
        ``K_b[rows, L]`` of each base kernel ``b`` (8 n m bytes each).
    diagonals : mapping of str to ndarray of shape (n,), or None
        ``k_b(x, x)`` of each training row; None for new items.
    """

    landmarks: Landmarks
    items: Mapping[str, Any]
    columns: Mapping[str, np.ndarray]
    diagonals: Mapping[str, np.ndarray] | None

    @property
    def n_samples(self) -> int:
        return next(iter(self.columns.values())).shape[0]

    def view(self, weights: Sequence[float]) -> KernelView:
        """The view of ``Σ_b weights[b] K_b`` on these rows, its landmark columns read from the cache.

        A training view brings its landmarks (``KernelView.landmarks``), so the solver's
        Nyström map is that of the weighted sum on them.
        """
        total = KernelSum(self.landmarks.kernels, tuple(check_weights(weights, len(self.columns)).tolist()))
        kernel = _CachedSum(total, self.columns, self.diagonals, self.landmarks.rows)
        return KernelView({ROW: np.arange(self.n_samples), **self.items}, kernel,
                          landmarks=self.landmarks.rows if self.diagonals is not None else None)

    def _factors(self) -> list[np.ndarray]:
        """``T_b`` of each base kernel, ``T_b T_b' = K_b[L, L]^+``: ``K_b[:, L] T_b`` is its Nyström feature map."""
        return [nystrom_transform(self.columns[name][self.landmarks.rows]) for name, _ in self.landmarks.kernels]

    def centred_traces(self) -> np.ndarray:
        """``tr(H K_b H) = Σ_i k_b(x_i, x_i) - 1'K_b 1 / n`` of each base kernel on the training rows.

        The diagonal's sum is exact; ``1'K_b 1`` is that of ``K_b``'s Nyström approximation on the
        landmarks, ``‖T_b' K_b[L, :] 1‖²`` (Williams & Seeger 2001), from the cached columns: exact
        when the landmarks span the kernel's feature space (every training row a landmark),
        otherwise at most the exact value (``K_b`` minus its Nyström approximation is positive
        semi-definite), so the centred trace is at least the exact one.

        Raises
        ------
        DataError
            Naming the base kernel whose centred trace is not positive (constant on the training rows).
        """
        n = self.n_samples
        traces = []
        for (name, _), T in zip(self.landmarks.kernels, self._factors()):
            trace = float(self.diagonals[name].sum() - np.sum((T.T @ self.columns[name].sum(axis=0)) ** 2) / n)
            if not trace > 0:
                raise DataError(f"base kernel {name}: its centred training kernel has trace {trace:.3g}; the kernel "
                                f"is constant on the {n} training items, so it cannot be normalised")
            traces.append(trace)
        return np.array(traces)


def centred_inner_products(views: Sequence[BaseColumns], *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> np.ndarray:
    """``<H K_b H, H K_c H>_F`` of every pair of base kernels of ``views`` (the same training rows), approximated.

    Each kernel is replaced by its Nyström approximation on its view's landmarks, ``G_b G_b'`` with
    ``G_b = K_b[:, L] T_b``, whose centred inner products are r x r:
    ``<H G_b G_b' H, H G_c G_c' H>_F = ‖G_b'H G_c‖_F²`` (Williams & Seeger 2001), from the cached
    columns in one pass over chunks of rows.  Exact when the landmarks span the kernels' feature
    spaces.  What the alignment weights of Cortes, Mohri & Rostamizadeh (2012) need
    (:func:`~kcca_desc.kernels.combine.alignment_weights_from_products`).

    Returns
    -------
    ndarray of shape (n_kernels, n_kernels)
        In the order of the views' kernels, view after view.
    """
    columns = [(view.columns[name], T) for view in views
               for (name, _), T in zip(view.landmarks.kernels, view._factors())]
    sizes = [T.shape[1] for _, T in columns]
    n = views[0].n_samples
    gram, total = 0.0, 0.0
    for rows in _parts(n, chunk_size):
        G = np.hstack([take(C, rows) @ T for C, T in columns])
        gram = gram + G.T @ G
        total = total + G.sum(axis=0)
    centred = gram - np.outer(total, total) / n
    bounds = np.cumsum([0] + sizes)
    blocks = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    return np.array([[np.sum(centred[b, c] ** 2) for c in blocks] for b in blocks])


def _mean_value(view: KernelView, rows: np.ndarray, block_rows: int = 32) -> float:
    """The kernel's mean value over ``rows`` x ``rows``, computed a few rows at a time."""
    items = view.rows(rows)
    total = sum(float(view.block(rows[start:start + block_rows], items).sum())
                for start in range(0, rows.size, block_rows))
    return total / rows.size**2


def _diagonal_part(rows: np.ndarray, *, views: Mapping[str, KernelView]) -> dict:
    return {name: view.diagonal(rows) for name, view in views.items()}


def _columns_part(rows: np.ndarray, *, views: Mapping[str, KernelView], landmark_items: Mapping[str, Any]) -> dict:
    return {name: view.block(rows, landmark_items[name]) for name, view in views.items()}


def _parts(n: int, chunk_size: int) -> list[np.ndarray]:
    return [np.arange(start, min(start + chunk_size, n)) for start in range(0, n, chunk_size)]


def _columns(views: Mapping[str, KernelView], landmark_items: Mapping[str, Any], engine, chunk_size: int) -> dict:
    n = next(iter(views.values())).n_samples
    return map_chunks(engine or LocalEngine(), _columns_part, _parts(n, chunk_size), n, chunk_size, views=views,
                      landmark_items=landmark_items)


def base_columns(views: Mapping[str, KernelView], rank: int, *, landmarks: str = "pivots", oversample: float = 4.0,
                 rng: np.random.Generator | None = None, engine=None,
                 chunk_size: int = DEFAULT_CHUNK_SIZE) -> BaseColumns:
    """Choose ``rank`` landmarks for the base kernels of one view and compute their columns, in chunks.

    Parameters
    ----------
    views : mapping of str to KernelView
        Each base kernel's view of the same training rows (one row per item: no ``index``).
    rank : int
        Landmarks.  They are distinct rows: with fewer rows than ``rank``, every row is one, with a
        warning naming the rank used.
    landmarks : {"pivots", "uniform"}, default="pivots"
        How they are chosen (:data:`~kcca_desc.scale.LANDMARKS`), on the sum of the base kernels each
        scaled to unit centred trace (its mean value estimated on a uniform sample of 256 items).
    oversample : float, default=4.0
    rng : numpy.random.Generator, optional
    engine : LocalEngine or DaskEngine, optional
        Where the chunks run (None: this process).
    chunk_size : int, default=DEFAULT_CHUNK_SIZE

    Returns
    -------
    BaseColumns
        Held in this process: 8 n (rank + 1) bytes per base kernel.
    """
    n = next(iter(views.values())).n_samples
    if any(view.n_samples != n or view.index is not None for view in views.values()):
        raise DataError("base_columns: every base kernel's view must hold the same rows, one per item")
    if rank > n:
        warn_user(f"{n} training items give at most {n} landmarks per view: rank={n} is used instead of {rank}")
    engine = engine or LocalEngine()
    rng = rng or np.random.default_rng(0)
    diagonals = map_chunks(engine, _diagonal_part, _parts(n, chunk_size), n, chunk_size, views=views)
    kernels = tuple((name, view.kernel) for name, view in views.items())
    items = {name: view.items for name, view in views.items()}
    # Each base kernel over its centred trace per item, mean(diag K) - mean(K) with the mean of K taken on a
    # uniform sample: the landmarks are chosen for the sum of unit-trace kernels, the sum a fit solves.
    sample = np.sort(rng.choice(n, size=min(n, _SAMPLE), replace=False))
    spreads = [float(np.mean(diagonals[name])) - _mean_value(view, sample) for name, view in views.items()]
    scaled = KernelView(items, KernelSum(kernels, tuple(1.0 / max(spread, np.finfo(np.float64).tiny)
                                                        for spread in spreads)))
    rows = LANDMARKS[landmarks](scaled, min(rank, n), rng, oversample=oversample)
    rows = np.asarray(rows, dtype=np.intp)
    chosen = Landmarks(kernels, rows, {name: view.rows(rows) for name, view in views.items()})
    return BaseColumns(chosen, items, _columns(views, chosen.items, engine, chunk_size), diagonals)
