"""Retrieval systems by name: what the command line's ``--method`` offers.

Each entry of :data:`SYSTEMS` is a :class:`System`: the estimator to build, the command-line
options of its own, the parameters it takes from them, and how it is fitted.  The command line
lists the entries in ``--help``, builds the chosen one with :meth:`System.build` and fits it
with :attr:`System.fit`; a further system is one registration::

    SYSTEMS.register("mine", System(MySystem, add_options=..., params=...), help="my system")

=======  =========================================  ===========================================
name     estimator                                  fitted on
=======  =========================================  ===========================================
kcca     :class:`~.ranker.ImageSentenceRanker`      train; models selected on dev (grids > 1)
nn       :class:`~.nn.NearestNeighbour`             train
encoder  :class:`~.encoders.EncoderMethod`          nothing (a frozen joint encoder's cosine)
cca      :class:`~.bridge.FeatureBridgeMethod`      train (linear CCA over encoder features)
=======  =========================================  ===========================================

``kcca_scalable`` (:class:`~.scalable.ScalableRanker`) is ``kcca`` on landmark kernels in
chunks, on a Dask cluster (``--scheduler``) or in this process, for training sets too large for
n x n kernels; it is fitted as ``kcca``.

``kcca`` and ``nn`` have a second form, :attr:`System.over_features`, which the command line
runs when it names an encoder (``--encoder``, ``--text-encoder``, ``--image-encoder``): RBF
KCCA and NN5 over the encoder's features (:mod:`.encoder_systems`).  Without one they are the
classical systems over the paper's kernels, as before.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..data.dataset import Dataset
from .._core.registry import Registry
from .base import RetrievalMethod
from .bridge import FeatureBridgeMethod
from .encoder_systems import (add_bridge_options, add_encoder_options, bridge_params, encoder_params,
                              encoder_requested)
from .encoders import EncoderMethod
from .nn import WORD_SET_SIMILARITIES, NearestNeighbour
from ..scale import DEFAULT_CHUNK_SIZE, DEFAULT_RANK, LANDMARKS, SCHEDULER_ENV, open_dask_engine
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, ImageSentenceRanker
from .scalable import ScalableRanker
from .trainable_systems import (TRAINABLE_CONFIGS, WRAPPERS, TrainableSystem, add_training_options, fit_with_dev,
                                training_params)

__all__ = ["System", "SYSTEMS", "fit_on_train"]


def fit_on_train(method: RetrievalMethod, dataset: Dataset, protocol: str) -> RetrievalMethod:
    """Fit ``method`` on the training split of ``dataset`` (``protocol`` is not used)."""
    return method.fit(dataset.subset("train"))


def _no_options(group: argparse._ArgumentGroup) -> None:
    """A system without command-line options of its own."""


def _no_params(args: argparse.Namespace) -> dict:
    return {}


def _train_split(method: RetrievalMethod) -> dict[str, str]:
    return {"train": "the system is fitted on it"}


@dataclass(frozen=True)
class System:
    """How the command line builds and fits one retrieval system.

    Attributes
    ----------
    factory : callable
        The system's class (or any callable returning a :class:`RetrievalMethod`).
    add_options : callable, optional
        ``add_options(group)`` adds the system's own options to an ``argparse`` argument group.
        Their names must not clash with another system's or the command line's.
    params : callable, optional
        ``params(args) -> dict``: keyword arguments of ``factory`` from the parsed options.
    fit : callable, default=fit_on_train
        ``fit(method, dataset, protocol) -> method``: fit on ``dataset`` (a system that selects
        models may use its dev split, under ``protocol``).
    splits : callable, default: train only
        ``splits(method) -> {split: why}``: the splits ``fit`` reads, each with why, so that the
        command line checks that the data set has them before any work
        (:func:`kcca_desc.cli.preflight.prepare_run`).
    over_features : System, optional
        The system's form over an encoder's features, run when the command line names an
        encoder (:func:`~.encoder_systems.encoder_requested`); its options come from the
        ``encoder`` and ``cca`` entries.
    """

    factory: Callable[..., RetrievalMethod]
    add_options: Callable[[argparse._ArgumentGroup], None] = _no_options
    params: Callable[[argparse.Namespace], dict] = _no_params
    fit: Callable[[RetrievalMethod, Dataset, str], RetrievalMethod] = fit_on_train
    splits: Callable[[RetrievalMethod], dict[str, str]] = _train_split
    over_features: "System | None" = None

    def resolve(self, args: argparse.Namespace) -> "System":
        """The form of this system ``args`` asks for: :attr:`over_features` when an encoder is named."""
        return self.over_features if self.over_features is not None and encoder_requested(args) else self

    def build(self, args: argparse.Namespace, shared: Mapping[str, Any]) -> RetrievalMethod:
        """``factory(**shared, **params(args))``, keeping of ``shared`` what ``factory`` takes.

        ``shared`` holds the settings common to the command line's systems (image kernel, seed,
        cache...); a system that has no such parameter does not get it.
        """
        accepted = inspect.signature(self.factory).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        kwargs = {key: value for key, value in shared.items() if takes_any or key in accepted}
        return self.factory(**{**kwargs, **self.params(args)})


def _number_list(cast: Callable[[str], Any]) -> Callable[[str], list]:
    """argparse type of a comma-separated list of numbers."""
    def parse(value: str) -> list:
        try:
            items = [cast(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of numbers, got {value!r}")
        if not items:
            raise argparse.ArgumentTypeError("the list is empty")
        return items
    return parse


def _kcca_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--power", type=float, default=1.0, help="image kernel power p")
    group.add_argument("--diag", type=float, default=1.0, help="text kernel diagonal multiplier d (>= 1)")
    group.add_argument("--n-components", type=_number_list(int), default=list(DEFAULT_N_COMPONENTS),
                       help="grid of KCCA dimensions n (comma-separated)")
    group.add_argument("--regs", type=_number_list(float), default=list(DEFAULT_REGS),
                       help="grid of KCCA regularisation values (comma-separated)")
    group.add_argument("--n-select", type=int, default=5,
                       help="models kept per selection metric (R@1, R@5, R@10) for Borda fusion")
    group.add_argument("--weight-power", type=float, default=0.0,
                       help="weight projected dimensions by canonical correlation ** q before the cosine")


def _kcca_params(args: argparse.Namespace) -> dict:
    return {"power": args.power, "diag": args.diag, "n_components": args.n_components, "regs": args.regs,
            "n_select": args.n_select, "weight_power": args.weight_power}


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


def _scalable_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--rank", type=int, default=DEFAULT_RANK, help="landmarks per view (kcca_scalable)")
    group.add_argument("--landmarks", choices=tuple(LANDMARKS), default="pivots", help="landmark choice")
    group.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help="rows per chunk and partition")
    group.add_argument("--pairs", choices=("image", "caption"), default="image",
                       help="training pairs: each image with its captions, or each caption with its image")
    group.add_argument("--engine", choices=("dask", "local"), default="dask",
                       help="dask: a Dask cluster (--scheduler, else a local one sized to the machine); "
                            "local: this process only")
    group.add_argument("--scheduler", default=None,
                       help=f"address of an existing Dask scheduler (default ${SCHEDULER_ENV})")


def _scalable_params(args: argparse.Namespace) -> dict:
    engine = open_dask_engine(args.scheduler) if args.engine == "dask" else None
    return {**_kcca_params(args), "rank": args.rank, "landmarks": args.landmarks, "chunk_size": args.chunk_size,
            "pairs": args.pairs, "engine": engine}


# The word-set similarities of NearestNeighbour, or "kernel": the --text-kernel.
_NN_TEXT = (*WORD_SET_SIMILARITIES, "kernel")


def _nn_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--nn-text", choices=_NN_TEXT, default="idf_f1",
                       help="nn text similarity: idf_f1 (NN5 idf F1), f1, or kernel (= --text-kernel)")


def _nn_params(args: argparse.Namespace) -> dict:
    return {"text_similarity": args.text_kernel if args.nn_text == "kernel" else args.nn_text}


#: Name -> :class:`System` of every system the command line can run.
SYSTEMS: Registry[System] = Registry("method")
SYSTEMS.register("kcca", System(ImageSentenceRanker, _kcca_options, _kcca_params, _fit_with_selection, _kcca_splits,
                                over_features=System(FeatureBridgeMethod, params=bridge_params("cca", "rbf"))),
                 help="KCCA with dev-set model selection and Borda fusion; with an encoder named, "
                      "low-rank RBF KCCA over its features (--bridge-* options)")
SYSTEMS.register("nn", System(NearestNeighbour, _nn_options, _nn_params,
                              over_features=System(FeatureBridgeMethod, params=bridge_params("nn", "linear"))),
                 help="nearest neighbour; with an encoder named, NN5 over the cosine of its features")
SYSTEMS.register("kcca_scalable", System(ScalableRanker, _scalable_options, _scalable_params, _fit_with_selection,
                                         _kcca_splits),
                 help="KCCA on landmark kernels in chunks, on Dask, for Flickr30K/COCO-sized training sets")
SYSTEMS.register("encoder", System(EncoderMethod, add_encoder_options, encoder_params),
                 help="a joint image-text encoder's own cosine (--encoder FAMILY:MODEL@WEIGHTS)")
SYSTEMS.register("cca", System(FeatureBridgeMethod, add_bridge_options, bridge_params("cca", "linear")),
                 help="linear CCA over an encoder's features (default: the offline ONNX MiniLM and ViT)")
# The seed papers' trainable models; their options (--train-config ...) are shared, so listed once.
for _name in WRAPPERS:
    SYSTEMS.register(_name, System(TrainableSystem(_name), add_training_options if _name == "vse" else _no_options,
                                   training_params, fit_with_dev),
                     help=f"trainable {_name} ({TRAINABLE_CONFIGS[_name]['model']}, --train-config cpu|paper)")
