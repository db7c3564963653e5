"""The complete Hodosh et al. (2013) KCCA system as one estimator.

:class:`ImageSentenceRanker` runs the paper's procedure (SPEC §5):

1. image kernel (spatial pyramid over colour, texture and SIFT words, raised
   to the power p) and text kernel (e.g. ``tri_sem``, diagonal multiplied by
   d) on the training items — images with all their captions;
2. one KCCA decomposition (:class:`kcca_desc.kcca.KCCA`);
3. with a dev view: every (n, κ) of the grid scored on dev, and for each task
   the 5 settings with best R@1, the 5 best by R@5 and the 5 best by R@10
   (15 models, :func:`kcca_desc.methods.fusion.select_models`);
4. at test time each selected model ranks the whole pool and the rankings are
   combined by Borda count with ties broken by median rank
   (:func:`kcca_desc.methods.fusion.borda_fuse`).

f(i, s) of one model is the cosine of the projected image and sentence.
"""

from __future__ import annotations

import itertools
import time
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..cache import NpzCache, cache_dir
from ..data.dataset import Dataset, RetrievalView
from ..data.images import ImageSource
from ..evaluate.ranks import evaluate_scores
from ..image.kernel import ImageKernel
from ..kcca import KCCA, scale_diagonal
from ..scores import DirectionalScores, cosine_scores
from ..text.named_kernels import TEXT_KERNELS, make_text_kernel
from ..text.preprocess import Preprocessor
from .base import RetrievalMethod
from .fusion import borda_fuse, select_models

__all__ = ["ImageSentenceRanker", "DEFAULT_N_COMPONENTS", "DEFAULT_REGS"]

DEFAULT_N_COMPONENTS = (16, 32, 64, 128, 256)
DEFAULT_REGS = (0.01, 0.1, 1.0, 10.0)


