"""Benchmark: the nearest-neighbour baselines and random scores, on synthetic data and Flickr8K.

The nearest-neighbour baselines of Hodosh et al. (2013, Section 3.1) on the test split under
both protocols: NN5 idf F1 with the pyramid image kernel and with a global colour histogram
(the image kernel's effect), NN5 F1, and the variants of the paper's Appendix B with the BoW5
and Tri5 text kernels; beside seeded uniform random scores as a sanity check of the harness (on a
1,000-image pool, chance R@10 is 1% and the median rank about 500).

Writes ``benchmarks/results/nn_baseline.json`` (every result with its per-query ranks) and prints
the tables.

Usage::

    python benchmarks/nn_baseline.py --data-root ../shared/flickr8k
    python benchmarks/nn_baseline.py --no-flickr8k        # synthetic only
    python benchmarks/nn_baseline.py --quick              # 50 synthetic images, smoke test
"""

from __future__ import annotations

import os
import time

import numpy as np

from kcca_desc import NearestNeighbour, load_dataset
from kcca_desc.cli.options import non_negative_int, positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, machine_info, output_path, quick_dataset,
                             result_record, write_results)
from kcca_desc.data import PROTOCOLS
from kcca_desc.evaluate import evaluate_fitted, evaluate_scores, format_table, result_from_scores


#: (text similarity, image kernel) of each NN system.
SYSTEMS = (("idf_f1", "pyramid"), ("idf_f1", "colour_histo"), ("f1", "pyramid"), ("bow5", "pyramid"),
           ("tri5", "pyramid"))


def run(dataset, seed: int = 0) -> list:
    results = []
    train = dataset.subset("train")
    for text, image in SYSTEMS:
        start = time.perf_counter()
        nn = NearestNeighbour(text_similarity=text, image_kernel=image, image_kernel_params={"progress": False},
                              random_state=seed).fit(train)
        fit_s = time.perf_counter() - start
        for protocol in PROTOCOLS:
            results.append(evaluate_fitted(nn, dataset.view("test", protocol), timings={"fit": fit_s}))
    rng = np.random.default_rng(seed)
    for protocol in PROTOCOLS:
        view = dataset.view("test", protocol)
        random_scores = rng.random((view.n_images, view.n_captions))
        results.append(result_from_scores(random_scores, view, "random scores", params={"seed": seed}))
    return results


def random_over_seeds(dataset, n_seeds: int) -> dict:
    """Mean and spread of random-score metrics over seeds 0..n_seeds-1 (hodosh test view)."""
    view = dataset.view("test", "hodosh")
    rows = [evaluate_scores(np.random.default_rng(seed).random((view.n_images, view.n_captions)), view)
            for seed in range(n_seeds)]
    return {task: {key: {"mean": float(np.mean([r[task][key] for r in rows])),
                         "std": float(np.std([r[task][key] for r in rows]))}
                   for key in ("R@1", "R@5", "R@10", "median_rank")}
            for task in ("annotation", "search")} | {"n_seeds": n_seeds}


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--no-flickr8k", action="store_true")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--random-seeds", type=positive_int,
                   help="seeds averaged for the random-score sanity check (default 20; quick 2)")
    add_output_arguments(p, "the 50-image synthetic data set only, 2 random seeds")
    args = fill_defaults(p.parse_args(argv), {"full": {"random_seeds": 20}, "quick": {"random_seeds": 2}})
    out = {"machine": machine_info()}
    for name in ("synthetic",) + (() if args.no_flickr8k or args.quick else ("flickr8k",)):
        dataset = (quick_dataset() if args.quick else
                   load_dataset(name, root=args.data_root if name == "flickr8k" else None, seed=args.seed))
        start = time.perf_counter()
        results = run(dataset, args.seed)
        wall_s = time.perf_counter() - start
        out[name] = {"results": [result_record(r, dataset.view(r.split, r.protocol)) for r in results],
                     "wall_s": wall_s,
                     "random_over_seeds": random_over_seeds(dataset, n_seeds=args.random_seeds)}
        print(f"{name} ({out[name]['wall_s']:.0f} s)")
        print(format_table(results))
        chance = out[name]["random_over_seeds"]
        print(f"random scores over {args.random_seeds} seeds (hodosh): annotation R@10 "
              f"{chance['annotation']['R@10']['mean']:.2f} ± {chance['annotation']['R@10']['std']:.2f}, "
              f"median rank {chance['annotation']['median_rank']['mean']:.0f}; search R@10 "
              f"{chance['search']['R@10']['mean']:.2f} ± {chance['search']['R@10']['std']:.2f}")
    write_results(output_path(args, __file__), out, indent=1)
    return out


if __name__ == "__main__":
    run_main(main)
