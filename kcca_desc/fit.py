"""Command line: fit a system, evaluate it and print a paper-style results table.

Examples
--------
The paper's best system on the embedded synthetic data (the default)::

    python -m kcca_desc.fit --text-kernel tri_sem

On Flickr8K, both protocols, the nearest-neighbour baseline::

    python -m kcca_desc.fit --data flickr8k --data-root /path/to/flickr8k --method nn --protocol both
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Sequence

from .cache import atomic_write_text
from .data.dataset import PROTOCOLS
from .data.registry import DATASETS, load_dataset
from .evaluate.harness import evaluate_fitted
from .evaluate.results import format_table, to_csv, to_latex, to_markdown, save_results
from .image.features import ImageFeaturizer
from .image.kernel import IMAGE_KERNELS
from .methods.nn import NearestNeighbour
from .methods.ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, ImageSentenceRanker
from .text.named_kernels import TEXT_KERNELS

__all__ = ["main", "build_parser"]

METHODS = ("kcca", "nn")
# The featurizer's own sampling defaults, so the CLI cannot drift from them.
_SAMPLING = {name: ImageFeaturizer().get_params()[name] for name in ("pixel_step", "sift_step")}
NN_TEXT = ("idf_f1", "f1")


def _choice(kind: str, available: Sequence[str]):
    """argparse type that rejects unknown names with the list of available ones."""
    def parse(value: str) -> str:
        if value not in available:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {value!r}; available: {', '.join(available)}")
        return value
    parse.__name__ = kind
    return parse


def _number_list(cast):
    def parse(value: str):
        try:
            items = [cast(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of numbers, got {value!r}")
        if not items:
            raise argparse.ArgumentTypeError("the list is empty")
        return items
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kcca_desc.fit",
        description="Fit an image-sentence ranking system (Hodosh, Young & Hockenmaier 2013), "
                    "evaluate it on a retrieval protocol and print a results table.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    g = p.add_argument_group("data")
    g.add_argument("--data", type=_choice("data set", DATASETS), default="synthetic",
                   help=f"data set: {', '.join(DATASETS)} (synthetic is generated from --seed)")
    g.add_argument("--data-root", default=None,
                   help="Flickr8K directory (else $KCCA_DESC_FLICKR8K), or the JSON/TSV file for json/tsv")
    g.add_argument("--image-root", default=None, help="image directory for --data json/tsv")
    g.add_argument("--n-images", type=int, default=None,
                   help="synthetic data set size (default: the generator's, 1000 images)")
    g.add_argument("--protocol", type=_choice("protocol", PROTOCOLS + ("both",)), default="hodosh",
                   help="evaluation protocol: hodosh (caption #2 only), karpathy (all 5 captions) or both")
    g.add_argument("--split", default="test", help="split to evaluate on")

    g = p.add_argument_group("system")
    g.add_argument("--method", type=_choice("method", METHODS), default="kcca",
                   help="kcca: KCCA with dev-set model selection and Borda fusion; nn: nearest neighbour")
    g.add_argument("--text-kernel", type=_choice("text kernel", tuple(TEXT_KERNELS)), default="tri_sem",
                   help="text kernel for kcca (and for nn with --nn-text kernel): " + ", ".join(TEXT_KERNELS))
    g.add_argument("--nn-text", type=_choice("NN text similarity", NN_TEXT + ("kernel",)), default="idf_f1",
                   help="nn text similarity: idf_f1 (NN5 idf F1), f1, or kernel (= --text-kernel)")
    g.add_argument("--image-kernel", type=_choice("image kernel", tuple(IMAGE_KERNELS)), default="pyramid",
                   help="image kernel: " + ", ".join(IMAGE_KERNELS))
    g.add_argument("--levels", type=int, default=2, help="spatial pyramid levels L")
    g.add_argument("--colour-words", type=int, default=128, help="colour codebook size")
    g.add_argument("--texture-words", type=int, default=256, help="texture codebook size")
    g.add_argument("--sift-words", type=int, default=256, help="SIFT codebook size")
    g.add_argument("--pixel-step", type=int, default=_SAMPLING["pixel_step"],
                   help="colour and texture sampled every this many pixels (1: every pixel, ~4x slower, "
                        "better on small images)")
    g.add_argument("--sift-step", type=int, default=_SAMPLING["sift_step"], help="dense SIFT grid spacing in pixels")
    g.add_argument("--power", type=float, default=1.0, help="image kernel power p")
    g.add_argument("--diag", type=float, default=1.0, help="text kernel diagonal multiplier d (>= 1)")
    g.add_argument("--n-components", type=_number_list(int), default=list(DEFAULT_N_COMPONENTS),
                   help="grid of KCCA dimensions n (comma-separated)")
    g.add_argument("--regs", type=_number_list(float), default=list(DEFAULT_REGS),
                   help="grid of KCCA regularisation values (comma-separated)")
    g.add_argument("--n-select", type=int, default=5,
                   help="models kept per selection metric (R@1, R@5, R@10) for Borda fusion")
    g.add_argument("--weight-power", type=float, default=0.0,
                   help="weight projected dimensions by canonical correlation ** q before the cosine")
    g.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")

    g = p.add_argument_group("output")
    g.add_argument("--out", default=None,
                   help="write results as JSON to this file, plus .md, .csv and .tex tables beside it")
    g.add_argument("-v", "--verbose", action="store_true", help="log progress")
    return p


def _make_method(args):
    image_params = {"levels": args.levels,
                    "n_words": {"colour": args.colour_words, "texture": args.texture_words,
                                "sift": args.sift_words}}
    sampling = {"pixel_step": args.pixel_step, "sift_step": args.sift_step}
    if sampling != _SAMPLING:
        # Only non-default sampling enters the parameters, so default runs share cached features.
        image_params["featurizer_params"] = sampling
    if args.method == "nn":
        text = args.text_kernel if args.nn_text == "kernel" else args.nn_text
        return NearestNeighbour(text_similarity=text, image_kernel=args.image_kernel,
                                image_kernel_params=image_params, random_state=args.seed)
    return ImageSentenceRanker(
        image_kernel=args.image_kernel, text_kernel=args.text_kernel, power=args.power, diag=args.diag,
        n_components=args.n_components, regs=args.regs, n_select=args.n_select,
        weight_power=args.weight_power, image_kernel_params=image_params, random_state=args.seed,
        cache=not args.no_cache,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s")
    try:
        dataset = load_dataset(args.data, root=args.data_root, seed=args.seed,
                               n_images=args.n_images, image_root=args.image_root)
    except (OSError, KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
    method = _make_method(args)
    train = dataset.subset("train")
    t0 = time.perf_counter()
    if isinstance(method, ImageSentenceRanker):
        multi = len(args.n_components) * len(args.regs) > 1
        # Models are selected on dev under the first protocol evaluated.
        method.fit(train, dev=dataset.view("dev", protocols[0]) if multi else None)
    else:
        method.fit(train)
    fit_s = time.perf_counter() - t0

    results = []
    for protocol in protocols:
        result = evaluate_fitted(method, dataset.view(args.split, protocol), system=method.name,
                                 params=vars(args), timings={"fit": fit_s,
                                                             **getattr(method, "timings_s_", {})})
        results.append(result)
    print(format_table(results))
    if args.out:
        out = Path(args.out)
        save_results(results, out)
        atomic_write_text(out.with_suffix(".md"), to_markdown(results))
        atomic_write_text(out.with_suffix(".csv"), to_csv(results))
        atomic_write_text(out.with_suffix(".tex"), to_latex(results))
        print(f"wrote {out} (+ .md, .csv, .tex)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
