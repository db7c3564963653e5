"""The HTML report built from real runs of the command line: sections, figures, gallery, error analysis."""

import re

import numpy as np
import pytest

from kcca_desc.report.compare import load_runs
from kcca_desc.data.registry import load_dataset
from kcca_desc.evaluate import Result, result_from_scores, retrieval_metrics
from kcca_desc.evaluate.results import format_task_figure
from kcca_desc.cli.fit import main as fit_main
from kcca_desc.report import build_report

SECTIONS = ("results", "comparison", "figures", "gallery", "errors")


def _cards(html, kind):
    """The HTML of each gallery card of one kind (caption-query or image-query)."""
    return re.findall(rf'<div class="card {kind}">(.*?)\n</div>\n(?=<div class="card|</div>)', html, flags=re.S)


def test_report_has_every_section_and_is_self_contained(report_page):
    html = report_page.read_text()
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    sources = re.findall(r'<img src="([^"]*)"', html)
    assert sources and all(s.startswith(("data:image/png;base64,", "data:image/jpeg;base64,")) for s in sources)
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "<script" not in html


def test_figures_are_embedded_and_saved_as_png_and_pdf(report_page):
    html = report_page.read_text()
    for name in ("recall_at_k", "rank_cdf", "intervals"):
        assert f'<figure id="figure-{name}">' in html
        png, pdf = (report_page.parent / "figures" / f"{name}.{ext}" for ext in ("png", "pdf"))
        assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")
    # No run records a training history, so there is no training figure.
    assert "figure-training" not in html
    assert (report_page.parent / "comparison.tex").is_file()


def test_results_and_comparison_tables_hold_every_run(report_page, run_files):
    html = report_page.read_text()
    runs = load_runs(run_files)
    results = html.split('<section id="results">')[1].split("</section>")[0]
    comparison = html.split('<section id="comparison">')[1].split("</section>")[0]
    for run in runs:
        assert f'<td class="name">{run.label}</td><td class="name">{run.result.protocol}</td>' in results
        figure = f"{run.result.annotation['R@5']:.1f}"
        assert figure in results
    # The first run's other tasks, each figure with its stored interval.
    tasks = results.split('<h3 id="tasks">')[1]
    first = runs[0].result
    for name, metrics in first.extras["tasks"].items():
        low, high = metrics["ci"]["accuracy"]
        assert f'{format_task_figure(metrics["accuracy"])}<span class="ci">{format_task_figure(low)}–' \
               f'{format_task_figure(high)}</span>' in tasks, name
    assert tasks.count("<tr><td") == 2  # one run with tasks, two protocols
    # The second run is compared with the first (the reference) under both protocols.
    assert comparison.count("<tr><td") == 2
    assert len(re.findall(r'<span class="ci">p [=<] [\d.]+</span>', comparison)) == 2 * 10


def test_gallery_marks_the_gold_item_at_its_stored_rank(report_page, run_files, gallery_size):
    html = report_page.read_text()
    (reference,) = [run for run in load_runs(run_files) if run.result.protocol == "hodosh"][:1]
    dataset = load_dataset("synthetic", n_images=100, seed=0)
    view = dataset.view("test", "hodosh")
    captions = _cards(html, "caption-query")
    images = _cards(html, "image-query")
    assert len(captions) == len(images) == gallery_size
    for card in captions:
        caption_id, rank = re.search(r"(synthetic_\d+#\d) · gold rank (\d+)", card).groups()
        q = view.caption_ids.index(caption_id)
        assert int(rank) == reference.result.ranks["search"][q]
        thumbs = re.findall(r'<figure class="thumb( gold)?"><img src="data:image/jpeg', card)
        # The top five, then the gold image again when it is not among them.
        assert len(thumbs) == 5 + (int(rank) > 5)
        assert [bool(g) for g in thumbs].count(True) == 1
        if int(rank) <= 5:
            assert thumbs[int(rank) - 1] == " gold"
        assert card.count("gold-marker") == 1 and f"gold · rank {rank}" in card
    for card in images:
        image_id, rank = re.search(r"(synthetic_\d+) · gold rank (\d+)", card).groups()
        assert int(rank) == reference.result.ranks["annotation"][view.images.ids.index(image_id)]
        assert card.count("<li") == 5
        assert card.count("gold-marker") == 1


