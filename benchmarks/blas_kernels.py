"""Benchmark: the dense-LAPACK stages of exact KCCA under OpenBLAS's own kernel vs a forced one.

OpenBLAS picks its compute kernels for the CPU it runs on; ``OPENBLAS_CORETYPE`` overrides
that choice (some shared machines set ``OPENBLAS_CORETYPE=Haswell`` to protect old OpenBLAS
builds, which forces AVX2 kernels on AVX-512 processors).  Every KCCA system of the Hodosh
table pays one double-precision eigendecomposition of its n x n text kernel (``syevd``), the
cross product ``Ux'Uy`` of the two eigenbases, and one single-precision canonical solve per κ
(``kcca_desc.kcca.spectral.solve_canonical``: Gram product, ``ssyevr`` for the top 256
eigenpairs, Rayleigh–Ritz in double precision), so on 2 cores these stages are most of the
table's time.

This script times those stages at n = 6,000 on the synthetic image-like and text-like kernels of
``benchmarks/kcca.py`` (:func:`kcca_bench.synthetic_items`), once with the kernel OpenBLAS
chooses (``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` removed from the environment) and once with
a forced core type (``--forced``, default ``Haswell``), each in its own process because OpenBLAS
reads the variable when it loads; the two alternate, ``--repeats`` times each, so both see the
same machine load, and the fastest repeat of each stage is reported.  It also checks that both
give the same canonical correlations.

Usage::

    python benchmarks/blas_kernels.py              # n = 6,000
    python benchmarks/blas_kernels.py --quick      # n = 200, one run each, smoke test

Writes ``benchmarks/results/blas_kernels.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from typing import Sequence

import numpy as np

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (BLAS_OVERRIDES, add_output_arguments, blas_libraries, fill_defaults, machine_info,
                             output_path, synthetic_image_kernel, synthetic_items, synthetic_text_kernel,
                             write_results)

N_COMPONENTS = 256


def worker(n: int) -> dict:
    """Time each stage once in this process and return the timings and the correlations."""
    from kcca_desc.kcca.preprocessing import KernelCentering
    from kcca_desc.kcca.spectral import solve_canonical, spectrum_from_kernel
    from kcca_desc.methods.ranker import DEFAULT_REGS

    histograms, bow = synthetic_items(n, 1)
    kernels = {"image": synthetic_image_kernel(histograms), "text": synthetic_text_kernel(bow)}
    times, spectra = {}, {}
    for view, K in kernels.items():
        centred = KernelCentering().fit(K).transform(K)
        start = time.perf_counter()
        spectra[view] = spectrum_from_kernel(centred, view)
        times[f"syevd_{view}"] = time.perf_counter() - start
    start = time.perf_counter()
    cross = spectra["image"].vectors.T @ spectra["text"].vectors
    times["cross_product"] = time.perf_counter() - start
    correlations = {}
    for reg in DEFAULT_REGS:
        start = time.perf_counter()
        solution = solve_canonical(spectra["image"], spectra["text"], cross, reg, "ridge",
                                   min(N_COMPONENTS, n // 4), dtype=np.float32)
        times[f"solve_reg_{reg:g}"] = time.perf_counter() - start
        correlations[f"{reg:g}"] = solution.correlations.tolist()
    # numpy and scipy each bundle an OpenBLAS (opencv a third, unused here): name each one's kernel.
    kernels_used = sorted({f"{pool['version']}: {pool['architecture']}" for pool in blas_libraries()})
    return {"times_s": times, "correlations": correlations, "blas_architectures": kernels_used}


def run_worker(n: int, coretype: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_OVERRIDES}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    out = subprocess.run([sys.executable, __file__, "--worker", "--n", str(n)], env=env,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, help="timed runs per configuration (default 2; quick 1)")
    parser.add_argument("--forced", default="Haswell", help="the OPENBLAS_CORETYPE to compare with")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=positive_int, help="kernel size (default 6000; quick 200)")
    add_output_arguments(parser, "n = 200, one run per configuration")
    args = fill_defaults(parser.parse_args(argv),
                         {"full": {"n": 6000, "repeats": 2}, "quick": {"n": 200, "repeats": 1}})
    if args.worker:
        print(json.dumps(worker(args.n)))
        return {}
    n = args.n
    configs = {"chosen by OpenBLAS": None, f"OPENBLAS_CORETYPE={args.forced}": args.forced}
    runs = {name: [] for name in configs}
    for _ in range(args.repeats):
        for name, coretype in configs.items():  # alternating: both see the same load
            runs[name].append(run_worker(n, coretype))
            print(f"{name}: {runs[name][-1]['blas_architectures']} "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in runs[name][-1]["times_s"].items()), flush=True)
    results = {"machine": machine_info(), "n": n, "n_components": N_COMPONENTS, "configurations": {}}
    for name, rows in runs.items():
        best = {stage: min(r["times_s"][stage] for r in rows) for stage in rows[0]["times_s"]}
        results["configurations"][name] = {"blas_architectures": rows[0]["blas_architectures"],
                                           "best_times_s": best, "total_s": sum(best.values())}
    (auto, auto_rows), (forced, forced_rows) = runs.items()
    a, f = results["configurations"][auto], results["configurations"][forced]
    results["speedup_per_stage"] = {s: f["best_times_s"][s] / a["best_times_s"][s] for s in a["best_times_s"]}
    results["speedup_total"] = f["total_s"] / a["total_s"]
    results["max_abs_correlation_diff"] = max(
        float(np.max(np.abs(np.subtract(auto_rows[0]["correlations"][reg], forced_rows[0]["correlations"][reg]))))
        for reg in auto_rows[0]["correlations"])
    print(f"{auto} ({a['blas_architectures']}) {a['total_s']:.1f} s, {forced} ({f['blas_architectures']}) "
          f"{f['total_s']:.1f} s: {results['speedup_total']:.2f}x; per stage "
          + ", ".join(f"{k} {v:.2f}x" for k, v in results["speedup_per_stage"].items())
          + f"; max |Δρ| {results['max_abs_correlation_diff']:.1e}")
    write_results(output_path(args, __file__), results)
    return results


if __name__ == "__main__":
    run_main(main)
