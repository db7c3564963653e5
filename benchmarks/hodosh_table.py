"""Benchmark: the result tables of Hodosh, Young & Hockenmaier (2013) on Flickr8K.

Every system of the paper's result tables (its Sections 4.2-4.3 and Appendix B) — the NN
baselines and KCCA with each text kernel (pyramid image kernel unless marked histo) — is fitted
on the 6,000 training images, its (n, κ) models are selected on dev (5 best by R@1, R@5 and R@10
per task) and Borda-fused, and the fused system ranks the 1,000 test images against their 1,000
``#2`` captions (hodosh protocol). Reported per system: R@1/5/10 and median rank for annotation
and search with bootstrap 95% intervals; S@1/5/10 and R-precision from the CrowdFlower judgments;
the expert score of the first caption; unigram BLEU and ROUGE-1; p-values against Tri5Sem
(McNemar for R@K and S@K, Fisher's paired randomisation test for median and mean rank,
R-precision and expert score). The intervals and the retrieval p-values are computed by the code
of ``python -m kcca_desc.compare`` (its cluster bootstrap and
:func:`kcca_desc.evaluate.statistics.paired_tests`), so ``compare`` run on this file reproduces
them. Tri5Sem is also evaluated under the karpathy protocol (5,000 test captions).
Spearman's ρ and Kendall's τ compare the system rankings under different metrics.

Results go to ``benchmarks/results/hodosh_table.json`` (and ``.md``) after every system, so an
interrupted run resumes where it stopped (``--force`` recomputes). Features and kernel matrices
are cached on disk (``$KCCA_DESC_CACHE``), so a warm run only re-solves KCCA.

Usage::

    python benchmarks/hodosh_table.py --data-root ../shared/flickr8k            # every system
    python benchmarks/hodosh_table.py --systems tri_sem,bow5,nn5_idf_f1        # a subset
    python benchmarks/hodosh_table.py --list                                    # system names
    python benchmarks/hodosh_table.py --quick      # 4 systems on the synthetic data set, no judgments
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from kcca_desc import ImageSentenceRanker, NearestNeighbour
from kcca_bench import benchmark_parser, run_main
from kcca_bench import (add_output_arguments, fill_defaults, flickr8k_or_quick, machine_info, output_path,
                             result_record)
from kcca_desc._core.cache import atomic_write_text
from kcca_desc.cli.options import HelpFormatter
from kcca_desc._core.profile import StageProfile, add_tables, format_profile, format_stage_columns, profiled, recording
from kcca_desc.report.compare import cluster_groups
from kcca_desc.data import load_flickr8k_judgments
from kcca_desc.evaluate import (
    Result,
    add_confidence_intervals,
    add_significance,
    evaluate_fitted,
    kendall_tau,
    mcnemar_test,
    paired_randomization_test,
    spearman_rho,
    to_markdown,
)
from kcca_desc.text import Preprocessor
from kcca_desc.text.named_kernels import TEXT_KERNELS
from kcca_desc.kernels.text.similarity.wordnet import WordNetUnavailableError

REFERENCE = "tri_sem"
DISPLAY = {"tri_sem": "Tri5Sem", "bow5_sqrtidf": "BoW5 sqrt-idf"}


def _systems() -> dict[str, dict]:
    """Table name -> how to build it, in the paper's order."""
    systems = {
        "nn5_f1": dict(method="nn", text="f1"),
        "nn5_idf_f1": dict(method="nn", text="idf_f1"),
        "nn_bow5": dict(method="nn", text="bow5"),
        "nn_tri_best": dict(method="nn", text="tri_sem"),
    }
    for name in ("bow1", "tri1", "bow5", "bow5_idf", "bow5_sqrtidf", "tagrank"):
        systems[name] = dict(method="kcca", text=name, image="pyramid")
    systems["bow5_histo"] = dict(method="kcca", text="bow5", image="histo")
    systems["tri5"] = dict(method="kcca", text="tri5", image="pyramid")
    systems["tri5_histo"] = dict(method="kcca", text="tri5", image="histo")
    for name in TEXT_KERNELS:
        if name.startswith("tri5_") or name == "tri_sem":
            systems[name] = dict(method="kcca", text=name, image="pyramid")
    return systems