def test_error_analysis_lists_the_worst_and_most_disputed_queries(report_page, run_files):
    html = report_page.read_text()
    errors = html.split('<section id="errors">')[1]
    first = load_runs(run_files)[0].result
    worst = re.findall(r'<table class="queries worst">(.*?)</table>', errors, flags=re.S)
    assert len(worst) == 2
    for table, task in zip(worst, ("annotation", "search")):
        shown = [int(r) for r in re.findall(r'<td class="num">(\d+)</td>', table)]
        assert shown == sorted(first.ranks[task], reverse=True)[:5]
    disputed = re.findall(r'<table class="queries disagree">(.*?)</table>', errors, flags=re.S)
    assert len(disputed) == 2 and all(t.count("<tr>") == 1 + 5 for t in disputed)


def test_training_curves_appear_for_runs_that_record_them(tmp_path):
    dataset = load_dataset("synthetic", n_images=60, seed=0)
    view = dataset.view("test", "hodosh")
    result = result_from_scores(np.random.default_rng(0).random((view.n_images, view.n_captions)), view, "random")
    result.extras["training"] = {"history": [{"epoch": e, "loss": 1.0 / e, "dev_rsum": 10.0 * e} for e in (1, 2, 3)],
                                 "best_epoch": 3}
    page = build_report([result], tmp_path, dataset=dataset, n_gallery=2, n_resamples=50)
    html = page.read_text()
    assert '<figure id="figure-training">' in html and (tmp_path / "figures" / "training.pdf").is_file()
    # One run: no comparison section, no disagreement tables.
    assert '<section id="comparison">' not in html and "queries disagree" not in html


def test_a_data_set_that_does_not_match_gives_a_page_without_gallery(tmp_path, run_files):
    other = load_dataset("synthetic", n_images=60, seed=0)
    with pytest.warns(UserWarning, match="the report has no retrieval gallery: .*not the data set it was measured on"):
        page = build_report(load_runs(run_files[:1]), tmp_path, dataset=other, n_resamples=50)
    html = page.read_text()
    assert '<section id="figures">' in html  # the rest of the report is still there
    assert "No gallery: " in html and "not the data set it was measured on" in html


def test_fit_writes_the_report_directly(tmp_path, capsys):
    out = tmp_path / "report"
    assert fit_main(["--method", "nn", "--n-images", "60", "--report", str(out), "--quiet"]) == 0
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    assert '<div class="card caption-query">' in (out / "report.html").read_text()


@pytest.mark.parametrize("bad", [{"n_gallery": -1}, {"n_worst": -2}])
def test_bad_report_options_are_refused(tmp_path, bad, run_files):
    with pytest.raises(ValueError, match="must be >= 0"):
        build_report(load_runs(run_files[:1]), tmp_path, **bad)


