"""Benchmark: the strongest classical baseline on Flickr8K, multiple-kernel KCCA beside its parts.

Each view's kernel is a weighted sum of base kernels over the 6,000 training items (an image and
its five captions): text ``tri_sem`` and ``bow5_idf`` (Hodosh et al. 2013), ``minilm_rbf`` (the
mean over the two items' caption pairs of an RBF kernel over MiniLM sentence embeddings, a mean
map of the caption sets) and ``minilm_lin`` (the linear kernel of the items' mean embeddings);
image ``pyramid`` (Hodosh et al. 2013), ``effnet_rbf`` and ``effnet_lin`` (RBF and linear kernels
over EfficientNet-Lite0 features); RBF bandwidths by the median heuristic. Before summing, each
base kernel is divided by the mean diagonal of its centred training kernel, so that every base
kernel enters with trace n and a weight reads as its share. A query caption is a set of one
caption.

Every candidate is the exact KCCA solver (:class:`kcca_desc.kcca.KCCA`) over the summed
kernels, scored by the cosine of the projections weighted by ρ^p, its (κ, p, n) chosen on dev by
R@1 + R@5 + R@10 of both tasks summed over both protocols' dev views. The combination is chosen
on dev only, by greedy forward selection: every base kernel alone (beside the first kernel of the
other view), then from the best of those, at each step the base kernel and weight that raise the
dev objective most are added, until none does; each step is recorded (the dev curve). Gram
matrices of the base kernels are computed once and cached (``$KCCA_DESC_CACHE``), so a weight
setting costs one KCCA solve, not a kernel evaluation.

The test split is read once, at the end: the selected combination, the best single-kernel
systems of each view, the encoder bridges and trained models of ``neural.json`` (linear CCA and
RBF KCCA over MiniLM × EfficientNet-Lite0, VSE and VSE++; copied, not re-run) and the published
figures of Klein et al. (2015) under both protocols, every measured figure with its 95 %
bootstrap interval (search queries resampled by image) and the p-values of paired tests
(McNemar for R@K, paired randomisation for median and mean rank) against the best single-kernel
system. Wall time, CPU time and peak memory of the whole selection and of the final fit are
recorded. The record is written after every dev candidate and every test system, so an
interrupted run resumes where it stopped (``--force`` starts over).

Usage::

    python benchmarks/strongest.py --data-root ../shared/flickr8k
    python benchmarks/strongest.py --quick    # the synthetic data set, named kernels only

References
----------
Klein, B., Lev, G., Sadeh, G. & Wolf, L. (2015). Associating neural word embeddings with deep
image representations using Fisher vectors. CVPR.
Hodosh, M., Young, P. & Hockenmaier, J. (2013). Framing image description as a ranking task:
data, models and evaluation metrics. JAIR 47, 853-899.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from kcca_bench import (PeakMemory, add_output_arguments, benchmark_parser, fill_defaults, flickr8k_or_quick,
                        machine_info, output_path, result_record, run_main)
from kcca_desc._core.cache import NpzCache, atomic_write_text
from kcca_desc.cli.options import positive_int
from kcca_desc.data.dataset import PROTOCOLS, Dataset, RetrievalView
from kcca_desc.evaluate import Result, add_confidence_intervals, add_significance, result_from_scores
from kcca_desc.evaluate.results import dumps_json
from kcca_desc.evaluate.scores import cosine_scores
from kcca_desc.image.kernel import ImageKernel
from kcca_desc.kcca import KCCA
from kcca_desc.methods.bridge import median_gamma
from kcca_desc.methods.selection import dev_metrics, recall_sum
from kcca_desc.text.named_kernels import make_text_kernel
from kcca_desc.text.preprocess import Preprocessor

#: Published figures of Klein et al. (2015), Table 2 (Flickr8K, karpathy protocol: 1,000 test
#: images, 5,000 captions), GMM+HGLMM Fisher vectors of word2vec words + CCA over VGG features:
#: (R@1, R@5, R@10) of annotation and search. Lists, not results: nothing here has per-query ranks.
KLEIN_2015 = {"annotation": [31.0, 59.3, 73.7], "search": [21.2, 50.0, 64.8]}

#: Systems of ``neural.json`` shown beside ours (copied with their per-query ranks, not re-run).
NEURAL_ROWS = {"cca_minilm_efficientnet": "linear CCA, MiniLM × EfficientNet-Lite0 (30,000 pairs)",
               "kcca_minilm_efficientnet": "RBF KCCA, same features (30,000 pairs, rank 4,096)",
               "vse": "VSE (Kiros et al.), trained", "vse_hardest": "VSE++ (Faghri et al.), trained"}


# ----------------------------------------------------------------- base kernels
@dataclass(frozen=True)
class BaseKernel:
    """One base kernel: its view and how to compute its training Gram matrix and query rows.

    ``grams(train, queries)`` returns ``{"train": (n, n)}`` and, per split in ``queries``, the
    rows of that split's queries (images, or the karpathy view's captions) against training.
    """

    view: str
    help: str
    grams: Callable[[Dataset, Mapping[str, RetrievalView]], dict[str, np.ndarray]]
    extra: str | None = None


def _named_text(name: str):
    def grams(train, queries):
        preprocessor = Preprocessor()
        items, tags = preprocessor.process_items(train.captions)
        kernel = make_text_kernel(name, random_state=0).fit(items, tags)
        out = {"train": kernel.train_gram()}
        for split, view in queries.items():
            tokens, _ = preprocessor.process(list(view.captions))
            out[split] = kernel.cross_gram([[t] for t in tokens])
        return out
    return grams


def _named_image(kind: str):
    def grams(train, queries):
        kernel = ImageKernel(kind=kind, random_state=0, progress=False).fit(train.images)
        return {"train": kernel.train_gram(), **{split: kernel.cross(v.images) for split, v in queries.items()}}
    return grams


def _rbf(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    sq = np.maximum((A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T, 0.0)
    return np.exp(-gamma * sq)


def _set_rbf(queries: np.ndarray, per_query: int, items: np.ndarray, gamma: float, chunk: int = 200) -> np.ndarray:
    """Mean RBF kernel between sets: ``k(A, B) = mean over a in A, b in B of exp(-γ |a - b|²)``.

    ``queries`` holds sets of ``per_query`` consecutive rows, ``items`` (n, m, d) the training
    sets; computed ``chunk`` sets at a time, so memory stays at chunk x per_query x n x m values.
    """
    n, m, d = items.shape
    flat = items.reshape(n * m, d)
    out = np.empty((len(queries) // per_query, n))
    for start in range(0, len(out), chunk):
        block = queries[start * per_query:(start + chunk) * per_query]
        K = _rbf(block, flat, gamma).reshape(-1, per_query, n, m)
        out[start:start + chunk] = K.mean(axis=(1, 3))
    return out


def _caption_embeddings(train, queries):
    from kcca_desc.adapters.onnx_models import MiniLMTextEncoder
    encoder = MiniLMTextEncoder()
    per_item = {len(c) for c in train.captions}
    if len(per_item) != 1:
        raise ValueError(f"the MiniLM set kernels need as many captions per training item; found {sorted(per_item)}")
    flat = encoder.embed_texts([c for caps in train.captions for c in caps]).astype(np.float64)
    items = flat.reshape(len(train), per_item.pop(), -1)
    return items, {split: encoder.embed_texts(list(v.captions)).astype(np.float64) for split, v in queries.items()}


def _minilm_rbf(train, queries):
    items, rows = _caption_embeddings(train, queries)
    gamma = median_gamma(items.reshape(-1, items.shape[-1]))
    return {"train": _set_rbf(items.reshape(-1, items.shape[-1]), items.shape[1], items, gamma),
            **{split: _set_rbf(q, 1, items, gamma) for split, q in rows.items()}}


def _minilm_lin(train, queries):
    items, rows = _caption_embeddings(train, queries)
    means = items.mean(axis=1)
    return {"train": means @ means.T, **{split: q @ means.T for split, q in rows.items()}}


def _image_features(train, queries):
    from kcca_desc.adapters.efficientnet import EfficientNetLiteImageEncoder
    encoder = EfficientNetLiteImageEncoder()
    return (encoder.embed_images(train.images).astype(np.float64),
            {split: encoder.embed_images(v.images).astype(np.float64) for split, v in queries.items()})


def _effnet_rbf(train, queries):
    F, rows = _image_features(train, queries)
    gamma = median_gamma(F)
    return {"train": _rbf(F, F, gamma), **{split: _rbf(q, F, gamma) for split, q in rows.items()}}


def _effnet_lin(train, queries):
    F, rows = _image_features(train, queries)
    return {"train": F @ F.T, **{split: q @ F.T for split, q in rows.items()}}


BASE_KERNELS = {
    "minilm_rbf": BaseKernel("text", "mean-map RBF over MiniLM caption embeddings (median bandwidth)", _minilm_rbf,
                             "neural"),
    "minilm_lin": BaseKernel("text", "linear kernel of the items' mean MiniLM embeddings", _minilm_lin, "neural"),
    "tri_sem": BaseKernel("text", "Hodosh et al.'s Tri5Sem", _named_text("tri_sem")),
    "bow5_idf": BaseKernel("text", "bag of words of the five captions, idf-weighted", _named_text("bow5_idf")),
    "tri5": BaseKernel("text", "exact trigram kernel of the five captions", _named_text("tri5")),
    "effnet_rbf": BaseKernel("image", "RBF over EfficientNet-Lite0 features (median bandwidth)", _effnet_rbf,
                             "efficientnet"),
    "effnet_lin": BaseKernel("image", "linear kernel of EfficientNet-Lite0 features", _effnet_lin, "efficientnet"),
    "pyramid": BaseKernel("image", "Hodosh et al.'s spatial pyramid kernel", _named_image("pyramid")),
    "histo": BaseKernel("image", "Hodosh et al.'s histogram kernel, no pyramid", _named_image("histo")),
}


class GramBank:
    """The base kernels' Gram matrices on one data set, each computed once and cached on disk.

    ``scale[name]`` is the mean diagonal of the centred training kernel: each base kernel is
    divided by it before summing (trace n after centring).
    """

    def __init__(self, dataset: Dataset, splits=("dev", "test"), cache: bool = True):
        self.dataset = dataset
        self.train = dataset.subset("train")
        self.queries = {split: dataset.view(split, "karpathy") for split in splits}
        self.store = NpzCache("strongest_gram", enabled=cache)
        self.seconds: dict[str, float] = {}
        self.scale: dict[str, float] = {}

    def grams(self, name: str) -> dict[str, np.ndarray]:
        def compute():
            start = time.perf_counter()
            out = {k: np.asarray(v, dtype=np.float32) for k, v in BASE_KERNELS[name].grams(self.train, self.queries).items()}
            return {**out, "seconds": np.float64(time.perf_counter() - start)}

        entry = self.store.get_or_compute(compute, what="base kernel grams", kernel=name,
                                          dataset=self.dataset.fingerprint(), splits=sorted(self.queries))
        self.seconds[name] = float(entry["seconds"])
        if name not in self.scale:
            K = entry["train"].astype(np.float64)
            self.scale[name] = float((np.trace(K) - K.sum() / len(K)) / len(K))
        return entry

    def first_items(self, n: int | None) -> "GramBank":
        """This bank over the first ``n`` training items only (None: all), sharing its Gram matrices."""
        bank = copy.copy(self)
        bank.items = None if n is None or n >= len(self.train) else np.arange(n)
        return bank

    items: np.ndarray | None = None

    def combined(self, weights: Mapping[str, float], split: str) -> np.ndarray:
        """Σ_k w_k K_k / scale_k over ``weights`` (``split``: "train" or a query split)."""
        total = None
        for name, w in weights.items():
            K = self.grams(name)[split]
            if self.items is not None:
                K = K[np.ix_(self.items, self.items)] if split == "train" else K[:, self.items]
            K = K.astype(np.float64)
            K *= w / self.scale[name]
            total = K if total is None else total + K
        return total


def with_training_images(dataset: Dataset, n: int | None) -> Dataset:
    """``dataset`` with its training split cut to its first ``n`` images (None: all)."""
    if n is None:
        return dataset
    return replace(dataset, splits={**dataset.splits, "train": dataset.splits["train"][:n]})


# ----------------------------------------------------------------- dev search
def _key(text: Mapping[str, float], image: Mapping[str, float]) -> str:
    part = lambda w: "+".join(f"{n}:{v:g}" for n, v in sorted(w.items()))  # noqa: E731
    return f"text={part(text)} image={part(image)}"


def _protocol_scores(S: np.ndarray, karpathy: RetrievalView, view: RetrievalView) -> np.ndarray:
    """The columns of the karpathy score matrix ``S`` that ``view``'s captions are."""
    position = {c: i for i, c in enumerate(karpathy.caption_ids)}
    return S[:, [position[c] for c in view.caption_ids]]


