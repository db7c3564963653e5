"""Neural encoders in the KCCA harness: feature bridges, the seed papers' trainable models, their tasks.

MiniLM caption embeddings and frozen image features (by default EfficientNet-Lite0's 1,280-d
ImageNet features, the best of the offline survey ``benchmarks/image_encoders.py``; with
``--image-features vit`` the ViT-S/14 class and mean patch tokens) are bridged with regularised
linear CCA and with RBF-kernel KCCA (the project's KCCA estimator, incomplete Cholesky), trained
on the 30,000 Flickr8K train image–caption pairs, 128 canonical dimensions weighted by their
correlations raised to a power p; the regulariser, p (and the KCCA bandwidth) are chosen on dev
(sum of R@1/5/10 over both tasks and, by default, both protocols' dev views) and the chosen
models are evaluated on test under both protocols, with bootstrap intervals.  The seed papers'
trainable systems (Kiros VSE with the summed and the VSE++ hardest-negative loss, Merkx & Frank
char-GRU, and Rei's relevance scorer with its ablation steps) train on the same
pairs over the same frozen image features, in a configuration (``--train-config cpu|paper``) of
:data:`kcca_desc.methods.trainable_systems.TRAINABLE`, with ``--train-params`` changing
single settings; each trains once into a checkpoint under the cache that later runs reuse (an
interrupted training resumes from its last epoch).  The same models then run the other seed
papers' tasks: off-topic detection, 1-of-6 forced choice and vSTS.

Usage::

    python benchmarks/neural.py [--systems NAME ...] [--merge] [--train-config cpu|paper]
                                [--image-features efficientnet|vit] [--image-features-file F.npz]
                                [--train-epochs N] [--train-params NAME=VALUE ...]
                                [--train-device cpu|cuda] [--kcca-rank 4096]
                                [--select-on hodosh karpathy] [--flickr8k DIR] [--vsts DIR]
    python benchmarks/neural.py --train-only --systems char_gru   # checkpoints only (run several at once)
    python benchmarks/neural.py --quick    # the synthetic data set, one setting per bridge, no vSTS

Writes ``benchmarks/results/neural.json`` (``neural_vit.json`` with ``--image-features vit``; a
list of result objects, the retrieval results with their per-query ranks) and prints a Markdown
table.  Embeddings are cached (``$KCCA_DESC_CACHE``).  A machine without the images (a GPU
machine training the papers' sizes) reads their features from a features file
(``--image-features-file``, :mod:`kcca_desc.adapters.precomputed`); ``benchmarks/merge_results.py``
says how ``neural_gpu.json`` was made that way.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from kcca_desc.adapters import Encoder, PairedEncoder
from kcca_desc.methods import EncoderMethod, FeatureBridgeMethod, dev_metrics, recall_sum, select_best
from kcca_desc.methods.trainable_systems import TRAINABLE, TRAINABLE_VARIANTS
from kcca_desc.adapters.efficientnet import EfficientNetLiteImageEncoder
from kcca_desc.adapters.onnx_models import MiniLMTextEncoder, ViTImageEncoder
from kcca_desc.adapters.precomputed import PrecomputedImageEncoder
from kcca_desc.neural import torch_module
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (PeakMemory, add_output_arguments, fill_defaults, output_path, quick_dataset, result_record,
                             write_results)
from kcca_desc.data.dataset import Dataset
from kcca_desc.data.flickr8k import load_flickr8k
from kcca_desc.evaluate import add_confidence_intervals, evaluate_fitted, to_markdown
from kcca_desc.evaluate.results import task_cell, task_figures
from kcca_desc.tasks import (cosine_similarity_correlations, evaluate_forced_choice, evaluate_off_topic,
                             fit_siamese_regressor, load_vsts, pearson_interval, pearson_r, seen_images,
                             siamese_features)


# The target for the feature bridge (issue #7; docs/design.md): linear CCA over
# the same MiniLM + ViT-S/14 features in a quick scratch pipeline, on test.
# (R@1, R@5, R@10, median rank) per protocol and task.
ANCHOR = {"hodosh": {"annotation": (13.6, 37.6, 50.1, 10), "search": (14.8, 38.8, 51.8, 9)},
          "karpathy": {"annotation": (18.5, 43.9, 55.0, 8), "search": (14.3, 37.1, 50.4, 10)}}
ANCHOR_METRICS = ("R@1", "R@5", "R@10", "median_rank")

#: Frozen image features by name (``--image-features``); the default writes ``neural.json``.
DEFAULT_FEATURES = "efficientnet"
IMAGE_FEATURES = {"vit": lambda: ViTImageEncoder(pooling="cls+mean_patch"),
                  "efficientnet": EfficientNetLiteImageEncoder}


def named_for_features(name: str, args) -> str:
    """A bridge's name over ``--image-features`` (``cca_minilm_vit`` → ``cca_minilm_efficientnet``)."""
    return name if args.image_features == "vit" else name.replace("vit", args.image_features)


