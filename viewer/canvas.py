"""The graph canvas: boxes and arrows drawn in a terminal from a real layout.

:class:`~gradview.viewer.canvas_geometry.CanvasGeometry` turns a layout into
cells once per zoom; :class:`GraphCanvas` is a Textual line-API widget that
paints only the rows on screen, styling each cell from the current marks
when it paints, so stepping to another pass (new marks, same union layout)
repaints without rebuilding the geometry.

The camera (:mod:`~gradview.viewer.camera`): each view (camera key, the
layout key) keeps its own zoom and scroll offset, restored when the user
comes back; stepping within a view never moves it. A view's first showing
centres the graph's outputs or first change at a readable zoom, or the
whole drawing when it fits readably. Zoom keeps the selection (or the centre
of the view) on the same screen cell; fit fills the canvas.

Zoom 1 shows full labels (one cell is 6 x 12 points, the size of a Courier
10pt character); below 0.8 boxes shrink to one row with the op's name; below
0.35 each node is a single coloured cell.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Hashable, Iterable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click, MouseDown, MouseMove, MouseUp, Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .camera import (
    CELL_HEIGHT,
    CELL_WIDTH,
    FIRST_VIEW_MAX,
    MAX_ZOOM,
    ZOOM_LEVELS,
    Camera,
    anchored_scroll,
    centred_scroll,
    fit_zoom,
    zoom_step,
)
from .canvas_geometry import (
    COMPACT_BOXES,
    FULL_LABELS,
    BoxSpan,
    CanvasGeometry,
    badge_for,
    box_row_text,
    edge_glyph,
    edge_label_cells,
)
from .graph_analysis import initial_target
from .layout import Layout
from .messages import NodeSelected
from .model import DrawGraph, Mark, Marks
from .palette import CANVAS_BACKGROUND, line_style_for, style_for

__all__ = [
    "CanvasGeometry",
    "GraphCanvas",
    "ZOOM_LEVELS",
    "BoxSpan",
    "CELL_WIDTH",
    "CELL_HEIGHT",
    "FULL_LABELS",
    "COMPACT_BOXES",
    "box_row_text",
    "badge_for",
]

_CAMERAS_KEPT = 64
_FIT_TRIES = 6  # rounding boxes to cells can overshoot the estimate: shrink and retry

SMALL_GRAPH = 40  # boxes: a first view shows such a graph whole while op names stay readable

@functools.lru_cache(maxsize=8)
def _wrapped(text: str, width: int) -> tuple[str, ...]:
    """``text`` in lines of at most ``width`` columns, broken between words."""
    return tuple(textwrap.wrap(text, max(width, 1))) or ("",)


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
        Binding("enter", "app.collapse_group", "Expand", show=False),
    ]

    NodeSelected = NodeSelected  # posted on a click on a node or ``n`` (viewer/messages.py)

    def __init__(self, *, id: str | None = None, theme: str = "dark") -> None:  # Textual's name
        super().__init__(id=id)
        self.layout_data: Layout | None = None
        self.graph: DrawGraph = DrawGraph()
        self.marks: Marks = Marks()
        self.selected: int | None = None
        self.stubs: dict[int, str] = {}  # node id -> fan-out stub text for its bottom border (the app sets it)
        # The drawing is an overview (a model's folded modules): its first view shows it
        # whole even where boxes keep only their first line (the app sets it).
        self.overview = False
        self.zoom = 1.0
        self.notice = ""  # the last thing the camera told the user (fit refused to make dots)
        self.theme_name = theme
        self.styles.background = CANVAS_BACKGROUND[theme]
        self.message_text = "laying out…"
        self._geometry: CanvasGeometry | None = None
        self._geometries: dict[tuple[int, float], CanvasGeometry] = {}  # (id of layout, zoom)
        self._shown_edges: frozenset[tuple[int, int, int]] = frozenset()
        self._row_dots: dict[tuple[int, int, int], dict[int, tuple[int, int, int]]] = {}
        self._styles: dict[tuple[frozenset[Mark], str], Style] = {}
        # (camera key, id of the layout) -> where that view was left: a view
        # shown with another layout for a while (a collapsed or focused
        # picture) gets its own camera back when its plain layout returns.
        self._cameras: dict[tuple[Hashable, int], Camera] = {}
        self._camera_key: Hashable | None = None
        self._first_view_due = False  # a first view waits for the canvas to get a size
        self._framed_at: tuple[tuple[int, int], Size] | None = None  # camera and size of an untouched first view
        self._framed_whole = False  # that first view shows the whole drawing (then it follows the step)
        self._step_frames: tuple[CanvasGeometry, DrawGraph, dict[str, tuple[int, int, int, int]]] | None = None
        self._edge_labels: tuple[CanvasGeometry, DrawGraph, dict[int, list[tuple[int, str, int]]]] | None = None
        self._pad = (0, 0)  # columns and rows of margin before the drawing (see _scroll_now)

    # -- content -----------------------------------------------------------------------
    def show(
        self,
        layout: Layout | None,
        graph: DrawGraph,
        marks: Marks,
        message: str = "",
        camera_key: Hashable | None = None,
    ) -> None:
        """Draw ``graph`` placed by ``layout`` (None: only ``message``) with the
        camera of ``camera_key`` (the layout key; None: one camera per layout)."""
        key = camera_key if camera_key is not None else ("layout", id(layout))
        new_view = key != self._camera_key or layout is not self.layout_data
        if new_view:
            self._save_camera()
        self._camera_key = key
        self.layout_data = layout
        self.graph = graph
        self.marks = marks
        self.message_text = message
        self._shown_edges = graph.edge_keys()
        self._row_dots.clear()
        if self.selected is not None and self.selected not in graph.nodes:
            self.selected = None
        if new_view:
            camera = self._cameras.get((key, id(layout)))
            if layout is not None and camera is not None and camera.layout is layout:
                self._restore(camera)
            else:
                self.frame_graph()
        elif self._framed_whole and self._untouched() and layout is not None:
            # A whole first view the user has not moved follows the step: each
            # step's picture fitted to what that step shows (a late step's few
            # nodes are not lost in the union's space, an early one's not cut).
            self.frame_graph()
        self.refresh()

    def _untouched(self) -> bool:
        framed = self._framed_at
        return framed is not None and framed[0] == self.camera_offset and framed[1] == self.size

    def prime(self, layout: Layout, geometry: CanvasGeometry) -> None:
        """Hand over a geometry built elsewhere (the layout worker), so showing
        ``layout`` later does not build it on the UI thread."""
        self._geometries[(id(layout), geometry.zoom)] = geometry

    def camera(self, key: Hashable, layout: Layout) -> Camera | None:
        """The camera stored for the view ``key`` drawn by ``layout`` (the view
        on screen's is stored when it is left)."""
        camera = self._cameras.get((key, id(layout)))
        return camera if camera is not None and camera.layout is layout else None

    def _save_camera(self) -> None:
        if self.layout_data is None or self._geometry is None or self._first_view_due:
            return
        x, y = self.camera_offset
        key = (self._camera_key, id(self.layout_data))
        self._cameras.pop(key, None)
        if len(self._cameras) >= _CAMERAS_KEPT:  # each holds its layout: drop the longest unused
            del self._cameras[next(iter(self._cameras))]
        self._cameras[key] = Camera(self.zoom, x, y, self.layout_data)

    def _restore(self, camera: Camera) -> None:
        self._first_view_due = False
        self._framed_at = None
        self.zoom = camera.zoom
        self._rebuild()
        self._scroll_now(camera.scroll_x, camera.scroll_y)

    @property
    def camera_offset(self) -> tuple[int, int]:
        """The cell at the view's top left: the scroll offset, negative where the
        drawing is shifted right or down (to centre it, or to keep a point put)."""
        return int(self.scroll_x) - self._pad[0], int(self.scroll_y) - self._pad[1]

    def _scroll_now(self, x: float, y: float) -> None:
        """Put cell (``x``, ``y``) at the top left. Textual scrolls only from 0:
        the rest (at most half the view) is a margin painted before the drawing."""
        x, y = round(x), round(y)
        self._pad = (min(max(0, -x), self.size.width // 2), min(max(0, -y), self.size.height // 2))
        self._row_dots.clear()
        # Now, and even before the scrollbars are shown: a deferred scroll
        # waits for a repaint that may not come, an unforced one is refused.
        self.scroll_to(max(0, x), max(0, y), animate=False, immediate=True, force=True)
        self.refresh()

    def frame_graph(self) -> None:
        """The first view of a layout: the whole drawing centred when it fits at
        a zoom with full labels, else zoom 1 centred on the graph's first change
        or its outputs (graph_analysis.initial_target), or on the selection if
        the drawing has it, never an empty corner."""
        self._framed_at = None
        if self.layout_data is None:
            self._rebuild()
            return
        if not self.size.width or not self.size.height:
            self._first_view_due = True  # on_resize frames it
            self._rebuild()
            return
        self._first_view_due = False
        fit = self._fit_zoom()
        # Whole, at a zoom that names every op, rather than a corner at zoom 1: an
        # overview (a model's modules), and any graph small enough to read so.
        # (With a selection in it, a group just folded or a focus, the selection comes first.)
        whole = self.overview or (len(self.graph.nodes) <= SMALL_GRAPH and self.selected not in self.graph.nodes)
        self._framed_whole = False
        if fit >= FULL_LABELS or (whole and fit >= COMPACT_BOXES):
            self._set_zoom(min(fit, FIRST_VIEW_MAX))
            self._centre_drawing()
            self._framed_whole = True
        elif self.overview:
            # A model's modules that do not fit even with one line per box: as many
            # as fit with their names, from the model's input down.
            self._set_zoom(COMPACT_BOXES)
            self._show_top()
        else:
            self._set_zoom(1.0)
            # The selection when there is one (a group just folded into a box,
            # a focus around a node), else the graph's first change or outputs.
            target = self.selected if self.selected in self.graph.nodes else initial_target(self.graph, self.marks)
            centre = self._geometry.node_centre(target) if self._geometry is not None and target is not None else None
            if centre is None:
                self._centre_drawing()
            else:
                self._scroll_now(*centred_scroll(centre, self.size.width, self.size.height))
        self._framed_at = (self.camera_offset, self.size)

    def on_resize(self, _event: Resize) -> None:
        """A panel opened, closed or moved, or the terminal changed size: frame
        the first view again unless the user has moved the camera since."""
        framed = self._framed_at
        if self._first_view_due or (framed is not None and framed[0] == self.camera_offset and framed[1] != self.size):
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

    def _geometry_at(self, zoom: float) -> CanvasGeometry:
        assert self.layout_data is not None
        key = (id(self.layout_data), zoom)
        geometry = self._geometries.get(key)
        if geometry is None:
            if len(self._geometries) > 16:
                self._geometries.clear()
            geometry = self._geometries[key] = CanvasGeometry.build(self.layout_data, zoom)
        return geometry

    def _rebuild(self) -> None:
        if self.layout_data is None:
            self._geometry = None
            self.virtual_size = Size(0, 0)
            return
        geometry = self._geometry = self._geometry_at(self.zoom)
        self._row_dots.clear()
        # Half a view of room past the drawing's far sides, as _scroll_now
        # gives before its near ones: zoom and centring keep a point put there too.
        self.virtual_size = Size(geometry.columns + self.size.width // 2, geometry.rows + self.size.height // 2)

    def _set_zoom(self, zoom: float) -> None:
        self.zoom = zoom
        self._rebuild()
        self.refresh()

    @property
    def geometry(self) -> CanvasGeometry | None:
        return self._geometry

    # -- the camera ----------------------------------------------------------------------
    def _drawn_cells(self, geometry: CanvasGeometry) -> tuple[int, int, int, int] | None:
        """(col0, row0, col1, row1), ends exclusive, around the drawn nodes and frames."""
        around = geometry.cells_around(self.graph.nodes)
        spans = [around] if around is not None else []
        spans += [(c0, r0, c1, r1 + 1) for c0, r0, c1, r1 in self._frames(geometry).values()]
        if not spans:
            return None
        return (
            min(s[0] for s in spans), min(s[1] for s in spans), max(s[2] for s in spans), max(s[3] for s in spans)
        )

    def fits_readably(self) -> bool:
        """Does the drawing on screen fit the canvas whole with every label line shown?"""
        return self.layout_data is not None and bool(self.size.width) and self._fit_zoom() >= FULL_LABELS

    def _fit_zoom(self) -> float:
        """The largest zoom (at most MAX_ZOOM) at which the drawn nodes fit the
        view with a cell to spare each way; it may be below the zoom levels."""
        if self.layout_data is None:
            return 1.0
        columns, rows = self.size.width, self.size.height
        geometry = self._geometry_at(1.0)
        bounds = self._drawn_cells(geometry)
        if bounds is None:
            return 1.0
        c0, r0, c1, r1 = bounds
        zoom = min(MAX_ZOOM, fit_zoom((c1 - c0) * CELL_WIDTH, (r1 - r0) * CELL_HEIGHT, columns, rows))
        for _ in range(_FIT_TRIES):  # boxes rounded to whole cells: check, shrink if over
            if zoom < COMPACT_BOXES:
                break
            cells = self._drawn_cells(self._geometry_at(zoom))
            if cells is None or (cells[2] - cells[0] <= columns - 2 and cells[3] - cells[1] <= rows - 2):
                break
            zoom = zoom * min((columns - 2) / (cells[2] - cells[0]), (rows - 2) / (cells[3] - cells[1]), 0.95)
        return zoom

    def _show_top(self) -> None:
        """Scroll to the top of the drawing, centred across."""
        bounds = self._drawn_cells(self._geometry) if self._geometry is not None else None
        if bounds is None:
            self._scroll_now(0, 0)
            return
        c0, r0, c1, _ = bounds
        self._scroll_now((c0 + c1) // 2 - self.size.width // 2, r0 - 1)

    def _centre_drawing(self) -> None:
        bounds = self._drawn_cells(self._geometry) if self._geometry is not None else None
        if bounds is None:
            self._scroll_now(0, 0)
            return
        c0, r0, c1, r1 = bounds
        self._scroll_now(*centred_scroll(((c0 + c1) / 2, (r0 + r1) / 2), self.size.width, self.size.height))

    def _zoom_to(self, zoom: float) -> None:
        """Zoom keeping the selection (when on screen) or the centre of the view on its screen cell."""
        old, old_zoom = self._geometry, self.zoom
        x, y = self.camera_offset
        width, height = self.size.width, self.size.height
        before = old.node_centre(self.selected) if old is not None and self.selected is not None else None
        if before is not None and not (x <= before[0] < x + width and y <= before[1] < y + height):
            before = None  # off screen: keep the centre instead
        self._set_zoom(zoom)
        after = self._geometry.node_centre(self.selected) if before is not None and self._geometry else None
        if before is None or after is None:
            ratio = zoom / old_zoom
            before = (x + width / 2, y + height / 2)
            after = (before[0] * ratio, before[1] * ratio)
        self._framed_at = None
        self._scroll_now(*anchored_scroll((x, y), before, after))

    def _frames(self, geometry: CanvasGeometry) -> dict[str, tuple[int, int, int, int]]:
        """The step's frames (:meth:`CanvasGeometry.step_frames`), computed once per drawing and geometry."""
        cache = self._step_frames
        if cache is not None and cache[0] is geometry and cache[1] is self.graph:
            return cache[2]
        frames = geometry.step_frames(self.graph)
        self._step_frames = (geometry, self.graph, frames)
        return frames

    def _labels(self, geometry: CanvasGeometry) -> dict[int, list[tuple[int, str, int]]]:
        """The run values on the edges (after ``r``), placed once per drawing and geometry."""
        cache = self._edge_labels
        if cache is not None and cache[0] is geometry and cache[1] is self.graph:
            return cache[2]
        labels = {}
        if self.graph.edge_values and self.layout_data is not None:
            labels = edge_label_cells(geometry, self.layout_data, self.graph, self._frames(geometry))
        self._edge_labels = (geometry, self.graph, labels)
        return labels

    # -- painting ------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        geometry = self._geometry
        if geometry is None:
            lines = _wrapped(self.message_text, width)  # a reason can be long: every word shows
            text = lines[y] if y < len(lines) else ""
            plain = Style(color=style_for(None, self.theme_name).text)
            return Strip([Segment(text.ljust(width)[:width], plain)]).apply_style(self._background_style())
        start, top = self.camera_offset
        row = y + top
        cells: list[str] = [" "] * width
        styles: list[Style | None] = [None] * width
        clusters = self.graph.clusters
        step_frames = self._frames(geometry)
        for _, _, _, _, key in geometry.frames_in_row(row):
            cluster = clusters.get(key)
            found = step_frames.get(key)
            if cluster is not None and found is not None and found[1] <= row <= found[3]:
                c0, r0, c1, r1 = found
                self._put(cells, styles, start, c0, _frame_text(row, c0, r0, c1, r1, cluster.title), self._frame_style())
                if r0 < row < r1:
                    self._put(cells, styles, start, c1 - 1, "┆", self._frame_style())
        dots_key = (row, start, width)
        dots = self._row_dots.get(dots_key)
        if dots is None:
            if len(self._row_dots) > 4096:
                self._row_dots.clear()
            dots = self._row_dots[dots_key] = geometry.dots_in_row(row, self._shown_edges, (start, start + width))
        for col, (bits, value_id, directions) in dots.items():
            index = col - start
            if 0 <= index < width:
                glyph = edge_glyph(bits, directions, self._edge_line(value_id), col, row)
                if glyph is not None:
                    cells[index] = glyph
                    styles[index] = self._edge_style(value_id)
        for col, glyph, edge_key in geometry.arrows_in_row(row, self._shown_edges):
            index = col - start
            if 0 <= index < width:
                cells[index] = glyph
                styles[index] = self._edge_style(edge_key[2])
        for col, text, value_id in self._labels(geometry).get(row, ()):
            self._put(cells, styles, start, col, text, self._label_style(value_id))
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
            # Bold: box-drawing lines read brighter than the faint braille dots did.
            style = Style(color=style_for(set(marks), self.theme_name).stroke, bold=True)
            self._styles[key] = style
        return style

    def _label_style(self, value_id: int) -> Style:
        """An edge's run value: in the edge's colour, italic (text, not a line)."""
        marks = frozenset(self.marks.values.get(value_id, ()))
        key = (marks, "label")
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = Style(color=style_for(set(marks), self.theme_name).stroke, italic=True)
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
        x, y = self.camera_offset
        self._scroll_now(x + dx, y + dy)

    def action_zoom(self, direction: int) -> None:
        """One zoom level in or out, the selection (or the centre) staying put."""
        zoom = zoom_step(self.zoom, direction)
        if zoom == self.zoom:
            return
        if self.layout_data is None:
            self.zoom = zoom
            return
        self._zoom_to(zoom)

    def action_fit(self) -> None:
        """The zoom at which the whole drawing fills the view, centred; where
        that would shrink boxes to single cells, the smallest zoom that still
        names the ops instead, and a notice saying so."""
        if self.layout_data is None or self.size.width == 0:
            return
        zoom = self._fit_zoom()
        self.notice = ""
        if zoom < COMPACT_BOXES:
            self.notice = (
                f"The whole graph fits only at zoom {zoom:.2f}, where boxes are dots: "
                f"showing zoom {COMPACT_BOXES} (op names) instead; - zooms out further"
            )
            self.notify(self.notice, title="Fit", timeout=6)
            zoom = COMPACT_BOXES
        self._framed_at = None
        self._set_zoom(zoom)
        self._centre_drawing()

    def select(self, node_id: int | None, follow: bool = True, clicked: bool = False) -> None:
        self.selected = node_id
        self.refresh()
        if follow and node_id is not None:
            self.action_follow()
        self.post_message(self.NodeSelected(node_id, clicked))

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
        if self.selected is not None:
            self.show_nodes([self.selected])

    def show_nodes(self, node_ids: list[int]) -> bool:
        """Scroll so the box around ``node_ids`` is in the middle of the view (the first
        of them when the box is larger than the view); False when none is drawn."""
        drawn = self._geometry.node_cells if self._geometry is not None else {}
        cells = [drawn[node_id] for node_id in node_ids if node_id in drawn]
        if not cells:
            return False
        c0, r0 = min(c[0] for c in cells), min(c[1] for c in cells)
        c1, r1 = max(c[2] for c in cells), max(c[3] for c in cells)
        if c1 - c0 > self.size.width or r1 - r0 > self.size.height:
            c0, r0, c1, r1 = cells[0]
        self._scroll_now((c0 + c1) // 2 - self.size.width // 2, (r0 + r1) // 2 - self.size.height // 2)
        return True

    def on_mouse_down(self, event: MouseDown) -> None:
        self._drag_from = (event.screen_x, event.screen_y, *self.camera_offset)
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
            self._scroll_now(sx - dx, sy - dy)

    def on_mouse_up(self, _event: MouseUp) -> None:
        self._drag_from = None

    def on_click(self, event: Click) -> None:
        if getattr(self, "_dragged", False):
            self._dragged = False
            return  # the end of a drag, not a click on a node
        if self._geometry is None:
            return
        x, y = self.camera_offset
        col, row = event.x + x, event.y + y
        node = self._geometry.node_at(col, row, self.graph.nodes)
        if node is not None:
            self.select(node, follow=False, clicked=True)


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