def test_fit_refuses_a_report_path_that_is_a_file_before_any_work(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    with pytest.raises(SystemExit) as exit_info:
        fit_main(["--method", "nn", "--n-images", "60", "--report", str(taken), "--quiet"])
    assert exit_info.value.code == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_the_gallery_shows_the_run_asked_for_against_the_reference(tmp_path, run_files):
    runs = load_runs(run_files)
    reference = runs[0]
    shown = next(run for run in runs if run.result.protocol == "hodosh" and run.label != reference.label)
    page = build_report(runs, tmp_path, gallery=shown.label, n_gallery=3, n_resamples=50, n_permutations=50)
    html = page.read_text()
    assert f"What {shown.label} retrieves" in html
    view = load_dataset("synthetic", n_images=100, seed=0).view("test", "hodosh")
    for card in _cards(html, "caption-query"):
        caption_id, rank = re.search(r"(synthetic_\d+#\d) · gold rank (\d+)", card).groups()
        assert int(rank) == shown.result.ranks["search"][view.caption_ids.index(caption_id)]
    # Its disagreements are with the reference, which stays the first run.
    assert f"queries where {shown.label} and {reference.label} disagree most" in html
    assert f"Reference: {reference.label} (hodosh)" in html or f"{reference.label} (hodosh)" in html
    with pytest.raises(ValueError, match="gallery: 'no such run' is none of the runs"):
        build_report(runs, tmp_path, gallery="no such run")


def test_the_page_counts_systems_results_and_files(report_page, run_files):
    runs = load_runs(run_files)
    systems = len({run.label for run in runs})
    protocols = [run.result.protocol for run in runs]
    html = report_page.read_text()
    expected = (f"{systems} systems, {len(runs)} results ({protocols.count('hodosh')} hodosh, "
                f"{protocols.count('karpathy')} karpathy) from {len(run_files)} files")
    assert f'<p class="meta">{expected} · generated' in html
    assert "each protocol has a reference of its own" in html


def test_runs_whose_queries_pile_up_at_the_worst_rank_are_explained():
    from kcca_desc.report.build import _tie_notes
    from kcca_desc.report.compare import Run

    rng = np.random.default_rng(0)
    dataset = load_dataset("synthetic", n_images=100, seed=0)
    view = dataset.view("test", "hodosh")
    scores = rng.random((view.n_images, view.n_captions))
    tied = scores.copy()
    tied[:, :] = np.where(rng.random(tied.shape) < 0.3, tied, 0.0)  # many zeros: ties at the bottom
    tied[np.arange(view.n_images), np.arange(view.n_images)] = 0.0  # the gold pairs score 0 too
    plain, ties = (Run(result_from_scores(s, view, name), "") for s, name in ((scores, "plain"), (tied, "tied")))
    notes = _tie_notes([plain, ties])
    assert notes and all(note.startswith("tied (hodosh, ") for note in notes)
    assert any(f"rank their gold item last of the pool (rank {view.n_images})" in note for note in notes)


def test_no_ties_are_claimed_where_chance_puts_queries_at_the_last_rank():
    # Karpathy search: five captions per image, so without any tie one query in the pool's size
    # (12 images) ranks its image last, 5 of 60; the note claimed ties of those 5 queries.
    from kcca_desc.report.build import _tie_notes
    from kcca_desc.report.compare import Run

    n_images, per_image = 12, 5
    image_of = np.repeat(np.arange(n_images), per_image)
    search = np.arange(n_images * per_image) % n_images + 1  # every rank 1..12 taken by 5 queries
    annotation = np.arange(n_images) % (n_images * per_image - per_image) + 1
    ranks = {"annotation": annotation, "search": search}
    result = Result(system="no ties", dataset="synthetic", protocol="karpathy", split="test",
                    annotation=retrieval_metrics(annotation), search=retrieval_metrics(search), ranks=ranks,
                    queries={"caption_image": image_of.tolist()})
    assert _tie_notes([Run(result, "")]) == []
    # Thirty of sixty queries with their image last are ties, not chance.
    piled = np.where(np.arange(search.size) < 30, n_images, search)
    tied = Result(system="ties", dataset="synthetic", protocol="karpathy", split="test",
                  annotation=retrieval_metrics(annotation), search=retrieval_metrics(piled),
                  ranks={"annotation": annotation, "search": piled}, queries={"caption_image": image_of.tolist()})
    (note,) = _tie_notes([Run(tied, "")])
    assert note.startswith("ties (karpathy, search): 33 of 60 queries (55%) rank their gold item last of the pool "
                           "(rank 12), where a ranking without ties would put about 5 by chance")


def test_recall_curves_stop_at_the_largest_pool(run_files, report_page):
    # With pools of 20 images they ran to K = 100, flat at 100% past the pool's size.
    from kcca_desc.report import figures

    runs = load_runs(run_files)
    limits = figures.recall_k_limits(runs)
    hodosh = [run for run in runs if run.result.protocol == "hodosh"]
    images = max(len(run.result.ranks["annotation"]) for run in runs)
    captions = max(len(run.result.ranks["search"]) for run in runs)
    assert limits == {"annotation": min(100, captions), "search": min(100, images)} and images < 100
    for fig, pools in ((figures.recall_curves(runs), limits), (figures.recall_curves(hodosh), None)):
        for ax, task in zip(fig.axes, ("annotation", "search")):
            top = (pools or figures.recall_k_limits(hodosh))[task]
            assert ax.get_xlim()[1] == top and max(line.get_xdata()[-1] for line in ax.get_lines()) == top
    assert f"Recall at K (K = 1…{limits['annotation']} for annotation, K = 1…{limits['search']} for search)" \
        in report_page.read_text()
    assert figures.recall_k_limits(runs, max_k=10) == {"annotation": 10, "search": 10}


def test_progress_counts_runs_not_results(run_files, tmp_path, capsys):
    # Two files of both protocols were "report: comparing 4 runs".
    from kcca_desc.cli.report import main as report_main

    assert report_main([*map(str, run_files), "--out", str(tmp_path), "--n-gallery", "0", "--n-worst", "0",
                        "--n-resamples", "20", "--n-permutations", "20"]) == 0
    err = capsys.readouterr().err
    assert "report: comparing 2 runs, 2 protocols" in err and "comparing 4 runs" not in err


def test_legends_sit_outside_the_curves(run_files):
    from kcca_desc.report import figures

    runs = load_runs(run_files)
    for fig in (figures.recall_curves(runs), figures.rank_cdf(runs)):
        assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)


