"""Benchmark: KCCA fit time and agreement against cca-zoo, and the large-n solvers.

Writes ``benchmarks/results/kcca.json`` and prints the figures.  All timings
of one table come from one run on the same precomputed kernels:

* kernels: a pyramid-like image kernel (histogram intersection of sparse
  random histograms drawn from latent topics, raised to the power p = 2) and a
  text-like kernel (cosine of sparse bag-of-words vectors drawn from the same
  topics, diagonal multiplier d = 2), so the two views share real structure;
* n = 1,000 / 2,000 / 3,000: our exact and low-rank fits against
  ``cca_zoo.nonparametric.KCCA(kernel="precomputed")`` (optional extra
  ``cca-zoo``), with the top canonical correlations of each model evaluated on
  the same ridge objective;
* n = 6,000: exact and low-rank fits (time, peak NumPy memory);
* n = 30,000 caption-level pairs (6,000 images x 5 captions), low-rank with
  column oracles so no 30,000 x 30,000 matrix exists.

Usage (on an oversubscribed machine, single-threaded BLAS is much faster)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/kcca.py            # full run
    python benchmarks/kcca.py --quick    # n = 150 / 300 / 400, smoke test

The kernels are :func:`kcca_bench.synthetic_image_kernel` and
:func:`kcca_bench.synthetic_text_kernel` of :func:`kcca_bench.synthetic_items`.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy import linalg

from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, machine_info, output_path, synthetic_image_kernel,
                             synthetic_items, synthetic_text_kernel, timed_with_peak_memory as timed,
                             write_results)
from kcca_desc.kcca import KCCA, CallableKernelColumns

SEED = 0
N_COMPONENTS = 10


# ---------------------------------------------------------------------------- measuring
def ridge_objective(alpha, beta, Kx, Ky, reg) -> np.ndarray:
    """Our regularised correlation of given dual pairs, on the centred kernels."""
    Kxc, Kyc = (K - K.mean(0) - K.mean(1)[:, None] + K.mean() for K in (Kx, Ky))
    num = np.einsum("ik,ik->k", Kxc @ alpha, Kyc @ beta)
    ax, by = Kxc @ alpha, Kyc @ beta
    den_x = np.einsum("ik,ik->k", ax, ax) + reg * np.einsum("ik,ik->k", alpha, ax)
    den_y = np.einsum("ik,ik->k", by, by) + reg * np.einsum("ik,ik->k", beta, by)
    return np.abs(num) / np.sqrt(den_x * den_y)


def compare_with_cca_zoo(Kx, Ky, shrinkage: float, rank: int) -> dict:
    """Fit times and top correlations of ours (exact, low-rank) and cca-zoo on the same kernels.

    cca-zoo's within-view block is ``(1 - c) K^2 / (n - 1) + c K`` against
    ``K Ky / (n - 1)`` between views: the same directions as our ridge form
    with ``reg = c (n - 1) / (1 - c)``.
    """
    n = Kx.shape[0]
    reg = shrinkage * (n - 1) / (1 - shrinkage)
    row = {"n": n, "cca_zoo_shrinkage": shrinkage, "reg": reg, "rank": rank}
    exact, row["exact_s"], row["exact_peak_gib"] = timed(
        lambda: KCCA(n_components=N_COMPONENTS, reg=reg, method="exact").fit(Kx, Ky)
    )
    lowrank, row["lowrank_s"], row["lowrank_peak_gib"] = timed(
        lambda: KCCA(n_components=N_COMPONENTS, reg=reg, method="lowrank", rank=rank).fit(Kx, Ky)
    )
    row["exact_correlations"] = exact.canonical_correlations_.tolist()
    row["lowrank_correlations"] = lowrank.canonical_correlations_.tolist()
    row["lowrank_explained_trace"] = [lowrank.explained_trace_x_, lowrank.explained_trace_y_]
    try:
        from cca_zoo.nonparametric import KCCA as ZooKCCA
    except ImportError as error:  # optional extra
        row["cca_zoo"] = f"not installed: {error}"
        return row
    zoo, row["cca_zoo_s"], row["cca_zoo_peak_gib"] = timed(
        lambda: ZooKCCA(N_COMPONENTS, kernel="precomputed", shrinkage=shrinkage, center=False).fit([Kx, Ky])
    )
    zoo_rho = ridge_objective(zoo.weights_[0], zoo.weights_[1], Kx, Ky, reg)
    row["cca_zoo_correlations"] = np.sort(zoo_rho)[::-1].tolist()
    row["max_abs_diff_exact_vs_cca_zoo"] = float(np.max(np.abs(np.sort(zoo_rho)[::-1] - exact.canonical_correlations_)))
    row["speedup_exact"] = row["cca_zoo_s"] / row["exact_s"]
    row["speedup_lowrank"] = row["cca_zoo_s"] / row["lowrank_s"]
    return row


def eigh_drivers(K: np.ndarray) -> dict:
    Kc = K - K.mean(0) - K.mean(1)[:, None] + K.mean()
    out = {"n": K.shape[0]}
    for driver in ("evd", "evr"):
        _, out[f"{driver}_s"], _ = timed(lambda: linalg.eigh(Kc, driver=driver))
    return out


def caption_level(histograms: np.ndarray, bow: sp.csr_matrix, captions_per_image: int, rank: int, reg: float) -> dict:
    """Low-rank fit on caption-level pairs through column oracles (no n x n matrix)."""
    K_images = synthetic_image_kernel(histograms)
    image_of = np.repeat(np.arange(histograms.shape[0]), captions_per_image)
    n = image_of.size
    image_view = CallableKernelColumns(
        n, lambda idx: K_images[np.ix_(image_of, image_of[idx])], lambda: np.diag(K_images)[image_of]
    )
    text_view = CallableKernelColumns(
        n, lambda idx: (bow @ bow[idx].T).toarray(), lambda: np.asarray(bow.multiply(bow).sum(axis=1)).ravel()
    )
    model, seconds, peak = timed(
        lambda: KCCA(n_components=N_COMPONENTS, reg=reg, method="lowrank", rank=rank).fit(image_view, text_view)
    )
    return {
        "n": n, "rank": rank, "reg": reg, "fit_s": seconds, "peak_gib": peak,
        "ranks": [model.rank_x_, model.rank_y_],
        "explained_trace": [model.explained_trace_x_, model.explained_trace_y_],
        "correlations": model.canonical_correlations_.tolist(),
    }


def reg_path_cost(Kx, Ky, regs: Sequence[float], method: str, rank: int | None) -> dict:
    base, fit_s, _ = timed(lambda: KCCA(n_components=100, reg=regs[0], method=method, rank=rank).fit(Kx, Ky))
    _, path_s, _ = timed(lambda: base.path(regs, n_components=100))
    return {"n": Kx.shape[0], "method": method, "rank": rank, "fit_s": fit_s,
            "per_reg_s": path_s / len(regs), "n_regs": len(regs)}


# ---------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    add_output_arguments(parser, "n = 150 / 300, 400 and 2,000 caption-level pairs, ranks 100-200")
    args = parser.parse_args(argv)
    sizes, big, captions = ((150, 300), 400, 5) if args.quick else ((1000, 2000, 3000), 6000, 5)
    shrinkage = 1e-3
    small_rank, big_rank, caption_rank = (100, 200, 100) if args.quick else (500, 1000, 2000)

    histograms, bow_images = synthetic_items(big, 1, seed=SEED)
    Kx_all, Ky_all = synthetic_image_kernel(histograms), synthetic_text_kernel(bow_images)
    results = {"machine": machine_info(), "seed": SEED,
               "n_components": N_COMPONENTS, "comparison": [],
               "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
               "notes": "timings on a shared 2-core machine under load (~10); ratios are side by side in one run. "
                        "Run with OPENBLAS_NUM_THREADS=1: on this oversubscribed machine two BLAS threads made "
                        "LAPACK eigh 4-40x slower (spinning threads), for cca-zoo and for us alike"}
    for n in sizes:
        row = compare_with_cca_zoo(Kx_all[:n, :n], Ky_all[:n, :n], shrinkage, small_rank)
        results["comparison"].append(row)
        print(f"n={n}: exact {row['exact_s']:.1f}s, lowrank(m={small_rank}) {row['lowrank_s']:.1f}s, "
              f"cca-zoo {row.get('cca_zoo_s', float('nan')):.1f}s; "
              f"max |rho_exact - rho_zoo| = {row.get('max_abs_diff_exact_vs_cca_zoo', float('nan')):.2e}; "
              f"top rho exact {row['exact_correlations'][:3]}, lowrank {row['lowrank_correlations'][:3]}")
    results["eigh_drivers"] = eigh_drivers(Kx_all[: sizes[-1], : sizes[-1]])
    print("eigh drivers:", results["eigh_drivers"])
    reg_big = shrinkage * (big - 1) / (1 - shrinkage)
    results["reg_path"] = reg_path_cost(Kx_all[: sizes[-1], : sizes[-1]], Ky_all[: sizes[-1], : sizes[-1]],
                                         [reg_big / 10, reg_big, reg_big * 10], "exact", None)
    print("reg path:", results["reg_path"])
    large = {}
    for method, rank in (("lowrank", big_rank), ("exact", None)):
        model, seconds, peak = timed(lambda: KCCA(n_components=N_COMPONENTS, reg=reg_big, method=method, rank=rank)
                                     .fit(Kx_all, Ky_all))
        large[method] = {"n": big, "rank": rank, "fit_s": seconds, "peak_gib": peak,
                         "explained_trace": [model.explained_trace_x_, model.explained_trace_y_],
                         "correlations": model.canonical_correlations_.tolist()}
        print(f"n={big} {method}: {seconds:.1f}s, peak {peak:.2f} GiB, explained trace "
              f"{model.explained_trace_x_:.3f}/{model.explained_trace_y_:.3f}")
    results["large"] = large
    del Kx_all, Ky_all
    _, bow_captions = synthetic_items(big, captions, seed=SEED)
    results["caption_level"] = caption_level(histograms, bow_captions, captions, caption_rank, reg_big * captions)
    cl = results["caption_level"]
    print(f"n={cl['n']} caption-level lowrank(m={caption_rank}): {cl['fit_s']:.1f}s, peak {cl['peak_gib']:.2f} GiB, "
          f"explained trace {cl['explained_trace'][0]:.3f}/{cl['explained_trace'][1]:.3f}")
    write_results(output_path(args, __file__), results)
    return results


if __name__ == "__main__":
    run_main(main)
