"""Benchmark: choose the kernel options p, d and q of a KCCA system on the Flickr8K dev split.

Hodosh et al. (2013, §5) fix the image-kernel power p and the text-kernel diagonal multiplier d
per kernel pair. This script fits one :class:`~kcca_desc.ImageSentenceRanker` per (p, d), and
for each weight power q (projected dimension k weighted by ρ_k^q before the cosine) runs the
dev model selection and scores the Borda-fused system on dev. Only dev data is used, so the
chosen setting can be evaluated once on test by ``hodosh_table.py``. Every per-setting dev
figure is kept, to show whether the best (n, κ) lie inside the grid.

Writes ``benchmarks/results/hodosh_tuning.json`` and prints one line per (p, d, q).

Usage::

    python benchmarks/hodosh_tuning.py --data-root ../shared/flickr8k --text-kernel tri_sem
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

from kcca_desc import ImageSentenceRanker, load_dataset
from kcca_desc.evaluate import evaluate_scores

from _results import results_path, write_results

RESULTS = results_path("hodosh_tuning")


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--text-kernel", default="tri_sem")
    p.add_argument("--image-kernel", default="pyramid")
    p.add_argument("--powers", type=_floats, default=[1.0, 2.0, 3.0])
    p.add_argument("--diags", type=_floats, default=[1.0, 2.0])
    p.add_argument("--weight-powers", type=_floats, default=[0.0, 2.0, 4.0])
    p.add_argument("--n-components", type=lambda s: [int(v) for v in s.split(",")],
                   default=[16, 32, 64, 128, 256])
    p.add_argument("--regs", type=_floats, default=[0.01, 0.1, 1.0, 10.0, 100.0])
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)

    dataset = load_dataset("flickr8k", root=args.data_root)
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
            metrics = evaluate_scores(ranker.score(dev.images, dev.captions), dev)
            fused = {task: {k: metrics[task][k] for k in ("R@1", "R@5", "R@10", "median_rank")}
                     for task in ("annotation", "search")}
            total = sum(fused[t][k] for t in fused for k in ("R@1", "R@5", "R@10"))
            rows.append({"power": power, "diag": diag, "weight_power": q, "dev_fused": fused,
                         "sum_recall": total, "selected": ranker.selected_, "grid": ranker.dev_results_,
                         "fit_s": fit_s, "select_s": time.perf_counter() - t0})
            a, s = fused["annotation"], fused["search"]
            print(f"p={power:g} d={diag:g} q={q:g}: dev annotation {a['R@1']:.1f}/{a['R@5']:.1f}/{a['R@10']:.1f}"
                  f" med {a['median_rank']}, search {s['R@1']:.1f}/{s['R@5']:.1f}/{s['R@10']:.1f}"
                  f" med {s['median_rank']} (sum {total:.1f}; fit {fit_s:.0f} s)", flush=True)
        best = max(rows, key=lambda r: r["sum_recall"])
        out = {"text_kernel": args.text_kernel, "image_kernel": args.image_kernel, "rows": rows,
               "best": {k: best[k] for k in ("power", "diag", "weight_power", "dev_fused", "sum_recall")}}
        write_results(args.out, out, indent=1, default=lambda o: list(o) if isinstance(o, tuple) else str(o))
    print(f"best on dev: p={best['power']:g} d={best['diag']:g} q={best['weight_power']:g}")
    return out


if __name__ == "__main__":
    main()
