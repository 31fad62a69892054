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

from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .layout import Layout
from .model import DrawGraph, Mark, Marks, NodeRole
from .palette import style_for

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
    """One row of one node's box: columns ``start`` to ``end`` (exclusive)."""

    start: int
    end: int
    node_id: int
    text: str  # what the row shows, already padded to end - start cells


@dataclass
class CanvasGeometry:
    """Cells of a layout at one zoom level (no colours: those come from the marks)."""

    zoom: float
    columns: int = 0
    rows: int = 0
    boxes: dict[int, list[BoxSpan]] = field(default_factory=dict)  # row -> spans
    edge_dots: dict[int, dict[int, tuple[int, int]]] = field(default_factory=dict)  # row -> col -> (bits, value id)
    node_cells: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # id -> (col0, row0, col1, row1)
    cluster_frames: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)  # row -> (col, end, text)

    @classmethod
    def build(cls, layout: Layout, graph: DrawGraph, zoom: float) -> CanvasGeometry:
        """Cells for the nodes of ``graph`` (a subset of the layout's nodes) at ``zoom``."""
        geometry = cls(zoom)
        sx = zoom / CELL_WIDTH
        sy = zoom / CELL_HEIGHT
        geometry.columns = max(1, int(layout.width * sx) + 2)
        geometry.rows = max(1, int(layout.height * sy) + 2)
        for key, (x0, y0, x1, y1) in layout.clusters.items():
            if not _cluster_shown(key, graph):
                continue
            geometry._add_frame(int(x0 * sx), int(y0 * sy), int(x1 * sx), int(y1 * sy), graph.clusters[key].title)
        shown = graph.nodes
        for edge in graph.edges:
            points = layout.edges.get((edge.source, edge.target, edge.value_id))
            if points is None or edge.source not in shown or edge.target not in shown:
                continue
            geometry._add_edge(points, sx, sy, edge.value_id)
        for node_id, node in shown.items():
            box = layout.boxes.get(node_id)
            if box is not None:
                geometry._add_box(node_id, node.label, node.role, box.x * sx, box.y * sy, box.width * sx, box.height * sy)
        return geometry

    # -- building --------------------------------------------------------------------
    def _add_edge(self, points: list[tuple[float, float]], sx: float, sy: float, value_id: int) -> None:
        # Dot space: two dots per column, four per row.
        dots = [(x * sx * 2, y * sy * 4) for x, y in points]
        for (ax, ay), (bx, by) in zip(dots, dots[1:], strict=False):
            steps = max(1, int(max(abs(bx - ax), abs(by - ay))))
            for i in range(steps + 1):
                x = int(ax + (bx - ax) * i / steps)
                y = int(ay + (by - ay) * i / steps)
                if x < 0 or y < 0:
                    continue
                row, col = y // 4, x // 2
                cells = self.edge_dots.setdefault(row, {})
                bits, _ = cells.get(col, (0, value_id))
                cells[col] = (bits | _DOT_BITS[x % 2][y % 4], value_id)

    def _add_box(self, node_id: int, label: str, role: NodeRole, cx: float, cy: float, w: float, h: float) -> None:
        lines = [line for line in label.splitlines() if line] or [""]
        if self.zoom < COMPACT_BOXES:
            col, row = int(cx), int(cy)
            self._span(row, col, col + 1, node_id, "■" if role is not NodeRole.INPUT else "●")
            self.node_cells[node_id] = (col, row, col + 1, row + 1)
            return
        if self.zoom < FULL_LABELS:
            name = _short_name(lines[0])
            width = max(3, min(int(w) + 1, len(name) + 2))
            col0 = int(cx - width / 2)
            row = int(cy)
            self._span(row, col0, col0 + width, node_id, ("[" + name[: width - 2] + "]").ljust(width))
            self.node_cells[node_id] = (col0, row, col0 + width, row + 1)
            return
        width = max(int(round(w)), max(len(line) for line in lines) + 2, 4)
        height = len(lines) + 2
        col0 = int(round(cx - width / 2))
        row0 = int(round(cy - height / 2))
        inner = width - 2
        round_box = role in (NodeRole.INPUT, NodeRole.RETURN)
        top, bottom = ("╭", "╮"), ("╰", "╯")
        if not round_box:
            top, bottom = ("┌", "┐"), ("└", "┘")
        self._span(row0, col0, col0 + width, node_id, top[0] + "─" * inner + top[1])
        for offset, line in enumerate(lines):
            text = line if len(line) <= inner else line[: inner - 1] + "…"
            self._span(row0 + 1 + offset, col0, col0 + width, node_id, "│" + text.center(inner) + "│")
        self._span(row0 + height - 1, col0, col0 + width, node_id, bottom[0] + "─" * inner + bottom[1])
        self.node_cells[node_id] = (col0, row0, col0 + width, row0 + height)
        self.columns = max(self.columns, col0 + width + 1)
        self.rows = max(self.rows, row0 + height + 1)

    def _span(self, row: int, start: int, end: int, node_id: int, text: str) -> None:
        if row < 0 or start < 0:
            return
        self.boxes.setdefault(row, []).append(BoxSpan(start, end, node_id, text))

    def _add_frame(self, c0: int, r0: int, c1: int, r1: int, title: str) -> None:
        width = max(2, c1 - c0)
        caption = f" {title} "[: max(0, width - 2)]
        self.cluster_frames.setdefault(r0, []).append((c0, c0 + width, "┄" + caption + "┄" * (width - 1 - len(caption))))
        self.cluster_frames.setdefault(r1, []).append((c0, c0 + width, "┄" * width))
        for row in range(r0 + 1, r1):
            self.cluster_frames.setdefault(row, []).append((c0, c0 + 1, "┆"))
            self.cluster_frames.setdefault(row, []).append((c0 + width - 1, c0 + width, "┆"))

    # -- queries ------------------------------------------------------------------------
    def node_at(self, col: int, row: int) -> int | None:
        for span in self.boxes.get(row, ()):
            if span.start <= col < span.end:
                return span.node_id
        return None


