"""Benchmark: every offline encoder the toolkit runs, through the command line, on Flickr8K test beside Tri5Sem.

The offline encoders need no network and no weights of the user's own: MiniLM for captions
(``onnx:minilm``), and ViT-S/14 (``onnx:vit``) and EfficientNet-Lite0 (``efficientnet:lite0``)
for images. Each pair of a caption and an image encoder runs under each system the command line
offers over encoder features, with the command line's own defaults and nothing tuned on dev:
``--method cca`` (linear CCA), ``--method kcca`` (low-rank RBF kernel CCA) and ``--method nn``
(NN5 over the cosine of the features). The runs are ``python -m kcca_desc.fit`` itself
(:func:`kcca_desc.cli.fit.main`, its results file read back), test split, both protocols, each
timed from the command's start to its results file. ``--method encoder`` (an encoder's own
cosine) needs one model that embeds both sides in one space; no offline encoder does, which the
record states (``encoder_cosine``) from the encoders themselves.

Tri5Sem's stored figures (hodosh protocol and its karpathy run, ``benchmarks/hodosh_table.py``)
are copied beside them from ``benchmarks/results/hodosh_table.json``, not re-run.

Writes ``benchmarks/results/offline_encoders.json`` (every result with its per-query ranks) and
prints the table.

Usage::

    python benchmarks/offline_encoders.py --data-root ../shared/flickr8k
    python benchmarks/offline_encoders.py --quick     # the 50-image synthetic data set, smoke test
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from kcca_desc.adapters.families import build_encoder
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             result_record, write_results)
from kcca_desc.data import PROTOCOLS
from kcca_desc.evaluate import Result, format_table, load_results
from kcca_desc.cli.fit import main as fit_main

#: The offline encoders of each side (:mod:`kcca_desc.adapters.families` specs).
TEXT_ENCODERS = ("onnx:minilm",)
IMAGE_ENCODERS = ("onnx:vit", "efficientnet:lite0")

#: The command line's systems over encoder features.
METHODS = ("cca", "kcca", "nn")

#: Where Tri5Sem's stored figures are, and under which keys.
HODOSH_TABLE = Path(__file__).resolve().parent / "results" / "hodosh_table.json"
TRI_SEM = "tri_sem"


def encoder_cosine() -> dict:
    """Whether any offline encoder embeds images and captions in one space (``--method encoder``)."""
    encoders = {spec: build_encoder(spec, cache=False) for spec in dict.fromkeys(TEXT_ENCODERS + IMAGE_ENCODERS)}
    joint = [spec for spec, e in encoders.items() if e.joint_space and set(e.modalities) == {"image", "text"}]
    sides = {spec: list(e.modalities) for spec, e in encoders.items()}
    return {"joint_encoders": joint, "modalities": sides,
            "note": ("--method encoder runs " + ", ".join(joint)) if joint else
                    ("no row: --method encoder scores by a joint image-text model's own cosine, and no offline "
                     "encoder is one (each embeds one modality), so offline encoders are compared only "
                     "through the systems over their features")}


def run_system(method: str, text: str, image: str, data_args: list[str], scratch: Path) -> dict:
    """``python -m kcca_desc.fit`` for one system, both protocols; its results file read back."""
    out = scratch / f"{method}_{image.replace(':', '_')}.json"
    argv = [*data_args, "--protocol", "both", "--split", "test", "--method", method,
            "--text-encoder", text, "--image-encoder", image, "-q"]
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):  # its table is printed once, with the others
        code = fit_main([*argv, "--out", str(out)])
    wall_s = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"python -m kcca_desc.fit {' '.join(argv)} exited with {code}:\n{printed.getvalue()}")
    return {"method": method, "text_encoder": text, "image_encoder": image, "argv": argv, "wall_s": wall_s,
            "results": load_results(out)}


def tri_sem_reference(path: Path, views: dict) -> dict:
    """Tri5Sem's stored results of both protocols from ``hodosh_table.json``, checked against ``views``.

    Raises
    ------
    ValueError
        When a stored result was measured on other queries than ``views`` (protocol -> view).
    """
    stored = json.loads(path.read_text())
    results = {"hodosh": stored["systems"][TRI_SEM]["result"], "karpathy": stored["karpathy"][TRI_SEM]["result"]}
    for protocol, result in results.items():
        view = views[protocol]
        measured = (result["dataset"], result["split"], result["protocol"],
                    result["annotation"]["n_queries"], result["search"]["n_queries"])
        ours = (view.dataset, view.split, view.protocol, view.n_images, view.n_captions)
        if measured != ours:
            raise ValueError(f"{path}: the stored {TRI_SEM} {protocol} result was measured on {measured}, "
                             f"not on this run's queries {ours}; re-run benchmarks/hodosh_table.py")
    return {"source": str(path.relative_to(path.parents[2])), "system": TRI_SEM,
            "settings": stored["settings"], "results": [results[p] for p in PROTOCOLS]}


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--bridge-components", type=positive_int,
                   help="canonical dimensions of cca and kcca (default: the command line's; quick 8)")
    add_output_arguments(p, "the 50-image synthetic data set (whose 30 training images allow 29 canonical "
                            "dimensions), no Tri5Sem reference (its figures are Flickr8K's)")
    args = fill_defaults(p.parse_args(argv), {"full": {}, "quick": {"bridge_components": 8}})
    dataset = flickr8k_or_quick(args.data_root, args.quick)
    # The command line loads the same data: the quick data set is the CLI's synthetic one of that size.
    data_args = (["--data", "synthetic", "--n-images", str(len(dataset.image_ids)), "--seed", "0"] if args.quick else
                 ["--data", "flickr8k", *(["--data-root", args.data_root] if args.data_root else [])])
    if args.bridge_components is not None:
        data_args += ["--bridge-components", str(args.bridge_components)]
    views = {protocol: dataset.view("test", protocol) for protocol in PROTOCOLS}
    out = {"machine": machine_info(), "dataset": "synthetic" if args.quick else "flickr8k",
           "text_encoders": TEXT_ENCODERS, "image_encoders": IMAGE_ENCODERS, "methods": METHODS,
           "encoder_cosine": encoder_cosine()}
    start = time.perf_counter()
    systems = []
    with tempfile.TemporaryDirectory() as scratch:
        for image, text, method in itertools.product(IMAGE_ENCODERS, TEXT_ENCODERS, METHODS):
            run = run_system(method, text, image, data_args, Path(scratch))
            print(f"{run['results'][0].system}: {run['wall_s']:.0f} s")
            systems.append(run)
    out["wall_s"] = time.perf_counter() - start
    # The record keeps each result's figures and per-query ranks; the top-K lists of the command's
    # results file (for galleries) would make it over ten times larger.
    out["systems"] = [{**run, "results": [result_record(replace(r, queries={}), views[r.protocol])
                                          for r in run["results"]]}
                      for run in systems]
    if args.quick:
        out["reference"] = {"system": TRI_SEM, "results": [],
                            "note": "quick run: Tri5Sem's stored figures are of Flickr8K, not of these queries"}
    else:
        out["reference"] = tri_sem_reference(HODOSH_TABLE, views)
    print(format_table([r for run in systems for r in run["results"]]
                       + [Result.from_dict(r) for r in out["reference"]["results"]]))
    write_results(output_path(args, __file__), out, indent=1)
    return out


if __name__ == "__main__":
    run_main(main)
