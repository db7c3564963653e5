"""The docstring examples of every module of the package run as part of the suite.

Modules are imported by their installed names: ``kernels/`` is the package ``kcca_desc.kernels``,
which ``pytest --doctest-modules`` pointed at the folder would import under the wrong name. Each
example runs as plain ``python -m doctest`` would (no option flags beyond those in the docstrings),
in the session's isolated cache (conftest.py).
"""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import kcca_desc
import kcca_desc.kernels

PACKAGES = (kcca_desc, kcca_desc.kernels)


def _module_names() -> list[str]:
    names = set()
    for package in PACKAGES:
        names.add(package.__name__)
        names.update(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
    return sorted(names)


MODULES = _module_names()


def _examples() -> list:
    """One parameter per docstring with examples; a module needing a missing optional package is skipped."""
    finder = doctest.DocTestFinder()
    params = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is None or error.name.partition(".")[0] == "kcca_desc":
                raise
            params.append(pytest.param(None, id=name, marks=pytest.mark.skip(
                reason=f"{name} needs the optional package {error.name!r}")))
            continue
        params.extend(pytest.param(test, id=test.name) for test in finder.find(module, name) if test.examples)
    return params


EXAMPLES = _examples()


def test_every_source_file_is_a_walked_module():
    on_disk = set()
    for package in PACKAGES:
        root = Path(package.__file__).parent
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            on_disk.add(".".join((package.__name__, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    assert set(MODULES) == on_disk
    # Both packages have examples, so a walk that silently missed one would show here.
    assert {p.id.split(".")[1] for p in EXAMPLES} >= {"kernels", "kcca", "text"}


@pytest.mark.parametrize("example", EXAMPLES)
def test_docstring_examples(example):
    report = []
    result = doctest.DocTestRunner(verbose=False).run(example, out=report.append)
    assert result.failed == 0, "".join(report)
