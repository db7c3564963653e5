"""Retrieval systems by name: what the command line's ``--method`` offers.

Each entry of :data:`SYSTEMS` is a :class:`System`: the estimator to build, the command-line
options of its own, the parameters it takes from them, and how it is fitted.  The command line
lists the entries in ``--help``, builds the chosen one with :meth:`System.build` and fits it
with :attr:`System.fit`; a further system is one registration::

    SYSTEMS.register("mine", System(MySystem, add_options=..., params=...), help="my system")

====  =========================================  ===========================================
name  estimator                                  fitted on
====  =========================================  ===========================================
kcca  :class:`~.ranker.ImageSentenceRanker`      train; models selected on dev (grids > 1)
nn    :class:`~.nn.NearestNeighbour`             train
====  =========================================  ===========================================
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..data.dataset import Dataset
from ..registry import Registry
from .base import RetrievalMethod
from .nn import WORD_SET_SIMILARITIES, NearestNeighbour
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, ImageSentenceRanker

__all__ = ["System", "SYSTEMS", "fit_on_train"]


def fit_on_train(method: RetrievalMethod, dataset: Dataset, protocol: str) -> RetrievalMethod:
    """Fit ``method`` on the training split of ``dataset`` (``protocol`` is not used)."""
    return method.fit(dataset.subset("train"))


def _no_options(group: argparse._ArgumentGroup) -> None:
    """A system without command-line options of its own."""


def _no_params(args: argparse.Namespace) -> dict:
    return {}


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
    """

    factory: Callable[..., RetrievalMethod]
    add_options: Callable[[argparse._ArgumentGroup], None] = _no_options
    params: Callable[[argparse.Namespace], dict] = _no_params
    fit: Callable[[RetrievalMethod, Dataset, str], RetrievalMethod] = fit_on_train

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


def _fit_with_selection(method: ImageSentenceRanker, dataset: Dataset, protocol: str) -> ImageSentenceRanker:
    """Fit on train; a grid of more than one (n, reg) setting selects its models on dev."""
    multi = len(method.n_components) * len(method.regs) > 1
    return method.fit(dataset.subset("train"), dev=dataset.view("dev", protocol) if multi else None)


# The word-set similarities of NearestNeighbour, or "kernel": the --text-kernel.
_NN_TEXT = (*WORD_SET_SIMILARITIES, "kernel")


def _nn_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--nn-text", choices=_NN_TEXT, default="idf_f1",
                       help="nn text similarity: idf_f1 (NN5 idf F1), f1, or kernel (= --text-kernel)")


def _nn_params(args: argparse.Namespace) -> dict:
    return {"text_similarity": args.text_kernel if args.nn_text == "kernel" else args.nn_text}


#: Name -> :class:`System` of every system the command line can run.
SYSTEMS: Registry[System] = Registry("method")
SYSTEMS.register("kcca", System(ImageSentenceRanker, _kcca_options, _kcca_params, _fit_with_selection),
                 help="KCCA with dev-set model selection and Borda fusion")
SYSTEMS.register("nn", System(NearestNeighbour, _nn_options, _nn_params), help="nearest neighbour")
