"""The regularised kernel CCA estimator (Hodosh, Young & Hockenmaier 2013, Section 3.2)."""

from __future__ import annotations

import copy
import functools
import numbers
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

from .._core.errors import DataError, KccaDescError, ParameterError
from ..kernels._validation import kernel_keywords
from .._core.resources import available_memory, require_memory
from .._core.validation import (
    FINITE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    DtypeOptions,
    Interval,
    InvalidParameterError,
    SequenceOf,
    StrOptions,
    ValidatedParams,
    check_array,
    check_is_fitted,
    invalid_parameter,
    raise_together,
    settings_requirement,
)

from .incomplete_cholesky import (
    CenteredMatrixColumns,
    KernelColumns,
    MatrixColumns,
    incomplete_cholesky,
)
from .memory import SolverMemory
from .precomputed import PrecomputedKernel
from .preprocessing import KernelCentering, symmetrised
from .scoring import CanonicalScoreMixin, correlation_weights
from .spectral import (
    KernelSpectrum,
    n_canonical_pairs,
    solve_canonical,
    spectrum_from_factor,
    spectrum_from_kernel,
)

__all__ = ["KCCA", "kernel_params_errors", "kernel_block"]

#: Largest training set that ``method="auto"`` solves exactly (two n x n eigendecompositions).
EXACT_MAX_SAMPLES = 10_000


#: n x n float64 matrices the exact solver holds at its peak: the two kernels, the centred copy
#: being decomposed, its eigenvectors and LAPACK's workspace (``syevd`` needs about 2 n^2).
EXACT_PEAK_MATRICES = 6


def _kernel_label(kernel) -> str:
    """A kernel function in messages: its metric name, or the callable's name."""
    return repr(kernel) if isinstance(kernel, str) else getattr(kernel, "__name__", type(kernel).__name__)


def kernel_params_errors(owner: Any) -> list[InvalidParameterError]:
    """The errors of ``owner``'s ``kernel_x_params``/``kernel_y_params`` with a key its kernel function does not take.

    For the estimators that take a kernel function and its keyword arguments per view
    (:class:`KCCA`, :class:`~kcca_desc.scale.LandmarkKCCA`): checked against the metric's keywords
    or the callable's signature (:func:`~kcca_desc.kernels._validation.kernel_keywords`) before
    any kernel is computed, where Python's ``TypeError`` would name neither the estimator nor
    the parameter.  A callable taking ``**kwargs`` takes any key.
    """
    errors = []
    for view in "xy":
        kernel, name = getattr(owner, f"kernel_{view}"), f"kernel_{view}_params"
        # A PrecomputedKernel takes none, refused as a whole by KCCA._kernel_block.
        accepted = None if isinstance(kernel, PrecomputedKernel) else kernel_keywords(kernel)
        if accepted is not None:
            requirement = settings_requirement(getattr(owner, name), accepted, owner=type(owner).__name__,
                                               target=f"kernel_{view}={_kernel_label(kernel)}")
            if requirement is not None:
                errors.append(invalid_parameter(owner, name, requirement, getattr(owner, name)))
    return errors


