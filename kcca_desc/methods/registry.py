"""Retrieval systems by name: what the command line's ``--method`` offers.

Each entry of :data:`SYSTEMS` is a :class:`System`: the estimator to build, the settings it
reads (:class:`~kcca_desc._core.settings.Setting`), the parameters it takes from a mapping of
their values, and how it is fitted.  Nothing here knows the command line: it lists the entries
in ``--help``, makes one option of each declared setting, builds the chosen system with
:meth:`System.build` from the parsed values and fits it with :attr:`System.fit`.  A further
system is one registration::

    SYSTEMS.register("mine", System(MySystem, settings=(Setting("my_alpha", float, 1.0, help="alpha"),),
                                    params=lambda settings: {"alpha": settings["my_alpha"]}),
                     help="my system")

=======  =========================================  ===========================================
name     estimator                                  fitted on
=======  =========================================  ===========================================
kcca     :class:`~.ranker.ImageSentenceRanker`      train; models selected on dev (grids > 1)
nn       :class:`~.nn.NearestNeighbour`             train
encoder  :class:`~.encoders.EncoderMethod`          nothing (a frozen joint encoder's cosine)
cca      :class:`~.bridge.FeatureBridgeMethod`      train (linear CCA over encoder features)
=======  =========================================  ===========================================

``mkl`` (:class:`~.multikernel.MultipleKernelRanker`) is ``kcca`` over weighted sums of base
kernels (``--text-kernel tri_sem+minilm_rbf --image-kernel pyramid+efficientnet_rbf``), the
weights chosen on train and dev (``--kernel-weights``); it is fitted as ``kcca``, and on dev
also when ``--kernel-weights greedy``.

``kcca_scalable`` (:class:`~.scalable.ScalableRanker`) is ``kcca`` on landmark kernels in
chunks, on a Dask cluster (``--scheduler``) or in this process, for training sets too large for
n x n kernels; it is fitted as ``kcca``.  ``mkl_scalable``
(:class:`~.scalable_multikernel.ScalableMultipleKernelRanker`) is ``mkl`` the same way (the
settings of both but ``--pairs``); it is fitted as ``mkl``.

``kcca`` and ``nn`` have a second form, :attr:`System.over_features`, which the command line
runs when it names an encoder (``--encoder``, ``--text-encoder``, ``--image-encoder``): RBF
KCCA and NN5 over the encoder's features (:mod:`.encoder_systems`).  Without one they are the
classical systems over the paper's kernels, as before.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..data.dataset import Dataset
from .._core.registry import Registry
from .._core.settings import Setting, changed_settings, comma_separated, setting_defaults, superscript, unlabelled
from .base import RetrievalMethod
from .bridge import FeatureBridgeMethod
from .encoder_systems import (BRIDGE_SETTINGS, DEFAULT_IMAGE_ENCODER, DEFAULT_TEXT_ENCODER, ENCODER_SETTINGS,
                              bridge_params, encoder_params, encoder_requested)
from .encoders import EncoderMethod
from ..kernels.combine import NORMALIZATIONS
from .multikernel import WEIGHT_STRATEGIES, MultipleKernelRanker, parse_kernel_weights
from .nn import WORD_SET_SIMILARITIES, NearestNeighbour
from ..scale import DEFAULT_CHUNK_SIZE, DEFAULT_RANK, LANDMARKS, SCHEDULER_ENV, open_dask_engine
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, ImageSentenceRanker
from .scalable import ScalableRanker
from .scalable_multikernel import ScalableMultipleKernelRanker
from .trainable_systems import TRAINABLE, TRAINING_SETTINGS, TrainableSystem, fit_with_dev, training_params

__all__ = ["System", "SYSTEMS", "Setting", "fit_on_train"]


def fit_on_train(method: RetrievalMethod, dataset: Dataset, protocol: str) -> RetrievalMethod:
    """Fit ``method`` on the training split of ``dataset`` (``protocol`` is not used)."""
    return method.fit(dataset.subset("train"))


def _no_params(settings: Mapping[str, Any]) -> dict:
    return {}


def _train_split(method: RetrievalMethod) -> dict[str, str]:
    return {"train": "the system is fitted on it"}


@dataclass(frozen=True)
class System:
    """How to build and fit one retrieval system from a mapping of settings.

    Attributes
    ----------
    factory : callable
        The system's class (or any callable returning a :class:`RetrievalMethod`).
    settings : tuple of Setting, default=()
        The settings the system reads (:class:`~kcca_desc._core.settings.Setting`), from which
        the command line builds its options.  Several systems may declare the same setting
        (the same :class:`Setting`); another setting of the same name is a clash.
    params : callable, optional
        ``params(settings) -> dict``: keyword arguments of ``factory`` from a mapping holding the
        value of each of :attr:`settings` (defaults filled in) and the shared settings of
        :meth:`build` (``text_kernel``, ``cache``...).
    fit : callable, default=fit_on_train
        ``fit(method, dataset, protocol) -> method``: fit on ``dataset`` (a system that selects
        models may use its dev split, under ``protocol``).
    splits : callable, default: train only
        ``splits(method) -> {split: why}``: the splits ``fit`` reads, each with why, so that the
        command line checks that the data set has them before any work
        (:func:`kcca_desc.cli.preflight.prepare_run`).
    over_features : System, optional
        The system's form over an encoder's features, run when the settings name an encoder
        (:func:`~.encoder_systems.encoder_requested`); the command line takes its options from
        the ``encoder`` and ``cca`` entries.
    """

    factory: Callable[..., RetrievalMethod]
    settings: tuple[Setting, ...] = ()
    params: Callable[[Mapping[str, Any]], dict] = _no_params
    fit: Callable[[RetrievalMethod, Dataset, str], RetrievalMethod] = fit_on_train
    splits: Callable[[RetrievalMethod], dict[str, str]] = _train_split
    over_features: "System | None" = None

    def resolve(self, settings: Mapping[str, Any]) -> "System":
        """The form of this system ``settings`` ask for: :attr:`over_features` when an encoder is named."""
        return self.over_features if self.over_features is not None and encoder_requested(settings) else self

    def label(self, method: RetrievalMethod, settings: Mapping[str, Any], shared: Iterable[Setting] = (),
              used: Mapping[str, Any] | None = None) -> str:
        """The run's default label: ``method.name`` and every setting that differs from its default.

        Short and alike for every system (``"KCCA bow5 (pyramid) ρ²"``); each setting's notation
        is its :attr:`~kcca_desc._core.settings.Setting.label`.  ``shared`` are the settings
        common to the systems that :meth:`build` gets outside :attr:`settings` (the command
        line's ``--levels``, ``--seed``...): those of ``settings`` that differ from their
        defaults follow the system's own (``"KCCA bow5 (pyramid) ρ² L=1 seed=1"``).  ``used``
        are the values a fit used instead of some settings, by setting name (a grid of
        ``n_components`` cut to what the training set supports): those show both, ``n=16,500→16``.
        """
        changed = " ".join(part for part in (changed_settings(self.settings, settings, used),
                                             changed_settings(shared, settings)) if part)
        return f"{method.name} {changed}" if changed else method.name

    def applied(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The values of this system's own settings in ``settings`` (defaults filled in): what a result records."""
        return {**setting_defaults(self.settings),
                **{setting.name: settings[setting.name] for setting in self.settings if setting.name in settings}}

    def takes(self, name: str) -> bool:
        """Whether :meth:`build` passes the shared setting ``name`` (``image_kernel``...) to :attr:`factory`."""
        accepted = inspect.signature(self.factory).parameters
        return name in accepted or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())

    def build(self, settings: Mapping[str, Any], shared: Mapping[str, Any]) -> RetrievalMethod:
        """``factory(**shared, **params(...))``, keeping of ``shared`` what ``factory`` takes.

        Parameters
        ----------
        settings : mapping
            Values of the system's :attr:`settings` by name; a setting left out takes its default.
            Other keys are ignored.
        shared : mapping
            The settings common to the command line's systems (``image_kernel``,
            ``text_kernel``, ``image_kernel_params``, ``random_state``, ``cache``); a system
            whose factory has no such parameter does not get it, but :attr:`params` sees them all.
        """
        kwargs = {key: value for key, value in shared.items() if self.takes(key)}
        values = {**setting_defaults(self.settings), **shared, **settings}
        return self.factory(**{**kwargs, **self.params(values)})