def throughput(n_threads: int = 2, n_texts: int = 512, n_images: int = 32) -> dict:
    """Uncached texts/s and images/s of the two encoders with ``n_threads`` threads."""
    rng = np.random.default_rng(0)
    texts = [f"a {w} dog number {i} runs across the grass near a {v} ball"
             for i, (w, v) in enumerate(zip(rng.choice(["brown", "black", "white"], n_texts),
                                            rng.choice(["red", "blue", "green"], n_texts)))]
    from kcca_desc.data.images import ArrayImages
    images = ArrayImages([rng.integers(0, 256, (224, 224, 3), dtype=np.uint8) for _ in range(n_images)],
                         [str(i) for i in range(n_images)])
    text_encoder = MiniLMTextEncoder(cache=False, n_threads=n_threads)
    image_encoder = ViTImageEncoder(cache=False, n_threads=n_threads, batch_size=32)
    text_encoder.embed_texts(texts[:8])           # build the sessions outside the timing
    image_encoder.embed_images(images.subset([0]))
    start = time.perf_counter()
    text_encoder.embed_texts(texts)
    text_s = time.perf_counter() - start
    start = time.perf_counter()
    image_encoder.embed_images(images)
    image_s = time.perf_counter() - start
    return {"n_threads": n_threads, "texts_per_s": len(texts) / text_s, "images_per_s": len(images) / image_s}


def evaluate_on_test(method, data: Dataset, system: str, params: dict, fit_s: float) -> list:
    """Test results under both protocols, with bootstrap 95% intervals of every metric.

    Search queries are resampled by image: the karpathy protocol's five
    captions of an image are not independent queries.
    """
    results = []
    for protocol in ("hodosh", "karpathy"):
        view = data.view("test", protocol)
        result = evaluate_fitted(method, view, name=system, params=params, timings={"fit": fit_s})
        results.append(add_confidence_intervals(result, groups={"search": view.caption_image}))
    return results


def anchor_comparison(results) -> str:
    """Each bridge figure next to the issue's anchor and our bootstrap interval."""
    lines = ["| system | protocol | task | ours [95% CI] vs anchor, R@1 / R@5 / R@10 / median rank |",
             "|---|---|---|---|"]
    for r in results:
        if not r.system.startswith(("cca_", "kcca_")):
            continue
        for task in ("annotation", "search"):
            cells = []
            for metric, anchor in zip(ANCHOR_METRICS, ANCHOR[r.protocol][task]):
                low, high = r.extras["ci"][task][metric]
                # Compared at the anchor's precision: 148/1000 is 14.8, not 14.799999999999999.
                ours = round(getattr(r, task)[metric], 1)
                if metric == "median_rank":
                    sign, fmt = ("≤" if ours <= anchor else ">"), "g"
                else:
                    sign, fmt = ("≥" if ours >= anchor else "<"), ".1f"
                cells.append(f"{ours:{fmt}} [{low:{fmt}}, {high:{fmt}}] {sign} {anchor}")
            lines.append(f"| {r.system} | {r.protocol} | {task} | {' / '.join(cells)} |")
    return "\n".join(lines)


def select_on_dev(candidates, dev_views: dict, log):
    """The candidate (fitted method, params) with the best dev objective (the first of equals).

    The objective is the sum of R@1/5/10 over both tasks (``recall_sum``), summed over the
    protocols in ``dev_views``; every protocol's own figures are logged.
    """
    def objective(candidate) -> float:
        method, params = candidate
        per_protocol = {p: dev_metrics(method.score(view.images, view.captions), view, keys=None)
                        for p, view in dev_views.items()}
        total = sum(recall_sum(metrics) for metrics in per_protocol.values())
        log.append({"params": params, "dev_objective": total,
                    **{p: {"dev_objective": recall_sum(metrics), **metrics} for p, metrics in per_protocol.items()}})
        print(f"  dev {params}: {total:.1f} "
              f"({', '.join(f'{p} {recall_sum(m):.1f}' for p, m in per_protocol.items())})", flush=True)
        return total

    (method, params), _ = select_best(candidates, objective)
    return method, params


