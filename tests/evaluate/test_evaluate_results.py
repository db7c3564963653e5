"""The results format: exact JSON keys, round trips, atomic saving, tables."""

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from kcca_desc._core.errors import DataError, KccaDescError, MissingDataFileError, ParameterError
from kcca_desc._core.registry import UnknownNameError
from kcca_desc.evaluate.latex import LATEX_HEADER
from kcca_desc.evaluate.pools import side_by_side
from kcca_desc.report.compare import load_runs
from kcca_desc.evaluate.results import (
    Result,
    format_table,
    load_results,
    save_results,
    to_csv,
    to_latex,
    to_markdown,
)

ANN = {"R@1": 8.3, "R@5": 21.6, "R@10": 30.3, "median_rank": 34.0, "mean_rank": 120.5, "n_queries": 1000}
SEARCH = {"R@1": 7.6, "R@5": 20.7, "R@10": 30.1, "median_rank": 38.0, "mean_rank": 110.25, "n_queries": 1000}


def result(system="Tri5Sem", protocol="hodosh", **kw):
    return Result(system, "flickr8k", protocol, "test", dict(ANN), dict(SEARCH), **kw)


def test_json_has_exactly_the_documented_keys():
    data = json.loads(result(params={"reg": 0.1}, timings_s={"fit": 1.5}).to_json())
    assert list(data) == ["system", "dataset", "protocol", "split", "annotation", "search", "params", "timings_s"]
    assert list(data["annotation"]) == ["R@1", "R@5", "R@10", "median_rank", "mean_rank", "n_queries"]
    assert data["search"]["R@10"] == 30.1 and data["annotation"]["n_queries"] == 1000


