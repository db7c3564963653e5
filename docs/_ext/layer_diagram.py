"""Sphinx extension: the architecture page's layer diagram drawn as a figure, offline.

``docs/architecture.py`` writes the layers and imports as a ```mermaid flowchart, which GitHub
draws; no Mermaid renderer installs without a network, so on this site the block would show as its
source. While a page is read, each ``mermaid`` block is parsed (the small, fixed grammar that
``architecture._mermaid`` writes: one ``subgraph`` per layer, a node per package, ``pX --> pY`` per
import) and replaced by an SVG that Matplotlib draws from the same rows and arrows, so the site
and GitHub show the same layers and imports. A block of any other grammar fails the build rather
than showing a wrong figure. ``python docs/_ext/layer_diagram.py`` writes the figure of
``docs/architecture.md`` to ``docs/_generated/`` without Sphinx.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from docutils import nodes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform

REPOSITORY = Path(__file__).resolve().parents[2]
#: Where the figures are written (git-ignored); the HTML builder copies them into ``_images/``.
GENERATED = REPOSITORY / "docs" / "_generated"

_HEADER = re.compile(r"flowchart TB")
_ROW = re.compile(r'subgraph (\w+)\[" "\]')
_DIRECTION = re.compile(r"direction LR")
_NODE = re.compile(r'(\w+)\["([^"]+)"\]')
_END = re.compile(r"end")
_EDGE = re.compile(r"(\w+) --> (\w+)")


@dataclass(frozen=True)
class Flowchart:
    """A layered flowchart: rows of node labels, top row first, and arrows between labels."""

    rows: tuple[tuple[str, ...], ...]
    edges: tuple[tuple[str, str], ...]


def parse_flowchart(text: str) -> Flowchart:
    """Read the rows and arrows of a flowchart in the grammar ``architecture._mermaid`` writes.

    Parameters
    ----------
    text : str
        The block's source, without its fences.

    Returns
    -------
    Flowchart
        Its rows (of node labels, in the order written) and edges (as label pairs).

    Raises
    ------
    ValueError
        On a line outside that grammar, a node outside a row, or an arrow to an undeclared node:
        a figure drawn from a half-understood block would be wrong without anyone noticing.
    """
    lines = [line.strip() for line in text.strip().splitlines()]
    if not lines or not _HEADER.fullmatch(lines[0]):
        raise ValueError(f"a layer diagram starts with 'flowchart TB', not {lines[0] if lines else 'nothing'!r}")
    rows: list[list[str]] = []
    labels: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    in_row = False
    for number, line in enumerate(lines[1:], start=2):
        if _ROW.fullmatch(line) and not in_row:
            rows.append([])
            in_row = True
        elif _END.fullmatch(line) and in_row:
            in_row = False
        elif _DIRECTION.fullmatch(line) and in_row:
            continue
        elif (node := _NODE.fullmatch(line)) and in_row:
            labels[node[1]] = node[2]
            rows[-1].append(node[2])
        elif (edge := _EDGE.fullmatch(line)) and not in_row:
            unknown = [name for name in edge.groups() if name not in labels]
            if unknown:
                raise ValueError(f"line {number}: an arrow from or to an undeclared node {unknown[0]!r}")
            edges.append((labels[edge[1]], labels[edge[2]]))
        else:
            raise ValueError(f"line {number} is not of the layer diagram's grammar: {line!r}")
    if in_row or not rows:
        raise ValueError("a layer diagram has rows, each closed by 'end'")
    return Flowchart(tuple(map(tuple, rows)), tuple(edges))


# -- Drawing -----------------------------------------------------------------------------------
#: Sizes in inches: a box, the distance between box centres in a row and between rows.
BOX_WIDTH, BOX_HEIGHT, COLUMN, ROW = 1.2, 0.32, 1.5, 0.78
#: Sizes in inches: the room between the widest row a lane passes and the lane, and between lanes.
LANE_GAP, LANE_SPACING = 0.3, 0.2
#: One colour per lane (so per imported package), to follow a lane through the others it crosses:
#: Matplotlib's tab10 without its grey, which would read as an importer's line, and with an indigo.
LANE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                "#393b79", "#bcbd22")
BOX_FILL, BOX_EDGE, INK, STUB = "#dbe8f7", "#2a5b93", "#1d2733", "#8a96a3"


@dataclass
class _Lane:
    """The vertical line that collects every import of one package from further than a row above."""

    target: str
    side: int  # -1: left of the boxes, 1: right
    sources: list[str]
    x: float = 0.0


def _centres(chart: Flowchart) -> dict[str, np.ndarray]:
    """Each node's centre: rows top to bottom, each row centred on the middle column."""
    return {label: np.array([(i - (len(row) - 1) / 2) * COLUMN, -r * ROW])
            for r, row in enumerate(chart.rows) for i, label in enumerate(row)}