def fit_linear_cca(train: Dataset, dev, encoder, args):
    """Linear CCA, one fit per regulariser (seconds each), re-weighted per weight power; chosen on dev."""
    log = []

    def candidates():
        for reg in args.cca_regs:
            m = FeatureBridgeMethod(encoder, kernel="linear", n_components=args.n_components, reg=reg,
                                    weight_power=1.0).fit(train)
            for power in args.cca_weight_powers:
                yield m.with_params(weight_power=power), {"reg": reg, "weight_power": power}

    method, params = select_on_dev(candidates(), dev, log)
    # The re-weighted copies carry the fit timings of the model they re-weight.
    return method, {**params, "n_components": args.n_components, "selected_on_dev": list(dev),
                    "features": f"minilm | {args.image_features}", "dev_search": log}, sum(method.timings_s_.values())


def fit_rbf_kcca(train: Dataset, dev, encoder, args):
    """RBF KCCA: one incomplete Cholesky factorisation per bandwidth; the κ and weight-power grid re-uses it."""
    log, fit_s = [], {}

    def candidates():
        for gamma_scale in args.kcca_gamma_scales:
            kcca = FeatureBridgeMethod(encoder, kernel="rbf", n_components=args.n_components, reg=args.kcca_regs[0],
                                       weight_power=1.0, rank=args.kcca_rank, gamma_scale=gamma_scale).fit(train)
            fit_s[gamma_scale] = sum(kcca.timings_s_.values())
            info = {"gamma_scale": gamma_scale, "gamma": list(kcca.gammas_), "factorise_s": fit_s[gamma_scale],
                    "explained_trace": [kcca.kcca_.explained_trace_x_, kcca.kcca_.explained_trace_y_]}
            print(f"  KCCA gamma_scale {gamma_scale}: factorised in {fit_s[gamma_scale]:.0f} s, trace kept "
                  f"{info['explained_trace'][0]:.2f}, {info['explained_trace'][1]:.2f}", flush=True)
            for reg in args.kcca_regs:
                # One KCCA solve per κ; the weight powers only re-weight its canonical dimensions.
                solved = kcca.with_params(reg=reg)
                for power in args.kcca_weight_powers:
                    yield solved.with_params(weight_power=power), {"reg": reg, "weight_power": power, **info}

    method, params = select_on_dev(candidates(), dev, log)
    return method, {**params, "n_components": args.n_components, "rank": args.kcca_rank, "selected_on_dev": list(dev),
                    "kernel": "rbf, gamma = gamma_scale / median squared distance", "dev_search": log}, \
        sum(fit_s.values())


def fit_nn(train: Dataset, dev, encoder, args):
    start = time.perf_counter()
    nn = FeatureBridgeMethod(encoder, model="nn").fit(train)
    return nn, {"model": "NN5 over cosine of features"}, time.perf_counter() - start


BRIDGES = {"cca_minilm_vit": fit_linear_cca, "kcca_minilm_vit": fit_rbf_kcca, "nn_minilm_vit": fit_nn}

#: The options of each bridge's selection as its records name them: per setting of its dev grid
#: (the ``params`` of each ``dev_search`` entry), then per other setting, the attribute of the
#: parsed options that sets it.
BRIDGE_GRIDS = {"cca_minilm_vit": {"reg": "cca_regs", "weight_power": "cca_weight_powers"},
                "kcca_minilm_vit": {"gamma_scale": "kcca_gamma_scales", "reg": "kcca_regs",
                                    "weight_power": "kcca_weight_powers"}}
BRIDGE_SETTINGS = {"cca_minilm_vit": {"n_components": "n_components", "selected_on_dev": "select_on"},
                   "kcca_minilm_vit": {"n_components": "n_components", "rank": "kcca_rank",
                                       "selected_on_dev": "select_on"}}


def bridge_of(system: str) -> tuple[str, str]:
    """``(bridge, image features)`` of the saved name of a bridge's record (:func:`named_for_features`).

    Raises
    ------
    ValueError
        When ``system`` is no bridge's name over any of :data:`IMAGE_FEATURES`.
    """
    for bridge in BRIDGES:
        for features in IMAGE_FEATURES:
            if system == bridge.replace("vit", features):
                return bridge, features
    raise ValueError(f"{system!r} is not a bridge over image features ({', '.join(BRIDGES)} over "
                     f"{', '.join(IMAGE_FEATURES)})")


