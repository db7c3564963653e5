"""Benchmark: nearest neighbours of words under each word similarity (Hodosh et al. 2013, Figure 6).

The four sources of word similarity of the soft trigram kernels (:mod:`kcca_bench.neighbours`:
alignment A, distributional D_ic on the training captions and D_ext on the external corpus, and
WordNet/Lin) are fitted on the Flickr8K training captions, preprocessed by
:class:`kcca_desc.text.Preprocessor` as every kernel's are, and the top-k neighbours of each
query word among the training words seen at least ``--min-count`` times are listed per source,
as in the paper's "rider" / "swim" comparison. Without WordNet, Lin is recorded as unavailable
and the other sources still run.

Writes ``benchmarks/results/word_neighbours.json`` and prints the table.

Usage::

    python benchmarks/word_neighbours.py --data-root ../shared/flickr8k [--words rider swim] [--k 5]
    python benchmarks/word_neighbours.py --quick       # the synthetic data set, "square" and "circle"
"""

from __future__ import annotations

import os
import time
from typing import Sequence

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (FIGURE6_WORDS, QUICK_WORDS, add_output_arguments, fit_word_similarities,
                             flickr8k_or_quick, frequent_words, machine_info, neighbour_lists, output_path,
                             write_results)
from kcca_desc.kernels.text.similarity import neighbour_table
from kcca_desc.text import Preprocessor


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("--words", nargs="+", default=None,
                        help=f"query words (lemmas); default {' '.join(FIGURE6_WORDS)} "
                             f"(quick: {' '.join(QUICK_WORDS)})")
    parser.add_argument("--k", type=positive_int, default=5, help="neighbours per word (default 5)")
    parser.add_argument("--min-count", type=positive_int, default=5,
                        help="a candidate neighbour occurs at least this often in the training captions")
    parser.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"),
                        help="Flickr8K directory (default $KCCA_DESC_FLICKR8K)")
    add_output_arguments(parser, f"the synthetic data set, words {' '.join(QUICK_WORDS)}")
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error(f"--k must be >= 1, got {args.k}")
    if args.min_count < 1:
        parser.error(f"--min-count must be >= 1, got {args.min_count}")
    words = list(args.words or (QUICK_WORDS if args.quick else FIGURE6_WORDS))
    record = {"machine": machine_info(), "words": words, "k": args.k, "min_count": args.min_count}

    dataset = flickr8k_or_quick(args.data_root, args.quick)
    start = time.perf_counter()
    items, tags = Preprocessor().process_items(dataset.subset("train").captions)
    prepare_s = time.perf_counter() - start
    similarities, seconds, unavailable = fit_word_similarities(items, tags)
    vocabulary = frequent_words(items, args.min_count)
    record.update({"dataset": dataset.name, "train_images": len(items), "vocabulary": len(vocabulary),
                   "neighbours": neighbour_lists(similarities, words, vocabulary, args.k),
                   "fit_seconds": {"preprocess captions": prepare_s, **seconds}, "unavailable": unavailable})

    print(neighbour_table(similarities, words, vocabulary, k=args.k))
    for name, reason in unavailable.items():
        print(f"{name}: not run: {reason}")
    print("fit seconds: " + ", ".join(f"{name} {s:.1f}" for name, s in record["fit_seconds"].items()))
    write_results(output_path(args, __file__), record)
    return record


if __name__ == "__main__":
    run_main(main)
