"""The options every benchmark shares (``--quick``, ``--out``), and where and how it writes its record.

A ``--quick`` run is the same code on a problem small enough for seconds: each script keeps the
defaults of both kinds of run in one table (:func:`fill_defaults`). A full run writes
``results/<name>.json`` beside the script (``benchmarks/results/``), the committed figures; a
quick run writes to :data:`QUICK_DIR` unless ``--out`` names a file, so a smoke test can never
overwrite them. Writes are atomic
(:func:`kcca_desc._core.cache.atomic_write_text`): a benchmark interrupted while saving leaves the
previous record, never a truncated file.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

from kcca_desc._core.cache import atomic_write_text
from kcca_desc.evaluate.results import dumps_json

__all__ = ["QUICK_DIR", "add_output_arguments", "fill_defaults", "output_path", "write_results"]

#: Default folder of the records of ``--quick`` runs (outside the repository).
QUICK_DIR = Path(tempfile.gettempdir()) / "kcca_desc_benchmarks_quick"


def add_output_arguments(parser: argparse.ArgumentParser, quick_help: str) -> argparse.ArgumentParser:
    """Add ``--quick`` (seconds-long run on tiny inputs, described by ``quick_help``) and ``--out``."""
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test in seconds: {quick_help}; writes to {QUICK_DIR} unless --out is given")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default: benchmarks/results/<name>.json)")
    return parser


def fill_defaults(args: argparse.Namespace, defaults: Mapping[str, Mapping[str, Any]]) -> argparse.Namespace:
    """Give every option the command line left unset (None) its default for this kind of run.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser given :func:`add_output_arguments`; the options named in ``defaults``
        default to None.
    defaults : mapping
        ``{"full": {option: value}, "quick": {option: value}}``; ``"quick"`` applies with
        ``--quick``. An option given on the command line keeps its value in both.

    Returns
    -------
    argparse.Namespace
        ``args``, completed in place.
    """
    for option, value in defaults["quick" if args.quick else "full"].items():
        if not hasattr(args, option):
            raise ValueError(f"fill_defaults: the parser has no option {option!r}")
        if getattr(args, option) is None:
            setattr(args, option, value)
    return args


def output_path(args: argparse.Namespace, script: str | os.PathLike, name: str | None = None) -> Path:
    """The record of this run: ``args.out``, else ``<name>.json`` in the results or the quick folder.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser given :func:`add_output_arguments`.
    script : path-like
        The benchmark script (``__file__``); its ``results/`` folder holds the full runs' records.
    name : str, optional
        Record name; default the script's name without ``.py``.
    """
    if args.out is not None:
        return Path(args.out)
    script = Path(script).resolve()
    folder = QUICK_DIR if args.quick else script.parent / "results"
    return folder / f"{name or script.stem}.json"


def write_results(path: str | os.PathLike, figures: Any, indent: int = 2,
                  default: Callable[[Any], Any] | None = None) -> None:
    """Save ``figures`` as JSON at ``path`` atomically (folders created) and say so.

    Lists of numbers (per-query ranks, top-K rows) are written on one line each.
    """
    text = dumps_json(figures, indent=indent, default=default, allow_nan=True) + "\n"
    atomic_write_text(Path(path), text)
    print(f"wrote {path}")