def selection_options(system: str, params: dict) -> dict[str, object]:
    """The options (parsed attribute names) a bridge's record ``params`` was selected with:
    its dev grid read from its ``dev_search``, its components, rank and dev protocols."""
    bridge, _ = bridge_of(system)
    grid = {option: sorted({entry["params"][name] for entry in params["dev_search"]})
            for name, option in BRIDGE_GRIDS[bridge].items()}
    return {**grid, **{option: params[name] for name, option in BRIDGE_SETTINGS[bridge].items()}}


def option_arguments(options: dict[str, object]) -> list[str]:
    """Command-line arguments of parsed ``options``: ``{"kcca_regs": [1, 3]}`` → ``--kcca-regs 1 3``."""
    out = []
    for option, value in options.items():
        out.append("--" + option.replace("_", "-"))
        out += [f"{v:g}" if isinstance(v, float) else str(v) for v in (value if isinstance(value, list) else [value])]
    return out


def selection_changes(records: list[dict], args) -> list[str]:
    """A line per bridge this run re-selects whose record in ``records`` was selected with other options."""
    lines = []
    # A bridge has a record per protocol, with the same params.
    for system, params in {r["system"]: r["params"] for r in records if "dev_search" in r.get("params", {})}.items():
        bridge, features = bridge_of(system)
        if bridge not in args.systems or features != args.image_features:
            continue
        recorded = selection_options(system, params)
        current = {option: sorted(getattr(args, option)) if isinstance(value, list) else getattr(args, option)
                   for option, value in recorded.items()}
        if current != recorded:
            lines.append(f"{system}: its record was selected with {' '.join(option_arguments(recorded))}, "
                         f"this run with {' '.join(option_arguments(current))}")
    return lines


#: The vSTS baseline over the two encoders' own features, no bridge between them (a ``--systems`` name).
RAW_FEATURES = "minilm_vit"


def retrieval_results(data: Dataset, encoder, args) -> tuple[list, dict]:
    """Fit the selected bridge systems (dev-selected) and evaluate them on test, both protocols."""
    train = data.subset("train")
    dev = {p: data.view("dev", p) for p in args.select_on}
    results, methods = [], {}
    for name in args.systems:
        if name not in BRIDGES:
            continue
        method, params, fit_s = BRIDGES[name](train, dev, encoder, args)
        methods[name] = method
        results += evaluate_on_test(method, data, named_for_features(name, args), params, fit_s)
    return results, methods



#: Tiny sizes of a quick run (two epochs on 20 synthetic images).
QUICK_SIZES = {"vse": {"word_dim": 16, "joint_dim": 16, "min_count": 1, "batch_size": 16},
               "vse_hardest": {"word_dim": 16, "joint_dim": 16, "min_count": 1, "batch_size": 16, "sum_epochs": 1},
               "char_gru": {"char_dim": 8, "hidden_dim": 8, "attention_dim": 8, "batch_size": 16, "cycle_epochs": 1},
               "rei": {"word_dim": 16, "hidden_dim": 16, "min_count": 1, "batch_size": 16}}


def train_model(name: str, data: Dataset, image_encoder, args):
    """The trained model of system ``name`` (loaded from its checkpoint when one exists) and the
    cost of this call: the device, peak resident memory and, on a GPU, its peak allocation."""
    variant = TRAINABLE_VARIANTS[name]
    overrides = dict(QUICK_SIZES[variant.system]) if args.quick else {}
    if args.train_epochs is not None:
        overrides["max_epochs"] = args.train_epochs
    model = variant.build(args.train_config, image_encoder=image_encoder, n_threads=args.train_threads,
                          device=args.train_device, max_train_seconds=args.train_seconds, random_state=0,
                          **{**overrides, **args.train_params})
    torch = torch_module()
    on_gpu = torch.device(args.train_device).type == "cuda" and torch.cuda.is_available()
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    with PeakMemory(interval=0.5) as memory:
        model.fit(data.subset("train"), dev=data.subset("dev"))
    # A model loaded from its checkpoint trained in an earlier process: its peak is in its history
    # (None for a checkpoint older than that record), not this call's.
    trained_here = model.resumed_from_epoch_ < len(model.history_)
    cost = {"device": torch.cuda.get_device_name() if on_gpu else f"cpu, {args.train_threads} torch threads",
            "peak_rss_gib": memory.peak_gib if trained_here else
            max((h["max_rss_gib"] for h in model.history_ if "max_rss_gib" in h), default=None),
            "peak_gpu_gib": torch.cuda.max_memory_allocated() / 2**30 if on_gpu else None,
            "seconds_per_epoch": model.timings_s_["train"] / max(len(model.history_), 1)}
    summary = model.training_summary()
    print(f"  {name}: {summary['epochs']} epochs ({summary['stopped_by']}), kept {summary['snapshot_epochs']}, "
          f"{summary['train_s']:.0f} s of training, this call {time.perf_counter() - start:.0f} s, "
          f"checkpoint {model.checkpoint_path_}", flush=True)
    return model, cost


