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

import math
from dataclasses import dataclass, field

from .camera import CELL_HEIGHT, CELL_WIDTH
from .labels import ELLIPSIS, abbreviate, short_op_name
from .layout import EdgeKey, Layout
from .model import Mark, Marks, NodeRole
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
]

FULL_LABELS = 0.8  # from this zoom boxes carry their label lines
COMPACT_BOXES = 0.35  # below it each node is a single cell

# Braille dot bits by (column in cell, row in cell).
_DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
# Which way a segment runs, in dot space (dots are about square).
VERTICAL, HORIZONTAL, FALLING, RISING = 1, 2, 4, 8
# Where a flat line steps to the next row: the corner that joins the two runs.
UP_RIGHT, DOWN_RIGHT, UP_LEFT, DOWN_LEFT = 16, 32, 64, 128
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


def _direction(dx: float, dy: float) -> int:
    """The class of a segment: within about 22 degrees of an axis it is that
    axis's line. A slant gets a diagonal glyph only where it is steep enough
    to cross a row in about one cell (a cell is 2 dots wide, 4 high); a
    shallower one would read as hatching (``╲╲╲╲``), so it is drawn as a
    flat line that steps down a row with corners (``──╮`` / ``╰──``)."""
    if abs(dx) * 2.5 <= abs(dy):
        return VERTICAL
    if abs(dy) < 1.5 * abs(dx):
        return HORIZONTAL
    return FALLING if (dx > 0) == (dy > 0) else RISING


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