class Candidate:
    """One combination fitted on the training items, its (κ, p, n) grid scored on dev."""

    def __init__(self, bank: GramBank, text: Mapping[str, float], image: Mapping[str, float], args,
                 regs=None):
        self.bank, self.text, self.image, self.args = bank, dict(text), dict(image), args
        self.regs = args.regs if regs is None else regs

    def fit(self, memory: str | None = None, reg: float | None = None) -> "Candidate":
        """Decompose the summed training kernels and solve for ``reg`` (default: the grid's first)."""
        reg = self.regs[0] if reg is None else reg
        self.model_ = KCCA(n_components=max(self.args.n_components), reg=reg, solve_dtype=np.float32,
                           clip_to_rank=True, memory=memory,
                           view_names=("the images", "the captions")).fit(self.bank.combined(self.image, "train"),
                                                                           self.bank.combined(self.text, "train"))
        return self

    def scores(self, split: str, reg: float, weight_power: float, n: int) -> np.ndarray:
        model = self.model_.with_params(reg=reg, weight_power=weight_power)
        n = min(n, model.n_components_)
        return cosine_scores(*model.transform(self.bank.combined(self.image, split),
                                              self.bank.combined(self.text, split), n_components=n))

    def dev_search(self, views: Mapping[str, RetrievalView]) -> dict:
        Qx, Qy = self.bank.combined(self.image, "dev"), self.bank.combined(self.text, "dev")
        best = None
        for reg in self.regs:
            solved = self.model_.with_params(reg=reg)
            for power, n in itertools.product(self.args.weight_powers, self.args.n_components):
                n = min(n, solved.n_components_)
                S = cosine_scores(*solved.with_params(weight_power=power).transform(Qx, Qy, n_components=n))
                per = {p: dev_metrics(_protocol_scores(S, views["karpathy"], v), v) for p, v in views.items()}
                objective = sum(recall_sum(m) for m in per.values())
                if best is None or objective > best["dev_objective"]:
                    best = {"dev_objective": objective, "setting": {"reg": reg, "weight_power": power,
                                                                      "n_components": n}, "dev": per}
        return best