def trainable_results(data: Dataset, encoder, args) -> tuple[list, dict]:
    """The seed papers' trainable systems over the same frozen image features, on test."""
    results, methods = [], {}
    for name in (n for n in TRAINABLE_VARIANTS if n in args.systems):
        model, cost = train_model(name, data, encoder.image_encoder, args)
        method = TRAINABLE[TRAINABLE_VARIANTS[name].system].wrapper(model)
        params = {**{k: v for k, v in model.get_params().items() if k != "image_encoder"},
                  "config": args.train_config, "image_features": model.image_encoder_.name,
                  **model.training_summary(), "training_cost": cost}
        fit_s = model.timings_s_["train"]
        results += evaluate_on_test(method, data, name, params, fit_s)
        methods[name] = method
    return results, methods


def trainable_vsts(data: Dataset, methods: dict, args) -> list[dict]:
    """vSTS Pearson r of the cosine of each trainable model's sentence vectors (no supervision)."""
    if args.vsts is None or not args.vsts.is_dir():
        return []
    out = []
    for name, method in methods.items():
        model = method.encoder if isinstance(method, EncoderMethod) else method.scorer
        embed = model.embed_texts if isinstance(model, Encoder) else model.sentence_vectors
        metrics = {}
        for split in ("all", "test"):
            pairs = load_vsts(args.vsts, split)
            left, right = (embed(list(side)) for side in (pairs.sent1, pairs.sent2))
            cosine = np.sum(left * right, axis=1) / np.maximum(
                np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1), 1e-12)
            metrics[f"pearson_text_cosine_{split}"] = pearson_r(cosine, pairs.sim)
            interval = pearson_interval(cosine, pairs.sim)
            metrics.setdefault("ci", {})[f"pearson_text_cosine_{split}"] = interval["ci"]
            metrics["ci_settings"] = interval["ci_settings"]
        out.append({"system": name, "dataset": "vsts-flickr8k", "split": "authors", "task": "vsts",
                    "metrics": metrics, "params": {"text": "cosine of the model's sentence vectors"}})
    return out


def rei_ablation_markdown(tasks: list[dict]) -> str:
    """The Rei ablation as one table: forced choice and off-topic figures per step, with their intervals."""
    by = {(t["system"], t["task"]): t["metrics"] for t in tasks}
    lines = ["| step | forced choice 1-of-6 accuracy | off-topic AP | off-topic P@k | off-topic accuracy |",
             "|---|---|---|---|---|"]
    for name in ("rei_baseline", "rei_dropout", "rei_gating", "rei"):
        if (name, "off_topic") in by:
            off = by[(name, "off_topic")]
            p_at = next(k for k in off if k.startswith("P@"))
            cells = [task_cell(by[(name, "forced_choice")], "accuracy"),
                     *(task_cell(off, k) for k in ("AP", p_at, "accuracy"))]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def task_results(data: Dataset, methods: dict, encoder, args, with_vsts: bool = True) -> list[dict]:
    test = data.subset("test")
    out = []
    for name, method in methods.items():
        start = time.perf_counter()
        metrics = evaluate_off_topic(method, test.images, test.captions, seed=0, k=args.off_topic_k)
        out.append({"system": named_for_features(name, args), "dataset": data.name, "split": "test",
                    "task": "off_topic",
                    "metrics": metrics, "params": {"seed": 0, "text": "5 captions, mean of sentence scores"},
                    "timings_s": {"task": time.perf_counter() - start}})
        start = time.perf_counter()
        metrics = evaluate_forced_choice(method, data.view("test", "karpathy"), n_choices=6, seed=0)
        out.append({"system": named_for_features(name, args), "dataset": data.name, "split": "test",
                    "task": "forced_choice",
                    "metrics": metrics, "params": {"seed": 0, "n_choices": 6},
                    "timings_s": {"task": time.perf_counter() - start}})
    if with_vsts and args.vsts is not None and args.vsts.is_dir():  # vSTS needs projections: the CCA bridges only
        out.extend(vsts_results(data, methods, encoder, args))
    return out


