"""Command line: ``python -m kcca_desc.compare RESULTS.json [...]`` (see :mod:`kcca_desc.report.compare`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..report.compare import Run, compare_runs, load_runs
from .errors import exits_cleanly

__all__ = ["add_run_arguments", "selected_runs", "build_parser", "main"]


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options that pick runs and set the statistics, shared by ``compare`` and ``report``."""
    parser.add_argument("results", nargs="+", help="results files (python -m kcca_desc.fit --out) or benchmark tables")
    parser.add_argument("--reference", default=None, help="the reference run: a file, a system name or a label "
                                                          "(none: the first run)")
    parser.add_argument("--systems", default=None, help="comma-separated system names to keep (none: all)")
    parser.add_argument("--protocol", default=None, choices=("hodosh", "karpathy"), help="keep only this protocol")
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--n-permutations", type=int, default=10_000,
                        help="random assignments of the randomisation tests")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the randomisation tests")
    return parser


def selected_runs(args: argparse.Namespace) -> list[Run]:
    """The runs the options of :func:`add_run_arguments` pick (raises :class:`ComparisonError`)."""
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else None
    return load_runs(args.results, systems, args.protocol)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kcca_desc.compare",
        description="Compare retrieval runs on the same queries: every figure with its bootstrap interval and "
                    "paired tests against a reference (McNemar for R@K, Fisher's randomisation test for median "
                    "and mean rank).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_run_arguments(p)
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals")
    p.add_argument("--out", default=None, help="write the table to this path with suffixes .json, .md, .csv, .tex")
    return p


@exits_cleanly
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    comparison = compare_runs(selected_runs(args), args.reference, args.n_resamples, args.n_permutations,
                              args.confidence, args.seed)
    print(comparison.to_markdown())
    if args.out:
        written = comparison.write(args.out)
        print("wrote " + ", ".join(map(str, written)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
