"""The complete Hodosh et al. (2013) KCCA system as one estimator.

:class:`ImageSentenceRanker` runs the paper's procedure (Hodosh, Young & Hockenmaier 2013,
Sections 3.2-3.5 and 4.1.3):

1. image kernel (spatial pyramid over colour, texture and SIFT words, raised
   to the power p) and text kernel (e.g. ``tri_sem``, diagonal multiplied by
   d) on the training items — images with all their captions;
2. one KCCA decomposition (:class:`kcca_desc.kcca.KCCA`);
3. with a dev view: every (n, κ) of the grid scored on dev, and for each task
   the 5 settings with best R@1, the 5 best by R@5 and the 5 best by R@10
   (15 models, :func:`kcca_desc.methods.selection.select_per_task`);
4. at test time each selected model ranks the whole pool and the rankings are
   combined by Borda count with ties broken by median rank
   (:func:`kcca_desc.methods.fusion.borda_fuse`).

f(i, s) of one model is the cosine of the projected image and sentence.
"""

from __future__ import annotations

import itertools
from numbers import Real
from typing import Iterator, Sequence

import numpy as np
from sklearn.base import BaseEstimator

from .._core.cache import NpzCache, cache_dir
from ..data.dataset import Dataset, RetrievalView, require_dataset, require_view
from ..data.images import ImageSource
from .._core.errors import DataError, ParameterError
from ..image.kernel import IMAGE_KERNELS, ImageKernel
from .._core.profile import profiled
from .._core.progress import progress
from .._core.resources import require_memory
from ..kcca import KCCA, scale_diagonal
from ..evaluate.scores import DirectionalScores, cosine_scores
from ..text import named_kernels
from ..text.named_kernels import TEXT_KERNELS, make_text_kernel
from ..text.preprocess import Preprocessor
from .._core.validation import (
    FINITE_REAL,
    POSITIVE_INT,
    POSITIVE_REAL,
    SEED,
    Interval,
    Registered,
    SequenceOf,
    ValidatedParams,
    check_is_fitted,
    parameter_errors,
    raise_together,
    settings_errors,
    validation_errors,
)
from .base import RetrievalMethod, keep_below_training_size, keep_supported_components
from .fusion import borda_fuse
from .selection import dev_metrics, select_per_task

__all__ = ["ImageSentenceRanker", "DEFAULT_N_COMPONENTS", "DEFAULT_REGS"]

DEFAULT_N_COMPONENTS = (16, 32, 64, 128, 256)
DEFAULT_REGS = (0.01, 0.1, 1.0, 10.0)
#: n x n float64 matrices a fit holds at least: the image and text training kernels and the
#: solver's symmetrised copies of them.
GRAM_PEAK_MATRICES = 4
# The stage of a run's profile each step of a fit belongs to (another step is a stage of its own).
_PROFILE_STAGES = {"text_preprocess": "preprocessing", "image_codebooks": "codebooks",
                   "image_features": "image features",
                   "image_gram": "image kernel", "text_kernel_fit": "text kernels", "text_gram": "text kernels",
                   "kcca_fit": "factorisations", "model_selection": "selection"}


def text_cache_params(text_kernel, preprocessor: Preprocessor, train_captions) -> dict:
    """What a fitted text kernel's Gram matrices depend on: the key of their on-disk cache entries."""
    # Shallow: the kernel's preprocessor is left out below, and so are its settings (the
    # ``preprocessor__*`` entries a deep get_params adds for a Preprocessor).
    params = text_kernel.get_params(deep=False)
    # The kernel's preprocessor reads the external corpus only, keyed with it below (the
    # captions' preprocessor is keyed apart); cache does not change the values.
    params.pop("preprocessor")
    params.pop("cache")
    spec = TEXT_KERNELS[params["name"]]
    if spec.reads_external_corpus:
        # The corpus by content and its preprocessing (settings and library versions, the default
        # preprocessor's too), as the word similarities beneath key it: the default corpus
        # (corpus=None) is read from an installed package, which an upgrade changes.
        params["corpus"] = text_kernel.corpus_fingerprint_
    if getattr(spec, "source", None) is not None:
        # Read when called, so that a raised version (named_kernels' rule when a source changes
        # what it computes) reaches the Grams of the similarity as well as the similarity.
        params["similarity_version"] = named_kernels.SIMILARITY_CACHE_VERSION
    # Keyed by what the kernel computes rather than its name, so aliases (tri_sem) share Grams.
    params["name"] = spec.description
    return {"text_kernel": params, "preprocessor": preprocessor.cache_params(),
            "train": [list(c) for c in train_captions]}