_KCCA_SETTINGS = (
    Setting("power", float, 1.0, help="image kernel power p", label=lambda p: f"p={p:g}"),
    Setting("diag", float, 1.0, help="text kernel diagonal multiplier d (>= 1)", label=lambda d: f"d={d:g}"),
    Setting("n_components", comma_separated(int), list(DEFAULT_N_COMPONENTS),
            help="grid of KCCA dimensions n (comma-separated)", label=lambda ns: "n=" + ",".join(map(str, ns))),
    Setting("regs", comma_separated(float), list(DEFAULT_REGS),
            help="grid of KCCA regularisation values (comma-separated)",
            label=lambda regs: "κ=" + ",".join(f"{r:g}" for r in regs)),
    Setting("n_select", int, 5, help="models kept per selection metric (R@1, R@5, R@10) for Borda fusion",
            label=lambda k: f"top {k}"),
    Setting("weight_power", float, 0.0,
            help="weight projected dimensions by canonical correlation ** q before the cosine",
            label=lambda q: "ρ" + superscript(q)),
)


def _kcca_params(settings: Mapping[str, Any]) -> dict:
    return {setting.name: settings[setting.name] for setting in _KCCA_SETTINGS}


def _kcca_splits(method: ImageSentenceRanker) -> dict[str, str]:
    n_settings = len(method.n_components) * len(method.regs)
    if n_settings == 1:
        return _train_split(method)
    return {**_train_split(method),
            "dev": f"--method kcca selects among its {n_settings} (n, reg) settings on it (or give one "
                   "--n-components and one --regs)"}


