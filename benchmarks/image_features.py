"""Featurise all of Flickr8K: codebook fit, cold and cached extraction, per-type costs.

Writes ``benchmarks/results/image_features.json`` and prints its figures.

    .venv/bin/python benchmarks/image_features.py [--data-root DIR] [--n-jobs N]
    .venv/bin/python benchmarks/image_features.py --quick    # the synthetic data set, smoke test

Measured:

- codebook fit on the 6,000 training images (seeded 1,000-image subset);
- cold ``transform`` of all 8,091 images into colour/texture/SIFT pyramid
  histograms (into a fresh cache directory, removed at the end), and the cached
  re-run (a new featurizer: codebooks and histograms both read from the cache);
- per-feature-type cost per image, single-threaded, on a sample of images;
- an image-only sanity figure: how often a dev image's nearest training image
  under level-0 histogram intersection (averaged over the three feature types,
  plain NumPy) shares a content word of its captions, against a random
  training image.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Sequence
from unittest import mock

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from threadpoolctl import threadpool_limits

from kcca_desc.cli.options import non_negative_int, positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             write_results)
from kcca_desc.data.images import ImageSource
from kcca_desc.image.features import ImageFeaturizer
from kcca_desc.kernels.image.codebook import nearest_centres
from kcca_desc.kernels.image.histograms import pyramid_histograms

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "flickr8k"


def per_type_costs(featurizer: ImageFeaturizer, images: ImageSource, n_sample: int, seed: int) -> dict:
    """Mean milliseconds per image of decoding and of each type's extract / assign+pyramid, one thread."""
    chosen = np.random.default_rng(seed).choice(len(images), n_sample, replace=False)
    totals = {"decode": 0.0}
    with threadpool_limits(limits=1, user_api="blas"):
        for index in chosen:
            start = time.perf_counter()
            image = images.load(int(index))
            totals["decode"] += time.perf_counter() - start
            for name, codebook in featurizer.codebooks_.items():
                start = time.perf_counter()
                positions, descriptors = featurizer._extract(image, name)
                middle = time.perf_counter()
                pyramid_histograms(nearest_centres(descriptors, codebook.cluster_centers_), positions,
                                   image.shape[:2], codebook.n_words, levels=featurizer.levels)
                end = time.perf_counter()
                totals[f"{name}_extract"] = totals.get(f"{name}_extract", 0.0) + middle - start
                totals[f"{name}_assign_pyramid"] = totals.get(f"{name}_assign_pyramid", 0.0) + end - middle
    return {k: round(v / n_sample * 1e3, 2) for k, v in totals.items()}


def content_words(captions) -> set[str]:
    words = set()
    for caption in captions:
        words.update(w for w in re.findall(r"[a-z]+", caption.lower()) if w not in ENGLISH_STOP_WORDS)
    return words


def level0_intersection(queries: np.ndarray, candidates: np.ndarray, block: int = 8) -> np.ndarray:
    """sum_v min(q_v, c_v) for every pair, in blocks of queries (plain NumPy)."""
    out = np.empty((len(queries), len(candidates)), np.float32)
    for start in range(0, len(queries), block):
        q = queries[start:start + block]
        out[start:start + len(q)] = np.minimum(q[:, None, :], candidates[None]).sum(axis=-1)
    return out


