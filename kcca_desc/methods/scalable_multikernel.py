"""Multiple-kernel KCCA at Flickr30K and MS-COCO size: sums of base kernels through landmark columns.

:class:`ScalableMultipleKernelRanker` is :class:`~kcca_desc.methods.multikernel.MultipleKernelRanker`
(base kernels of each view, each centred and normalised, their weights chosen without the test
split, the (n, κ) grid on dev, Borda fusion) solved by the landmark KCCA of
:class:`~kcca_desc.methods.scalable.ScalableRanker` rather than on n x n matrices.  Each view's
kernel ``K = Σ_b μ_b s_b K_b`` (``s_b`` the unit-trace scale of base kernel ``b``) is reached
through its Nyström approximation on ``rank`` landmarks (Williams & Seeger 2001), whose columns
``K[:, L] = Σ_b μ_b s_b K_b[:, L]`` are weighted sums of the base kernels' own columns
(:mod:`kcca_desc.scale.sums`): those are computed once per fit, with the landmarks, and every
weight setting (a greedy search tries dozens) only sums them; the dev items' columns are computed
once too.  Nothing n x n is formed: a fit holds ``8 n (rank + 1)`` bytes per base kernel.

What is exact and what is approximated, against the exact system on the same base kernels:

* **centring** is exact: a sum of centred kernels is the centred sum, which the landmark solver
  centres in feature space (the training mean of the landmark features);
* **unit-trace scales** ``s_b = n / tr(H K_b H)``: the trace of the diagonal is exact, the grand
  sum ``1'K_b 1`` that of the Nyström approximation of ``K_b``
  (:meth:`~kcca_desc.scale.BaseColumns.centred_traces`);
* **alignment weights** (``"align"``, ``"alignf"``, Cortes, Mohri & Rostamizadeh 2012): the
  centred inner products ``<H K_b H, H K_c H>_F`` of the base kernels' Nyström approximations
  (:func:`~kcca_desc.scale.centred_inner_products`);
* the **kernel** itself is the Nyström approximation of the weighted sum on landmarks chosen once,
  for every weight setting, on the uniform sum of the base kernels scaled to unit centred trace.

With every training item a landmark (``rank`` = n) all of these are exact and the system is the
exact one.  Unit-diagonal normalisation (``normalization="diagonal"``) divides each item by its
centred self-similarity, which needs the item's kernel row against every training item, and the
text-kernel diagonal ``diag`` has no landmark approximation: both are refused.

References
----------
.. [1] C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
   NIPS 13, 2001.
.. [2] C. Cortes, M. Mohri and A. Rostamizadeh, "Algorithms for learning kernels based on
   centered alignment", JMLR 13, 795-828, 2012.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._core.validation import invalid_parameter
from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..kernels.combine import alignment_weights_from_products
from ..scale import (DEFAULT_CHUNK_SIZE, DEFAULT_RANK, BaseColumns, KernelView, base_columns,
                     centred_inner_products)
from .base_kernels import SIDES
from .multikernel import MultipleKernelRanker, kernel_sum_label
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS
from .scalable import ScalableRanker

__all__ = ["ScalableMultipleKernelRanker"]


class ScalableMultipleKernelRanker(MultipleKernelRanker, ScalableRanker):
    """Multiple-kernel KCCA through landmark columns, for training sets too large for n x n kernels.

    Parameters
    ----------
    text_kernel, image_kernel, kernel_weights
        As in :class:`MultipleKernelRanker`.
    normalization : {"trace", "none"}, default="trace"
        Of each centred base kernel, as in :class:`MultipleKernelRanker`; its ``"diagonal"``
        needs each item's kernel row against every training item, which landmarks do not give.
    greedy_weights, text_encoder, image_encoder, encoder_options, gamma_scale, power
        As in :class:`MultipleKernelRanker`.
    diag : float, default=1.0
        Must stay 1: a diagonal added to the text kernel has no landmark approximation.
    n_components, regs, n_select, weight_power
        As in :class:`MultipleKernelRanker`; no value of ``n_components`` above ``rank``.
    kcca_params : dict, optional
        Further :class:`~kcca_desc.scale.LandmarkKCCA` parameters (defaults as in
        :class:`~.scalable.ScalableRanker`).
    image_kernel_params, preprocessor, random_state, cache
        As in :class:`MultipleKernelRanker`.
    rank : int, default=DEFAULT_RANK
        Landmarks per view, shared by the view's base kernels.
    landmarks : {"pivots", "uniform"}, default="pivots"
        How they are chosen (:data:`~kcca_desc.scale.LANDMARKS`), once per fit.
    chunk_size : int, default=DEFAULT_CHUNK_SIZE
        Rows per chunk of the kernel columns and the factors.
    engine : LocalEngine, DaskEngine or None
        Where the chunks run (None: this process).  The cached columns are held by this process
        and, during a fit, sent once to every Dask worker.

    Attributes
    ----------
    scales_ : dict
        ``{"text": {name: s_b}, "image": {...}}``: each base kernel's unit-trace factor (1 with
        ``normalization="none"``).
    landmarks_ : dict of str to Landmarks
        Each view's landmarks (their training rows and items).
    weights_, weight_curve_, dev_results_, chosen_params_, base_kernels_, selected_, kcca_, models_, \
