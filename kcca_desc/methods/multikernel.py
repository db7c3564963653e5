"""Multiple-kernel KCCA: the Hodosh et al. (2013) ranking system over weighted sums of base kernels.

:class:`MultipleKernelRanker` is :class:`~kcca_desc.methods.ranker.ImageSentenceRanker` (one KCCA
decomposition, the (n, κ) grid on dev, the 5 + 5 + 5 selected models per task, Borda fusion)
whose two training kernels are sums ``K = Σ_m μ_m K̃_m`` of named base kernels
(:data:`~kcca_desc.methods.base_kernels.BASE_KERNELS`: the paper's text and image kernels,
RBF or cosine kernels over encoder features), each centred and normalised on the training items
(:mod:`kcca_desc.kernels.combine`), with the weights ``μ`` chosen without the test split:

* ``"uniform"``: every kernel of a view weighs the same;
* ``"align"`` / ``"alignf"``: the alignment-based weights of Cortes, Mohri & Rostamizadeh (2012,
  Sections 3.1-3.2) on the *training* kernels, each view's base kernels aligned with the other
  view's uniform combination as target: in KCCA the other view plays the part of the labels;
* ``"greedy"``: forward selection on the dev R@K: first the best pair of one text and one image
  kernel, then, while it helps, the one kernel (with one weight of ``greedy_weights``) whose
  addition most raises the dev objective, the best (n, κ) setting's R@1 + R@5 + R@10 of both
  tasks (:func:`~kcca_desc.methods.selection.recall_sum`);
* a mapping ``{name: μ}``: explicit weights.

The base kernels' Gram matrices are computed once per fit (the named text kernels' through the
ranker's on-disk cache, the image kernels' through :class:`~kcca_desc.image.kernel.ImageKernel`'s)
and normalised in place; each weight setting only sums them.  With the exact solver a fit holds
the base kernels and about four more n x n matrices (Flickr8K, n = 6,000, four base kernels:
about 2.3 GB).  Beyond that, ``kcca_params={"method": "lowrank", "rank": r}`` solves on a pivoted
incomplete Cholesky factor of each combined kernel (:class:`~kcca_desc.kcca.KCCA`), and
:class:`~kcca_desc.methods.scalable.ScalableRanker` is the landmark route for a single kernel at
Flickr30K / COCO size.

References
----------
.. [1] M. Hodosh, P. Young and J. Hockenmaier, "Framing image description as a ranking task:
   data, models and evaluation metrics", JAIR 47, 853-899, 2013.
.. [2] C. Cortes, M. Mohri and A. Rostamizadeh, "Algorithms for learning kernels based on
   centered alignment", JMLR 13, 795-828, 2012.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from numbers import Real
from typing import Sequence

import numpy as np

from .._core.errors import ParameterError
from .._core.registry import did_you_mean
from .._core.resources import require_memory
from .._core.validation import (POSITIVE_REAL, Interval, SequenceOf, StrOptions, constraint_errors, invalid_parameter,
                                parameter_errors, raise_together, validation_errors)
from ..adapters.base import Encoder
from ..adapters.families import build_encoder
from ..data.dataset import Dataset, RetrievalView, require_dataset, require_view
from ..data.images import ImageSource
from ..image.kernel import IMAGE_KERNELS, ImageKernel
from ..kcca import scale_diagonal
from ..kernels.combine import (NORMALIZATIONS, alignment_weights, kernel_statistics, normalize_cross_kernel,
                               normalize_train_kernel, weighted_sum)
from ..text.preprocess import Preprocessor
from .base_kernels import BASE_KERNELS, SIDES, BaseKernel, HodoshTextKernel, base_kernel_names
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, GRAM_PEAK_MATRICES, ImageSentenceRanker
from .selection import recall_sum

__all__ = ["MultipleKernelRanker", "WEIGHT_STRATEGIES", "parse_kernel_sum", "parse_kernel_weights",
           "kernel_sum_label"]

#: Named ways of choosing the kernel weights (besides an explicit mapping).
WEIGHT_STRATEGIES = ("uniform", "align", "alignf", "greedy")


def parse_kernel_sum(spec, side: str) -> list:
    """The base kernels of one view: ``"tri_sem+minilm_rbf"``, or a sequence of names, kernels and callables.

    Names are checked against :data:`BASE_KERNELS` of ``side``; a :class:`BaseKernel` or a
    callable returning one is kept as given.

    Raises
    ------
    ParameterError
        Naming the unknown kernels and listing the ``side`` kernels there are.
    """
    items = [part.strip() for part in spec.split("+")] if isinstance(spec, str) else list(spec)
    if not items or any(item == "" for item in items):
        raise ParameterError(f"{side} kernels {spec!r}: empty kernel name (give names joined by '+')")
    names = base_kernel_names(side)
    unknown = [item for item in items if isinstance(item, str) and item not in names]
    if unknown:
        raise ParameterError(f"unknown {side} kernel{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; "
                             f"available: {', '.join(names)}{''.join(did_you_mean(u, names) for u in unknown)}")
    labels = [_label(item) for item in items]
    if len(set(labels)) < len(labels):
        raise ParameterError(f"{side} kernels {spec!r}: a kernel is named twice")
    return items


def parse_kernel_weights(text: str) -> str | dict[str, float]:
    """``--kernel-weights``: a strategy of :data:`WEIGHT_STRATEGIES`, or ``name=μ,name=μ,...``.

    Examples
    --------
    >>> parse_kernel_weights("tri_sem=1,minilm_rbf=0.5,pyramid=1")
    {'tri_sem': 1.0, 'minilm_rbf': 0.5, 'pyramid': 1.0}
    """
    text = text.strip()
    if text in WEIGHT_STRATEGIES:
        return text
    weights = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, equals, value = part.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            equals = ""
        if not equals or not name.strip():
            raise ParameterError(f"kernel weights {text!r}: {part!r} is not name=weight; give one of "
                                 f"{', '.join(WEIGHT_STRATEGIES)} or name=weight,name=weight,...")
    if not weights:
        raise ParameterError(f"kernel weights {text!r}: no weight given")
    return weights


def kernel_sum_label(spec) -> str:
    """How a system's name shows the base kernels of a view: ``"tri_sem+minilm_rbf"``."""
    return spec if isinstance(spec, str) else "+".join(map(_label, spec))