def evaluate_candidate(bank: GramBank, text, image, args, views, memory) -> dict:
    start = time.perf_counter()
    candidate = Candidate(bank, text, image, args).fit(memory)
    fit_s = time.perf_counter() - start
    best = candidate.dev_search(views)
    return {"text": dict(text), "image": dict(image), **best, "fit_s": fit_s,
            "grid_s": time.perf_counter() - start - fit_s}


# ----------------------------------------------------------------- the benchmark
def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _save(path: Path, record: dict) -> None:
    atomic_write_text(path, dumps_json(record, indent=1, default=float))


def _print_dev(key: str, entry: dict) -> None:
    per = entry["dev"]
    figs = "; ".join(f"{p} " + " | ".join("/".join(f"{per[p][t][k]:.1f}" for k in ("R@1", "R@5", "R@10"))
                                          for t in ("annotation", "search")) for p in per)
    print(f"  dev {entry['dev_objective']:.1f} {key} ({figs}; {entry['setting']}; fit {entry['fit_s']:.0f} s)",
          flush=True)


def select(bank: GramBank, args, views, record: dict, save) -> dict:
    """Greedy forward selection on dev; every candidate in ``record["dev_candidates"]``, the steps in ``dev_curve``.

    Returns the selected combination (``"best"``) and the best single kernel of each view beside
    the other view's reference kernel (``"singles"``), each a dev candidate's entry.
    """
    candidates = record.setdefault("dev_candidates", {})
    def measure(text, image) -> dict:
        key = _key(text, image)
        if key not in candidates:
            candidates[key] = evaluate_candidate(bank, text, image, args, views, args.solver_cache)
            _print_dev(key, candidates[key])
            save()
        return candidates[key]

    text_ref, image_ref = args.text_kernels[0], args.image_kernels[0]
    by_dev = lambda entries: max(entries, key=lambda e: e["dev_objective"])  # noqa: E731
    singles = {"text": by_dev([measure({t: 1.0}, {image_ref: 1.0}) for t in args.text_kernels]),
               "image": by_dev([measure({text_ref: 1.0}, {i: 1.0}) for i in args.image_kernels])}
    best = by_dev(singles.values())
    curve = [{"added": None, **best}]
    while True:
        used = set(best["text"]) | set(best["image"])
        trials = []
        for name, w in itertools.product([k for k in args.text_kernels + args.image_kernels if k not in used],
                                         args.weights):
            side = "text" if BASE_KERNELS[name].view == "text" else "image"
            weights = {"text": dict(best["text"]), "image": dict(best["image"])}
            weights[side][name] = w
            trials.append((f"{name}:{w:g}", measure(weights["text"], weights["image"])))
        if not trials:
            break
        added, entry = max(trials, key=lambda t: t[1]["dev_objective"])
        if entry["dev_objective"] <= best["dev_objective"]:
            break
        best = entry
        curve.append({"added": added, **entry})
    record["dev_curve"] = curve
    return {"best": best, "singles": singles}


