"""Time the data layer: synthetic generation, Flickr8K captions/splits and judgments.

Writes ``benchmarks/results/data_loading.json`` and prints the figures::

    python benchmarks/data_loading.py [--flickr8k DIR] [--repeats 3]
    python benchmarks/data_loading.py --quick      # 20 synthetic images, no Flickr8K

Each figure is the median wall time of ``--repeats`` runs.  The Flickr8K
figures are skipped when the data is not found (``--flickr8k`` or
``$KCCA_DESC_FLICKR8K``) and in a quick run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, median_time, output_path, write_results
from kcca_desc.data import load_flickr8k, load_flickr8k_judgments, make_synthetic


def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--flickr8k", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    parser.add_argument("--repeats", type=positive_int, help="timed runs per figure (default 3; quick 1)")
    add_output_arguments(parser, "20 synthetic images of 96 px, one repeat, no Flickr8K")
    args = fill_defaults(parser.parse_args(argv), {"full": {"repeats": 3}, "quick": {"repeats": 1}})
    n_synthetic, sizes = (20, (96,)) if args.quick else (1000, (96, 224))
    repeats = args.repeats

    figures: dict[str, object] = {"machine": machine_info(), "repeats": repeats}
    for size in sizes:
        key = f"synthetic_{n_synthetic}x{size}px_s"
        figures[key] = median_time(lambda s=size: make_synthetic(n_images=n_synthetic, image_size=s), repeats)
        print(f"make_synthetic({n_synthetic} images, {size}x{size}): {figures[key]:.2f} s")

    data = make_synthetic(n_images=n_synthetic)
    words = [w for caps in data.captions for c in caps for w in c.lower().split()]
    figures["synthetic_caption_vocabulary"] = len(set(words))
    figures["synthetic_mean_caption_words"] = float(np.mean([len(c.split()) for caps in data.captions for c in caps]))

    if not args.quick and args.flickr8k and Path(args.flickr8k).is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the known spurious entry
            for captions in ("raw", "lemma"):
                key = f"flickr8k_{captions}_load_s"
                figures[key] = median_time(lambda c=captions: load_flickr8k(args.flickr8k, captions=c), repeats)
                print(f"load_flickr8k(captions={captions!r}): {figures[key]:.3f} s")
        figures["flickr8k_judgments_load_s"] = median_time(lambda: load_flickr8k_judgments(args.flickr8k),
                                                           repeats)
        print(f"load_flickr8k_judgments: {figures['flickr8k_judgments_load_s']:.3f} s")
    elif not args.quick:
        print("Flickr8K not found: pass --flickr8k DIR or set KCCA_DESC_FLICKR8K")

    write_results(output_path(args, __file__), figures)
    return figures


if __name__ == "__main__":
    run_main(main)
