"""``python -m kcca_desc.compare``: paired tests against hand-computed values, refusals, cluster bootstrap."""

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from kcca_desc.cli.compare import main
from kcca_desc.report.compare import ComparisonError, Run, check_comparable, cluster_groups, compare_runs, load_runs
from kcca_desc.data.registry import load_dataset
from kcca_desc.evaluate import Result, result_from_scores, retrieval_metrics, save_results
from kcca_desc.evaluate.statistics import metric_cis

HODOSH_TABLE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "hodosh_table.json"


def make_result(annotation, search, system, protocol="hodosh", **changes):
    ranks = {"annotation": np.asarray(annotation), "search": np.asarray(search)}
    fields = dict(system=system, dataset="toy", protocol=protocol, split="test",
                  annotation=retrieval_metrics(ranks["annotation"]), search=retrieval_metrics(ranks["search"]),
                  ranks=ranks)
    fields.update(changes)
    return Result(**fields)


def rows_of(comparison, system, task):
    return {row["metric"]: row for row in comparison.rows if row["system"] == system and row["task"] == task}


def test_mcnemar_p_values_match_hand_computation():
    # Search R@1: 2 queries only A finds first, 8 only B: exact binomial test on 10 discordant pairs,
    # p = 2 * P[Bin(10, 1/2) <= 2] = 2 * (1 + 10 + 45) / 1024.
    a = np.array([1] * 2 + [5] * 8 + [1] * 5 + [9] * 5)
    b = np.array([5] * 2 + [1] * 8 + [1] * 5 + [9] * 5)
    # Annotation R@10: 5 queries only A finds in its first ten, 25 only B (30 discordant pairs):
    # X² = (|5 - 25| - 1)² / 30 with continuity correction; P[χ²₁ >= x] = erfc(sqrt(x / 2)).
    c = np.array([3] * 5 + [50] * 25 + [2] * 10)
    d = np.array([50] * 5 + [3] * 25 + [2] * 10)
    comparison = compare_runs([Run(make_result(d, b, "B"), "b.json"), Run(make_result(c, a, "A"), "a.json")],
                              n_resamples=50)
    search, annotation = rows_of(comparison, "A", "search"), rows_of(comparison, "A", "annotation")
    assert search["R@1"]["p_value"] == pytest.approx(2 * 56 / 1024, rel=1e-12)
    assert search["R@1"]["difference"] == pytest.approx(100 * (7 - 13) / 20)
    x2 = (abs(5 - 25) - 1) ** 2 / 30
    assert annotation["R@10"]["p_value"] == pytest.approx(math.erfc(math.sqrt(x2 / 2)), rel=1e-9)
    assert annotation["R@10"]["marker"] == "***"  # p = 5e-4
    assert search["R@1"]["marker"] == ""
    # The reference's own rows carry no test.
    assert all(row["p_value"] is None for row in rows_of(comparison, "B", "search").values())


def test_further_cut_offs_a_run_carries_are_compared_and_plotted_as_the_tables_show_them():
    # The comparison and its forest plot had R@1, R@5 and R@10 only, whatever cut-offs a run carried.
    from kcca_desc.report.figures import forest_plot

    rng = np.random.default_rng(0)
    a, b = rng.integers(1, 40, 30), rng.integers(1, 40, 30)
    further = Result(system="A", dataset="toy", protocol="hodosh", split="test",
                     annotation=retrieval_metrics(a, (1, 5, 10, 20)), search=retrieval_metrics(a, (1, 5, 10, 20)),
                     ranks={"annotation": a, "search": a})
    comparison = compare_runs([Run(make_result(b, b, "B"), "b"), Run(further, "a")], n_resamples=50)
    # The reference was evaluated at 1, 5 and 10 only: no R@20 of its own, as the tables leave it blank.
    assert "R@20" not in rows_of(comparison, "B", "search")
    assert list(rows_of(comparison, "A", "search")) == ["R@1", "R@5", "R@10", "R@20", "median_rank", "mean_rank"]
    row = rows_of(comparison, "A", "search")["R@20"]
    assert row["value"] == pytest.approx(100 * np.mean(a <= 20)) and row["test"] == "McNemar"
    assert row["difference"] == pytest.approx(100 * (np.mean(a <= 20) - np.mean(b <= 20)))
    assert comparison.metrics == ["R@1", "R@5", "R@10", "R@20", "median_rank", "mean_rank"]
    assert "| hodosh | search | R@20 | A |" in comparison.to_markdown()
    titles = [ax.get_title() for ax in forest_plot(comparison).axes]
    assert titles == [f"{task}. {label}" for task in ("Ann", "Sea")
                      for label in ("R@1 (%)", "R@5 (%)", "R@10 (%)", "R@20 (%)", "median rank")]
    plain = compare_runs([Run(make_result(b, b, "B"), "b"), Run(make_result(a, a, "A"), "a")], n_resamples=50)
    assert len(forest_plot(plain).axes) == 8  # R@1, R@5, R@10 and the median rank of each task


