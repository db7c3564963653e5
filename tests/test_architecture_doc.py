"""docs/architecture.md is generated from the code (docs/architecture.py) and kept up to date."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml with tomllib")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import architecture  # noqa: E402


def test_architecture_page_is_up_to_date():
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "architecture.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def test_package_graph_follows_the_layers():
    layers = architecture._layers()
    packages, edges = architecture.package_graph()
    allowed = architecture._allowed_below(layers)
    assert set(packages) == {p.parent.name for p in (ROOT / "kcca_desc").glob("*/__init__.py")} | {"kernels"}
    assert {(s, t) for s in edges for t in edges[s] if t not in allowed[s]} == set()
    assert "kernels" not in edges


def test_package_graph_sees_an_import(tmp_path, monkeypatch):
    copy = tmp_path / "kcca_desc"
    copy.mkdir()
    (copy / "data").mkdir()
    (copy / "data" / "__init__.py").write_text("from ..methods import base\nfrom .._core import cache\n")
    monkeypatch.setattr(architecture, "SOURCES", {copy: "kcca_desc"})
    assert architecture.package_graph()[1] == {"data": {"methods", "_core"}}
