"""Benchmark: Flickr8K dev retrieval of KCCA as a function of the low-rank solver's rank.

The image kernels are high-rank, so the incomplete-Cholesky solver's rank trades accuracy for
speed. On the real Flickr8K kernels (pyramid image kernel, a named text kernel; 6,000 training
images), one KCCA setting (n, κ) is fitted with ranks 500, 1,000, 2,000 and the exact solver,
and each ranks the 1,000 dev images against their 1,000 ``#2`` captions (:func:`rank_sweep`).

Writes ``benchmarks/results/kcca_rank_sweep.json``, one result with its per-query ranks per rank,
and prints the figures of each.

Usage::

    python benchmarks/kcca_rank_sweep.py --data-root ../shared/flickr8k --text-kernel tri_sem
    python benchmarks/kcca_rank_sweep.py --quick       # synthetic data, ranks 10 / 20 / exact
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from kcca_desc import ImageSentenceRanker
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             result_record, timed_with_peak_memory, write_results)
from kcca_desc.data import RetrievalView
from kcca_desc.evaluate import Result, format_table, result_from_scores
from kcca_desc.kcca import KCCA
from kcca_desc.evaluate.scores import cosine_scores


def rank_sweep(
    Kx: np.ndarray,
    Ky: np.ndarray,
    Kx_dev: np.ndarray,
    Ky_dev: np.ndarray,
    view: RetrievalView,
    ranks: Sequence[int | None],
    *,
    reg: float,
    n_components: int,
    weight_power: float = 0.0,
) -> list[dict]:
    """Retrieval on dev pools as a function of the low-rank solver's rank.

    Parameters
    ----------
    Kx, Ky : ndarray of shape (n, n)
        Training image and text kernels (same item order).
    Kx_dev : ndarray of shape (view.n_images, n)
        Kernel rows of the pool images of ``view`` against the training images.
    Ky_dev : ndarray of shape (view.n_captions, n)
        Kernel rows of the pool captions of ``view`` against the training captions.
    view : RetrievalView
        The dev pools and their gold items.
    ranks : sequence of int or None
        Incomplete Cholesky ranks; ``None`` means the exact solver.
    reg, n_components, weight_power
        KCCA hyperparameters (see :class:`~kcca_desc.kcca.KCCA`).

    Returns
    -------
    list of dict
        Per rank: the solver's ``rank``, fit seconds ``fit_s``, the explained trace of both
        kernels and the result on ``view`` (:func:`~kcca_bench.result_record`: R@K,
        median and mean rank of annotation and search, with the per-query ranks).
    """
    rows = []
    for rank in ranks:
        method = "exact" if rank is None else "lowrank"
        model, seconds, _ = timed_with_peak_memory(
            lambda: KCCA(n_components=n_components, reg=reg, method=method, rank=rank,
                         weight_power=weight_power).fit(Kx, Ky)
        )
        scores = cosine_scores(*model.transform(Kx_dev, Ky_dev))
        params = {"rank": rank, "n_components": n_components, "reg": reg, "weight_power": weight_power}
        result = result_from_scores(scores, view, "KCCA exact" if rank is None else f"KCCA rank {rank}",
                                    params=params, timings={"fit": seconds})
        rows.append({"rank": rank, "fit_s": seconds,
                     "explained_trace": [model.explained_trace_x_, model.explained_trace_y_],
                     **result_record(result, view)})
    return rows


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--text-kernel", default="tri_sem")
    p.add_argument("--ranks", default=None, help="comma-separated ranks, 'full' for the exact solver "
                                                 "(default 500,1000,2000,full; quick 10,20,full)")
    p.add_argument("--reg", type=float, default=1.0)
    p.add_argument("--n-components", type=positive_int, default=None, help="default 64 (quick 8)")
    p.add_argument("--power", type=float, default=1.0)
    p.add_argument("--weight-power", type=float, default=0.0)
    add_output_arguments(p, "the synthetic data set, ranks 10 / 20 / exact, 8 components")
    args = fill_defaults(p.parse_args(argv), {"full": {"ranks": "500,1000,2000,full", "n_components": 64},
                                              "quick": {"ranks": "10,20,full", "n_components": 8}})
    ranks = [None if r == "full" else int(r) for r in args.ranks.split(",")]
    machine = machine_info()

    dataset = flickr8k_or_quick(args.data_root, args.quick)
    dev = dataset.view("dev")
    # The ranker builds (and caches) both kernels; its own exact fit is not used here.
    ranker = ImageSentenceRanker(text_kernel=args.text_kernel, power=args.power,
                                 n_components=(args.n_components,), regs=(args.reg,),
                                 image_kernel_params={"progress": False})
    ranker.fit(dataset.subset("train"))
    Kx = ranker.image_kernel_.train_gram()
    Ky = ranker._cached_text_kernel("gram", ranker.text_kernel_.train_gram)
    Kx_dev = ranker.image_kernel_.cross(dev.images)
    Ky_dev = ranker._query_text_kernel(dev.captions)
    rows = rank_sweep(Kx, Ky, Kx_dev, Ky_dev, dev, ranks, reg=args.reg, n_components=args.n_components,
                      weight_power=args.weight_power)
    out = {"dataset": dataset.name, "text_kernel": args.text_kernel, "reg": args.reg,
           "n_components": args.n_components, "power": args.power, "weight_power": args.weight_power,
           "rows": rows, "machine": machine}
    for row in rows:
        print(f"{row['system']}: fit {row['fit_s']:.1f} s, explained trace "
              f"{row['explained_trace'][0]:.3f} (images), {row['explained_trace'][1]:.3f} (captions)")
    print(format_table([Result.from_dict(row) for row in rows]))
    write_results(output_path(args, __file__), out, indent=1)
    return out


if __name__ == "__main__":
    run_main(main)
