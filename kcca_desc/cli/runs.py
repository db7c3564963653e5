"""What ``compare`` and ``report`` share: a parser of results files and the runs it picks."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Iterable

from ..evaluate.statistics import N_PERMUTATIONS, N_RESAMPLES
from ..report.compare import Run, load_runs, system_names
from .options import command_parser

__all__ = ["runs_parser", "selected_runs", "split_names"]


def runs_parser(prog: str, description: str, *, examples: Iterable[str] = ()) -> argparse.ArgumentParser:
    """A command over results files, with the options that pick runs and set the statistics."""
    parser = command_parser(prog, description, examples=examples, usage="%(prog)s RESULTS [RESULTS ...] [options]")
    parser.add_argument("results", nargs="+", help="results files (python -m kcca_desc.fit --out) or benchmark tables")
    parser.add_argument("--reference", default=None, help="the reference run: a file, a system name or a label "
                                                          "(none: the first run)")
    parser.add_argument("--systems", action="append", default=None, metavar="NAME[,NAME...]",
                        help="system names to keep, comma-separated or the option repeated (none: all); a name "
                             "that holds commas itself (a grid's default name, 'KCCA bow5 (pyramid) n=8,16') is "
                             "recognised whole")
    parser.add_argument("--protocol", default=None, choices=("hodosh", "karpathy"), help="keep only this protocol")
    parser.add_argument("--n-resamples", type=int, default=N_RESAMPLES, help="bootstrap resamples")
    parser.add_argument("--n-permutations", type=int, default=N_PERMUTATIONS,
                        help="random assignments of the randomisation tests")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the randomisation tests")
    return parser


def split_names(text: str, names: Collection[str]) -> list[str]:
    """The system names in ``text``, a comma-separated list whose names may hold commas themselves.

    From the left, the longest run of comma-separated pieces that is one of ``names`` is taken
    whole; a piece that starts none is taken alone (and reported as absent by
    :func:`~kcca_desc.report.compare.load_runs`).

    Examples
    --------
    >>> split_names("NN, KCCA n=8,16 p=2", {"NN", "KCCA n=8,16 p=2"})
    ['NN', 'KCCA n=8,16 p=2']
    """
    pieces, found = text.split(","), []
    start = 0
    while start < len(pieces):
        end = next((end for end in range(len(pieces), start, -1)
                    if ",".join(pieces[start:end]).strip() in names), start + 1)
        found.append(",".join(pieces[start:end]).strip())
        start = end
    return [name for name in found if name]


def selected_runs(args: argparse.Namespace) -> list[Run]:
    """The runs the options of :func:`runs_parser` pick (raises :class:`ComparisonError`)."""
    systems = None
    if args.systems:
        # The names are read from the files first: default names hold commas ("n=8,16").
        names = system_names(args.results)
        systems = [name for text in args.systems for name in split_names(text, names)]
    return load_runs(args.results, systems=systems, protocol=args.protocol)
