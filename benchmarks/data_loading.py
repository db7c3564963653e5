"""Time the data layer: synthetic generation, Flickr8K captions/splits and judgments.

Writes ``benchmarks/results/data_loading.json`` and prints the figures::

    python benchmarks/data_loading.py [--flickr8k DIR] [--repeats 3]

Each figure is the median wall time of ``--repeats`` runs.  The Flickr8K
figures are skipped when the data is not found (``--flickr8k`` or
``$KCCA_DESC_FLICKR8K``).
"""

from __future__ import annotations

import argparse
import os
import platform
import warnings
from pathlib import Path

import numpy as np

from kcca_desc.data import load_flickr8k, load_flickr8k_judgments, make_synthetic

from _results import median_time, results_path, write_results

RESULTS = results_path("data_loading")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flickr8k", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    figures: dict[str, object] = {}
    for n_images, size in [(1000, 96), (1000, 224)]:
        key = f"synthetic_{n_images}x{size}px_s"
        figures[key] = median_time(lambda n=n_images, s=size: make_synthetic(n_images=n, image_size=s), args.repeats)
        print(f"make_synthetic({n_images} images, {size}x{size}): {figures[key]:.2f} s")

    data = make_synthetic(n_images=1000)
    words = [w for caps in data.captions for c in caps for w in c.lower().split()]
    figures["synthetic_caption_vocabulary"] = len(set(words))
    figures["synthetic_mean_caption_words"] = float(np.mean([len(c.split()) for caps in data.captions for c in caps]))

    if args.flickr8k and Path(args.flickr8k).is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the known spurious entry
            for captions in ("raw", "lemma"):
                key = f"flickr8k_{captions}_load_s"
                figures[key] = median_time(lambda c=captions: load_flickr8k(args.flickr8k, captions=c), args.repeats)
                print(f"load_flickr8k(captions={captions!r}): {figures[key]:.3f} s")
        figures["flickr8k_judgments_load_s"] = median_time(lambda: load_flickr8k_judgments(args.flickr8k),
                                                           args.repeats)
        print(f"load_flickr8k_judgments: {figures['flickr8k_judgments_load_s']:.3f} s")
    else:
        print("Flickr8K not found: pass --flickr8k DIR or set KCCA_DESC_FLICKR8K")

    figures["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "load_average_1min": os.getloadavg()[0]}
    figures["repeats"] = args.repeats
    write_results(RESULTS, figures)


if __name__ == "__main__":
    main()
