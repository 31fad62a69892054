"""A union layout in terminal cells at one zoom: boxes, edge lines, arrowheads.

:class:`CanvasGeometry` is built once per layout and zoom (on a pool thread
when the layout arrives) and holds no colours or label text, so stepping
between passes never rebuilds it. Edges are rasterized at braille resolution
(a cell is 2 x 4 dots, every step of a segment one dot, so a line has no
gaps) and remember which way each segment runs: a cell crossed by one
straight stretch is drawn with a box-drawing line (``│ ─ ╲ ╱``), which
reads as a solid line; only bends and crossings keep the braille dots. An
arrowhead (``▼ ▲ ◀ ▶``) sits on the cell where an edge enters its target.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field

import numpy as np

from .camera import CELL_HEIGHT, CELL_WIDTH
from .edge_raster import (
    DOWN_LEFT,
    DOWN_RIGHT,
    FALLING,
    HORIZONTAL,
    RISING,
    UP_LEFT,
    UP_RIGHT,
    VERTICAL,
    EdgeRaster,
    Segment,
    direction_of,
)
from .labels import ELLIPSIS, abbreviate, short_op_name
from .layout import EdgeKey, Layout
from .model import DrawGraph, Mark, Marks, NodeRole
from .palette import STATE_BADGES
from .ui_priority import step_aside

__all__ = [
    "CanvasGeometry",
    "BoxSpan",
    "FULL_LABELS",
    "COMPACT_BOXES",
    "edge_glyph",
    "ARROWS",
    "box_row_text",
    "badge_for",
    "edge_label_cells",
]

FULL_LABELS = 0.8  # from this zoom boxes carry their label lines
COMPACT_BOXES = 0.35  # below it each node is a single cell

CORNERS = {UP_RIGHT: "╰", DOWN_RIGHT: "╭", UP_LEFT: "╯", DOWN_LEFT: "╮"}
_ANY_CORNER = UP_RIGHT | DOWN_RIGHT | UP_LEFT | DOWN_LEFT
_STRAIGHT = {
    VERTICAL: {"solid": "│", "dashed": "╎", "dotted": "┆"},
    HORIZONTAL: {"solid": "─", "dashed": "╌", "dotted": "┄"},
    FALLING: {"solid": "╲"},
    RISING: {"solid": "╱"},
    VERTICAL | HORIZONTAL: {"solid": "┼"},
}
ARROWS = {"down": "▼", "up": "▲", "right": "▶", "left": "◀"}

_BUCKET = 32  # rows per bucket of the edge-segment and frame indexes
_TILE_COLUMNS = 64  # columns per tile of the edge-segment index


def edge_glyph(bits: int, directions: int, line: str = "solid", col: int = 0, row: int = 0) -> str | None:
    """The character of the edge cell (``col``, ``row``): a box-drawing line
    when one straight stretch crosses it, braille dots for bends and
    crossings; None where a dashed or dotted line leaves a gap (vertical and
    horizontal glyphs are dashed or dotted themselves and never leave one)."""
    corner = directions & _ANY_CORNER
    if corner:
        if corner in CORNERS and not directions & ~(corner | HORIZONTAL):
            return CORNERS[corner] if _line_shows(line, col, row) else None  # a step of a flat line
        directions = 0  # two lines meet at a corner: dots
    if directions & (FALLING | RISING) and directions & (VERTICAL | HORIZONTAL):
        directions &= FALLING | RISING  # a bend into a slant: the slant reads best
    straight = _STRAIGHT.get(directions)
    if straight is not None and line in straight:
        return straight[line]
    if not _line_shows(line, col, row):
        return None
    return straight["solid"] if straight is not None else chr(0x2800 + bits)


def _line_shows(line: str, col: int, row: int) -> bool:
    """Whether a diagonal or braille cell of a dotted edge (every other cell)
    or a dashed one (two of every four) is drawn."""
    if line == "dotted":
        return (col + row) % 2 == 0
    if line == "dashed":
        return (col + row) % 4 < 2
    return True


@dataclass(frozen=True)
class BoxSpan:
    """A node's box in cells: columns ``start`` to ``end`` (exclusive), rows ``top`` to ``bottom``."""

    start: int
    end: int
    top: int
    bottom: int
    node_id: int


