"""Kernel CCA at large n: Nyström feature maps, blockwise products, a small local solve.

With the landmark feature maps ``g_x``, ``g_y`` (:mod:`.landmarks`) the training
kernels are ``Kx ~= Gx Gx'`` and ``Ky ~= Gy Gy'`` with ``Gx`` of shape (n, r).
Everything the regularised KCCA of :mod:`kcca_desc.kcca.spectral` needs is then
r x r (Bach & Jordan 2002, Section 6; Hodosh, Young & Hockenmaier 2013, Section 3.2):

* the means ``mu = G'1 / n`` and the centred Grams ``C = G'G - n mu mu'``
  (``Gc = G - 1 mu'`` is the factor of the centred kernel ``H K H``);
* ``C_xx = Vx Lx Vx'`` gives the spectrum of the centred kernel (``Ux = Gc Vx Lx^(-1/2)``),
  and ``Ux'Uy = Lx^(-1/2) Vx' C_xy Vy Ly^(-1/2)`` the cross product;
* a new item is projected by ``(g(x) - mu) Vx Lx^(1/2) a`` for the canonical
  coefficients ``a``, which equals the in-memory solver's ``Kc_new alpha`` with the
  kernel rows ``k(x, .) ~= g(x) Gx'`` of the approximated kernel.

The n x r factors are computed chunk by chunk (by a :class:`~.engine.LocalEngine` in
this process or a :class:`~.engine.DaskEngine` on a cluster), written to a
:class:`~.store.ChunkStore` when the views have keys, and reduced to the r x r sums
``(G'1, G'G)`` by a running sum in chunk order; the eigensolves and the canonical solve run here.
Peak memory is bounded by the chunk size and the rank, never by n.
"""

from __future__ import annotations

import copy
import numbers
import os
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

from .._core.cache import cache_key, cache_write_failed
from .._core.errors import DataError, ParameterError, warn_user
from ..kcca.estimator import kernel_params_errors
from ..kcca.scoring import CanonicalScoreMixin, correlation_weights
from ..kcca.spectral import KernelSpectrum, n_canonical_pairs, solve_canonical, spectrum_from_gram
from .._core.validation import (
    FINITE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    DtypeOptions,
    HasMethods,
    Interval,
    Registered,
    StrOptions,
    ValidatedParams,
    check_array,
    check_is_fitted,
    invalid_parameter,
    raise_together,
)
from .engine import LocalEngine
from .landmarks import LANDMARKS, NystromMap, nystrom_map
from .store import ChunkStore
from .views import KernelView, PairwiseKernel

__all__ = ["LandmarkKCCA", "LandmarkFeatures", "DEFAULT_RANK", "DEFAULT_CHUNK_SIZE"]

#: Landmarks per view unless given (``docs/design.md``: dev retrieval at the ranks measured).
DEFAULT_RANK = 1000
#: Rows per chunk unless given: a chunk's kernel block against 1,000 landmarks is 32 MB.
DEFAULT_CHUNK_SIZE = 4096


@dataclass(frozen=True)
class LandmarkFeatures:
    """Centred landmark features ``g(x) - mu`` of new items of one view, shape (n_new, r).

    Computing them costs the kernel columns against the landmarks; projecting them on any
    number of components or any ``reg`` of a grid is then one small matrix product each.
    """

    view: str
    values: np.ndarray


def _add(a: dict, b: dict) -> dict:
    return {key: a[key] + b[key] for key in a}


def _chunk_rows(chunk: int, chunk_size: int, n: int) -> np.ndarray:
    return np.arange(chunk * chunk_size, min((chunk + 1) * chunk_size, n))


def _created(store: ChunkStore | None, shapes: dict[str, tuple[int, ...]], chunk_rows: int) -> ChunkStore | None:
    """``store`` with the arrays of ``shapes`` created; None, with a warning, when it cannot be written.

    The store only saves a rerun its work (every chunk is also returned), so a full or read-only
    disk leaves the fit without it.
    """
    if store is None:
        return None
    try:
        for name, shape in shapes.items():
            store.create(name, shape, chunk_rows)
    except OSError as exc:
        cache_write_failed(store.path, exc)
        return None
    return store


