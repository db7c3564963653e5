"""Text-kernel timings on Flickr8K -> benchmarks/results/text_kernels.json.

``python benchmarks/text_kernels.py [--data-root DIR] [--sample-pairs 300]``
``python benchmarks/text_kernels.py --quick`` (the synthetic data set, 16 sampled pairs: a smoke test)

Measures: preprocessing of all captions; tri5 and tri_sem fit, 6,000 x 6,000 training Gram and
1,000 x 6,000 test Gram (hodosh protocol: caption #2 of each test image); caption pairs per
second of each kernel against the pure-Python subsequence-enumeration reference on the same
sample of caption pairs (values checked equal); peak resident memory; and the top-5 neighbours
of "rider" and "swim" under A, D_ic, D_ext and Lin (:mod:`kcca_bench.neighbours`). Timings are
wall-clock on this machine with its current load, so compare ratios taken in one run.

WordNet (for Lin) is checked first: without it, the kernels that need it and the Lin neighbours are
recorded under ``unavailable`` with the reason, and everything else still runs.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import resource
import time
from collections import Counter

import numpy as np

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (FIGURE6_WORDS, QUICK_WORDS, add_output_arguments, fill_defaults,
                             fit_word_similarities, flickr8k_or_quick, frequent_words, machine_info, neighbour_lists,
                             output_path, wordnet_unavailable, write_results)
from kcca_desc.kernels.text.similarity import WordNetUnavailableError
from kcca_desc.text.named_kernels import make_text_kernel
from kcca_desc.text.preprocess import Preprocessor


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
    """Pure-Python k(s, t): enumerate every pair of equal-length subsequences.

    The soft trigram kernel of Hodosh et al. (2013), Sections 3.4.3 and 3.5.1, with idf weights.
    """
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


def main(argv=None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--sample-pairs", type=positive_int,
                        help="caption pairs compared with the reference (default 300; quick 16)")
    parser.add_argument("--kernels", nargs="+", default=["tri5", "tri_sem"])
    add_output_arguments(parser, "the synthetic data set, 16 sampled caption pairs")
    args = fill_defaults(parser.parse_args(argv), {"full": {"sample_pairs": 300}, "quick": {"sample_pairs": 16}})

    results = {"machine": {**machine_info(), "cpus_usable": len(os.sched_getaffinity(0)),
                           "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", 0)) or os.cpu_count()},
               "kernels": {}, "unavailable": {}}
    # Checked before any expensive work: a missing WordNet used to end the run after the Grams.
    wordnet_missing = wordnet_unavailable()
    if wordnet_missing:
        print(f"WordNet unavailable (Lin and the kernels using it are skipped): {wordnet_missing}", flush=True)

    dataset = flickr8k_or_quick(args.data_root, args.quick)
    test = dataset.subset("test")
    all_captions = [c for caps in dataset.captions for c in caps]
    (_, _), preprocess_seconds = timed(Preprocessor(cache=False).process, all_captions)
    preprocessor = Preprocessor()
    items, tags = preprocessor.process_items(dataset.subset("train").captions)
    flat = [caption for item in items for caption in item]
    queries, _ = preprocessor.process([captions[dataset.hodosh_caption] for captions in test.captions])
    query_items = [[q] for q in queries]
    results.update({"dataset": dataset.name,
                    "preprocess": {"captions": len(all_captions), "seconds": preprocess_seconds},
                    "train_items": len(items), "train_captions": len(flat), "test_queries": len(query_items)})
    print(f"preprocess {len(all_captions)} captions: {preprocess_seconds:.1f} s", flush=True)
    for name in args.kernels:
        kernel = make_text_kernel(name)
        try:
            _, fit_seconds = timed(kernel.fit, items, tags)
        except (ImportError, LookupError, OSError, WordNetUnavailableError) as error:
            # e.g. tri5_lin without the WordNet data: recorded, the other kernels still run.
            results["unavailable"][name] = f"{type(error).__name__}: {error}"
            print(f"{name}: not run: {error}", flush=True)
            continue
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
    start = time.perf_counter()
    similarities, _, unavailable = fit_word_similarities(items, tags)
    results["unavailable"].update({f"{source} neighbours": reason for source, reason in unavailable.items()})
    words = QUICK_WORDS if args.quick else FIGURE6_WORDS
    results["neighbours"] = neighbour_lists(similarities, words, frequent_words(items, 5))
    results["neighbours_seconds"] = time.perf_counter() - start
    print(json.dumps(results["neighbours"], indent=1))
    results["peak_rss_mib"] = peak_rss_mib()
    write_results(output_path(args, __file__), results)
    return results


if __name__ == "__main__":
    run_main(main)