SYSTEMS = _systems()

#: Defaults of the options a quick run changes: a few systems (the reference and enough others for
#: the metric agreement) and a grid the 30 training images of the synthetic data set can fit.
DEFAULTS = {
    "full": {"systems": ",".join(SYSTEMS), "n_components": [16, 32, 64, 128, 256], "regs": [0.01, 0.1, 1.0, 10.0]},
    "quick": {"systems": "nn5_idf_f1,bow5,tri5,tri_sem", "n_components": [4, 8], "regs": [0.1, 1.0]},
}


def build(spec: dict, args) -> object:
    image_params = {"progress": False}
    if spec["method"] == "nn":
        return NearestNeighbour(text_similarity=spec["text"], image_kernel_params=image_params)
    return ImageSentenceRanker(
        image_kernel=spec["image"], text_kernel=spec["text"], power=args.power, diag=args.diag,
        n_components=args.n_components, regs=args.regs, weight_power=args.weight_power,
        image_kernel_params=image_params)


def references(view, dataset, preprocessor: Preprocessor) -> list:
    """For each pool image, its captions other than the pool (#2) caption, tokenised."""
    others = []
    for image_id, pool_id in zip(view.images.ids, [view.caption_ids[g[0]] for g in view.annotation_gold]):
        k = int(pool_id.rsplit("#", 1)[1])
        captions = dataset.captions[dataset.index_of(image_id)]
        others.append([c for j, c in enumerate(captions) if j != k])
    return preprocessor.process_items(others)[0]


def judgment_significance(result: Result, baseline: Result, seed: int = 0) -> dict:
    """p-values of the judgment metrics against ``baseline`` (same view, same queries)."""
    out = {}
    for task in ("annotation", "search"):
        ours, theirs = result.per_query.get(task, {}), baseline.per_query.get(task, {})
        p = {}
        if "success_ranks" in ours and "success_ranks" in theirs:
            a, b = np.asarray(ours["success_ranks"], float), np.asarray(theirs["success_ranks"], float)
            for k in (1, 5, 10):
                p[f"S@{k}"] = mcnemar_test(a <= k, b <= k).pvalue
        for key in ("r_precision", "expert_scores"):
            if key in ours and key in theirs:
                a, b = np.asarray(ours[key], float), np.asarray(theirs[key], float)
                keep = np.isfinite(a) & np.isfinite(b)
                p[key] = paired_randomization_test(a[keep], b[keep], statistic="mean", seed=seed).pvalue
        out[task] = p
    return out


def rank_agreement(rows: list[dict]) -> dict:
    """Spearman ρ and Kendall τ between system scorings under pairs of metrics."""
    metrics = {}
    for task in ("annotation", "search"):
        for key in ("R@1", "R@5", "R@10"):
            metrics[f"{task} {key}"] = [r[task][key] for r in rows]
        metrics[f"{task} -median_rank"] = [-r[task]["median_rank"] for r in rows]
        for key in ("S@1", "S@5", "S@10", "R-precision"):
            values = [r.get("judgments", {}).get(task, {}).get(key) for r in rows]
            if all(v is not None for v in values):
                metrics[f"{task} {key}"] = values
    names = list(metrics)
    pairs = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = np.asarray(metrics[a], float), np.asarray(metrics[b], float)
            if np.ptp(x) > 0 and np.ptp(y) > 0:
                pairs[f"{a} vs {b}"] = {"spearman": spearman_rho(x, y), "kendall": kendall_tau(x, y)}
    return pairs