class ImageSentenceRanker(BaseEstimator, RetrievalMethod):
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
        Weight projected dimension k by ρ_k ** weight_power before the cosine.
    kcca_params : dict, optional
        Further :class:`KCCA` parameters (``method``, ``rank``, ``reg_form``...).  Unless given,
        ``solve_dtype=numpy.float32``: each κ's canonical eigensolve finds its subspace in single
        precision and refines it in double, about 1.6 times as fast; on the 31 systems of the
        Flickr8K table it selects the same models and gives the same R@K and median ranks as double
        precision (33 of 62,000 per-query ranks move by one or two positions).
    image_kernel_params : dict, optional
        Further :class:`ImageKernel` parameters.
    preprocessor : Preprocessor, optional
        Text preprocessing (default: every step on).
    random_state : int, default=0
        Seed of every random choice (codebooks, BoW1 caption choice, KCCA).
    cache : bool, default=True
        Cache features and kernel matrices on disk.

    Attributes
    ----------
    kcca_ : KCCA
        The fitted decomposition (largest n of the grid).
    selected_ : dict
        ``{"annotation": [(n, reg), ...], "search": [...]}``, 15 settings each
        (fewer when the grid is smaller), or one setting without a dev set.
    dev_results_ : list of dict
        Dev metrics of every grid setting.
    timings_s_ : dict
        Seconds spent per stage.
    """

    def __init__(self, image_kernel="pyramid", text_kernel="tri_sem", power=1.0, diag=1.0,
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

    @property
    def name(self) -> str:
        return f"KCCA {self.text_kernel} ({self.image_kernel})"

    # ----------------------------------------------------------------- stages
    def _timed(self, stage: str, fn, *args, **kwargs):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.timings_s_[stage] = self.timings_s_.get(stage, 0.0) + time.perf_counter() - t0
        return out

    def _text_cache_params(self) -> dict:
        params = self.text_kernel_.get_params()
        params.pop("preprocessor")
        # Keyed by what the kernel computes rather than its name, so aliases (tri_sem) share Grams.
        params["name"] = TEXT_KERNELS[params["name"]]
        return {"text_kernel": params, "preprocessor": self.preprocessor_.cache_params(),
                "train": [list(c) for c in self.train_captions_]}

    def _cached_text_kernel(self, what: str, compute, **key) -> np.ndarray:
        store = NpzCache("text_gram", enabled=self.cache)
        return store.get_or_compute(lambda: {"K": np.asarray(compute(), dtype=np.float64)},
                                    what=what, **key, **self._text_cache_params())["K"]

    def _query_text_kernel(self, captions: Sequence[str]) -> np.ndarray:
        """(len(captions), n_train) text kernel of single query captions against the training items."""
        captions = list(captions)

        def compute():
            tokens, _ = self.preprocessor_.process(captions)
            return self.text_kernel_.cross_gram([[t] for t in tokens])

        return self._cached_text_kernel("cross", compute, queries=captions)

    # -------------------------------------------------------------------- fit
    def fit(self, train: Dataset, dev: RetrievalView | None = None) -> "ImageSentenceRanker":
        """Fit on ``train``; with ``dev``, select the fused models on it (SPEC §5)."""
        grid = self._grid()
        if not grid:
            raise ValueError("ImageSentenceRanker: n_components and regs must not be empty")
        if dev is None and len(grid) > 1:
            raise ValueError(
                f"ImageSentenceRanker: a grid of {len(grid)} (n, reg) settings needs a dev view for "
                "model selection; pass dev=... or give one n_components and one reg"
            )
        n_max = max(n for n, _ in grid)
        if n_max >= len(train):
            raise ValueError(f"ImageSentenceRanker: n_components up to {n_max} needs more than {n_max} "
                             f"training images, got {len(train)}")
        self.timings_s_ = {}
        self.preprocessor_ = self.preprocessor if self.preprocessor is not None else Preprocessor()
        self.train_captions_ = train.captions
        self.train_items_, train_tags = self._timed("text_preprocess", self.preprocessor_.process_items,
                                                    train.captions)

        self.image_kernel_ = self._timed(
            "image_features", ImageKernel(kind=self.image_kernel, power=self.power,
                                          random_state=self.random_state, cache=self.cache,
                                          **(self.image_kernel_params or {})).fit, train.images)
        Kx = self._timed("image_gram", self.image_kernel_.train_gram)

        self.text_kernel_ = self._timed(
            "text_kernel_fit", make_text_kernel(self.text_kernel, random_state=self.random_state).fit,
            self.train_items_, train_tags)
        Ky = self._timed("text_gram", self._cached_text_kernel, "gram", self.text_kernel_.train_gram)
        Ky = scale_diagonal(Ky, self.diag)

        params = {"solve_dtype": np.float32, **(self.kcca_params or {})}
        if self.cache:
            params.setdefault("memory", str(cache_dir("kcca_spectra")))
        self.kcca_ = self._timed("kcca_fit", KCCA(n_components=n_max, reg=grid[0][1], **params).fit, Kx, Ky)
        self._models = {grid[0][1]: self.kcca_}
        if dev is None:
            self.selected_ = {"annotation": grid, "search": grid}
            self.dev_results_ = []
            return self
        return self.select(dev)

    def _grid(self) -> list[tuple[int, float]]:
        return list(itertools.product(sorted(self.n_components), sorted(self.regs)))

    def select(self, dev: RetrievalView) -> "ImageSentenceRanker":
        """(Re-)select the fused models on ``dev`` from the fitted decomposition (SPEC §5).

        Called by :meth:`fit`; call it again after ``set_params(weight_power=...)`` to re-select
        without refitting: each κ is solved once and kept.
        """
        check_is_fitted(self, "kcca_")
        self._timed("model_selection", self._select, dev, self._grid())
        return self

    def _projections(self, Kx_new, Ky_new, settings):
        """Cosine score matrices of each (n, reg) setting, computed once per setting."""
        out = {}
        for reg in sorted({r for _, r in settings}):
            # One solve per reg serves every n, in selection and in scoring alike.
            if reg not in self._models:
                self._models[reg] = self.kcca_.with_params(reg=reg)
            # weight_power is read at projection time, so it may change after fit (no new solve).
            model = self._models[reg].with_params(weight_power=self.weight_power)
            for n in sorted({n for n, r in settings if r == reg}):
                out[(n, reg)] = cosine_scores(*model.transform(Kx_new, Ky_new, n_components=n))
        return out

    def _select(self, dev: RetrievalView, grid) -> None:
        Kx_dev = self.image_kernel_.cross(dev.images)
        Ky_dev = self._query_text_kernel(dev.captions)
        scores = self._projections(Kx_dev, Ky_dev, grid)
        self.dev_results_ = []
        per_task = {"annotation": [], "search": []}
        for setting in grid:
            metrics = evaluate_scores(scores[setting], dev)
            row = {"n_components": setting[0], "reg": setting[1]}
            for task in per_task:
                m = {k: metrics[task][k] for k in ("R@1", "R@5", "R@10", "median_rank")}
                per_task[task].append((setting, m))
                row[task] = m
            self.dev_results_.append(row)
        self.selected_ = {task: select_models(rows, k=self.n_select) for task, rows in per_task.items()}

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
        Kx_new = self.image_kernel_.cross(images)
        Ky_new = self._query_text_kernel(captions)
        settings = set(self.selected_["annotation"]) | set(self.selected_["search"])
        scores = self._projections(Kx_new, Ky_new, settings)
        fused = {}
        for task, axis in (("annotation", 1), ("search", 0)):
            chosen = [scores[s] for s in self.selected_[task]]
            fused[task] = chosen[0] if len(chosen) == 1 else borda_fuse(chosen, axis=axis)
        return DirectionalScores(**fused)
