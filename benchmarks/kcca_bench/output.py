"""The options every benchmark shares (``--quick``, ``--out``), and where and how it writes its record.

Every benchmark's main follows the command line's error contract (:mod:`kcca_desc.cli.errors`):
its parser (:func:`benchmark_parser`) reports a bad option in one line naming it, and
:func:`run_main` prints a toolkit error as one ``error:`` line and exits with its documented code.
A record that cannot be written (full disk, read-only folder) is written to a temporary folder
named in the error (exit 73), so the run's figures are not lost.

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
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn

from kcca_desc._core.cache import atomic_write_text
from kcca_desc.cli.errors import exits_cleanly
from kcca_desc.cli.options import CommandParser
from kcca_desc.cli.outputs import write_or_keep
from kcca_desc.cli.preflight import check_writable
from kcca_desc.evaluate.results import dumps_json

__all__ = ["QUICK_DIR", "benchmark_parser", "run_main", "add_output_arguments", "fill_defaults", "output_path",
           "write_results"]

#: Default folder of the records of ``--quick`` runs (outside the repository).
QUICK_DIR = Path(tempfile.gettempdir()) / "kcca_desc_benchmarks_quick"


def benchmark_parser(script: str | os.PathLike, description: str, *,
                     formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter) -> argparse.ArgumentParser:
    """The parser of the benchmark ``script`` (``__file__``): a usage error is one line and a pointer to ``--help``."""
    return CommandParser(prog=f"python benchmarks/{Path(script).name}", description=description,
                         formatter_class=formatter_class)


def run_main(main: Callable[[Sequence[str] | None], Any]) -> NoReturn:
    """Run a benchmark's ``main(argv)`` under the command line's error contract and exit with its status.

    A ``main`` that returns an int (a check's status) exits with it; one that returns its record, with 0.
    """
    @exits_cleanly
    def run(argv: Sequence[str] | None) -> int:
        status = main(argv)
        return status if isinstance(status, int) else 0

    sys.exit(run(None))


def _writable_file(text: str) -> Path:
    """``--out``, checked when parsed: a record that cannot be written stops the benchmark before its work.

    The :class:`~kcca_desc._core.errors.UnwritableOutputError` is not a usage error: argparse lets
    it through, and :func:`run_main` exits with its code, 73.
    """
    check_writable(text)
    return Path(text)


def add_output_arguments(parser: argparse.ArgumentParser, quick_help: str) -> argparse.ArgumentParser:
    """Add ``--quick`` (seconds-long run on tiny inputs, described by ``quick_help``) and ``--out``."""
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test in seconds: {quick_help}; writes to {QUICK_DIR} unless --out is given")
    parser.add_argument("--out", type=_writable_file, default=None,
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

    When ``path`` cannot be written, the record goes to a temporary folder and an
    :class:`~kcca_desc._core.errors.UnwritableOutputError` names it.

    Lists of numbers (per-query ranks, top-K rows) are written on one line each.
    """
    text = dumps_json(figures, indent=indent, default=default, allow_nan=True) + "\n"
    written = write_or_keep(path, lambda target: atomic_write_text(target, text) or target)
    print(f"wrote {written}")
