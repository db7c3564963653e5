"""Command line: ``python -m kcca_desc.compare RESULTS.json [...]`` (see :mod:`kcca_desc.report.compare`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._core.progress import set_quiet
from ..evaluate.statistics import CONFIDENCE
from ..report.compare import compare_runs
from .errors import exits_cleanly
from .interrupts import run_results_command
from .options import output_path
from .outputs import keep_earlier_comparison, version_note, write_or_keep
from .preflight import check_settings, check_writable
from .runs import runs_parser, selected_runs

__all__ = ["build_parser", "main", "cli"]


def build_parser() -> argparse.ArgumentParser:
    p = runs_parser("python -m kcca_desc.compare",
                    "Compare retrieval runs on the same queries: every figure with its bootstrap interval and "
                    "paired tests against a reference (McNemar for R@K, Fisher's randomisation test for median "
                    "and mean rank).",
                    examples=["# NN against KCCA, every figure with its interval; tables for a paper beside t.json",
                              "python -m kcca_desc.compare nn.json kcca.json --reference nn.json --out t",
                              "# one protocol of runs made with --protocol both",
                              "python -m kcca_desc.compare nn.json kcca.json --protocol karpathy"])
    p.add_argument("--confidence", type=float, default=CONFIDENCE, help="confidence level of the intervals")
    p.add_argument("--out", type=output_path, default=None,
                   help="write the table to this path with suffixes .json, .md, .csv, .tex and print only what was "
                        "written (without it, the Markdown table is printed); an earlier comparison there of other "
                        "inputs (other runs, by their system, protocol, split, parameters and data fingerprint, "
                        "another reference or other statistics' settings) is kept as OUT.1.json (the next free "
                        "number, tables too), one of the same inputs is replaced; a line says which")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


@exits_cleanly
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a problem exits with the code :mod:`kcca_desc._core.errors` documents."""
    parser = build_parser()
    args = parser.parse_args(argv)
    set_quiet(args.quiet)
    # Every option, and where the table goes, before the files are read and the bootstrap runs.
    check_settings(None, args, parser)
    if args.out:
        check_writable(args.out)
    comparison = compare_runs(selected_runs(args), reference=args.reference, n_resamples=args.n_resamples,
                              n_permutations=args.n_permutations, confidence=args.confidence, seed=args.seed)
    if args.out:
        tables = (".md", ".csv", ".tex")

        def write(out: Path) -> tuple[list[Path], Path | None]:
            # An earlier comparison there of other runs or statistics is kept as OUT.<n>.json (+ tables).
            earlier = keep_earlier_comparison(out.with_suffix(".json"), comparison.inputs, siblings=tables)
            return comparison.write(out), earlier

        written, earlier = write_or_keep(args.out, write)
        # The table is in the files written; printed, it would bury the line that names them.
        print(*filter(None, [version_note(written[0], earlier, "comparison", "runs and statistics",
                                          "runs or statistics", tables=f" (+ {', '.join(tables)})"),
                             "wrote " + ", ".join(map(str, written))]), sep="\n")
    else:
        print(comparison.to_markdown())
    return 0


def cli(argv: Sequence[str] | None = None) -> int:
    """The command's entry point: :func:`main`, which Ctrl-C and SIGTERM stop at once (:mod:`.interrupts`)."""
    return run_results_command(main, argv)


if __name__ == "__main__":
    sys.exit(cli())
