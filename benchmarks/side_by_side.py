"""Benchmark: two checkouts of the toolkit timed side by side on Hodosh's table and the main job.

The same commands run under each checkout, one right after the other on the same machine: both
cold (each with a fresh cache), then both warm (each re-using its own cache). The commands are
``benchmarks/hodosh_table.py`` on a set of systems (hodosh protocol) and the main job,
``python -m kcca_desc.fit --text-kernel tri_sem``. Recorded per run: the wall time of each command
and of each table system, its stage times, and whether the two checkouts agree on every per-query
rank of every system (the number of queries whose rank moved, and the largest move).

"Cold" starts from a cache that holds only what ``--seed-cache`` gives it (e.g. the image
features and codebooks, so that the solver and the kernels are timed rather than SIFT), copied
anew for each checkout.

Usage::

    python benchmarks/side_by_side.py --before ../before --data-root ../shared/flickr8k \\
        --systems nn_tri_best,bow5,tri5,tri5_dic,tri_sem --seed-cache ~/.cache/kcca_desc \\
        --seed-parts pyramid_histograms,codebooks,nltk_data
    python benchmarks/side_by_side.py --quick   # this checkout against itself on synthetic data

``--before`` and ``--after`` are checkout folders, each run with its own ``.venv/bin/python`` when
it has one (the checkout installed there in editable mode), else with this interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from kcca_bench import benchmark_parser, machine_info, run_main
from kcca_bench import write_results
from kcca_bench.checkouts import (add_checkout_arguments, checkout_commit, parse_checkout_arguments, rank_agreement,
                                  run_in_checkout)

SIDES = ("before", "after")
DEFAULTS = {
    "full": {"systems": "nn_tri_best,bow5,tri5,tri5_dic,tri_sem", "no_main_job": False},
    # The main job is left out of a quick run: four of them would take minutes on the synthetic data.
    "quick": {"systems": "nn5_idf_f1,bow5", "no_main_job": True},
}


def _seed(cache: Path, source: Path | None, parts: list[str]) -> None:
    """A fresh cache folder holding only ``parts`` of ``source``."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    for part in parts if source is not None else []:
        if (source / part).is_dir():
            shutil.copytree(source / part, cache / part)


def _table_systems(path: Path) -> dict:
    table = json.loads(path.read_text())
    return {name: {"wall_s": entry["wall_s"], "timings_s": entry["result"].get("timings_s", {}),
                   "ranks": entry["result"].get("ranks", {})} for name, entry in table["systems"].items()}


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    add_checkout_arguments(p)
    p.add_argument("--systems", help=f"table systems (default {DEFAULTS['full']['systems']})")
    p.add_argument("--seed-cache", type=Path, help="cache folder whose --seed-parts start every cold run")
    p.add_argument("--seed-parts", default="pyramid_histograms,codebooks,nltk_data",
                   help="comma-separated folders of --seed-cache copied into each cold cache")
    p.add_argument("--no-main-job", action="store_true", default=None, help="time the table systems only")
    args, checkouts = parse_checkout_arguments(
        p, argv, DEFAULTS, __file__, "this checkout against itself, 2 systems of the synthetic data set, no main job",
        "the caches and logs")
    data = ["--quick"] if args.quick else ["--data-root", args.data_root]
    main_job = ["-m", "kcca_desc.fit", "--text-kernel", "tri_sem", "-q"]
    if not args.quick:
        main_job += ["--data", "flickr8k", "--data-root", args.data_root]
    work = args.work or Path(tempfile.mkdtemp(prefix="side_by_side_"))
    work.mkdir(parents=True, exist_ok=True)
    parts = [s for s in args.seed_parts.split(",") if s]

    record = {"machine": machine_info(), "checkouts": {}, "systems": args.systems.split(","), "runs": {}}
    for side, checkout in checkouts.items():
        record["checkouts"][side] = {"path": str(checkout), "commit": checkout_commit(checkout)}
    for phase in ("cold", "warm"):
        for side in SIDES:
            cache = work / f"cache_{side}"
            if phase == "cold":
                _seed(cache, args.seed_cache, parts)
            table_out = work / f"table_{side}_{phase}.json"
            load = os.getloadavg()[0]
            table_s = run_in_checkout(checkouts[side], ["benchmarks/hodosh_table.py", *data, "--systems", args.systems,
                                                        "--no-karpathy", "--force", "--out", str(table_out)],
                                      cache, work / f"table_{side}_{phase}.log")
            run = {"table_s": table_s, "load_average_before": load, "systems": _table_systems(table_out)}
            if not args.no_main_job:
                run["main_job_s"] = run_in_checkout(checkouts[side],
                                                    [*main_job, "--out", str(work / f"fit_{side}_{phase}.json")],
                                                    cache, work / f"fit_{side}_{phase}.log")
            record["runs"][f"{side}_{phase}"] = run
            print(f"{side} {phase}: table {table_s:.1f} s" +
                  (f", main job {run['main_job_s']:.1f} s" if "main_job_s" in run else ""), flush=True)
        before, after = record["runs"][f"before_{phase}"], record["runs"][f"after_{phase}"]
        record[f"{phase}_speedup_table"] = before["table_s"] / after["table_s"]
        if not args.no_main_job:
            record[f"{phase}_speedup_main_job"] = before["main_job_s"] / after["main_job_s"]
        record[f"{phase}_rank_agreement"] = rank_agreement(before["systems"], after["systems"])
    for run in record["runs"].values():
        for system in run["systems"].values():
            system.pop("ranks")  # compared above; the table's own record keeps them
    write_results(args.out, record)
    for phase in ("cold", "warm"):
        print(f"{phase}: table {record[f'{phase}_speedup_table']:.2f}x faster" +
              (f", main job {record[f'{phase}_speedup_main_job']:.2f}x" if not args.no_main_job else ""))
    return record


if __name__ == "__main__":
    run_main(main)
