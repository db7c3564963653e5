"""Benchmark: the per-κ canonical solve of exact KCCA in double vs single precision.

Every κ of the model-selection grid costs one canonical solve on the kernels'
shared eigendecompositions (:meth:`kcca_desc.kcca.KCCA.with_params`): a Gram
product and ``syevr`` of the whitened cross-covariance.  ``solve_dtype=float32``
runs those two in single precision and computes the pairs in double precision
(Rayleigh–Ritz).  This script times both side by side, in one run, on the same
n = 6,000 synthetic image-like and text-like kernels as ``benchmarks/kcca.py``
(both fits share one cached eigendecomposition, so only the solves are timed),
for the ranker's κ grid and 256 components, and reports how far the single-
precision results are from the double-precision ones: largest canonical
correlation difference and largest principal angle between the projections of
the training items.

Usage::

    python benchmarks/kcca_solve_dtype.py          # n = 6,000
    python benchmarks/kcca_solve_dtype.py --quick  # n = 300, 32 components, smoke test

Writes ``benchmarks/results/kcca_solve_dtype.json``.
"""

from __future__ import annotations

import tempfile
import time
from typing import Sequence

import numpy as np
from scipy import linalg

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, machine_info, output_path, synthetic_image_kernel,
                             synthetic_items, synthetic_text_kernel, write_results)
from kcca_desc.kcca import KCCA
from kcca_desc.methods.ranker import DEFAULT_REGS


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, help="timed passes over the κ grid per precision (default 2)")
    add_output_arguments(parser, "n = 300, 32 components, one pass")
    args = fill_defaults(parser.parse_args(argv), {"full": {"repeats": 2}, "quick": {"repeats": 1}})
    n, n_components = (300, 32) if args.quick else (6000, 256)
    # The same kernels as benchmarks/kcca.py.
    histograms, bow = synthetic_items(n, 1)
    Kx, Ky = synthetic_image_kernel(histograms), synthetic_text_kernel(bow)
    results = {"machine": machine_info(), "n": n, "n_components": n_components,
               "regs": list(DEFAULT_REGS), "per_reg": []}
    with tempfile.TemporaryDirectory() as memory:
        t0 = time.perf_counter()
        # Fitted at a κ outside the grid, so that every κ of the grid costs one solve.
        models = {dtype: KCCA(n_components=n_components, reg=0.5, solve_dtype=dtype, memory=memory).fit(Kx, Ky)
                  for dtype in ("float64", "float32")}
        results["fit_both_s"] = time.perf_counter() - t0
        Kxc = Kx - Kx.mean(0) - Kx.mean(1)[:, None] + Kx.mean()
        times = {dtype: {reg: [] for reg in DEFAULT_REGS} for dtype in models}
        solved = {}
        for _ in range(args.repeats):
            for reg in DEFAULT_REGS:
                for dtype, model in models.items():  # interleaved: both precisions see the same load
                    start = time.perf_counter()
                    solved[dtype, reg] = model.with_params(reg=reg)
                    times[dtype][reg].append(time.perf_counter() - start)
    for reg in DEFAULT_REGS:
        double, single = solved["float64", reg], solved["float32", reg]
        rho64, rho32 = double.canonical_correlations_, single.canonical_correlations_
        # The subspace of the top k pairs is only defined up to the gap to pair k + 1.
        rho_next = double.with_params(n_components=n_components + 1).canonical_correlations_[-1]
        row = {"reg": reg,
               "float64_s": min(times["float64"][reg]), "float32_s": min(times["float32"][reg]),
               "max_abs_correlation_diff": float(np.abs(rho64 - rho32).max()),
               "top_correlations": rho64[:3].tolist(), "last_correlation": float(rho64[-1]),
               "gap_to_next": float(rho64[-1] - rho_next),
               "max_principal_angle_rad": float(np.max(linalg.subspace_angles(Kxc @ double.alpha_,
                                                                                Kxc @ single.alpha_)))}
        row["speedup"] = row["float64_s"] / row["float32_s"]
        results["per_reg"].append(row)
        print(f"reg {reg:g}: float64 {row['float64_s']:.2f} s, float32 {row['float32_s']:.2f} s "
              f"({row['speedup']:.2f}x); max |drho| {row['max_abs_correlation_diff']:.1e}, "
              f"max principal angle {row['max_principal_angle_rad']:.1e} rad (gap rho_k - rho_k+1 "
              f"{row['gap_to_next']:.1e})", flush=True)
    total64 = sum(r["float64_s"] for r in results["per_reg"])
    total32 = sum(r["float32_s"] for r in results["per_reg"])
    results["grid_float64_s"], results["grid_float32_s"] = total64, total32
    print(f"κ grid of {len(DEFAULT_REGS)}: float64 {total64:.1f} s, float32 {total32:.1f} s ({total64 / total32:.2f}x)")
    write_results(output_path(args, __file__), results)
    return results


if __name__ == "__main__":
    run_main(main)
