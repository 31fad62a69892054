"""The graph panel: the view bar (step, pass, view) over the graph canvas, with
the minimap in the canvas's bottom-right corner and the search bar under it.

The panel runs the canvas's search (``/`` with the canvas focused, or the
palette's ``find node: <query>``): :func:`~gradview.viewer.graph_analysis.search`
on the drawing on screen, matches highlighted, the camera on the current one.
It keeps the minimap in step with the canvas: its picture per layout, its
viewport rectangle per scroll, shown while the drawing is larger than the
canvas unless ``M`` chose otherwise.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.widgets import Static

from gradview.runtime import Note, Step, which_label

from .camera import CELL_HEIGHT, CELL_WIDTH
from .canvas import GraphCanvas
from .graph_analysis import search
from .messages import MinimapClicked, SearchChanged, SearchClosed, SearchMoved
from .minimap import MAP_COLUMNS, MAP_ROWS, Minimap
from .model import DrawGraph, View
from .search_bar import SearchBar, match_status
from .view_registry import VIEWS, view_spec

__all__ = ["GraphPanel", "VIEW_NAMES"]

VIEW_NAMES = {spec.view: spec.title for spec in VIEWS}
_VIEW_KEYS = f" ({VIEWS[0].key}-{VIEWS[-1].key})"


class GraphPanel(Vertical):
    """Takes every column the side panels leave."""

    DEFAULT_CSS = """
    GraphPanel {
        width: 1fr;
    }
    GraphPanel #viewbar {
        height: 1;
        background: $panel;
    }
    GraphPanel #canvas-area {
        height: 1fr;
        layers: canvas minimap;
        align: right bottom;
    }
    GraphPanel #canvas {
        height: 1fr;
        layer: canvas;
    }
    GraphPanel #minimap {
        layer: minimap;
        margin: 0 2 1 0;  /* inside the canvas's scrollbars */
        display: none;
    }
    """

    # Wins over the app's ``/`` (the timeline filter) while the canvas has focus.
    BINDINGS: ClassVar[list[BindingType]] = [Binding("slash", "open_search", "Search", show=False)]

    def __init__(self, *, theme: str, id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self.theme_name = theme
        self.minimap_choice: bool | None = (
            None  # None: shown while the drawing is larger than the canvas
        )
        self.matches: list[int] = []
        self.match_at: int | None = None
        self._searched: DrawGraph | None = None  # the drawing the matches belong to
        self._viewbar_text = Text()  # the view bar as show_viewbar drew it
        self._task_text = ""  # a running task's progress (b, G, E), drawn at the bar's start

    def compose(self) -> ComposeResult:
        yield Static(id="viewbar")
        with Container(id="canvas-area"):
            yield GraphCanvas(id="canvas", theme=self.theme_name)
            yield Minimap(id="minimap", theme=self.theme_name)
        yield SearchBar(id="search")

    def on_mount(self) -> None:
        canvas = self.canvas
        for attribute in ("scroll_x", "scroll_y", "virtual_size"):
            self.watch(canvas, attribute, self.sync_minimap, init=False)

    def on_resize(self) -> None:
        self.call_after_refresh(
            self.sync_minimap
        )  # the canvas's new size is known after the refresh

    @property
    def canvas(self) -> GraphCanvas:
        return self.query_one(GraphCanvas)

    @property
    def minimap(self) -> Minimap:
        return self.query_one(Minimap)

    @property
    def search_bar(self) -> SearchBar:
        return self.query_one(SearchBar)

    def show_viewbar(
        self,
        step: Step,
        last: int,
        view: View,
        failure: str | None,
        dg: int,
        dg_count: int,
        note: str = "",
    ) -> None:
        """The bar over the canvas; the app calls this after every ``canvas.show``,
        so the minimap and an open search follow the drawing from here."""
        text = Text()
        text.append(f" step {step.index}/{last} ", style="bold reverse")
        text.append(f" {step.pass_name} ", style="bold")
        text.append(f"[{which_label(step.which)}] ", style="dim")
        text.append(
            "changed" if step.changed else "unchanged", style="green" if step.changed else "dim"
        )
        if failure:
            text.append(f"  ✗ {failure}", style="bold red")
        text.append("  │ ", style="dim")
        text.append(VIEW_NAMES[view], style="bold reverse")
        text.append(_VIEW_KEYS, style="dim")
        if dg_count and view_spec(view).differentiated:
            kind = "compiled graph" if Note.COMPILE_ID in step.annotations else "DifferentiableGraph"
            text.append(f"  │ {kind} {dg} of {dg_count} (g)", style="dim")
        if note:  # collapse, focus, stubs (viewer/large_graph.py)
            text.append(f"  │ {note}", style="bold")
        self._viewbar_text = text
        self._draw_viewbar()
        self.after_show()

    def show_task(self, text: str) -> None:
        """A running task's progress (``G: input 12 of 62: %w…``) at the bar's start, where
        a narrow canvas does not cut it off; "" clears it."""
        if text != self._task_text:
            self._task_text = text
            self._draw_viewbar()

    def _draw_viewbar(self) -> None:
        text = self._viewbar_text
        if self._task_text:
            text = Text.assemble((f" {self._task_text} ", "bold reverse yellow"), " ", self._viewbar_text)
        self.query_one("#viewbar", Static).update(text, layout=False)

    def after_show(self) -> None:
        """The canvas shows a new drawing or step: refresh the minimap, and the
        matches of an open search (highlight only: the camera stays)."""
        self.sync_minimap()
        if self.search_bar.display and self.canvas.graph is not self._searched:
            self.run_search(self.search_bar.query_text, fly=False)

    # -- search ---------------------------------------------------------------------------------------
    def action_open_search(self) -> None:
        self.open_search()

    def open_search(self, query: str | None = None) -> None:
        """Open the search bar (with ``query`` when given, which searches at once)."""
        bar = self.search_bar
        was_shown = bar.display
        if query is not None and query == bar.query_text:
            bar.open()
            self.run_search(query)
        else:
            bar.open(query)
        if not was_shown:
            self.call_after_refresh(self.sync_minimap)  # the canvas is one row shorter

    def run_search(self, query: str, fly: bool = True) -> None:
        """Find ``query`` in the drawing on screen, highlight the matches and
        (``fly``) select the first one, which brings it into view."""
        canvas = self.canvas
        self._searched = canvas.graph
        self.matches = search(canvas.graph, query, canvas.layout_data) if query.strip() else []
        canvas.set_highlight(frozenset(self.matches))
        self._mark_minimap()
        if not self.matches:
            self.match_at = None
        elif fly:
            self.match_at = 0
            self._fly_to(self.matches[0])
        elif self.match_at is not None:
            self.match_at = min(self.match_at, len(self.matches) - 1)
        self.search_bar.show_status(match_status(query, self.match_at, len(self.matches)))

    def move_match(self, direction: int) -> None:
        """Select the next (1) or previous (-1) match, wrapping around."""
        if self.canvas.graph is not self._searched:
            self.run_search(self.search_bar.query_text, fly=False)
        if not self.matches:
            return
        if self.match_at is None:
            self.match_at = 0 if direction > 0 else len(self.matches) - 1
        else:
            self.match_at = (self.match_at + direction) % len(self.matches)
        self._fly_to(self.matches[self.match_at])
        self.search_bar.show_status(
            match_status(self.search_bar.query_text, self.match_at, len(self.matches))
        )

    def _mark_minimap(self) -> None:
        layout = self.canvas.layout_data
        boxes = layout.boxes if layout is not None else {}
        self.minimap.show_marks([(boxes[i].x, boxes[i].y) for i in self.matches if i in boxes])

    def _fly_to(self, node_id: int) -> None:
        """Select ``node_id`` and bring it into view. From the canvas's own message
        loop: a NodeSelected sent while this panel handles a message would stop
        bubbling here (Textual stops a message at its sender) and miss the app."""
        self.canvas.call_later(self.canvas.select, node_id, True)

    def close_search(self) -> None:
        self.matches, self.match_at, self._searched = [], None, None
        self.canvas.set_highlight(frozenset())
        self.minimap.show_marks([])
        self.search_bar.display = False
        self.canvas.focus()
        self.call_after_refresh(self.sync_minimap)

    @on(SearchChanged)
    def _search_changed(self, event: SearchChanged) -> None:
        event.stop()
        self.run_search(event.query)

    @on(SearchMoved)
    def _search_moved(self, event: SearchMoved) -> None:
        event.stop()
        self.move_match(event.direction)

    @on(SearchClosed)
    def _search_closed(self, event: SearchClosed) -> None:
        event.stop()
        self.close_search()

    # -- minimap ------------------------------------------------------------------------------------------
    def drawing_overflows(self) -> bool:
        """The minimap's default: shown when the drawing is larger than the canvas
        and the canvas has room for it (three maps wide and high; on a smaller
        canvas it would hide the very nodes it points to, ``M`` still shows it)."""
        geometry, size = self.canvas.geometry, self.canvas.size
        room = size.width >= 3 * (MAP_COLUMNS + 2) and size.height >= 3 * (MAP_ROWS + 2)
        return room and geometry is not None and (
            geometry.columns > size.width or geometry.rows > size.height
        )

    def toggle_minimap(self) -> None:
        """``M``: show the minimap if hidden, hide it if shown (from then on,
        whatever the drawing's size)."""
        self.minimap_choice = not self.minimap.display
        self.sync_minimap()

    def sync_minimap(self) -> None:
        """The minimap's picture, visibility, theme and viewport rectangle, as the canvas is now."""
        canvas, minimap = self.canvas, self.minimap
        if minimap.theme_name != canvas.theme_name:
            minimap.set_theme(canvas.theme_name)
        shown = self.drawing_overflows() if self.minimap_choice is None else self.minimap_choice
        shown = shown and canvas.layout_data is not None and canvas.geometry is not None
        if minimap.display != shown:
            minimap.display = shown
        if not shown:
            return
        minimap.show_layout(canvas.layout_data)
        # The view in layout points: its top-left cell (negative in the margin
        # before the drawing) and size, at the canvas's zoom.
        (x, y), size, zoom = canvas.camera_offset, canvas.size, canvas.zoom
        sx, sy = CELL_WIDTH / zoom, CELL_HEIGHT / zoom
        minimap.show_viewport((x * sx, y * sy, (x + size.width) * sx, (y + size.height) * sy))

    @on(MinimapClicked)
    def _minimap_clicked(self, event: MinimapClicked) -> None:
        """Centre the camera on the clicked place of the drawing."""
        event.stop()
        canvas, layout = self.canvas, self.canvas.layout_data
        if layout is None:
            return
        col = event.x * layout.width * canvas.zoom / CELL_WIDTH
        row = event.y * layout.height * canvas.zoom / CELL_HEIGHT
        (x, y), size = canvas.camera_offset, canvas.size
        canvas.action_pan(round(col - size.width / 2 - x), round(row - size.height / 2 - y))
