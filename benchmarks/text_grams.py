"""Text-Gram time of every text kernel of Hodosh's table -> benchmarks/results/text_grams.json.

``python benchmarks/text_grams.py [--data-root DIR] [--train-items N] [--kernels K ...]``
``python benchmarks/text_grams.py --quick`` (the synthetic data set, five kernels: a smoke test)

For each distinct named text kernel (aliases such as ``tri_sem`` share their entry's Grams, as in
the table's cache), all in one process as in a table run: the fit, the training Gram (N x N,
hodosh protocol), and the cross Grams of the dev and test queries (caption #2 of each image)
against the training items, each with wall and CPU seconds (CPU of all threads: it does not grow
with the machine's load, the wall time does). Numba compilation is excluded (a warm-up call per
kernel first).

Side by side with other code: ``--save-grams DIR`` keeps every Gram; a later run with
``--compare-grams DIR --baseline RECORD`` (the same options, the other code importable as
``kcca_desc``, e.g. ``PYTHONPATH=<checkout>``) records the largest absolute difference of each
Gram and this run's time against the baseline record's, per kernel and in total. Run the two one
right after the other: timings on a shared machine compare within a pair of runs only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

import kcca_desc
from kcca_bench import add_output_arguments, benchmark_parser, fill_defaults, flickr8k_or_quick, machine_info
from kcca_bench import output_path, run_main, write_results
from kcca_desc.cli.options import positive_int
from kcca_desc.text.named_kernels import TEXT_KERNELS, make_text_kernel
from kcca_desc.text.preprocess import Preprocessor
from text_kernels import timed_cpu

QUICK_KERNELS = ["bow5", "tagrank", "tri5", "tri5_dic", "tri5_a_idf"]


def table_kernels() -> list[str]:
    """Every named text kernel once: the first name of each distinct entry (aliases dropped)."""
    names, seen = [], []
    for name in TEXT_KERNELS:
        spec = TEXT_KERNELS[name]
        if spec not in seen:
            seen.append(spec)
            names.append(name)
    return names


def time_kernel(name: str, items, tags, queries: dict) -> tuple[dict, dict]:
    """Fit ``name`` and time its training and query Grams: (timings, Grams by part)."""
    kernel = make_text_kernel(name)
    _, fit_s, fit_cpu = timed_cpu(kernel.fit, items, tags)
    kernel.gram(items[:3], items[:2])  # compiles the Numba kernels (cached on disk afterwards)
    kernel.gram(items[:3])
    grams, entry = {}, {"fit_s": fit_s, "fit_cpu_s": fit_cpu}
    grams["train"], entry["train_s"], entry["train_cpu_s"] = timed_cpu(kernel.train_gram)
    for split, query_items in queries.items():
        grams[split], entry[f"{split}_s"], entry[f"{split}_cpu_s"] = timed_cpu(kernel.cross_gram, query_items)
    entry["gram_s"] = sum(entry[f"{part}_s"] for part in grams)
    entry["gram_cpu_s"] = sum(entry[f"{part}_cpu_s"] for part in grams)
    entry["shapes"] = {part: list(gram.shape) for part, gram in grams.items()}
    return entry, grams


def compare(results: dict, baseline_path: str | None, grams_dir: str | None) -> dict:
    """This run against a baseline record (time ratios) and its saved Grams (largest differences)."""
    comparison = {}
    if grams_dir is not None:
        comparison["max_abs_difference"] = {}
        for name in results["kernels"]:
            saved = np.load(Path(grams_dir) / f"{name}.npz")
            current = np.load(Path(grams_dir) / f"{name}.current.npz")
            comparison["max_abs_difference"][name] = max(float(np.abs(saved[p] - current[p]).max(initial=0.0))
                                                         for p in saved.files)
            os.remove(Path(grams_dir) / f"{name}.current.npz")
    if baseline_path is not None:
        baseline = json.loads(Path(baseline_path).read_text())
        common = [n for n in results["kernels"] if n in baseline["kernels"]]
        comparison["baseline"] = {"record": str(baseline_path), "code": baseline.get("code")}
        for key in ("gram_s", "gram_cpu_s"):
            before = sum(baseline["kernels"][n][key] for n in common)
            after = sum(results["kernels"][n][key] for n in common)
            comparison[f"total_{key}_baseline"], comparison[f"total_{key}"] = before, after
            comparison[f"speedup_{key}"] = before / after if after > 0 else None
        comparison["speedup_gram_cpu_s_per_kernel"] = {
            n: baseline["kernels"][n]["gram_cpu_s"] / results["kernels"][n]["gram_cpu_s"] for n in common}
    return comparison


def main(argv=None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--train-items", type=positive_int, default=None,
                        help="the first N training images (default: all)")
    parser.add_argument("--kernels", nargs="+", help="default: every text kernel of the table (quick: five)")
    parser.add_argument("--save-grams", metavar="DIR", help="keep every Gram in DIR (one .npz per kernel)")
    parser.add_argument("--compare-grams", metavar="DIR", help="record the largest difference from the Grams in DIR")
    parser.add_argument("--baseline", metavar="RECORD", help="a record of this benchmark to compare the times with")
    add_output_arguments(parser, "the synthetic data set, five kernels")
    args = fill_defaults(parser.parse_args(argv), {"full": {"kernels": table_kernels()},
                                                   "quick": {"kernels": QUICK_KERNELS}})
    unknown = [name for name in args.kernels if name not in TEXT_KERNELS]
    if unknown:
        parser.error(f"unknown text kernels {unknown}; available: {', '.join(TEXT_KERNELS)}")
    start = time.perf_counter()
    dataset = flickr8k_or_quick(args.data_root, args.quick)
    preprocessor = Preprocessor()
    train_captions = dataset.subset("train").captions[:args.train_items]
    items, tags = preprocessor.process_items(train_captions)
    queries = {}
    for split in ("dev", "test"):
        tokens, _ = preprocessor.process([c[dataset.hodosh_caption] for c in dataset.subset(split).captions])
        queries[split] = [[t] for t in tokens]
    results = {"machine": {**machine_info(), "cpus_usable": len(os.sched_getaffinity(0))},
               "code": {"kcca_desc": str(Path(kcca_desc.__file__).parent)},
               "dataset": dataset.name, "train_items": len(items),
               "queries": {split: len(q) for split, q in queries.items()}, "kernels": {}}
    grams_dir = args.save_grams or args.compare_grams
    if grams_dir is not None:
        Path(grams_dir).mkdir(parents=True, exist_ok=True)
    for name in args.kernels:
        entry, grams = time_kernel(name, items, tags, queries)
        results["kernels"][name] = entry
        print(f"{name}: fit {entry['fit_s']:.1f} s; Grams {entry['gram_s']:.1f} s (CPU {entry['gram_cpu_s']:.1f} s): "
              + ", ".join(f"{p} {entry[f'{p}_s']:.1f} s" for p in grams), flush=True)
        if grams_dir is not None:
            suffix = ".current" if args.compare_grams else ""
            np.savez(Path(grams_dir) / f"{name}{suffix}.npz", **grams)
    results["total_gram_s"] = sum(e["gram_s"] for e in results["kernels"].values())
    results["total_gram_cpu_s"] = sum(e["gram_cpu_s"] for e in results["kernels"].values())
    results["comparison"] = compare(results, args.baseline, args.compare_grams)
    results["wall_s"] = time.perf_counter() - start
    print(json.dumps({k: v for k, v in results["comparison"].items() if "per_kernel" not in k}, indent=1))
    write_results(output_path(args, __file__), results)
    return results


if __name__ == "__main__":
    run_main(main)