def test_results(bank: GramBank, dataset: Dataset, entry: Mapping, name: str, args, memory: str | None,
                 views: Mapping[str, RetrievalView] | None = None, regs=None) -> dict:
    """Fit a dev candidate again and evaluate it on test under both protocols, with bootstrap intervals.

    With ``views`` (a selection made on fewer training items), its (κ, p, n) are chosen again on
    these dev views over the grid ``regs``; otherwise the candidate's are kept. With ``memory``
    None the fit decomposes both kernels afresh, and ``"fit"`` is what it (and the dev grid) cost;
    otherwise the decompositions of the dev search are read back.
    """
    with PeakMemory() as peak:
        start, cpu = time.perf_counter(), time.process_time()
        candidate = Candidate(bank, entry["text"], entry["image"], args, regs=regs)
        if views is None:
            chosen = entry
            candidate.fit(memory, reg=entry["setting"]["reg"])
        else:
            chosen = candidate.fit(memory).dev_search(views)
        setting = chosen["setting"]
        S = candidate.scores("test", setting["reg"], setting["weight_power"], setting["n_components"])
        cost = {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}
    cost["peak_gib"] = peak.peak_gib
    karpathy = dataset.view("test", "karpathy")
    results = {}
    for protocol in PROTOCOLS:
        view = dataset.view("test", protocol)
        result = result_from_scores(_protocol_scores(S, karpathy, view), view, name,
                                    params={"text": dict(entry["text"]), "image": dict(entry["image"]), **setting},
                                    timings={"fit": cost["wall_s"]})
        add_confidence_intervals(result, groups={"search": view.caption_image})
        results[protocol] = result_record(result, view)
    return {"text": dict(entry["text"]), "image": dict(entry["image"]), "setting": setting,
            "dev_objective": chosen["dev_objective"], "fit": cost, "fit_from_cache": memory is not None,
            "results": results}