def _lanes(chart: Flowchart, centres: dict[str, np.ndarray], row_of: dict[str, int]) -> list[_Lane]:
    """A lane per package imported from two rows up or more, its importers and its place.

    A lane runs on the side of its package's box (a box in the middle takes the side with fewer
    lanes), clear of every row it passes. The lanes of higher packages run nearer the boxes, so
    that no lane's last turn into its package crosses another lane.
    """
    sources: dict[str, list[str]] = {}
    for start, end in chart.edges:
        if row_of[end] - row_of[start] > 1:
            sources.setdefault(end, []).append(start)
    lanes: list[_Lane] = []
    for target in sorted(sources, key=lambda t: (row_of[t], centres[t][0])):
        x = centres[target][0]
        side = int(np.sign(x)) or (1 if sum(l.side for l in lanes) <= 0 else -1)
        lanes.append(_Lane(target, side, sources[target]))
    half_extent = [(len(row) - 1) / 2 * COLUMN + BOX_WIDTH / 2 for row in chart.rows]
    for side in (-1, 1):
        edge = 0.0
        for lane in (lane for lane in lanes if lane.side == side):
            top = min(row_of[s] for s in lane.sources)
            clear = max(half_extent[top:row_of[lane.target] + 1]) + LANE_GAP
            edge = max(clear, edge + LANE_SPACING)
            lane.x = side * edge
    return lanes


def _tracks(chart: Flowchart, lanes: list[_Lane], row_of: dict[str, int]) -> tuple[dict[str, float], dict[str, float]]:
    """The heights of each importer's line to its lanes and of each lane's last turn.

    An importer's line runs in the gap below its row, a lane's turn into its package in the gap
    above that package's row; each has a track of its own there, the importers' above the turns, so
    that an importer's drop from its box and a turn's drop into a box never cross.
    """
    leaving: dict[int, list[str]] = {}
    arriving: dict[int, list[str]] = {}
    for lane in lanes:
        arriving.setdefault(row_of[lane.target] - 1, []).append(lane.target)
        for source in lane.sources:
            if source not in leaving.setdefault(row_of[source], []):
                leaving[row_of[source]].append(source)
    out, into = {}, {}
    for r in range(len(chart.rows) - 1):
        names = [*sorted(leaving.get(r, ()), key=chart.rows[r].index),
                 *sorted(arriving.get(r, ()), key=chart.rows[r + 1].index)]
        top, gap = -r * ROW - BOX_HEIGHT / 2, ROW - BOX_HEIGHT
        for k, name in enumerate(names):
            (out if k < len(leaving.get(r, ())) else into)[name] = top - gap * (k + 1) / (len(names) + 1)
    return out, into


def draw(chart: Flowchart) -> bytes:
    """The flowchart as an SVG: one box per node in rows top to bottom, its imports as lines.

    An import from the row just above is a dark arrow. The imports of a package from further up
    are gathered on one coloured lane beside the boxes that ends in an arrow into that package:
    each importer's grey line meets the lanes of what it imports at a dot (a line crossing a lane
    without a dot does not import it). The rows read first, and every import can be followed.

    Parameters
    ----------
    chart : Flowchart
        The rows and arrows to draw.

    Returns
    -------
    bytes
        The SVG document, its text drawn as outlines so that it looks the same without its font.
    """
    centres = _centres(chart)
    row_of = {label: r for r, row in enumerate(chart.rows) for label in row}
    lanes = _lanes(chart, centres, row_of)
    leave_at, enter_at = _tracks(chart, lanes, row_of)
    half_width = max([abs(lane.x) for lane in lanes] + [max(len(r) for r in chart.rows) * COLUMN / 2]) + 0.15
    height = len(chart.rows) * ROW
    figure = Figure(figsize=(2 * half_width, height))
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(-half_width, half_width)
    axes.set_ylim(-height + ROW / 2, ROW / 2)
    axes.axis("off")
    for r in range(0, len(chart.rows), 2):  # a band behind every other layer, as Mermaid's subgraphs
        axes.axhspan(-r * ROW - ROW / 2, -r * ROW + ROW / 2, color="#f3f5f8", zorder=0)
    for label, (x, y) in centres.items():
        axes.add_patch(FancyBboxPatch((x - BOX_WIDTH / 2, y - BOX_HEIGHT / 2), BOX_WIDTH, BOX_HEIGHT,
                                      boxstyle="round,pad=0,rounding_size=0.05", facecolor=BOX_FILL,
                                      edgecolor=BOX_EDGE, linewidth=1.2, zorder=5))
        axes.text(x, y, label, ha="center", va="center", family="DejaVu Sans Mono", fontsize=11, color=INK,
                  zorder=6)
    arrow = dict(arrowstyle="-|>,head_length=5,head_width=2.5", shrinkA=0, shrinkB=0, mutation_scale=1)
    for start, end in chart.edges:
        if row_of[end] - row_of[start] == 1:
            (x0, y0), (x1, y1) = centres[start], centres[end]
            axes.add_patch(FancyArrowPatch((x0, y0 - BOX_HEIGHT / 2), (x1, y1 + BOX_HEIGHT / 2), color=INK,
                                           linewidth=1.2, zorder=4, **arrow))
    # Each importer's line: down from its box on the side of most of its lanes, across to them.
    for source, y in leave_at.items():
        xs = [lane.x for lane in lanes if source in lane.sources]
        x, top = centres[source][0], centres[source][1] - BOX_HEIGHT / 2
        drop = x + BOX_WIDTH / 4 * (1 if sum(np.sign(xs)) >= 0 else -1)
        axes.plot([drop, drop], [top, y], color=STUB, linewidth=1, zorder=2, solid_capstyle="butt")
        axes.plot([min(xs + [drop]), max(xs + [drop])], [y, y], color=STUB, linewidth=1, zorder=2)
    for lane, colour in zip(lanes, LANE_COLOURS * len(lanes)):
        x, y = centres[lane.target]
        turn = enter_at[lane.target]
        land = x + BOX_WIDTH / 4 * lane.side
        top = max(leave_at[source] for source in lane.sources)
        axes.plot([lane.x, lane.x, land], [top, turn, turn], color=colour, linewidth=1.3, zorder=3)
        axes.add_patch(FancyArrowPatch((land, turn), (land, y + BOX_HEIGHT / 2), color=colour, linewidth=1.3,
                                       zorder=4, **arrow))
        axes.scatter([lane.x] * len(lane.sources), [leave_at[s] for s in lane.sources], s=14, color=colour,
                     zorder=4, linewidths=0)
    out = io.BytesIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