def _label(item) -> str:
    if isinstance(item, str):
        return item
    return getattr(item, "name", None) or getattr(item, "__name__", type(item).__name__)


def _build(item, side: str, owner) -> BaseKernel:
    if isinstance(item, str):
        return BASE_KERNELS[item].build(item, owner)
    kernel = item if isinstance(item, BaseKernel) else item()
    if not isinstance(kernel, BaseKernel) or kernel.side != side:
        raise ParameterError(f"{side} kernel {_label(item)!r} must be a {side} BaseKernel (or return one)")
    return kernel


class MultipleKernelRanker(ImageSentenceRanker):
    """Image–sentence ranking by KCCA over weighted sums of base kernels (see the module docstring).

    Parameters
    ----------
    text_kernel, image_kernel : str or sequence, default="tri_sem", "pyramid"
        The base kernels of each view: names of :data:`~.base_kernels.BASE_KERNELS` joined by
        ``+`` (``"tri_sem+minilm_rbf"``, ``"pyramid+efficientnet_rbf"``), or a sequence of names,
        :class:`~.base_kernels.BaseKernel` instances and callables returning one.
    kernel_weights : {"align", "alignf", "uniform", "greedy"} or mapping, default="align"
        How the weights are chosen (module docstring); a mapping gives ``{name: μ}`` for every
        base kernel of both views.  The weights of a view are rescaled to sum 1.
    normalization : {"trace", "diagonal", "none"}, default="trace"
        Of each centred base kernel (:func:`~kcca_desc.kernels.combine.kernel_statistics`).
    greedy_weights : sequence of float, default=(1.0,)
        Weights a kernel may join a greedy combination with, relative to the mean weight of the
        kernels of its view already in (1: as much as they weigh on average).
    text_encoder, image_encoder : str, optional
        Encoder specs of the ``text_encoder_*`` / ``image_encoder_*`` base kernels.
    encoder_options : dict, optional
        Runtime options of every encoder built (``device``, ``batch_size``...).
    gamma_scale : float, default=1.0
        RBF feature kernels' bandwidth: this times the median heuristic on the training items.
    power, diag, n_components, regs, n_select, weight_power, kcca_params, image_kernel_params, \
preprocessor, random_state, cache
        As in :class:`ImageSentenceRanker`: ``power`` and ``image_kernel_params`` apply to every
        named image kernel, ``diag`` to the combined text kernel.

    Attributes
    ----------
    weights_ : dict
        ``{"text": {name: μ}, "image": {name: μ}}``, the weights of the final fit.
    weight_curve_ : list of dict
        Every weight setting tried, in order, with its dev objective (None without dev) and
        whether it was chosen: the greedy selection's dev curve.
    dev_results_ : list of dict
        The dev metrics of every (n, κ) setting of every weight setting tried, each with its
        ``"weights"``.
    chosen_params_ : dict
        ``{"n_components": [...], "kernel_weights": weights_, "dev_curve": [...]}``: what a
        results file records under ``params["chosen"]`` (:func:`kcca_desc.evaluate.evaluate_fitted`).
    base_kernels_ : dict
        ``{"text": [BaseKernel, ...], "image": [...]}``, fitted.
    selected_, kcca_, models_, n_components_, timings_s_
        As in :class:`ImageSentenceRanker`.

    Examples
    --------
    >>> ranker = MultipleKernelRanker(text_kernel="tri_sem+bow5_idf", image_kernel="pyramid+histo",
    ...                               kernel_weights="alignf")  # doctest: +SKIP
    >>> ranker.fit(train, dev).weights_  # doctest: +SKIP
    """

    def __init__(self, *, text_kernel="tri_sem", image_kernel="pyramid", kernel_weights="align",
                 normalization="trace", greedy_weights=(1.0,), text_encoder=None, image_encoder=None,
                 encoder_options=None, gamma_scale=1.0, power=1.0, diag=1.0, n_components=DEFAULT_N_COMPONENTS,
                 regs=DEFAULT_REGS, n_select=5, weight_power=0.0, kcca_params=None, image_kernel_params=None,
                 preprocessor=None, random_state=0, cache=True):
        # Not super(): in ScalableMultipleKernelRanker the next class of the MRO is ScalableRanker,
        # whose own settings (pairs, store) would become attributes that get_params does not know.
        ImageSentenceRanker.__init__(
            self, image_kernel=image_kernel, text_kernel=text_kernel, power=power, diag=diag,
            n_components=n_components, regs=regs, n_select=n_select, weight_power=weight_power,
            kcca_params=kcca_params, image_kernel_params=image_kernel_params, preprocessor=preprocessor,
            random_state=random_state, cache=cache)
        self.kernel_weights = kernel_weights
        self.normalization = normalization
        self.greedy_weights = greedy_weights
        self.text_encoder = text_encoder
        self.image_encoder = image_encoder
        self.encoder_options = encoder_options
        self.gamma_scale = gamma_scale

    _parameter_constraints = {
        **ImageSentenceRanker._parameter_constraints,
        "text_kernel": [str, list, tuple],
        "image_kernel": [str, list, tuple],
        "kernel_weights": [StrOptions(set(WEIGHT_STRATEGIES)), Mapping],
        "normalization": [StrOptions(set(NORMALIZATIONS))],
        "greedy_weights": [SequenceOf(Interval(Real, 0, None, closed="neither"))],
        "text_encoder": [str, None],
        "image_encoder": [str, None],
        "encoder_options": [dict, None],
        "gamma_scale": [POSITIVE_REAL],
    }

    @property
    def name(self) -> str:
        """The system's label in results and tables: ``MKL <text kernels> (<image kernels>)``."""
        return f"MKL {kernel_sum_label(self.text_kernel)} ({kernel_sum_label(self.image_kernel)})"

    def _view_names(self) -> tuple[str, str]:
        return "the images (combined kernel)", "the captions (combined kernel)"

    # ------------------------------------------------------------ settings
    def _kernel_items(self) -> dict[str, list]:
        return {"text": parse_kernel_sum(self.text_kernel, "text"),
                "image": parse_kernel_sum(self.image_kernel, "image")}

    def _validate_params(self) -> None:
        """Every parameter, the kernel names and the explicit weights checked and reported together."""
        errors = parameter_errors(self)
        reported = {e.parameter for e in errors}
        items = {}
        for side in SIDES:
            parameter = f"{side}_kernel"
            if parameter in reported:
                continue
            try:
                items[side] = parse_kernel_sum(getattr(self, parameter), side)
            except ParameterError as exc:
                errors.append(invalid_parameter(self, parameter, f"{side} base kernels joined by '+' ({exc})",
                                                getattr(self, parameter)))
                reported.add(parameter)
        for side, side_items in items.items():
            # The <side>_encoder_* kernels need the encoder spec: refused here, not after the other kernels.
            uses = [item for item in side_items if isinstance(item, str) and item.startswith(f"{side}_encoder_")]
            if uses and getattr(self, f"{side}_encoder") is None and f"{side}_encoder" not in reported:
                errors.append(invalid_parameter(self, f"{side}_encoder", f"an encoder spec (FAMILY:MODEL) for the "
                                                f"{' and '.join(uses)} base kernel", None))
        if isinstance(self.kernel_weights, Mapping) and len(items) == 2:
            labels = {side: [_label(item) for item in items[side]] for side in SIDES}
            weights = self.kernel_weights
            if set(weights) != set(labels["text"] + labels["image"]) or not all(
                    isinstance(mu, Real) and np.isfinite(mu) and mu >= 0 for mu in weights.values()) or not all(
                    sum(weights[name] for name in labels[side]) > 0 for side in SIDES):
                errors.append(invalid_parameter(
                    self, "kernel_weights", "a finite weight >= 0 for each base kernel, "
                    f"{labels['text'] + labels['image']}, and a positive one in each view", weights))
        if self.encoder_options and "encoder_options" not in reported:
            # The options every encoder checks (batch size, threads), before an encoder is built.
            errors += constraint_errors(f"{type(self).__name__}.encoder_options", self.encoder_options,
                                        Encoder._parameter_constraints)
        errors += [e for e in self._solver_errors(reported) if e.parameter not in reported]
        errors += self._stage_settings_errors(reported)
        reported |= {e.parameter for e in errors}
        stages = [(lambda: self._solver(max(self.n_components)), {"n_components", "regs", "kcca_params", "cache"})]
        if any(isinstance(item, str) and item in IMAGE_KERNELS for item in items.get("image", ())):
            stages.append((lambda: ImageKernel(power=self.power, random_state=self.random_state, cache=self.cache,
                                               **(self.image_kernel_params or {})),
                           {"power", "random_state", "cache", "image_kernel_params"}))
        for build, inputs in stages:
            if inputs & reported:
                continue
            errors += [e for e in validation_errors(build()) if e.parameter not in reported]
        raise_together(errors)

    def _solver_errors(self, reported: set) -> list:
        """Errors of valid parameters (not in ``reported``) that this system's solver cannot take (none here)."""
        return []

    def _stages(self, n_max: int):
        # The base kernels are built and fitted once per fit by _training_views, not per stage.
        return None, None, self._kcca(n_max)

    def side_encoder(self, side: str):
        """The encoder of the ``<side>_encoder_*`` base kernels: ``text_encoder`` / ``image_encoder``."""
        spec = getattr(self, f"{side}_encoder")
        if spec is None:
            raise ParameterError(f"the {side}_encoder_* base kernels need an encoder spec: give {side}_encoder "
                                 "(--" + side + "-encoder FAMILY:MODEL)")
        return build_encoder(spec, cache=self.cache, **(self.encoder_options or {}))

    def query_items(self, captions: list[str]) -> list:
        """Single captions as items of preprocessed sentences, for the named text kernels (memoised per fit)."""
        key = tuple(captions)
        if self._memo.get("key") != key:
            tokens, _ = self.preprocessor_.process(captions)
            self._memo = {"key": key, "items": [[t] for t in tokens]}
        return self._memo["items"]

    # ------------------------------------------------------------------ fit
    def fit(self, train: Dataset, dev: RetrievalView | None = None) -> "MultipleKernelRanker":
        """Fit the base kernels once, choose the weights (train and dev only), then fit KCCA on their sums.

        ``dev`` is needed by a grid of more than one (n, κ) setting and by ``"greedy"``.
        """
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        if dev is not None:
            require_view(dev, f"{type(self).__name__}.fit")
        if self.kernel_weights == "greedy" and dev is None:
            raise ParameterError("kernel_weights='greedy' selects the kernels on dev R@K; pass dev=...")
        self._cross_memo, self._memo = {}, {}
        self.timings_s_ = {}
        self.preprocessor_ = self.preprocessor if self.preprocessor is not None else Preprocessor(cache=self.cache)
        self._fit_bases(train)
        timings = dict(self.timings_s_)
        self.weight_curve_, dev_results = [], []
        try:
            for weights in self._candidates():
                self._fit_weights(train, dev, weights, timings, dev_results)
            chosen = self._chosen_weights()
            self._fit_weights(train, dev, chosen, timings, dev_results)
        finally:
            # The normalised training kernels and the dev rows serve the weight search only.
            del self._bases, self._cross_memo
        # A greedy search refits its best setting last: one entry per setting in the curve.
        final = self.weight_curve_.pop()
        for entry in self.weight_curve_:
            entry["chosen"] = entry["weights"] == chosen
        if not any(entry["chosen"] for entry in self.weight_curve_):
            self.weight_curve_.append({**final, "chosen": True})
        else:
            dev_results = dev_results[:len(dev_results) - len(self.dev_results_)]
        self.dev_results_ = dev_results
        self.timings_s_ = timings
        # Beside the grid of the last fit, that of the chosen weights (ImageSentenceRanker.fit).
        self.chosen_params_ = {**self.chosen_params_, "kernel_weights": self.weights_,
                               "dev_curve": [{"weights": e["weights"], "dev_objective": e["dev_objective"]}
                                             for e in self.weight_curve_]}
        return self

    def _fit_weights(self, train: Dataset, dev, weights: dict, timings: dict, dev_results: list) -> None:
        """Fit the ranker on the sums of ``weights``; record its dev objective, results and timings."""
        # Each view's weights sum to 1: a sum of normalised kernels keeps their scale, which κ is relative to.
        weights = {side: {name: mu / sum(weights[side].values()) for name, mu in weights[side].items()}
                   for side in SIDES}
        self.weights_ = weights
        super().fit(train, dev)
        for stage, seconds in self.timings_s_.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
        objective = max(recall_sum(r) for r in self.dev_results_) if dev is not None else None
        dev_results += [{"weights": weights, **r} for r in self.dev_results_]
        self.weight_curve_.append({"weights": weights, "dev_objective": objective, "chosen": False})

    def _training_views(self, train: Dataset, image_kernel, text_kernel) -> tuple[np.ndarray, np.ndarray]:
        """The combined training kernels of :attr:`weights_` (the normalised base kernels summed)."""
        Kx = self._timed("kernel_sum", self._combine, "image")
        Ky = self._timed("kernel_sum", self._combine, "text")
        return Kx, scale_diagonal(Ky, self.diag)

    def _fit_bases(self, train: Dataset) -> None:
        """Fit every base kernel and normalise its training Gram matrix in place, once per fit."""
        kernels = self._fit_base_kernels(train)
        self._bases = {side: [] for side in SIDES}
        self.statistics_ = {side: [] for side in SIDES}
        for side in SIDES:
            for kernel in kernels[side]:
                K = self._timed(f"{side}_gram", kernel.train_gram)
                statistics = kernel_statistics(K, normalization=self.normalization)
                # Each Gram is this fit's own array (computed or read from the cache): normalised where it lies.
                self._bases[side].append(normalize_train_kernel(K, statistics, copy=False))
                self.statistics_[side].append(statistics)

    def _base_kernels_memory(self, n: int, n_bases: int) -> tuple[int, str, str]:
        """What the base kernels of a fit on ``n`` items hold: bytes, what they are, how to hold less."""
        return ((n_bases + GRAM_PEAK_MATRICES) * 8 * n * n, f"{n_bases} base kernels and their sums on {n:,} "
                "training items", "train on fewer items, or sum fewer kernels")

    def _fit_base_kernels(self, train: Dataset) -> dict[str, list[BaseKernel]]:
        """Build and fit every base kernel (:attr:`base_kernels_`), once their matrices are known to fit in memory."""
        items = self._kernel_items()
        kernels = {side: [_build(item, side, self) for item in items[side]] for side in SIDES}
        require_memory(*self._base_kernels_memory(len(train), sum(map(len, kernels.values()))))
        self.train_captions_ = train.captions
        if any(isinstance(k, HodoshTextKernel) for k in kernels["text"]):
            self.train_items_, self.train_tags_ = self._timed("text_preprocess", self.preprocessor_.process_items,
                                                              train.captions)
        else:
            self.train_items_ = self.train_tags_ = None
        for side in SIDES:
            for kernel in kernels[side]:
                self._timed(f"{side}_kernel_fit", kernel.fit, train, self)
        self.base_kernels_ = kernels
        return kernels

    def _combine(self, side: str) -> np.ndarray:
        return weighted_sum(self._bases[side], list(self.weights_[side].values()))

    def _new_inputs(self, images: ImageSource, captions: Sequence[str]):
        """The combined kernel rows of new images and single captions against the training items."""
        return self._combined_rows("image", images), self._combined_rows("text", list(captions))

    def _combined_rows(self, side: str, new) -> np.ndarray:
        total = None
        for m, weight in enumerate(self.weights_[side].values()):
            if weight == 0:
                continue
            rows = weight * self._normalised_rows(side, m, new)
            total = rows if total is None else total + rows
        return total

    def _normalised_rows(self, side: str, m: int, new) -> np.ndarray:
        """Base kernel ``m``'s rows of ``new``, normalised with its training statistics (memoised during fit)."""
        def compute():
            kernel = self.base_kernels_[side][m]
            diagonal = kernel.self_similarity(new) if self.normalization == "diagonal" else None
            return normalize_cross_kernel(kernel.cross(new), self.statistics_[side][m], diagonal_new=diagonal,
                                          copy=False)

        return self._memoised((side, m), new, compute)

    def _memoised(self, key: tuple, new, compute):
        """``compute()`` of new images or captions ``new``, kept for the rest of the fit (every weight setting)."""
        memo = getattr(self, "_cross_memo", None)
        if memo is None:
            return compute()
        identity = [new.key(i) for i in range(len(new))] if isinstance(new, ImageSource) else new
        key = (*key, hash(tuple(identity)))
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    # ------------------------------------------------------------ weights
    def _uniform(self) -> dict:
        return {side: {kernel.name: 1.0 / len(self.base_kernels_[side]) for kernel in self.base_kernels_[side]}
                for side in SIDES}

    def _candidates(self):
        """The weight settings tried before the final fit (the greedy search's; none for the others).

        Each is fitted by the caller before the next is drawn, so the search reads their dev objectives.
        """
        if self.kernel_weights != "greedy":
            return
        names = {side: [k.name for k in self.base_kernels_[side]] for side in SIDES}

        def setting(active: dict) -> dict:
            return {side: {name: active[side].get(name, 0.0) for name in names[side]} for side in SIDES}

        for t, i in itertools.product(names["text"], names["image"]):
            yield setting({"text": {t: 1.0}, "image": {i: 1.0}})
        best = max(self.weight_curve_, key=lambda e: e["dev_objective"])
        while True:
            base = best["weights"]
            tried_from = len(self.weight_curve_)
            for side in SIDES:
                for name in names[side]:
                    if base[side][name] > 0:
                        continue
                    active = [mu for mu in base[side].values() if mu > 0]
                    for weight in self.greedy_weights:
                        yield {**base, side: {**base[side], name: float(weight) * sum(active) / len(active)}}
            step = self.weight_curve_[tried_from:]
            if not step:
                return
            candidate = max(step, key=lambda e: e["dev_objective"])
            if candidate["dev_objective"] <= best["dev_objective"]:
                return
            best = candidate

    def _chosen_weights(self) -> dict:
        """The final weights: the greedy search's best, an alignment's, the explicit or uniform ones."""
        strategy = self.kernel_weights
        if strategy == "greedy":
            return max(self.weight_curve_, key=lambda e: e["dev_objective"])["weights"]
        if isinstance(strategy, Mapping):
            return {side: {k.name: float(strategy[k.name]) for k in self.base_kernels_[side]} for side in SIDES}
        uniform = self._uniform()
        if strategy == "uniform":
            return uniform
        return {side: {kernel.name: float(mu) for kernel, mu in zip(self.base_kernels_[side],
                                                                     self._aligned_weights(side, uniform))}
                for side in SIDES}

    def _aligned_weights(self, side: str, uniform: dict) -> np.ndarray:
        """Alignment weights of ``side``'s base kernels, the other view's uniform combination as target."""
        other = "image" if side == "text" else "text"
        target = weighted_sum(self._bases[other], list(uniform[other].values()))
        return alignment_weights(self._bases[side], target, method=self.kernel_weights)
