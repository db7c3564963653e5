"""Shared code of the scripts in ``benchmarks/``: machine records, options and result files, timing,
synthetic inputs, and the word similarities of the neighbour comparisons.

The top layer of the toolkit, beside the command line (:mod:`kcca_desc.cli.fit`): it may use every
stage, and no stage imports it. Each benchmark script writes one JSON record
(:func:`write_results`) to ``benchmarks/results/<name>.json`` by default, or with ``--quick`` a
seconds-long run of the same code on tiny inputs (:func:`quick_dataset`,
:func:`synthetic_items`) to a scratch location (:func:`output_path`), so that a smoke test never
overwrites the committed figures. Every evaluated system goes into a record as
:func:`result_record`: its figures with the per-query ranks they come from, so that runs can be
compared query by query without re-running them.
"""

from kcca_bench.machine import BLAS_OVERRIDES, blas_libraries, machine_info
from kcca_bench.memory import PeakMemory, timed_with_memory, timed_with_peak_rss
from kcca_bench.neighbours import (FIGURE6_SOURCES, FIGURE6_WORDS, fit_word_similarities, frequent_words, neighbour_lists,
                         wordnet_unavailable)
from kcca_bench.output import (QUICK_DIR, add_output_arguments, benchmark_parser, fill_defaults, output_path, run_main,
                               write_results)
from kcca_bench.records import result_record
from kcca_bench.synthetic import (
    QUICK_N_IMAGES,
    QUICK_WORDS,
    flickr8k_or_quick,
    quick_dataset,
    synthetic_image_kernel,
    synthetic_items,
    synthetic_text_kernel,
)
from kcca_bench.timing import median_time, timed_with_peak_memory

__all__ = [
    "BLAS_OVERRIDES", "blas_libraries", "machine_info",
    "QUICK_DIR", "benchmark_parser", "run_main", "add_output_arguments", "fill_defaults", "output_path",
    "write_results", "result_record",
    "QUICK_N_IMAGES", "QUICK_WORDS", "quick_dataset", "flickr8k_or_quick",
    "synthetic_items", "synthetic_image_kernel", "synthetic_text_kernel",
    "median_time", "timed_with_peak_memory", "PeakMemory", "timed_with_memory", "timed_with_peak_rss",
    "FIGURE6_WORDS", "FIGURE6_SOURCES", "wordnet_unavailable", "fit_word_similarities", "frequent_words",
    "neighbour_lists",
]