def _exact_randomization(a, b, statistic):
    """Every swap of every query's pair, the slow obvious way."""
    observed = abs(statistic(a) - statistic(b))
    extreme = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        swaps = np.array(swaps)
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        extreme += abs(statistic(x) - statistic(y)) >= observed - 1e-12
    return extreme / 2 ** len(a)


def test_randomisation_p_values_match_enumeration():
    a = np.array([1, 2, 3, 4, 9, 30, 2, 7, 1, 12])
    b = np.array([2, 2, 5, 1, 20, 31, 6, 7, 3, 40])
    comparison = compare_runs([Run(make_result(b, b, "B"), "b"), Run(make_result(a, a, "A"), "a")], n_resamples=50)
    for task in ("annotation", "search"):
        rows = rows_of(comparison, "A", task)
        assert rows["mean_rank"]["p_value"] == pytest.approx(_exact_randomization(a, b, np.mean), rel=1e-12)
        assert rows["median_rank"]["p_value"] == pytest.approx(_exact_randomization(a, b, np.median), rel=1e-12)
        assert rows["mean_rank"]["test"] == "randomisation (mean)"


@pytest.mark.parametrize("change, message", [
    ({"dataset": "other"}, "dataset 'toy' vs 'other'"),
    ({"split": "dev"}, "split 'test' vs 'dev'"),
])
def test_runs_of_other_data_or_split_are_refused(change, message):
    base = make_result([1, 2, 3], [1, 2, 3], "A")
    other = make_result([1, 2, 3], [1, 2, 3], "B", **change)
    with pytest.raises(ComparisonError, match=message):
        compare_runs([Run(base, "a.json"), Run(other, "b.json")])


def test_runs_of_other_queries_are_refused():
    base = make_result([1, 2, 3], [1, 2, 3], "A")
    with pytest.raises(ComparisonError, match="not the same queries .*annotation queries: 3 vs 4"):
        check_comparable([Run(base, "a.json"), Run(make_result([1, 2, 3, 4], [1, 2, 3], "B"), "b.json")])
    ids = {"images": ["x", "y", "z"], "captions": ["x#2", "y#2", "z#2"]}
    moved = {"images": ["x", "z", "y"], "captions": ["x#2", "z#2", "y#2"]}
    with pytest.raises(ComparisonError, match=r"a\.json.*b\.json.*image ids: they differ first at position 1"):
        check_comparable([Run(make_result([1, 2, 3], [1, 2, 3], "A", queries=ids), "a.json"),
                          Run(make_result([1, 2, 3], [1, 2, 3], "B", queries=moved), "b.json")])


def test_runs_of_whole_number_ids_compare_with_an_older_file_that_held_them_as_strings():
    # Files written before whole-number ids (COCO's) were kept as numbers hold "391895" for 391895.
    new = make_result([1, 2], [2, 1], "A", queries={"images": [391895, 522418], "captions": [7, 8]})
    old = make_result([1, 2], [2, 1], "B", queries={"images": ["391895", "522418"], "captions": ["7", "8"]})
    check_comparable([Run(new, "new.json"), Run(old, "old.json")])
    other = make_result([1, 2], [2, 1], "C", queries={"images": ["391895", "522419"]})
    with pytest.raises(ComparisonError, match="image ids: they differ first at position 1"):
        check_comparable([Run(new, "new.json"), Run(other, "other.json")])


