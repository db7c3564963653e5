"""Data sets by name: the one entry point the command line uses.

============  ==============================================  ==================
name          loader                                          ``root`` is
============  ==============================================  ==================
synthetic     :func:`~.synthetic.make_synthetic`              not used
flickr8k      :func:`~.flickr8k.load_flickr8k`                the data directory
json          :func:`~.byod.load_karpathy_json`               the JSON file
tsv           :func:`~.byod.load_tsv`                         the TSV file
============  ==============================================  ==================
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .byod import load_karpathy_json, load_tsv
from .dataset import Dataset
from .flickr8k import load_flickr8k
from .synthetic import make_synthetic

__all__ = ["DATASETS", "load_dataset"]


def _synthetic(root, seed, **options) -> Dataset:
    if root is not None:
        raise ValueError(f"the synthetic data set is generated from the seed and takes no root (got {root!r})")
    return make_synthetic(seed=seed, **options)


def _flickr8k(root, seed, **options) -> Dataset:
    return load_flickr8k(root, **options)


def _file_loader(loader: Callable[..., Dataset], what: str, required: tuple[str, ...] = ()) -> Callable[..., Dataset]:
    def load(root, seed, **options) -> Dataset:
        if root is None:
            raise ValueError(f"data set {what!r} needs root=<path of the {what.upper()} file> (CLI: --data-root)")
        missing = [key for key in required if key not in options]
        if missing:
            flags = ", ".join("--" + key.replace("_", "-") for key in missing)
            raise ValueError(f"data set {what!r} needs option {', '.join(missing)} (CLI: {flags})")
        return loader(root, **options)

    return load


# name -> (loader(root, seed, **options), the options it takes)
_LOADERS: dict[str, tuple[Callable[..., Dataset], tuple[str, ...]]] = {
    "synthetic": (_synthetic, ("n_images", "image_size", "n_captions", "split_fractions")),
    "flickr8k": (_flickr8k, ("captions",)),
    "json": (_file_loader(load_karpathy_json, "json", required=("image_root",)), ("image_root",)),
    "tsv": (_file_loader(load_tsv, "tsv"), ("image_root",)),
}

DATASETS = tuple(_LOADERS)


def load_dataset(name: str, root: str | os.PathLike | None = None, seed: int = 0, **options: Any) -> Dataset:
    """Load or generate the data set called ``name``.

    Parameters
    ----------
    name : {"synthetic", "flickr8k", "json", "tsv"}
        Which data set (see the module docstring).
    root : path-like, optional
        The Flickr8K directory (default ``$KCCA_DESC_FLICKR8K``) or the JSON /
        TSV file; must be None for ``synthetic``.
    seed : int, default=0
        Seed of the synthetic data set; the others are not random.
    **options
        Passed to the loader: ``n_images``, ``image_size``, ``n_captions``,
        ``split_fractions`` (synthetic); ``captions`` (flickr8k);
        ``image_root`` (json, required; tsv, optional).  Options set to None
        are dropped, so a command line can pass all of its flags.

    Raises
    ------
    ValueError
        For an unknown ``name`` (listing the available ones), an option the
        chosen loader does not take, or a missing ``root``; the loaders raise
        their own errors for bad data.
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown data set {name!r}; available: {', '.join(DATASETS)}")
    loader, accepted = _LOADERS[name]
    options = {key: value for key, value in options.items() if value is not None}
    unexpected = sorted(set(options) - set(accepted))
    if unexpected:
        raise ValueError(
            f"data set {name!r} takes no option {', '.join(unexpected)}; "
            f"its options: {', '.join(accepted) or 'none'}"
        )
    return loader(root, seed, **options)
