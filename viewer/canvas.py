"""The graph canvas: boxes and arrows drawn in a terminal from a real layout.

Two parts. :class:`CanvasGeometry` turns a :class:`~gradview.viewer.layout.Layout`
into terminal cells once per zoom level: which cells each node's box covers
and which braille dots each edge passes through (a cell holds 2 x 4 dots, so
edges keep their curves). :class:`GraphCanvas` is a Textual line-API widget
that paints only the rows on screen, styling each cell from the current
marks when it paints, so stepping to another pass (new marks, same union
layout) repaints without rebuilding the geometry.

Zoom 1 shows full labels (one cell is 6 x 12 points, the size of a Courier
10pt character); below 0.8 boxes shrink to one row with the op's name; below
0.35 each node is a single coloured cell.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click, MouseDown, MouseMove, MouseUp, Resize
from textual.geometry import Offset, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .labels import ELLIPSIS, abbreviate, short_op_name
from .layout import Layout
from .messages import NodeSelected
from .model import DrawGraph, Mark, Marks, NodeRole
from .palette import CANVAS_BACKGROUND, line_style_for, style_for

__all__ = ["CanvasGeometry", "GraphCanvas", "ZOOM_LEVELS", "BoxSpan"]

CELL_WIDTH = 6.0  # points per terminal column at zoom 1 (Courier 10pt)
CELL_HEIGHT = 12.0  # points per terminal row at zoom 1
ZOOM_LEVELS = (0.15, 0.25, 0.35, 0.5, 0.65, 0.8, 1.0, 1.25)
FULL_LABELS = 0.8
COMPACT_BOXES = 0.35

# Braille dot bits by (column in cell, row in cell).
_DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


@dataclass(frozen=True)
class BoxSpan:
    """A node's box in cells: columns ``start`` to ``end`` (exclusive), rows ``top`` to ``bottom``."""

    start: int
    end: int
    top: int
    bottom: int
    node_id: int


_BUCKET = 32  # rows per bucket of the edge-segment and frame indexes
_TILE_COLUMNS = 64  # columns per tile of the edge-segment index


