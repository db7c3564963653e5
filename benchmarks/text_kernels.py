"""Text-kernel timings on Flickr8K -> benchmarks/results/text_kernels.json.

``python benchmarks/text_kernels.py [--data-root DIR] [--sample-pairs 300]``

Measures: preprocessing of all captions; tri5 and tri_sem fit, 6,000 x 6,000 training Gram and
1,000 x 6,000 test Gram (hodosh protocol: caption #2 of each test image); caption pairs per
second of each kernel against the pure-Python subsequence-enumeration reference on the same
sample of caption pairs (values checked equal); peak resident memory; and the top-5 neighbours
of "rider" and "swim" under A, D_ic, D_ext and Lin. Timings are wall-clock on this machine with
its current load, so compare ratios taken in one run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import sys
import time
from collections import Counter

import numpy as np

from kcca_desc.data.flickr8k import load_flickr8k
from kcca_desc.text.named_kernels import make_text_kernel
from kcca_desc.text.preprocess import Preprocessor

from _results import results_path, write_results

RESULTS = results_path("text_kernels")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def timed_cpu(function, *args, **kwargs):
    """Value, wall seconds and CPU seconds of all threads (the CPU time does not grow with the
    machine's load, the wall time does)."""
    cpu = time.process_time()
    value, seconds = timed(function, *args, **kwargs)
    return value, seconds, time.process_time() - cpu


def reference_sentence_kernel(s, t, lam, idf, sigma, unknown_idf) -> float:
    """Pure-Python k(s, t): enumerate every pair of equal-length subsequences (SPEC §4)."""
    def idf_weight(w):
        return math.prod(idf.get(x, unknown_idf) for x in w) ** (1 / len(w)) if idf else 1.0

    total = 0.0
    for n in (1, 2, 3):
        subsequences_t = Counter(tuple(t[i] for i in c) for c in itertools.combinations(range(len(t)), n))
        for c in itertools.combinations(range(len(s)), n):
            w = tuple(s[i] for i in c)
            for v, count in subsequences_t.items():
                match = math.prod(sigma(x, y) for x, y in zip(w, v))
                if match:
                    total += count * lam**n * match * math.sqrt(idf_weight(w) * idf_weight(v))
    return total


def pair_throughput(kernel, queries, train_sentences, n_pairs, seed=0) -> dict:
    """Caption pairs/s of the kernel and of the pure-Python reference on the same pairs."""
    rng = np.random.default_rng(seed)
    side = int(math.ceil(math.sqrt(n_pairs)))
    a = [queries[i] for i in rng.choice(len(queries), side, replace=False)]
    b = [train_sentences[i] for i in rng.choice(len(train_sentences), side, replace=False)]
    items_a, items_b = [[s] for s in a], [[s] for s in b]
    fast, fast_seconds = timed(kernel.gram, items_a, items_b)
    similarity = kernel.similarity_
    if similarity is None:
        def sigma(x, y):
            return float(x == y)
    else:
        vocabulary = sorted({w for s in a + b for w in s})
        index = {w: i for i, w in enumerate(vocabulary)}
        matrix = similarity.pairwise(vocabulary).astype(np.float64)

        def sigma(x, y):
            return matrix[index[x], index[y]]
    idf = kernel.idf_
    unknown = max(idf.values()) if idf else 1.0
    start = time.perf_counter()
    raw = np.array([[reference_sentence_kernel(s, t, kernel.lam, idf, sigma, unknown) for t in b] for s in a])
    self_a = np.array([reference_sentence_kernel(s, s, kernel.lam, idf, sigma, unknown) for s in a])
    self_b = np.array([reference_sentence_kernel(t, t, kernel.lam, idf, sigma, unknown) for t in b])
    reference_seconds = time.perf_counter() - start
    norm = np.sqrt(np.outer(self_a, self_b))
    reference = np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)
    pairs = side * side + 2 * side  # the reference also computes the self-kernels
    return {
        "caption_pairs": side * side,
        "kernel_pairs_per_s": side * side / fast_seconds,
        "reference_pairs_per_s": pairs / reference_seconds,
        "speedup": (side * side / fast_seconds) / (pairs / reference_seconds),
        "max_abs_difference": float(np.abs(fast - reference).max()),
    }