def run_system(name: str, args, train, dev, test, judgments, refs) -> dict:
    """Fit one system, evaluate it on test (hodosh) with judgments and bootstrap intervals."""
    spec = SYSTEMS[name]
    method = build(spec, args)
    t0 = time.perf_counter()
    method.fit(train, dev=dev) if spec["method"] == "kcca" else method.fit(train)
    fit_s = time.perf_counter() - t0
    result = evaluate_fitted(method, test, name=DISPLAY.get(name, name), params={"table_name": name, **spec},
                             timings={"fit": fit_s, **getattr(method, "timings_s_", {})},
                             judgments=judgments, references=refs)
    with profiled("statistics"):
        add_confidence_intervals(result)
    a, s = result.annotation, result.search
    print(f"{name}: {fit_s:.0f} s fit; annotation R@1/5/10 {a['R@1']:.1f}/{a['R@5']:.1f}/{a['R@10']:.1f} "
          f"med {a['median_rank']}; search {s['R@1']:.1f}/{s['R@5']:.1f}/{s['R@10']:.1f} med {s['median_rank']}",
          flush=True)
    return {"result": result.to_dict(include_ranks=True),
            "per_query": {t: {k: np.asarray(v, float).tolist() for k, v in q.items()}
                          for t, q in result.per_query.items()},
            "selected": getattr(method, "selected_", None),
            "wall_s": time.perf_counter() - t0}


def _with_per_query(entry: dict) -> Result:
    result = Result.from_dict(entry["result"])
    result.per_query = {t: {k: np.asarray(v) for k, v in q.items()} for t, q in entry["per_query"].items()}
    return result


def compare_to_reference(table: dict, names=None) -> None:
    """p-values of the systems ``names`` (None: all) against Tri5Sem, stored in each result's extras."""
    baseline = _with_per_query(table["systems"][REFERENCE])
    for name, entry in table["systems"].items():
        if name == REFERENCE or (names is not None and name not in names):
            continue
        result = _with_per_query(entry)
        add_significance(result, baseline)
        result.extras["judgment_significance"] = judgment_significance(result, baseline)
        entry["result"] = result.to_dict(include_ranks=True)


def run_karpathy(args, dataset, train) -> dict:
    """Tri5Sem selected on dev and evaluated on test under the karpathy protocol (5 captions per image)."""
    method = build(SYSTEMS[REFERENCE], args)
    t0 = time.perf_counter()
    method.fit(train, dev=dataset.view("dev", "karpathy"))
    view = dataset.view("test", "karpathy")
    result = evaluate_fitted(method, view, name="Tri5Sem",
                             timings={"fit": time.perf_counter() - t0, **method.timings_s_})
    # The five captions of an image are resampled together (cluster bootstrap), as compare does.
    add_confidence_intervals(result, groups=cluster_groups(result))
    print(f"tri_sem karpathy: annotation {result.annotation}, search {result.search}", flush=True)
    return {"result": result_record(result, view)}


