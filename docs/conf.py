"""Sphinx configuration of the kcca_desc documentation.

Build with ``sphinx-build -j auto -W --keep-going -b html docs docs/_build/html`` (the ``docs`` extra
installs what it needs; ``tests/test_docs.py`` runs the same build). Everything the build makes
(``_build/``, the gallery's ``auto_examples/``, autosummary's ``api/generated/`` and the generated
results tables and architecture diagram ``_generated/``) is git-ignored.
"""

import os
import re
import sys
from pathlib import Path

import matplotlib
from docutils import nodes
from sphinx.transforms import SphinxTransform

# The gallery's "Out" blocks show what each example prints, not the toolkit's timestamped progress
# lines. The setting is read when kcca_desc is imported, so it is made first; the processes that
# run the examples inherit it.
os.environ.setdefault("KCCA_DESC_QUIET", "1")

import kcca_desc  # noqa: E402

# The gallery's examples draw their figures off screen, on any machine.
matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

# -- Project -----------------------------------------------------------------------------------
project = "kcca_desc"
author = "the kcca_desc developers"
copyright = f"2026, {author}"
release = kcca_desc.__version__
version = ".".join(release.split(".")[:2])

# -- General -----------------------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "results_pages",
    "public_names",
    "layer_diagram",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.codeobj.json"]
default_role = "py:obj"
# A reference that does not resolve is a warning, so an error with -W: a name left behind by a
# rename fails the build. docs/_ext/public_names.py first resolves names by the module that defines
# them to the page of the package that exports them (and lets a private helper that exists, or
# another project's name, which intersphinx would need the network to link, show unlinked).
nitpicky = True

# -- autodoc / autosummary / numpydoc ----------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- MyST --------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

# -- sphinx-gallery ----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Every plot_*.py is executed on each build, so an example that stops working fails the docs.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
    # The examples run in as many processes as sphinx-build's -j gives (serially without it).
    "parallel": True,
}

# -- intersphinx -------------------------------------------------------------------------------
# Not enabled: it downloads the other projects' inventories, and the build must run offline.

# -- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"kcca_desc {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    # The theme's version switcher and external icon links need a network; none are configured.
    "icon_links": [],
}
# The theme's script expects a colour mode; without one it logs a console error on the first page.
html_context = {"default_mode": "light"}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# The top-level pages (install, results, benchmarks, ...) have no section of their own: without
# this the theme shows an empty "Section Navigation" column beside them, a quarter of the width
# taken from their wide tables.
html_sidebars = {page.stem: [] for page in DOCS.glob("*.md")}
html_show_sourcelink = False


_SKLEARN_REQUEST_METHOD = re.compile(r"set_\w+_request")


def _skip_sklearn_request_methods(app, what, name, obj, skip, options):
    """Leave out the ``set_*_request`` methods scikit-learn adds to every estimator.

    They are scikit-learn's metadata routing, not the toolkit's API, and their docstrings link
    into scikit-learn's own glossary, which does not resolve here.
    """
    return True if what == "class" and _SKLEARN_REQUEST_METHOD.fullmatch(name) else None


class _MetricsAreNotEmailAddresses(SphinxTransform):
    """Show ``R@10`` and ``R@1/5/10`` as text, not as the ``mailto:`` links docutils makes of them.

    reST links any ``name@host`` it finds in running text, so every metric name of a docstring or
    a gallery example became an e-mail link; escaping each one would show in ``help()``. A real
    address has a dotted host, which no metric name has.
    """

    default_priority = 500

    def apply(self, **kwargs) -> None:
        for reference in list(self.document.findall(nodes.reference)):
            uri = reference.get("refuri", "")
            if uri.startswith("mailto:") and "." not in uri.partition("@")[2]:
                reference.replace_self(nodes.Text(reference.astext()))


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_request_methods)
    app.add_transform(_MetricsAreNotEmailAddresses)