@dataclass
class CanvasGeometry:
    """Cells of a whole union layout at one zoom level.

    Built once per layout and zoom, for every node and edge of the union; a
    step shows a subset, chosen when rows are painted.
    """

    zoom: float
    columns: int = 0
    rows: int = 0
    boxes: dict[int, list[BoxSpan]] = field(default_factory=dict)  # row -> boxes covering it
    node_cells: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # id -> (col0, row0, col1, row1)
    # Edge segments in dot space (two dots per column, four per row): a list
    # while building, then arrays indexed by tiles (viewer/edge_raster.py).
    segments: list[Segment] = field(default_factory=list)
    raster: EdgeRaster | None = None
    _node_rows: dict[int, int] = field(default_factory=dict)  # node id -> row of _node_table
    _node_table: np.ndarray | None = None  # node_cells as an array, one row per node
    arrows: dict[int, list[tuple[int, str, EdgeKey]]] = field(default_factory=dict)  # row -> (col, glyph, edge)
    frames: list[tuple[int, int, int, int, str]] = field(default_factory=list)  # col0, row0, col1, row1, cluster key
    frame_buckets: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, layout: Layout, zoom: float) -> CanvasGeometry:
        geometry = cls(zoom)
        sx = zoom / CELL_WIDTH
        sy = zoom / CELL_HEIGHT
        geometry.columns = max(1, int(layout.width * sx) + 2)
        geometry.rows = max(1, int(layout.height * sy) + 2)
        for key, (x0, y0, x1, y1) in layout.clusters.items():
            index = len(geometry.frames)
            c0, r0, c1, r1 = int(x0 * sx), int(y0 * sy), max(int(x0 * sx) + 2, int(x1 * sx)), int(y1 * sy)
            geometry.frames.append((c0, r0, c1, r1, key))
            for bucket in range(r0 // _BUCKET, r1 // _BUCKET + 1):
                geometry.frame_buckets.setdefault(bucket, []).append(index)
        for count, (node_id, box) in enumerate(layout.boxes.items()):
            if not count % 256:
                step_aside()  # built on a pool thread: a step key goes first
            geometry._add_box(node_id, box.x * sx, box.y * sy, box.width * sx, box.height * sy)
        for count, (edge_key, points) in enumerate(layout.edges.items()):
            if not count % 128:
                step_aside()
            geometry._add_edge(points, sx, sy, edge_key)
        geometry.raster = EdgeRaster(geometry.segments, 4 * _BUCKET, 2 * _TILE_COLUMNS)
        geometry._node_rows = {node_id: row for row, node_id in enumerate(geometry.node_cells)}
        geometry._node_table = np.array(list(geometry.node_cells.values()), dtype=np.int64).reshape(-1, 4)
        geometry.segments = []  # the raster holds them (the collector skips arrays)
        return geometry

    # -- building --------------------------------------------------------------------
    def _add_edge(self, points: list[tuple[float, float]], sx: float, sy: float, edge_key: EdgeKey) -> None:
        dots = [(x * sx * 2, y * sy * 4) for x, y in points]
        if not dots:
            return
        source, target = self.node_cells.get(edge_key[0]), self.node_cells.get(edge_key[1])
        # Run the line into both boxes (their fill hides the inside): a box
        # rounded to cells may be smaller than the layout's, and the line
        # still meets it.
        line = list(dots)
        if source is not None and edge_key[0] != edge_key[1] and not _touches(dots[0], source):
            line.insert(0, _into_box(dots[0], source))
        if target is not None and edge_key[0] != edge_key[1]:
            if not _touches(dots[-1], target):
                line.append(_into_box(dots[-1], target))
            if self.zoom >= COMPACT_BOXES:
                self._add_arrow(dots, target, edge_key)
        segments = self.segments
        for (ax, ay), (bx, by) in zip(line, line[1:], strict=False):
            dx, dy = bx - ax, by - ay
            if dx or dy:
                segments.append((ax, ay, bx, by, edge_key, direction_of(dx, dy)))

    def _add_arrow(self, dots: list[tuple[float, float]], target: tuple[int, int, int, int], edge_key: EdgeKey) -> None:
        """The arrowhead on the cell just outside the side of ``target`` the edge comes in by."""
        c0, r0, c1, r1 = target
        tip_x, tip_y = dots[-1]
        col, row = int(tip_x // 2), int(tip_y // 4)
        side = None
        if row < r0:
            side = "down"
        elif row >= r1:
            side = "up"
        elif col < c0:
            side = "right"
        elif col >= c1:
            side = "left"
        else:  # the tip is inside the box as rounded to cells: the side nearest to it
            # (distances in dots, which are about square: 2 per column, 4 per row)
            gaps = {
                "down": tip_y - r0 * 4,
                "up": r1 * 4 - tip_y,
                "right": tip_x - c0 * 2,
                "left": c1 * 2 - tip_x,
            }
            side = min(gaps, key=gaps.__getitem__)
        if side in ("down", "up"):
            col, row = min(max(col, c0), c1 - 1), r0 - 1 if side == "down" else r1
        else:
            col, row = c0 - 1 if side == "right" else c1, min(max(row, r0), r1 - 1)
        if row >= 0 and col >= 0:
            self.arrows.setdefault(row, []).append((col, ARROWS[side], edge_key))

    def _add_box(self, node_id: int, cx: float, cy: float, w: float, h: float) -> None:
        if self.zoom < FULL_LABELS:
            width = 1 if self.zoom < COMPACT_BOXES else max(3, int(w) + 1)
            col0, row0 = int(cx - width / 2), int(cy)
            rows = 1
        else:
            width = max(4, int(round(w)))
            rows = max(3, int(round(h)))
            col0, row0 = int(round(cx - width / 2)), int(round(cy - rows / 2))
        if col0 < 0 or row0 < 0:
            col0, row0 = max(0, col0), max(0, row0)
        span = BoxSpan(col0, col0 + width, row0, row0 + rows, node_id)
        for row in range(row0, row0 + rows):
            self.boxes.setdefault(row, []).append(span)
        self.node_cells[node_id] = (col0, row0, col0 + width, row0 + rows)
        self.columns = max(self.columns, col0 + width + 1)
        self.rows = max(self.rows, row0 + rows + 1)

    # -- queries ------------------------------------------------------------------------
    def dots_in_row(
        self,
        row: int,
        shown: Set[EdgeKey] | None = None,
        columns: tuple[int, int] | None = None,
    ) -> dict[int, tuple[int, int, int]]:
        """Column -> (braille bits, value id, directions) of the cells the
        ``shown`` edges (all: None) cross in ``row``, within ``columns`` (start, end)."""
        window = columns if columns is not None else (0, self.columns)
        if self.raster is None:
            return {}
        tile_columns = (max(0, window[0]) // _TILE_COLUMNS, max(0, window[1]) // _TILE_COLUMNS)
        return self.raster.row_cells(row, shown, window, row // _BUCKET, tile_columns)

    def arrows_in_row(self, row: int, shown: Set[EdgeKey] | None = None) -> list[tuple[int, str, EdgeKey]]:
        """(column, glyph, edge) of the arrowheads of the ``shown`` edges in ``row``."""
        arrows = self.arrows.get(row, ())
        return [a for a in arrows if shown is None or a[2] in shown]

    def frames_in_row(self, row: int) -> list[tuple[int, int, int, int, str]]:
        return [
            self.frames[i] for i in self.frame_buckets.get(row // _BUCKET, ()) if self.frames[i][1] <= row <= self.frames[i][3]
        ]

    def step_frames(self, graph: DrawGraph) -> dict[str, tuple[int, int, int, int]]:
        """Each frame of ``graph`` (one step) around the boxes it holds in this step
        (cols and rows, ends inclusive as :attr:`frames`), never beyond the union's
        frame: a DifferentiableGraph that grows in later steps is not drawn at its
        final size around an early step's few nodes."""
        clusters = graph.clusters
        spans: dict[str, list[int]] = {}
        for node_id, node in graph.nodes.items():
            cells = self.node_cells.get(node_id)
            key = node.cluster
            while cells is not None and key is not None and key in clusters:
                span = spans.get(key)
                if span is None:
                    spans[key] = list(cells)
                else:
                    span[0], span[1] = min(span[0], cells[0]), min(span[1], cells[1])
                    span[2], span[3] = max(span[2], cells[2]), max(span[3], cells[3])
                cells = (spans[key][0] - 1, spans[key][1] - 1, spans[key][2] + 1, spans[key][3] + 1)
                key = clusters[key].parent
        union = {key: (c0, r0, c1, r1) for c0, r0, c1, r1, key in self.frames}
        frames = {}
        for key, (c0, r0, c1, r1) in spans.items():
            u = union.get(key)
            if u is None:
                continue
            # One column and a title row of margin around the boxes, inside the union's frame.
            frames[key] = (max(u[0], c0 - 1), max(u[1], r0 - 2), min(u[2], c1 + 1), min(u[3], r1 + 1))
        return frames

    @property
    def has_edges(self) -> bool:
        return bool(self.segments) or (self.raster is not None and self.raster.size > 0)

    def node_at(self, col: int, row: int, shown: dict[int, object] | None = None) -> int | None:
        for span in self.boxes.get(row, ()):
            if span.start <= col < span.end and (shown is None or span.node_id in shown):
                return span.node_id
        return None

    def cells_around(self, node_ids: Iterable[int]) -> tuple[int, int, int, int] | None:
        """(col0, row0, col1, row1), ends exclusive, around the boxes of ``node_ids`` laid out here."""
        if self._node_table is None:  # still building
            spans = [self.node_cells[n] for n in node_ids if n in self.node_cells]
            table = np.array(spans, dtype=np.int64).reshape(-1, 4)
        else:
            rows = self._node_rows
            table = self._node_table[[rows[n] for n in node_ids if n in rows]]
        if not len(table):
            return None
        low, high = table.min(axis=0), table.max(axis=0)
        return int(low[0]), int(low[1]), int(high[2]), int(high[3])

    def node_centre(self, node_id: int) -> tuple[float, float] | None:
        """The cell in the middle of a node's box (None: not laid out)."""
        cells = self.node_cells.get(node_id)
        if cells is None:
            return None
        c0, r0, c1, r1 = cells
        return (c0 + c1 - 1) / 2, (r0 + r1 - 1) / 2


def _touches(dot: tuple[float, float], cells: tuple[int, int, int, int]) -> bool:
    """Whether ``dot`` lies in the box ``cells`` or in a cell beside it (no line needed between)."""
    c0, r0, c1, r1 = cells
    col, row = dot[0] // 2, dot[1] // 4
    return c0 - 1 <= col <= c1 and r0 - 1 <= row <= r1


def _into_box(dot: tuple[float, float], cells: tuple[int, int, int, int]) -> tuple[float, float]:
    """Where an edge ending at ``dot`` runs on to, straight into the box ``cells``:
    its middle row from above or below, its middle column from the side."""
    c0, r0, c1, r1 = cells
    x, y = dot
    if not r0 * 4 <= y < r1 * 4:
        return min(max(x, c0 * 2), c1 * 2 - 1), (r0 + r1) * 2.0  # rows to dots: x4, halved
    return (c0 + c1) * 1.0, y


_BADGES = {
    Mark.CAPTURED_INPUT: "captured in",
    Mark.CAPTURED_OUTPUT: "captured out",
    Mark.TEMPORARY: "temporary",
    Mark.VJP_INPUT: "vjp in",
    Mark.VJP_OUTPUT: "vjp out",
}


def badge_for(node_id: int, marks: Marks) -> str:
    """``captured out #2, Zero``: the Gradient role and index a node carries,
    and the AutogradZero state of what it makes, for its top border."""
    found = marks.nodes.get(node_id, ())
    words = []
    for mark, word in _BADGES.items():
        if mark in found:
            index = marks.indices.get((node_id, mark))
            words.append(f"{word} #{index}" if index is not None else word)
            break
    words += [word for mark, word in STATE_BADGES.items() if mark in found]
    return ", ".join(words)


def box_row_text(
    span: BoxSpan, row: int, label: str, role: NodeRole, zoom: float, badge: str = "", stub: str = ""
) -> str:
    """What ``row`` of a node's box shows: a border (with ``badge`` set into the
    top one, ``stub``, the fan-out values the node reads, into the bottom one)
    or a label line, padded to the box width. Every text goes through
    :func:`~gradview.viewer.labels.abbreviate`: cut only with an ellipsis."""
    width = span.end - span.start
    lines = [line for line in label.splitlines() if line] or [""]
    if zoom < COMPACT_BOXES:
        return "■" if role is not NodeRole.INPUT else "●"
    if zoom < FULL_LABELS:
        name = abbreviate(short_op_name(lines[0]), width - 2)
        return ("[" + name + "]").ljust(width)[:width] if name else ELLIPSIS.ljust(width)[:width]
    inner = width - 2
    round_box = role in (NodeRole.INPUT, NodeRole.RETURN)
    left_top, right_top, left_bottom, right_bottom = ("╭", "╮", "╰", "╯") if round_box else ("┌", "┐", "└", "┘")
    offset = row - span.top
    if offset == 0:
        tag = f" {abbreviate(badge, inner - 2)} " if badge and inner > 4 else ""
        return left_top + tag + "─" * (inner - len(tag)) + right_top
    if row == span.bottom - 1:
        tag = f" {abbreviate(stub, inner - 2)} " if stub and inner > 4 else ""
        return left_bottom + tag + "─" * (inner - len(tag)) + right_bottom
    # Label lines centred vertically in the box.
    inner_rows = span.bottom - span.top - 2
    first = max(0, (inner_rows - len(lines)) // 2)
    index = offset - 1 - first
    line = lines[index] if 0 <= index < len(lines) else ""
    text = abbreviate(line, inner)
    return "│" + text.center(inner) + "│"


def edge_label_cells(
    geometry: CanvasGeometry, layout: Layout, graph: DrawGraph, frames: dict[str, tuple[int, int, int, int]]
) -> dict[int, list[tuple[int, str, int]]]:
    """Row -> (column, text, value id) of the run values ``graph.edge_values``
    puts on its edges, each beside its edge where it covers no box, arrowhead,
    frame title or other label (:func:`~gradview.viewer.edge_values.place_labels`);
    none on single-cell boxes, where there is no room."""
    from .edge_values import edge_labels, place_labels  # only after r

    values = graph.edge_values
    if not values or geometry.zoom < COMPACT_BOXES:
        return {}
    sx, sy = geometry.zoom / CELL_WIDTH, geometry.zoom / CELL_HEIGHT
    obstacles: list[tuple[float, float, float, float]] = [
        tuple(map(float, geometry.node_cells[n])) for n in graph.nodes if n in geometry.node_cells  # type: ignore[misc]
    ]
    for c0, r0, c1, r1 in frames.values():  # a frame's border and title: never written across
        obstacles += [(c0, r0, c1, r0 + 1), (c0, r1, c1, r1 + 1), (c0 - 1, r0, c0 + 2, r1 + 1), (c1 - 2, r0, c1 + 1, r1 + 1)]
    shown = graph.edge_keys()
    obstacles += [(c, r, c + 1, r + 1) for r, arrows in geometry.arrows.items() for c, _, key in arrows if key in shown]
    labels = edge_labels(graph, layout, (sx, sy), {n for n in graph.nodes if n in geometry.node_cells})
    # Inside the drawing (its boxes and frames): a label never widens the picture.
    cells = [geometry.node_cells[n] for n in graph.nodes if n in geometry.node_cells]
    cells += [(c0, r0, c1, r1 + 1) for c0, r0, c1, r1 in frames.values()]
    bounds = tuple(map(float, (min(c[0] for c in cells), min(c[1] for c in cells), max(c[2] for c in cells),
                               max(c[3] for c in cells)))) if cells else None
    placed = place_labels(labels, obstacles, 1.0, 1.0, bounds)  # type: ignore[arg-type]
    rows: dict[int, list[tuple[int, str, int]]] = {}
    for value_id, (x0, y0, _, _) in placed.items():
        rows.setdefault(int(y0), []).append((int(x0), values[value_id], value_id))
    return rows
