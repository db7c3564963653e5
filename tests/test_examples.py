"""The examples gallery, ``examples/plot_*.py``: sphinx-gallery pages that run on the synthetic data.

The page checks (a title, text cells, a figure, only public names of the toolkit) are quick and
run by default.  Running the scripts takes tens of seconds each on two cores, so those tests are
heavy (the documentation build executes the same scripts): each runs in a fresh interpreter
from an empty working directory, as sphinx-gallery and a reader would, and must exit cleanly,
print no warning, leave no file behind and use under a minute of CPU.
"""

import ast
import importlib
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("plot_*.py"))
#: CPU seconds an example may take: the issue's "under a minute each".
CPU_BUDGET_S = 60.0
#: Lines of standard error that mean something went wrong although the script exited 0.
PROBLEM = re.compile(r"warning|\bnan\b|traceback", re.IGNORECASE)

examples = pytest.mark.parametrize("script", EXAMPLES, ids=lambda path: path.name)


def test_the_gallery_has_at_least_six_examples():
    assert len(EXAMPLES) >= 6, [path.name for path in EXAMPLES]


@examples
def test_an_example_is_a_gallery_page(script):
    """A docstring with an RST title and text, then code in ``# %%`` cells, drawing figures."""
    source = script.read_text(encoding="utf-8")
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring, f"{script.name}: no module docstring"
    title, underline, *text = docstring.splitlines()
    assert underline == "=" * len(title), f"{script.name}: the title must be underlined by '=' of its length"
    assert "".join(text).strip(), f"{script.name}: the docstring has a title and no text"
    cells = source.count("\n# %%\n")
    assert cells >= 2, f"{script.name}: {cells} '# %%' cells"
    assert "plt.show()" in source, f"{script.name}: draws no figure"


def _toolkit_imports(tree: ast.Module):
    """(module, name) of every ``from kcca_desc... import name``; (module, None) of ``import kcca_desc...``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kcca_desc":
            yield from ((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names if alias.name.split(".")[0] == "kcca_desc")


@examples
def test_an_example_uses_only_public_names(script):
    """What a reader copies must be the public API: a name in the ``__all__`` of a public package."""
    imports = list(_toolkit_imports(ast.parse(script.read_text(encoding="utf-8"))))
    assert imports, f"{script.name} imports nothing of the toolkit"
    for module, name in imports:
        assert not any(part.startswith("_") for part in module.split(".")), f"{script.name}: private {module}"
        if name is not None:
            assert name in importlib.import_module(module).__all__, f"{script.name}: {module}.{name} is not public"


@pytest.mark.heavy
@examples
def test_an_example_runs_cleanly(script, tmp_path):
    workdir, cache = tmp_path / "work", tmp_path / "cache"
    workdir.mkdir()
    env = {**os.environ, "MPLBACKEND": "Agg", "KCCA_DESC_CACHE": str(cache),
           "MPLCONFIGDIR": str(tmp_path / "matplotlib")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run([sys.executable, str(script)], cwd=workdir, env=env, capture_output=True, text=True,
                         timeout=600)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{script.name}: {wall_s:.1f} s wall, {cpu_s:.1f} s CPU")
    assert run.returncode == 0, run.stderr[-3000:]
    problems = [line for line in run.stderr.splitlines() if PROBLEM.search(line)]
    assert not problems, "\n".join(problems)
    assert not list(workdir.iterdir()), f"{script.name} wrote into its working directory"
    written = [path for path in cache.rglob("*") if path.is_file()] if cache.exists() else []
    assert not written, f"{script.name} wrote to the toolkit's cache: {written[:5]}"
    assert cpu_s < CPU_BUDGET_S, f"{script.name} took {cpu_s:.0f} s of CPU"
