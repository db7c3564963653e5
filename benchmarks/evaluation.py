"""Time the evaluation layer: gold ranks, Borda fusion and the statistics.

Writes ``benchmarks/results/evaluation.json`` and prints the figures::

    python benchmarks/evaluation.py [--repeats 3] [--large-rows 25000]
    python benchmarks/evaluation.py --quick        # pools a tenth of the size, smoke test

- gold ranks of a ``--large-rows`` x 5,000 float32 score matrix held in a
  memmap, both directions, with the peak of NumPy temporaries (tracemalloc);
- the chunked ranks against a full argsort of every row (side by side, same
  run) on the Karpathy-sized 1,000 x 5,000 matrix;
- Borda fusion of 15 models on hodosh (1,000 x 1,000) and Karpathy pools,
  and its fractional ranking against :func:`scipy.stats.rankdata`;
- McNemar, the paired randomisation test and bootstrap intervals.

Each time is the median wall time of ``--repeats`` runs.
"""

from __future__ import annotations

import tempfile
import tracemalloc
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.stats import rankdata

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, median_time, output_path, write_results
from kcca_desc.evaluate.ranks import gold_ranks
from kcca_desc.evaluate.statistics import (N_PERMUTATIONS, N_RESAMPLES, mcnemar_test, metric_cis,
                                           paired_randomization_test)
from kcca_desc.methods.fusion import borda_fuse
from kcca_desc.evaluate.scores import average_ranks