n_components_, timings_s_
        As in :class:`MultipleKernelRanker`; ``kcca_`` is a :class:`~kcca_desc.scale.LandmarkKCCA`.

    Examples
    --------
    >>> ranker = ScalableMultipleKernelRanker(text_kernel="tri_sem+minilm_rbf", image_kernel="pyramid+efficientnet_rbf",
    ...                                       kernel_weights="alignf", rank=2000)  # doctest: +SKIP
    >>> ranker.fit(train, dev).weights_  # doctest: +SKIP
    """

    def __init__(self, *, text_kernel="tri_sem", image_kernel="pyramid", kernel_weights="align",
                 normalization="trace", greedy_weights=(1.0,), text_encoder=None, image_encoder=None,
                 encoder_options=None, gamma_scale=1.0, power=1.0, diag=1.0, n_components=DEFAULT_N_COMPONENTS,
                 regs=DEFAULT_REGS, n_select=5, weight_power=0.0, kcca_params=None, image_kernel_params=None,
                 preprocessor=None, random_state=0, cache=True, rank=DEFAULT_RANK, landmarks="pivots",
                 chunk_size=DEFAULT_CHUNK_SIZE, engine=None):
        MultipleKernelRanker.__init__(
            self, text_kernel=text_kernel, image_kernel=image_kernel, kernel_weights=kernel_weights,
            normalization=normalization, greedy_weights=greedy_weights, text_encoder=text_encoder,
            image_encoder=image_encoder, encoder_options=encoder_options, gamma_scale=gamma_scale, power=power,
            diag=diag, n_components=n_components, regs=regs, n_select=n_select, weight_power=weight_power,
            kcca_params=kcca_params, image_kernel_params=image_kernel_params, preprocessor=preprocessor,
            random_state=random_state, cache=cache)
        self.rank = rank
        self.landmarks = landmarks
        self.chunk_size = chunk_size
        self.engine = engine

    _parameter_constraints = {
        **MultipleKernelRanker._parameter_constraints,
        **{name: ScalableRanker._parameter_constraints[name] for name in ("rank", "landmarks", "chunk_size", "engine")},
    }

    @property
    def name(self) -> str:
        """The system's label in results and tables: ``Landmark MKL <text kernels> (<image kernels>, rank <rank>)``."""
        return (f"Landmark MKL {kernel_sum_label(self.text_kernel)} ({kernel_sum_label(self.image_kernel)}, "
                f"rank {self._rank_shown()})")

    def _solver_errors(self, reported: set) -> list:
        """What the landmark path cannot take: ``diag``, ``normalization="diagonal"``, more components than landmarks.

        Checked with the other parameters, before any base kernel is fitted.
        """
        errors = []
        if not {"n_components", "rank"} & reported and max(self.n_components) > self.rank:
            errors.append(invalid_parameter(self, "n_components", f"at most rank={self.rank} (the landmarks per view)",
                                            self.n_components))
        if self.diag != 1:
            errors.append(invalid_parameter(self, "diag", "1: a text-kernel diagonal has no landmark approximation "
                                            "(MultipleKernelRanker takes it)", self.diag))
        if self.normalization == "diagonal":
            errors.append(invalid_parameter(
                self, "normalization", "'trace' or 'none': unit-diagonal normalisation needs each item's kernel "
                "row against every training item (MultipleKernelRanker takes it)", self.normalization))
        return errors

    def _stages(self, n_max: int):
        return None, None, self._solver(n_max)

    def _solver(self, n_max: int):
        return self._landmark_kcca(n_max)

    def _base_kernels_memory(self, n: int, n_bases: int) -> tuple[int, str, str]:
        rank = min(self.rank, n)
        return (n_bases * 8 * n * (rank + 1), f"the columns of {n_bases} base kernels against {rank:,} landmarks on "
                f"{n:,} training items", "use fewer landmarks (rank), or sum fewer kernels")

    def _fit_bases(self, train: Dataset) -> None:
        """Fit every base kernel, choose each view's landmarks and compute the base kernels' columns, once per fit."""
        kernels = self._fit_base_kernels(train)
        rng = np.random.default_rng(self.random_state)
        self._bases, self.scales_, self.landmarks_ = {}, {}, {}
        for side in SIDES:
            views = {kernel.name: KernelView(kernel.items(), kernel.kernel_function()) for kernel in kernels[side]}
            columns = self._timed(f"{side}_columns", base_columns, views, self.rank, landmarks=self.landmarks, rng=rng,
                                  engine=self.engine, chunk_size=self.chunk_size)
            scales = len(train) / columns.centred_traces() if self.normalization == "trace" else np.ones(len(views))
            self._bases[side], self.landmarks_[side] = columns, columns.landmarks
            self.scales_[side] = dict(zip(views, scales.tolist()))

    def _sum_weights(self, side: str) -> list[float]:
        """``μ_b s_b`` of each base kernel of ``side``: its weight times its unit-trace factor."""
        return [self.weights_[side][kernel.name] * self.scales_[side][kernel.name]
                for kernel in self.base_kernels_[side]]

    def _training_views(self, train: Dataset, image_kernel, text_kernel) -> tuple[KernelView, KernelView]:
        """The landmark views of :attr:`weights_`: weighted sums of the cached base-kernel columns."""
        return tuple(self._timed("kernel_sum", self._bases[side].view, self._sum_weights(side))
                     for side in ("image", "text"))

    def _new_inputs(self, images: ImageSource, captions: Sequence[str]):
        """Centred landmark features of new images and single captions, through their base kernels' columns."""
        fx = self.kcca_.features(X=self._new_columns("image", images).view(self._sum_weights("image")))
        fy = self.kcca_.features(Y=self._new_columns("text", list(captions)).view(self._sum_weights("text")))
        return fx, fy

    def _new_columns(self, side: str, new) -> BaseColumns:
        """The base kernels' columns of new images or captions against ``side``'s landmarks (memoised during fit)."""
        def compute():
            items = {kernel.name: kernel.items(new) for kernel in self.base_kernels_[side]}
            return self.landmarks_[side].columns(items, engine=self.engine, chunk_size=self.chunk_size)

        return self._memoised((side,), new, compute)

    def _aligned_weights(self, side: str, uniform: dict) -> np.ndarray:
        """Alignment weights of ``side``'s base kernels from their Nyström approximations' centred inner products.

        The target is the other view's uniform sum of normalised base kernels, so its inner
        products with a base kernel are sums of the base kernels' (module docstring).
        """
        other = "image" if side == "text" else "text"
        memo = self._cross_memo  # one pass over the columns serves both views, for this fit only
        if "products" not in memo:
            memo["products"] = centred_inner_products([self._bases[s] for s in SIDES], chunk_size=self.chunk_size)
        order = [(s, kernel.name) for s in SIDES for kernel in self.base_kernels_[s]]
        scales = np.array([self.scales_[s][name] for s, name in order])
        products = memo["products"] * np.outer(scales, scales)  # of the normalised kernels
        mine, others = ([i for i, (s, _) in enumerate(order) if s == wanted] for wanted in (side, other))
        target = np.array([uniform[other][name] for s, name in order if s == other])
        return alignment_weights_from_products(products[np.ix_(mine, mine)], products[np.ix_(mine, others)] @ target,
                                               method=self.kernel_weights)