def cached_text_gram(compute, params: dict, *, cache: bool, what: str, **key) -> np.ndarray:
    """``compute()`` as float64, read from or written to the ``text_gram`` cache under ``params`` and ``key``.

    Shared by every system over the named text kernels, so that they reuse one another's Grams.
    """
    store = NpzCache("text_gram", enabled=cache)
    return store.get_or_compute(lambda: {"K": np.asarray(compute(), dtype=np.float64)},
                                what=what, **key, **params)["K"]


class ImageSentenceRanker(ValidatedParams, BaseEstimator, RetrievalMethod):
    """Image–sentence ranking by kernel CCA (Hodosh, Young & Hockenmaier 2013).

    Parameters
    ----------
    image_kernel : {"pyramid", "histo", "colour_histo"}, default="pyramid"
        Image kernel (see :class:`kcca_desc.image.kernel.ImageKernel`).
    text_kernel : str, default="tri_sem"
        Named text kernel (see :func:`kcca_desc.text.named_kernels.make_text_kernel`).
    power : float, default=1.0
        Image-kernel power p.
    diag : float, default=1.0
        Text-kernel diagonal multiplier d >= 1: K_y + (d - 1) diag(K_y).
    n_components : sequence of int, default=DEFAULT_N_COMPONENTS
        Grid of projection dimensions n.  With a single value and a single
        ``reg`` no dev set is needed.
    regs : sequence of float, default=DEFAULT_REGS
        Grid of regularisation values κ.
    n_select : int, default=5
        Models kept per selection metric (the paper: 5, i.e. 15 per task).
    weight_power : float, default=0.0
        Weight projected dimension k by ρ_k ** weight_power before the cosine (our addition;
        0 is the paper's plain cosine, see ``docs/design.md``).
    kcca_params : dict, optional
        Further :class:`KCCA` parameters (``method``, ``rank``, ``reg_form``...).  Unless given,
        ``solve_dtype=numpy.float32``: each κ's canonical eigensolve finds its subspace in single
        precision and refines it in double, about 1.6 times as fast; on the 31 systems of the
        Flickr8K table it selects the same models and gives the same R@K and median ranks as double
        precision (33 of 62,000 per-query ranks move by one or two positions; ``docs/design.md``).
    image_kernel_params : dict, optional
        Further :class:`ImageKernel` parameters.
    preprocessor : Preprocessor, optional
        Text preprocessing (default: every step on).
    random_state : int, default=0
        Seed of every random choice (codebooks, BoW1 caption choice, KCCA).
    cache : bool, default=True
        Cache features, kernel matrices, KCCA solutions and (with the default ``preprocessor``)
        preprocessed captions on disk.

    Attributes
    ----------
    n_components_ : tuple of int
        The values of ``n_components`` the training set supports: each below its size and at most
        the number of canonical pairs, the smaller numerical rank of the two centred training
        kernels (a small vocabulary or repeated captions make a low-rank text kernel).  The others
        are dropped with one warning each, see ``docs/design.md``.
    chosen_params_ : dict
        ``{"n_components": [...]}``, ``n_components_`` as a list: the grid the fit used, which a
        results file records under ``params["chosen"]`` beside the one asked for
        (:func:`kcca_desc.evaluate.evaluate_fitted`).
    kcca_ : KCCA
        The fitted decomposition (largest n of the grid).
    models_ : dict of float to KCCA
        The canonical solution of each κ solved so far (the grid's after a selection), sharing
        the kernel decompositions of ``kcca_``.
    selected_ : dict
        ``{"annotation": [(n, reg), ...], "search": [...]}``, 15 settings each
        (fewer when the grid is smaller), or one setting without a dev set.
    dev_results_ : list of dict
        Dev metrics of every grid setting.
    timings_s_ : dict
        Seconds spent per stage.
    """

    def __init__(self, *, image_kernel="pyramid", text_kernel="tri_sem", power=1.0, diag=1.0,
                 n_components=DEFAULT_N_COMPONENTS, regs=DEFAULT_REGS, n_select=5, weight_power=0.0,
                 kcca_params=None, image_kernel_params=None, preprocessor=None, random_state=0,
                 cache=True):
        self.image_kernel = image_kernel
        self.text_kernel = text_kernel
        self.power = power
        self.diag = diag
        self.n_components = n_components
        self.regs = regs
        self.n_select = n_select
        self.weight_power = weight_power
        self.kcca_params = kcca_params
        self.image_kernel_params = image_kernel_params
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.cache = cache

    _parameter_constraints = {
        "image_kernel": [Registered(IMAGE_KERNELS, "image kernel")],
        "text_kernel": [Registered(TEXT_KERNELS, "text kernel")],
        "power": [POSITIVE_REAL],
        "diag": [Interval(Real, 1, None, closed="left")],
        "n_components": [SequenceOf(POSITIVE_INT)],
        "regs": [SequenceOf(POSITIVE_REAL)],
        "n_select": [POSITIVE_INT],
        "weight_power": [FINITE_REAL],
        "kcca_params": [dict, None],
        "image_kernel_params": [dict, None],
        "preprocessor": [Preprocessor, None],
        "random_state": [SEED],
        "cache": ["boolean"],
    }

    @property
    def name(self) -> str:
        """The system's label in results and tables: ``KCCA <text kernel> (<image kernel>)``."""
        return f"KCCA {self.text_kernel} ({self.image_kernel})"

    # ----------------------------------------------------------------- stages
    def _timed(self, stage: str, fn, *args, **kwargs):
        # Recorded under its stage of the run's profile (kcca_desc._core.profile.STAGES), and under
        # its own finer name in timings_s_ and the progress lines.
        desc = stage.replace("_", " ")
        with profiled(_PROFILE_STAGES.get(stage, desc), desc=desc) as times:
            out = fn(*args, **kwargs)
        self.timings_s_[stage] = self.timings_s_.get(stage, 0.0) + times.wall_s
        return out

    def _text_cache_params(self) -> dict:
        return text_cache_params(self.text_kernel_, self.preprocessor_, self.train_captions_)

    def _cached_text_kernel(self, what: str, compute, **key) -> np.ndarray:
        return cached_text_gram(compute, self._text_cache_params(), cache=self.cache, what=what, **key)

    def _query_text_kernel(self, captions: Sequence[str]) -> np.ndarray:
        """(len(captions), n_train) text kernel of single query captions against the training items."""
        captions = list(captions)

        def compute():
            tokens, _ = self.preprocessor_.process(captions)
            return self.text_kernel_.cross_gram([[t] for t in tokens])

        return self._cached_text_kernel("cross", compute, queries=captions)

    # -------------------------------------------------------------------- fit
    def fit(self, train: Dataset, dev: RetrievalView | None = None) -> "ImageSentenceRanker":
        """Fit on ``train``; with ``dev``, select the models to fuse (Hodosh et al. 2013, Section 4.1.3).

        Every parameter, including those passed on to :class:`ImageKernel`, the text kernel and
        :class:`KCCA`, is checked before any feature is computed.
        """
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        if dev is not None:
            require_view(dev, f"{type(self).__name__}.fit")
        self.n_components_ = self._supported_n_components(len(train))
        grid = self._grid()
        if dev is None and len(grid) > 1:
            raise ParameterError(
                f"{type(self).__name__}: a grid of {len(grid)} (n, reg) settings needs a dev view for "
                "model selection; pass dev=... or give one n_components and one reg"
            )
        image_kernel, text_kernel, kcca = self._stages(max(self.n_components_))

        self.timings_s_ = {}
        self.preprocessor_ = self.preprocessor if self.preprocessor is not None else Preprocessor(cache=self.cache)
        self.train_captions_ = train.captions
        X, Y = self._training_views(train, image_kernel, text_kernel)
        self.kcca_ = self._timed("kcca_fit", kcca.fit, X, Y)
        self._keep_components_within_rank()
        self.chosen_params_ = self._used_params()
        self.models_ = {grid[0][1]: self.kcca_}
        if dev is None:
            self.selected_ = {"annotation": grid, "search": grid}
            self.dev_results_ = []
            return self
        return self.select(dev)

    def _training_views(self, train: Dataset, image_kernel: ImageKernel, text_kernel) -> tuple[np.ndarray, np.ndarray]:
        """Fit the image and text kernels on ``train``; the two views :meth:`fit` decomposes.

        Here the n x n training kernels K_x and K_y + (d - 1) diag(K_y); a subclass that
        approximates them returns what its solver takes instead.
        """
        n = len(train)
        require_memory(
            GRAM_PEAK_MATRICES * 8 * n * n, f"the {n:,} x {n:,} training kernels of {n:,} images",
            "train on fewer images (a subset of the training split); the solver itself falls back to "
            "its low-rank path when the exact one does not fit")
        self.train_items_, train_tags = self._timed("text_preprocess", self.preprocessor_.process_items,
                                                    train.captions)

        # ImageKernel.fit learns the codebooks only: the training histograms are computed inside the
        # image Gram's step (the stage "image kernel/image features"), and not at all when the Gram
        # is cached.  Named "image features", this step showed that stage running during k-means.
        self.image_kernel_ = self._timed("image_codebooks", image_kernel.fit, train.images)
        Kx = self._timed("image_gram", self.image_kernel_.train_gram)

        self.text_kernel_ = self._timed("text_kernel_fit", text_kernel.fit, self.train_items_, train_tags)
        Ky = self._timed("text_gram", self._cached_text_kernel, "gram", self.text_kernel_.train_gram)
        return Kx, scale_diagonal(Ky, self.diag)

    def _image_kernel(self) -> ImageKernel:
        return ImageKernel(kind=self.image_kernel, power=self.power, random_state=self.random_state,
                           cache=self.cache, **(self.image_kernel_params or {}))

    def _text_kernel(self):
        return make_text_kernel(self.text_kernel, random_state=self.random_state, cache=self.cache)

    def _view_names(self) -> tuple[str, str]:
        """The two views in the user's terms, for the solver's messages about their kernels."""
        return "the images", f"the captions ({self.text_kernel} text kernel)"

    def _kcca(self, n_max: int) -> KCCA:
        # Clipped to the kernels' rank, which the grid then follows (_keep_components_within_rank).
        params = {"solve_dtype": np.float32, "view_names": self._view_names(), "clip_to_rank": True,
                  **(self.kcca_params or {})}
        if self.cache:
            params.setdefault("memory", str(cache_dir("kcca_spectra")))
        return KCCA(n_components=n_max, reg=min(self.regs), **params)

    def _solver(self, n_max: int):
        """The unfitted solver of :meth:`_stages` alone, whose parameters :meth:`_validate_params` checks."""
        return self._kcca(n_max)

    def _stages(self, n_max: int) -> tuple[ImageKernel, object, KCCA]:
        """The image kernel, text kernel and KCCA (of ``n_max`` components) this ranker fits, unfitted."""
        return self._image_kernel(), self._text_kernel(), self._kcca(n_max)

    def _validate_params(self) -> None:
        """Check this ranker's parameters and those it passes on to its stages, all reported together.

        So that a bad image-kernel or KCCA parameter is reported before any feature is computed,
        and every bad parameter in one error rather than one per run.
        """
        errors = parameter_errors(self)
        reported = {e.parameter for e in errors}
        errors += self._stage_settings_errors(reported)
        reported |= {e.parameter for e in errors}
        # Each stage that the ranker's valid parameters can build; a parameter passed down to more
        # than one stage (levels, random_state...) is reported once.
        stages = [(self._image_kernel, {"image_kernel", "power", "random_state", "cache", "image_kernel_params"}),
                  (self._text_kernel, {"text_kernel", "random_state", "cache"}),
                  (lambda: self._solver(max(self.n_components)), {"n_components", "regs", "kcca_params", "cache"})]
        for build, inputs in stages:
            if inputs & reported:
                continue
            for error in validation_errors(build()):
                if error.parameter not in reported:
                    reported.add(error.parameter)
                    errors.append(error)
        raise_together(errors)

    def _stage_settings(self) -> dict[str, tuple[type, dict[str, str]]]:
        """The dict parameters handed on to a stage: name -> (the stage's class, {key: parameter}).

        The keys of the inner dict are those the ranker sets itself, each with the ranker's
        parameter to set instead (see :meth:`_image_kernel` and :meth:`_kcca`).
        """
        return {"image_kernel_params": (ImageKernel, {"kind": "image_kernel", "power": "power",
                                                      "random_state": "random_state", "cache": "cache"}),
                "kcca_params": (KCCA, {"n_components": "n_components", "reg": "regs",
                                        "weight_power": "weight_power"})}

    def _stage_settings_errors(self, reported: set) -> list:
        """Errors of the dict parameters (not in ``reported``) with a key their stage does not take."""
        return [error for name, (target, set_by) in self._stage_settings().items() if name not in reported
                for error in settings_errors(self, name, target, set_by)]

    def _supported_n_components(self, n_train: int) -> tuple[int, ...]:
        """The values of ``n_components`` that ``n_train`` training images support (n < n_train).

        KCCA finds at most n_train - 1 canonical pairs (the centred kernels have rank n_train - 1
        at most), and at most ``kcca_params["rank"]`` with the low-rank solver's factors of that
        rank: both known before any work, see :func:`~.base.keep_supported_components`.
        """
        if n_train < 2:
            raise DataError(f"ImageSentenceRanker needs at least 2 training images, got {n_train}")
        kept = keep_below_training_size(self, self.n_components, n_train, default=DEFAULT_N_COMPONENTS)
        rank = (self.kcca_params or {}).get("rank")
        if rank is None:
            return kept
        return keep_supported_components(
            self, kept, rank, f"at most the solver's rank (kcca_params rank={rank})",
            f"KCCA factors of rank {rank} (kcca_params) give at most {rank} canonical pairs", default=DEFAULT_N_COMPONENTS)

    def _used_params(self) -> dict:
        """What the fit used of the parameters it may cut to the data: :attr:`chosen_params_`."""
        return {"n_components": list(self.n_components_)}

    def _keep_components_within_rank(self) -> None:
        """Drop the values of the grid above the canonical pairs the fitted KCCA found.

        Their number is the smaller numerical rank of the centred training kernels
        (:attr:`KCCA.rank_x_`), known only once they are decomposed.
        """
        pairs = self.kcca_.n_components_
        ranks = (self.kcca_.rank_x_, self.kcca_.rank_y_)
        view = self._view_names()[int(ranks[1] < ranks[0])]
        kept = keep_supported_components(
            self, self.n_components_, pairs, f"at most {pairs}, the rank of the training kernel of {view}",
            f"the training kernel of {view} has numerical rank {pairs}, so KCCA finds at most {pairs} "
            "canonical pairs", default=DEFAULT_N_COMPONENTS)
        if kept != self.n_components_:
            self.n_components_ = kept
            self.kcca_ = self.kcca_.with_params(n_components=max(kept))

    def _grid(self) -> list[tuple[int, float]]:
        n_components = getattr(self, "n_components_", self.n_components)
        return list(itertools.product(sorted(n_components), sorted(self.regs)))

    def select(self, dev: RetrievalView) -> "ImageSentenceRanker":
        """(Re-)select the fused models on ``dev`` from the fitted decomposition (Section 4.1.3).

        Called by :meth:`fit`; call it again after ``set_params(weight_power=...)`` to re-select
        without refitting: each κ is solved once and kept in :attr:`models_`.
        """
        check_is_fitted(self, "kcca_")
        require_view(dev, f"{type(self).__name__}.select")
        self._timed("model_selection", self._select, dev, self._grid())
        return self

    def _new_inputs(self, images: ImageSource, captions: Sequence[str]):
        """What the fitted models project for new images and captions: their kernel rows against training."""
        return self.image_kernel_.cross(images), self._query_text_kernel(captions)

    def _shared_inputs(self, Kx_new, Ky_new) -> tuple:
        """What every model of the grid projects: the new kernel rows, centred once."""
        return self.kcca_.centred_rows(Kx_new, Ky_new)

    def _transform(self, model, shared: tuple, n_components: int) -> tuple[np.ndarray, np.ndarray]:
        """Both views of :meth:`_shared_inputs` projected by ``model`` on its top ``n_components``."""
        return model.transform(*shared, n_components=n_components, centred=True)

    def _projections(self, Kx_new, Ky_new, settings) -> Iterator[tuple[tuple[int, float], np.ndarray]]:
        """``((n, reg), scores)`` of each setting: the cosine score matrix of its projections.

        The kernel rows are centred once, and each κ projects them once on its largest n; a smaller
        n takes the first n of those columns (the canonical directions are nested), so a grid costs
        one projection per κ and a cosine per setting.  Yielded one at a time, so that a caller
        keeping only metrics holds one score matrix (20 on a COCO-sized pool would take 20 GB).
        """
        shared = self._shared_inputs(Kx_new, Ky_new)
        for reg in sorted({r for _, r in settings}):
            # weight_power is read at projection time, so it may change after fit (no new solve).
            model = self.models_[reg].with_params(weight_power=self.weight_power)
            ns = sorted({n for n, r in settings if r == reg})
            x_proj, y_proj = self._transform(model, shared, ns[-1])
            for n in ns:
                yield (n, reg), cosine_scores(x_proj[:, :n], y_proj[:, :n])

    def _select(self, dev: RetrievalView, grid) -> None:
        # One solve per κ serves every n, in selection and in scoring alike.
        solves = "KCCA solves (one per κ)"
        with profiled("grid", desc=solves):
            # Every κ is counted, those fit solved already (the first) too, so that the count is one per κ.
            for reg in progress(sorted({r for _, r in grid}), desc=solves, unit="κ"):
                if reg not in self.models_:
                    self.models_[reg] = self.kcca_.with_params(reg=reg)
        inputs = self._new_inputs(dev.images, dev.captions)
        measured = {setting: dev_metrics(scores, dev) for setting, scores in
                    progress(self._projections(*inputs, grid), total=len(grid), desc="KCCA (n, κ) grid on dev",
                             unit="setting")}
        # In the grid's order, which breaks ties between equally good settings.
        results = [(setting, measured[setting]) for setting in grid]
        self.dev_results_ = [{"n_components": n, "reg": reg, **metrics} for (n, reg), metrics in results]
        self.selected_ = select_per_task(results, k=self.n_select)

    # ------------------------------------------------------------------ score
    def score(self, images: ImageSource, captions: Sequence[str]) -> DirectionalScores:
        """Borda-fused scores of the selected models for each task.

        Parameters
        ----------
        images : ImageSource
            The candidate (or query) images.
        captions : sequence of str
            Raw captions, scored one sentence at a time.

        Returns
        -------
        DirectionalScores
            ``annotation`` ranks each image's captions, ``search`` each caption's images.
        """
        check_is_fitted(self, "selected_")
        Kx_new, Ky_new = self._new_inputs(images, captions)
        settings = set(self.selected_["annotation"]) | set(self.selected_["search"])
        scores = dict(self._projections(Kx_new, Ky_new, settings))
        fused = {}
        for task, axis in (("annotation", 1), ("search", 0)):
            chosen = [scores[s] for s in self.selected_[task]]
            fused[task] = chosen[0] if len(chosen) == 1 else borda_fuse(chosen, axis=axis)
        return DirectionalScores(**fused)