def peak_temporaries_mb(function) -> float:
    tracemalloc.start()
    function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def argsort_ranks(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Ranks by sorting every row (one gold item per row, ties ignored): the naive way."""
    order = np.argsort(-scores, axis=1)
    return 1 + np.argmax(order == gold[:, None], axis=1)


#: Options of a full and of a quick run.
DEFAULTS = {"full": {"repeats": 3, "large_rows": 25_000}, "quick": {"repeats": 1, "large_rows": 2000}}

#: Problem sizes of a full and of a quick run.
SIZES = {
    "full": {"cols": 5_000, "pool": (1000, 5000), "stack": (15, 1000, 1000),
             "borda": {"hodosh": (1000, 1000), "karpathy": (1000, 5000)}, "queries": 1000, "ci_queries": 5000},
    "quick": {"cols": 500, "pool": (100, 500), "stack": (15, 100, 100),
              "borda": {"hodosh": (100, 100), "karpathy": (100, 500)}, "queries": 100, "ci_queries": 500},
}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, help="timed runs per figure (default 3; quick 1)")
    parser.add_argument("--large-rows", type=positive_int, help="rows of the memmapped score matrix (default 25000; quick 2000)")
    add_output_arguments(parser, "pools a tenth of the size (2,000 x 500 memmap), one repeat")
    args = fill_defaults(parser.parse_args(argv), DEFAULTS)
    size, repeats = SIZES["quick" if args.quick else "full"], args.repeats
    rng = np.random.default_rng(0)
    figures: dict[str, object] = {"machine": machine_info(), "repeats": repeats}

    rows, cols = args.large_rows, size["cols"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.f32"
        mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
        for start in range(0, rows, 1000):
            mm[start:start + 1000] = rng.random((min(1000, rows - start), cols), dtype=np.float32)
        mm.flush()
        del mm
        scores = np.load(path, mmap_mode="r")
        gold_rows = [np.array([q % cols]) for q in range(rows)]
        # Column q's gold rows are those whose gold column is q (every cols-th row).
        gold_cols = [np.arange(q, rows, cols) if q < rows else np.array([q % rows]) for q in range(cols)]
        key = f"gold_ranks_memmap_{rows}x{cols}"
        figures[f"{key}_rows_s"] = median_time(lambda: gold_ranks(scores, gold_rows), repeats)
        figures[f"{key}_rows_peak_temporaries_MB"] = peak_temporaries_mb(lambda: gold_ranks(scores, gold_rows))
        figures[f"{key}_columns_s"] = median_time(lambda: gold_ranks(scores.T, gold_cols), repeats)
        figures[f"{key}_columns_peak_temporaries_MB"] = peak_temporaries_mb(lambda: gold_ranks(scores.T, gold_cols))
        figures[f"{key}_file_MB"] = rows * cols * 4 / 2**20
        for suffix in ("rows", "columns"):
            print(f"gold_ranks {rows}x{cols} memmap ({suffix}): {figures[f'{key}_{suffix}_s']:.2f} s, "
                  f"peak temporaries {figures[f'{key}_{suffix}_peak_temporaries_MB']:.0f} MB "
                  f"(matrix {figures[f'{key}_file_MB']:.0f} MB)")
        del scores

    n_images, n_captions = size["pool"]
    karpathy = rng.random((n_images, n_captions))
    gold = np.arange(n_images) * (n_captions // n_images)
    chunked = median_time(lambda: gold_ranks(karpathy, gold[:, None]), repeats)
    naive = median_time(lambda: argsort_ranks(karpathy, gold), repeats)
    assert np.array_equal(gold_ranks(karpathy, gold[:, None]), argsort_ranks(karpathy, gold))
    figures[f"gold_ranks_{n_images}x{n_captions}_s"] = chunked
    figures[f"argsort_ranks_{n_images}x{n_captions}_s"] = naive
    figures["argsort_over_gold_ranks_speedup"] = naive / chunked
    print(f"gold_ranks {n_images}x{n_captions}: {chunked * 1e3:.0f} ms; full argsort: {naive * 1e3:.0f} ms "
          f"({naive / chunked:.1f}x slower)")

    stack = rng.random(size["stack"])
    shape = "x".join(map(str, stack.shape))
    ours = median_time(lambda: average_ranks(stack, descending=True), repeats)
    scipy_s = median_time(lambda: rankdata(-stack, axis=-1), repeats)
    figures[f"average_ranks_{shape}_s"] = ours
    figures[f"scipy_rankdata_{shape}_s"] = scipy_s
    print(f"fractional ranks of {' x '.join(map(str, stack.shape))}: {ours:.2f} s; scipy rankdata {scipy_s:.2f} s "
          f"({scipy_s / ours:.1f}x slower)")

    for name, pool in size["borda"].items():
        models = [rng.random(pool) for _ in range(15)]
        for axis, task in ((1, "annotation"), (0, "search")):
            key = f"borda_15_models_{name}_{task}_s"
            figures[key] = median_time(lambda: borda_fuse(models, axis=axis), repeats)
            print(f"borda_fuse 15 models {name} {task} {pool}: {figures[key]:.2f} s")

    n = size["queries"]
    a, b = rng.random(n) < 0.3, rng.random(n) < 0.35
    figures[f"mcnemar_{n}_s"] = median_time(lambda: mcnemar_test(a, b), repeats)
    ranks_a, ranks_b = rng.integers(1, 1000, n), rng.integers(1, 1000, n)
    for stat in ("mean", "median"):
        key = f"randomization_{N_PERMUTATIONS}_perms_{n}_queries_{stat}_s"
        figures[key] = median_time(lambda: paired_randomization_test(ranks_a, ranks_b, statistic=stat), repeats)
        print(f"paired randomisation test, {N_PERMUTATIONS:,} permutations, {n:,} queries, {stat}: "
              f"{figures[key]:.2f} s")
    n = size["ci_queries"]
    ranks = rng.integers(1, 1000, n)
    key = f"metric_cis_{N_RESAMPLES}_resamples_{n}_queries_s"
    figures[key] = median_time(lambda: metric_cis(ranks), repeats)
    print(f"metric_cis, {N_RESAMPLES:,} resamples of {n:,} queries: {figures[key]:.2f} s")

    write_results(output_path(args, __file__), figures)
    return figures


if __name__ == "__main__":
    run_main(main)
