"""Time the evaluation layer: gold ranks, Borda fusion and the statistics.

Writes ``benchmarks/results/evaluation.json`` and prints the figures::

    python benchmarks/evaluation.py [--repeats 3] [--large-rows 25000]

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

import argparse
import platform
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from scipy.stats import rankdata

from kcca_desc.scores import average_ranks
from kcca_desc.evaluate.ranks import gold_ranks
from kcca_desc.evaluate.statistics import mcnemar_test, metric_cis, paired_randomization_test
from kcca_desc.methods.fusion import borda_fuse

from _results import median_time, results_path, write_results

RESULTS = results_path("evaluation")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large-rows", type=int, default=25_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    figures: dict[str, object] = {}

    rows, cols = args.large_rows, 5_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.f32"
        mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
        for start in range(0, rows, 1000):
            mm[start:start + 1000] = rng.random((min(1000, rows - start), cols), dtype=np.float32)
        mm.flush()
        del mm
        scores = np.load(path, mmap_mode="r")
        gold_rows = [np.array([q % cols]) for q in range(rows)]
        # Column q's gold rows are those whose gold column is q (every 5,000th row).
        gold_cols = [np.arange(q, rows, cols) if q < rows else np.array([q % rows]) for q in range(cols)]
        key = f"gold_ranks_memmap_{rows}x{cols}"
        figures[f"{key}_rows_s"] = median_time(lambda: gold_ranks(scores, gold_rows), args.repeats)
        figures[f"{key}_rows_peak_temporaries_MB"] = peak_temporaries_mb(lambda: gold_ranks(scores, gold_rows))
        figures[f"{key}_columns_s"] = median_time(lambda: gold_ranks(scores.T, gold_cols), args.repeats)
        figures[f"{key}_columns_peak_temporaries_MB"] = peak_temporaries_mb(lambda: gold_ranks(scores.T, gold_cols))
        figures[f"{key}_file_MB"] = rows * cols * 4 / 2**20
        for suffix in ("rows", "columns"):
            print(f"gold_ranks {rows}x{cols} memmap ({suffix}): {figures[f'{key}_{suffix}_s']:.2f} s, "
                  f"peak temporaries {figures[f'{key}_{suffix}_peak_temporaries_MB']:.0f} MB "
                  f"(matrix {figures[f'{key}_file_MB']:.0f} MB)")
        del scores

    karpathy = rng.random((1000, 5000))
    gold = np.arange(1000) * 5
    chunked = median_time(lambda: gold_ranks(karpathy, gold[:, None]), args.repeats)
    naive = median_time(lambda: argsort_ranks(karpathy, gold), args.repeats)
    assert np.array_equal(gold_ranks(karpathy, gold[:, None]), argsort_ranks(karpathy, gold))
    figures["gold_ranks_1000x5000_s"] = chunked
    figures["argsort_ranks_1000x5000_s"] = naive
    figures["argsort_over_gold_ranks_speedup"] = naive / chunked
    print(f"gold_ranks 1000x5000: {chunked * 1e3:.0f} ms; full argsort: {naive * 1e3:.0f} ms "
          f"({naive / chunked:.1f}x slower)")

    stack = rng.random((15, 1000, 1000))
    ours = median_time(lambda: average_ranks(stack, descending=True), args.repeats)
    scipy_s = median_time(lambda: rankdata(-stack, axis=-1), args.repeats)
    figures["average_ranks_15x1000x1000_s"] = ours
    figures["scipy_rankdata_15x1000x1000_s"] = scipy_s
    print(f"fractional ranks of 15 x 1000 x 1000: {ours:.2f} s; scipy rankdata {scipy_s:.2f} s "
          f"({scipy_s / ours:.1f}x slower)")

    for name, shape in (("hodosh", (1000, 1000)), ("karpathy", (1000, 5000))):
        models = [rng.random(shape) for _ in range(15)]
        for axis, task in ((1, "annotation"), (0, "search")):
            key = f"borda_15_models_{name}_{task}_s"
            figures[key] = median_time(lambda: borda_fuse(models, axis=axis), args.repeats)
            print(f"borda_fuse 15 models {name} {task} {shape}: {figures[key]:.2f} s")

    a, b = rng.random(1000) < 0.3, rng.random(1000) < 0.35
    figures["mcnemar_1000_s"] = median_time(lambda: mcnemar_test(a, b), args.repeats)
    ranks_a, ranks_b = rng.integers(1, 1000, 1000), rng.integers(1, 1000, 1000)
    for stat in ("mean", "median"):
        key = f"randomization_10000_perms_1000_queries_{stat}_s"
        figures[key] = median_time(lambda: paired_randomization_test(ranks_a, ranks_b, stat), args.repeats)
        print(f"paired randomisation test, 10,000 permutations, 1,000 queries, {stat}: {figures[key]:.2f} s")
    ranks = rng.integers(1, 1000, 5000)
    figures["metric_cis_2000_resamples_5000_queries_s"] = median_time(lambda: metric_cis(ranks), args.repeats)
    print(f"metric_cis, 2,000 resamples of 5,000 queries: {figures['metric_cis_2000_resamples_5000_queries_s']:.2f} s")

    figures["machine"] = {"python": platform.python_version(), "numpy": np.__version__,
                          "processor": platform.processor() or platform.machine()}
    write_results(RESULTS, figures)


if __name__ == "__main__":
    main()
