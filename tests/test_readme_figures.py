"""The figures of README.md and of the docs pages are written from ``benchmarks/results/*.json`` and nowhere else.

``benchmarks/readme_figures.py`` rewrites every marked region of figures of its pages from the
results files; these tests fail when a page differs from what the files give (a stale figure), when
a figure stands outside a generated region on the README or a user-facing docs page (a figure
without a results file), and when the generator's checks or formats break.
"""

import copy
import difflib
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

REPOSITORY = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_figures", REPOSITORY / "benchmarks" / "readme_figures.py")
readme_figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_figures)

README = REPOSITORY / "README.md"
#: The pages a reader sees, whether or not they hold generated figures: none may hold another figure.
READER_PAGES = ("README.md", "docs/getting_started.md", "docs/benchmark_notes.md",
                *sorted(str(p.relative_to(REPOSITORY)) for p in (REPOSITORY / "docs" / "user_guide").glob("*.md")))

#: Names with digits in them that the pages may use outside the generated regions.
NAMES_WITH_DIGITS = ("Flickr8K", "Flickr30K", "EfficientNet-Lite0", "Jinja2", "MR8", "IBM-1", "1-of-N", "ViT-S/14",
                     "JAIR 47, 2013", "NN5", "BoW5", "Tri5", "R@10", "R@1", "R@5", "P@50", "ROUGE-1", "F1")
#: Digits that are no figure: citations (a year, a section of a paper), a numbered list's item, a
#: power or complexity in a formula.
NOT_FIGURES = (r"\b(19|20)\d\d\b", r"\b(Sections?|Propositions?|Theorems?) \d+(\.\d+)*((, | and |–)\d+(\.\d+)*)*",
               r"^\d+\. ", r"[²³]", r"<su[bp]>\w+</su[bp]>")


@pytest.fixture
def results():
    """The committed results files, read afresh (a test may change its copy)."""
    return readme_figures.ResultsFiles()


@pytest.fixture(scope="module")
def committed_results():
    """The committed results files, read once for the tests that only read them (tens of megabytes of JSON)."""
    return readme_figures.ResultsFiles()


@pytest.mark.parametrize("page", readme_figures.PAGES)
def test_the_pages_hold_the_figures_of_the_results_files(committed_results, page):
    text = (REPOSITORY / page).read_text()
    new = readme_figures.render(text, committed_results, page)
    diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), page, "generated"))
    assert not diff, f"{page} is stale; run python benchmarks/readme_figures.py\n{diff}"


def test_every_region_is_on_one_page():
    placed = [name for regions in readme_figures.PAGES.values() for name in regions]
    assert sorted(placed) == sorted(readme_figures.REGIONS)
    assert set(readme_figures.PAGES) <= set(READER_PAGES)


@pytest.mark.parametrize("page", READER_PAGES)
def test_no_figure_stands_outside_a_generated_region(page):
    text = (REPOSITORY / page).read_text()
    for pattern in (r"<!-- figures:.*?<!-- /figures -->", r"```.*?```", r"`[^`\n]*`", r"<!--.*?-->"):
        text = re.sub(pattern, "", text, flags=re.S)
    for name in NAMES_WITH_DIGITS:
        text = text.replace(name, "")
    for pattern in NOT_FIGURES:
        text = re.sub(pattern, "", text, flags=re.M)
    figures = [line.strip() for line in text.splitlines() if re.search(r"\d", line)]
    assert not figures, f"{page}: figures outside a <!-- figures:NAME --> region: {figures}"


@pytest.mark.parametrize("page", READER_PAGES)
def test_the_pages_cite_papers_not_the_developer_guide(page):
    assert "SPEC" not in (REPOSITORY / page).read_text()


def test_a_changed_results_file_makes_check_fail_with_a_diff_and_a_rewrite_fixes_it(tmp_path, capsys,
                                                                                   committed_results):
    results_dir = tmp_path / "results"
    shutil.copytree(readme_figures.RESULTS_DIR, results_dir)
    root = tmp_path / "pages"
    for page in readme_figures.PAGES:
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(readme_figures.render((REPOSITORY / page).read_text(), committed_results, page))
    notes = root / "docs" / "benchmark_notes.md"
    before = notes.read_text()
    blas = json.loads((results_dir / "blas_kernels.json").read_text())
    blas["speedup_total"] = 1.5
    (results_dir / "blas_kernels.json").write_text(json.dumps(blas))
    arguments = ["--root", str(root), "--results", str(results_dir)]

    assert readme_figures.main(["--check"] + arguments) == 1
    captured = capsys.readouterr()
    assert "1.37× as fast" in "".join(line for line in captured.out.splitlines() if line.startswith("-"))
    assert "1.50× as fast" in "".join(line for line in captured.out.splitlines() if line.startswith("+"))
    assert "stale: docs/benchmark_notes.md;" in captured.err   # only the page that changed
    assert notes.read_text() == before                         # --check writes nothing

    assert readme_figures.main(arguments) == 0
    assert "1.50× as fast" in notes.read_text()
    assert readme_figures.main(["--check"] + arguments) == 0


@pytest.mark.parametrize("page", readme_figures.PAGES)
def test_a_missing_results_file_is_named(tmp_path, page):
    # The first region of the page that needs a file names it (which one depends on the order).
    with pytest.raises(FileNotFoundError, match=r"[a-z_]+\.json"):
        readme_figures.render((REPOSITORY / page).read_text(), readme_figures.ResultsFiles(tmp_path), page)