def vsts_results(data: Dataset, methods: dict, encoder, args) -> list[dict]:
    image_dir = Path(args.flickr8k) / "images"
    splits = {s: load_vsts(args.vsts, s).with_images_in(image_dir) for s in ("all", "train", "dev", "test")}
    seen = seen_images(splits["all"], [data.image_ids[i] for i in data.split_indices("train")])

    def reps(pairs, space):
        """((text_L, text_R), (image_L, image_R)) in a representation space."""
        texts = [encoder.embed_texts(list(pairs.sent1)), encoder.embed_texts(list(pairs.sent2))]
        images = [encoder.embed_images(pairs.images(image_dir, side)) for side in (0, 1)]
        if space == "raw":
            return tuple(texts), tuple(images)
        m = methods[space]
        return (tuple(m.project_texts(s) for s in (pairs.sent1, pairs.sent2)),
                tuple(m.project_images(pairs.images(image_dir, side)) for side in (0, 1)))

    out = []
    for space in ["raw"] * args.vsts_raw + [m for m in ("cca_minilm_vit", "kcca_minilm_vit") if m in methods]:
        system = named_for_features(RAW_FEATURES if space == "raw" else space, args)
        metrics = {"pearson_cosine_all455": cosine_similarity_correlations(splits["all"].sim, *reps(splits["all"], space)),
                   "pearson_cosine_test": cosine_similarity_correlations(splits["test"].sim, *reps(splits["test"], space))}
        supervised = {}
        rep = {s: reps(splits[s], space) for s in ("train", "dev", "test")}
        for kind in ("text", "image", "concat"):
            def side(s, k=kind):
                (tl, tr), (il, ir) = rep[s]
                unit = lambda x: x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)  # noqa: E731
                # Unit vectors throughout: projections are on no common scale, and
                # the regressor's logistic units saturate on large inputs.
                pick = {"text": (unit(tl), unit(tr)), "image": (unit(il), unit(ir)),
                        "concat": (np.hstack([unit(tl), unit(il)]), np.hstack([unit(tr), unit(ir)]))}[k]
                return pick[0], pick[1], splits[s].sim
            model, info = fit_siamese_regressor(side("train"), side("dev"), seed=0)
            left, right, sim = side("test")
            predicted = model.predict(siamese_features(left, right))
            interval = pearson_interval(predicted, sim)
            supervised[kind] = {"test_pearson": pearson_r(predicted, sim), "hidden": info["hidden"],
                                "ci": {"test_pearson": interval["ci"]}, "ci_settings": interval["ci_settings"]}
        metrics["siamese"] = supervised
        out.append({"system": system, "dataset": "vsts-flickr8k", "split": "authors",
                    "task": "vsts", "metrics": metrics,
                    "params": {"pairs": {s: len(p) for s, p in splits.items()},
                               "flickr8k_train_images_seen": seen}})
    return out


def tasks_markdown(tasks: list[dict]) -> str:
    """Every task figure (nested ones by their path) with its interval."""
    lines = ["| system | task | figures |", "|---|---|---|"]

    def figures(metrics: dict, prefix: str = "") -> list[str]:
        out = [f"{prefix}{name} {task_cell(metrics, name)}" for name in task_figures(metrics)]
        for key, value in metrics.items():
            if isinstance(value, dict) and key not in ("ci", "ci_settings"):
                out += figures(value, f"{prefix}{key}.")
        return out

    for t in tasks:
        lines.append(f"| {t['system']} | {t['task']} | {'; '.join(figures(t['metrics']))} |")
    return "\n".join(lines)


#: Images of the synthetic data set of a quick run: ViT embeds about 3 images a second on 2 busy cores.
QUICK_N_IMAGES = 20

#: Options of a full and of a quick run. A quick run tries one setting per bridge on a small
#: synthetic data set (12 training images: at most 11 canonical pairs), with a small encoder
#: throughput sample, no vSTS (its images are Flickr8K's) and the trainable baselines only where
#: torch is installed, at tiny sizes for two epochs each.
DEFAULTS = {
    "full": {"vsts": Path("/work/shared/vsts"), "n_components": 128, "off_topic_k": 50, "kcca_rank": 4096,
             "systems": list(BRIDGES) + list(TRAINABLE_VARIANTS),
             "kcca_gamma_scales": [0.03125, 0.0625, 0.125, 0.25, 0.5], "train_epochs": None,
             "cca_regs": [1e-2, 3e-2, 0.05, 0.1, 0.2, 0.3, 1.0, 3.0, 10.0],
             "cca_weight_powers": [0.25, 0.5, 1.0, 2.0, 4.0],
             "kcca_regs": [0.1, 0.3, 1, 3, 10], "kcca_weight_powers": [0.5, 1.0, 2.0],
             "throughput_sample": [512, 32]},
    "quick": {"n_components": 8, "off_topic_k": 5, "kcca_rank": 64, "kcca_gamma_scales": [0.125],
              "train_epochs": 2, "cca_regs": [0.1], "cca_weight_powers": [1.0], "kcca_regs": [1.0],
              "kcca_weight_powers": [1.0],
              "systems": list(BRIDGES) + (list(TRAINABLE_VARIANTS) if importlib.util.find_spec("torch") else []),
              "throughput_sample": [16, 2]},
}