@dataclass
class CanvasGeometry:
    """Cells of a whole union layout at one zoom level.

    Built once per layout and zoom, for every node and edge of the union; a
    step shows a subset, chosen when rows are painted, so stepping between
    passes never rebuilds this. No colours or label text here either: both
    come from the step being shown.
    """

    zoom: float
    columns: int = 0
    rows: int = 0
    boxes: dict[int, list[BoxSpan]] = field(default_factory=dict)  # row -> boxes covering it
    node_cells: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # id -> (col0, row0, col1, row1)
    # Edge segments in dot space (two dots per column, four per row) with the
    # edge they belong to, indexed by buckets of rows.
    segments: list[tuple[float, float, float, float, tuple[int, int, int]]] = field(default_factory=list)
    segment_tiles: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (row, col) tile -> segments
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
        for edge_key, points in layout.edges.items():
            geometry._add_edge(points, sx, sy, edge_key)
        for node_id, box in layout.boxes.items():
            geometry._add_box(node_id, box.x * sx, box.y * sy, box.width * sx, box.height * sy)
        return geometry

    # -- building --------------------------------------------------------------------
    def _add_edge(self, points: list[tuple[float, float]], sx: float, sy: float, edge_key: tuple[int, int, int]) -> None:
        dots = [(x * sx * 2, y * sy * 4) for x, y in points]
        for (ax, ay), (bx, by) in zip(dots, dots[1:], strict=False):
            index = len(self.segments)
            self.segments.append((ax, ay, bx, by, edge_key))
            # The tiles the segment passes through: samples closer together
            # than half a tile side never step over one (a bounding box of
            # tiles would be quadratic for long diagonal edges).
            length = max(abs(bx - ax), abs(by - ay))
            samples = max(1, int(length // 48) + 1)
            tiles: set[tuple[int, int]] = set()
            for i in range(samples + 1):
                x = ax + (bx - ax) * i / samples
                y = ay + (by - ay) * i / samples
                tiles.add((max(0, int(y)) // 4 // _BUCKET, max(0, int(x)) // 2 // _TILE_COLUMNS))
            for tile in tiles:
                self.segment_tiles.setdefault(tile, []).append(index)

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
        shown: set[tuple[int, int, int]] | None = None,
        columns: tuple[int, int] | None = None,
    ) -> dict[int, tuple[int, int]]:
        """Column -> (braille bits, value id) of the dots of the ``shown`` edges
        (all: None) in ``row``, within ``columns`` (start, end) when given."""
        cells: dict[int, tuple[int, int]] = {}
        low, high = row * 4, row * 4 + 3
        first_col, last_col = columns if columns is not None else (0, self.columns)
        candidates: set[int] = set()
        for tile_col in range(max(0, first_col) // _TILE_COLUMNS, max(0, last_col) // _TILE_COLUMNS + 1):
            candidates.update(self.segment_tiles.get((row // _BUCKET, tile_col), ()))
        for index in sorted(candidates):
            ax, ay, bx, by, edge_key = self.segments[index]
            if min(ay, by) > high + 1 or max(ay, by) < low:
                continue
            if shown is not None and edge_key not in shown:
                continue
            steps = max(1, int(max(abs(bx - ax), abs(by - ay))))
            # Only the stretch of the segment inside this row's four dot rows.
            if by != ay:
                t0 = (low - ay) / (by - ay)
                t1 = (high + 1 - ay) / (by - ay)
                first = max(0, math.floor(min(t0, t1) * steps) - 1)
                last = min(steps, math.ceil(max(t0, t1) * steps) + 1)
            else:
                first, last = 0, steps
            value_id = edge_key[2]
            for i in range(first, last + 1):
                y = int(ay + (by - ay) * i / steps)
                if y < low or y > high:
                    continue
                x = int(ax + (bx - ax) * i / steps)
                col = x // 2
                if x < 0 or col < first_col or col >= last_col:
                    continue
                bits, _ = cells.get(col, (0, value_id))
                cells[col] = (bits | _DOT_BITS[x % 2][y % 4], value_id)
        return cells

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
    top one, ``stub``, the fan-out values it reads, into the bottom one) or a
    label line, padded to the box width."""
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


class GraphCanvas(ScrollView, can_focus=True):
    """Scrollable view of one step's graph; arrows pan, ``+``/``-`` zoom, ``0`` fits."""

    DEFAULT_CSS = """
    GraphCanvas {
        background: $surface;
    }
    """

    BINDINGS = [
        Binding("left", "pan(-8, 0)", "Pan", show=False),
        Binding("right", "pan(8, 0)", "Pan", show=False),
        Binding("up", "pan(0, -4)", "Pan", show=False),
        Binding("down", "pan(0, 4)", "Pan", show=False),
        Binding("plus,equals_sign", "zoom(1)", "Zoom in"),
        Binding("minus", "zoom(-1)", "Zoom out"),
        Binding("0", "fit", "Fit"),
        Binding("n", "select_next(1)", "Next node"),
        Binding("N", "select_next(-1)", "Prev node", show=False),
        Binding("c", "follow", "Center"),
    ]

    zoom: reactive[float] = reactive(1.0)

    NodeSelected = NodeSelected  # posted on a click on a node or ``n`` (viewer/messages.py)

    def __init__(self, *, id: str | None = None, theme: str = "dark") -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.layout_data: Layout | None = None
        self.graph: DrawGraph = DrawGraph()
        self.marks: Marks = Marks()
        self.selected: int | None = None
        self.stubs: dict[int, str] = {}  # node id -> fan-out stub text for its bottom border (the app sets it)
        self.theme_name = theme
        self.styles.background = CANVAS_BACKGROUND[theme]
        self.message_text = "laying out…"
        self._geometry: CanvasGeometry | None = None
        self._geometries: dict[tuple[int, float], CanvasGeometry] = {}  # (id of layout, zoom)
        self._shown_edges: set[tuple[int, int, int]] = set()
        self._row_dots: dict[tuple[int, int, int], dict[int, tuple[int, int]]] = {}
        self._styles: dict[tuple[frozenset[Mark], str], Style] = {}
        self._framed_at: tuple[Offset, Size] | None = None  # camera and size when last framed

    # -- content -----------------------------------------------------------------------
    def show(self, layout: Layout | None, graph: DrawGraph, marks: Marks, message: str = "") -> None:
        """Draw ``graph`` placed by ``layout`` (None: only ``message``)."""
        new_layout = layout is not self.layout_data
        self.layout_data = layout
        self.graph = graph
        self.marks = marks
        self.message_text = message
        self._shown_edges = {(e.source, e.target, e.value_id) for e in graph.edges}
        self._row_dots.clear()
        if self.selected is not None and self.selected not in graph.nodes:
            self.selected = None
        if new_layout:
            self._rebuild()
            # A new picture: bring its nodes into view (once the canvas has a
            # size). Within one layout the scroll position stays put, so
            # stepping never moves the camera.
            self._framed_at = None
            self.frame_graph()
        self.refresh()

    def prime(self, layout: Layout, geometry: CanvasGeometry) -> None:
        """Hand over a geometry built elsewhere (the layout worker), so showing
        ``layout`` later does not build it on the UI thread."""
        self._geometries[(id(layout), geometry.zoom)] = geometry

    def frame_graph(self) -> None:
        """Scroll so the drawn nodes are centred (or start at the top left when larger than the view)."""
        if self._geometry is None or not self._geometry.node_cells or not self.size.width:
            return
        cells = [c for n, c in self._geometry.node_cells.items() if n in self.graph.nodes]
        if not cells:
            return
        c0 = min(c[0] for c in cells)
        r0 = min(c[1] for c in cells)
        c1 = max(c[2] for c in cells)
        r1 = max(c[3] for c in cells)
        width, height = self.size.width, self.size.height
        x = (c0 + c1) // 2 - width // 2 if c1 - c0 <= width else c0 - 1
        y = (r0 + r1) // 2 - height // 2 if r1 - r0 <= height else r0 - 1
        # Now, and even before the scrollbars are shown: a deferred scroll
        # waits for a repaint that may not come, an unforced one is refused.
        self.scroll_to(max(0, x), max(0, y), animate=False, immediate=True, force=True)
        self._framed_at = (self.scroll_offset, self.size)

    def on_resize(self, _event: Resize) -> None:
        """A panel opened, closed or moved, or the terminal changed size: frame
        the picture again unless the user has moved the camera since it was framed."""
        framed = self._framed_at
        if framed is None or (framed[0] == self.scroll_offset and framed[1] != self.size):
            self.frame_graph()

    def set_marks(self, marks: Marks) -> None:
        self.marks = marks
        self.refresh()

    # Search matches (viewer/search_bar.py): drawn in reverse video, no colour of their own.
    highlight: frozenset[int] = frozenset()

    def set_highlight(self, nodes: frozenset[int]) -> None:
        """Draw ``nodes`` (search matches) highlighted; an empty set clears it."""
        if nodes != self.highlight:
            self.highlight = nodes
            self.refresh()

    def set_theme(self, theme: str) -> None:
        self.theme_name = theme
        self._styles.clear()
        self.styles.background = CANVAS_BACKGROUND[theme]  # the canvas follows the theme, not $surface
        self.refresh()

    def _rebuild(self) -> None:
        if self.layout_data is None:
            self._geometry = None
            self.virtual_size = Size(0, 0)
            return
        key = (id(self.layout_data), self.zoom)
        geometry = self._geometries.get(key)
        if geometry is None:
            if len(self._geometries) > 16:
                self._geometries.clear()
            geometry = self._geometries[key] = CanvasGeometry.build(self.layout_data, self.zoom)
        self._geometry = geometry
        self._row_dots.clear()
        self.virtual_size = Size(geometry.columns, geometry.rows)

    def watch_zoom(self, old: float, new: float) -> None:
        if old == new or self.layout_data is None:
            return
        keep = self.selected
        self._rebuild()
        if keep is not None:
            self.call_after_refresh(self.action_follow)
        self.refresh()

    @property
    def geometry(self) -> CanvasGeometry | None:
        return self._geometry

    # -- painting ------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        geometry = self._geometry
        if geometry is None:
            text = self.message_text if y == 0 else ""
            plain = Style(color=style_for(None, self.theme_name).text)
            return Strip([Segment(text.ljust(width)[:width], plain)]).apply_style(self._background_style())
        scroll_x, scroll_y = self.scroll_offset
        row = y + int(scroll_y)
        start = int(scroll_x)
        cells: list[str] = [" "] * width
        styles: list[Style | None] = [None] * width
        clusters = self.graph.clusters
        for c0, r0, c1, r1, key in geometry.frames_in_row(row):
            cluster = clusters.get(key)
            if cluster is not None:
                self._put(cells, styles, start, c0, _frame_text(row, c0, r0, c1, r1, cluster.title), self._frame_style())
                if r0 < row < r1:
                    self._put(cells, styles, start, c1 - 1, "┆", self._frame_style())
        dots_key = (row, start, width)
        dots = self._row_dots.get(dots_key)
        if dots is None:
            if len(self._row_dots) > 4096:
                self._row_dots.clear()
            dots = self._row_dots[dots_key] = geometry.dots_in_row(row, self._shown_edges, (start, start + width))
        for col, (bits, value_id) in dots.items():
            index = col - start
            if 0 <= index < width and _line_shows(self._edge_line(value_id), col, row):
                cells[index] = chr(0x2800 + bits)
                styles[index] = self._edge_style(value_id)
        nodes = self.graph.nodes
        for span in geometry.boxes.get(row, ()):
            node = nodes.get(span.node_id)
            if node is None or span.end <= start or span.start >= start + width:
                continue
            badge = badge_for(span.node_id, self.marks) if row == span.top else ""
            stub = self.stubs.get(span.node_id, "") if row == span.bottom - 1 else ""
            text = box_row_text(span, row, node.label, node.role, geometry.zoom, badge, stub)
            self._put(cells, styles, start, span.start, text, self._node_style(span.node_id))
        # Under everything: the theme's background (line-API strips do not get the widget's).
        return Strip(list(_segments(cells, styles))).apply_style(self._background_style())

    def _put(self, cells: list[str], styles: list[Style | None], start: int, col: int, text: str, style: Style) -> None:
        begin = col - start
        end = min(len(cells), begin + len(text))
        skip = max(0, -begin)
        begin = max(0, begin)
        if begin >= end:
            return
        cells[begin:end] = text[skip : skip + end - begin]
        styles[begin:end] = [style] * (end - begin)

    def _node_style(self, node_id: int) -> Style:
        marks = set(self.marks.nodes.get(node_id, ()))
        if node_id == self.selected:
            marks.add(Mark.SELECTED)
        matched = node_id in self.highlight
        key = (frozenset(marks), "match" if matched else "node")
        style = self._styles.get(key)
        if style is None:
            palette = style_for(marks, self.theme_name)
            dim = Mark.REMOVED in marks and len(marks) == 1
            style = Style(color=palette.text, bgcolor=palette.fill, dim=dim, bold=Mark.SELECTED in marks,
                          reverse=matched and Mark.SELECTED not in marks)
            self._styles[key] = style
        return style

    def _edge_style(self, value_id: int) -> Style:
        marks = frozenset(self.marks.values.get(value_id, ()))
        key = (marks, "edge")
        style = self._styles.get(key)
        if style is None:
            style = Style(color=style_for(set(marks), self.theme_name).stroke)
            self._styles[key] = style
        return style

    def _background_style(self) -> Style:
        key = (frozenset(), "background")
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = Style(bgcolor=CANVAS_BACKGROUND[self.theme_name])
        return style

    def _edge_line(self, value_id: int) -> str:
        marks = self.marks.values.get(value_id)
        return line_style_for(marks) if marks else "solid"

    def _frame_style(self) -> Style:
        key = (frozenset(), "frame")
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = Style(color=style_for(None, self.theme_name).stroke, dim=True)
        return style

    # -- interaction ----------------------------------------------------------------------
    def action_pan(self, dx: int, dy: int) -> None:
        self.scroll_to(self.scroll_x + dx, self.scroll_y + dy, animate=False)

    def action_zoom(self, direction: int) -> None:
        levels = ZOOM_LEVELS
        current = min(range(len(levels)), key=lambda i: abs(levels[i] - self.zoom))
        self.zoom = levels[max(0, min(len(levels) - 1, current + direction))]

    def action_fit(self) -> None:
        """The largest zoom level at which the whole graph fits the view."""
        if self.layout_data is None or self.size.width == 0:
            return
        fitting = [
            z for z in ZOOM_LEVELS
            if self.layout_data.width * z / CELL_WIDTH <= self.size.width
            and self.layout_data.height * z / CELL_HEIGHT <= self.size.height
        ]
        self.zoom = max(fitting) if fitting else ZOOM_LEVELS[0]
        self.scroll_to(0, 0, animate=False)

    def select(self, node_id: int | None, follow: bool = True) -> None:
        self.selected = node_id
        self.refresh()
        if follow and node_id is not None:
            self.action_follow()
        self.post_message(self.NodeSelected(node_id))

    def action_select_next(self, direction: int) -> None:
        order = [n for n in self.graph.nodes if self._geometry is not None and n in self._geometry.node_cells]
        if not order:
            return
        if self.selected not in order:
            self.select(order[0 if direction > 0 else -1])
            return
        position = order.index(self.selected)
        self.select(order[(position + direction) % len(order)])

    def action_follow(self) -> None:
        """Scroll so the selected node is in the middle of the view."""
        if self._geometry is None or self.selected is None:
            return
        cells = self._geometry.node_cells.get(self.selected)
        if cells is None:
            return
        c0, r0, c1, r1 = cells
        self.scroll_to(
            max(0, (c0 + c1) // 2 - self.size.width // 2),
            max(0, (r0 + r1) // 2 - self.size.height // 2),
            animate=False,
        )

    def on_mouse_down(self, event: MouseDown) -> None:
        self._drag_from = (event.screen_x, event.screen_y, self.scroll_x, self.scroll_y)
        self._dragged = False

    def on_mouse_move(self, event: MouseMove) -> None:
        """Dragging with a button held pans the view, like a map."""
        start = getattr(self, "_drag_from", None)
        if start is None or not event.button:
            return
        x0, y0, sx, sy = start
        dx, dy = event.screen_x - x0, event.screen_y - y0
        if dx or dy:
            self._dragged = True
            self.scroll_to(max(0, sx - dx), max(0, sy - dy), animate=False)

    def on_mouse_up(self, _event: MouseUp) -> None:
        self._drag_from = None

    def on_click(self, event: Click) -> None:
        if getattr(self, "_dragged", False):
            self._dragged = False
            return  # the end of a drag, not a click on a node
        if self._geometry is None:
            return
        col = event.x + int(self.scroll_x)
        row = event.y + int(self.scroll_y)
        node = self._geometry.node_at(col, row, self.graph.nodes)
        if node is not None:
            self.select(node, follow=False)


def _line_shows(line: str, col: int, row: int) -> bool:
    """Whether an edge cell at (col, row) is drawn: dotted edges skip every
    other cell, dashed ones two of every four (AutogradZero states share a hue)."""
    if line == "dotted":
        return (col + row) % 2 == 0
    if line == "dashed":
        return (col + row) % 4 < 2
    return True


def _frame_text(row: int, c0: int, r0: int, c1: int, r1: int, title: str) -> str:
    """A cluster frame's part in ``row``: the top edge with the title, the bottom edge, or the left side."""
    width = max(2, c1 - c0)
    if row == r0:
        caption = f" {title} "[: max(0, width - 2)]
        return "┄" + caption + "┄" * max(0, width - 1 - len(caption))
    if row == r1:
        return "┄" * width
    return "┆"


def _segments(cells: list[str], styles: list[Style | None]) -> Iterable[Segment]:
    """Runs of equally styled cells as Segments.

    An unstyled blank looks the same under any style without a background,
    so it joins the run around it: a row of scattered edge dots then makes a
    few long segments instead of one per dot (Textual's compositor pays per
    segment on every repaint)."""
    if not cells:
        return
    run_start = 0
    run_style = styles[0]
    for index in range(1, len(cells) + 1):
        if index < len(cells):
            style = styles[index]
            if style is run_style:
                continue
            # Unstyled cells are always blanks (everything drawn has a style).
            if style is None and (run_style is None or run_style.bgcolor is None):
                continue
            if run_style is None and style.bgcolor is None:
                run_style = style  # leading blanks take the style of what follows
                continue
        yield Segment("".join(cells[run_start:index]), run_style)
        if index < len(cells):
            run_start = index
            run_style = styles[index]
