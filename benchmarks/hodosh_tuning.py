"""Benchmark: choose the kernel options p, d and q of a KCCA system on the Flickr8K dev split.

Hodosh et al. (2013, Section 4.1.3) fix the image-kernel power p and the text-kernel diagonal
multiplier d per kernel pair. This script fits one :class:`~kcca_desc.ImageSentenceRanker` per
(p, d), and for each weight power q (projected dimension k weighted by ρ_k^q before the cosine,
our addition: ``docs/design.md``) runs the dev model selection and scores the Borda-fused
system on dev. Only dev data is used, so the chosen setting can be evaluated once on test by
``hodosh_table.py``. The fused dev result of each (p, d, q) is kept with its per-query ranks, and
every (n, κ) model's dev figures beside it, to show whether the best (n, κ) lie inside the grid.

Writes ``benchmarks/results/hodosh_tuning.json`` and prints one line per (p, d, q).

Usage::

    python benchmarks/hodosh_tuning.py --data-root ../shared/flickr8k --text-kernel tri_sem
    python benchmarks/hodosh_tuning.py --quick     # the synthetic data set, 2 x 1 x 2 settings
"""

from __future__ import annotations

import itertools
import os
import time

from kcca_desc import ImageSentenceRanker
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             result_record, write_results)
from kcca_desc.evaluate import result_from_scores
from kcca_desc.methods import recall_sum, select_best

#: Defaults of the grids, of a full and of a quick run (30 training images: n must stay below 30).
DEFAULTS = {
    "full": {"powers": [1.0, 2.0, 3.0], "diags": [1.0, 2.0], "weight_powers": [0.0, 2.0, 4.0],
             "n_components": [16, 32, 64, 128, 256], "regs": [0.01, 0.1, 1.0, 10.0, 100.0]},
    "quick": {"powers": [1.0, 2.0], "diags": [1.0], "weight_powers": [0.0, 2.0], "n_components": [4, 8],
              "regs": [0.1, 1.0]},
}


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"),
                   help="the Flickr8K directory (default: $KCCA_DESC_FLICKR8K)")
    p.add_argument("--text-kernel", default="tri_sem", help="text kernel of the system tuned (default: tri_sem)")
    p.add_argument("--image-kernel", default="pyramid", help="image kernel of the system tuned (default: pyramid)")
    p.add_argument("--powers", type=_floats, help="image-kernel powers p (default 1,2,3)")
    p.add_argument("--diags", type=_floats, help="text-kernel diagonal multipliers d (default 1,2)")
    p.add_argument("--weight-powers", type=_floats, help="weight powers q (default 0,2,4)")
    p.add_argument("--n-components", type=lambda s: [int(v) for v in s.split(",")],
                   help="grid of n (default 16,32,64,128,256)")
    p.add_argument("--regs", type=_floats, help="grid of κ (default 0.01,0.1,1,10,100)")
    add_output_arguments(p, "the synthetic data set, p in 1,2, d = 1, q in 0,2, a 2 x 2 (n, κ) grid")
    args = p.parse_args(argv)
    fill_defaults(args, DEFAULTS)
    out_path, machine = output_path(args, __file__), machine_info()

    dataset = flickr8k_or_quick(args.data_root, args.quick)
    train, dev = dataset.subset("train"), dataset.view("dev")
    rows = []
    for power, diag in itertools.product(args.powers, args.diags):
        ranker = ImageSentenceRanker(image_kernel=args.image_kernel, text_kernel=args.text_kernel,
                                     power=power, diag=diag, n_components=args.n_components,
                                     regs=args.regs, image_kernel_params={"progress": False})
        t0 = time.perf_counter()
        ranker.fit(train, dev=dev)
        fit_s = time.perf_counter() - t0
        for q in args.weight_powers:
            t0 = time.perf_counter()
            ranker.set_params(weight_power=q).select(dev)
            system = f"{args.text_kernel} p={power:g} d={diag:g} q={q:g}, fused"
            fused = result_record(result_from_scores(ranker.score(dev.images, dev.captions), dev, system,
                                                     params=ranker.get_params()), dev)
            total = recall_sum(fused)
            rows.append({"power": power, "diag": diag, "weight_power": q, "dev_fused": fused,
                         "sum_recall": total, "selected": ranker.selected_, "grid": ranker.dev_results_,
                         "fit_s": fit_s, "select_s": time.perf_counter() - t0})
            a, s = fused["annotation"], fused["search"]
            print(f"p={power:g} d={diag:g} q={q:g}: dev annotation {a['R@1']:.1f}/{a['R@5']:.1f}/{a['R@10']:.1f}"
                  f" med {a['median_rank']}, search {s['R@1']:.1f}/{s['R@5']:.1f}/{s['R@10']:.1f}"
                  f" med {s['median_rank']} (sum {total:.1f}; fit {fit_s:.0f} s)", flush=True)
        best, _ = select_best(rows, lambda r: r["sum_recall"])
        out = {"dataset": dataset.name, "text_kernel": args.text_kernel, "image_kernel": args.image_kernel,
               "machine": machine, "rows": rows,
               "best": {k: best[k] for k in ("power", "diag", "weight_power", "dev_fused", "sum_recall")}}
        write_results(out_path, out, indent=1, default=lambda o: list(o) if isinstance(o, tuple) else str(o))
    print(f"best on dev: p={best['power']:g} d={best['diag']:g} q={best['weight_power']:g}")
    return out


if __name__ == "__main__":
    run_main(main)
