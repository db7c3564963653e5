"""Time the image kernels: pyramid Gram and cross kernels over colour, texture and SIFT words.

Writes ``benchmarks/results/image_kernels.json`` and prints the figures::

    python benchmarks/image_kernels.py [--n 6000] [--n-cross 1000] [--n-numpy 200] [--seed 0]
                                       [--flickr8k DIR] [--density-images 60]
    python benchmarks/image_kernels.py --quick     # 100 images, 20 cross rows, smoke test
    python benchmarks/image_kernels.py --cupy --out gpu.json   # also the CuPy kernels, side by side

Inputs are synthetic spatial pyramids (L = 2, 21 cells; 128 colour, 256 texture and 256 SIFT
words, 13,440 dimensions) drawn to mimic the default ``ImageFeaturizer`` on 224 x 224 images:
12,544 colour and texture features (every 2nd pixel) and 784 SIFT descriptors (8-pixel grid) per
image. Each image draws a word mixture (Dirichlet alpha over the vocabulary) and each finest cell
its own mixture around it (Dirichlet with the given concentration); alpha and concentration per
type were chosen so that the fraction of non-zero bins per level matches the one measured on real
Flickr8K pyramids (first 60 images, default ``ImageFeaturizer``, codebooks fitted on them):
colour 0.61 / 0.41 / 0.23, texture 0.85 / 0.53 / 0.24, SIFT 0.75 / 0.37 / 0.13 at levels 0 / 1 / 2.
With ``--flickr8k`` (or ``$KCCA_DESC_FLICKR8K``) that measurement is redone and recorded.
Coarser cells are sums of finer ones and every level sums to 1.

The NumPy broadcasting reference is timed on ``--n-numpy`` rows against all ``--n`` columns and
scaled by the number of pairs (it has no symmetric shortcut, so a Gram costs it n^2 pairs).
A sparse variant (accumulating min(a, B[:, v]) only over the non-zero coordinates v of each row)
is timed on the level-2 columns, where sparsity is highest, against the dense kernel on the same
columns, to decide whether a sparse path would pay.

The machine may be shared: besides wall time, every figure records the process's CPU time, and
the load average is saved. CPU time divided by the Numba thread count estimates the wall time on
an otherwise idle machine with that many cores.
"""

from __future__ import annotations

import os
import resource
import time
import tracemalloc
from pathlib import Path
from typing import Sequence

import numba
import numpy as np
from numba import njit, prange

from kcca_desc.cli.options import non_negative_int, positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, output_path, write_results
from kcca_desc.kernels.image.intersection import histogram_intersection
from kcca_desc.kernels.image.pyramid import image_kernel, pyramid_cell_weights

#: Feature type -> (vocabulary size, features per 224 x 224 image, image alpha, cell concentration).
FEATURE_TYPES = {"colour": (128, 112 * 112, 0.3, 10.0), "texture": (256, 112 * 112, 1.0, 20.0),
                 "sift": (256, 28 * 28, 2.0, 50.0)}
LEVELS = 2

#: Sizes of a full and of a quick run; a quick run does not measure real Flickr8K pyramids.
DEFAULTS = {"full": {"n": 6000, "n_cross": 1000, "n_numpy": 200, "flickr8k": os.environ.get("KCCA_DESC_FLICKR8K")},
            "quick": {"n": 100, "n_cross": 20, "n_numpy": 10}}


def cupy_figures(features: dict, queries: dict, gram: np.ndarray, cross: np.ndarray,
                 gram_s: float, cross_s: float) -> dict:
    """The Gram and cross kernels through CuPy on the same inputs: seconds (best of three, the
    copies to and from the device included), speed-up over the Numba timings and agreement."""
    import cupy

    from kcca_desc.kernels import cupy_available

    if not cupy_available():
        raise SystemExit("--cupy: CuPy has no working CUDA device")
    small = {name: p[:8] for name, p in features.items()}
    image_kernel(small, backend="cupy")  # compile the CUDA kernels outside the timings
    out = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    for name, run, reference, numba_s in (
            ("gram_cupy", lambda: image_kernel(features, backend="cupy"), gram, gram_s),
            ("cross_cupy", lambda: image_kernel(queries, features, backend="cupy"), cross, cross_s)):
        seconds = []
        for _ in range(3):
            start = time.perf_counter()
            result = run()
            seconds.append(time.perf_counter() - start)
        out[name] = {"seconds": min(seconds), "all_seconds": seconds, "speedup_vs_numba": numba_s / min(seconds),
                     "max_abs_difference_to_numba": float(np.abs(result - reference).max())}
    return out


