"""The documentation site: ``sphinx-build -W`` (a warning, such as a docstring numpydoc cannot parse
or a reference that does not resolve, fails the build), the gallery's examples executed, an API page
for every public name, the results pages' figures from the results files, and the built pages in
headless Chromium.

Needs the ``docs`` extra (in ``dev``); skipped, with the reason, where it is not installed. The build
writes its HTML under a temporary folder; the gallery's output (``docs/auto_examples``) and the
generated tables (``docs/_generated``) go into the source tree, git-ignored, as in any Sphinx build.
"""

import html
import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kcca_desc

REPOSITORY = Path(__file__).resolve().parents[1]
DOCS = REPOSITORY / "docs"
EXAMPLES = REPOSITORY / "examples"
# The build's own extensions: the packages the API reference documents, the results pages' sections.
sys.path.insert(0, str(DOCS / "_ext"))

_MISSING = [name for name in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "pydata_sphinx_theme",
                              "sphinx_copybutton", "matplotlib") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"the documentation build needs {', '.join(_MISSING)} "
                                                       "(pip install -e '.[docs]')")

#: Generous: the build takes about 1.5 min of CPU with the gallery's examples; a crowded machine
#: stretches the wall time several-fold.
BUILD_TIMEOUT_S = 1200


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The HTML site built from ``docs/`` with warnings as errors; the build's output on failure."""
    out = tmp_path_factory.mktemp("docs")
    # sphinx-gallery skips an example whose output it kept from an earlier build: remove that output
    # (git-ignored), so that every example runs here.
    shutil.rmtree(DOCS / "auto_examples", ignore_errors=True)
    command = [sys.executable, "-m", "sphinx", "-j", "auto", "-W", "--keep-going", "-b", "html",
               "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"sphinx-build failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return out / "html"


def _page(site: Path, relative: str) -> str:
    path = site / relative
    assert path.is_file(), f"the site has no {relative}"
    return path.read_text()


def test_every_public_name_has_an_api_page(site):
    from public_names import PACKAGES

    missing = [f"kcca_desc.{package}.{name}" for package in PACKAGES
               for name in importlib.import_module(f"kcca_desc.{package}").__all__
               if not (site / "api" / "generated" / f"kcca_desc.{package}.{name}.html").is_file()]
    errors = [name for name in kcca_desc.__all__ if name.endswith("Error")]
    missing += [f"kcca_desc.{name}" for name in errors
                if not (site / "api" / "generated" / f"kcca_desc.{name}.html").is_file()]
    assert errors and missing == []


@pytest.mark.parametrize("page, words", [
    ("kcca_desc.kcca.KCCA", ("Parameters", "fit", "Hodosh")),
    ("kcca_desc.methods.ImageSentenceRanker", ("Parameters", "score")),
    ("kcca_desc.kernels.pyramid_kernel", ("Parameters", "Returns")),
])
def test_key_api_pages_render_their_docstrings(site, page, words):
    text = _page(site, f"api/generated/{page}.html")
    assert all(word in text for word in words), [word for word in words if word not in text]


def test_constants_show_the_comment_where_they_are_defined(site):
    # Not their type's docstring ("Built-in immutable sequence."): the #: comment of their module.
    for page, words in (("kcca_desc.data.PROTOCOLS", "evaluation protocols"),
                        ("kcca_desc.evaluate.METRIC_KEYS", "per-query gold ranks")):
        text = _page(site, f"api/generated/{page}.html")
        assert words in text and "Built-in" not in text, page


def test_the_top_level_exports_link_to_their_pages(site):
    text = _page(site, "api/index.html")
    for name in kcca_desc.__all__:
        obj = getattr(kcca_desc, name)
        if not name.endswith("Error"):
            package = obj.__module__.split(".")[1]
            assert f'href="generated/kcca_desc.{package}.{name}.html' in text, name


def test_results_page_reads_its_figures_from_the_results_files(site):
    import readme_figures as rf  # benchmarks/ is on sys.path (tests/conftest.py)

    text = _page(site, "results.html")
    results = rf.ResultsFiles()
    tri_sem = results["hodosh_table"]["systems"]["tri_sem"]["result"]
    for task in ("annotation", "search"):
        low, high = tri_sem["ci"][task]["R@10"]
        assert rf.figures(tri_sem[task]) in text
        assert f"{rf.recall(low)}–{rf.recall(high)}" in text
    karpathy = results["hodosh_table"]["karpathy"]["tri_sem"]["result"]
    assert rf.figures(karpathy["search"]) in text


def test_benchmarks_page_names_the_source_of_each_table(site):
    from results_pages import BENCHMARK_SECTIONS

    # The headings as written (Sphinx's smart quotes turn ' into ’).
    text = html.unescape(_page(site, "benchmarks.html")).replace("\u2019", "'")
    assert text.count("<table") >= 5
    for title, _ in BENCHMARK_SECTIONS:
        assert title in text, title
    assert "benchmarks/results/text_kernels.json" in text and "benchmarks/results/kcca.json" in text


def test_architecture_page_shows_its_layer_diagram_as_a_figure(site):
    from layer_diagram import alt_text, mermaid_source, parse_flowchart

    text = _page(site, "architecture.html")
    # Not the Mermaid source, which no renderer of this offline build would draw.
    assert "flowchart TB" not in text and "subgraph" not in text
    source = mermaid_source((DOCS / "architecture.md").read_text(encoding="utf-8"))
    figure = re.search(r'<figure class="layer-diagram[^>]*>\s*<img alt="([^"]*)" src="([^"]+\.svg)"', text)
    assert figure, "the architecture page shows no layer diagram"
    # Drawn from the page's own flowchart: its rows, top first, are those the figure describes.
    assert html.unescape(figure[1]) == alt_text(parse_flowchart(source))
    assert "<svg" in _page(site, figure[2])


def test_every_gallery_example_ran_and_drew_a_figure(site):
    examples = sorted(EXAMPLES.glob("plot_*.py"))
    if not examples:
        pytest.skip("no examples/plot_*.py yet")
    index = _page(site, "auto_examples/index.html")
    for example in examples:
        page = _page(site, f"auto_examples/{example.stem}.html")
        assert f"{example.stem}.html" in index
        assert "sphx-glr-single-img" in page or "sphx-glr-multi-img" in page, f"{example.name} drew no figure"


def test_citing_page_shows_the_cff_and_the_toolkit_version(site):
    text = _page(site, "citing.html")
    assert "cff-version" in text and f"{kcca_desc.__version__}" in text and "jair.3994" in text


def _reference(target, role="func", docstring_of=None):
    from sphinx import addnodes

    node = addnodes.pending_xref("", refdomain="py", reftype=role, reftarget=target)
    node.source = f"file.py:docstring of {docstring_of}" if docstring_of else "docs/page.rst"
    return node


@pytest.mark.parametrize("reference, expected", [
    # By where it is defined: linked to its public page.
    (("kcca_desc.kernels.image.pyramid.pyramid_kernel",), (True, "kcca_desc.kernels.pyramid_kernel")),
    (("kcca_desc.methods.fusion.borda_fuse",), (True, "kcca_desc.methods.borda_fuse")),
    # Relative to the docstring it is in: a method of the class, a module of the package.
    (("fit", "meth", "kcca_desc.kcca.estimator.KCCA.transform"), (True, "kcca_desc.kcca.KCCA.fit")),
    (("ranks", "mod", "kcca_desc.evaluate"), (True, "kcca_desc.evaluate")),
    # A private helper that exists: named without a link, not broken.
    (("kcca_desc.methods.base.cosine_scores",), (True, None)),
    # A name left behind by a rename: broken, so a warning (an error with -W).
    (("kcca_desc.kcca.estimator.NoSuchSolver", "class"), (False, None)),
    (("no_such_helper", "func", "kcca_desc.kcca.estimator.KCCA"), (False, None)),
])
def test_references_by_defining_module_resolve_to_public_pages(reference, expected):
    from public_names import _resolve, public_names

    assert _resolve(_reference(*reference), public_names()) == expected


@pytest.mark.browser
@pytest.mark.parametrize("page, title", [("index.html", "kcca_desc"),
                                         ("api/generated/kcca_desc.kcca.KCCA.html", "KCCA")])
def test_pages_render_in_chromium(browser, site, tmp_path, page, title):
    from matplotlib.image import imread

    from browser import console_errors, full_page_screenshot

    browser.get((site / page).as_uri())
    assert title in browser.title and "kcca_desc" in browser.title
    assert browser.find_element("tag name", "h1").is_displayed()
    errors = console_errors(browser)
    assert errors == [], f"console errors: {errors}"
    shot = tmp_path / "page.png"
    full_page_screenshot(browser, shot)
    rgb = np.rint(imread(shot)[..., :3] * 255).astype(np.int32)
    # Not blank: a good share of the page differs from its background colour (the most common one),
    # counted over one integer per colour: np.unique over the rows of a page-long screenshot takes
    # tens of seconds.
    codes = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    common = np.bincount(codes.ravel()).argmax()
    background = np.array([common >> 16, (common >> 8) & 255, common & 255])
    drawn = np.any(np.abs(rgb - background) > 0.1 * 255, axis=-1).mean()
    assert drawn > 0.02, f"{page}: only {drawn:.1%} of the screenshot differs from the background"


@pytest.mark.browser
def test_architecture_diagram_loads_at_its_own_size_in_chromium(browser, site):
    browser.get((site / "architecture.html").as_uri())
    image = browser.find_element("css selector", "figure.layer-diagram img")
    natural, shown, room = browser.execute_script(
        "const i = arguments[0]; return [i.naturalWidth, i.getBoundingClientRect().width, "
        "i.parentElement.getBoundingClientRect().width]", image)
    # An SVG the browser cannot read has no natural width; one shrunk below its own size is unreadable.
    assert natural > 0, "the browser could not load the layer diagram"
    assert min(natural, room) * 0.95 <= shown <= room, (natural, shown, room)