def parse_setting(text: str, parser: argparse.ArgumentParser) -> tuple[str, object]:
    """``NAME=VALUE`` of ``--train-params`` as (name, Python literal)."""
    name, sep, value = text.partition("=")
    try:
        if not (sep and name.isidentifier()):
            raise ValueError
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parser.error(f"--train-params: {text!r} is not NAME=VALUE with VALUE a Python literal (e.g. dropout=0.2)")


def parse_arguments(argv=None) -> argparse.Namespace:
    """The options of a run, defaults filled in (a quick run's with ``--quick``), checked."""
    parser = benchmark_parser(__file__, __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flickr8k", default="/work/shared/flickr8k")
    parser.add_argument("--vsts", type=Path, help="vSTS directory (default /work/shared/vsts; quick: none)")
    parser.add_argument("--n-components", type=positive_int, help="canonical dimensions of the CCA bridges (default 128)")
    parser.add_argument("--off-topic-k", type=positive_int, help="k of the off-topic task's P@k (default 50)")
    parser.add_argument("--kcca-rank", type=positive_int,
                        help="maximum rank of each incomplete Cholesky factor of the RBF KCCA (default 4096)")
    parser.add_argument("--select-on", nargs="+", choices=("hodosh", "karpathy"), default=["hodosh", "karpathy"],
                        help="dev protocols whose summed R@1/5/10 (both tasks) selects each bridge's settings")
    parser.add_argument("--systems", nargs="+",
                        help=f"systems to run (default all; {RAW_FEATURES}: the vSTS baseline over the raw "
                             "features); the trainable ones need torch")
    parser.add_argument("--merge", action="store_true",
                        help="replace only these systems' entries in an existing results file")
    parser.add_argument("--kcca-gamma-scales", type=float, nargs="+")
    parser.add_argument("--train-config", choices=("cpu", "paper"), default="cpu",
                        help="size of the trainable systems: cpu (measured on one thread) or paper (for a GPU)")
    parser.add_argument("--train-epochs", type=positive_int, help="override each trainable configuration's max epochs")
    parser.add_argument("--train-threads", type=positive_int, default=1, help="torch threads while training (default 1)")
    parser.add_argument("--train-device", default="cpu", help="torch device of the trainable systems (default cpu)")
    parser.add_argument("--train-only", action="store_true",
                        help="train the trainable systems named into their checkpoints; evaluate and write nothing")
    parser.add_argument("--train-seconds", type=float, default=None,
                        help="safety stop per trainable model, recorded as such (default none: epochs decide)")
    parser.add_argument("--image-features", choices=tuple(IMAGE_FEATURES), default="efficientnet",
                        help="frozen image features of the bridges and the trainable systems (default "
                             "efficientnet, the best of the offline survey; vit writes neural_vit.json)")
    parser.add_argument("--image-features-file", type=Path, default=None,
                        help="read the image features from a features file (kcca_desc.adapters.precomputed: "
                             "ids, features, name) instead of computing --image-features; for a machine "
                             "that has not got the images, e.g. a GPU training the papers' sizes")
    parser.add_argument("--train-params", nargs="+", default=[], metavar="NAME=VALUE",
                        help="settings of the trainable models over their configuration, e.g. dropout=0.2 "
                             "(values are Python literals)")
    parser.add_argument("--max-train-images", type=positive_int, default=None,
                        help="train on the first N train images (split-file order) only")
    parser.add_argument("--cca-regs", type=float, nargs="+")
    parser.add_argument("--cca-weight-powers", type=float, nargs="+",
                        help="exponents of the canonical-correlation weights tried on dev (linear CCA)")
    parser.add_argument("--kcca-regs", type=float, nargs="+")
    parser.add_argument("--kcca-weight-powers", type=float, nargs="+",
                        help="exponents of the canonical-correlation weights tried on dev (KCCA)")
    parser.add_argument("--throughput-sample", type=int, nargs=2, metavar=("TEXTS", "IMAGES"),
                        help="texts and images timed for the encoder throughput (default 512 32)")
    add_output_arguments(parser, f"{QUICK_N_IMAGES} synthetic images, one setting per bridge, no vSTS")
    args = fill_defaults(parser.parse_args(argv), DEFAULTS)
    args.train_params = dict(parse_setting(text, parser) for text in args.train_params)
    known = [*BRIDGES, RAW_FEATURES, *TRAINABLE_VARIANTS]
    unknown = [name for name in args.systems if name not in known]
    if unknown:
        parser.error(f"--systems: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    return args


def main(argv=None) -> None:
    args = parse_arguments(argv)
    # MiniLM serves the bridges and the raw-feature vSTS baseline only: a run of trainable systems
    # alone needs neither it, its timing nor the images' pixels.
    with_bridges = any(name in BRIDGES or name == RAW_FEATURES for name in args.systems)
    args.vsts_raw = with_bridges and (not args.merge or RAW_FEATURES in args.systems)
    # Another image feature's figures go to their own file: the default one is neural.json.
    out = output_path(args, __file__,
                      None if args.image_features == DEFAULT_FEATURES else f"neural_{args.image_features}")

    if args.merge and out.exists():
        # Merging a re-selection over another grid replaces a record with a different selection:
        # allowed (a new grid is a new measurement), said before the hours of work.
        for line in selection_changes(json.loads(out.read_text()), args):
            print(f"warning: --merge replaces a selection: {line} (rerun_records.py prints a record's options)",
                  file=sys.stderr, flush=True)
    data = quick_dataset(QUICK_N_IMAGES) if args.quick else load_flickr8k(args.flickr8k)
    if args.max_train_images is not None:
        splits = {**data.splits, "train": data.splits["train"][:args.max_train_images]}
        data = Dataset(data.name, data.images, data.captions, splits, data.hodosh_caption, data.metadata)
    image_encoder = (IMAGE_FEATURES[args.image_features]() if args.image_features_file is None
                     else PrecomputedImageEncoder(args.image_features_file))
    encoder = PairedEncoder(image_encoder, MiniLMTextEncoder())
    speed = None
    if with_bridges:
        speed = throughput(n_texts=args.throughput_sample[0], n_images=args.throughput_sample[1])
        print(f"throughput on {speed['n_threads']} threads: {speed['texts_per_s']:.0f} texts/s, "
              f"{speed['images_per_s']:.1f} images/s", flush=True)
    start = time.perf_counter()
    used = np.concatenate([data.splits[s] for s in ("train", "dev", "test")])
    encoder.embed_images(data.images.subset(used))
    if with_bridges:
        encoder.embed_texts([c for i in used for c in data.captions[i]])
    print(f"embeddings ready in {time.perf_counter() - start:.0f} s", flush=True)
    if args.train_only:
        # Checkpoints only: several such runs with different --systems train in parallel, and a
        # later run without --train-only loads and evaluates them.
        for name in (n for n in TRAINABLE_VARIANTS if n in args.systems):
            train_model(name, data, encoder.image_encoder, args)
        return

    # Named as they are saved: a bridge's name carries the image features (cca_minilm_efficientnet).
    rerun = {named_for_features(name, args) for name in [*args.systems, *[RAW_FEATURES] * args.vsts_raw]}

    def save(results, tasks):
        # Written after every stage so an interrupted run keeps what it measured;
        # with --merge the other systems' entries are re-read each time.
        kept = []
        if args.merge and out.exists():
            kept = [r for r in json.loads(out.read_text()) if r["system"] not in rerun]
        payload = [result_record(r, data.view(r.split, r.protocol)) for r in results] + tasks
        for r in payload[:len(results)]:
            if speed is not None:
                r["params"]["encoder_throughput"] = speed
            r["params"]["n_train_images"] = len(data.splits["train"])
            r["params"]["n_train_pairs"] = sum(len(data.captions[i]) for i in data.splits["train"])
        write_results(out, kept + payload, indent=1, default=float)

    results, methods = retrieval_results(data, encoder, args)
    save(results, [])
    tasks = task_results(data, methods, encoder, args)
    save(results, tasks)
    more, trained = trainable_results(data, encoder, args)
    if trained:
        results += more
        save(results, tasks)
        tasks += task_results(data, trained, encoder, args, with_vsts=False)
        save(results, tasks)
        tasks += trainable_vsts(data, trained, args)
        save(results, tasks)
    if results:  # none when only the raw-feature vSTS baseline ran
        print(to_markdown(results, ci=True))
        print()
        print(anchor_comparison(results))
        print()
    print(tasks_markdown(tasks))
    print()
    print(rei_ablation_markdown(tasks))


if __name__ == "__main__":
    run_main(main)