def _keep(store: ChunkStore, name: str, chunk: int, block: np.ndarray) -> None:
    """Store a chunk that the caller also returns; a failed write only warns (see :func:`_created`)."""
    try:
        store.write(name, chunk, block)
    except OSError as exc:
        cache_write_failed(store.path, exc)


def _factor_chunk(chunk: int, *, views, maps, store, chunk_size: int) -> dict:
    """Factors of one chunk of rows (computed, or read back when stored) and their partial sums."""
    factors = []
    for name, view, fmap in zip(("x", "y"), views, maps):
        stored = store is not None and chunk not in store.missing(f"factor_{name}")
        if stored:
            G = store.read(f"factor_{name}", chunk)
        else:
            G = fmap.features(view, _chunk_rows(chunk, chunk_size, view.n_samples))
            if store is not None:
                _keep(store, f"factor_{name}", chunk, G)
        factors.append(G)
    Gx, Gy = factors
    rows = _chunk_rows(chunk, chunk_size, views[0].n_samples)
    # The kernels' own diagonals, to say how much of their trace the landmarks keep.
    return {"sum_x": Gx.sum(axis=0), "sum_y": Gy.sum(axis=0), "xx": Gx.T @ Gx, "yy": Gy.T @ Gy, "xy": Gx.T @ Gy,
            "trace_x": views[0].diagonal(rows, block_size=32).sum(),
            "trace_y": views[1].diagonal(rows, block_size=32).sum()}


def _feature_chunk(chunk: int, *, view, fmap, mean, store, name, chunk_size: int) -> np.ndarray:
    """Centred landmark features of one chunk of new items (read back when stored)."""
    if store is not None and chunk not in store.missing(name):
        return store.read(name, chunk)
    F = fmap.features(view, _chunk_rows(chunk, chunk_size, view.n_samples)) - mean
    if store is not None:
        _keep(store, name, chunk, F)
    return F


