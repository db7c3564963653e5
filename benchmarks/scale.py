"""Benchmark: classical KCCA at MS-COCO size, in chunks, on Dask and out of core.

Writes ``benchmarks/results/scale.json`` and prints the figures of each section:

``landmark_choice``
    Dev retrieval at equal rank of the landmark choices of :class:`kcca_desc.scale.LandmarkKCCA`
    (greedy incomplete-Cholesky pivots of a sample, uniform landmarks, pivots over all rows) on
    a small caption-level problem: the measurement behind the default (``docs/design.md``).
``series``
    Wall time and peak memory (resident, this process and every worker process) of the landmark
    KCCA fit plus the projection of a dev pool at a fixed rank, on Dask (a local cluster sized to
    the machine, or ``--scheduler``), for n = 10,000, 30,000, 100,000
    and 566,435 caption-level training pairs, and the exponent of a power law fitted to time(n).
``flickr8k_sized``
    At 30,000 caption-level pairs (6,000 images x 5 captions) and equal rank: the in-memory
    low-rank KCCA (incomplete Cholesky through column oracles, ``benchmarks/kcca.py``), the
    landmark KCCA in one process and on Dask (two single-threaded worker processes): fit
    time, peak memory and dev R@10.
``engines``
    At 100,000 pairs, side by side in one run: one process against Dask with two
    single-threaded workers as processes and as threads (speed-up, memory).
``multikernel``
    Multiple-kernel KCCA through cached landmark columns (the path of
    :class:`kcca_desc.methods.ScalableMultipleKernelRanker`) at 30,000 training items, beyond the
    exact solver's memory: two image kernels (histogram intersection, chi²) and two text kernels
    (cosine of the items' bags of words, plain and idf-weighted), each view's columns against its
    landmarks computed once (:func:`kcca_desc.scale.base_columns`), then seven weight settings
    (uniform, the alignment weights ``align`` and ``alignf``, every single text-image pair), each a
    landmark KCCA fit on summed cached columns and a dev projection; beside them one fit of the
    uniform sum that computes its kernel values itself, the cost every setting would have without
    the cache.  Time, peak memory and dev R@10 of each setting.
``coco``
    The Tri5Sem-style system (:class:`kcca_desc.methods.scalable.ScalableRanker`: caption
    preprocessing and image features in partitions, landmark kernels, the (n, κ) grid on dev,
    selection, Borda fusion) on a synthetic data set of MS-COCO's Karpathy split sizes
    (113,287 / 5,000 / 5,000 images, five captions each, a Zipfian vocabulary of 25,000 word
    types), on Dask, scored on the COCO 5K pool and the COCO 1K pools (mean of five folds).

The series, the 30,000-pair and the engine comparisons use the topic-structured synthetic
kernels of ``benchmarks/kcca.py`` (pyramid-like histogram intersection, bag-of-words cosine),
with a held-out dev pool of 1,000 images drawn with the training pairs.

Usage (the full run is one command; it needs the dask extra and about two hours on 2 cores)::

    python benchmarks/scale.py                              # full run, local Dask cluster
    python benchmarks/scale.py --scheduler tcp://host:8786  # on an existing Dask cluster
    python benchmarks/scale.py --quick                      # tiny sizes, seconds
    python benchmarks/scale.py --sections series --merge    # one section, the others kept from the record
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (PeakMemory, add_output_arguments, fill_defaults, machine_info, output_path, result_record,
                             synthetic_items, timed_with_memory, timed_with_peak_rss, write_results)
from kcca_desc._core.cache import cache_dir
from kcca_desc.data import EVALUATION_POOLS, EvaluationPool, make_synthetic
from kcca_desc.evaluate import bootstrap_ci, evaluate_pool_folds, fold_average, gold_ranks, retrieval_metrics
from kcca_desc.kcca import KCCA, CallableKernelColumns
from kcca_desc.kernels.combine import ALIGNMENT_METHODS, alignment_weights_from_products
from kcca_desc.methods.ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS
from kcca_desc.methods.scalable import ScalableRanker
from kcca_desc.scale import (DEFAULT_CHUNK_SIZE, SCHEDULER_ENV, ChunkStore, HistogramIntersection, KernelSum,
                             KernelView, LandmarkKCCA, LinearKernel, base_columns, centred_inner_products, dask_engine)
from kcca_desc.scale.views import PairwiseKernel
from kcca_desc.evaluate.scores import cosine_scores

SEED = 0
CAPTIONS = 5
COCO_SPLITS = (113_287, 5_000, 5_000)
SECTIONS = ("landmark_choice", "series", "flickr8k_sized", "engines", "multikernel", "coco")
#: The sections that run on a Dask cluster of worker processes.
DASK_SECTIONS = {"series", "flickr8k_sized", "engines", "coco"}
#: The settings every section of one record shares: a merged record never mixes two of them.
SHARED_SETTINGS = ("seed", "n_components", "rank", "chunk_size", "scheduler")


# ---------------------------------------------------------------------------- inputs
def n_components(rank: int) -> int:
    """Canonical directions kept: 64, or half the rank when that is smaller (quick runs)."""
    return min(64, rank // 2)


class Pairs:
    """Caption-level training pairs and a dev pool of one synthetic draw (``benchmarks/kcca.py``'s kernels).

    With a ``store`` the training items go to disk (Zarr, ``chunk_rows`` rows a chunk) and the
    views read them from there, as a run over stored features does: each Dask worker then reads
    the rows of its chunks instead of holding its own copy of every item.
    """

    def __init__(self, n_pairs: int, n_dev_images: int, seed: int = SEED, store: ChunkStore | None = None,
                 chunk_rows: int = DEFAULT_CHUNK_SIZE):
        n_images = n_pairs // CAPTIONS
        hist, bow = synthetic_items(n_images + n_dev_images, CAPTIONS, seed=seed)
        self.n_images, self.n_dev = n_images, n_dev_images
        image_kernel, text_kernel = HistogramIntersection(2.0), LinearKernel()
        train_hist, train_bow = hist[:n_images], bow[:n_images * CAPTIONS]
        index = np.repeat(np.arange(n_images), CAPTIONS)
        # The inputs a fit holds in each process (every Dask worker gets its own copy of the views):
        # the row index, and the items unless they are stored.
        held = index.nbytes
        if store is None:
            held += train_hist.nbytes + train_bow.data.nbytes + train_bow.indices.nbytes + train_bow.indptr.nbytes
        else:
            train_hist = store.put("histograms", train_hist, chunk_rows)
            train_bow = store.put_sparse("bags_of_words", train_bow, chunk_rows)
        self.input_gib = held / 2**30
        self.X = KernelView(train_hist, image_kernel, index=index)
        self.Y = KernelView(train_bow, text_kernel)
        # Copies, so that the dev pool does not keep the whole draw alive.
        self.X_dev = KernelView(hist[n_images:].copy(), image_kernel)
        self.Y_dev = KernelView(bow[n_images * CAPTIONS:], text_kernel)


def dev_record(image_projection: np.ndarray, caption_projection: np.ndarray) -> dict:
    """R@1/5/10 and median rank of both tasks on the dev pool, with the per-query ranks."""
    scores = cosine_scores(image_projection, caption_projection)
    n = scores.shape[0]
    ranks = {"annotation": gold_ranks(scores, [np.arange(i * CAPTIONS, (i + 1) * CAPTIONS) for i in range(n)]),
             "search": gold_ranks(scores.T, [np.array([j // CAPTIONS]) for j in range(n * CAPTIONS)])}
    return {task: {k: v for k, v in retrieval_metrics(r).items()} for task, r in ranks.items()} | {
        "ranks": {task: r.tolist() for task, r in ranks.items()},
        "caption_image": np.repeat(np.arange(n), CAPTIONS).tolist()}


def landmark_fit(pairs: Pairs, rank: int, chunk_size: int, engine=None, landmarks: str = "pivots",
                 oversample: float = 4.0) -> dict:
    """Fit and dev projection of the landmark KCCA: seconds, peak memory, dev figures."""
    def run():
        model = LandmarkKCCA(n_components=n_components(rank), reg=1.0, rank=rank, landmarks=landmarks,
                             oversample=oversample, chunk_size=chunk_size, engine=engine).fit(pairs.X, pairs.Y)
        return model, model.transform(pairs.X_dev, pairs.Y_dev)

    (model, projections), seconds, memory = timed_with_memory(run)
    rx, ry = model.map_x_.rank, model.map_y_.rank
    return {"n_pairs": pairs.X.n_samples, "rank": rank, "landmarks": landmarks, "chunk_size": chunk_size,
            "engine": "local" if engine is None else "dask", "wall_s": seconds, "peak_gib": memory.peak_gib,
            "peak_split_gib": memory.peak_split_gib, "input_gib": pairs.input_gib,
            # Each chunk's partial result, waiting to be added to the running sum: these r x r sums.
            "n_chunks": -(-pairs.X.n_samples // chunk_size),
            "partial_sum_gib": 8 * (rx * rx + ry * ry + rx * ry + rx + ry + 2) / 2**30,
            "explained_trace": [model.explained_trace_x_, model.explained_trace_y_],
            "top_correlations": model.canonical_correlations_[:3].tolist(), "dev": dev_record(*projections)}


def incomplete_cholesky_fit(pairs: Pairs, rank: int) -> dict:
    """The in-memory low-rank KCCA through column oracles (benchmarks/kcca.py), with the same dev pool."""
    hist = pairs.X.items
    image_of = pairs.X.index
    bow = pairs.Y.items
    n = image_of.size

    def run():
        image_view = CallableKernelColumns(n, lambda idx: pairs.X.kernel(hist[image_of], hist[image_of[idx]]),
                                           lambda: pairs.X.diagonal(np.arange(n)))
        text_view = CallableKernelColumns(n, lambda idx: (bow @ bow[idx].T).toarray(),
                                          lambda: np.asarray(bow.multiply(bow).sum(axis=1)).ravel())
        model = KCCA(n_components=n_components(rank), reg=1.0, method="lowrank", rank=rank).fit(image_view, text_view)
        K_images = pairs.X.kernel(pairs.X_dev.items, hist)[:, image_of]
        K_captions = (pairs.Y_dev.items @ bow.T).toarray()
        return model, model.transform(K_images, K_captions)

    (model, projections), seconds, peak = timed_with_peak_rss(run)
    return {"n_pairs": n, "rank": rank, "engine": "in-memory incomplete Cholesky", "wall_s": seconds,
            "peak_gib": peak, "explained_trace": [model.explained_trace_x_, model.explained_trace_y_],
            "top_correlations": model.canonical_correlations_[:3].tolist(), "dev": dev_record(*projections)}


def _line(label: str, row: dict) -> str:
    dev = row["dev"]
    return (f"{label}: {row['wall_s']:.1f} s, peak {row['peak_gib']:.2f} GiB, dev R@10 "
            f"annotation {dev['annotation']['R@10']:.1f} / search {dev['search']['R@10']:.1f}")


def section_engine(shared, scheduler: str | None, **settings):
    """The context of a section's Dask engine: ``shared`` as it is, else ``dask_engine(scheduler, **settings)``.

    ``shared`` is a quick run's one local cluster, which every section uses and :func:`main` closes.
    """
    return contextlib.nullcontext(shared) if shared is not None else dask_engine(scheduler, **settings)


# ---------------------------------------------------------------------------- sections
def landmark_choice(n_pairs: int, rank: int, n_dev: int, chunk_size: int) -> list[dict]:
    pairs = Pairs(n_pairs, n_dev)
    rows = [landmark_fit(pairs, rank, chunk_size, landmarks="pivots"),
            landmark_fit(pairs, rank, chunk_size, landmarks="uniform"),
            landmark_fit(pairs, rank, chunk_size, landmarks="pivots", oversample=n_pairs / rank)]
    rows[2]["landmarks"] = "pivots over all rows"
    for row in rows:
        print(_line(f"landmarks {row['landmarks']} (n={n_pairs}, rank {rank})", row))
    return rows


def series(sizes: Sequence[int], rank: int, n_dev: int, chunk_size: int, scheduler: str | None,
           shared=None) -> dict:
    rows = []
    with section_engine(shared, scheduler, threads_per_worker=1) as engine:
        # What the processes hold before any work: the floor under every row's peak.
        with PeakMemory() as idle:
            time.sleep(1.0)
        for n in sizes:
            # The training items on disk, where every worker can read them (the cache directory,
            # which a multi-machine cluster shares), for this row only.
            with tempfile.TemporaryDirectory(dir=cache_dir("scale")) as root:
                pairs = Pairs(n, n_dev, store=ChunkStore(f"series_inputs_{n}", root), chunk_rows=chunk_size)
                row = landmark_fit(pairs, rank, chunk_size, engine=engine)
            rows.append(row)
            print(_line(f"series n={n} rank {rank} (Dask)", row))
    exponent = float(np.polyfit(np.log([r["n_pairs"] for r in rows]), np.log([r["wall_s"] for r in rows]), 1)[0])
    print(f"series: time ~ n^{exponent:.2f}; peak memory {[round(r['peak_gib'], 2) for r in rows]} GiB "
          f"(idle cluster {idle.peak_gib:.2f} GiB; inputs {[round(r['input_gib'], 2) for r in rows]} GiB per process)")
    return {"rows": rows, "fitted_time_exponent": exponent, "idle_cluster_gib": idle.peak_gib}


def dev_r10_difference(row: dict, baseline: dict) -> dict:
    """Dev R@10 of ``row`` minus ``baseline``'s, in points, with a 95% paired bootstrap interval per task.

    The five captions of an image are five search queries about one image, not independent ones, so
    search is resampled by image (the cluster bootstrap); with five captions to every image the mean of
    the images' means is the mean over the queries.
    """
    out = {}
    for task in ("annotation", "search"):
        hit, base = (np.asarray(r["dev"]["ranks"][task]) <= 10 for r in (row, baseline))
        difference = 100.0 * (hit.astype(float) - base)
        if task == "search":
            difference = difference.reshape(-1, CAPTIONS).mean(axis=1)
        out[task] = {"difference": float(difference.mean()), "ci95": list(bootstrap_ci(difference, seed=SEED))}
    return out


def flickr8k_sized(n_pairs: int, rank: int, n_dev: int, chunk_size: int, scheduler: str | None,
                   shared=None) -> dict:
    pairs = Pairs(n_pairs, n_dev)
    out = {"in_memory": incomplete_cholesky_fit(pairs, rank), "local": landmark_fit(pairs, rank, chunk_size)}
    with section_engine(shared, scheduler, n_workers=2, threads_per_worker=1) as engine:
        out["dask"] = landmark_fit(pairs, rank, chunk_size, engine=engine)
    # The landmark path's default pivots come from a sample of the rows; over all rows they are the
    # in-memory solver's, which separates the sampling from the solver in the dev figures.
    out["local_all_pivots"] = landmark_fit(pairs, rank, chunk_size, oversample=n_pairs / rank)
    for key, row in out.items():
        print(_line(f"{n_pairs} pairs, {key}", row))
    out["dask_over_in_memory_time"] = out["dask"]["wall_s"] / out["in_memory"]["wall_s"]
    # Equal when the two solve the same reduced problem; the dev figures can still differ, since the
    # in-memory solver projects a new item through its kernel row against every training item and the
    # landmark path through its row against the landmarks (the Nyström extension).
    out["all_pivots_correlation_difference"] = float(np.max(np.abs(
        np.subtract(out["local_all_pivots"]["top_correlations"], out["in_memory"]["top_correlations"]))))
    out["dev_r10_minus_in_memory"] = {key: dev_r10_difference(out[key], out["in_memory"])
                                      for key in ("local", "dask", "local_all_pivots")}
    for key, tasks in out["dev_r10_minus_in_memory"].items():
        print(f"{n_pairs} pairs, {key} minus in-memory, dev R@10: " + ", ".join(
            f"{task} {d['difference']:+.2f} (95% CI {d['ci95'][0]:+.2f} to {d['ci95'][1]:+.2f})"
            for task, d in tasks.items()))
    return out


def engines(n_pairs: int, rank: int, n_dev: int, chunk_size: int, shared=None) -> dict:
    pairs = Pairs(n_pairs, n_dev)
    out = {"one_process": landmark_fit(pairs, rank, chunk_size)}
    for name, processes in (("dask_2_processes", True), ("dask_2_threads", False)):
        with section_engine(shared if processes else None, None, n_workers=2, threads_per_worker=1,
                            processes=processes) as engine:
            out[name] = landmark_fit(pairs, rank, chunk_size, engine=engine)
    for key in ("dask_2_processes", "dask_2_threads"):
        out[f"{key}_speedup"] = out["one_process"]["wall_s"] / out[key]["wall_s"]
    for key in ("one_process", "dask_2_processes", "dask_2_threads"):
        print(_line(f"{n_pairs} pairs, {key}", out[key]))
    return out


def coco(splits: tuple[int, int, int], pools: dict[str, EvaluationPool], *, rank: int, chunk_size: int,
         image_size: int, vocabulary: int, text_kernel: str, scheduler: str | None, store: str | None,
         grid: dict, shared=None) -> dict:
    n_images = sum(splits)
    # keep_images=False: the images are rendered again where they are read, as a real run reads them
    # from disk, instead of 0.85 GB of pixels held by this process for the whole run.
    data = make_synthetic(n_images=n_images, seed=SEED, image_size=image_size, vocabulary=vocabulary,
                          split_fractions=tuple(s / n_images for s in splits), keep_images=False)
    train, dev = data.subset("train"), data.view("dev")
    out = {"splits": dict(zip(("train", "dev", "test"), map(int, splits))), "rank": rank, "text_kernel": text_kernel,
           "grid": {key: list(values) for key, values in grid.items()},
           "image_size": image_size, "vocabulary": vocabulary, "chunk_size": chunk_size, "pools": {}}
    with section_engine(shared, scheduler, threads_per_worker=1) as engine:
        out["workers"] = len(engine.client.scheduler_info()["workers"])
        ranker = ScalableRanker(text_kernel=text_kernel, rank=rank, chunk_size=chunk_size, engine=engine,
                                store=store, image_kernel_params={"progress": False}, **grid)
        _, out["fit_wall_s"], memory = timed_with_memory(lambda: ranker.fit(train, dev), window=10.0)
        out |= {"fit_peak_gib": memory.peak_gib, "fit_peak_split_gib": memory.peak_split_gib,
                "fit_memory_timeline": memory.timeline}
        out["stage_s"] = ranker.timings_s_
        for name, pool in pools.items():
            folds, seconds, memory = timed_with_memory(lambda: evaluate_pool_folds(ranker, data, pool),
                                                       window=10.0)
            entry = {"score_wall_s": seconds, "score_peak_gib": memory.peak_gib,
                     "score_peak_split_gib": memory.peak_split_gib, "pool": pool.record(),
                     "folds": [result_record(r, v) for r, v in zip(folds, pool.views(data))]}
            if pool.n_folds > 1:
                mean = fold_average(folds, pool)
                # The published figure: the mean over folds (its median is the mean of the folds' medians,
                # so it is recomputed from the folds' records, not from pooled ranks).
                entry["fold_mean"] = {"annotation": mean.annotation, "search": mean.search}
            out["pools"][name] = entry
            figure = entry.get("fold_mean", entry["folds"][0])
            print(f"coco {name}: annotation R@1/5/10 {figure['annotation']['R@1']:.1f}/"
                  f"{figure['annotation']['R@5']:.1f}/{figure['annotation']['R@10']:.1f}, search "
                  f"{figure['search']['R@1']:.1f}/{figure['search']['R@5']:.1f}/{figure['search']['R@10']:.1f}")
    out["wall_s"] = out["fit_wall_s"] + sum(p["score_wall_s"] for p in out["pools"].values())
    out["peak_gib"] = max([out["fit_peak_gib"]] + [p["score_peak_gib"] for p in out["pools"].values()])
    split = out["fit_peak_split_gib"]
    print(f"coco: fit {out['fit_wall_s']:.0f} s, end to end {out['wall_s']:.0f} s, peak {out['peak_gib']:.2f} GiB "
          f"(fit peak: {split['this_process']:.2f} GiB in this process, "
          f"{', '.join(f'{g:.2f}' for g in split['descendants'])} GiB in the others)")
    return out


class ItemViews:
    """Item-level views of one synthetic draw (an image with all its captions: the multiple-kernel
    system's items), two base kernels per view, and dev images with their single captions.
    """

    def __init__(self, n_items: int, n_dev_images: int, seed: int = SEED):
        hist, bow = synthetic_items(n_items + n_dev_images, CAPTIONS, seed=seed)
        n_captions = bow.shape[0]
        # An item's text: the L2-normalised sum of its captions' bags of words; a dev query: one caption.
        summed = sp.csr_matrix((np.ones(n_captions), (np.arange(n_captions) // CAPTIONS, np.arange(n_captions)))) @ bow
        items, queries = _unit_rows(summed[:n_items]), bow[n_items * CAPTIONS:]
        idf = sp.diags(np.log(n_items / (1.0 + np.bincount(items.indices, minlength=items.shape[1]))))
        self.kernels = {"image": {"intersection": HistogramIntersection(1.0), "chi2": PairwiseKernel("chi2")},
                        "text": {"bow": LinearKernel(), "bow_idf": LinearKernel()}}
        self.items = {"image": {"train": dict.fromkeys(self.kernels["image"], hist[:n_items]),
                                "dev": dict.fromkeys(self.kernels["image"], hist[n_items:])},
                      "text": {"train": {"bow": items, "bow_idf": _unit_rows(items @ idf)},
                               "dev": {"bow": queries, "bow_idf": _unit_rows(queries @ idf)}}}

    def views(self, side: str) -> dict[str, KernelView]:
        """Each base kernel's view of the training items of ``side``."""
        return {name: KernelView(self.items[side]["train"][name], kernel)
                for name, kernel in self.kernels[side].items()}


def _unit_rows(rows: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1))).ravel()
    return (sp.diags(1.0 / np.maximum(norms, np.finfo(np.float64).tiny)) @ rows).tocsr()