Segment = tuple[float, float, float, float, EdgeKey, int]  # dot space, edge, direction


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
    # Edge segments in dot space (two dots per column, four per row), indexed by tiles.
    segments: list[Segment] = field(default_factory=list)
    segment_tiles: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (row, col) tile -> segments
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
        segments, tiles_of = self.segments, self.segment_tiles
        tile_rows, tile_cols = 4 * _BUCKET, 2 * _TILE_COLUMNS  # dots per tile
        for (ax, ay), (bx, by) in zip(line, line[1:], strict=False):
            dx, dy = bx - ax, by - ay
            if not dx and not dy:
                continue
            index = len(segments)
            segments.append((ax, ay, bx, by, edge_key, _direction(dx, dy)))
            first = (int(max(0.0, ay) // tile_rows), int(max(0.0, ax) // tile_cols))
            last = (int(max(0.0, by) // tile_rows), int(max(0.0, bx) // tile_cols))
            if first == last:  # most segments: short, in one tile
                tiles_of.setdefault(first, []).append(index)
                continue
            # The tiles the segment passes through: samples closer together
            # than half a tile side never step over one (a bounding box of
            # tiles would be quadratic for long diagonal edges).
            samples = int(max(abs(dx), abs(dy)) // 48) + 1
            tiles = {first, last}
            for i in range(1, samples):
                tiles.add((int(max(0.0, ay + dy * i / samples) // tile_rows), int(max(0.0, ax + dx * i / samples) // tile_cols)))
            for tile in tiles:
                tiles_of.setdefault(tile, []).append(index)

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
        shown: set[EdgeKey] | None = None,
        columns: tuple[int, int] | None = None,
    ) -> dict[int, tuple[int, int, int]]:
        """Column -> (braille bits, value id, directions) of the cells the
        ``shown`` edges (all: None) cross in ``row``, within ``columns`` (start, end)."""
        cells: dict[int, tuple[int, int, int]] = {}
        low, high = row * 4, row * 4 + 3
        first_col, last_col = columns if columns is not None else (0, self.columns)
        candidates: set[int] = set()
        for tile_col in range(max(0, first_col) // _TILE_COLUMNS, max(0, last_col) // _TILE_COLUMNS + 1):
            candidates.update(self.segment_tiles.get((row // _BUCKET, tile_col), ()))
        for index in sorted(candidates):
            ax, ay, bx, by, edge_key, direction = self.segments[index]
            if min(ay, by) > high + 1 or max(ay, by) < low:
                continue
            if shown is not None and edge_key not in shown:
                continue
            value_id = edge_key[2]
            if direction == VERTICAL:
                _vertical_cell(cells, ax, ay, bx, by, low, (first_col, last_col), value_id)
            elif direction == HORIZONTAL:
                _horizontal_cells(cells, ax, ay, bx, by, row, (first_col, last_col), value_id)
            else:
                _slanted_dots(cells, ax, ay, bx, by, low, (first_col, last_col), value_id, direction)
        return cells

    def arrows_in_row(self, row: int, shown: set[EdgeKey] | None = None) -> list[tuple[int, str, EdgeKey]]:
        """(column, glyph, edge) of the arrowheads of the ``shown`` edges in ``row``."""
        arrows = self.arrows.get(row, ())
        return [a for a in arrows if shown is None or a[2] in shown]

    def frames_in_row(self, row: int) -> list[tuple[int, int, int, int, str]]:
        return [
            self.frames[i] for i in self.frame_buckets.get(row // _BUCKET, ()) if self.frames[i][1] <= row <= self.frames[i][3]
        ]

    @property
    def has_edges(self) -> bool:
        return bool(self.segments)

    def node_at(self, col: int, row: int, shown: dict[int, object] | None = None) -> int | None:
        for span in self.boxes.get(row, ()):
            if span.start <= col < span.end and (shown is None or span.node_id in shown):
                return span.node_id
        return None

    def node_centre(self, node_id: int) -> tuple[float, float] | None:
        """The cell in the middle of a node's box (None: not laid out)."""
        cells = self.node_cells.get(node_id)
        if cells is None:
            return None
        c0, r0, c1, r1 = cells
        return (c0 + c1 - 1) / 2, (r0 + r1 - 1) / 2


_COLUMN_BITS = (0x47, 0xB8)  # all four dots of the left and the right dot column
_ROW_BITS = (0x09, 0x12, 0x24, 0xC0)  # both dots of each dot row
_CORNER_BITS = 0x47 | 0x12  # a corner where lines meet (drawn as dots): left column and a middle row


def _put(cells: dict[int, tuple[int, int, int]], col: int, bits: int, value_id: int, direction: int) -> None:
    old_bits, _, directions = cells.get(col, (0, value_id, 0))
    cells[col] = (old_bits | bits, value_id, directions | direction)


def _vertical_cell(
    cells: dict[int, tuple[int, int, int]],
    ax: float, ay: float, bx: float, by: float, low: int, columns: tuple[int, int], value_id: int,
) -> None:
    """A steep segment crosses a row in one cell: where it is at the row's
    middle (or its end in the row). One cell per row keeps a line that drifts
    across a column boundary single, and rows differ by at most a column."""
    y = min(max(low + 2, min(ay, by)), max(ay, by))
    x = ax + (bx - ax) * (y - ay) / (by - ay)
    col = int(x) // 2
    if x >= 0 and columns[0] <= col < columns[1]:
        _put(cells, col, _COLUMN_BITS[int(x) % 2], value_id, VERTICAL)


def _horizontal_cells(
    cells: dict[int, tuple[int, int, int]],
    ax: float, ay: float, bx: float, by: float, row: int, columns: tuple[int, int], value_id: int,
) -> None:
    """A flat segment: one cell per column it spans, in the row it is in at
    the column's middle; where two neighbouring columns are in different rows
    (the line steps up or down a row) the left one of the pair gets a corner
    in both rows, so the steps join (``──╮`` above ``╰──``)."""
    x0, x1 = min(ax, bx), max(ax, bx)
    start, end = int(x0) // 2, int(x1) // 2  # the segment's columns
    first, last = max(columns[0], start), min(columns[1] - 1, end)
    if by != ay:  # only the columns where the line is within a row of this one
        xs = (ax + (bx - ax) * ((row - 1) * 4 - ay) / (by - ay), ax + (bx - ax) * ((row + 2) * 4 - ay) / (by - ay))
        first, last = max(first, int(min(xs)) // 2 - 1), min(last, int(max(xs)) // 2 + 1)

    def row_of(col: int) -> tuple[int, float]:
        x = min(max(col * 2 + 1.0, x0), x1)
        y = ay + (by - ay) * (x - ax) / (bx - ax)
        return (int(y) // 4 if y >= 0 else -1), y

    previous = row_of(first - 1)[0] if first > start else None
    for col in range(max(0, first), last + 1):
        here, y = row_of(col)
        if here == row:
            _put(cells, col, _ROW_BITS[int(y) % 4], value_id, HORIZONTAL)
        if previous is not None and previous != here and col - 1 >= columns[0]:
            if previous == row:  # the run of this row ends: down or up to the next
                _put(cells, col - 1, _CORNER_BITS, value_id, DOWN_LEFT if here > row else UP_LEFT)
            elif here == row:  # the run of this row starts: from the row above or below
                _put(cells, col - 1, _CORNER_BITS, value_id, UP_RIGHT if previous < row else DOWN_RIGHT)
        previous = here


def _slanted_dots(
    cells: dict[int, tuple[int, int, int]],
    ax: float, ay: float, bx: float, by: float, low: int, columns: tuple[int, int], value_id: int, direction: int,
) -> None:
    """A slanted segment, one sample per dot along its longer axis (consecutive
    samples are neighbouring dots, so the line has no gaps), in this row's four dot rows."""
    high = low + 3
    steps = max(1, math.ceil(max(abs(bx - ax), abs(by - ay))))
    t0 = (low - ay) / (by - ay)
    t1 = (high + 1 - ay) / (by - ay)
    first = max(0, math.floor(min(t0, t1) * steps) - 1)
    last = min(steps, math.ceil(max(t0, t1) * steps) + 1)
    for i in range(first, last + 1):
        y = int(ay + (by - ay) * i / steps)
        if y < low or y > high:
            continue
        x = int(ax + (bx - ax) * i / steps)
        col = x // 2
        if x >= 0 and columns[0] <= col < columns[1]:
            _put(cells, col, _DOT_BITS[x % 2][y % 4], value_id, direction)


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
    """``captured out #2``: the Gradient role and index a node carries, for its top border."""
    for mark, word in _BADGES.items():
        if mark in marks.nodes.get(node_id, ()):
            index = marks.indices.get((node_id, mark))
            return f"{word} #{index}" if index is not None else word
    return ""


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