def test_cli_names_an_unknown_gallery_run_before_any_work(tmp_path, run_files, capsys):
    from kcca_desc.cli.report import main as report_main

    assert report_main([*map(str, run_files), "--out", str(tmp_path / "r"), "--gallery", "nope", "--quiet"]) == 2
    assert "gallery: 'nope' is none of the runs" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_results_saved_without_ranks_are_refused_before_any_work(tmp_path, run_files):
    # save_results leaves the per-query ranks out by default; the report needs them.
    from kcca_desc._core.errors import DataError
    from kcca_desc.evaluate import load_results, save_results
    path = tmp_path / "out.json"
    save_results([run.result for run in load_runs(run_files[:1])], path)
    out = tmp_path / "report"
    with pytest.raises(DataError, match=r"per-query annotation and search ranks are missing from result "
                                        r"'.+'.*include_ranks=True"):
        build_report(load_results(path), out)
    assert not out.exists()


def test_a_further_cut_off_of_one_run_is_a_column_of_the_page_blank_for_the_others(tmp_path):
    from kcca_desc.report.compare import Run

    dataset = load_dataset("synthetic", n_images=60, seed=0)
    view = dataset.view("test", "hodosh")
    rng = np.random.default_rng(0)
    further = result_from_scores(rng.random((view.n_images, view.n_captions)), view, "A", ks=(1, 5, 10, 20))
    plain = result_from_scores(rng.random((view.n_images, view.n_captions)), view, "B")
    html = build_report([Run(plain, "b"), Run(further, "a")], tmp_path, dataset=dataset, n_gallery=2,
                        n_resamples=50, n_permutations=50).read_text()
    results = html.split('<section id="results">')[1].split("</section>")[0]
    assert re.findall(r"<th>([^<]*)</th>", results)[:6] == ["R@1", "R@5", "R@10", "R@20", "med r", "mean r"]
    cells = {row.split("</td>")[0].split(">")[-1]: re.findall(r"<td>(.*?)</td>", row)
             for row in results.split('<tr') if '<td class="name">' in row}
    assert cells["B"][3] == "" and cells["A"][3].startswith(f"{further.annotation['R@20']:.1f}<span")
    assert (tmp_path / "figures" / "intervals.png").is_file()