NOTES = "docs/benchmark_notes.md"


@pytest.mark.parametrize("page, edit, message", [
    (NOTES, lambda t: t.replace("<!-- figures:blas -->\n", ""), "missing \\['blas'\\]"),
    (NOTES, lambda t: t + "\n<!-- figures:nowhere -->\nx\n<!-- /figures -->\n", "unknown \\['nowhere'\\]"),
    (NOTES, lambda t: t + "\n<!-- figures:blas -->\nx\n<!-- /figures -->\n", "repeated \\['blas'\\]"),
    (NOTES, lambda t: t + "\n<!-- figures:blas -->\nnever closed\n", "not closed"),
    # A region belongs to one page: the README's table on another page is refused there.
    ("README.md", lambda t: t + "\n<!-- figures:blas -->\nx\n<!-- /figures -->\n", "README.md: .*unknown \\['blas'\\]"),
])
def test_regions_must_be_closed_known_and_each_present_once(results, page, edit, message):
    with pytest.raises(ValueError, match=message):
        readme_figures.render(edit((REPOSITORY / page).read_text()), results, page)


def test_a_resolution_row_that_is_not_the_tables_tri_sem_is_refused(results):
    results["image_resolution"]["rows"]["224 px (as shipped)"]["search"]["R@10"] += 1
    with pytest.raises(ValueError, match="image_resolution.json"):
        readme_figures.hodosh_table(results)


def test_a_table_run_with_other_settings_than_the_tuned_ones_is_refused(results):
    results["hodosh_table"]["settings"]["weight_power"] = 0.0
    with pytest.raises(ValueError, match="weight_power"):
        readme_figures.hodosh_setup(results)


def test_a_resumed_table_run_gives_no_wall_time(results):
    results["hodosh_table"]["wall_s_this_run"] = 60.0
    with pytest.raises(ValueError, match="resumed"):
        readme_figures.hodosh_time(results)


def _entry(recalls, median, selected):
    metrics = dict(zip(("R@1", "R@5", "R@10"), recalls), median_rank=median)
    return {"result": {"annotation": metrics, "search": dict(metrics)}, "selected": selected}


def test_table_changes_counts_what_differs_between_two_runs():
    models = {"annotation": [[16, 0.1], [32, 1.0]], "search": [[16, 0.1], [32, 1.0]]}
    reordered = {"annotation": [[32, 1.0], [16, 0.1]], "search": models["search"]}
    earlier = {"kcca": _entry((4.8, 16.4, 24.0), 38.0, models), "nn": _entry((2.5, 6.6, 9.5), 298.5, None)}
    current = copy.deepcopy(earlier)
    current["kcca"]["result"]["annotation"]["R@5"] = 16.500000000000004   # a 0.1 change, in float noise
    current["kcca"]["result"]["search"]["R@10"] = 24.000000000000004      # float noise only: no change
    current["nn"]["result"]["search"]["median_rank"] = 299.0
    current["kcca"]["selected"] = reordered

    changes = readme_figures._table_changes(current, earlier)
    assert changes == {"recalls": 12, "recalls_changed": 1, "recall_step": pytest.approx(0.1),
                       "medians": 4, "medians_changed": 1, "median_step": 0.5,
                       "systems": 1, "reordered": 1, "other_models": 0}
    current["kcca"]["selected"] = {"annotation": [[64, 1.0], [16, 0.1]], "search": models["search"]}
    assert readme_figures._table_changes(current, earlier)["other_models"] == 1


@pytest.mark.parametrize("metrics, expected", [
    ({"R@1": 16.400000000000002, "R@5": 6.6000000000000005, "R@10": 9.5, "median_rank": 298.5},
     "16.4 / 6.6 / 9.5 (298.5)"),
    ({"R@1": 0.0, "R@5": 17.580000000000002, "R@10": 100.0, "median_rank": 38.0}, "0.0 / 17.6 / 100.0 (38)"),
])
def test_figures_reads_like_the_papers_tables(metrics, expected):
    assert readme_figures.figures(metrics) == expected


@pytest.mark.parametrize("values, expected", [([1.25, 1.35, 1.3], "1.2–1.4"), ([1.56, 1.63], "1.6"), ([3.0], "3.0")])
def test_span_gives_one_figure_when_both_ends_read_the_same(values, expected):
    assert readme_figures.span(values) == expected


@given(st.integers(0, 10**6))
def test_duration_reads_back_as_the_seconds(seconds):
    text = readme_figures.duration(seconds)
    minutes = re.fullmatch(r"(?:(\d+) min )?(\d+) s", text)
    assert minutes and int(minutes[1] or 0) * 60 + int(minutes[2]) == seconds and int(minutes[2]) < 60


_words = st.text(st.sampled_from("abcxyz-/.1"), min_size=1, max_size=12)
_code_spans = st.lists(_words, min_size=1, max_size=4).map(lambda ws: "`" + " ".join(ws) + "`")


@given(st.lists(st.one_of(_words, _code_spans), min_size=1, max_size=60))
def test_paragraph_wraps_between_words_and_never_inside_a_code_span(tokens):
    text = " ".join(tokens)
    wrapped = readme_figures.paragraph(text, width=30)
    assert wrapped.replace("\n", " ") == text
    for line in wrapped.splitlines():
        assert line.count("`") % 2 == 0
        assert len(line) <= 30 or line in tokens          # only a single long word or span runs over