def test_round_trip_with_extras_and_ranks(tmp_path):
    ranks = {"annotation": np.arange(1, 6), "search": np.arange(5, 0, -1)}
    r = result(params={"path": Path("/x"), "grid": (1, 2), "n": np.int64(3), "obj": object},
               extras={"judgments": {"S@1": 12.0}}, ranks=ranks)
    assert r.params == {"path": "/x", "grid": [1, 2], "n": 3, "obj": repr(object)}
    assert "ranks" not in json.loads(r.to_json())
    back = Result.from_json(r.to_json(include_ranks=True))
    assert back.to_dict(True) == r.to_dict(True)
    assert np.array_equal(back.ranks["search"], ranks["search"])
    path = tmp_path / "sub" / "r.json"
    r.save(path)
    assert load_results(path)[0].extras == {"judgments": {"S@1": 12.0}}
    save_results([r, result("NN")], tmp_path / "all.json")
    assert [x.system for x in load_results(tmp_path / "all.json")] == ["Tri5Sem", "NN"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_validation_names_the_problem(tmp_path):
    with pytest.raises(ValueError, match="unknown protocol 'coco'"):
        result(protocol="coco")
    bad = dict(ANN, **{"R@5": 150.0})
    with pytest.raises(ValueError, match="annotation R@5 = 150.0 is not a percentage"):
        Result("s", "d", "hodosh", "test", bad, SEARCH)
    with pytest.raises(ValueError, match="search metrics lack mean_rank"):
        Result("s", "d", "hodosh", "test", ANN, {k: v for k, v in SEARCH.items() if k != "mean_rank"})
    with pytest.raises(ValueError, match="median_rank is nan"):
        Result("s", "d", "hodosh", "test", dict(ANN, median_rank=float("nan")), SEARCH)
    with pytest.raises(ValueError, match="may not redefine"):
        result(extras={"system": "x"})
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not a JSON results file"):
        load_results(tmp_path / "bad.json")
    (tmp_path / "short.json").write_text('[{"system": "s"}]')
    with pytest.raises(ValueError, match="short.json: result 0: .*lacks dataset"):
        load_results(tmp_path / "short.json")



@pytest.mark.parametrize("text, message", [
    ('["x"]', "result 0: a result must be a JSON object, got str"),
    ('"x"', "result 0: a result must be a JSON object, got str"),
    ("[" * 100_000 + "]" * 100_000, "not a JSON results file .*recursion"),
])
def test_a_results_file_of_other_json_values_is_one_data_error_naming_it(tmp_path, text, message):
    # Not an AttributeError or RecursionError from inside the reader.
    (tmp_path / "odd.json").write_text(text)
    with pytest.raises(DataError, match=f"odd.json: {message}"):
        load_results(tmp_path / "odd.json")
    with pytest.raises(KccaDescError, match="odd.json: (holds no result record|not a JSON results file)"):
        load_runs([tmp_path / "odd.json"])


def test_a_missing_results_file_or_a_directory_is_an_error_naming_the_path(tmp_path):
    with pytest.raises(MissingDataFileError, match=r"nope\.json: no such results file$"):
        load_results(tmp_path / "nope.json")
    with pytest.raises(DataError, match=rf"^{tmp_path}: is a directory, not a JSON results file$"):
        load_results(tmp_path)


GOOD = result(ranks={"annotation": [1, 2], "search": [2, 1]}).to_dict(include_ranks=True)


@pytest.mark.parametrize("change, message", [
    ({"ranks": [1, 2]}, r"ranks must be an object \{task: \[rank of each query\]\}, got list"),
    ({"timings_s": [1, 2]}, r"timings_s must be an object \{name: value\}, got list"),
    ({"params": "abc"}, r"params must be an object \{name: value\}, got str"),
    ({"queries": [1]}, r"queries must be an object \{name: value\}, got list"),
    ({"ranks": {"annotation": [0, 1]}}, r"ranks\['annotation'\] must hold ranks, positive integers \(1 is the best\), "
                                        r"got 0"),
    ({"ranks": {"annotation": [1.5, 1]}}, r"ranks\['annotation'\] must hold ranks, .*got 1\.5"),
    ({"ranks": {"search": ["a"]}}, r"ranks\['search'\] must hold ranks, .*got 'a'"),
    ({"ranks": {"search": [[1], [2, 3]]}}, r"ranks\['search'\] must be a list of ranks, one per query, "
                                           r"got \[\[1\], \[2, 3\]\]"),
    # The per-query record: "'int' object is not iterable", or numpy's ValueError, before.
    ({"queries": {"images": 5}}, r"queries\['images'\] must be a list of ids, one per pool image, got int"),
    ({"queries": {"captions": None}}, r"queries\['captions'\] must be a list of ids, one per pool caption, "
                                      r"got NoneType"),
    ({"queries": {"images": ["a", 1.5]}},
     r"queries\['images'\]\[1\] must be an id \(a string or a whole number\), got float"),
    ({"queries": {"captions": [True, False]}},  # stored as "True" and "False" before
     r"queries\['captions'\]\[0\] must be an id \(a string or a whole number\), got bool"),
    ({"queries": {"caption_image": ["a", "b"]}},
     r"queries\['caption_image'\] must hold pool image indices, whole numbers from 0 to 1 \(2 pool images\), "
     r"got 'a'"),
    ({"queries": {"caption_image": None}},
     r"queries\['caption_image'\] must be a list of pool image indices, one per caption, got None"),
    ({"queries": {"caption_image": 3}},
     r"queries\['caption_image'\] must be a list of pool image indices, one per caption, got 3"),
    ({"queries": {"top": {"search": [[0], [1, 2]]}}},
     r"queries\['top'\]\['search'\] must be a list of \[K candidate indices\] per query, got \[\[0\], \[1, 2\]\]"),
    # The image of each caption: three for two captions, or an image past the pool, loaded before.
    ({"queries": {"captions": ["c0", "c1"], "caption_image": [0, 1, 1]}},
     r"queries\['caption_image'\] has 3 per-query search entries but 2 query ids in queries\['captions'\]"),
    ({"queries": {"caption_image": [0]}},
     r"queries\['caption_image'\] has 1 per-query search entries but 2 ranks in ranks\['search'\]"),
    ({"queries": {"images": ["a", "b"], "captions": ["c0", "c1"], "caption_image": [0, 2]}},
     r"queries\['caption_image'\] must hold pool image indices, whole numbers from 0 to 1 \(2 pool images\), "
     r"got 2"),
    # A benchmark record's images of the search queries (top-level caption_image), unchecked before.
    ({"caption_image": [0, 1, 1]}, r"caption_image has 3 per-query search entries but 2 ranks in ranks\['search'\]"),
    ({"caption_image": [0, 5]},
     r"caption_image must hold pool image indices, whole numbers from 0 to 1 \(2 pool images\), got 5"),
    ({"caption_image": "0 1"}, r"caption_image must be a list of pool image indices, one per caption, got '0 1'"),
    ({"queries": {"top": {"annotation": [[0, 2], [1, 0]]}}},
     r"queries\['top'\]\['annotation'\] must hold candidate indices, whole numbers from 0 to 1 "
     r"\(2 pool captions\), got 2"),
    ({"ranks": {"annotaton": [1, 2], "search": [2, 1]}},
     r"ranks has an unknown task 'annotaton'; available: annotation, search"),
    ({"queries": {"top": {"serch": [[0], [1]]}}},
     r"queries\['top'\] has an unknown task 'serch'; available: annotation, search"),
    ({"queries": {"top": [[0], [1]]}},
     r"queries\['top'\] must be an object \{task: \[\[K candidate indices\] per query\]\}, got list"),
    ({"ci": "x"}, r"ci must be an object \{task: \{metric: \[low, high\]\}\}, got str"),
    ({"ci": {"annotation": [1, 2]}}, r"ci\['annotation'\] must be an object \{metric: \[low, high\]\}, got list"),
    ({"ci": {"annotation": {"R@1": [1]}}}, r"ci\['annotation'\]\['R@1'\] must be an interval \[low, high\], got \[1\]"),
    ({"significance": "x"}, r"significance must be an object \{task: \{metric: p\}\}, got str"),
    ({"significance": {"search": {"R@5": "x"}}}, r"significance\['search'\]\['R@5'\] must be a p-value, got 'x'"),
    # A misspelt task's intervals and p-values were kept and read by no table, which printed the figures bare.
    ({"ci": {"annotaton": {"R@1": [1, 2]}}}, r"ci has an unknown task 'annotaton'; available: annotation, search"),
    ({"significance": {"serch": {"R@1": 0.01}}},
     r"significance has an unknown task 'serch'; available: annotation, search"),
    # A misspelt metric ("R@1O", the letter O) was kept and read by no table, which printed the figure bare.
    ({"ci": {"annotation": {"R@1O": [1, 2]}}}, r"ci\['annotation'\] has an unknown metric 'R@1O'; available: "
                                              r"R@1, R@5, R@10, median_rank, mean_rank, or R@K of a further cut-off K"),
    ({"significance": {"search": {"R@1": 0.5, "medain_rank": 0.01}}},
     r"significance\['search'\] has an unknown metric 'medain_rank'; available: R@1, R@5, R@10, median_rank, "
     r"mean_rank, or R@K of a further cut-off K"),
    ({"tasks": "x"}, r"tasks must be an object \{task: \{figure: value\}\}, got str"),
    ({"tasks": {"forced_choice": 3}}, r"tasks\['forced_choice'\] must be an object \{figure: value\}, got 3"),
    ({"tasks": {"forced_choice": {"accuracy": 50.0, "ci": {"accuracy": "x"}}}},
     r"tasks\['forced_choice'\]\['ci'\]\['accuracy'\] must be an interval \[low, high\], got 'x'"),
])
def test_a_malformed_entry_of_a_results_file_is_refused_naming_the_file_result_and_key(tmp_path, change, message):
    # Not an AttributeError on loading, nor later from a table that reads ci, significance or tasks.
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([GOOD, {**GOOD, **change}]))
    with pytest.raises(DataError, match=rf"^{path}: result 1: result of 'Tri5Sem': {message}$"):
        load_results(path)


