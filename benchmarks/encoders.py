"""Benchmark: throughput of each encoder family's adapter against the library called directly.

For every PyTorch family whose extra is installed (open_clip, sentence-transformers, transformers,
timm), a randomly initialised model of a small architecture (OpenCLIP ViT-S/32; a MiniLM-L6-sized
BERT; a transformers CLIP with ViT-S/32-sized towers; timm ``vit_small_patch32_224``; see
:mod:`kcca_bench.random_models` — throughput depends on the architecture, not the weights)
embeds the same images (``images_per_s``) and captions (``captions_per_s``) twice per repeat:
through the adapter (``embed_images`` / ``embed_texts``, cache off) and through the library's own
batched call on the same model object, the same preprocessing and the same batches (PIL image
from the array, the model's transform, ``torch.stack``, the forward pass; the tokenizer and the
forward pass).  Both run on ``--threads`` torch threads under ``torch.inference_mode``; the two
are interleaved in each repeat (alternately A-B and B-A) and the medians of the repeats are reported
with the adapter's overhead, 100 (t_adapter / t_library - 1) %, in wall time and in the process's
CPU time (less sensitive to other jobs on a shared machine; the load average is recorded).  Both paths' outputs are compared too.

Writes ``benchmarks/results/encoders.json`` and prints a table.

Usage::

    python benchmarks/encoders.py                 # small architectures, 2 threads, 3 repeats
    python benchmarks/encoders.py --quick         # tiny architectures, 1 repeat
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kcca_desc.adapters.families import build_encoder
from kcca_desc.adapters.onnx_models import l2_normalize
from kcca_desc.adapters.torch_base import pooled_features
from kcca_desc.adapters.torchvision_compat import import_torch_library
from kcca_desc._core.errors import MissingDependencyError
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, output_path, write_results
from kcca_bench import random_models
from kcca_desc.data.images import ArrayImages

#: Library import per family (the benchmark skips a family whose import fails, with the reason).
LIBRARIES = {"open_clip": "open_clip", "st": "sentence_transformers", "hf": "transformers", "timm": "timm"}
#: The setup.cfg extra of each family.
EXTRAS = {"open_clip": "open-clip", "st": "sentence-transformers", "hf": "transformers", "timm": "timm"}


# ------------------------------------------------------------ the libraries called directly
def _open_clip_images(encoder, arrays, torch, pil):
    model, preprocess, _ = encoder.loaded
    return model.encode_image(torch.stack([preprocess(pil(a)) for a in arrays]), normalize=True).numpy()


def _open_clip_texts(encoder, texts, torch, pil):
    model, _, tokenizer = encoder.loaded
    return model.encode_text(tokenizer(texts), normalize=True).numpy()


def _st_texts(encoder, texts, torch, pil):
    return encoder.loaded.encode(texts, batch_size=len(texts), show_progress_bar=False)


def _hf_images(encoder, arrays, torch, pil):
    bundle = encoder.loaded
    pixels = bundle["image_processor"]([pil(a) for a in arrays], return_tensors="pt")["pixel_values"]
    return l2_normalize(pooled_features(bundle["model"].get_image_features(pixel_values=pixels)).numpy())


def _hf_texts(encoder, texts, torch, pil):
    bundle = encoder.loaded
    inputs = bundle["tokenizer"](texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    return l2_normalize(pooled_features(bundle["model"].get_text_features(**inputs)).numpy())


def _timm_images(encoder, arrays, torch, pil):
    model, _, transform = encoder.loaded
    return model(torch.stack([transform(pil(a)) for a in arrays])).numpy()


#: family -> (spec builder(directory, size), direct image call or None, direct text call or None)
FAMILIES = {
    "open_clip": (lambda d, size: random_models.open_clip_spec(d, size), _open_clip_images, _open_clip_texts),
    "st": (lambda d, size: "st:" + str(random_models.sentence_transformer_dir(d / "st", size)), None, _st_texts),
    "hf": (lambda d, size: "hf:" + str(random_models.clip_dir(d / "clip", size)), _hf_images, _hf_texts),
    "timm": (lambda d, size: random_models.timm_weights(d, size), _timm_images, None),
}


def inputs(n_images: int, n_texts: int, seed: int = 0) -> tuple[ArrayImages, list[str]]:
    """Random RGB images of a Flickr8K-like size (375 x 500) and captions of 8-14 words."""
    rng = np.random.default_rng(seed)
    images = ArrayImages([rng.integers(0, 256, (375, 500, 3), dtype=np.uint8) for _ in range(n_images)],
                         [str(i) for i in range(n_images)])
    words = random_models.WORDS[5:]
    texts = [" ".join(rng.choice(words, rng.integers(8, 15))) + f" {i}" for i in range(n_texts)]
    return images, texts


def measure(family: str, directory: Path, args) -> dict:
    """Adapter and direct throughput of one family, medians over the repeats."""
    torch = importlib.import_module("torch")
    from PIL import Image

    build, direct_images, direct_texts = FAMILIES[family]
    spec = build(directory, args.size)
    encoder = build_encoder(spec, batch_size=args.batch_size, n_threads=args.threads, cache=False)
    images, texts = inputs(args.n_images, args.n_texts)
    arrays = [images.load(i) for i in range(len(images))]

    def library(call, items):
        def run():
            before = torch.get_num_threads()
            torch.set_num_threads(args.threads)
            try:
                with torch.inference_mode():
                    return np.concatenate([call(encoder, items[s:s + args.batch_size], torch, Image.fromarray)
                                           for s in range(0, len(items), args.batch_size)])
            finally:
                torch.set_num_threads(before)
        return run

    cases = {}
    if direct_images is not None:
        cases["images"] = (lambda: encoder.embed_images(images), library(direct_images, arrays), len(images))
    if direct_texts is not None:
        cases["captions"] = (lambda: encoder.embed_texts(texts), library(direct_texts, texts), len(texts))
    out = {"spec": spec, "embedding_dim": encoder.dim}
    for kind, (adapter, direct, n) in cases.items():
        # Warm-up (first-call allocations, lazy initialisation) outside the timings; outputs compared.
        difference = float(np.max(np.abs(adapter() - direct())))
        times = {"adapter": [], "library": []}
        cpu = {"adapter": [], "library": []}
        for repeat in range(args.repeats):
            # A-B then B-A: a load that drifts during a repeat weighs on both paths alike.
            order = (("adapter", adapter), ("library", direct))
            for name, call in order if repeat % 2 == 0 else order[::-1]:
                start, start_cpu = time.perf_counter(), time.process_time()
                call()
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
        median = {name: statistics.median(t) for name, t in times.items()}
        median_cpu = {name: statistics.median(t) for name, t in cpu.items()}
        out[f"{kind}_per_s"] = {name: n / s for name, s in median.items()}
        out[f"{kind}_seconds"] = times
        out[f"{kind}_cpu_seconds"] = cpu
        out[f"{kind}_adapter_overhead_pct"] = 100.0 * (median["adapter"] / median["library"] - 1.0)
        out[f"{kind}_adapter_overhead_cpu_pct"] = 100.0 * (median_cpu["adapter"] / median_cpu["library"] - 1.0)
        out[f"{kind}_max_abs_difference"] = difference
    return out


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    p.add_argument("--threads", type=positive_int, default=2, help="torch threads of both paths")
    p.add_argument("--batch-size", type=positive_int, default=32)
    p.add_argument("--n-images", type=positive_int, help="images embedded per repeat (default 32; quick 8)")
    p.add_argument("--n-texts", type=positive_int, help="captions embedded per repeat (default 128; quick 32)")
    p.add_argument("--repeats", type=positive_int, help="interleaved repeats, medians reported (default 3; quick 1)")
    p.add_argument("--size", choices=list(random_models.SIZES), help="architectures (default small; quick tiny)")
    add_output_arguments(p, "tiny architectures, 8 images, 32 captions, one repeat")
    args = fill_defaults(p.parse_args(argv), {
        "full": {"n_images": 32, "n_texts": 128, "repeats": 3, "size": "small"},
        "quick": {"n_images": 8, "n_texts": 32, "repeats": 1, "size": "tiny"}})
    record = {"machine": machine_info(), "load_average_1_5_15_min_at_start": list(os.getloadavg()),
              "settings": {k: getattr(args, k) for k in ("threads", "batch_size", "n_images", "n_texts", "repeats",
                                                          "size")},
              "families": {}, "unavailable": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families:
            try:
                # The adapters' own import, which copes with a torchvision whose operators do not load.
                import_torch_library(LIBRARIES[family], EXTRAS[family], f"the {family} family")
            except MissingDependencyError as exc:
                record["unavailable"][family] = f"import failed: {exc}"
                print(f"{family}: unavailable ({exc})")
                continue
            record["families"][family] = row = measure(family, Path(tmp) / family, args)
            row["versions"] = {name: importlib.import_module(name).__version__ for name in ("torch", LIBRARIES[family])}
            for kind in ("images", "captions"):
                if f"{kind}_per_s" in row:
                    rate = row[f"{kind}_per_s"]
                    print(f"{family:10s} {kind:9s} adapter {rate['adapter']:8.1f}/s  library {rate['library']:8.1f}/s  "
                          f"overhead {row[f'{kind}_adapter_overhead_pct']:+5.1f}% wall, "
                          f"{row[f'{kind}_adapter_overhead_cpu_pct']:+5.1f}% cpu  "
                          f"(max |diff| {row[f'{kind}_max_abs_difference']:.1e})", flush=True)
            # Written after every family, so that a family that fails keeps the others' figures.
            save(record, args)
    save(record, args)
    return record


def save(record: dict, args: argparse.Namespace) -> None:
    # The machine is shared: its load says how far the wall times are from an idle machine's.
    record["load_average_1_5_15_min_at_end"] = list(os.getloadavg())
    write_results(output_path(args, __file__), record)


if __name__ == "__main__":
    run_main(main)