def neighbour_sanity(dataset, histograms: dict, seed: int) -> dict:
    train, dev = dataset.splits["train"], dataset.splits["dev"]
    similarity = sum(level0_intersection(h[dev, 0], h[train, 0]) for h in histograms.values()) / len(histograms)
    nearest = train[np.argmax(similarity, axis=1)]
    random = np.random.default_rng(seed).choice(train, len(dev))
    words = {i: content_words(dataset.captions[i]) for i in np.concatenate([train, dev])}

    def rates(neighbours):
        shared = [len(words[d] & words[n]) for d, n in zip(dev, neighbours)]
        jaccard = [len(words[d] & words[n]) / len(words[d] | words[n]) for d, n in zip(dev, neighbours)]
        return {"share_a_content_word_pct": round(100 * float(np.mean(np.array(shared) > 0)), 1),
                "mean_shared_content_words": round(float(np.mean(shared)), 3),
                "mean_jaccard": round(float(np.mean(jaccard)), 4)}

    return {"nearest_training_image": rates(nearest), "random_training_image": rates(random),
            "n_dev": int(len(dev)), "n_train": int(len(train)),
            "content_words": "lower-cased [a-z]+ tokens of all 5 captions minus sklearn's English stop words"}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K", DEFAULT_ROOT))
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--cost-sample", type=positive_int, help="images timed per feature type (default 100; quick 5)")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    add_output_arguments(parser, "the synthetic data set, 5 images for the per-type costs")
    args = fill_defaults(parser.parse_args(argv), {"full": {"cost_sample": 100}, "quick": {"cost_sample": 5}})

    dataset = flickr8k_or_quick(args.data_root, args.quick)
    # A fresh cache, so that the first pass is a cold one.
    with tempfile.TemporaryDirectory(prefix="kcca_desc_bench_image_features_") as cold_cache, \
            mock.patch.dict(os.environ, {"KCCA_DESC_CACHE": cold_cache}):
        record = measure(dataset, args)
    write_results(output_path(args, __file__), record)
    return record


def measure(dataset, args) -> dict:
    """The figures of the module docstring on ``dataset``."""
    images, train = dataset.images, dataset.images.subset(dataset.splits["train"])
    load_before = os.getloadavg()
    record = {"machine": {**machine_info(), "load_average_1_5_15_before": [round(v, 2) for v in load_before]},
              "dataset": dataset.name, "n_images": len(images), "n_train": len(train)}

    featurizer = ImageFeaturizer(n_jobs=args.n_jobs, random_state=args.seed)
    record["params"] = {k: v for k, v in featurizer.get_params().items() if k not in ("progress", "cache")}

    start = time.perf_counter()
    featurizer.fit(train)
    record["codebook_fit_s"] = round(time.perf_counter() - start, 1)
    print(f"codebook fit (features of {featurizer.n_fit_images} training images + k-means): "
          f"{record['codebook_fit_s']} s", flush=True)

    start = time.perf_counter()
    histograms = featurizer.transform(images)
    record["transform_all_cold_s"] = round(time.perf_counter() - start, 1)
    record["total_cold_s"] = round(record["codebook_fit_s"] + record["transform_all_cold_s"], 1)
    print(f"transform {len(images)} images (cold): {record['transform_all_cold_s']} s "
          f"({1e3 * record['transform_all_cold_s'] / len(images):.1f} ms/image wall)", flush=True)

    start = time.perf_counter()
    cached = ImageFeaturizer(n_jobs=args.n_jobs, random_state=args.seed, progress=False).fit(train)
    again = cached.transform(images)
    record["rerun_cached_s"] = round(time.perf_counter() - start, 2)
    record["rerun_identical"] = all(np.array_equal(again[t], histograms[t]) for t in histograms)
    print(f"cached re-run (fit + transform all): {record['rerun_cached_s']} s, "
          f"identical: {record['rerun_identical']}", flush=True)
    del again

    record["per_image_ms_single_thread"] = per_type_costs(featurizer, images, args.cost_sample, args.seed)
    print("per image, one thread (ms):", record["per_image_ms_single_thread"], flush=True)

    record["sanity_level0_nearest_neighbour"] = neighbour_sanity(dataset, histograms, args.seed)
    print("dev -> nearest training image (level-0 intersection):", record["sanity_level0_nearest_neighbour"])
    record["machine"]["load_average_1_5_15_after"] = [round(v, 2) for v in os.getloadavg()]
    return record


if __name__ == "__main__":
    run_main(main)
