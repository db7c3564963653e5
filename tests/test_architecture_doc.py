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


def _layer_diagram():
    """docs/_ext/layer_diagram.py, the site's drawing of the page's flowchart (needs the docs extra)."""
    for name in ("sphinx", "matplotlib"):
        pytest.importorskip(name, reason="the site's layer diagram needs the docs extra")
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import layer_diagram

    return layer_diagram


def _flowchart() -> list[str]:
    """The page's flowchart, without its fences."""
    return architecture._mermaid(architecture._layers(), architecture.package_graph()[1])[1:-1]


def test_the_sites_diagram_reads_the_flowchart_the_page_writes():
    layer_diagram = _layer_diagram()
    chart = layer_diagram.parse_flowchart("\n".join(_flowchart()))
    packages, edges = architecture.package_graph()
    assert chart.rows == tuple(map(tuple, architecture._layers() + [["kernels"]]))
    assert set(chart.edges) == {(source, target) for source in edges for target in edges[source]}
    # Every import is drawn: as an arrow from the row above or on the lane of the package imported,
    # and each lane runs clear of the boxes of every row it passes.
    row_of = {name: r for r, row in enumerate(chart.rows) for name in row}
    centres = layer_diagram._centres(chart)
    lanes = layer_diagram._lanes(chart, centres, row_of)
    drawn = {(source, lane.target) for lane in lanes for source in lane.sources}
    drawn |= {(source, target) for source, target in chart.edges if row_of[target] - row_of[source] == 1}
    assert drawn == set(chart.edges)
    for lane in lanes:
        top = min(row_of[source] for source in lane.sources)
        passed = [name for name in centres if top <= row_of[name] <= row_of[lane.target]]
        assert all(abs(lane.x - centres[name][0]) > layer_diagram.BOX_WIDTH / 2 for name in passed), lane
    assert layer_diagram.draw(chart).lstrip().startswith(b"<?xml")


@pytest.mark.parametrize("change, message", [
    (lambda lines: ["flowchart LR", *lines[1:]], "starts with 'flowchart TB'"),
    (lambda lines: [*lines, "    pcli -.-> pdata"], "not of the layer diagram's grammar"),
    (lambda lines: [*lines, "    pcli --> pnowhere"], "undeclared node 'pnowhere'"),
    (lambda lines: lines[:-1] + ['    subgraph L99[" "]', '        pextra["extra"]'], "closed by 'end'"),
])
def test_the_sites_diagram_refuses_a_flowchart_it_cannot_read(change, message):
    # A block outside the grammar fails the build instead of showing a wrong or partial figure.
    with pytest.raises(ValueError, match=message):
        _layer_diagram().parse_flowchart("\n".join(change(_flowchart())))
