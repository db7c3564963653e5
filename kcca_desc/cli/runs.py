"""What ``compare`` and ``report`` share: a parser of results files and the runs it picks."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from ..evaluate.statistics import N_PERMUTATIONS, N_RESAMPLES
from ..report.compare import Run, load_runs
from .options import command_parser

__all__ = ["runs_parser", "selected_runs"]


def runs_parser(prog: str, description: str, *, examples: Iterable[str] = ()) -> argparse.ArgumentParser:
    """A command over results files, with the options that pick runs and set the statistics."""
    parser = command_parser(prog, description, examples=examples, usage="%(prog)s RESULTS [RESULTS ...] [options]")
    parser.add_argument("results", nargs="+", help="results files (python -m kcca_desc.fit --out) or benchmark tables")
    parser.add_argument("--reference", default=None, help="the reference run: a file, a system name or a label "
                                                          "(none: the first run)")
    parser.add_argument("--systems", default=None, help="comma-separated system names to keep (none: all)")
    parser.add_argument("--protocol", default=None, choices=("hodosh", "karpathy"), help="keep only this protocol")
    parser.add_argument("--n-resamples", type=int, default=N_RESAMPLES, help="bootstrap resamples")
    parser.add_argument("--n-permutations", type=int, default=N_PERMUTATIONS,
                        help="random assignments of the randomisation tests")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the randomisation tests")
    return parser


def selected_runs(args: argparse.Namespace) -> list[Run]:
    """The runs the options of :func:`runs_parser` pick (raises :class:`ComparisonError`)."""
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else None
    return load_runs(args.results, systems=systems, protocol=args.protocol)