def neural_rows(path: Path, dataset: str) -> dict:
    """The :data:`NEURAL_ROWS` systems of ``neural.json`` on ``dataset`` by system and protocol.

    An empty dict without the file, or when it holds none measured on ``dataset`` (a quick run).
    """
    if not path.is_file():
        return {}
    found = {}
    for r in json.loads(path.read_text()):
        if r.get("system") in NEURAL_ROWS and "protocol" in r and r.get("dataset") == dataset:
            found.setdefault(r["system"], {})[r["protocol"]] = r
    return found


def add_tests(record: dict) -> None:
    """p-values of every measured system against the best single-kernel system, per protocol."""
    baseline = record["systems"]["best_single"]["results"]
    for name, entry in record["systems"].items():
        if name == "best_single":
            continue
        for protocol, result in entry["results"].items():
            ours = Result.from_dict(result)
            add_significance(ours, Result.from_dict(baseline[protocol]))
            result["significance"] = ours.extras["significance"]
            result["significance_baseline"] = ours.extras["significance_baseline"]


DEFAULTS = {
    "full": {"text_kernels": "minilm_rbf,tri_sem,minilm_lin,bow5_idf", "image_kernels": "effnet_rbf,pyramid,effnet_lin",
             "regs": "1,3,10,30", "weight_powers": "0.5,1,2", "n_components": "64,128,256", "weights": "0.5,1"},
    "quick": {"text_kernels": "bow5_idf,tri5", "image_kernels": "histo,pyramid",
              "regs": "0.1,1", "weight_powers": "0,1", "n_components": "4,8", "weights": "1"},
}