def _fit_with_selection(method: ImageSentenceRanker, dataset: Dataset, protocol: str) -> ImageSentenceRanker:
    """Fit on train; a grid of more than one (n, reg) setting selects its models on dev."""
    multi = len(method.n_components) * len(method.regs) > 1
    return method.fit(dataset.subset("train"), dev=dataset.view("dev", protocol) if multi else None)


_SCALABLE_SETTINGS = (
    Setting("rank", int, DEFAULT_RANK, help="landmarks per view (kcca_scalable, mkl_scalable)",
            label=unlabelled),  # in the name
    Setting("landmarks", choices=tuple(LANDMARKS), default="pivots", help="landmark choice"),
    Setting("chunk_size", int, DEFAULT_CHUNK_SIZE, help="rows per chunk and partition", label=unlabelled),
    Setting("pairs", choices=("image", "caption"), default="image",
            help="training pairs: each image with its captions, or each caption with its image"),
    Setting("engine", choices=("dask", "local"), default="dask",
            help="dask: a Dask cluster (--scheduler, else a local one sized to the machine); "
                 "local: this process only", label=unlabelled),
    Setting("scheduler", help=f"address of an existing Dask scheduler (default ${SCHEDULER_ENV})", label=unlabelled),
)


def _landmark_params(settings: Mapping[str, Any]) -> dict:
    # The cluster is opened here, when the system is built, not when the registry is imported.
    engine = open_dask_engine(settings["scheduler"]) if settings["engine"] == "dask" else None
    return {"rank": settings["rank"], "landmarks": settings["landmarks"], "chunk_size": settings["chunk_size"],
            "engine": engine}


def _scalable_params(settings: Mapping[str, Any]) -> dict:
    return {**_kcca_params(settings), **_landmark_params(settings), "pairs": settings["pairs"]}


_MKL_SETTINGS = (
    Setting("kernel_weights", parse_kernel_weights, "align", metavar="STRATEGY|NAME=W,...",
            help="weights of the summed base kernels of --text-kernel and --image-kernel (names joined by +): "
                 f"{', '.join(WEIGHT_STRATEGIES)} (chosen on train and dev only), or name=weight,... for each kernel",
            label=lambda weights: "μ=" + (weights if isinstance(weights, str)
                                          else ",".join(f"{k}:{v:g}" for k, v in weights.items()))),
    Setting("kernel_normalization", choices=NORMALIZATIONS, default="trace",
            help="of each centred base kernel before the sum: trace (n), diagonal (cosine) or none",
            parameter="normalization"),
    Setting("greedy_weights", comma_separated(float), [1.0],
            help="--kernel-weights greedy: weights a kernel may join with, relative to the mean weight in",
            label=lambda ws: "greedy μ=" + ",".join(f"{w:g}" for w in ws)),
    Setting("kernel_gamma_scale", float, 1.0,
            help="RBF base kernels over encoder features: bandwidth = this x the median heuristic",
            label=lambda scale: f"γ×{scale:g}", parameter="gamma_scale"),
)


def _mkl_params(settings: Mapping[str, Any]) -> dict:
    options = {"device": settings["encoder_device"], "dtype": settings["encoder_dtype"],
               "batch_size": settings["encoder_batch_size"], "n_threads": settings["encoder_threads"]}
    return {**_kcca_params(settings), "kernel_weights": settings["kernel_weights"],
            "normalization": settings["kernel_normalization"], "greedy_weights": settings["greedy_weights"],
            "gamma_scale": settings["kernel_gamma_scale"],
            "text_encoder": settings["text_encoder"] or settings["encoder"],
            "image_encoder": settings["image_encoder"] or settings["encoder"],
            "encoder_options": {name: value for name, value in options.items() if value is not None} or None}


def _mkl_scalable_params(settings: Mapping[str, Any]) -> dict:
    return {**_mkl_params(settings), **_landmark_params(settings)}