# -- Sphinx ------------------------------------------------------------------------------------
#: The figure's caption: how to read imports from further up, which Mermaid draws as plain arrows.
CAPTION = ("A dark arrow is an import from the row just above. The imports of a package from further "
           "up run along its coloured lane into it; a dot marks each package whose grey line meets "
           "the lane, one import each.")


def mermaid_source(page: str) -> str:
    """The flowchart of the first ```mermaid block of a Markdown page, without its fences.

    Raises
    ------
    ValueError
        If the page has no such block.
    """
    found = re.search(r"^```mermaid\n(.*?)^```", page, flags=re.S | re.M)
    if found is None:
        raise ValueError("the page has no ```mermaid block")
    return found[1]


def write_figure(chart: Flowchart, docname: str, number: int) -> str:
    """Draw ``chart``, the ``number``-th diagram of page ``docname``, into :data:`GENERATED`.

    Returns
    -------
    str
        The figure's path as an image's ``uri``, from the documentation's root.
    """
    name = f"{docname.replace('/', '-')}-diagram-{number}.svg"
    GENERATED.mkdir(exist_ok=True)
    (GENERATED / name).write_bytes(draw(chart))
    return f"/{GENERATED.name}/{name}"


def alt_text(chart: Flowchart) -> str:
    """What the figure shows, for a reader who cannot see it: the rows, top first."""
    return "Layer diagram, top to bottom: " + "; ".join(", ".join(row) for row in chart.rows) + "."


class MermaidLayerDiagrams(SphinxTransform):
    """Replace each ``mermaid`` literal block with an image of the layer diagram it describes."""

    # Before the reading's end, when the images of a page are collected and later copied.
    default_priority = 400

    def apply(self, **kwargs) -> None:
        blocks = [block for block in self.document.findall(nodes.literal_block)
                  if block.get("language") == "mermaid"]
        for number, block in enumerate(blocks):
            try:
                chart = parse_flowchart(block.astext())
            except ValueError as error:
                raise ExtensionError(f"{self.env.docname}: mermaid block: {error}") from error
            uri = write_figure(chart, self.env.docname, number)
            figure = nodes.figure("", nodes.image(uri=uri, alt=alt_text(chart)),
                                  nodes.caption("", CAPTION), classes=["layer-diagram"])
            # A captioned figure needs an id (Sphinx numbers figures by it); this one is also a link target.
            self.document.set_id(figure, suggested_prefix="layer-diagram")
            block.replace_self(figure)


def setup(app: Sphinx) -> dict:
    app.add_transform(MermaidLayerDiagrams)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    # A look at the figure without the site's build of a few minutes.
    page = (REPOSITORY / "docs" / "architecture.md").read_text(encoding="utf-8")
    print("wrote docs" + write_figure(parse_flowchart(mermaid_source(page)), "architecture", 0))
