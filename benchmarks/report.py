"""Benchmark: the HTML report and ``compare`` on the 31-system Flickr8K table.

Builds the report (:func:`kcca_desc.report.build_report`) of every run in
``benchmarks/results/hodosh_table.json`` (31 systems under the hodosh protocol and Tri5Sem under
the karpathy protocol, each with its per-query ranks) against Tri5Sem, with the Flickr8K images
for the gallery, and measures its build time and its size on disk. It then checks that the
comparison of the report (:func:`kcca_desc.report.compare.compare_runs`, the code of
``python -m kcca_desc.compare``) reproduces the p-values against Tri5Sem and the bootstrap
intervals that the table holds, computed when it was run.

Usage::

    python benchmarks/report.py --data-root ../shared/flickr8k
    python benchmarks/report.py --quick      # two NN systems on the synthetic data set
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from kcca_desc import NearestNeighbour
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, output_path, quick_dataset, write_results
from kcca_desc.report.compare import load_runs
from kcca_desc.evaluate import add_confidence_intervals, add_significance, evaluate_fitted
from kcca_desc.report import build_report

TABLE = Path(__file__).resolve().parent / "results" / "hodosh_table.json"
REFERENCE = "Tri5Sem"
DEFAULTS = {"full": {"table": str(TABLE), "reference": REFERENCE}, "quick": {"table": None, "reference": "idf_f1"}}


def quick_table(directory: Path) -> tuple[Path, object]:
    """Two NN systems on the synthetic data set, as the Hodosh table stores them (p-values included)."""
    dataset = quick_dataset()
    view = dataset.view("test", "hodosh")
    results = []
    for text in ("idf_f1", "bow5"):
        nn = NearestNeighbour(text_similarity=text, image_kernel_params={"progress": False}).fit(dataset.subset("train"))
        results.append(add_confidence_intervals(evaluate_fitted(nn, view, name=text)))
    add_significance(results[1], results[0])
    path = directory / "table.json"
    path.write_text(json.dumps({"systems": {r.system: {"result": r.to_dict(include_ranks=True)} for r in results}}))
    return path, dataset


def stored_agreement(table: dict, rows: list[dict]) -> dict:
    """Largest difference between the comparison's p-values and intervals and those the table stores."""
    stored = {(r["system"], r["protocol"]): r for r in _stored_results(table)}
    p_diff, ci_diff, n_p, n_ci, pair = 0.0, 0.0, 0, 0, None
    for row in rows:
        result = stored.get((row["system"], row["protocol"]))
        if result is None:
            continue
        p = result.get("significance", {}).get(row["task"], {}).get(row["metric"])
        if p is not None and row["p_value"] is not None:
            p_diff, n_p = max(p_diff, abs(p - row["p_value"])), n_p + 1
            if pair is None or row["system"] == "bow5":
                pair = row["system"]
        ci = result.get("ci", {}).get(row["task"], {}).get(row["metric"])
        if ci is not None:
            ci_diff = max(ci_diff, abs(ci[0] - row["ci_low"]), abs(ci[1] - row["ci_high"]))
            n_ci += 1
    example = {f"{row['task']} {row['metric']}": {
        "stored": stored[(row["system"], row["protocol"])]["significance"][row["task"]][row["metric"]],
        "compare": row["p_value"]}
        for row in rows if row["system"] == pair and row["p_value"] is not None
        and row["metric"] in stored[(row["system"], row["protocol"])]["significance"][row["task"]]}
    return {"p_values_compared": n_p, "max_abs_p_difference": p_diff, "intervals_compared": n_ci,
            "max_abs_interval_difference": ci_diff, "example_pair": {"system": pair, "p_values": example}}


def _stored_results(node):
    if isinstance(node, dict):
        if "annotation" in node and "search" in node and "system" in node:
            yield node
            return
        for value in node.values():
            yield from _stored_results(value)
    elif isinstance(node, list):
        for value in node:
            yield from _stored_results(value)


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0],
                         formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--table", default=None, help="results file to report on (default: the Hodosh table's)")
    p.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"), help="Flickr8K directory")
    p.add_argument("--reference", default=None, help=f"reference system (default {REFERENCE})")
    p.add_argument("--report-dir", default=None, help="keep the report here (default: a temporary directory)")
    add_output_arguments(p, "two NN systems on the synthetic data set")
    args = fill_defaults(p.parse_args(argv), DEFAULTS)
    args.out = output_path(args, __file__)

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        directory = Path(args.report_dir) if args.report_dir else scratch / "report"
        dataset = None
        if args.quick:
            table_path, dataset = quick_table(scratch)
        else:
            table_path = Path(args.table)
        start, cpu_start = time.perf_counter(), time.process_time()
        runs = load_runs([table_path])
        page = build_report(runs, directory, dataset=dataset, data=None if args.quick else "flickr8k",
                            data_root=args.data_root, reference=args.reference)
        build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
        html = page.read_text()
        table = json.loads(table_path.read_text())
        # The comparison the report drew, as it wrote it beside the page.
        agreement = stored_agreement(table, json.loads((directory / "comparison.json").read_text())["rows"])
        record = {
            "machine": machine_info(),
            "dataset": "synthetic" if args.quick else "flickr8k",
            "input": "synthetic NN pair" if args.quick else str(Path(args.table).name),
            "n_runs": len(runs),
            "build_s": build_s,
            # CPU seconds of this process: on shared cores the wall time also counts other jobs.
            "build_cpu_s": build_cpu_s,
            "report_html_bytes": page.stat().st_size,
            "report_dir_bytes": _size(directory),
            "embedded_images": html.count("<img "),
            "gallery_has_gold": "gold-marker" in html,
            "stored_agreement": agreement,
        }
    print(f"report of {record['n_runs']} runs: {build_s:.1f} s ({build_cpu_s:.1f} s CPU), page {record['report_html_bytes'] / 1e6:.2f} MB, "
          f"folder {record['report_dir_bytes'] / 1e6:.2f} MB, {record['embedded_images']} images")
    print(f"compare vs stored: {agreement['p_values_compared']} p-values, max |diff| "
          f"{agreement['max_abs_p_difference']:.3g}; {agreement['intervals_compared']} intervals, max |diff| "
          f"{agreement['max_abs_interval_difference']:.3g}")
    write_results(args.out, record, default=float)
    if not np.isclose(agreement["max_abs_p_difference"], 0.0) or agreement["p_values_compared"] == 0:
        raise SystemExit("compare does not reproduce the stored p-values")
    return record


if __name__ == "__main__":
    run_main(main)