def _mkl_uses_dev(method: MultipleKernelRanker) -> bool:
    return method.kernel_weights == "greedy" or len(method.n_components) * len(method.regs) > 1


def _mkl_splits(method: MultipleKernelRanker) -> dict[str, str]:
    if not _mkl_uses_dev(method):
        return _train_split(method)
    why = ("the kernels are selected on its R@K" if method.kernel_weights == "greedy"
           else f"the (n, reg) grid of {len(method.n_components) * len(method.regs)} settings is selected on it")
    return {**_train_split(method), "dev": why}


def _fit_mkl(method: MultipleKernelRanker, dataset: Dataset, protocol: str) -> MultipleKernelRanker:
    """Fit on train; the weights (greedy) and the (n, reg) grid are selected on dev, never on the test split."""
    dev = dataset.view("dev", protocol) if _mkl_uses_dev(method) else None
    return method.fit(dataset.subset("train"), dev=dev)


# The word-set similarities of NearestNeighbour, or "kernel": the shared text_kernel.
_NN_SETTINGS = (
    Setting("nn_text", choices=(*WORD_SET_SIMILARITIES, "kernel"), default="idf_f1",
            help="nn text similarity: idf_f1 (NN5 idf F1), f1, or kernel (= --text-kernel)",
            label=unlabelled, parameter="text_similarity"),  # the system's name shows it
)


def _nn_params(settings: Mapping[str, Any]) -> dict:
    return {"text_similarity": settings["text_kernel"] if settings["nn_text"] == "kernel" else settings["nn_text"]}


#: Name -> :class:`System` of every system the command line can run.
SYSTEMS: Registry[System] = Registry("method")
_OVER_FEATURES = (*ENCODER_SETTINGS, *BRIDGE_SETTINGS)
SYSTEMS.register("kcca", System(ImageSentenceRanker, _KCCA_SETTINGS, _kcca_params, _fit_with_selection, _kcca_splits,
                                over_features=System(FeatureBridgeMethod, _OVER_FEATURES, bridge_params("cca", "rbf"))),
                 help="KCCA with dev-set model selection and Borda fusion; with an encoder named, "
                      "low-rank RBF KCCA over its features (--bridge-* options)")
SYSTEMS.register("nn", System(NearestNeighbour, _NN_SETTINGS, _nn_params,
                              over_features=System(FeatureBridgeMethod, _OVER_FEATURES, bridge_params("nn", "linear"))),
                 help="nearest neighbour; with an encoder named, NN5 over the cosine of its features")
SYSTEMS.register("kcca_scalable", System(ScalableRanker, (*_KCCA_SETTINGS, *_SCALABLE_SETTINGS), _scalable_params,
                                         _fit_with_selection, _kcca_splits),
                 help="KCCA on landmark kernels in chunks, on Dask, for Flickr30K/COCO-sized training sets")
SYSTEMS.register("mkl", System(MultipleKernelRanker, (*_KCCA_SETTINGS, *_MKL_SETTINGS, *ENCODER_SETTINGS),
                               _mkl_params, _fit_mkl, _mkl_splits),
                 help="multiple-kernel KCCA: --text-kernel and --image-kernel sums of base kernels "
                      "(e.g. tri_sem+minilm_rbf), weights by alignment or greedy dev selection")
SYSTEMS.register("mkl_scalable", System(
    ScalableMultipleKernelRanker, (*_KCCA_SETTINGS, *_MKL_SETTINGS, *ENCODER_SETTINGS,
                                   *(s for s in _SCALABLE_SETTINGS if s.name != "pairs")),
    _mkl_scalable_params, _fit_mkl, _mkl_splits),
                 help="mkl through landmark columns (--rank landmarks per view), without n x n kernels, for "
                      "Flickr30K/COCO-sized training sets")
SYSTEMS.register("encoder", System(EncoderMethod, ENCODER_SETTINGS, encoder_params),
                 help="a joint image-text encoder's own cosine (--encoder FAMILY:MODEL@WEIGHTS)")
SYSTEMS.register("cca", System(FeatureBridgeMethod, _OVER_FEATURES, bridge_params("cca", "linear")),
                 help="linear CCA over an encoder's features (default: the offline "
                      f"{DEFAULT_TEXT_ENCODER} captions and {DEFAULT_IMAGE_ENCODER} images)")
for _name, _spec in TRAINABLE.items():
    SYSTEMS.register(_name, System(TrainableSystem(_spec), TRAINING_SETTINGS, training_params, fit_with_dev),
                     help=f"trainable {_name} ({_spec.model.__name__}, --train-config cpu|paper)")