def test_runs_of_another_data_set_under_the_same_ids_are_refused(tmp_path, capsys):
    # fit --seed 1 draws other synthetic data under the same name and image ids: the queries
    # matched, so the runs were compared query by query, unrelated queries paired.
    def run(system, fingerprint, path):
        source = {"name": "synthetic", "seed": 0, "fingerprint": fingerprint}
        make_result([1, 2, 3], [1, 2, 3], system, queries={"images": ["x", "y", "z"]},
                    extras={"data_source": source}).save(path, include_ranks=True)
        return str(path)

    a, b = run("A", "e7383804c0d4aaaa", tmp_path / "a.json"), run("B", "f3cf1400e07bbbbb", tmp_path / "b.json")
    with pytest.raises(ComparisonError, match=r"A \(.*a\.json\) with B \(.*b\.json\): another data set.*"
                                              r"fingerprint e7383804c0d4… vs f3cf1400e07b…"):
        compare_runs(load_runs([a, b]))
    assert main([a, b]) == 2
    assert "another data set" in capsys.readouterr().err
    # The same fingerprint, or one run that records none, is compared as before.
    same = run("C", "e7383804c0d4aaaa", tmp_path / "c.json")
    bare = tmp_path / "d.json"
    make_result([1, 2, 3], [1, 2, 3], "D", queries={"images": ["x", "y", "z"]}).save(bare, include_ranks=True)
    assert compare_runs(load_runs([a, same, str(bare)]), n_resamples=20).reference == {"hodosh": "A"}


