"""Benchmark: the floor the hardware sets on each heavy stage of a KCCA system, and how close it runs.

Measures on this machine, with ``--threads`` BLAS threads (default 2, the machine's cores):

* the BLAS rate: ``dgemm`` and ``sgemm`` of two square matrices (2 m³ flops), best of ``--repeats``;
* LAPACK ``syevd`` (``scipy.linalg.eigh(driver="evd")``, the exact solver's eigendecomposition,
  timed on the image-like kernel below) at n = 6,000 and its rate under the flop model 4/3 n³ (tridiagonal reduction, ``sytrd``) +
  2 n³ (back-transformation, ``ormtr``); the divide-and-conquer solve of the tridiagonal problem
  adds up to 4/3 n³ more, less with deflation;
* memory bandwidth: copy (read + write) and sum (read) of a large float64 array, one thread.

From these it computes, for each heavy stage of one KCCA system of Hodosh, Young & Hockenmaier
(2013) at Flickr8K size (6,000 training images; dev pool of 1,000 images and their 1,000 ``#2``
captions; the ranker's grid of n and κ), the floor: its flops at the BLAS rate (the sgemm rate
for single-precision work) or its bytes at the bandwidth, whichever is larger.  Each stage is
then measured directly on synthetic inputs of the same size (the image-like and text-like
kernels of ``benchmarks/kcca.py``; the pyramid histograms' dimension of the default image
kernel) with the toolkit's own functions, and the ratio measured / floor is stated:

* image Gram: histogram intersection, n(n+1)/2 pairs x d bins x (min + add); measured on
  ``--gram-subset`` images and scaled by the number of pairs (flops are exact, the Numba kernel
  runs tiles of fixed size);
* the two eigendecompositions (``spectrum_from_kernel`` of each centred kernel);
* the cross product ``Ux'Uy`` (2 n r_x r_y flops);
* the per-κ canonical solves (``solve_canonical`` at the ranker's single precision: Gram product
  2 r³, ``ssyevr`` reduction 4/3 r³, partner vectors 2 r² k);
* dev scoring of the grid: per κ one projection of the dev kernels at the largest n (2 m n k
  per side), per (n, κ) the m x m cosine scores (2 m² n);
* the text Gram: bytes only (n² float64 written; the sparse products' flops depend on the
  vocabulary); its measured time comes from a results file.

With ``--measured`` (a results file of ``python -m kcca_desc.fit`` written with its stage profile,
``timings_s``, or a ``hodosh_table.py`` record, whose first system's ``profile_s`` is read), the stages of a real run are set against the sum of the floors of their parts:
image kernel, text kernels, factorisations (two eigendecompositions, the cross product, the first
κ's solve) and selection (the other κ's solves and the dev scoring).

Usage::

    python benchmarks/stage_floors.py --measured fit.json   # Flickr8K size
    python benchmarks/stage_floors.py --reuse --measured other.json --cached "image kernel"
    python benchmarks/stage_floors.py --quick                # small sizes, a smoke test

Writes ``benchmarks/results/stage_floors.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from kcca_desc._core.profile import wall_seconds
from kcca_desc.cli.options import positive_int
from kcca_desc.image.features import FEATURE_TYPES
from kcca_desc.kcca.preprocessing import KernelCentering
from kcca_desc.kcca.spectral import solve_canonical, spectrum_from_kernel
from kcca_desc.kernels.image.histograms import n_pyramid_cells
from kcca_desc.kernels.image.intersection import histogram_intersection
from kcca_desc.methods.ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, machine_info, output_path, synthetic_image_kernel,
                        synthetic_items, synthetic_text_kernel, write_results)

#: Sizes of one system at Flickr8K scale (hodosh protocol) and of the quick run.
SIZES = {"full": {"n_train": 6000, "n_dev": 1000, "gemm": 3000, "copy_mb": 512, "gram_subset": 1000},
         "quick": {"n_train": 300, "n_dev": 60, "gemm": 300, "copy_mb": 16, "gram_subset": 100}}
#: Pyramid histogram dimension of the default image kernel (2 levels, every feature type's codebook).
PYRAMID_DIMS = n_pyramid_cells(2) * sum(feature.n_words for feature in FEATURE_TYPES.values())


def best_time(function: Callable[[], object], repeats: int) -> float:
    """Fewest wall seconds of ``repeats`` calls: the floor is what the machine can do, not its load."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_rates(m: int, copy_mb: int, repeats: int) -> dict:
    """BLAS rates (GFLOP/s) and memory bandwidth (GB/s) on this machine."""
    rng = np.random.default_rng(0)
    rates = {}
    for name, dtype in (("dgemm", np.float64), ("sgemm", np.float32)):
        A, B = rng.standard_normal((m, m)).astype(dtype), rng.standard_normal((m, m)).astype(dtype)
        A @ B  # first call: thread start-up and page faults outside the timing
        rates[f"{name}_gflops"] = 2 * m**3 / best_time(lambda: A @ B, repeats) / 1e9
    x = np.ones(copy_mb * 2**20 // 8)
    y = np.empty_like(x)
    np.copyto(y, x)
    rates["copy_gbps"] = 2 * x.nbytes / best_time(lambda: np.copyto(y, x), repeats) / 1e9
    rates["sum_gbps"] = x.nbytes / best_time(x.sum, repeats) / 1e9
    return rates


def syevd_flops(n: int) -> float:
    """Flop model of ``syevd`` with eigenvectors: 4/3 n³ (``sytrd``) + 2 n³ (``ormtr``)."""
    return (4 / 3 + 2) * n**3


def solve_flops(r: int, k: int) -> float:
    """Flops of one canonical solve of ``solve_canonical`` on an r x r cross product, k pairs."""
    return 2 * r**3 + 4 / 3 * r**3 + 2 * r * r * k


def floor(flops: float, gflops: float, nbytes: float, gbps: float) -> dict:
    """The time the hardware needs at least: flops at the rate, bytes at the bandwidth, the larger."""
    compute, memory = flops / gflops / 1e9, nbytes / gbps / 1e9
    return {"flops": flops, "bytes": nbytes, "compute_floor_s": compute, "memory_floor_s": memory,
            "floor_s": max(compute, memory), "bound": "compute" if compute >= memory else "memory"}


def measure_stages(sizes: dict, rates: dict, repeats: int) -> dict:
    """Floor and directly measured time of each heavy stage of one system at ``sizes``.

    Adds the ``syevd`` time and rate of the image kernel's eigendecomposition to ``rates``.
    """
    n, m, subset = sizes["n_train"], sizes["n_dev"], sizes["gram_subset"]
    k_max = min(max(DEFAULT_N_COMPONENTS), n // 4)
    bw = rates["copy_gbps"]
    stages = {}

    # Image Gram: histogram intersection, n(n+1)/2 pairs x d bins, one min and one add each
    # (float32: at best the sgemm rate, which counts a fused multiply-add as two).
    rng = np.random.default_rng(1)
    histograms = rng.random((subset, PYRAMID_DIMS), dtype=np.float32)
    histogram_intersection(histograms[:8])  # compile (or load the cached Numba code) outside the timing
    subset_s = best_time(lambda: histogram_intersection(histograms), 1)
    pairs = n * (n + 1) / 2
    stages["image_gram"] = {
        **floor(2 * pairs * PYRAMID_DIMS, rates["sgemm_gflops"], 4 * n * PYRAMID_DIMS + 8 * n * n, bw),
        "measured_s": subset_s * pairs / (subset * (subset + 1) / 2), "measured_on": f"{subset} images, scaled"}
    # Text Gram: the n x n float64 result written once.
    stages["text_gram"] = {**floor(0.0, rates["dgemm_gflops"], 8 * n * n, bw), "measured_s": None,
                           "measured_on": "a results file (--measured)"}

    histograms, bow = synthetic_items(n, 1)
    centred = {view: KernelCentering().fit(K).transform(K)
               for view, K in (("image", synthetic_image_kernel(histograms)), ("text", synthetic_text_kernel(bow)))}
    # Each eigendecomposition is one syevd (scipy.linalg.eigh, driver="evd") of an n x n kernel:
    # the image kernel's gives the LAPACK rate.
    spectra, eig_s = {}, {}
    for view, K in centred.items():
        start = time.perf_counter()
        spectra[view] = spectrum_from_kernel(K, view)
        eig_s[view] = time.perf_counter() - start
    del centred
    rates.update(syevd_n=n, syevd_s=eig_s["image"], syevd_model_flops=syevd_flops(n),
                 syevd_gflops=syevd_flops(n) / eig_s["image"] / 1e9)
    rx, ry = spectra["image"].rank, spectra["text"].rank
    # Bytes: each syevd reads its kernel and writes a working copy and the eigenvectors (3 n² doubles).
    stages["eigendecompositions"] = {**floor(2 * syevd_flops(n), rates["dgemm_gflops"], 2 * 3 * 8 * n * n, bw),
                                     "measured_s": sum(eig_s.values()), "measured_on": f"synthetic kernels, n = {n}"}
    Ux, Uy = spectra["image"].vectors, spectra["text"].vectors
    cross_s = best_time(lambda: Ux.T @ Uy, repeats)
    cross = Ux.T @ Uy
    stages["cross_product"] = {**floor(2 * n * rx * ry, rates["dgemm_gflops"], 8 * (n * (rx + ry) + rx * ry), bw),
                               "measured_s": cross_s, "measured_on": f"ranks {rx} x {ry}"}
    r = min(rx, ry)
    solve_s = []
    solutions = {}
    for reg in DEFAULT_REGS:
        start = time.perf_counter()
        solutions[reg] = solve_canonical(spectra["image"], spectra["text"], cross, reg, "ridge", k_max,
                                         dtype=np.float32)
        solve_s.append(time.perf_counter() - start)
    stages["canonical_solve_per_reg"] = {**floor(solve_flops(r, k_max), rates["sgemm_gflops"], 8 * 3 * rx * ry, bw),
                                         "measured_s": float(np.mean(solve_s)),
                                         "measured_on": f"{len(DEFAULT_REGS)} κ, mean"}

    # Dev scoring: per κ, the dev kernels (m x n, each side) projected on the largest n's weights;
    # per (n, κ), the m x m cosine scores of the first n components.
    Kx_dev, Ky_dev = rng.random((m, n)), rng.random((m, n))
    grid_n = [c for c in DEFAULT_N_COMPONENTS if c <= k_max]

    def score_grid():
        for reg, solution in solutions.items():
            alpha = Ux @ solution.coef_x[:, :k_max]
            beta = Uy @ solution.coef_y[:, :k_max]
            px, py = Kx_dev @ alpha, Ky_dev @ beta
            px /= np.linalg.norm(px, axis=1, keepdims=True)
            py /= np.linalg.norm(py, axis=1, keepdims=True)
            for c in grid_n:
                px[:, :c] @ py[:, :c].T

    flops = len(DEFAULT_REGS) * (2 * n * (rx + ry) * k_max + 2 * 2 * m * n * k_max + sum(2 * m * m * c for c in grid_n))
    stages["dev_scoring"] = {**floor(flops, rates["dgemm_gflops"], len(DEFAULT_REGS) * 2 * 8 * m * n, bw),
                             "measured_s": best_time(score_grid, repeats),
                             "measured_on": f"{len(DEFAULT_REGS)} κ x {len(grid_n)} n, m = {m}"}
    for stage in stages.values():
        if stage["measured_s"] is not None:
            stage["measured_over_floor"] = stage["measured_s"] / stage["floor_s"]
    return stages


#: The stages of a run's profile and the heavy stages they hold, with how many times each.
RUN_STAGES = {"image kernel": {"image_gram": 1}, "text kernels": {"text_gram": 1},
              "factorisations": {"eigendecompositions": 1, "cross_product": 1, "canonical_solve_per_reg": 1},
              "selection": {"canonical_solve_per_reg": len(DEFAULT_REGS) - 1, "dev_scoring": 1}}


def against_run(measured: Path, stages: dict, cached: Sequence[str] = ()) -> dict:
    """The stages of a results file's profile against the sum of the floors of their parts.

    The stages in ``cached`` were read from the cache in that run: they are left out.
    """
    data = json.loads(measured.read_text())
    if isinstance(data, dict) and "systems" in data:  # a hodosh_table.py record: its first system's profile
        name, entry = next(iter(data["systems"].items()))
        command = f"python benchmarks/hodosh_table.py --systems {name}"
        timings = entry["profile_s"]
    else:
        result = data[0] if isinstance(data, list) else data
        name, timings = result["system"], result["timings_s"]
        command = " ".join(["python -m kcca_desc.fit", *result.get("extras", result).get("command", {}).get("argv", [])])
    out = {}
    for stage, parts in RUN_STAGES.items():
        if stage not in timings or stage in cached:
            continue
        floor_s = sum(stages[part]["floor_s"] * count for part, count in parts.items())
        entry = {"measured_s": wall_seconds(timings[stage]), "floor_s": floor_s, "parts": parts}
        if isinstance(timings[stage], dict) and "cpu_s" in timings[stage]:
            entry["cpu_s"] = timings[stage]["cpu_s"]
        entry["measured_over_floor"] = entry["measured_s"] / floor_s
        out[stage] = entry
    if "text_gram" in stages and "text kernels" in out:
        stages["text_gram"]["measured_s"] = out["text kernels"]["measured_s"]
        stages["text_gram"]["measured_over_floor"] = out["text kernels"]["measured_over_floor"]
    return {"file": str(measured), "system": name, "command": command, "cached": list(cached), "stages": out}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--threads", type=positive_int, help="BLAS threads (default 2, the machine's cores; quick 1)")
    parser.add_argument("--repeats", type=positive_int, help="timed repeats of the short measurements (default 3)")
    parser.add_argument("--measured", type=Path,
                        help="a results file with a stage profile: of kcca_desc.fit, or of hodosh_table.py (its "
                             "first system)")
    parser.add_argument("--cached", type=lambda text: [s.strip() for s in text.split(",") if s.strip()], default=[],
                        help="comma-separated stages the --measured run read from the cache (left out), "
                             "e.g. 'image kernel,text kernels'")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the rates and stages of the existing record (--out) and only set them against "
                             "a new --measured run")
    add_output_arguments(parser, "n = 300, small matrices, a 16 MB copy")
    args = fill_defaults(parser.parse_args(argv), {"full": {"repeats": 3, "threads": 2}, "quick": {"repeats": 1, "threads": 1}})
    sizes = SIZES["quick" if args.quick else "full"]
    out = output_path(args, __file__)
    if args.measured is not None and not args.measured.is_file():
        parser.error(f"--measured {args.measured}: no such file")
    if args.reuse:
        if not out.is_file():
            parser.error(f"--reuse: no record {out} to reuse")
        record = json.loads(out.read_text())
        for stage in record["stages"].values():  # the measured text Gram came from the earlier run
            if stage["measured_on"].startswith("a results file"):
                stage["measured_s"] = None
                stage.pop("measured_over_floor", None)
    else:
        record = {"machine": machine_info(), "threads": args.threads, "sizes": sizes, "pyramid_dims": PYRAMID_DIMS,
                  "grid": {"n_components": list(DEFAULT_N_COMPONENTS), "regs": list(DEFAULT_REGS)}}
        with threadpool_limits(args.threads):
            rates = record["rates"] = measure_rates(sizes["gemm"], sizes["copy_mb"], args.repeats)
            print(f"dgemm {rates['dgemm_gflops']:.1f} GFLOP/s, sgemm {rates['sgemm_gflops']:.1f} GFLOP/s, "
                  f"copy {rates['copy_gbps']:.1f} GB/s, sum {rates['sum_gbps']:.1f} GB/s", flush=True)
            record["stages"] = measure_stages(sizes, rates, args.repeats)
            print(f"syevd n = {rates['syevd_n']:,}: {rates['syevd_s']:.1f} s ({rates['syevd_gflops']:.1f} GFLOP/s "
                  "by the 10/3 n³ model)", flush=True)
    record.pop("run", None)
    if args.measured is not None:
        unknown = sorted(set(args.cached) - set(RUN_STAGES))
        if unknown:
            parser.error(f"--cached: unknown stages {unknown}; the compared ones: {', '.join(RUN_STAGES)}")
        record["run"] = against_run(args.measured, record["stages"], args.cached)
    print(f"{'stage':<26} {'floor s':>9} {'bound':>8} {'measured s':>11} {'ratio':>7}")
    for name, stage in record["stages"].items():
        measured = stage["measured_s"]
        print(f"{name:<26} {stage['floor_s']:9.3f} {stage['bound']:>8} "
              + (f"{measured:11.2f} {stage['measured_over_floor']:7.1f}" if measured is not None else f"{'':>11}"))
    for name, stage in record.get("run", {}).get("stages", {}).items():
        print(f"run: {name:<21} {stage['floor_s']:9.3f} {'':>8} {stage['measured_s']:11.2f} "
              f"{stage['measured_over_floor']:7.1f}")
    write_results(out, record)
    return record


if __name__ == "__main__":
    run_main(main)
