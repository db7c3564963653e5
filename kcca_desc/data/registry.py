"""Data sets by name: the one entry point the command line uses.

============  ==============================================  ==================
name          loader                                          ``root`` is
============  ==============================================  ==================
synthetic     :func:`~.synthetic.make_synthetic`              not used
flickr8k      :func:`~.flickr8k.load_flickr8k`                the data directory
json          :func:`~.byod.load_karpathy_json`               the JSON file
flickr30k     :func:`~.karpathy.load_flickr30k`               ``dataset_flickr30k.json``
coco          :func:`~.karpathy.load_coco`                    ``dataset_coco.json``
tsv           :func:`~.byod.load_tsv`                         the TSV file
============  ==============================================  ==================

A further data set is one :class:`DataSetLoader` registered in :data:`DATASETS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._core.errors import ParameterError
from .._core.registry import Registry
from .byod import load_karpathy_json, load_tsv
from .dataset import Dataset
from .flickr8k import load_flickr8k
from .problems import ProblemLog
from .karpathy import load_coco, load_flickr30k
from .synthetic import make_synthetic

__all__ = ["DATASETS", "DataSetLoader", "load_dataset"]


@dataclass(frozen=True)
class DataSetLoader:
    """How :func:`load_dataset` loads one named data set.

    Attributes
    ----------
    load : callable
        ``load(root, seed, **options) -> Dataset``.
    options : tuple of str
        The options ``load`` takes.
    reports_problems : bool
        Whether ``load`` takes ``problems=`` (a :class:`~kcca_desc.data.problems.ProblemLog`):
        it then records every bad line or item there and leaves the bad items out, so that
        :func:`load_dataset` can report them together with the problems found later.
    takes_root : bool
        Whether ``load`` takes a ``root`` (a generated data set takes none), so that a command
        line can refuse ``--data-root`` before any work.
    """

    load: Callable[..., Dataset]
    options: tuple[str, ...] = ()
    reports_problems: bool = False
    takes_root: bool = True


def _synthetic(root, seed, **options) -> Dataset:
    if root is not None:
        raise ParameterError(f"the synthetic data set is generated from the seed and takes no root (CLI: --data-root), "
                             f"got {str(root)!r}")
    return make_synthetic(seed=seed, **options)


def _flickr8k(root, seed, **options) -> Dataset:
    return load_flickr8k(root, **options)


def _file_loader(loader: Callable[..., Dataset], what: str, required: tuple[str, ...] = ()) -> Callable[..., Dataset]:
    def load(root, seed, **options) -> Dataset:
        if root is None:
            raise ParameterError(f"data set {what!r} needs root=<path of the {what.upper()} file> (CLI: --data-root)")
        missing = [key for key in required if key not in options]
        if missing:
            flags = ", ".join("--" + key.replace("_", "-") for key in missing)
            raise ParameterError(f"data set {what!r} needs option {', '.join(missing)} (CLI: {flags})")
        return loader(root, **options)

    return load


#: Name -> :class:`DataSetLoader` of every data set :func:`load_dataset` knows.
DATASETS: Registry[DataSetLoader] = Registry("data set")
DATASETS.register("synthetic", DataSetLoader(_synthetic, ("n_images", "image_size", "n_captions", "split_fractions",
                                                            "vocabulary"), takes_root=False),
                  help="rendered scenes with generated captions, drawn from the seed")
DATASETS.register("flickr8k", DataSetLoader(_flickr8k, ("captions",), reports_problems=True), help="Flickr8K (Hodosh et al. 2013)")
DATASETS.register("json", DataSetLoader(_file_loader(load_karpathy_json, "json", required=("image_root",)),
                                        ("image_root",), reports_problems=True),
                  help="a Karpathy-style JSON file of images, captions and splits")
DATASETS.register("flickr30k", DataSetLoader(_file_loader(load_flickr30k, "flickr30k", required=("image_root",)),
                                             ("image_root",)),
                  help="Flickr30K, Karpathy split (root: dataset_flickr30k.json; test pool flickr30k_1k)")
DATASETS.register("coco", DataSetLoader(_file_loader(load_coco, "coco", required=("image_root",)), ("image_root",)),
                  help="MS-COCO, Karpathy split (root: dataset_coco.json; test pools coco_5k, coco_1k)")
DATASETS.register("tsv", DataSetLoader(_file_loader(load_tsv, "tsv"), ("image_root",), reports_problems=True),
                  help="a TSV file of image path, caption and split per line")


def load_dataset(name: str, root: str | os.PathLike | None = None, *, seed: int = 0,
                 problems: ProblemLog | None = None, **options: Any) -> Dataset:
    """Load or generate the data set called ``name``.

    Parameters
    ----------
    name : str
        A name in :data:`DATASETS`: "synthetic", "flickr8k", "json", "tsv" (see the module
        docstring) or any data set registered there.
    root : path-like, optional
        The Flickr8K directory (default ``$KCCA_DESC_FLICKR8K``), the JSON / TSV file, or
        Karpathy's split file of ``flickr30k`` / ``coco``; must be None for ``synthetic``.
    seed : int, default=0
        Seed of the synthetic data set; the others are not random.
    problems : ProblemLog, optional
        Where a loader that :attr:`~DataSetLoader.reports_problems` records every problem of
        the data, leaving the bad items out; the caller then raises or drops them
        (:func:`kcca_desc.data.checks.check_dataset`).  Without it the loader raises them.
    **options
        Passed to the loader: ``n_images``, ``image_size``, ``n_captions``,
        ``split_fractions``, ``vocabulary`` (synthetic); ``captions`` (flickr8k);
        ``image_root`` (json, flickr30k and coco, required; tsv,
        optional).  Options set to None are dropped, so a command line can pass all of its flags.

    Returns
    -------
    Dataset

    Raises
    ------
    UnknownNameError
        For an unknown ``name``, listing the available ones (a ``ValueError``).
    ParameterError
        For an option the chosen loader does not take, or a missing ``root``
        (a ``ValueError``); the loaders raise their own errors for bad data.
    """
    loader = DATASETS[name]
    options = {key: value for key, value in options.items() if value is not None}
    unexpected = sorted(set(options) - set(loader.options))
    if unexpected:
        raise ParameterError(
            f"data set {name!r} takes no option {', '.join(unexpected)}; "
            f"its options: {', '.join(loader.options) or 'none'}"
        )
    if problems is not None and loader.reports_problems:
        options["problems"] = problems
    return loader.load(root, seed, **options)