def test_cli_refuses_mismatched_files_with_a_clear_error(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    make_result([1, 2, 3], [1, 2, 3], "A").save(a, include_ranks=True)
    make_result([1, 2, 3], [1, 2, 3], "B", split="dev").save(b, include_ranks=True)
    assert main([str(a), str(b)]) == 2
    assert "cannot compare A" in capsys.readouterr().err
    make_result([1, 2, 3], [1, 2, 3], "C").save(b)  # figures only, no per-query ranks
    assert main([str(a), str(b)]) == 2
    assert "has no per-query annotation or search ranks" in capsys.readouterr().err


def test_karpathy_intervals_resample_the_captions_of_an_image_together():
    view = load_dataset("synthetic", n_images=100, seed=0).view("test", "karpathy")
    rng = np.random.default_rng(0)
    runs = [Run(result_from_scores(rng.random((view.n_images, view.n_captions)), view, name), name)
            for name in ("A", "B")]
    groups = cluster_groups(runs[0].result)
    np.testing.assert_array_equal(groups["search"], view.caption_image)
    assert "annotation" not in groups  # one query per image: the ordinary bootstrap
    comparison = compare_runs(runs, n_resamples=300, seed=3)
    ranks = runs[1].result.ranks["search"]
    clustered = metric_cis(ranks, n_resamples=300, seed=3, groups=view.caption_image)
    independent = metric_cis(ranks, n_resamples=300, seed=3)
    for metric, row in rows_of(comparison, "B", "search").items():
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(clustered[metric])
    assert any(clustered[m] != independent[m] for m in clustered)
    annotation = metric_cis(runs[1].result.ranks["annotation"], n_resamples=300, seed=3)
    assert (rows_of(comparison, "B", "annotation")["R@5"]["ci_low"],) == pytest.approx((annotation["R@5"][0],))
    assert comparison.settings["clusters"] == {"karpathy": "caption groups of an image (search)"}
    # A karpathy result that does not say which image each caption describes cannot be resampled so.
    bare = runs[0].result
    bare.queries.pop("caption_image")
    with pytest.raises(ComparisonError, match="caption_image"):
        cluster_groups(bare)


def test_outputs_in_every_format(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    make_result([1, 5, 3, 9], [2, 1, 4, 4], "A").save(a, include_ranks=True)
    make_result([2, 1, 3, 7], [1, 1, 8, 2], "B_sys").save(b, include_ranks=True)
    assert main([str(a), str(b), "--reference", "B_sys", "--n-resamples", "20", "--out", str(tmp_path / "t"),
                 "-q"]) == 0
    # With --out, only what was written is printed (the whole Markdown table was, before it).
    written = ", ".join(str(tmp_path / f"t{suffix}") for suffix in (".json", ".md", ".csv", ".tex"))
    assert capsys.readouterr().out == f"wrote {written}\n"
    assert "| hodosh | annotation | R@1 | B_sys (ref.) |" in (tmp_path / "t.md").read_text()
    table = json.loads((tmp_path / "t.json").read_text())
    assert table["reference"] == {"hodosh": "B_sys"} and len(table["rows"]) == 2 * 2 * 5
    assert (tmp_path / "t.csv").read_text().splitlines()[0].startswith("protocol,task,metric,system,value")
    assert r"B\_sys (ref.)" in (tmp_path / "t.tex").read_text()
    assert "Reference: B_sys (hodosh)" in (tmp_path / "t.md").read_text()


@pytest.mark.skipif(not HODOSH_TABLE.is_file(), reason="benchmarks/results/hodosh_table.json is not in the checkout")
def test_compare_reproduces_the_p_values_and_intervals_stored_in_the_hodosh_table():
    """The Hodosh table benchmark stored these with the code compare runs; recomputed, they are equal."""
    stored = {entry["result"]["system"]: entry["result"]
              for entry in json.loads(HODOSH_TABLE.read_text())["systems"].values()}
    runs = load_runs([HODOSH_TABLE], systems=["Tri5Sem", "bow5"], protocol="hodosh")
    comparison = compare_runs(runs, reference="Tri5Sem")
    checked = 0
    for row in comparison.rows:
        if row["system"] == "Tri5Sem":
            continue
        p = stored[row["system"]]["significance"][row["task"]].get(row["metric"])
        if p is not None:
            assert row["p_value"] == pytest.approx(p, rel=1e-12, abs=0), row
            checked += 1
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(stored[row["system"]]["ci"][row["task"]][row["metric"]])
    assert checked == 2 * 4


@pytest.mark.skipif(not HODOSH_TABLE.is_file(), reason="benchmarks/results/hodosh_table.json is not in the checkout")
def test_compare_reproduces_the_cluster_bootstrap_intervals_of_the_karpathy_run():
    (run,) = load_runs([HODOSH_TABLE], protocol="karpathy")
    stored = json.loads(HODOSH_TABLE.read_text())["karpathy"]["tri_sem"]["result"]["ci"]
    comparison = compare_runs([run])
    for row in comparison.rows:
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(stored[row["task"]][row["metric"]], abs=1e-12), row


def test_a_reference_of_another_protocol_suggests_selecting_one(tmp_path, capsys):
    a, b, c = (tmp_path / f"{n}.json" for n in "abc")
    make_result([1, 2, 3], [1, 2, 3], "A").save(a, include_ranks=True)
    make_result([1, 2, 3], [3, 2, 1], "B").save(b, include_ranks=True)
    make_result([1, 2, 3], [1, 2, 3], "C", protocol="karpathy",
                queries={"images": ["x", "y", "z"], "captions": ["x#0", "y#0", "z#0"],
                         "caption_image": [0, 1, 2]}).save(c, include_ranks=True)
    assert main([str(a), str(b), str(c), "--reference", "B"]) == 2
    err = capsys.readouterr().err
    assert "none of the runs under protocol karpathy" in err and "--protocol hodosh" in err
    assert main([str(a), str(b), str(c), "--reference", "B", "--protocol", "hodosh", "--n-resamples", "20"]) == 0


def test_a_bar_in_a_system_name_is_escaped_in_the_markdown_table():
    comparison = compare_runs([Run(make_result([1, 2, 3], [1, 2, 3], "A|B"), "a"),
                               Run(make_result([2, 1, 3], [1, 3, 2], "C"), "c")], n_resamples=20)
    lines = comparison.to_markdown().splitlines()
    assert lines[2].startswith(r"| hodosh | annotation | R@1 | A\|B (ref.) |")
    table = [line for line in lines if line.startswith("|")]
    assert {line.replace(r"\|", "").count("|") for line in table} == {10}


def test_csv_rounds_figures_as_the_markdown_table_shows_them(tmp_path):
    runs = [Run(make_result([1, 5, 3, 9, 2, 2], [2, 1, 4, 4, 7, 1], "A"), "a.json"),
            Run(make_result([2, 1, 3, 7, 1, 3], [1, 1, 8, 2, 2, 5], "B"), "b.json")]
    comparison = compare_runs(runs, n_resamples=30, n_permutations=30)
    csv_rows = comparison.to_csv().splitlines()[1:]
    md_rows = [line for line in comparison.to_markdown().splitlines() if line.startswith("| hodosh")]
    assert len(csv_rows) == len(md_rows) == len(comparison.rows)
    for csv_line, md_line, row in zip(csv_rows, md_rows, comparison.rows):
        cells = csv_line.split(",")
        md_cells = [c.strip() for c in md_line.strip("|").split("|")]
        assert md_cells[4].rstrip("*") == cells[4]  # the value, as shown
        assert md_cells[5] == f"[{cells[5]}, {cells[6]}]"
        assert cells[7] == md_cells[6] and cells[8] == md_cells[7]
        assert len(cells[4].split(".")[-1]) <= 1 or "." not in cells[4]
    assert any(row["value"] != round(row["value"], 1) for row in comparison.rows)  # rounding did something


def test_p_values_are_printed_in_one_format():
    # They were printed as 1, 0.25, 0.00391 and <0.001 in one column.
    from kcca_desc.report.build import _p_text
    from kcca_desc.report.compare import format_p

    assert [format_p(p) for p in (1.0, 0.25, 0.5 ** 8, 0.0015, 0.001, 0.000999)] == [
        "1.000", "0.250", "0.004", "0.002", "0.001", "<0.001"]
    assert (_p_text(0.125), _p_text(1e-5)) == ("p = 0.125", "p < 0.001")
    a = np.array([1] * 8 + [2] * 4)
    comparison = compare_runs([Run(make_result(a, a, "A"), "a"), Run(make_result(np.roll(a, 3), a, "B"), "b")],
                              n_resamples=20)
    shown = [line.split(" | ")[7] for line in comparison.to_markdown().splitlines() if "| B |" in line]
    assert shown and all(p == "<0.001" or (len(p) == 5 and p[1] == ".") for p in shown), shown


def test_task_figures_are_listed_with_their_stored_intervals_in_every_format(tmp_path):
    tasks = {"forced_choice": {"accuracy": 62.5, "mean_positive": 0.41, "n_queries": 8,
                               "ci": {"accuracy": [37.5, 87.5], "mean_positive": [0.3, 0.52]},
                               "ci_settings": {"method": "percentile bootstrap"}}}
    runs = [Run(make_result([1, 5, 3, 9], [2, 1, 4, 4], "A", extras={"tasks": tasks}), "a.json"),
            Run(make_result([2, 1, 3, 7], [1, 1, 8, 2], "B", extras={"tasks": {"off_topic": {"AP": 71.25}}}),
                "b.json")]
    comparison = compare_runs(runs, n_resamples=20, n_permutations=20)
    shown = {(row["system"], row["metric"]): (row["value"], row["ci_low"], row["ci_high"])
             for row in comparison.task_rows}
    # Counts are no figures; a figure stored without an interval is listed without one.
    assert shown == {("A", "accuracy"): (62.5, 37.5, 87.5), ("A", "mean_positive"): (0.41, 0.3, 0.52),
                     ("B", "AP"): (71.25, None, None)}
    markdown = comparison.to_markdown()
    assert "| hodosh | forced_choice | accuracy | A | 62.5 | [37.5, 87.5] |" in markdown
    assert "| hodosh | off_topic | AP | B | 71.2 |  |" in markdown
    assert "hodosh,forced_choice,mean_positive,A,0.41,0.3,0.52,,,," in comparison.to_csv()
    latex = comparison.to_latex()
    assert r"A & forced\_choice & accuracy & 62.5 & [37.5, 87.5] \\" in latex
    assert "\n &  & mean\\_positive & 0.41 & [0.3, 0.52] \\\\\n" in latex  # its run and task shown once
    assert json.loads(comparison.to_json())["task_rows"] == comparison.task_rows


GRID = "KCCA bow5 (pyramid) n=8,16 κ=0.1,1"  # a default run name: it holds commas


@pytest.mark.parametrize("systems", [[f"NN,{GRID}"], [f"NN, {GRID}"], ["NN", GRID], [GRID, "NN"]])
def test_systems_selects_names_that_hold_commas(tmp_path, capsys, systems):
    files = [tmp_path / "nn.json", tmp_path / "grid.json", tmp_path / "other.json"]
    for path, name, ranks in zip(files, ("NN", GRID, "Other"), ([1, 5, 3, 9], [2, 1, 4, 4], [3, 3, 3, 3])):
        make_result(ranks, ranks, name).save(path, include_ranks=True)
    argv = [*map(str, files), "--n-resamples", "20", "--n-permutations", "20"]
    assert main([*argv, *(arg for name in systems for arg in ("--systems", name))]) == 0
    printed = capsys.readouterr().out
    assert f"| {GRID} |" in printed and "| NN" in printed and "Other" not in printed


def test_systems_names_the_absent_ones(tmp_path, capsys):
    path = tmp_path / "nn.json"
    make_result([1, 2, 3], [1, 2, 3], "NN").save(path, include_ranks=True)
    assert main([str(path), "--systems", "NN,KCCA n=8"]) == 2
    assert capsys.readouterr().err.startswith(f"error: no result of system(s) KCCA n=8 in {path}")


def test_one_file_given_twice_is_named(tmp_path, capsys):
    # It was refused as "two runs of one system under one protocol in one file".
    path = tmp_path / "nn.json"
    make_result([1, 2, 3], [1, 2, 3], "NN").save(path, include_ranks=True)
    assert main([str(path), str(tmp_path / ".." / tmp_path.name / "nn.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nn.json is given twice: name each results file once" in err


def test_a_file_without_a_run_of_the_protocol_asked_for_is_named_in_a_warning(tmp_path, capsys):
    # It was left out silently: the comparison asked of two files held the other one's run alone.
    nn, both = tmp_path / "nn.json", tmp_path / "both.json"
    make_result([1, 2, 3], [1, 2, 3], "NN").save(nn, include_ranks=True)
    # One run under both protocols, as fit --protocol both writes it.
    karpathy = make_result([2, 1, 3], [1, 3, 2], "K", protocol="karpathy", queries={"caption_image": [0, 1, 2]})
    save_results([make_result([2, 1, 3], [1, 3, 2], "K"), karpathy], both, include_ranks=True)
    assert main([str(nn), str(both), "--protocol", "karpathy", "--n-resamples", "20"]) == 0
    assert f"warning: {nn} holds no karpathy result (only hodosh): left out of the comparison\n" in \
        capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(load_runs([nn, both], protocol="hodosh")) == 2
        # A file whose runs --systems leaves out is no such case.
        assert [run.label for run in load_runs([nn, both], systems=["K"], protocol="karpathy")] == ["K"]


def test_a_comparison_given_as_a_run_says_what_it_is_and_what_to_give(tmp_path, capsys):
    # It read "holds no result record", which did not say that the file is compare's own output.
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    make_result([1, 2, 3], [1, 2, 3], "A").save(a, include_ranks=True)
    make_result([2, 1, 3], [1, 3, 2], "KCCA n=8,16").save(b, include_ranks=True)
    assert main([str(a), str(b), "--n-resamples", "20", "--out", str(tmp_path / "t"), "-q"]) == 0
    capsys.readouterr()
    assert main([str(a), str(tmp_path / "t.json")]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 't.json'}: holds no result record: it is a comparison (written by python -m "
        "kcca_desc.compare --out, or a report's comparison.json) of 'A', 'KCCA n=8,16'; give the results files "
        "of python -m kcca_desc.fit --out (or benchmark tables)\n")
    (tmp_path / "other.json").write_text('{"rows": []}')
    assert main([str(tmp_path / "other.json")]) == 2
    assert capsys.readouterr().err.endswith("other.json: holds no result record; give the results files of "
                                            "python -m kcca_desc.fit --out (or benchmark tables)\n")


def test_out_onto_a_comparison_of_other_inputs_keeps_it_as_a_numbered_version(tmp_path, capsys):
    # compare --out overwrote an earlier comparison of other runs silently, as fit --out did.
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    make_result([1, 5, 3, 9], [2, 1, 4, 4], "A").save(a, include_ranks=True)
    make_result([2, 1, 3, 7], [1, 1, 8, 2], "B").save(b, include_ranks=True)
    make_result([3, 1, 2, 7], [1, 2, 8, 2], "C").save(c, include_ranks=True)
    out = tmp_path / "tables" / "t"
    options = ["--n-resamples", "20", "--out", str(out), "-q"]
    written = ", ".join(str(out.with_suffix(suffix)) for suffix in (".json", ".md", ".csv", ".tex"))
    assert main([str(a), str(b), *options]) == 0
    assert capsys.readouterr().out == f"wrote {written}\n"
    first = out.with_suffix(".md").read_text()
    # The same runs (in another order, the same reference) and statistics: replaced, with a line.
    assert main([str(b), str(a), "--reference", "A", *options]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"replaced {out}.json (+ .md, .csv, .tex): the earlier comparison there had the same runs and statistics",
        f"wrote {written}"]
    # Other runs, then other statistics: each earlier comparison kept under the next number, tables too.
    assert main([str(a), str(c), *options]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"kept the earlier comparison of {out}.json, of other runs or statistics, as {out}.1.json (+ its tables)")
    assert out.with_name("t.1.md").read_text() == first and "| C |" in out.with_suffix(".md").read_text()
    assert main([str(a), str(c), *options, "--seed", "1"]) == 0
    assert f"as {out}.2.json" in capsys.readouterr().out
    assert sorted(path.name for path in out.parent.iterdir()) == sorted(
        f"t{n}{suffix}" for n in ("", ".1", ".2") for suffix in (".json", ".md", ".csv", ".tex"))
    inputs = json.loads(out.with_suffix(".json").read_text())["inputs"]
    assert inputs["seed"] == 1 and [run[0] for run in inputs["runs"]] == ["A", "C"]