def test_results_files_are_read_from_their_paths(tmp_path, run_files):
    # As the command line reads them (load_runs), so that gallery= can name the file.
    runs = load_runs(run_files[:1])
    page = build_report([str(run_files[0])], tmp_path, gallery=run_files[0].name, n_gallery=1, n_resamples=50,
                        n_permutations=50)
    html = page.read_text()
    assert all(run.label in html for run in runs)
    assert f"What {runs[0].label} retrieves" in html


def test_anything_else_among_the_results_is_refused_naming_it_before_any_work(tmp_path, run_files):
    from kcca_desc._core.errors import ParameterError
    runs = load_runs(run_files[:1])
    out = tmp_path / "report"
    with pytest.raises(ParameterError, match=r"^build_report: results\[1\] must be a Result, a Run or the path of "
                                             r"a results file, got dict; read a results file with "
                                             r"kcca_desc\.evaluate\.load_results, or pass its path$"):
        build_report([runs[0], runs[0].result.to_dict()], out)
    assert not out.exists()


@pytest.mark.parametrize("given, kind", [(None, "NoneType"), ({"system": "A"}, "dict")])
def test_results_that_are_no_list_are_refused_naming_them_before_any_work(tmp_path, given, kind):
    # A dict was read key by key as paths of results files; None was a TypeError.
    from kcca_desc._core.errors import ParameterError
    out = tmp_path / "report"
    with pytest.raises(ParameterError, match=rf"^build_report: results must be a list of Results, Runs or results "
                                             rf"files, got {kind}; read a results file with "
                                             r"kcca_desc\.evaluate\.load_results, or pass its path$"):
        build_report(given, out)
    assert not out.exists()


@pytest.fixture
def no_figures(monkeypatch):
    """Reports without figures, for the tests of where a report goes: its figures take most of its time
    (matplotlib, PNG and PDF), and where they go is tested with the rest of the page (report_page, and
    test_fit_writes_the_report_directly)."""
    import kcca_desc.report.build

    monkeypatch.setattr(kcca_desc.report.build, "_figures", lambda runs, comparison, directory: [])


def test_a_report_onto_one_of_other_runs_keeps_it_as_a_numbered_folder(run_files, tmp_path, capsys, no_figures):
    # report --out (and fit --report) wrote into the folder of an earlier report of other runs.
    from kcca_desc.cli.report import main as report_main

    out = tmp_path / "report"
    options = ["--out", str(out), "--n-gallery", "0", "--n-worst", "0", "--n-resamples", "20", "-q"]
    assert report_main([*map(str, run_files), *options]) == 0
    assert capsys.readouterr().out == f"report: {out / 'report.html'}\n"
    page = (out / "report.html").read_text()
    assert report_main([*map(str, run_files), *options]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"replaced {out}: the earlier report there had the same runs and statistics")
    assert report_main([str(run_files[0]), *options]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"kept the earlier report of {out}, of other runs or statistics, as {tmp_path / 'report.1'}")
    assert (tmp_path / "report.1" / "report.html").read_text().count("<tr") == page.count("<tr")
    # A folder that holds no report is written into, as before: nothing of the user's is moved.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("notes\n")
    assert report_main([str(run_files[0]), *options[2:], "--out", str(mine)]) == 0
    assert (mine / "notes.txt").is_file() and (mine / "report.html").is_file()
    assert capsys.readouterr().out == f"report: {mine / 'report.html'}\n"


def test_fit_report_onto_the_report_of_another_run_keeps_it(tmp_path, capsys, no_figures):
    out = tmp_path / "report"
    nn = ["--method", "nn", "--n-images", "60", "--report", str(out), "--quiet"]
    assert fit_main(nn) == 0
    capsys.readouterr()
    assert fit_main(nn) == 0
    assert capsys.readouterr().out.splitlines()[-2] == f"replaced {out}: the earlier report there had the same settings and data"
    assert fit_main([*nn, "--nn-text", "f1"]) == 0
    assert capsys.readouterr().out.splitlines()[-2] == (
        f"kept the earlier report of {out}, of other settings or data, as {tmp_path / 'report.1'}")
    assert "NN5 idf F1" in (tmp_path / "report.1" / "report.html").read_text()
