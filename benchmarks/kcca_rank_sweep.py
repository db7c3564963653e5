"""Benchmark: Flickr8K dev retrieval of KCCA as a function of the low-rank solver's rank.

The image kernels are high-rank, so the incomplete-Cholesky solver's rank trades accuracy for
speed. On the real Flickr8K kernels (pyramid image kernel, a named text kernel; 6,000 training
images), one KCCA setting (n, κ) is fitted with ranks 500, 1,000, 2,000 and the exact solver,
and each ranks the 1,000 dev images against their 1,000 ``#2`` captions
(:func:`benchmarks.kcca.rank_sweep`).

Writes ``benchmarks/results/kcca_rank_sweep.json`` and prints one line per rank.

Usage::

    python benchmarks/kcca_rank_sweep.py --data-root ../shared/flickr8k --text-kernel tri_sem
"""

from __future__ import annotations

import argparse
import json
import os

from _results import results_path, write_results
from kcca import rank_sweep

from kcca_desc import ImageSentenceRanker, load_dataset

RESULTS = results_path("kcca_rank_sweep")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--text-kernel", default="tri_sem")
    p.add_argument("--ranks", default="500,1000,2000,full")
    p.add_argument("--reg", type=float, default=1.0)
    p.add_argument("--n-components", type=int, default=64)
    p.add_argument("--power", type=float, default=1.0)
    p.add_argument("--weight-power", type=float, default=0.0)
    args = p.parse_args(argv)
    ranks = [None if r == "full" else int(r) for r in args.ranks.split(",")]

    dataset = load_dataset("flickr8k", root=args.data_root)
    dev = dataset.view("dev")
    # The ranker builds (and caches) both kernels; its own exact fit is not used here.
    ranker = ImageSentenceRanker(text_kernel=args.text_kernel, power=args.power, n_components=(args.n_components,),
                                 regs=(args.reg,), image_kernel_params={"progress": False})
    ranker.fit(dataset.subset("train"))
    Kx = ranker.image_kernel_.train_gram()
    Ky = ranker._cached_text_kernel("gram", ranker.text_kernel_.train_gram)
    Kx_dev = ranker.image_kernel_.cross(dev.images)
    Ky_dev = ranker._query_text_kernel(dev.captions)
    rows = rank_sweep(Kx, Ky, Kx_dev, Ky_dev, ranks, reg=args.reg, n_components=args.n_components,
                      weight_power=args.weight_power)
    out = {"text_kernel": args.text_kernel, "reg": args.reg, "n_components": args.n_components,
           "power": args.power, "weight_power": args.weight_power, "rows": rows}
    for row in rows:
        print(json.dumps(row))
    write_results(RESULTS, out, indent=1)
    return out


if __name__ == "__main__":
    main()
