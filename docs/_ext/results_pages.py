"""Sphinx extension: the tables of the results and benchmarks pages, from ``benchmarks/results/*.json``.

When the build starts (``builder-inited``) it writes ``docs/_generated/results.md``,
``docs/_generated/benchmarks.md`` and ``docs/_generated/kcca_desc.bib``, which ``docs/results.md``,
``docs/benchmarks.md`` and ``docs/citing.md`` include. Every figure comes from a results file, read
and formatted by the same code that writes the README's figures (``benchmarks/readme_figures.py``),
so a figure reads the same wherever it appears, and no page can show a figure that no results file
stores. ``python docs/_ext/results_pages.py`` writes the three files without Sphinx.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Mapping, Sequence

REPOSITORY = Path(__file__).resolve().parents[2]
GENERATED = REPOSITORY / "docs" / "_generated"
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

import readme_figures as rf  # noqa: E402  (found beside the benchmarks, which are not installed)

from kcca_desc import __version__  # noqa: E402
from kcca_desc.data.dataset import PROTOCOLS  # noqa: E402
from kcca_desc.evaluate.ranks import TASKS  # noqa: E402


# ----------------------------------------------------------------- the headline results
def _confidence(results: Sequence[Mapping]) -> float:
    """The one confidence level of ``results``' intervals."""
    levels = {r["ci_settings"]["confidence"] for r in results if "ci" in r}
    if len(levels) != 1:
        raise ValueError(f"the headline results' intervals differ in confidence level ({sorted(levels)})")
    return levels.pop()


def _interval(result: Mapping, task: str, metric: str = "R@10") -> str:
    if "ci" not in result:
        return "—"
    low, high = result["ci"][task][metric]
    return f"{rf.recall(low)}–{rf.recall(high)}"


def interval_table(rows: Sequence[tuple[str, Mapping]], published: Sequence[tuple[str, str]] = ()) -> str:
    """R@1 / R@5 / R@10 (median rank) and the R@10 interval of each task, one row per result.

    ``published`` rows (label, :data:`readme_figures.PUBLISHED` name) have no interval.
    """
    level = _confidence([result for _, result in rows])
    header = ["system"]
    for task in TASKS:
        header += [f"{task} R@1 / R@5 / R@10 (median rank)", f"{task} R@10, {level:.0%} interval"]
    lines = [(label, *(cell for task in TASKS for cell in (rf.figures(result[task]), _interval(result, task))))
             for label, result in rows]
    lines += [(label, *(cell for task in TASKS for cell in (rf.published(name, task), "—")))
              for label, name in published]
    return rf.table(header, lines)


#: Rows of the karpathy table from ``neural.json``: the encoder bridges, by system.
KARPATHY_BRIDGES = (
    ("nearest neighbour, MiniLM captions × EfficientNet-Lite0 images", "nn_minilm_efficientnet"),
    ("linear CCA, same features", "cca_minilm_efficientnet"),
    ("RBF KCCA, same features", "kcca_minilm_efficientnet"),
)


def headline_results(results: rf.ResultsFiles) -> str:
    """The results page: Flickr8K test under both protocols, with intervals, then the full tables."""
    hodosh = [(label, rf._hodosh_result(results, system)) for label, system in rf.HODOSH_ROWS]
    random = rf._random_scores(results, "hodosh")
    neural = rf._neural(results)
    tri_sem = results["hodosh_table"]["karpathy"]["tri_sem"]["result"]
    karpathy = [("KCCA Tri5Sem (`tri_sem`)", tri_sem)]
    karpathy += [(f"{label} (`{system}`)", neural[system, "karpathy"]) for label, system in KARPATHY_BRIDGES]
    karpathy += [(f"{label}, {rf.combination(mkl)} (`benchmarks/strongest.py`)", mkl["results"]["karpathy"])
                 for label, mkl in rf.multiple_kernel_rows(results)]
    random_karpathy = rf._random_scores(results, "karpathy")
    return "\n\n".join([
        "## Flickr8K, hodosh protocol",
        rf.hodosh_setup(results),
        interval_table(hodosh + [(f"random scores (seed {random['params']['seed']})", random)],
                       published=[("Hodosh et al. 2013, Tri5Sem (original images)", "hodosh2013_tri5sem")]),
        rf.hodosh_notes(results),
        "## Flickr8K, karpathy protocol",
        rf.paragraph(
            f"The same Tri5Sem system ({PROTOCOLS[1]} protocol: the {tri_sem['annotation']['n_queries']:,} test "
            f"images of Karpathy's split and their {tri_sem['search']['n_queries']:,} captions, each a query) "
            "beside the encoder bridges of `benchmarks/results/neural.json` "
            "(`benchmarks/results/hodosh_table.json`, `nn_baseline.json`):"),
        interval_table(karpathy + [(f"random scores (seed {random_karpathy['params']['seed']})",
                                    random_karpathy)],
                       published=[("Kiros et al. 2014, 19-layer OxfordNet features", "kiros2014_oxfordnet")]),
        "## The strongest classical baseline, both protocols",
        rf.paragraph(
            "Multiple-kernel KCCA (`benchmarks/strongest.py`): each view's kernel a weighted sum of base kernels, "
            "each centred and scaled to trace n, the combination chosen on dev by greedy forward selection, beside "
            "its best single kernels, the bridges and trained models of `neural.json` and the published figures "
            "of Klein et al. 2015 (`benchmarks/results/strongest.json`). The base kernels include the text and "
            "image towers of the trained VSE and VSE++ models whose checkpoints are at hand (the notes say "
            "which); a system summing one is a hybrid of that model and KCCA, so the best system without them "
            "is shown too. Karpathy protocol:"),
        rf.strongest_table(results, "karpathy"),
        "Hodosh protocol:",
        rf.strongest_table(results, "hodosh"),
        rf.strongest_notes(results),
        "## Neural systems, both protocols",
        rf.neural_table(results),
        rf.neural_notes(results),
        "## The Rei ablation",
        rf.rei_ablation(results),
    ]) + "\n"


