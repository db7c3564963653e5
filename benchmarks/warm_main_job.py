"""Benchmark: the warm re-run of the main job, two checkouts timed side by side, several times.

The main job, ``python -m kcca_desc.fit --text-kernel tri_sem`` on Flickr8K, re-run on a warm
cache: what a researcher waits for each time they run it again. Each checkout runs it once to
fill the cache (untimed), then ``--repeats`` times, the two checkouts in alternation (before,
after, before, after...), so that both see the same machine load. Recorded per run: its wall
time, the 1-minute load average at its start, and the stage profile of its results file
(``timings_s``); per checkout the median; the speedup of the medians; and whether the two agree
on every per-query rank.

Both checkouts use one cache (``--cache``; entries are keyed by content, so each finds its own
and concurrent runs may share it): by default ``$KCCA_DESC_CACHE`` or ``~/.cache/kcca_desc``, so
that the untimed runs need not start from nothing.

Usage::

    python benchmarks/warm_main_job.py --before ../before --data-root ../shared/flickr8k --repeats 5
    python benchmarks/warm_main_job.py --quick   # this checkout against itself on synthetic data

``--before`` and ``--after`` are checkout folders, each run with its own ``.venv/bin/python`` when
it has one (see ``side_by_side.py``).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path

from kcca_bench import benchmark_parser, machine_info, run_main
from kcca_bench import write_results
from kcca_bench.checkouts import (add_checkout_arguments, checkout_commit, parse_checkout_arguments, rank_agreement,
                                  run_in_checkout)

SIDES = ("before", "after")
DEFAULTS = {
    "full": {"repeats": 5, "text_kernel": "tri_sem"},
    # Seconds: a small synthetic data set, a cheap text kernel and a one-point grid.
    "quick": {"repeats": 1, "text_kernel": "bow5"},
}
QUICK_JOB = ["--data", "synthetic", "--n-images", "120", "--n-components", "8", "--regs", "1"]


def _stages(path: Path) -> dict[str, float]:
    """The wall seconds of each stage in a ``fit`` results file."""
    record = json.loads(path.read_text())
    record = record[0] if isinstance(record, list) else record
    return {stage: times["wall_s"] for stage, times in record["timings_s"].items()}


def _ranks(path: Path) -> dict:
    record = json.loads(path.read_text())
    return {"main job": {"ranks": (record[0] if isinstance(record, list) else record)["ranks"]}}


def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    add_checkout_arguments(p)
    p.add_argument("--text-kernel", help=f"text kernel of the job (default {DEFAULTS['full']['text_kernel']})")
    p.add_argument("--repeats", type=int, help=f"timed runs per checkout (default {DEFAULTS['full']['repeats']})")
    p.add_argument("--cache", type=Path, help="the cache both checkouts use (default: the user's; "
                                              "with --quick a temporary one)")
    args, checkouts = parse_checkout_arguments(
        p, argv, DEFAULTS, __file__, "this checkout against itself, once each, on a small synthetic data set",
        "the results files and logs")
    work = args.work or Path(tempfile.mkdtemp(prefix="warm_main_job_"))
    work.mkdir(parents=True, exist_ok=True)
    cache = args.cache or (work / "cache" if args.quick else
                           Path(os.environ.get("KCCA_DESC_CACHE", Path.home() / ".cache" / "kcca_desc")))
    job = ["-m", "kcca_desc.fit", "--text-kernel", args.text_kernel, "-q"]
    job += QUICK_JOB if args.quick else ["--data", "flickr8k", "--data-root", args.data_root]

    def run(side: str, name: str) -> tuple[float, Path]:
        out = work / f"fit_{side}_{name}.json"
        return run_in_checkout(checkouts[side], [*job, "--out", str(out)], cache, work / f"fit_{side}_{name}.log"), out

    record = {"machine": machine_info(), "command": " ".join(["python", *job]), "cache": str(cache),
              "checkouts": {side: {"path": str(path), "commit": checkout_commit(path)}
                            for side, path in checkouts.items()},
              "runs": {side: [] for side in SIDES}}
    for side in SIDES:
        seconds, _ = run(side, "fill")
        record["checkouts"][side]["untimed_fill_s"] = seconds
    outputs = {}
    for repeat in range(args.repeats):
        for side in SIDES:
            load = os.getloadavg()[0]
            seconds, outputs[side] = run(side, str(repeat))
            record["runs"][side].append({"wall_s": seconds, "load_average_before": load,
                                         "stages_s": _stages(outputs[side])})
            print(f"{side} #{repeat}: {seconds:.1f} s (load {load:.2f})", flush=True)
    for side in SIDES:
        walls = [r["wall_s"] for r in record["runs"][side]]
        record[f"median_{side}_s"] = statistics.median(walls)
        stages = record["runs"][side][0]["stages_s"]
        record[f"median_stages_{side}_s"] = {
            stage: statistics.median(r["stages_s"].get(stage, 0.0) for r in record["runs"][side]) for stage in stages}
    record["speedup"] = record["median_before_s"] / record["median_after_s"]
    record["rank_agreement"] = rank_agreement(_ranks(outputs["before"]), _ranks(outputs["after"]))["main job"]
    write_results(args.out, record)
    print(f"warm main job: {record['median_before_s']:.1f} s -> {record['median_after_s']:.1f} s "
          f"(medians of {args.repeats}), {record['speedup']:.2f}x; ranks moved: {record['rank_agreement']['moved']}")
    return record


if __name__ == "__main__":
    run_main(main)