class LandmarkKCCA(ValidatedParams, CanonicalScoreMixin, TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Regularised kernel CCA on landmark feature maps, computed in chunks (locally or on Dask).

    The objective and regularisers are those of :class:`kcca_desc.kcca.KCCA`; the kernels
    are the Nyström approximations on ``rank`` landmarks per view (see the module docstring).

    Parameters
    ----------
    n_components : int, default=2
        Canonical directions kept.
    reg : float, default=1.0
        Regulariser ``kappa`` (ridge form on the scale of the centred kernels' eigenvalues).
    reg_form : {"ridge", "hardoon"}, default="ridge"
    rank : int, default=DEFAULT_RANK
        Landmarks per view ``m`` (the rank of each approximated kernel is at most ``m``).  The
        landmarks are distinct training items: a view with fewer items has as many landmarks as
        items, with a warning naming the rank used.
    landmarks : {"pivots", "uniform"}, default="pivots"
        How landmarks are chosen (:data:`~kcca_desc.scale.landmarks.LANDMARKS`); a view that
        brings its own (:attr:`KernelView.landmarks`) keeps them.
    oversample : float, default=4.0
        ``pivots``: the greedy pivots are chosen among ``oversample * rank`` sampled rows.
    chunk_size : int, default=DEFAULT_CHUNK_SIZE
        Rows per chunk: peak memory per worker is about ``chunk_size * rank`` floats for the
        kernel block plus ``3 rank^2`` for the partial products.
    engine : LocalEngine, DaskEngine or None, default=None
        Where the chunks run (None: this process, :class:`~kcca_desc.scale.engine.LocalEngine`).
        See :func:`~kcca_desc.scale.engine.dask_engine`.
    store : path-like or None, default=None
        Directory of the chunked Zarr store (:class:`~kcca_desc.scale.store.ChunkStore`):
        factors and features of views that have a ``key`` are written there chunk by chunk and
        a rerun resumes from the chunks found.  None: ``cache_dir("scale")``.
    weight_power : float, default=0.0
        Multiply projected dimension k by ``rho_k ** weight_power`` (as :class:`KCCA`).
    solve_dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the canonical eigensolve (as :class:`KCCA`).
    clip_to_rank : bool, default=False
        Keep every canonical pair there is when ``n_components`` exceeds their number, the
        smaller rank of the two centred approximated kernels, rather than raise (as :class:`KCCA`).
    random_state : int, default=0
        Seed of the landmark sample.
    kernel_x, kernel_y : str or callable, default="linear"
        The kernel of a view given to :meth:`fit` or :meth:`transform` as an array of feature
        rows (a metric of :func:`sklearn.metrics.pairwise.pairwise_kernels` or a callable
        ``k(x, y) -> float``); a :class:`~kcca_desc.scale.views.KernelView` brings its own.
    kernel_x_params, kernel_y_params : dict or None, default=None
        Keyword arguments of those kernels (e.g. ``{"gamma": 0.5}``).

    Attributes
    ----------
    map_x_, map_y_ : NystromMap
        The landmark feature maps.
    mean_x_, mean_y_ : ndarray of shape (r,)
        Training means of the landmark features.
    n_components_ : int
        Canonical pairs kept: ``n_components``, or fewer with ``clip_to_rank``.
    weights_x_, weights_y_ : ndarray of shape (r, ``n_components_``)
        Projection of centred landmark features onto the canonical directions.
    canonical_correlations_ : ndarray of shape (``n_components_``,)
    rank_x_, rank_y_ : int
        Numerical rank of each centred approximated kernel (:func:`~kcca_desc.kcca.spectral.rank_cutoff`).
    explained_trace_x_, explained_trace_y_ : float
        Share of each training kernel's trace kept by the landmark approximation,
        ``sum_i ||g(x_i)||^2 / sum_i k(x_i, x_i)`` (uncentred; 1 when the landmarks span the data).
    n_samples_fit_ : int
    n_features_in_ : int
        Columns of ``X`` when it was given as an array (absent for a KernelView).
    fit_key_ : str or None
        Identifies the fit (both views' keys and the landmark settings) in the store; None
        when a training view has no key (nothing stored).
    store_ : ChunkStore or None
        Where the training factors were written (``factor_x``, ``factor_y``).

    References
    ----------
    Bach, F. R. & Jordan, M. I. (2002). Kernel independent component analysis. JMLR 3, 1-48.

    Williams, C. K. I. & Seeger, M. (2001). Using the Nyström method to speed up kernel
    machines. NIPS 13.
    """

    def __init__(self, *, n_components: int = 2, reg: float = 1.0, reg_form: str = "ridge",
                 rank: int = DEFAULT_RANK, landmarks: str = "pivots", oversample: float = 4.0,
                 chunk_size: int = DEFAULT_CHUNK_SIZE, engine=None, store=None, weight_power: float = 0.0,
                 solve_dtype=np.float64, clip_to_rank: bool = False, random_state: int = 0, kernel_x="linear",
                 kernel_y="linear", kernel_x_params=None, kernel_y_params=None):
        self.n_components = n_components
        self.reg = reg
        self.reg_form = reg_form
        self.rank = rank
        self.landmarks = landmarks
        self.oversample = oversample
        self.chunk_size = chunk_size
        self.engine = engine
        self.store = store
        self.weight_power = weight_power
        self.solve_dtype = solve_dtype
        self.clip_to_rank = clip_to_rank
        self.random_state = random_state
        self.kernel_x = kernel_x
        self.kernel_y = kernel_y
        self.kernel_x_params = kernel_x_params
        self.kernel_y_params = kernel_y_params

    _parameter_constraints = {
        "n_components": [POSITIVE_INT],
        "reg": [POSITIVE_REAL],
        "reg_form": [StrOptions({"ridge", "hardoon"})],
        "rank": [POSITIVE_INT],
        "landmarks": [Registered(LANDMARKS, "landmark choice")],
        "oversample": [Interval(numbers.Real, 1, None, closed="left")],
        "chunk_size": [POSITIVE_INT],
        "engine": [HasMethods(["map", "map_reduce", "share"]), None],
        "store": [str, os.PathLike, None],
        "weight_power": [FINITE_REAL],
        "solve_dtype": [DtypeOptions((np.float64, np.float32))],
        "clip_to_rank": ["boolean"],
        "random_state": [SEED],
        "kernel_x": [StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS)), callable],
        "kernel_y": [StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS)), callable],
        "kernel_x_params": [dict, None],
        "kernel_y_params": [dict, None],
    }

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.reg_form == "hardoon" and self.reg > 1:
            raise invalid_parameter(self, "reg", "in (0, 1] when reg_form='hardoon'", self.reg)
        # As KCCA checks them: a key the kernel function does not take was Python's TypeError
        # from the first chunk of kernel columns.
        raise_together(kernel_params_errors(self))

    # ------------------------------------------------------------------ helpers
    @property
    def _engine(self):
        return self.engine if self.engine is not None else LocalEngine()

    def _store(self, *parts: str | None) -> ChunkStore | None:
        """The store of what ``parts`` identify; None when one of them is unknown (nothing stored)."""
        if any(part is None for part in parts):
            return None
        return ChunkStore(cache_key(kind="landmark_kcca", parts=list(parts)), self.store)

    def _view(self, data, name: str, *, fitting: bool = False) -> KernelView:
        """``data`` as a view: a KernelView as it is, an array of feature rows with ``kernel_<name>``."""
        if isinstance(data, (KernelView, LandmarkFeatures)):
            return data
        # A 1-D Y is one feature (as a regression target); X must be 2-D.
        rows = check_array(data, dtype=np.float64, ensure_2d=name == "x", input_name=name.upper())
        rows = rows[:, None] if rows.ndim == 1 else rows
        if name == "x":
            if fitting:
                self.n_features_in_ = rows.shape[1]
            elif hasattr(self, "n_features_in_") and rows.shape[1] != self.n_features_in_:
                raise DataError(f"X has {rows.shape[1]} features, but LandmarkKCCA is expecting "
                                f"{self.n_features_in_} features as input")
        params = getattr(self, f"kernel_{name}_params") or {}
        return KernelView(rows, PairwiseKernel(getattr(self, f"kernel_{name}"), tuple(sorted(params.items())),
                                               setting=f"kernel_{name}"))

    def _map(self, view: KernelView, rng: np.random.Generator) -> NystromMap:
        if view.landmarks is not None:  # a view whose columns against its landmarks are cached
            return nystrom_map(view, view.landmarks)
        rows = LANDMARKS[self.landmarks](view, self.rank, rng, oversample=self.oversample)
        return nystrom_map(view, rows)

    def _warn_if_rank_capped(self, X: KernelView, Y: KernelView) -> None:
        """Warn, before any kernel is computed, when ``rank`` exceeds a view's distinct training items.

        Landmarks are distinct training items, so a view that chooses them (rather than bringing its
        own) has at most as many as it has items: the fit runs with that many, not ``rank``.
        """
        items = {name: view.n_samples if view.index is None else np.unique(view.index).size
                 for name, view in (("X", X), ("Y", Y)) if view.landmarks is None}
        capped = {name: n for name, n in items.items() if n < self.rank}
        if not capped:
            return
        if len(capped) == 2 and len(set(capped.values())) == 1:
            n = capped["X"]
            warn_user(f"{n} training items give at most {n} landmarks per view: rank={n} is used instead of "
                      f"{self.rank}")
            return
        warn_user("; ".join(f"the {n} training items of {name} give at most {n} landmarks: rank={n} is used for "
                            f"{name} instead of {self.rank}" for name, n in capped.items()))

    # ------------------------------------------------------------------ fitting
    def fit(self, X: KernelView, Y: KernelView) -> "LandmarkKCCA":
        """Choose landmarks, reduce the chunked factors to r x r sums and solve.

        Parameters
        ----------
        X, Y : KernelView or array-like
            The two views of the same n training pairs (row i of X with row i of Y); an array
            of feature rows is a view with the kernel ``kernel_x`` (``kernel_y``).

        Returns
        -------
        self : LandmarkKCCA

        Warns
        -----
        UserWarning
            When ``rank`` is above the distinct training items of a view that chooses its
            landmarks: the warning names the rank used instead (that many items).
        """
        self._validate_params()
        if hasattr(self, "n_features_in_"):
            del self.n_features_in_  # set again below when X is an array
        X, Y = self._view(X, "x", fitting=True), self._view(Y, "y", fitting=True)
        for name, view in (("X", X), ("Y", Y)):
            if not isinstance(view, KernelView):
                raise ParameterError(f"LandmarkKCCA.fit: {name} must be a KernelView or an array, "
                                     f"got {type(view).__name__}")
        n = X.n_samples
        if Y.n_samples != n:
            raise DataError(f"X and Y must describe the same pairs, got {n} and {Y.n_samples} rows")
        if n < 2:
            raise DataError(f"LandmarkKCCA needs at least 2 training pairs, got n_samples = {n}")
        self._warn_if_rank_capped(X, Y)
        rng = np.random.default_rng(self.random_state)
        self.map_x_ = self._map(X, rng)
        self.map_y_ = self._map(Y, rng)
        self.n_samples_fit_ = n

        settings = {"rank": self.rank, "landmarks": self.landmarks, "oversample": self.oversample,
                    "seed": self.random_state, "chunk_size": self.chunk_size}
        self.fit_key_ = None if X.key is None or Y.key is None else cache_key(x=X.key, y=Y.key, **settings)
        store = self.store_ = _created(self._store(self.fit_key_), {"factor_x": (n, self.map_x_.rank),
                                                                   "factor_y": (n, self.map_y_.rank)}, self.chunk_size)
        n_chunks = -(-n // self.chunk_size)
        engine = self._engine
        sums = engine.map_reduce(
            _factor_chunk, range(n_chunks), _add,
            views=engine.share((X, Y)), maps=engine.share((self.map_x_, self.map_y_)), store=store,
            chunk_size=self.chunk_size)
        self._decompose(sums, n)
        self._solve()
        return self

    def _decompose(self, sums: dict, n: int) -> None:
        self.mean_x_ = sums["sum_x"] / n
        self.mean_y_ = sums["sum_y"] / n
        C_xx = sums["xx"] - n * np.outer(self.mean_x_, self.mean_x_)
        C_yy = sums["yy"] - n * np.outer(self.mean_y_, self.mean_y_)
        C_xy = sums["xy"] - n * np.outer(self.mean_x_, self.mean_y_)
        spectrum_x = spectrum_from_gram(0.5 * (C_xx + C_xx.T), float(np.trace(C_xx)), name="centred kernel X")
        spectrum_y = spectrum_from_gram(0.5 * (C_yy + C_yy.T), float(np.trace(C_yy)), name="centred kernel Y")
        # Ux'Uy with Ux = Gc Vx Lx^(-1/2): r x r, from the blockwise cross sum.
        cross = (spectrum_x.vectors / np.sqrt(spectrum_x.values)).T @ C_xy @ (
            spectrum_y.vectors / np.sqrt(spectrum_y.values))
        self._spectra = (spectrum_x, spectrum_y, cross)
        self.rank_x_, self.rank_y_ = spectrum_x.rank, spectrum_y.rank
        # Share of each (uncentred) training kernel's trace the landmark approximation keeps,
        # sum ||g(x_i)||^2 / sum k(x_i, x_i): the residual incomplete Cholesky stops on.
        self.explained_trace_x_ = float(np.trace(sums["xx"]) / sums["trace_x"])
        self.explained_trace_y_ = float(np.trace(sums["yy"]) / sums["trace_y"])

    def _solve(self) -> None:
        spectrum_x, spectrum_y, cross = self._spectra
        self.n_components_ = n_canonical_pairs(spectrum_x, spectrum_y, self.n_components, clip=self.clip_to_rank)
        solution = solve_canonical(spectrum_x, spectrum_y, cross, self.reg, self.reg_form, self.n_components_,
                                   dtype=np.dtype(self.solve_dtype))
        self.canonical_correlations_ = solution.correlations
        weights_x = _feature_weights(spectrum_x, solution.coef_x)
        weights_y = _feature_weights(spectrum_y, solution.coef_y)
        # Eigenvector signs are arbitrary; fix each pair so that X's largest weight is positive,
        # which makes the projections a deterministic function of the landmark features.
        signs = np.sign(weights_x[np.abs(weights_x).argmax(axis=0), np.arange(weights_x.shape[1])])
        signs[signs == 0] = 1.0
        self.weights_x_, self.weights_y_ = weights_x * signs, weights_y * signs

    # ------------------------------------------------------------------ re-use
    def with_params(self, **params) -> "LandmarkKCCA":
        """A fitted copy with new ``reg``, ``n_components`` or ``weight_power``, sharing the factorisation.

        Costs one r x r canonical solve: a grid of settings reuses one pass over the data.
        """
        check_is_fitted(self, "weights_x_")
        cheap = {"reg", "n_components", "weight_power"}
        if not set(params) <= cheap:
            raise ParameterError(f"with_params only changes {sorted(cheap)}; refit to change "
                             f"{sorted(set(params) - cheap)}")
        model = copy.copy(self)
        model.set_params(**params)
        model._validate_params()
        if model.reg != self.reg or model.n_components != self.n_components:
            model._solve()
        return model

    def path(self, regs, n_components: int | None = None) -> list["LandmarkKCCA"]:
        """Fitted copies for several regularisers, sharing one factorisation."""
        k = self.n_components if n_components is None else n_components
        return [self.with_params(reg=reg, n_components=k) for reg in regs]

    # ------------------------------------------------------------------ projection
    def features(self, X: KernelView | None = None, Y: KernelView | None = None):
        """Centred landmark features of new items (KernelView or array), computed in chunks (stored under the view's key)."""
        check_is_fitted(self, "weights_x_")
        out = []
        engine = self._engine
        for name, view, fmap, mean in (("x", X, self.map_x_, self.mean_x_), ("y", Y, self.map_y_, self.mean_y_)):
            if view is None:
                continue
            view = self._view(view, name)
            n_chunks = -(-view.n_samples // self.chunk_size)
            store = _created(self._store(self.fit_key_, view.key), {f"features_{name}": (view.n_samples, fmap.rank)},
                             self.chunk_size)
            blocks = engine.map(_feature_chunk, range(n_chunks), view=engine.share(view), fmap=engine.share(fmap),
                                mean=mean, store=store, name=f"features_{name}", chunk_size=self.chunk_size)
            out.append(LandmarkFeatures(name, np.concatenate(blocks, axis=0)))
        if not out:
            raise ParameterError("features needs X, Y or both")
        return out[0] if len(out) == 1 else tuple(out)

    def transform(self, X=None, Y=None, *, n_components: int | None = None):
        """Project new items of either view (KernelView, LandmarkFeatures or array) onto the canonical directions.

        Returns
        -------
        x_scores or y_scores or (x_scores, y_scores)
            Shape (n_new, ``n_components_``) each.
        """
        check_is_fitted(self, "weights_x_")
        if X is None and Y is None:
            raise ParameterError("transform needs X, Y or both")
        k = self.n_components_ if n_components is None else n_components
        if not isinstance(k, numbers.Integral) or not 1 <= k <= self.weights_x_.shape[1]:
            raise ParameterError(f"n_components must be an integer in [1, {self.weights_x_.shape[1]}], "
                             f"got {n_components!r}")
        scores = []
        for name, data, weights in (("x", X, self.weights_x_), ("y", Y, self.weights_y_)):
            if data is None:
                continue
            data = self._view(data, name)
            if isinstance(data, KernelView):
                data = self.features(**{name.upper(): data})
            if not isinstance(data, LandmarkFeatures) or data.view != name:
                raise ParameterError(f"transform: {name.upper()} must be a KernelView or the LandmarkFeatures of "
                                f"view {name!r}")
            projected = data.values @ weights[:, :k]
            if self.weight_power:
                projected *= correlation_weights(self.canonical_correlations_[:k], self.weight_power, owner=self)
            scores.append(projected)
        return scores[0] if len(scores) == 1 else tuple(scores)


def _feature_weights(spectrum: KernelSpectrum, coef: np.ndarray) -> np.ndarray:
    """``V L^(1/2) a``: centred landmark features -> canonical projections (module docstring)."""
    return spectrum.vectors @ (np.sqrt(spectrum.values)[:, None] * coef)