def test_a_result_made_with_queries_of_the_wrong_type_names_the_field():
    # Result(queries={"images": 5}) was Python's TypeError: 'int' object is not iterable.
    with pytest.raises(ParameterError, match=r"^result of 'Tri5Sem': queries\['images'\] must be a list of ids, "
                                             r"one per pool image, got int$"):
        result(ranks={"annotation": [1, 2], "search": [2, 1]}, queries={"images": 5})


def test_whole_number_ids_are_kept_as_given_and_round_trip(tmp_path):
    # Integer ids (COCO's) were stored as strings: the result no longer held the ids of its data set.
    made = result(ranks={"annotation": [1, 2], "search": [2, 1]},
                  queries={"images": [391895, np.int64(522418)], "captions": ["a", 7], "caption_image": [0, 1]})
    assert made.queries["images"] == [391895, 522418] and made.queries["captions"] == ["a", 7]
    assert all(type(i) is int for i in made.queries["images"])
    save_results([made], tmp_path / "runs.json", include_ranks=True)
    loaded = load_results(tmp_path / "runs.json")[0]
    assert loaded.queries["images"] == made.queries["images"] and loaded.queries["captions"] == ["a", 7]
    assert loaded.to_dict(include_ranks=True) == made.to_dict(include_ranks=True)
    # String ids stay strings: "1" and 1 are different ids.
    assert result(queries={"images": ["1"]}).queries["images"] == ["1"]


def test_a_benchmark_record_keeps_its_caption_images_in_the_extras_without_a_per_query_record():
    record = {**GOOD, "caption_image": [1, 0]}
    loaded = Result.from_dict(record)
    assert loaded.extras["caption_image"] == [1, 0] and loaded.queries == {}
    assert loaded.to_dict(include_ranks=True) == record