def _load(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    return {"systems": {}, "karpathy": {}}


def _save(path: Path, table: dict) -> None:
    atomic_write_text(path, json.dumps(table, indent=1, default=float))


def main(argv=None) -> dict:
    # The command line's formatter: argparse's own printed "(default: None)" and "(default: False)".
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"),
                   help="the Flickr8K directory (default: $KCCA_DESC_FLICKR8K)")
    p.add_argument("--systems", help=f"comma-separated table names (default all; quick {DEFAULTS['quick']['systems']})")
    p.add_argument("--list", action="store_true", help="print the system names and exit")
    p.add_argument("--power", type=float, default=1.0, help="image kernel power p")
    p.add_argument("--diag", type=float, default=1.0, help="text kernel diagonal multiplier d")
    p.add_argument("--weight-power", type=float, default=0.0,
                   help="weight projected dimensions by canonical correlation ** q before the cosine")
    p.add_argument("--n-components", type=lambda s: [int(v) for v in s.split(",")],
                   help="grid of n (default 16,32,64,128,256; quick 4,8)")
    p.add_argument("--regs", type=lambda s: [float(v) for v in s.split(",")],
                   help="grid of κ (default 0.01,0.1,1,10; quick 0.1,1)")
    p.add_argument("--no-karpathy", action="store_true", help="skip Tri5Sem under the karpathy protocol")
    p.add_argument("--force", action="store_true", help="recompute systems already in the results file")
    add_output_arguments(p, "4 systems on the synthetic data set (no judgments), a 2 x 2 (n, κ) grid")
    args = p.parse_args(argv)
    fill_defaults(args, DEFAULTS)
    args.out = output_path(args, __file__)
    if args.list:
        print("\n".join(SYSTEMS))
        return {}
    names = [s for s in args.systems.split(",") if s]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown systems {unknown}; see --list")

    start = time.perf_counter()
    run_profile = StageProfile()
    with recording(run_profile), profiled("data loading"):
        dataset = flickr8k_or_quick(args.data_root, args.quick)
        judgments = None if args.quick else load_flickr8k_judgments(args.data_root)
        train, dev, test = dataset.subset("train"), dataset.view("dev"), dataset.view("test")
    with recording(run_profile), profiled("preprocessing"):
        refs = references(test, dataset, Preprocessor())
    table = _load(args.out)
    table["settings"] = {k: getattr(args, k) for k in ("power", "diag", "weight_power", "n_components", "regs")}
    table["machine"] = machine_info()

    for name in names:
        if name in table["systems"] and not args.force:
            print(f"{name}: already in {args.out.name}, skipped")
        else:
            try:
                with recording(run_profile), recording() as system_profile:
                    table["systems"][name] = run_system(name, args, train, dev, test, judgments, refs)
            except (ImportError, LookupError, OSError, WordNetUnavailableError) as exc:
                # e.g. tri5_lin without the WordNet data: recorded, the other systems still run. A result
                # of an earlier run is dropped, so the table never mixes it with this run's figures.
                table.setdefault("unavailable", {})[name] = f"{type(exc).__name__}: {exc}"
                table["systems"].pop(name, None)
                print(f"{name}: not run: {exc}", flush=True)
                continue
            table.get("unavailable", {}).pop(name, None)
            if REFERENCE in table["systems"]:
                # A new reference changes every p-value, a new system only its own: re-testing all
                # after each system made the randomisation tests grow quadratically with the table.
                with recording(run_profile), recording(system_profile), profiled("statistics"):
                    compare_to_reference(table, names=None if name == REFERENCE else {name})
            table["systems"][name]["profile_s"] = system_profile.table()
            _save(args.out, table)
        if name == REFERENCE and not args.no_karpathy and ("tri_sem" not in table["karpathy"] or args.force):
            with recording(run_profile):
                table["karpathy"]["tri_sem"] = run_karpathy(args, dataset, train)
            _save(args.out, table)

    rows = [table["systems"][n]["result"] for n in SYSTEMS if n in table["systems"]]
    summary_rows = [{"annotation": r["annotation"], "search": r["search"],
                     "judgments": r.get("extras", {}).get("judgments", {})} for r in rows]
    if len(summary_rows) >= 3:
        table["metric_agreement"] = rank_agreement(summary_rows)
    with recording(run_profile), profiled("report"):
        ordered = [Result.from_dict(table["systems"][n]["result"]) for n in SYSTEMS if n in table["systems"]]
        ordered += [Result.from_dict(v["result"]) for v in table["karpathy"].values()]
        markdown = to_markdown(ordered, ci=True)
        atomic_write_text(args.out.with_suffix(".md"), markdown)
    table["wall_s_this_run"] = time.perf_counter() - start
    # Stage profiles: this run's, and each system's (of the run that computed it) with their sum.
    profiles = {n: table["systems"][n]["profile_s"] for n in SYSTEMS if "profile_s" in table["systems"].get(n, {})}
    table["profile_s"] = {"this_run": run_profile.table(), "systems_total": add_tables(profiles.values())}
    _save(args.out, table)
    print(markdown)
    print(format_stage_columns(profiles, title="system"))
    print("\nsum over the table's systems:")
    print(format_profile(table["profile_s"]["systems_total"]))
    print("\nthis run:")
    print(format_profile(run_profile.table(), total_s=table["wall_s_this_run"]))
    print(f"wall time of this run: {table['wall_s_this_run']:.0f} s; wrote {args.out}")
    return table


if __name__ == "__main__":
    run_main(main)