def kernel_block(A: np.ndarray, B: np.ndarray | None, kernel: str | Callable, params: Mapping[str, Any], *,
                 setting: str, data: str) -> np.ndarray:
    """``k(A, B)`` of a kernel function on raw rows (``B=None``: ``k(A, A)``), its failures named.

    Parameters
    ----------
    A, B : ndarray
        Feature rows.
    kernel : str or callable
        A metric of :func:`sklearn.metrics.pairwise.pairwise_kernels` or ``k(x, y, **params) -> float``.
    params : mapping
        Its keyword arguments.
    setting : str
        The parameter that set the kernel (``"kernel_x"``), for messages; its keywords are
        ``setting + "_params"``.
    data : str
        What ``A`` is (``"X"``), for messages.

    Raises
    ------
    DataError
        If the metric cannot be computed on the data (``chi2`` on negative features).
    ParameterError
        If a callable fails or returns no number for each pair of rows, or the result is no
        ``(len(A), len(B))`` matrix of numbers.
    """
    name = f"{setting}={_kernel_label(kernel)}"
    try:
        K = pairwise_kernels(A, B, metric=kernel, **params)
    except KccaDescError:
        raise
    except (ValueError, TypeError, ArithmeticError) as exc:
        if callable(kernel):  # the function breaks its contract, k(x, y) -> float
            raise ParameterError(f"{name} must return one number for each pair of rows (k(x, y) -> float) "
                                 f"with {setting}_params={dict(params)!r}; it failed on {data}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        raise DataError(f"{name} cannot be computed on {data}: {exc}") from None
    if K.shape != (len(A), len(A) if B is None else len(B)) or K.dtype.kind not in "biuf":
        raise ParameterError(f"{name} must give a ({len(A)}, {len(A) if B is None else len(B)}) matrix of "
                             f"numbers on {data}, got {K.dtype} of shape {K.shape}")
    return K


def _exact_fits_in_memory(n: int) -> bool:
    """Whether the exact solver's peak (``EXACT_PEAK_MATRICES`` n x n float64) fits the memory available now."""
    available = available_memory()
    return available is None or EXACT_PEAK_MATRICES * 8 * n * n <= available


class _Decomposition:
    """What every (reg, n_components) setting shares: the two spectra and ``Ux'Uy``.

    ``key`` identifies the two centred kernels (hashes of their bytes) when
    solutions are cached; ``cross`` is then computed only if one is not.
    """

    def __init__(self, spectrum_x: KernelSpectrum, spectrum_y: KernelSpectrum,
                 key: tuple[str, str] | None = None):
        self.spectrum_x, self.spectrum_y, self.key = spectrum_x, spectrum_y, key

    @functools.cached_property
    def cross(self) -> np.ndarray:
        return self.spectrum_x.vectors.T @ self.spectrum_y.vectors


def _explained_trace(spectrum: KernelSpectrum) -> float:
    """Share of the centred kernel's trace its spectrum keeps; 1 for a zero kernel, which has nothing to keep."""
    return float(spectrum.values.sum() / spectrum.trace) if spectrum.trace else 1.0


class KCCA(ValidatedParams, CanonicalScoreMixin, TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Regularised kernel canonical correlation analysis between two views.

    From centred training kernels ``Kx``, ``Ky`` (n x n), find dual weights
    ``alpha_k``, ``beta_k`` maximising

        rho = alpha' Kx Ky beta / sqrt((alpha' Rx alpha)(beta' Ry beta)),

    with ``Rx = Kx^2 + reg Kx`` (``reg_form="ridge"``, Bach & Jordan 2002) or
    ``Rx = (1 - reg) Kx^2 + reg Kx`` (``reg_form="hardoon"``, Hardoon et al.
    2004), successive pairs being uncorrelated with the earlier ones.  New
    items are centred with the training means and projected onto the top
    ``n_components`` directions; Hodosh et al. (2013) score an image against a
    sentence by the cosine of their projections.

    Parameters
    ----------
    n_components : int, default=2
        Number of canonical directions kept.  Fewer can be used later without
        refitting (``transform(..., n_components=k)``), more with
        :meth:`with_params`.  There are at most ``min(rank_x_, rank_y_)`` (see
        ``clip_to_rank``).
    reg : float, default=1.0
        Regulariser ``kappa > 0``.  In the ridge form it is on the scale of the
        centred kernels' eigenvalues; in the Hardoon form it must lie in (0, 1].
    reg_form : {"ridge", "hardoon"}, default="ridge"
        Regularised norm ``Kx^2 + reg Kx`` or ``(1 - reg) Kx^2 + reg Kx``.
    kernel_x, kernel_y : "precomputed", str or callable, default="precomputed"
        ``"precomputed"``: ``X`` (``Y``) passed to :meth:`fit` is the square
        training kernel, or a :class:`~kcca_desc.kcca.KernelColumns` oracle that
        yields its columns on demand (low-rank solver only), and ``transform``
        takes new-by-training kernel rows.  Otherwise a metric name of
        :func:`sklearn.metrics.pairwise.pairwise_kernels` or a callable
        ``k(x, y) -> float`` applied to raw feature rows.  A
        :class:`~kcca_desc.kcca.PrecomputedKernel` looks a Gram matrix up by item number:
        the way to run scikit-learn's model selection on precomputed kernels.
    kernel_x_params, kernel_y_params : dict or None, default=None
        Keyword arguments of the kernel functions (e.g. ``{"gamma": 0.5}``).
    center : bool, default=True
        Centre both kernels in feature space (``H K H``, ``H = I - 11'/n``),
        and new items with the training means (see
        :class:`~kcca_desc.kcca.KernelCentering`).
    method : {"auto", "exact", "lowrank"}, default="auto"
        ``"exact"``: one symmetric eigendecomposition of each centred kernel,
        O(n^3) once.  ``"lowrank"``: pivoted incomplete Cholesky of each
        centred kernel to ``tol`` or ``rank``, O(n m^2 + m^3).  ``"auto"``
        chooses exact when both kernels are explicit matrices, ``rank`` is
        None, n <= 10,000 and the exact solver's peak (about six n x n float64
        matrices) fits the memory available now, low-rank otherwise: image kernels are high-rank
        (a rank-1,500 factor keeps only about a third of the centred Flickr8K
        pyramid kernel's trace), so the exact solver is preferred whenever it
        is affordable.
    rank : int or None, default=None
        Maximum rank of each incomplete Cholesky factor (low-rank solver).
    tol : float, default=1e-6
        Low-rank solver: stop the factorisation once the residual trace is at
        most ``tol`` times the centred kernel's trace.
    weight_power : float, default=0.0
        Multiply projected dimension ``k`` by ``rho_k ** weight_power`` in
        :meth:`transform` (0: unweighted, as in Hodosh et al. 2013, Section 3.2.2);
        ``4`` helped retrieval on Flickr8K in a preliminary experiment (``docs/design.md``).
    memory : str, path-like or None, default=None
        Directory caching the exact solver's kernel eigendecompositions and
        canonical solutions (:class:`~kcca_desc.kcca.memory.SolverMemory`:
        checksummed entries of the toolkit's cache, verified on every read; a
        ``joblib.Memory``, accepted before, is refused).  Eigendecompositions are keyed by the centred
        kernel's bytes, so systems that share one kernel (e.g. the image
        kernel of every text kernel) decompose it once; solutions by both
        kernels' bytes, ``reg``, ``reg_form``, ``n_components`` and
        ``solve_dtype``, so a refit or :meth:`with_params` of a setting
        solved before costs no eigensolve.  None caches nothing.
    solve_dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the canonical eigensolve that each ``reg`` needs (the
        ``syevr`` of the whitened cross-covariance's Gram matrix, the costly
        step of :meth:`with_params`).  ``float32`` finds the top singular
        subspace in single precision (1.6 times as fast at n = 6,000,
        ``benchmarks/kcca_solve_dtype.py``) and computes the
        canonical pairs within it in double precision (Rayleigh-Ritz), so
        correlations and weights stay float64; the kernel eigendecompositions
        are always double precision.
    clip_to_rank : bool, default=False
        What to do when ``n_components`` exceeds the number of canonical pairs, the smaller
        numerical rank of the two centred kernels (a small vocabulary, repeated captions or few
        training items make a low-rank kernel): False raises a :class:`ParameterError` naming the
        kernel of lower rank and its rank; True keeps every pair there is (``n_components_``
        says how many), as :class:`sklearn.decomposition.KernelPCA` drops zero eigenvalues.
        Either way a kernel of rank 0 is a :class:`DataError`.
    view_names : (str, str), default=("X", "Y")
        What the two views are, for messages: a training kernel that is not positive
        semi-definite is reported as "the training kernel of <name>" (an image-sentence ranker
        names its images and its captions' text kernel).

    Attributes
    ----------
    alpha_, beta_ : ndarray of shape (n_samples, ``n_components_``)
        Dual weights of the two views, normalised so that
        ``alpha' Rx alpha = 1``.
    n_components_ : int
        Canonical pairs kept: ``n_components``, or fewer with ``clip_to_rank``.
    canonical_correlations_ : ndarray of shape (``n_components_``,)
        Regularised canonical correlations, decreasing.  In [0, 1) for the
        ridge form; the Hardoon form shrinks the ``K^2`` term by ``1 - reg``,
        so its values can reach ``1 / (1 - reg)``.
    x_centering_, y_centering_ : KernelCentering or None
        Training means used to centre new kernel rows (None when
        ``center=False``).
    rank_x_, rank_y_ : int
        Numerical rank of each (approximated) centred kernel: its eigenvalues above
        ``n eps max(lambda)``, the tolerance of :func:`numpy.linalg.matrix_rank`.
    explained_trace_x_, explained_trace_y_ : float
        Share of each centred kernel's trace kept by the decomposition
        (1 for the exact solver up to dropped null directions).
    method_ : str
        The solver used, ``"exact"`` or ``"lowrank"``.
    n_features_in_ : int
        Number of columns of ``X`` seen in :meth:`fit`.

    Notes
    -----
    Both solvers write the centred kernels as ``K = U diag(lambda) U'`` and
    take the SVD of the whitened cross-covariance (see
    :mod:`kcca_desc.kcca.spectral`), so the canonical correlations are exact
    for the decomposed kernels.  Centring puts the constant vector in each
    kernel's null space; null and numerically zero directions (eigenvalues
    below ``n eps max(lambda)``) carry no correlation and are dropped, and
    ``n_components`` may not exceed the smaller remaining rank (unless ``clip_to_rank``).

    A fitted model keeps the decomposition (two n x rank eigenvector
    matrices and, once a setting has been solved rather than read from
    ``memory``, their rank_x x rank_y cross product) so that
    :meth:`with_params` and :meth:`path` stay cheap; it dominates the model's
    memory and pickle size (about 0.9 GB for the exact solver at n = 6,000).

    When a view is given as a :class:`KernelColumns` oracle, the uncentred
    kernel is factorised (only its pivot columns are evaluated) and the factor
    is centred, ``Gc = H G`` (Bach & Jordan 2002); new items are then centred
    with the means of ``G G'``, the training kernel as the model sees it.

    References
    ----------
    Bach, F. R. & Jordan, M. I. (2002). Kernel independent component analysis.
    JMLR 3, 1-48.

    Hardoon, D. R., Szedmak, S. & Shawe-Taylor, J. (2004). Canonical
    correlation analysis: an overview with application to learning methods.
    Neural Computation 16(12), 2639-2664.

    Hodosh, M., Young, P. & Hockenmaier, J. (2013). Framing image description
    as a ranking task: data, models and evaluation metrics. JAIR 47, 853-899.

    Examples
    --------
    >>> import numpy as np
    >>> from kcca_desc.kcca import KCCA
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((50, 2))
    >>> X = np.c_[Z, rng.standard_normal((50, 3))]
    >>> Y = np.c_[Z @ [[1.0], [0.5]], rng.standard_normal((50, 2))]
    >>> model = KCCA(n_components=1, reg=1e-3, kernel_x="linear", kernel_y="linear").fit(X, Y)
    >>> bool(model.canonical_correlations_[0] > 0.99)
    True
    """

    def __init__(
        self,
        *,
        n_components: int = 2,
        reg: float = 1.0,
        reg_form: str = "ridge",
        kernel_x: str | Callable = "precomputed",
        kernel_y: str | Callable = "precomputed",
        kernel_x_params: dict | None = None,
        kernel_y_params: dict | None = None,
        center: bool = True,
        method: str = "auto",
        rank: int | None = None,
        tol: float = 1e-6,
        weight_power: float = 0.0,
        memory=None,
        solve_dtype=np.float64,
        clip_to_rank: bool = False,
        view_names=("X", "Y"),
    ):
        self.n_components = n_components
        self.reg = reg
        self.reg_form = reg_form
        self.kernel_x = kernel_x
        self.kernel_y = kernel_y
        self.kernel_x_params = kernel_x_params
        self.kernel_y_params = kernel_y_params
        self.center = center
        self.method = method
        self.rank = rank
        self.tol = tol
        self.weight_power = weight_power
        self.memory = memory
        self.solve_dtype = solve_dtype
        self.clip_to_rank = clip_to_rank
        self.view_names = view_names

    # ------------------------------------------------------------------ validation
    _parameter_constraints = {
        "n_components": [POSITIVE_INT],
        "reg": [POSITIVE_REAL],
        "reg_form": [StrOptions({"ridge", "hardoon"})],
        "kernel_x": [StrOptions({"precomputed", *PAIRWISE_KERNEL_FUNCTIONS}), callable],
        "kernel_y": [StrOptions({"precomputed", *PAIRWISE_KERNEL_FUNCTIONS}), callable],
        "kernel_x_params": [dict, None],
        "kernel_y_params": [dict, None],
        "center": ["boolean"],
        "method": [StrOptions({"auto", "exact", "lowrank"})],
        "rank": [POSITIVE_INT, None],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "weight_power": [FINITE_REAL],
        "memory": [str, os.PathLike, None],
        "solve_dtype": [DtypeOptions((np.float64, np.float32))],
        "clip_to_rank": ["boolean"],
        "view_names": [SequenceOf(str)],
    }

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.reg_form == "hardoon" and self.reg > 1:
            raise invalid_parameter(self, "reg", "in (0, 1] when reg_form='hardoon'", self.reg)
        raise_together(kernel_params_errors(self))

    def _training_kernel(self, data: Any, view: str) -> np.ndarray | KernelColumns:
        """The square training kernel of one view (or its column oracle); records raw data."""
        kernel = getattr(self, f"kernel_{view}")
        name = view.upper()
        if isinstance(data, KernelColumns):
            if kernel != "precomputed":
                raise ParameterError(f"{name} is a KernelColumns oracle but kernel_{view}={kernel!r}")
            return data
        if kernel != "precomputed":
            # A 1-D Y is one feature (as a regression target); X must be 2-D.
            data = check_array(data, dtype=np.float64, ensure_2d=view == "x", input_name=name)
            if data.ndim == 1:
                data = data[:, None]
            setattr(self, f"_{view}_fit", data)
            K = self._kernel_block(data, None, view)
            if not np.all(np.isfinite(K)):
                raise DataError(f"kernel_{view} produced NaN or infinite values on {name}")
            return np.asarray(K, dtype=np.float64)
        K = check_array(data, dtype=np.float64, input_name=name)
        if K.shape[0] != K.shape[1]:
            raise DataError(f"precomputed training kernel {name} must be square, got shape {K.shape}")
        # The largest magnitude without |K|, a temporary as large as K (0.3 s at n = 6,000).
        K, symmetric = symmetrised(np.ascontiguousarray(K), rtol=1e-6, atol=1e-8 * max(K.max(), -K.min()))
        if not symmetric:
            raise DataError(f"precomputed training kernel {name} is not symmetric")
        return K

    def _kernel_block(self, A: np.ndarray, B: np.ndarray | None, view: str) -> np.ndarray:
        """``k(A, B)`` of a view's kernel function on raw rows (``B=None``: ``k(A, A)``)."""
        kernel = getattr(self, f"kernel_{view}")
        params = getattr(self, f"kernel_{view}_params") or {}
        if isinstance(kernel, PrecomputedKernel):
            if params:
                raise ParameterError(f"kernel_{view}_params must be empty for a PrecomputedKernel, got {params}")
            return kernel.matrix(A, B)  # whole blocks, not one Python call per pair
        return kernel_block(A, B, kernel, params, setting=f"kernel_{view}", data=view.upper())

    def _resolve_method(self, kernels: Sequence[Any], n: int) -> str:
        oracle = any(isinstance(K, KernelColumns) for K in kernels)
        if self.method == "exact":
            if oracle:
                raise ParameterError("method='exact' needs explicit kernel matrices, not KernelColumns")
            require_memory(EXACT_PEAK_MATRICES * 8 * n * n, f"the exact KCCA solver on {n:,} items",
                           "use method='lowrank' with a rank (e.g. rank=2000), or fewer training items")
            return "exact"
        if self.method == "lowrank" or oracle or self.rank is not None or n > EXACT_MAX_SAMPLES:
            return "lowrank"
        return "exact" if _exact_fits_in_memory(n) else "lowrank"

    # ------------------------------------------------------------------ fitting
    def _kernel_name(self, view: str) -> str:
        """The training kernel of ``view`` in the user's terms, for messages."""
        return f"the training kernel of {self.view_names['xy'.index(view)]} ({self.n_samples_fit_:,} items)"

    def _decompose(self, K: np.ndarray | KernelColumns, view: str,
                   method: str) -> tuple[KernelSpectrum, str | None]:
        """Spectrum of one centred training kernel and, when cached, its hash; sets the view's centring."""
        name = self._kernel_name(view)
        centering = None
        kernel_hash = None
        if isinstance(K, KernelColumns):
            G, _ = incomplete_cholesky(K, tol=self.tol, rank=self.rank)
            uncentred_trace = float(np.sum(K.diagonal()))
            if self.center:
                centering = KernelCentering().fit_factor(G)
                G -= G.mean(axis=0)
                trace = uncentred_trace - K.n_samples * centering.grand_mean_
            else:
                trace = uncentred_trace
            spectrum = spectrum_from_factor(G, trace, name=name)
        else:
            if self.center:
                centering = KernelCentering().fit(K)
            if method == "exact":
                # K is already this fit's own symmetrised copy: centre it in place.
                if centering is not None:
                    K -= centering.column_means_[None, :]
                    K -= centering.column_means_[:, None]
                    K += centering.grand_mean_
                if self.memory is None:
                    spectrum = spectrum_from_kernel(K, name)
                else:
                    spectrum, kernel_hash = SolverMemory(self.memory).spectrum(K, name)
            else:
                columns = MatrixColumns(K) if centering is None else CenteredMatrixColumns(K)
                G, _ = incomplete_cholesky(columns, tol=self.tol, rank=self.rank)
                spectrum = spectrum_from_factor(G, float(np.sum(columns.diagonal())), name=name)
        setattr(self, f"{view}_centering_", centering)
        return spectrum, kernel_hash

    def fit(self, X, Y) -> "KCCA":
        """Fit the canonical directions on paired training views.

        Parameters
        ----------
        X, Y : array-like or KernelColumns
            With ``kernel_* = "precomputed"``: the (n, n) training kernel, or a
            :class:`~kcca_desc.kcca.KernelColumns` oracle.  Otherwise raw
            features of shape (n, n_features) (1-D ``Y`` is one feature).

        Returns
        -------
        self : KCCA
        """
        self._validate_params()
        if Y is None:
            raise DataError("KCCA requires y to be passed, but the target y is None: it needs two views")
        Kx = self._training_kernel(X, "x")
        Ky = self._training_kernel(Y, "y")
        n_x = Kx.n_samples if isinstance(Kx, KernelColumns) else Kx.shape[0]
        n_y = Ky.n_samples if isinstance(Ky, KernelColumns) else Ky.shape[0]
        if n_x != n_y:
            raise DataError(f"X and Y must describe the same items, got {n_x} and {n_y} samples")
        if n_x < 2:
            raise DataError(f"KCCA needs at least 2 training samples, got n_samples={n_x}")
        self.n_features_in_ = self._x_fit.shape[1] if self.kernel_x != "precomputed" else n_x
        self.n_samples_fit_ = n_x
        self.method_ = self._resolve_method((Kx, Ky), n_x)
        spectrum_x, hash_x = self._decompose(Kx, "x", self.method_)
        spectrum_y, hash_y = self._decompose(Ky, "y", self.method_)
        del Kx, Ky
        key = None if hash_x is None or hash_y is None else (hash_x, hash_y)
        self._decomposition = _Decomposition(spectrum_x, spectrum_y, key)
        self.rank_x_, self.rank_y_ = spectrum_x.rank, spectrum_y.rank
        self.explained_trace_x_, self.explained_trace_y_ = map(_explained_trace, (spectrum_x, spectrum_y))
        self._solve()
        return self

    def _solve(self) -> None:
        """Canonical pairs for the current ``reg`` and ``n_components`` from the decomposition."""
        dec = self._decomposition
        self.n_components_ = n_canonical_pairs(dec.spectrum_x, dec.spectrum_y, self.n_components,
                                               names=(self._kernel_name("x"), self._kernel_name("y")),
                                               clip=self.clip_to_rank)
        dtype = np.dtype(self.solve_dtype)
        if dec.key is None:
            solution = solve_canonical(dec.spectrum_x, dec.spectrum_y, dec.cross, self.reg,
                                       self.reg_form, self.n_components_, dtype=dtype)
            self.canonical_correlations_ = solution.correlations
            self.alpha_, self.beta_ = solution.directions(dec.spectrum_x, dec.spectrum_y)
        else:
            self.canonical_correlations_, self.alpha_, self.beta_ = SolverMemory(self.memory).directions(
                dec.key, dec.spectrum_x, dec.spectrum_y, lambda: dec.cross, self.reg, self.reg_form,
                self.n_components_, dtype)

    # ------------------------------------------------------------------ re-use
    def with_params(self, **params) -> "KCCA":
        """A fitted copy with new ``reg``, ``n_components`` or ``weight_power``, without refitting.

        The copy shares this model's kernel decompositions (no copy is made),
        so it costs one SVD of the rank_x x rank_y whitened cross-covariance.
        Changing any other parameter requires :meth:`fit`.
        """
        check_is_fitted(self)
        cheap = {"reg", "n_components", "weight_power"}
        if not set(params) <= cheap:
            raise ParameterError(
                f"with_params only changes {sorted(cheap)}; refit to change {sorted(set(params) - cheap)}"
            )
        model = copy.copy(self)
        model.set_params(**params)
        model._validate_params()
        if model.reg != self.reg or model.n_components > self.n_components:
            model._solve()
        elif model.n_components < self.n_components:
            # Fewer pairs than asked for were kept when clip_to_rank clipped them.
            k = model.n_components_ = min(model.n_components, self.n_components_)
            model.canonical_correlations_ = self.canonical_correlations_[:k]
            model.alpha_, model.beta_ = self.alpha_[:, :k], self.beta_[:, :k]
        return model

    def path(self, regs: Sequence[float], n_components: int | None = None) -> list["KCCA"]:
        """Fitted copies for several regularisers, sharing one decomposition (see :meth:`with_params`)."""
        k = self.n_components if n_components is None else n_components
        return [self.with_params(reg=reg, n_components=k) for reg in regs]

    # ------------------------------------------------------------------ projection
    def _new_kernel(self, data, view: str) -> np.ndarray:
        kernel = getattr(self, f"kernel_{view}")
        name = f"{view.upper()}"
        if kernel == "precomputed":
            K = check_array(data, dtype=np.float64, input_name=name)
            if K.shape[1] != self.n_samples_fit_:
                raise DataError(
                    f"{name} must hold kernel rows against the {self.n_samples_fit_} training items, "
                    f"got shape {K.shape}"
                )
            return K
        data = check_array(data, dtype=np.float64, ensure_2d=view == "x", input_name=name)
        if data.ndim == 1:
            data = data[:, None]
        train = getattr(self, f"_{view}_fit")
        if data.shape[1] != train.shape[1]:
            raise DataError(
                f"{name} has {data.shape[1]} features, but KCCA is expecting "
                f"{train.shape[1]} features as input"
            )
        K = self._kernel_block(data, train, view)
        if not np.all(np.isfinite(K)):
            raise DataError(f"kernel_{view} produced NaN or infinite values on {name}")
        return K

    def _centred_kernel(self, data, view: str) -> np.ndarray:
        """New items' kernel rows against the training items, centred with the training means."""
        K = self._new_kernel(data, view)
        centering = getattr(self, f"{view}_centering_")
        return K if centering is None else centering.transform(K)

    def _project(self, data, view: str, n_components: int, centred: bool = False) -> np.ndarray:
        if centred:
            K = np.asarray(data)
            if K.ndim != 2 or K.shape[1] != self.n_samples_fit_:
                raise DataError(f"centred rows of {view.upper()} must have shape (n_new, {self.n_samples_fit_}), "
                                f"got {K.shape}")
        else:
            K = self._centred_kernel(data, view)
        weights = (self.alpha_ if view == "x" else self.beta_)[:, :n_components]
        scores = K @ weights
        if self.weight_power:
            scores *= correlation_weights(self.canonical_correlations_[:n_components], self.weight_power, owner=self)
            if not np.isfinite(scores).all():
                raise invalid_parameter(self, "weight_power", "small enough in magnitude that the weighted "
                                        "projections stay finite", self.weight_power)
        return scores

    def centred_rows(self, X=None, Y=None) -> tuple[np.ndarray | None, np.ndarray | None]:
        """New items' kernel rows of either view, or both, centred once for several projections.

        ``transform(*model.centred_rows(X, Y), centred=True)`` equals ``transform(X, Y)``, for this
        model and every copy :meth:`with_params` makes of it (they share its training means): a
        grid of settings over one decomposition centres the (possibly large) rows once.

        Returns
        -------
        (Xc, Yc)
            The centred rows, None for a view not given.
        """
        check_is_fitted(self)
        return tuple(None if data is None else self._centred_kernel(data, view)
                     for data, view in ((X, "x"), (Y, "y")))

    def transform(self, X=None, Y=None, *, n_components: int | None = None, centred: bool = False):
        """Project new items of either view, or both, onto the canonical directions.

        New kernel rows are centred with the training means,
        ``Kc_new = K_new - 1 (1'K/n) - (K_new 1/n) 1' + (1'K1/n^2) 1 1'``,
        and projected as ``Kc_new alpha`` (times ``rho ** weight_power``).

        Parameters
        ----------
        X, Y : array-like or None
            New items of the x and y views: kernel rows of shape
            (n_new, n_samples_fit) against the training items when the kernel
            is precomputed, raw features otherwise.
        n_components : int or None
            Use the top ``n_components <= self.n_components_`` directions.
        centred : bool, default=False
            ``X`` and ``Y`` are already centred kernel rows, from :meth:`centred_rows`.

        Returns
        -------
        x_scores or y_scores or (x_scores, y_scores)
            Projections of shape (n_new, n_components); a pair when both views
            are given.
        """
        check_is_fitted(self)
        if X is None and Y is None:
            raise ParameterError("transform needs X, Y or both")
        k = self.n_components_ if n_components is None else n_components
        if not isinstance(k, numbers.Integral) or not 1 <= k <= self.alpha_.shape[1]:
            raise ParameterError(
                f"n_components must be an integer in [1, {self.alpha_.shape[1]}], got {n_components!r}"
            )
        scores = [self._project(data, view, k, centred) for data, view in ((X, "x"), (Y, "y")) if data is not None]
        return scores[0] if len(scores) == 1 else tuple(scores)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel_x == "precomputed"
        tags.target_tags.required = True
        return tags