def test_results_compare_by_their_json_form_with_ranks_and_queries():
    # The dataclass's comparison raised numpy's "truth value of an array is ambiguous" for results with ranks.
    made = Result.from_dict(GOOD)
    assert made == Result.from_dict(json.loads(json.dumps(GOOD)))
    assert made != Result.from_dict({**GOOD, "ranks": {"annotation": [2, 1], "search": [2, 1]}})
    assert made != Result.from_dict({**GOOD, "queries": {"images": ["a", "b"]}})
    assert made != Result.from_dict({**GOOD, "system": "other"})
    assert made != GOOD and made in [GOOD, made]
    with pytest.raises(TypeError, match="unhashable"):
        hash(made)


def test_whole_number_ranks_and_the_known_extras_load():
    loaded = Result.from_dict({**GOOD, "ranks": {"annotation": [1.0, 2.0], "search": [2, 1]},
                               "ci": {"annotation": {"R@1": [1, 2.5]}}, "significance": {"search": {"R@1": None}},
                               "tasks": {"forced_choice": {"accuracy": 50.0, "ci": {"accuracy": [40.0, 60.0]},
                                                           "ci_settings": {"n_resamples": 10}}}})
    assert loaded.ranks["annotation"].tolist() == [1, 2] and loaded.ranks["annotation"].dtype == np.int64
    assert "[1.0, 2.5]" in format_table(loaded, ci=True)
    # An interval or p-value of a further cut-off (the baseline's R@20 in a paired test) is known.
    Result.from_dict({**GOOD, "ci": {"search": {"R@20": [1, 2]}}, "significance": {"annotation": {"R@20": 0.5}}})


def test_markdown_rows_columns_markers_and_cis():
    r = result(extras={"significance": {"annotation": {"R@1": 0.01, "R@5": 0.2}},
                      "ci": {"search": {"R@10": [27.0, 33.25]}}})
    with pytest.warns(UserWarning, match="no confidence intervals"):
        md = to_markdown([r, result("NN5 idf F1")], ci=True)
    lines = md.strip().splitlines()
    assert lines[0] == ("| System | Ann. R@1 | Ann. R@5 | Ann. R@10 | Ann. med r | "
                        "Sea. R@1 | Sea. R@5 | Sea. R@10 | Sea. med r |")
    assert lines[2] == "| Tri5Sem | 8.3* | 21.6 | 30.3 | 34 | 7.6 | 20.7 | 30.1 [27.0, 33.2] | 38 |"
    assert lines[3].startswith("| NN5 idf F1 | 8.3 |")
    assert "*" not in to_markdown([r], alpha=0.001)


def test_a_bar_in_a_system_name_is_escaped_not_a_column():
    # "KCCA a|b" split its row into one column more than the header.
    md = to_markdown([result("KCCA a|b"), result("NN")])
    assert md.splitlines()[2].startswith(r"| KCCA a\|b | 8.3 |")
    assert {line.replace(r"\|", "").count("|") for line in md.splitlines()} == {10}


def test_identity_columns_appear_when_they_vary():
    md = to_markdown([result(protocol="hodosh"), result(protocol="karpathy")])
    assert md.splitlines()[0].startswith("| System | Protocol | Ann. R@1")
    assert "| Tri5Sem | karpathy | 8.3 |" in md


def test_csv_latex_and_plain_table():
    r = result(extras={"ci": {"annotation": {"R@1": [6.5, 10.0]}}})
    rows = to_csv([r], ci=True).splitlines()
    header = rows[0].split(",")
    assert header[:5] == ["system", "dataset", "protocol", "split", "annotation_R@1"]
    assert header[5:7] == ["annotation_R@1_ci_low", "annotation_R@1_ci_high"]
    values = dict(zip(header, rows[1].split(",")))
    assert values["annotation_R@1_ci_high"] == "10.0" and values["search_R@1_ci_low"] == ""
    # Rounded as the tables print them (full precision stays in the JSON).
    assert values["search_mean_rank"] == f"{110.25:.1f}" and values["search_n_queries"] == "1000"
    assert values["annotation_R@1"] == "8.3"
    tex = to_latex([result("BoW5 √idf & co_1"), result("x")], alpha=0.05)
    assert r"\begin{tabular}{lrrrrrrrr}" in tex
    assert r"BoW5 $\surd$idf \& co\_1 & 8.3 & 21.6 & 30.3 & 34 & 7.6" in tex
    assert tex.splitlines()[0] == LATEX_HEADER and "booktabs" in LATEX_HEADER
    assert r"\multicolumn{4}{c}{Annotation}" in tex and tex.rstrip().endswith(r"\end{tabular}")
    marked = to_latex([result(extras={"significance": {"search": {"median_rank": 0.001}}})])
    assert r"38$^{*}$" in marked
    table = format_table([r, result("NN")])
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["System", "Ann.", "R@1"]
    assert set(lines[1]) == {"-"} and len({len(x) for x in lines}) == 1
    with pytest.raises(ValueError, match="at least one result"):
        to_markdown([])