def multikernel(n_items: int, rank: int, n_dev: int, chunk_size: int) -> dict:
    data = ItemViews(n_items, n_dev)
    rng = np.random.default_rng(SEED)
    out = {"n_items": n_items, "rank": rank, "n_dev_images": n_dev,
           "base_kernels": {side: list(kernels) for side, kernels in data.kernels.items()},
           # What the exact solver would hold: the base kernels and four more n x n matrices.
           "exact_gib_needed": (sum(map(len, data.kernels.values())) + 4) * 8 * n_items**2 / 2**30}

    def prepare():
        columns = {side: base_columns(data.views(side), rank, rng=rng, chunk_size=chunk_size)
                   for side in ("image", "text")}
        dev = {side: columns[side].landmarks.columns(data.items[side]["dev"], chunk_size=chunk_size)
               for side in ("image", "text")}
        return columns, dev

    (columns, dev), out["columns_s"], memory = timed_with_memory(prepare)
    out["columns_peak_gib"] = memory.peak_gib
    scales = {side: n_items / columns[side].centred_traces() for side in ("image", "text")}
    products, out["inner_products_s"], _ = timed_with_memory(
        lambda: centred_inner_products([columns["image"], columns["text"]], chunk_size=chunk_size))
    # Of the normalised kernels, image kernels first (MultipleKernelRanker's "align" / "alignf": each view's
    # kernels aligned with the other view's uniform sum).
    scale = np.concatenate([scales["image"], scales["text"]])
    products *= np.outer(scale, scale)
    settings = {"uniform": {side: np.full(2, 0.5) for side in ("image", "text")}}
    for method in ALIGNMENT_METHODS:
        settings[method] = {side: alignment_weights_from_products(
            products[np.ix_(own, own)], products[np.ix_(own, other)] @ np.full(2, 0.5), method=method)
            for side, own, other in (("image", [0, 1], [2, 3]), ("text", [2, 3], [0, 1]))}
    for i, image_name in enumerate(data.kernels["image"]):
        for t, text_name in enumerate(data.kernels["text"]):
            settings[f"{image_name}+{text_name}"] = {"image": np.eye(2)[i], "text": np.eye(2)[t]}

    def fit(train_views, dev_views) -> tuple:
        model = LandmarkKCCA(n_components=n_components(rank), reg=1.0, rank=rank, chunk_size=chunk_size)
        return model.fit(*train_views).transform(*dev_views)

    out["settings"] = {}
    for name, weights in settings.items():
        summed = {side: weights[side] * scales[side] for side in ("image", "text")}
        projections, seconds, memory = timed_with_memory(lambda: fit(
            [columns[side].view(summed[side]) for side in ("image", "text")],
            [dev[side].view(summed[side]) for side in ("image", "text")]))
        out["settings"][name] = {"weights": {side: w.tolist() for side, w in weights.items()}, "wall_s": seconds,
                                 "peak_gib": memory.peak_gib, "dev": dev_record(*projections)}
        print(_line(f"multikernel {name} (n={n_items}, rank {rank}, cached columns)", out["settings"][name]))

    # The uniform sum as one kernel without the cache: LandmarkKCCA chooses its landmarks and computes every
    # kernel value again, of the training and the dev items: what each setting would cost without it.
    uniform = [KernelSum(columns[side].landmarks.kernels, tuple(0.5 * scales[side])) for side in ("image", "text")]
    row = {}
    projections, row["wall_s"], memory = timed_with_memory(lambda: fit(
        [KernelView(data.items[side]["train"], kernel) for side, kernel in zip(("image", "text"), uniform)],
        [KernelView(data.items[side]["dev"], kernel) for side, kernel in zip(("image", "text"), uniform)]))
    out["uncached_uniform"] = {**row, "peak_gib": memory.peak_gib, "dev": dev_record(*projections)}
    print(_line(f"multikernel uniform (n={n_items}, rank {rank}, every kernel value computed)",
                out["uncached_uniform"]))
    cached = sum(row["wall_s"] for row in out["settings"].values())
    out["wall_s"] = out["columns_s"] + out["inner_products_s"] + cached
    out["peak_gib"] = max([out["columns_peak_gib"]] + [row["peak_gib"] for row in out["settings"].values()])
    print(f"multikernel: columns {out['columns_s']:.1f} s once, inner products {out['inner_products_s']:.1f} s, "
          f"{len(settings)} settings {cached:.1f} s in all (uncached, one setting: "
          f"{out['uncached_uniform']['wall_s']:.1f} s); "
          f"peak {out['peak_gib']:.2f} GiB (the exact solver: {out['exact_gib_needed']:.1f} GiB)")
    return out