def main(argv=None) -> dict:
    floats = lambda s: [float(v) for v in s.split(",")]  # noqa: E731
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))
    p.add_argument("--text-kernels", help=f"base text kernels, the first the reference (of {', '.join(BASE_KERNELS)})")
    p.add_argument("--image-kernels", help="base image kernels, the first the reference")
    p.add_argument("--regs", help="grid of κ")
    p.add_argument("--weight-powers", help="grid of p (dimension k weighted by ρ_k^p)")
    p.add_argument("--n-components", help="grid of n")
    p.add_argument("--weights", help="weights a greedy step tries for an added base kernel")
    p.add_argument("--solver-cache", default=None,
                   help="folder caching the eigendecompositions of the dev candidates, so that one kernel "
                        "shared by several is decomposed once (default: none; about 0.3 GB per kernel at n = 6,000)")
    p.add_argument("--train-images", type=positive_int, default=None,
                   help="train on the first N training images only (default: all; the record says how many)")
    p.add_argument("--select-train-images", type=positive_int, default=None,
                   help="select the combination with the first N training images (default: all); the selected "
                        "systems are then fitted on all, their (κ, p, n) chosen again on dev, κ's grid scaled "
                        "by the ratio of training sizes")
    p.add_argument("--neural", type=Path, default=Path(__file__).resolve().parent / "results" / "neural.json",
                   help="the neural.json whose bridges and trained models are shown beside ours")
    p.add_argument("--force", action="store_true", help="start over rather than resume from the record")
    add_output_arguments(p, "the synthetic data set, named kernels, a 2 x 2 x 2 grid")
    args = fill_defaults(p.parse_args(argv), DEFAULTS)
    args.text_kernels, args.image_kernels = args.text_kernels.split(","), args.image_kernels.split(",")
    for option, names in (("--text-kernels", args.text_kernels), ("--image-kernels", args.image_kernels)):
        view = option[2:].split("-")[0]
        wrong = [n for n in names if n not in BASE_KERNELS or BASE_KERNELS[n].view != view]
        if wrong:
            p.error(f"{option}: not {view} base kernels: {wrong}")
    args.regs, args.weight_powers, args.weights = floats(args.regs), floats(args.weight_powers), floats(args.weights)
    args.n_components = [int(v) for v in args.n_components.split(",")]
    out = output_path(args, __file__)

    dataset = with_training_images(flickr8k_or_quick(args.data_root, args.quick), args.train_images)
    record = {} if args.force else _load(out)
    settings = {k: getattr(args, k) for k in ("text_kernels", "image_kernels", "regs", "weight_powers",
                                              "n_components", "weights")}
    settings["train_images"] = len(dataset.splits["train"])
    settings["select_train_images"] = args.select_train_images
    if record.get("settings", settings) != settings:
        record = {}  # another search: its candidates are not this one's
    record.update(dataset=dataset.name, settings=settings, machine=machine_info())
    record.setdefault("systems", {})
    save = lambda: _save(out, record)  # noqa: E731
    views = {protocol: dataset.view("dev", protocol) for protocol in PROTOCOLS}
    bank = GramBank(dataset)

    with PeakMemory() as memory:
        start, cpu = time.perf_counter(), time.process_time()
        for name in args.text_kernels + args.image_kernels:
            bank.grams(name)
        chosen = select(bank.first_items(args.select_train_images), args, views, record, save)
        selection = {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}
    if "selection" not in record.get("cost", {}):
        record.setdefault("cost", {})["selection"] = {**selection, "peak_gib": memory.peak_gib,
                                                      "note": "this run's; a resumed run's covers what it redid"}
    record["base_kernels"] = {name: {"view": BASE_KERNELS[name].view, "help": BASE_KERNELS[name].help,
                                     "gram_s": bank.seconds[name], "scale": bank.scale[name]}
                              for name in args.text_kernels + args.image_kernels}
    save()

    best, singles = chosen["best"], chosen["singles"]
    systems = {"mkl": ("multiple-kernel KCCA, selected on dev", best),
               "best_single": ("best single-kernel pair on dev", max(singles.values(), key=lambda e: e["dev_objective"])),
               "best_single_text": ("best single text kernel", singles["text"]),
               "best_single_image": ("best single image kernel", singles["image"])}
    retune = {}
    if args.select_train_images is not None and args.select_train_images < len(bank.train):
        # The kernels' eigenvalues grow with the number of training items, and κ is on their scale.
        factor = len(bank.train) / args.select_train_images
        retune = {"views": views, "regs": [reg * factor for reg in args.regs]}
    seen = set()
    for name, (label, entry) in systems.items():
        key = _key(entry["text"], entry["image"])
        if key in seen and name != "best_single":
            record["systems"].pop(name, None)  # the same system as a row above
            continue
        seen.add(key)
        if name not in record["systems"]:
            # Only the selected system's fit is timed from scratch; the others read the dev search's.
            record["systems"][name] = {"label": label, **test_results(
                bank, dataset, entry, name, args, None if name == "mkl" else args.solver_cache, **retune)}
            save()
        results = record["systems"][name]["results"]
        a, s = results["karpathy"]["annotation"], results["karpathy"]["search"]
        print(f"{name}: karpathy test {a['R@1']:.1f}/{a['R@5']:.1f}/{a['R@10']:.1f} | "
              f"{s['R@1']:.1f}/{s['R@5']:.1f}/{s['R@10']:.1f}", flush=True)
    for system, by_protocol in neural_rows(args.neural, dataset.name).items():
        record["systems"][system] = {"label": NEURAL_ROWS[system], "source": "neural.json",
                                     "results": {p: by_protocol[p] for p in PROTOCOLS}}
    record["cost"]["final_fit"] = record["systems"]["mkl"]["fit"]
    add_tests(record)
    record["published"] = {"klein2015": {"label": "Klein et al. 2015, Fisher vectors (GMM+HGLMM) + CCA, VGG "
                                                  "features (published)", "karpathy": KLEIN_2015}}
    save()
    return record


if __name__ == "__main__":
    run_main(main)
