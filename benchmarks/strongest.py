"""Benchmark: the strongest classical baseline on Flickr8K, multiple-kernel KCCA beside its parts.

Each view's kernel is a weighted sum of base kernels of
:data:`kcca_desc.methods.base_kernels.BASE_KERNELS` over the 6,000 training items (an image and
its five captions): by default text ``minilm_rbf`` (RBF over the items' mean MiniLM sentence
embedding), ``tri_sem`` and ``bow5_idf`` (Hodosh et al. 2013), image ``efficientnet_rbf`` and
``efficientnet_cosine`` (RBF and cosine kernels over EfficientNet-Lite0 features), Hodosh et
al.'s ``pyramid`` and its level 0 ``histo`` (their codebooks learnt on the training images, so a
new training set recomputes every image's features) and ``vit_rbf`` and ``vit_cosine`` (over the
ViT-S/14 features of ``onnx:vit``); RBF bandwidths by the median heuristic. Each base kernel is
centred and scaled to trace n on the training items (:mod:`kcca_desc.kernels.combine`, as
:class:`~kcca_desc.methods.MultipleKernelRanker` does), so a weight reads as a share. A query
caption is an item of one caption.

Every candidate is the exact KCCA solver (:class:`kcca_desc.kcca.KCCA`) over the summed
kernels, scored by the cosine of the projections weighted by ρ^p, its (κ, p, n) chosen on dev by
R@1 + R@5 + R@10 of both tasks summed over both protocols' dev views. The combination is chosen
on dev only, by greedy forward selection: every base kernel alone (beside the first kernel of the
other view), then from the best of those, at each step the base kernel and weight that raise the
dev objective most are added, until none does; each step is recorded (the dev curve). Gram
matrices of the base kernels are computed once and cached (``$KCCA_DESC_CACHE``), so a weight
setting costs one KCCA solve, not a kernel evaluation. A candidate's entry depends only on its
combination, the (κ, p, n) grid and the training items, so a run with more base kernels keeps the
candidates already measured and measures only the new ones.

The test split is read once, at the end: the selected combination, the best single-kernel
systems of each view, the encoder bridges and trained models of ``neural.json`` (linear CCA and
RBF KCCA over MiniLM × EfficientNet-Lite0, VSE and VSE++; copied, not re-run) and the published
figures of Klein et al. (2015) under both protocols, every measured figure with its 95 %
bootstrap interval (search queries resampled by image) and the p-values of paired tests
(McNemar for R@K, paired randomisation for median and mean rank) against the best single-kernel
system. Wall time, CPU time and peak memory of the whole selection and of the final fit are
recorded. The record is written after every dev candidate and every test system, so an
interrupted run resumes where it stopped (``--force`` starts over); a system is tested again only
when the selection chose another combination for it.

The trained models of ``benchmarks/neural.py`` (VSE, VSE++ and char-GRU, in its ``cpu``
configuration, trained on the training split with dev stopping) add their text and image towers
as base kernels, ``<system>_text_rbf``, ``<system>_image_cosine``..., when their checkpoint is
in the cache (:meth:`~kcca_desc.neural.TrainableModel.fit_from_checkpoint`; this benchmark never
trains one). Their Grams and candidates are keyed by the checkpoint, so a model trained again
is measured again. A system summing a tower is a hybrid of that neural model and KCCA, so the
selection is also run without the towers, and both selected systems are tested. A model without
a checkpoint is recorded under ``not_measured`` with the training cost ``neural.json`` records.

Usage::

    python benchmarks/strongest.py --data-root ../shared/flickr8k
    python benchmarks/strongest.py --data-root ../shared/flickr8k --dev-only  # the selection only
    python benchmarks/strongest.py --quick    # the synthetic data set, named kernels only
    python benchmarks/neural.py --train-only --systems vse_hardest   # a trained model's towers, then rerun

References
----------
Klein, B., Lev, G., Sadeh, G. & Wolf, L. (2015). Associating neural word embeddings with deep
image representations using Fisher vectors. CVPR.
Hodosh, M., Young, P. & Hockenmaier, J. (2013). Framing image description as a ranking task:
data, models and evaluation metrics. JAIR 47, 853-899.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping

import numpy as np

from kcca_bench import (PeakMemory, add_output_arguments, benchmark_parser, fill_defaults, flickr8k_or_quick,
                        machine_info, output_path, result_record, run_main)
from kcca_desc._core.cache import NpzCache, atomic_write_text
from kcca_desc.cli.options import positive_int
from kcca_desc.data.dataset import PROTOCOLS, Dataset, RetrievalView
from kcca_desc.evaluate import Result, add_confidence_intervals, add_significance, result_from_scores
from kcca_desc.evaluate.results import dumps_json
from kcca_desc.evaluate.scores import cosine_scores
from kcca_desc.kcca import KCCA
from kcca_desc.kernels.combine import kernel_statistics, normalize_cross_kernel, normalize_train_kernel, weighted_sum
from kcca_desc.methods import MultipleKernelRanker
from kcca_desc.methods.base_kernels import BASE_KERNELS, register_feature_kernels
from kcca_desc.methods.selection import dev_metrics, recall_sum
from kcca_desc.methods.trainable_systems import TRAINABLE_VARIANTS
from kcca_desc.text.preprocess import Preprocessor

#: Published figures of Klein et al. (2015), Table 2 (Flickr8K, karpathy protocol: 1,000 test
#: images, 5,000 captions), GMM+HGLMM Fisher vectors of word2vec words + CCA over VGG features:
#: (R@1, R@5, R@10) of annotation and search. Lists, not results: nothing here has per-query ranks.
KLEIN_2015 = {"annotation": [31.0, 59.3, 73.7], "search": [21.2, 50.0, 64.8]}

#: Systems of ``neural.json`` shown beside ours (copied with their per-query ranks, not re-run).
NEURAL_ROWS = {"cca_minilm_efficientnet": "linear CCA, MiniLM × EfficientNet-Lite0 (30,000 pairs)",
               "kcca_minilm_efficientnet": "RBF KCCA, same features (30,000 pairs, rank 4,096)",
               "vse": "VSE (Kiros et al.), trained", "vse_hardest": "VSE++ (Faghri et al.), trained"}

#: Trained encoders of ``benchmarks/neural.py`` whose towers are feature kernels (their system there
#: -> what they are): without a checkpoint, training one costs what ``neural.json`` records.
TRAINED_TOWERS = {"vse": "VSE (Kiros et al.) text and image towers",
                  "vse_hardest": "VSE++ (Faghri et al.) text and image towers",
                  "char_gru": "char-GRU text tower and its image tower"}

#: The settings a dev candidate's entry depends on: when they change, no candidate measured is kept.
CANDIDATE_SETTINGS = ("regs", "weight_powers", "n_components", "train_images", "select_train_images")


# ----------------------------------------------------------------- base kernels
def side_of(name: str) -> str:
    """The view of base kernel ``name`` of :data:`~kcca_desc.methods.base_kernels.BASE_KERNELS`."""
    return BASE_KERNELS[name].side


class GramBank:
    """The base kernels' Gram matrices on one data set, normalised, each computed once and cached on disk.

    Every base kernel of :data:`~kcca_desc.methods.base_kernels.BASE_KERNELS` is fitted on the
    training items as :class:`~kcca_desc.methods.MultipleKernelRanker` fits it, and its training
    kernel and query rows (the images, or the karpathy view's captions, of each split) are centred
    and scaled to trace n with the training statistics (:mod:`kcca_desc.kernels.combine`), so a
    weight setting only sums them.
    """

    def __init__(self, dataset: Dataset, splits=("dev", "test"), cache: bool = True,
                 identities: Mapping[str, str] | None = None):
        self.dataset = dataset
        # What a name alone does not fix (a trained tower's checkpoint), part of its Grams' key.
        self.identities = dict(identities or {})
        self.train = dataset.subset("train")
        self.queries = {split: dataset.view(split, "karpathy") for split in splits}
        self.cache = cache
        self.store = NpzCache("strongest_gram", enabled=cache)
        self.seconds: dict[str, float] = {}

    def _compute(self, name: str) -> dict[str, np.ndarray]:
        start = time.perf_counter()
        # The system whose settings (seed, cache, bandwidth, preprocessing) the base kernel is fitted with.
        owner = MultipleKernelRanker(cache=self.cache)
        owner.preprocessor_ = Preprocessor(cache=self.cache)
        owner._memo = {}  # query_items' memo, as MultipleKernelRanker.fit starts it
        if side_of(name) == "text":
            owner.train_items_, owner.train_tags_ = owner.preprocessor_.process_items(self.train.captions)
        kernel = BASE_KERNELS[name].build(name, owner).fit(self.train, owner)
        K = kernel.train_gram()
        statistics = kernel_statistics(K, normalization="trace")
        out = {"train": normalize_train_kernel(K, statistics, copy=False).astype(np.float32)}
        del K
        for split, view in self.queries.items():
            new = view.images if side_of(name) == "image" else list(view.captions)
            out[split] = normalize_cross_kernel(kernel.cross(new), statistics, copy=False).astype(np.float32)
        return {**out, "seconds": np.float64(time.perf_counter() - start)}

    def grams(self, name: str) -> dict[str, np.ndarray]:
        """``{"train": (n, n), split: (queries, n), "seconds": computing time}`` of base kernel ``name``."""
        entry = self.store.get_or_compute(lambda: self._compute(name), what="normalised base kernel grams",
                                          kernel=name, normalization="trace", dataset=self.dataset.fingerprint(),
                                          splits=sorted(self.queries),
                                          **({"model": self.identities[name]} if name in self.identities else {}))
        self.seconds[name] = float(entry["seconds"])
        return entry

    def combined(self, weights: Mapping[str, float], split: str) -> np.ndarray:
        """Σ_k w_k K̃_k over ``weights`` (``split``: "train" or a query split), float64."""
        return weighted_sum([self.grams(name)[split] for name in weights], list(weights.values()))


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


def select(bank: GramBank, args, views, record: dict, save, without=(), curve: str = "dev_curve") -> dict:
    """Greedy forward selection on dev; every candidate in ``record["dev_candidates"]``, the steps in ``record[curve]``.

    The base kernels are ``args.text_kernels`` and ``args.image_kernels`` but those of ``without``.
    Returns the selected combination (``"best"``) and the best single kernel of each view beside
    the other view's reference kernel (``"singles"``), each a dev candidate's entry.
    """
    text_kernels = [k for k in args.text_kernels if k not in without]
    image_kernels = [k for k in args.image_kernels if k not in without]
    candidates = record.setdefault("dev_candidates", {})
    def measure(text, image) -> dict:
        key = _key(text, image)
        if key not in candidates:
            candidates[key] = evaluate_candidate(bank, text, image, args, views, args.solver_cache)
            _print_dev(key, candidates[key])
            save()
        return candidates[key]

    text_ref, image_ref = text_kernels[0], image_kernels[0]
    by_dev = lambda entries: max(entries, key=lambda e: e["dev_objective"])  # noqa: E731
    singles = {"text": by_dev([measure({t: 1.0}, {image_ref: 1.0}) for t in text_kernels]),
               "image": by_dev([measure({text_ref: 1.0}, {i: 1.0}) for i in image_kernels])}
    best = by_dev(singles.values())
    steps = [{"added": None, **best}]
    while True:
        used = set(best["text"]) | set(best["image"])
        trials = []
        for name, w in itertools.product([k for k in text_kernels + image_kernels if k not in used],
                                         args.weights):
            side = side_of(name)
            weights = {"text": dict(best["text"]), "image": dict(best["image"])}
            weights[side][name] = w
            trials.append((f"{name}:{w:g}", measure(weights["text"], weights["image"])))
        if not trials:
            break
        added, entry = max(trials, key=lambda t: t[1]["dev_objective"])
        if entry["dev_objective"] <= best["dev_objective"]:
            break
        best = entry
        steps.append({"added": added, **entry})
    record[curve] = steps
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


def tower_kernels(system: str) -> dict[str, list[str]]:
    """The base kernels of the towers of trained model ``system``: view -> names."""
    return {side: [f"{system}_{side}_{kind}" for kind in ("rbf", "cosine")] for side in ("text", "image")}


def tower_model(system: str):
    """The unfitted model ``benchmarks/neural.py`` trains for ``system`` (its cpu configuration, seed 0)."""
    return TRAINABLE_VARIANTS[system].build("cpu", random_state=0)


class SharedEmbeddings:
    """A trained model's embeddings of each list of images or captions, computed once per run.

    A tower's RBF and cosine kernels embed the same items; the model's own embeddings depend on its
    weights and are never cached on disk, so without this each kernel would run the network again
    (a char-GRU tower over 30,000 captions takes minutes).
    """

    def __init__(self, model):
        self.model = model
        self._known: dict[tuple, np.ndarray] = {}

    def embed_images(self, images) -> np.ndarray:
        keys = ("image",) + tuple(images.key(i) for i in range(len(images)))
        return self._memo(keys, lambda: self.model.embed_images(images))

    def embed_texts(self, texts) -> np.ndarray:
        texts = list(texts)
        return self._memo(("text",) + tuple(texts), lambda: self.model.embed_texts(texts))

    def _memo(self, keys: tuple, embed) -> np.ndarray:
        if keys not in self._known:
            self._known[keys] = embed()
        return self._known[keys]


def trained_towers(dataset: Dataset, systems) -> tuple[dict, dict]:
    """Register the towers of the trained models of ``systems`` whose checkpoint is in the cache.

    Each model is the one ``benchmarks/neural.py`` trains on ``dataset``'s training split with dev
    stopping (:func:`tower_model`); with a finished checkpoint it is loaded (never trained here)
    and its text and image towers registered as the feature kernels ``<system>_text_rbf``,
    ``<system>_text_cosine``, ``<system>_image_rbf`` and ``<system>_image_cosine``.

    Returns
    -------
    found : dict
        ``system -> {"checkpoint": key, "kernels": {"text": [...], "image": [...]}, "epochs": n}``.
    missing : dict
        ``system -> reason`` for the others.
    """
    if importlib.util.find_spec("torch") is None:
        return {}, dict.fromkeys(systems, "torch (the 'neural' extra) is not installed")
    train, dev = dataset.subset("train"), dataset.subset("dev")
    found, missing = {}, {}
    for system in systems:
        model = tower_model(system)
        path = model.fit_from_checkpoint(train, dev)
        # Embedding runs on the process's threads, not the one the model trained on (set after
        # loading: the threads are part of the key of the checkpoint the records name).
        model.set_params(n_threads=None)
        if path is None:
            missing[system] = "no trained checkpoint in the cache"
            continue
        shared = SharedEmbeddings(model)
        for side in ("text", "image"):
            register_feature_kernels(f"{system}_{side}", side, lambda owner, shared=shared: shared,
                                     description=f"the trained {system} {side} tower's", replace=True)
        found[system] = {"checkpoint": path.parent.name, "kernels": tower_kernels(system),
                         "epochs": len(model.history_), "train_s": model.timings_s_["train"]}
    return found, missing


def forget_retrained(record: dict, towers: Mapping[str, dict]) -> None:
    """Drop the candidates and systems of ``record`` that sum a tower whose checkpoint has changed.

    A tower of ``record`` that is not among ``towers`` (not asked for, or its checkpoint gone) is
    dropped too: the record would no longer say which checkpoint its candidates measured.
    """
    before = record.get("towers", {})
    stale = {name for system, entry in before.items()
             if towers.get(system, {}).get("checkpoint") != entry["checkpoint"]
             for names in entry["kernels"].values() for name in names}
    uses = lambda entry: bool(stale & (set(entry["text"]) | set(entry["image"])))  # noqa: E731
    for group in ("dev_candidates", "systems"):
        entries = record.get(group, {})
        for key in [k for k, entry in entries.items() if "text" in entry and uses(entry)]:
            del entries[key]


def not_measured(path: Path, dataset: str, missing: Mapping[str, str]) -> dict:
    """The :data:`TRAINED_TOWERS` of ``missing`` (system -> why), each with its training cost in ``neural.json``.

    The cost is what training the model on ``dataset`` took there (wall time, epochs, device), read
    from its karpathy-protocol record.
    """
    records = {r["system"]: r for r in (json.loads(path.read_text()) if path.is_file() else [])
               if r.get("system") in TRAINED_TOWERS and r.get("dataset") == dataset and r.get("protocol") == "karpathy"}
    out = {}
    for system, why in missing.items():
        params = records.get(system, {}).get("params", {})
        cost = {"train_s": params.get("train_s"), "epochs": params.get("epochs"),
                "training_cost": params.get("training_cost")} if params else None
        out[system] = {"what": TRAINED_TOWERS[system], "training": cost,
                       "reason": f"{why}; training one (benchmarks/neural.py --train-only --systems {system}) costs "
                                 + (f"{cost['train_s'] / 60:.0f} min on {cost['training_cost']['device']}"
                                    if cost else "what neural.json does not record")}
    return out


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


def complete(record: dict, neural: Path, dataset: str) -> None:
    """Add what a record shows beside the systems tested so far, so an interrupted run's record is whole.

    The rows of ``neural.json``, the final fit's cost, the paired tests against the best single-kernel
    pair (once tested) and the published figures.
    """
    for system, by_protocol in neural_rows(neural, dataset).items():
        record["systems"][system] = {"label": NEURAL_ROWS[system], "source": "neural.json",
                                     "results": {p: by_protocol[p] for p in PROTOCOLS}}
    if "mkl" in record["systems"]:
        record["cost"]["final_fit"] = record["systems"]["mkl"]["fit"]
    if "best_single" in record["systems"]:
        add_tests(record)
    record["published"] = {"klein2015": {"label": "Klein et al. 2015, Fisher vectors (GMM+HGLMM) + CCA, VGG "
                                                  "features (published)", "karpathy": KLEIN_2015}}


DEFAULTS = {
    "full": {"text_kernels": "minilm_rbf,tri_sem,bow5_idf",
             "image_kernels": "efficientnet_rbf,efficientnet_cosine,pyramid,histo,vit_rbf,vit_cosine",
             "regs": "0.3,1,3,10,30", "weight_powers": "1,2,4", "n_components": "256,512", "weights": "1",
             "towers": ",".join(TRAINED_TOWERS)},
    "quick": {"text_kernels": "bow5_idf,tri5", "image_kernels": "histo,pyramid",
              "regs": "0.1,1", "weight_powers": "0,1", "n_components": "4,8", "weights": "1", "towers": ""},
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
    p.add_argument("--towers", help=f"trained models ({', '.join(TRAINED_TOWERS)}) whose text and image towers "
                                    "join the base kernels when their checkpoint is in the cache (default: all; "
                                    "quick: none)")
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
    p.add_argument("--dev-only", action="store_true",
                   help="stop after the selection on dev, the test split unread (a later run resumes from it)")
    add_output_arguments(p, "the synthetic data set, named kernels, a 2 x 2 x 2 grid")
    args = fill_defaults(p.parse_args(argv), DEFAULTS)
    args.towers = [name for name in args.towers.split(",") if name]
    if set(args.towers) - set(TRAINED_TOWERS):
        p.error(f"--towers: not trained models of benchmarks/neural.py: {sorted(set(args.towers) - set(TRAINED_TOWERS))}"
                f" (known: {', '.join(TRAINED_TOWERS)})")
    args.text_kernels, args.image_kernels = args.text_kernels.split(","), args.image_kernels.split(",")
    # Checked before the data is read: a tower's kernels are registered only once its model is loaded.
    tower_view = {name: side for system in TRAINED_TOWERS for side, names in tower_kernels(system).items()
                  for name in names}
    tower_of = {name: system for system in TRAINED_TOWERS for names in tower_kernels(system).values() for name in names}
    view_of = lambda n: tower_view.get(n) or (side_of(n) if n in BASE_KERNELS else None)  # noqa: E731
    for option, names in (("--text-kernels", args.text_kernels), ("--image-kernels", args.image_kernels)):
        view = option[2:].split("-")[0]
        wrong = [n for n in names if view_of(n) != view]
        if wrong:
            p.error(f"{option}: not {view} base kernels: {wrong}")
        elsewhere = [n for n in names if n in tower_of and tower_of[n] not in args.towers]
        if elsewhere:
            p.error(f"{option}: {elsewhere} are towers of models not among --towers ({', '.join(args.towers) or 'none'})")
    full = flickr8k_or_quick(args.data_root, args.quick)
    towers, missing = trained_towers(full, args.towers)
    untrained = {n: missing[tower_of[n]] for n in args.text_kernels + args.image_kernels if tower_of.get(n) in missing}
    if untrained:
        p.error("towers named but not at hand (python benchmarks/neural.py --train-only --systems NAME trains one): "
                + "; ".join(f"{n}: {why}" for n, why in untrained.items()))
    for entry in towers.values():
        args.text_kernels += [n for n in entry["kernels"]["text"] if n not in args.text_kernels]
        args.image_kernels += [n for n in entry["kernels"]["image"] if n not in args.image_kernels]
    args.regs, args.weight_powers, args.weights = floats(args.regs), floats(args.weight_powers), floats(args.weights)
    args.n_components = [int(v) for v in args.n_components.split(",")]
    out = output_path(args, __file__)

    dataset = with_training_images(full, args.train_images)
    record = {} if args.force else _load(out)
    forget_retrained(record, towers)
    settings = {k: getattr(args, k) for k in ("text_kernels", "image_kernels", "regs", "weight_powers",
                                              "n_components", "weights")}
    settings["train_images"] = len(dataset.splits["train"])
    settings["select_train_images"] = len(with_training_images(dataset, args.select_train_images).splits["train"])
    kept = record.get("settings", settings)
    if any(kept.get(k) != settings[k] for k in CANDIDATE_SETTINGS):
        record = {}  # another search: its candidates are not this one's
    measured_before = len(record.get("dev_candidates", {}))
    record.update(dataset=dataset.name, settings=settings, machine=machine_info(),
                  train_split_images=len(full.splits["train"]), towers=towers)
    record.setdefault("systems", {})
    save = lambda: _save(out, record)  # noqa: E731
    views = {protocol: dataset.view("dev", protocol) for protocol in PROTOCOLS}
    # A selection on fewer training items has a bank of its own: the kernels normalised on those items.
    identities = {name: entry["checkpoint"] for entry in towers.values()
                  for names in entry["kernels"].values() for name in names}
    selection_bank = GramBank(with_training_images(dataset, args.select_train_images), identities=identities)

    with PeakMemory() as memory:
        start, cpu = time.perf_counter(), time.process_time()
        for name in args.text_kernels + args.image_kernels:
            selection_bank.grams(name)
        chosen = select(selection_bank, args, views, record, save)
        # The trained towers make a hybrid of a neural model and KCCA: the best system without them too.
        without = (select(selection_bank, args, views, record, save, without=set(identities),
                          curve="dev_curve_without_towers") if identities else None)
        selection = {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}
    selection["peak_gib"] = memory.peak_gib
    cost = record.setdefault("cost", {})
    if "selection" not in cost:
        cost["selection"] = {**selection, "candidates": len(record["dev_candidates"]) - measured_before,
                             "note": "this run's; a resumed run's covers what it redid"}
    elif len(record["dev_candidates"]) > measured_before:
        # A run with more base kernels: what measuring its new candidates (and their Grams) cost.
        cost.setdefault("selection_added", []).append(
            {**selection, "candidates": len(record["dev_candidates"]) - measured_before,
             "load_average_at_start": record["machine"]["load_average_at_start"]})
    record["not_measured"] = not_measured(args.neural, dataset.name, missing)
    if without is None:
        record.pop("dev_curve_without_towers", None)
        record["systems"].pop("mkl_without_towers", None)
    if args.dev_only:
        save()
        return record
    best, singles = chosen["best"], chosen["singles"]
    systems = {"mkl": ("multiple-kernel KCCA, selected on dev", best),
               **({"mkl_without_towers": ("multiple-kernel KCCA without the trained towers, selected on dev",
                                          without["best"])} if without else {}),
               "best_single": ("best single-kernel pair on dev", max(singles.values(), key=lambda e: e["dev_objective"])),
               "best_single_text": ("best single text kernel", singles["text"]),
               "best_single_image": ("best single image kernel", singles["image"])}
    # The full training set's Grams of the kernels the tested systems sum (a base kernel no system
    # uses is not computed on all the training items: for an encoder, that would embed them all).
    bank = GramBank(dataset, identities=identities)
    used = {name for _, entry in systems.values() for name in (*entry["text"], *entry["image"])}
    kernels = record.setdefault("base_kernels", {})
    for name in args.text_kernels + args.image_kernels:
        kernels[name] = {**kernels.get(name, {}), "view": side_of(name), "help": BASE_KERNELS.help(name),
                         "selection_gram_s": selection_bank.seconds[name]}
        if name in used:
            bank.grams(name)
            kernels[name]["gram_s"] = bank.seconds[name]
    save()

    retune = {}
    if len(selection_bank.train) < len(bank.train):
        # The kernels' eigenvalues grow with the number of training items, and κ is on their scale.
        factor = len(bank.train) / len(selection_bank.train)
        retune = {"views": views, "regs": [reg * factor for reg in args.regs]}
    seen = set()
    for name, (label, entry) in systems.items():
        key = _key(entry["text"], entry["image"])
        if key in seen and name != "best_single":
            record["systems"].pop(name, None)  # the same system as a row above
            continue
        seen.add(key)
        tested = record["systems"].get(name, {})
        if (tested.get("text"), tested.get("image")) != (entry["text"], entry["image"]):
            # Only the selected system's fit is timed from scratch; the others read the dev search's.
            record["systems"][name] = {"label": label, **test_results(
                bank, dataset, entry, name, args, None if name == "mkl" else args.solver_cache, **retune)}
            complete(record, args.neural, dataset.name)
            save()
        results = record["systems"][name]["results"]
        a, s = results["karpathy"]["annotation"], results["karpathy"]["search"]
        print(f"{name}: karpathy test {a['R@1']:.1f}/{a['R@5']:.1f}/{a['R@10']:.1f} | "
              f"{s['R@1']:.1f}/{s['R@5']:.1f}/{s['R@10']:.1f}", flush=True)
    complete(record, args.neural, dataset.name)
    save()
    return record


if __name__ == "__main__":
    run_main(main)