def neighbours(items, tags, sentences, words=("rider", "swim"), k=5) -> dict:
    try:
        from kcca_desc.kernels.text.similarity import top_neighbours
        from kcca_desc.kernels.text.similarity import (AlignmentSimilarity, DistributionalSimilarity, LinSimilarity,
                                             default_external_corpus)
    except ImportError as error:
        return {"skipped": str(error)}
    external, _ = Preprocessor().process(default_external_corpus())
    sources = {
        "A": AlignmentSimilarity().fit(items, tags),
        "D_ic": DistributionalSimilarity().fit(sentences),
        "D_ext": DistributionalSimilarity().fit([s for s in external if s]),
        "Lin": LinSimilarity().fit(sentences),
    }
    counts = Counter(w for s in sentences for w in s)
    vocabulary = sorted(w for w, c in counts.items() if c >= 5)
    return {word: {name: [[w, round(float(v), 4)] for w, v in top_neighbours(sim, word, vocabulary, k)]
                   for name, sim in sources.items()} for word in words}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--sample-pairs", type=int, default=300)
    parser.add_argument("--kernels", nargs="+", default=["tri5", "tri_sem"])
    args = parser.parse_args(argv)

    dataset = load_flickr8k(args.data_root)
    train, test = dataset.splits["train"], dataset.splits["test"]
    all_captions = [c for caps in dataset.captions for c in caps]
    (_, _), preprocess_seconds = timed(Preprocessor(cache=False).process, all_captions)
    preprocessor = Preprocessor()
    flat, flat_tags = preprocessor.process([c for i in train for c in dataset.captions[i]])
    bounds = np.cumsum([0] + [len(dataset.captions[i]) for i in train])
    items = [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    tags = [flat_tags[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    queries, _ = preprocessor.process([dataset.captions[i][dataset.hodosh_caption] for i in test])
    query_items = [[q] for q in queries]
    results = {
        "machine": {"cpu_count": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)), "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", 0))
                    or os.cpu_count(), "load_average_at_start": os.getloadavg()},
        "preprocess": {"captions": len(all_captions), "seconds": preprocess_seconds},
        "train_items": len(items), "train_captions": len(flat), "test_queries": len(query_items),
        "kernels": {},
    }
    print(f"preprocess {len(all_captions)} captions: {preprocess_seconds:.1f} s", flush=True)
    for name in args.kernels:
        kernel = make_text_kernel(name)
        _, fit_seconds = timed(kernel.fit, items, tags)
        # The first call compiles the Numba kernels (cached on disk afterwards): warm up on a few items.
        kernel.gram(items[:3], items[:2])
        train_gram, train_seconds, train_cpu = timed_cpu(kernel.train_gram)
        test_gram, test_seconds, test_cpu = timed_cpu(kernel.cross_gram, query_items)
        throughput = pair_throughput(kernel, queries, flat, args.sample_pairs)
        entry = {
            "fit_seconds": fit_seconds,
            "train_gram_seconds": train_seconds, "train_gram_cpu_seconds": train_cpu,
            "train_gram_shape": list(train_gram.shape),
            "test_gram_seconds": test_seconds, "test_gram_cpu_seconds": test_cpu,
            "test_gram_shape": list(test_gram.shape),
            "train_caption_pairs_per_s": (len(flat) ** 2 / 2) / train_seconds,
            "finite": bool(np.isfinite(train_gram).all() and np.isfinite(test_gram).all()),
            "vs_python_reference": throughput,
            "peak_rss_mib_so_far": peak_rss_mib(),
        }
        results["kernels"][name] = entry
        print(f"{name}: fit {fit_seconds:.1f} s, train Gram {train_gram.shape} {train_seconds:.1f} s "
              f"(CPU {train_cpu:.1f} s), test Gram {test_gram.shape} {test_seconds:.1f} s (CPU {test_cpu:.1f} s), "
              f"{throughput['kernel_pairs_per_s']:.3g} vs {throughput['reference_pairs_per_s']:.3g} pairs/s "
              f"(x{throughput['speedup']:.0f}, max diff {throughput['max_abs_difference']:.2g}), "
              f"peak RSS {entry['peak_rss_mib_so_far']:.0f} MiB", flush=True)
        del train_gram, test_gram
    sentences = [s for item in items for s in item]
    results["neighbours"], seconds = timed(neighbours, items, tags, sentences)
    results["neighbours_seconds"] = seconds
    print(json.dumps(results["neighbours"], indent=1))
    results["peak_rss_mib"] = peak_rss_mib()
    write_results(RESULTS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
