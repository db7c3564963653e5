"""The package layout and its layering contracts.

* ``lint-imports`` keeps the contracts of ``pyproject.toml`` (and breaks on an injected
  violation, so the check itself is live);
* ``kernels/`` (installed as ``kcca_desc.kernels``) imports nothing else of the toolkit and
  reads none of its settings;
* ``setup.cfg`` lists every package folder, and nothing named ``kernels`` is importable
  outside the repository.
"""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"

pytest.importorskip("importlinter", reason="import-linter is in the dev extra")


def _lint_imports(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


@pytest.mark.parametrize("module, line", [
    ("evaluate/ranks.py", "from ..methods import base as _violation"),
    ("tasks/offtopic.py", "from ..methods.ranker import ImageSentenceRanker as _violation"),
    ("data/dataset.py", "from ..kcca import KCCA as _violation"),
    ("evaluate/scores.py", "from .._core.cache import cache_dir as _violation"),
    ("_core/errors.py", "from .cache import cache_dir as _violation"),
    ("neural/joint.py", "from ..methods import base as _violation"),
])
def test_import_contracts_catch_a_violation(tmp_path, module, line):
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "kcca_desc", copy / "kcca_desc", ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "kcca_desc" / module, "a", encoding="utf-8") as f:
        f.write(f"\n{line}\n")
    run = _lint_imports(tmp_path, pythonpath=copy)
    assert run.returncode != 0, run.stdout
    assert "BROKEN" in run.stdout


def toolkit_imports(source: str, module_path: Path, package_root: Path) -> list[str]:
    """Imports in ``source`` that leave ``package_root`` (the kernels folder) or name the toolkit.

    ``module_path`` locates the module inside ``package_root`` so relative imports can be
    resolved: one that climbs above the folder reaches the rest of the toolkit.
    """
    # Packages below the root that contain the module (an __init__.py counts as inside its own
    # package, like a module beside it): level 1 is the innermost, level depth + 1 the root.
    depth = len(module_path.relative_to(package_root).parts) - 1
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in ("kcca_desc", "kernels")]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.split(".")[0] in ("kcca_desc", "kernels"):
                found.append(node.module)
            elif node.level > depth + 1:
                found.append("." * node.level + (node.module or ""))
    return found


def test_kernel_import_check_detects_escapes(tmp_path):
    nested = tmp_path / "text" / "similarity" / "mod.py"
    assert toolkit_imports("from ...kernels import x", nested, tmp_path) == []
    assert toolkit_imports("from ....cache import cache_dir", nested, tmp_path) == ["....cache"]
    assert toolkit_imports("import kcca_desc._core.cache", nested, tmp_path) == ["kcca_desc._core.cache"]
    assert toolkit_imports("from kcca_desc.data import Dataset", tmp_path / "mod.py", tmp_path) == ["kcca_desc.data"]
    assert toolkit_imports("from ..data import Dataset", tmp_path / "mod.py", tmp_path) == ["..data"]
    assert toolkit_imports("from . import mod", tmp_path / "mod.py", tmp_path) == []


def test_kernels_import_nothing_else_of_the_toolkit():
    offenders = {}
    for path in sorted(KERNELS.rglob("*.py")):
        found = toolkit_imports(path.read_text(encoding="utf-8"), path, KERNELS)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_kernels_read_no_toolkit_setting():
    readers = [str(p.relative_to(ROOT)) for p in KERNELS.rglob("*.py") if "KCCA_DESC" in p.read_text(encoding="utf-8")]
    assert readers == []


def test_setup_cfg_lists_every_package():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    mapping = dict(line.split("=") for line in config["options"]["package_dir"].strip().splitlines())
    assert {k.strip(): v.strip() for k, v in mapping.items()} == {"kcca_desc.kernels": "kernels"}
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "kcca_desc").rglob("__init__.py")}
    on_disk |= {".".join(("kcca_desc",) + p.parent.relative_to(ROOT).parts) for p in KERNELS.rglob("__init__.py")}
    on_disk = {p for p in on_disk if "__pycache__" not in p}
    assert listed == on_disk


def test_kernels_import_as_part_of_the_toolkit_only(tmp_path):
    code = ("import importlib.util, kcca_desc.kernels, kcca_desc.kernels.text.similarity; "
            "print(importlib.util.find_spec('kernels'))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "None"
