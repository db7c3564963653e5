"""No module of the toolkit takes part in an import cycle.

The import graph comes from grimp (installed with import-linter), which records every import
statement of a module: those inside functions and under ``if TYPE_CHECKING:`` too, since either
one hides a cycle that the layers contract of ``pyproject.toml`` cannot see inside one layer.
``kernels/`` installs as ``kcca_desc.kernels`` from a folder outside the package, so grimp, which
walks one folder a package, reads it as the top-level package it is on disk.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Mapping, Set
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter, in the dev extra")

ROOT = Path(__file__).resolve().parents[1]


def import_cycles(imports: Mapping[str, Set[str]]) -> list[list[str]]:
    """The import cycles of a graph: its strongly connected components of two or more modules.

    Tarjan's algorithm (Tarjan 1972, "Depth-first search and linear graph algorithms"), written
    without recursion so that a long chain of imports cannot overflow the stack.

    Parameters
    ----------
    imports : mapping of str to set of str
        Each module to the modules it imports directly.

    Returns
    -------
    list of list of str
        Each cycle's modules, sorted; a module importing itself counts too.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(imports):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(imports[root])))]
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports.get(target, ())))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or module in imports.get(module, ()):
                    cycles.append(sorted(component))
    return cycles


def package_cycles(package: str) -> list[list[str]]:
    """The import cycles among the modules of ``package`` (importable from ``sys.path``)."""
    graph = grimp.build_graph(package, cache_dir=None)
    return import_cycles({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})


def test_cycles_are_found():
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert sorted(import_cycles(imports)) == [["a", "b", "c"], ["e"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_package_has_no_import_cycle():
    assert package_cycles("kcca_desc") == []


def test_kernels_have_no_import_cycle(monkeypatch):
    # Only located, not imported, under this name: nothing named "kernels" is left in sys.modules.
    monkeypatch.syspath_prepend(str(ROOT))
    assert package_cycles("kernels") == []


def test_a_cycle_made_by_an_import_inside_a_function_is_found(tmp_path):
    copy = tmp_path / "kcca_desc"
    shutil.copytree(ROOT / "kcca_desc", copy, ignore=shutil.ignore_patterns("__pycache__"))
    # The shared plumbing is below the data sets: this import, run only when called, closes a
    # cycle kcca_desc.data.problems -> kcca_desc._core.errors -> kcca_desc.data.problems.
    with open(copy / "_core" / "errors.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _violation():\n    from ..data import problems\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from test_import_cycles import package_cycles; "
            "print(package_cycles('kcca_desc'))")
    run = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "'kcca_desc._core.errors'" in run.stdout and "'kcca_desc.data.problems'" in run.stdout, run.stdout