def synthetic_pyramids(rng: np.random.Generator, n: int, n_words: int, n_features: int,
                       alpha: float, concentration: float, levels: int = LEVELS) -> np.ndarray:
    """(n, 21, n_words) float32 pyramids of word counts / n_features (see the module docstring)."""
    side = 2 ** levels
    image_mix = rng.gamma(alpha, size=(n, 1, n_words)) + 1e-12
    image_mix /= image_mix.sum(axis=2, keepdims=True)
    cell_mix = rng.gamma(concentration * image_mix, size=(n, side * side, n_words)) + 1e-12
    cell_mix /= cell_mix.sum(axis=2, keepdims=True)
    counts = rng.multinomial(n_features // (side * side), cell_mix).reshape(n, side, side, n_words)
    finest = counts / counts.sum(axis=(1, 2, 3), keepdims=True)
    cells, grid = [], finest
    for _ in range(levels + 1):
        cells.insert(0, grid.reshape(n, -1, n_words))
        half = grid.shape[1] // 2
        if half:
            grid = grid.reshape(n, half, 2, half, 2, n_words).sum(axis=(2, 4))
    return np.concatenate(cells, axis=1).astype(np.float32)


@njit(parallel=True, fastmath=True)
def sparse_rows_intersection(A, BT, K, col_block, feature_block):  # pragma: no cover - compiled
    """K[i, j] += sum over non-zero A[i, v] of min(A[i, v], BT[v, j]), SIMD over j."""
    n, d = A.shape
    m = BT.shape[1]
    for jb in prange(-(-m // col_block)):
        j0 = jb * col_block
        j1 = min(m, j0 + col_block)
        for v0 in range(0, d, feature_block):
            for i in range(n):
                for v in range(v0, min(d, v0 + feature_block)):
                    a = A[i, v]
                    if a != 0:
                        for j in range(j0, j1):
                            K[i, j] += min(a, BT[v, j])


def nonzero_by_level(pyramids: np.ndarray) -> dict[str, float]:
    return {f"level_{l}": float((pyramids[:, (4 ** l - 1) // 3:(4 ** (l + 1) - 1) // 3] > 0).mean())
            for l in range(LEVELS + 1)}


def real_density(root: Path, n_images: int) -> dict[str, dict[str, float]]:
    """Non-zero fractions of real pyramids of the first Flickr8K images (codebooks fitted on them)."""
    from kcca_desc.data.images import FileImages
    from kcca_desc.image.features import ImageFeaturizer

    images = FileImages(sorted((root / "images").glob("*.jpg"))[:n_images])
    featurizer = ImageFeaturizer(levels=LEVELS, n_fit_images=n_images, cache=False, progress=False)
    return {name: nonzero_by_level(p) for name, p in featurizer.fit_transform(images).items()}


def timed(function):
    """(result, wall seconds, CPU seconds of the whole process, all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--n", type=positive_int, help="images in the Gram matrix (default 6000; quick 100)")
    parser.add_argument("--n-cross", type=positive_int, help="rows of the cross kernel (default 1000; quick 20)")
    parser.add_argument("--n-numpy", type=positive_int, help="rows timed with the NumPy reference (default 200; quick 10)")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--flickr8k", type=Path,
                        help="Flickr8K root, to measure the real non-zero fractions (default $KCCA_DESC_FLICKR8K)")
    parser.add_argument("--density-images", type=positive_int, default=60)
    parser.add_argument("--cupy", action="store_true",
                        help="also time the CuPy kernels on the same inputs (needs a CUDA device)")
    add_output_arguments(parser, "--n 100 --n-cross 20 --n-numpy 10, no Flickr8K measurement")
    args = fill_defaults(parser.parse_args(argv), DEFAULTS)
    args.flickr8k = Path(args.flickr8k) if args.flickr8k else None

    rng = np.random.default_rng(args.seed)
    features = {name: synthetic_pyramids(rng, args.n, *params) for name, params in FEATURE_TYPES.items()}
    queries = {name: pyramid[:args.n_cross] for name, pyramid in features.items()}
    dims = sum(p.shape[1] * p.shape[2] for p in features.values())
    density = {name: nonzero_by_level(p) for name, p in features.items()}

    small = {name: p[:8] for name, p in features.items()}
    image_kernel(small, backend="numba")  # compile (or load the cache) outside the timings
    image_kernel(small, small, backend="numba")

    load_before = os.getloadavg()
    tracemalloc.start()
    gram, gram_s, gram_cpu = timed(lambda: image_kernel(features, backend="numba"))
    _, gram_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    cross, cross_s, cross_cpu = timed(lambda: image_kernel(queries, features, backend="numba"))
    _, cross_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    measured = (real_density(args.flickr8k, args.density_images)
                if args.flickr8k and (args.flickr8k / "images").is_dir() else None)

    sub = {name: p[:args.n_numpy] for name, p in features.items()}
    numpy_k, numpy_s, numpy_cpu = timed(lambda: image_kernel(sub, features, backend="numpy"))
    agreement = float(np.abs(numpy_k - cross[:args.n_numpy]).max())
    numpy_per_pair = numpy_s / (args.n_numpy * args.n)
    numpy_cpu_per_pair = numpy_cpu / (args.n_numpy * args.n)

    # Sparse experiment on the 16 level-2 cells of every type (the sparsest, widest part).
    weights = pyramid_cell_weights(LEVELS).astype(np.float32)
    level2 = np.concatenate([(p[:, 5:] * weights[5:, None]).reshape(args.n, -1) for p in features.values()],
                            axis=1)
    rows = level2[:args.n_cross]
    histogram_intersection(rows[:8], level2[:8], backend="numba")
    dense_l2, dense_l2_s, dense_l2_cpu = timed(lambda: histogram_intersection(rows, level2, backend="numba"))
    columns_t = np.ascontiguousarray(level2.T)
    sparse_l2 = np.zeros((args.n_cross, args.n), np.float32)
    sparse_rows_intersection(rows[:8], columns_t[:, :8].copy(), np.zeros((8, 8), np.float32), 256, 1024)
    _, sparse_l2_s, sparse_l2_cpu = timed(lambda: sparse_rows_intersection(rows, columns_t, sparse_l2, 256, 1024))
    sparse_agreement = float(np.abs(sparse_l2 - dense_l2).max())

    threads = numba.get_num_threads()
    gram_pairs = args.n * (args.n + 1) // 2
    cross_pairs = args.n_cross * args.n
    figures = {
        "machine": {**machine_info(), "numba_threads": threads, "load_average_1_5_15_before": load_before,
                    "load_average_1_5_15_after": os.getloadavg()},
        "inputs": {"kind": "synthetic sparse pyramids (see benchmarks/image_kernels.py docstring)",
                   "n": args.n, "levels": LEVELS, "dims": dims, "seed": args.seed,
                   "words": {k: v[0] for k, v in FEATURE_TYPES.items()},
                   "features_per_image": {k: v[1] for k, v in FEATURE_TYPES.items()},
                   "nonzero_fraction": density,
                   "alpha_concentration": {k: v[2:] for k, v in FEATURE_TYPES.items()},
                   "real_flickr8k_nonzero_fraction": measured,
                   "real_density_images": args.density_images if measured else None},
        "gram_numba": {"shape": [args.n, args.n], "seconds": gram_s, "cpu_seconds": gram_cpu,
                       "idle_machine_estimate_seconds": gram_cpu / threads,
                       "min_add_per_second": gram_pairs * dims / gram_s,
                       "min_add_per_cpu_second": gram_pairs * dims / gram_cpu,
                       "tracemalloc_peak_bytes": gram_peak},
        "cross_numba": {"shape": [args.n_cross, args.n], "seconds": cross_s, "cpu_seconds": cross_cpu,
                        "idle_machine_estimate_seconds": cross_cpu / threads,
                        "min_add_per_second": cross_pairs * dims / cross_s,
                        "min_add_per_cpu_second": cross_pairs * dims / cross_cpu,
                        "tracemalloc_peak_bytes": cross_peak},
        "process_max_rss_bytes_after_numba": max_rss,
        "numpy_reference": {"timed_shape": [args.n_numpy, args.n], "seconds": numpy_s,
                            "cpu_seconds": numpy_cpu,
                            "max_abs_difference_to_numba": agreement,
                            "scaled_gram_seconds": numpy_per_pair * args.n ** 2,
                            "scaled_cross_seconds": numpy_per_pair * cross_pairs},
        "speedup_vs_numpy": {"gram": numpy_per_pair * args.n ** 2 / gram_s,
                             "cross": numpy_per_pair * cross_pairs / cross_s,
                             "gram_cpu_time": numpy_cpu_per_pair * args.n ** 2 / gram_cpu,
                             "cross_cpu_time": numpy_cpu_per_pair * cross_pairs / cross_cpu},
        "sparse_experiment_level2": {"shape": [args.n_cross, args.n], "dims": level2.shape[1],
                                     "nonzero_fraction": float((level2 > 0).mean()),
                                     "dense_seconds": dense_l2_s, "sparse_seconds": sparse_l2_s,
                                     "dense_cpu_seconds": dense_l2_cpu,
                                     "sparse_cpu_seconds": sparse_l2_cpu,
                                     "max_abs_difference": sparse_agreement},
    }
    if args.cupy:
        figures["cupy"] = cupy_figures(features, queries, gram, cross, gram_s, cross_s)
    write_results(output_path(args, __file__), figures)

    print(f"inputs: synthetic sparse pyramids, {args.n} images x {dims} dims; non-zero fraction "
          + ", ".join(f"{k} L2 {v['level_2']:.2f}" for k, v in density.items()))
    if measured:
        print("real Flickr8K non-zero fraction at level 2: "
              + ", ".join(f"{k} {v['level_2']:.2f}" for k, v in measured.items()))
    print(f"Numba threads: {threads}; load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    for name, pairs in (("gram_numba", gram_pairs), ("cross_numba", cross_pairs)):
        f = figures[name]
        print(f"{name:12s} {f['shape'][0]} x {f['shape'][1]}: {f['seconds']:.2f} s wall "
              f"({f['min_add_per_second'] / 1e9:.1f} G min+add/s), {f['cpu_seconds']:.2f} s CPU "
              f"({f['min_add_per_cpu_second'] / 1e9:.1f} G/CPU-s; idle {threads}-core estimate "
              f"{f['idle_machine_estimate_seconds']:.1f} s), tracemalloc peak "
              f"{f['tracemalloc_peak_bytes'] / 2**20:.0f} MiB")
    print(f"process max RSS after the Numba runs: {max_rss / 2**20:.0f} MiB")
    print(f"NumPy reference {args.n_numpy} x {args.n}: {numpy_s:.2f} s (max |diff| {agreement:.1e}); scaled by "
          f"pairs: Gram {figures['numpy_reference']['scaled_gram_seconds']:.0f} s, cross "
          f"{figures['numpy_reference']['scaled_cross_seconds']:.0f} s -> speed-up "
          f"{figures['speedup_vs_numpy']['gram']:.0f}x (Gram), {figures['speedup_vs_numpy']['cross']:.0f}x (cross) "
          f"in wall time; {figures['speedup_vs_numpy']['gram_cpu_time']:.0f}x and "
          f"{figures['speedup_vs_numpy']['cross_cpu_time']:.0f}x in CPU time")
    for name, f in figures.get("cupy", {}).items():
        if name != "device":
            print(f"{name:12s} {f['seconds']:.3f} s on {figures['cupy']['device']}, {f['speedup_vs_numba']:.1f}x "
                  f"the Numba run above (max |diff| {f['max_abs_difference_to_numba']:.1e})")
    s = figures["sparse_experiment_level2"]
    print(f"level-2 columns ({s['dims']}, {s['nonzero_fraction']:.2f} non-zero), {args.n_cross} x {args.n}: "
          f"dense {s['dense_seconds']:.2f} s ({s['dense_cpu_seconds']:.2f} CPU), sparse rows "
          f"{s['sparse_seconds']:.2f} s ({s['sparse_cpu_seconds']:.2f} CPU) "
          f"(max |diff| {s['max_abs_difference']:.1e})")
    return figures


if __name__ == "__main__":
    run_main(main)