# ---------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> dict:
    parser = benchmark_parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--scheduler", default=os.environ.get(SCHEDULER_ENV),
                        help=f"address of an existing Dask scheduler (default ${SCHEDULER_ENV}; none: a local cluster)")
    parser.add_argument("--rank", type=positive_int, default=None, help="landmarks per view (default 2000; quick 40)")
    parser.add_argument("--chunk-size", type=positive_int, default=None, help="rows per chunk (default 4096; quick 256)")
    parser.add_argument("--sizes", default=None, help="comma-separated training pairs of the series")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other sections of an existing record (run with the same settings)")
    parser.add_argument("--store", default=None, help="chunk store directory of the COCO run (default: the cache)")
    parser.add_argument("--text-kernel", default="tri_sem")
    add_output_arguments(parser, "series of 1,000-4,000 pairs, a 90-image COCO-shaped run, rank 40")
    args = fill_defaults(parser.parse_args(argv), {
        "full": {"rank": 2000, "chunk_size": 4096, "sizes": "10000,30000,100000,566435"},
        "quick": {"rank": 40, "chunk_size": 256, "sizes": "1000,2000,4000"}})
    sections = set(args.sections.split(","))
    if not sections <= set(SECTIONS):
        parser.error(f"--sections: unknown {', '.join(sorted(sections - set(SECTIONS)))}; "
                     f"known: {', '.join(SECTIONS)}")
    quick = args.quick
    n_dev = 50 if quick else 1000
    results = {"machine": machine_info(), "seed": SEED, "n_components": n_components(args.rank), "rank": args.rank,
               "chunk_size": args.chunk_size, "scheduler": args.scheduler or "local cluster",
               "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    out = output_path(args, __file__)
    try:  # before any section runs
        kept = merged_sections(out, results, sections) if args.merge else {}
    except ValueError as error:
        parser.error(str(error))
    with contextlib.ExitStack() as stack:
        # A quick run's sections share one local cluster of two single-threaded worker processes (the
        # settings of flickr8k_sized's and engines' own): starting a cluster, importing the toolkit in its
        # workers and closing it cost more than a quick section's work. A full run starts each
        # section's cluster anew, so that no section's memory figures carry another's leftovers.
        shared = None
        if quick and not args.scheduler and sections & DASK_SECTIONS:
            shared = stack.enter_context(dask_engine(None, n_workers=2, threads_per_worker=1))
        if "landmark_choice" in sections:
            results["landmark_choice"] = landmark_choice(1500 if quick else 10_000, args.rank // 2 if quick else 500,
                                                         n_dev, args.chunk_size)
        if "series" in sections:
            results["series"] = series([int(s) for s in args.sizes.split(",")], args.rank, n_dev, args.chunk_size,
                                       args.scheduler, shared)
        if "flickr8k_sized" in sections:
            results["flickr8k_sized"] = flickr8k_sized(2000 if quick else 30_000, args.rank, n_dev, args.chunk_size,
                                                       args.scheduler, shared)
        if "engines" in sections:
            results["engines"] = engines(3000 if quick else 100_000, args.rank, n_dev, args.chunk_size, shared)
        if "multikernel" in sections:
            results["multikernel"] = multikernel(1500 if quick else 30_000, args.rank, n_dev, args.chunk_size)
        if "coco" in sections:
            if quick:
                splits, pools = (60, 10, 10), {"5k": EvaluationPool("synthetic", pool_images=10),
                                               "1k": EvaluationPool("synthetic", pool_images=2, n_folds=5)}
                grid = {"n_components": (8, 16), "regs": (0.1, 1.0)}
            else:
                splits, pools = COCO_SPLITS, {"5k": EVALUATION_POOLS["coco_5k"], "1k": EVALUATION_POOLS["coco_1k"]}
                grid = {"n_components": DEFAULT_N_COMPONENTS, "regs": DEFAULT_REGS}
            results["coco"] = coco(splits, pools, rank=args.rank, chunk_size=args.chunk_size,
                                   image_size=32 if quick else 48, vocabulary=2000 if quick else 25_000,
                                   text_kernel=args.text_kernel, scheduler=args.scheduler, store=args.store, grid=grid,
                                   shared=shared)
    results.update(kept)
    write_results(out, results)
    return results


def merged_sections(path, settings: dict, sections: set[str]) -> dict:
    """The sections of the record at ``path`` that this run does not redo, and the machine of each section.

    Raises ValueError when the record's shared settings differ from this run's: its figures
    would not be comparable with the new ones.
    """
    if not os.path.exists(path):
        return {}
    with open(path) as file:
        old = json.load(file)
    differ = [f"{key} {old.get(key)!r} (this run {settings[key]!r})" for key in SHARED_SETTINGS
              if old.get(key) != settings[key]]
    if differ:
        raise ValueError(f"--merge: {path} was written with other settings: {'; '.join(differ)}")
    machines = old.get("machines", {})
    kept = {}
    for name in SECTIONS:
        if name in old and name not in sections:
            kept[name] = old[name]
            machines.setdefault(name, old["machine"])
    for name in sections:
        machines[name] = settings["machine"]
    kept["machines"] = machines
    return kept


if __name__ == "__main__":
    run_main(main)