# ----------------------------------------------------------------- the benchmarks page
def _source(name: str) -> str:
    return f"(`benchmarks/results/{name}.json`)"


def kcca_solvers(results: rf.ResultsFiles) -> str:
    """Exact and low-rank KCCA beside cca-zoo's, by training size."""
    record = results["kcca"]
    rows = [(f"{row['n']:,}", f"{row['rank']:,}", f"{row['exact_s']:.2f} s", f"{row['exact_peak_gib']:.2f} GiB",
             f"{row['lowrank_s']:.2f} s", f"{row['lowrank_peak_gib']:.2f} GiB", f"{row['cca_zoo_s']:.2f} s")
            for row in record["comparison"]]
    # The record's notes end without a full stop; the paragraph ends with them.
    return rf.paragraph(
        f"Fitting `KCCA` ({record['n_components']} components) on precomputed kernels, exact and low-rank "
        f"(`method=\"lowrank\"`), beside cca-zoo's kernel CCA on the same kernels {_source('kcca')}; "
        f"{record['notes'].rstrip('.')}.") + "\n\n" + rf.table(
        ["n", "rank", "exact", "exact peak", "low-rank", "low-rank peak", "cca-zoo"], rows)


def text_kernels(results: rf.ResultsFiles) -> str:
    """Gram matrix times and memory of each named text kernel on Flickr8K."""
    record = results["text_kernels"]
    rows = [(f"`{name}`", f"{entry['fit_seconds']:.2f} s", f"{entry['train_gram_seconds']:.1f} s",
             f"{entry['test_gram_seconds']:.2f} s", f"{entry['train_caption_pairs_per_s'] / 1e6:.1f} M",
             f"{entry['peak_rss_mib_so_far']:,.0f} MiB")
            for name, entry in record["kernels"].items()]
    return rf.paragraph(
        f"Each named text kernel on Flickr8K: fitting it on the {record['train_items']:,} training items "
        f"({record['train_captions']:,} captions), their Gram matrix, the test kernel against "
        f"{record['test_queries']:,} queries, caption pairs per second of the training Gram matrix, and the "
        f"process's peak resident memory so far, on {record['machine']['cpu_count']} cores "
        f"{_source('text_kernels')}:") + "\n\n" + rf.table(
        ["kernel", "fit", "training Gram", "test kernel", "caption pairs/s", "peak memory"], rows)


def image_features(results: rf.ResultsFiles) -> str:
    """What the classical image features cost per image, by stage."""
    record = results["image_features"]
    stages = record["per_image_ms_single_thread"]
    return rf.paragraph(
        f"The classical image features of all {record['n_images']:,} Flickr8K images: the codebooks in "
        f"{rf.duration(record['codebook_fit_s'])}, every image's pyramid histograms in "
        f"{rf.duration(record['transform_all_cold_s'])} from a cold cache and {record['rerun_cached_s']:.1f} s "
        f"from a warm one, on {record['machine']['cpus']} cores; milliseconds per image on one core, by stage "
        f"{_source('image_features')}:") + "\n\n" + rf.table(
        ["stage", "ms per image"], [(name.replace("_", " "), f"{ms:.2f}") for name, ms in stages.items()])


#: The benchmarks page: a heading and the function that writes its section, in page order.
BENCHMARK_SECTIONS: tuple[tuple[str, Callable[[rf.ResultsFiles], str]], ...] = (
    ("Text kernels", text_kernels),
    ("Image features", image_features),
    ("Image kernels on a GPU", rf.cupy),
    ("Kernel CCA solvers", kcca_solvers),
    ("Solver precision", rf.solve_dtype),
    ("BLAS kernels", rf.blas),
    ("Beyond one machine's memory", rf.scale),
    ("Offline image encoders", rf.image_encoders),
    ("Every offline encoder through the command line", rf.offline_encoders),
    ("Training the neural models", rf.trainable_models),
    ("The HTML report", rf.report),
    ("Reliability", rf.reliability),
)


def benchmarks_page(results: rf.ResultsFiles) -> str:
    return "\n\n".join(f"## {title}\n\n{write(results)}" for title, write in BENCHMARK_SECTIONS) + "\n"


# ----------------------------------------------------------------- citing
def bibtex() -> str:
    """The toolkit's BibTeX entry, at the version being documented."""
    return (f"@software{{kcca_desc,\n  title = {{kcca\\_desc: classical kernel-CCA image--sentence ranking}},\n"
            f"  author = {{{{The kcca\\_desc developers}}}},\n  version = {{{__version__}}},\n  year = {{2026}},\n"
            "  url = {https://github.com/kcca-desc/kcca_desc},\n}\n")


# ----------------------------------------------------------------- Sphinx
def _write(path: Path, text: str) -> None:
    """Write ``text`` unless ``path`` holds it already, so an unchanged page is not rebuilt."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def write_generated(directory: Path = GENERATED, results_dir: Path = rf.RESULTS_DIR) -> None:
    """Write the generated fragments of the results, benchmarks and citing pages into ``directory``."""
    results = rf.ResultsFiles(results_dir)
    directory.mkdir(parents=True, exist_ok=True)
    _write(directory / "results.md", headline_results(results))
    _write(directory / "benchmarks.md", benchmarks_page(results))
    _write(directory / "kcca_desc.bib", bibtex())


def _builder_inited(app) -> None:
    write_generated(Path(app.srcdir) / "_generated")


def setup(app) -> dict:
    app.connect("builder-inited", _builder_inited)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    write_generated()