def test_task_figures_and_their_intervals_in_every_table():
    tasks = {"forced_choice": {"accuracy": 62.5, "mean_positive": 0.41234, "n_queries": 8, "n_choices": 6,
                               "ci": {"accuracy": [37.5, 87.5], "mean_positive": [0.3, 0.52]}},
             "off_topic": {"AP": 71.25, "n_pairs": 16}}
    with_tasks, without = result(extras={"tasks": tasks}), result("NN")
    with pytest.warns(UserWarning, match="no confidence intervals"):
        md = to_markdown([with_tasks, without], ci=True).split("\n\n")[1].splitlines()
    assert md[0] == "| System | Forced choice accuracy | Forced choice mean positive | Off topic AP |"
    assert md[2] == "| Tri5Sem | 62.5 [37.5, 87.5] | 0.412 [0.3, 0.52] | 71.2 |"
    assert md[3] == "| NN |  |  |  |"
    assert "[37.5" not in to_markdown([with_tasks])  # intervals only with ci, as the retrieval cells
    assert "\n\n" not in to_markdown([without])  # no task figures, no second table
    header, row = to_csv([with_tasks], ci=True).splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    assert (values["forced_choice_accuracy"], values["forced_choice_accuracy_ci_low"],
            values["forced_choice_accuracy_ci_high"]) == ("62.5", "37.5", "87.5")
    assert values["off_topic_AP_ci_low"] == "" and "forced_choice_n_queries" not in values
    tex = to_latex([with_tasks], ci=True)
    assert tex.count(r"\begin{tabular}") == 2 and r"Tri5Sem & 62.5 [37.5, 87.5] & 0.412 [0.3, 0.52] & 71.2 \\" in tex
    assert "Forced choice accuracy" in format_table([with_tasks], ci=True).split("\n\n")[1]


def test_one_result_is_a_table_of_one_row():
    r = result()
    assert to_markdown(r) == to_markdown([r])
    assert to_csv(r) == to_csv([r]) and to_latex(r) == to_latex([r])
    assert format_table(r) == format_table([r])


@pytest.mark.parametrize("table", [format_table, to_markdown, to_csv, to_latex, side_by_side])
@pytest.mark.parametrize("given, message", [
    (None, r"results must be a Result or a list of Results, got NoneType"),
    (3, r"results must be a Result or a list of Results, got int"),
    ("runs.json", r"results must be a Result or a list of Results, got str"),
    (GOOD, r"results must be a Result or a list of Results, got dict"),
    ([GOOD], r"results\[0\] must be a Result, got dict"),
    ([result(), None], r"results\[1\] must be a Result, got NoneType"),
])
def test_anything_but_results_is_refused_naming_the_table_and_the_item(table, given, message):
    # Not a TypeError or an AttributeError on some item deep in the table.
    with pytest.raises(ParameterError, match=rf"^{table.__name__}: {message}; make one from a result's dict with "
                                             r"kcca_desc\.evaluate\.Result\.from_dict, or read a results file "
                                             r"with kcca_desc\.evaluate\.load_results$"):
        table(given)


def test_a_generator_of_results_is_read_once_into_every_table():
    results = [result(), result("NN")]
    for table in (format_table, to_markdown, to_csv, to_latex, side_by_side):
        assert table(r for r in results) == table(results)


def test_an_unknown_metric_is_a_key_error_listing_the_metrics():
    with pytest.raises(UnknownNameError, match=r"unknown annotation metric 'R@3'; available: R@1, R@5, R@10"):
        result().metric("annotation", "R@3")
    with pytest.raises(KeyError):
        result().metric("search", "recall")


def test_ci_tables_warn_about_results_without_intervals():
    with_ci = result(extras={"ci": {"search": {"R@10": [27.0, 33.25]}}})
    bare = result("NN")
    for table in (format_table, to_markdown, to_csv, to_latex):
        with pytest.warns(UserWarning, match=r"1 result\(s\) have no confidence intervals \('NN'\).*"
                                             "add_confidence_intervals"):
            table([with_ci, bare], ci=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        format_table([with_ci], ci=True)
        format_table([bare])
