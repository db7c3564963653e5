"""Command line: ``python -m kcca_desc.report RESULTS.json [...] --out report/``.

The report needs the data set of the runs only for its retrieval gallery.  A data set named on
the command line (``--data``, ``--data-root``, ``--image-root``) is loaded before any work, and
one that cannot be (a missing file or image, an option it does not take) is an error, as in
``fit``; one recorded in the results file that cannot be loaded any more (moved, on another
machine) leaves a report without its gallery and a warning on standard error that says why.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._core.errors import MissingDataFileError
from .._core.progress import set_quiet
from ..data.dataset import Dataset
from ..data.registry import DATASETS, load_dataset
from ..report import build_report
from ..report.compare import Run, comparison_inputs
from ..report.gallery import dataset_source, gallery_run
from .errors import exits_cleanly
from .interrupts import run_results_command
from .options import output_path
from .outputs import keep_earlier_report, version_note, write_or_keep
from .preflight import check_data_options, check_settings, check_writable
from .runs import runs_parser, selected_runs

__all__ = ["build_parser", "main", "cli"]


def build_parser() -> argparse.ArgumentParser:
    p = runs_parser("python -m kcca_desc.report",
                    "Write a self-contained HTML report of retrieval results: tables with bootstrap intervals, "
                    "paired tests against a reference, recall and rank plots (PNG and PDF too), a retrieval "
                    "gallery and error analysis.",
                    examples=["# NN as the reference, the gallery of the KCCA run",
                              "python -m kcca_desc.report nn.json kcca.json --reference nn.json --gallery kcca.json --out report",
                              "# a Flickr8K run whose images live elsewhere than the results file says",
                              "python -m kcca_desc.report run.json --data flickr8k --data-root /data/flickr8k"])
    p.add_argument("--out", type=output_path, default="report",
                   help="output directory; an earlier report there of other runs, reference or statistics' "
                        "settings is kept as OUT.1 (the next free number), one of the same is replaced (the "
                        "gallery and title are not inputs); a line says which. A directory without a report "
                        "is written into")
    p.add_argument("--data", default=None, choices=list(DATASETS),
                   help="data set of the runs, for the gallery (none: the one the results file records)")
    p.add_argument("--data-root", default=None, help="its directory or file (none: as recorded)")
    p.add_argument("--image-root", default=None,
                   help="image directory for --data json, flickr30k and coco (required) or tsv (optional)")
    p.add_argument("--gallery", default=None, metavar="RUN",
                   help="the run whose retrievals the gallery shows: a label, system or file (default: the first run)")
    p.add_argument("--n-gallery", type=int, default=6, help="sampled queries per gallery")
    p.add_argument("--n-worst", type=int, default=5, help="queries per list of worst and most disputed queries")
    p.add_argument("--title", default=None, help="heading of the page")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


def _check_paths(args: argparse.Namespace) -> None:
    """The data paths named on the command line exist (raises :class:`MissingDataFileError`)."""
    for option in ("data_root", "image_root"):
        path = getattr(args, option)
        if path is not None and not Path(path).exists():
            raise MissingDataFileError(f"--{option.replace('_', '-')} {path}: no such file or directory")


def _named_dataset(args: argparse.Namespace, parser: argparse.ArgumentParser, runs: Sequence[Run]) -> Dataset | None:
    """The gallery's data set when the command line names it, loaded before any work; else None.

    Its problems are errors here, as in ``fit``: the user named it (a data set only recorded in
    the results file is loaded later, and a problem of it is a warning).
    """
    if args.data is None and args.data_root is None and args.image_root is None:
        return None
    source = dataset_source(gallery_run(runs, args.gallery).result, data=args.data, data_root=args.data_root,
                            image_root=args.image_root)
    check_data_options(args, parser, data=source["name"])
    return load_dataset(**source)


@exits_cleanly
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a problem exits with the code :mod:`kcca_desc._core.errors` documents."""
    parser = build_parser()
    args = parser.parse_args(argv)
    set_quiet(args.quiet)
    # Every option, the data named and where the report goes, before the files are read.
    check_settings(None, args, parser)
    _check_paths(args)
    check_writable(args.out, directory=True)
    runs = selected_runs(args)
    dataset = _named_dataset(args, parser, runs)
    statistics = {"reference": args.reference, "seed": args.seed, "n_resamples": args.n_resamples,
                  "n_permutations": args.n_permutations}

    def write(out: Path) -> tuple[Path, Path | None]:
        # An earlier report there of other runs or statistics is kept as OUT.<n>; one of the same replaced.
        earlier = keep_earlier_report(out, comparison_inputs(runs, **statistics))
        return build_report(runs, out, dataset=dataset, data=args.data, data_root=args.data_root,
                            image_root=args.image_root, n_gallery=args.n_gallery, n_worst=args.n_worst,
                            title=args.title, gallery=args.gallery, **statistics), earlier

    page, earlier = write_or_keep(args.out, write)
    note = version_note(Path(args.out), earlier, "report", "runs and statistics", "runs or statistics")
    print(*filter(None, [note, f"report: {page}"]), sep="\n")
    return 0


def cli(argv: Sequence[str] | None = None) -> int:
    """The command's entry point: :func:`main`, which Ctrl-C and SIGTERM stop at once (:mod:`.interrupts`)."""
    return run_results_command(main, argv)


if __name__ == "__main__":
    sys.exit(cli())