def _cluster_shown(key: str, graph: DrawGraph) -> bool:
    return key in graph.clusters


def _short_name(first_line: str) -> str:
    """``aten::matmul`` -> ``matmul``: compact boxes have room for the op name only."""
    return first_line.rsplit("::", 1)[-1]


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

    class NodeSelected(Message):
        """The user selected a node (by click or by ``n``)."""

        def __init__(self, node_id: int | None) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, *, id: str | None = None, theme: str = "dark") -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.layout_data: Layout | None = None
        self.graph: DrawGraph = DrawGraph()
        self.marks: Marks = Marks()
        self.edge_marks: dict[int, set[Mark]] = {}
        self.selected: int | None = None
        self.theme_name = theme
        self.message_text = "laying out…"
        self._geometry: CanvasGeometry | None = None
        self._styles: dict[tuple[frozenset[Mark], str], Style] = {}

    # -- content -----------------------------------------------------------------------
    def show(self, layout: Layout | None, graph: DrawGraph, marks: Marks, message: str = "") -> None:
        """Draw ``graph`` placed by ``layout`` (None: only ``message``)."""
        new_layout = layout is not self.layout_data
        geometry_changed = new_layout or set(graph.nodes) != set(self.graph.nodes)
        self.layout_data = layout
        self.graph = graph
        self.marks = marks
        self.message_text = message
        if self.selected is not None and self.selected not in graph.nodes:
            self.selected = None
        if geometry_changed:
            self._rebuild()
        if new_layout:
            # A new picture: bring its nodes into view. Within one layout the
            # scroll position stays put, so stepping never moves the camera.
            self.call_after_refresh(self.frame_graph)
        self.refresh()

    def frame_graph(self) -> None:
        """Scroll so the drawn nodes are centred (or start at the top left when larger than the view)."""
        if self._geometry is None or not self._geometry.node_cells:
            return
        cells = self._geometry.node_cells.values()
        c0 = min(c[0] for c in cells)
        r0 = min(c[1] for c in cells)
        c1 = max(c[2] for c in cells)
        r1 = max(c[3] for c in cells)
        width, height = self.size.width, self.size.height
        x = (c0 + c1) // 2 - width // 2 if c1 - c0 <= width else c0 - 1
        y = (r0 + r1) // 2 - height // 2 if r1 - r0 <= height else r0 - 1
        self.scroll_to(max(0, x), max(0, y), animate=False)

    def set_marks(self, marks: Marks) -> None:
        self.marks = marks
        self.refresh()

    def set_theme(self, theme: str) -> None:
        self.theme_name = theme
        self._styles.clear()
        self.refresh()

    def _rebuild(self) -> None:
        if self.layout_data is None:
            self._geometry = None
            self.virtual_size = Size(0, 0)
            return
        self._geometry = CanvasGeometry.build(self.layout_data, self.graph, self.zoom)
        self.virtual_size = Size(self._geometry.columns, self._geometry.rows)

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
            return Strip([Segment(text.ljust(width)[:width])])
        scroll_x, scroll_y = self.scroll_offset
        row = y + int(scroll_y)
        start = int(scroll_x)
        cells: list[str] = [" "] * width
        styles: list[Style | None] = [None] * width
        for c0, _end, text in geometry.cluster_frames.get(row, ()):
            self._put(cells, styles, start, c0, text, self._frame_style())
        for col, (bits, value_id) in geometry.edge_dots.get(row, {}).items():
            index = col - start
            if 0 <= index < width:
                cells[index] = chr(0x2800 + bits)
                styles[index] = self._edge_style(value_id)
        for span in geometry.boxes.get(row, ()):
            if span.end <= start or span.start >= start + width:
                continue
            self._put(cells, styles, start, span.start, span.text, self._node_style(span.node_id))
        return Strip(list(_segments(cells, styles)))

    def _put(self, cells: list[str], styles: list[Style | None], start: int, col: int, text: str, style: Style) -> None:
        for offset, ch in enumerate(text):
            index = col + offset - start
            if 0 <= index < len(cells):
                cells[index] = ch
                styles[index] = style

    def _node_style(self, node_id: int) -> Style:
        marks = set(self.marks.nodes.get(node_id, ()))
        if node_id == self.selected:
            marks.add(Mark.SELECTED)
        key = (frozenset(marks), "node")
        style = self._styles.get(key)
        if style is None:
            palette = style_for(marks, self.theme_name)
            dim = Mark.REMOVED in marks and len(marks) == 1
            style = Style(color=palette.text, bgcolor=palette.fill, dim=dim, bold=Mark.SELECTED in marks)
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

    def on_click(self, event: Click) -> None:
        if self._geometry is None:
            return
        col = event.x + int(self.scroll_x)
        row = event.y + int(self.scroll_y)
        node = self._geometry.node_at(col, row)
        if node is not None:
            self.select(node, follow=False)


def _segments(cells: list[str], styles: list[Style | None]) -> Iterable[Segment]:
    """Runs of equally styled cells as Segments."""
    if not cells:
        return
    run_start = 0
    for index in range(1, len(cells) + 1):
        if index == len(cells) or styles[index] is not styles[run_start]:
            yield Segment("".join(cells[run_start:index]), styles[run_start])
            run_start = index
