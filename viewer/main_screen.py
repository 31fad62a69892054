"""The main screen: steps panel, graph panel and tabs side by side, with a
splitter on each side of the canvas.

The screen owns the panels' sizes (:mod:`~gradview.viewer.panel_layout`
decides them): keys and splitters collapse, expand and resize the side
panels, ``m`` maximizes the canvas, and a resized terminal gets the panel
widths that fit it.

It brings a tab an action filled where the user sees it (the tabs panel posts
:class:`~gradview.viewer.detail_panel.DetailPanel.Brought`):

- ``d``, ``G``, ``b`` and ``S`` fill a tab that is the only place their result
  shows: a collapsed tabs panel (``i``, a narrow terminal, or ``m``'s
  maximized canvas) opens;
- ``r`` puts its values on the nodes as well: a collapsed panel stays
  collapsed (the user chose the room for the graph) and a notice says where
  min, max and mean are;
- selecting a node brings the Inspect tab forward unless the user chose the
  tab in front (``p`` / ``P`` or a click on its label): a tab being read stays;
  a collapsed panel stays collapsed (the selection shows on the canvas).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header

from .canvas import GraphCanvas
from .detail_panel import DetailPanel
from .graph_panel import GraphPanel
from .messages import ScreenReady, SplitterClicked, SplitterMoved
from .panel_layout import STEP, PanelPrefs, panel_widths
from .splitter import Splitter
from .steps_panel import StepsPanel
from .timeline import Timeline

__all__ = ["MainScreen", "ON_CANVAS_TOO"]

# Tabs whose content the canvas shows too: bringing them forward leaves a collapsed panel as it is.
ON_CANVAS_TOO = {
    "tab-inspect": None,  # the selection is on the canvas: nothing to say
    "tab-run": "the Run tab has min, max and mean of every value: i shows the tabs",
}


class MainScreen(Screen[None]):
    """Header, the three panels, footer."""

    DEFAULT_CSS = """
    MainScreen #main {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "maximize_canvas", "Max"),
        Binding("s", "toggle_panel('left')", "Steps", show=False),
        Binding("i", "toggle_panel('right')", "Tabs", show=False),
        Binding("left_curly_bracket", "resize_panel('left', -1)", "Narrow steps", show=False),
        Binding("right_curly_bracket", "resize_panel('left', 1)", "Widen steps", show=False),
        Binding("left_parenthesis", "resize_panel('right', -1)", "Narrow tabs", show=False),
        Binding("right_parenthesis", "resize_panel('right', 1)", "Widen tabs", show=False),
    ]

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.theme_name = theme
        self.prefs = PanelPrefs()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            yield StepsPanel(id="left")
            yield Splitter("left", id="split-left")
            yield GraphPanel(theme=self.theme_name, id="center")
            yield Splitter("right", id="split-right")
            yield DetailPanel(id="right")
        yield Footer()

    def on_mount(self) -> None:
        self.apply_panels()
        self.app.post_message(ScreenReady())

    # -- parts ---------------------------------------------------------------------------------
    @property
    def steps(self) -> StepsPanel:
        return self.query_one(StepsPanel)

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def graph(self) -> GraphPanel:
        return self.query_one(GraphPanel)

    @property
    def canvas(self) -> GraphCanvas:
        return self.query_one(GraphCanvas)

    @property
    def details(self) -> DetailPanel:
        return self.query_one(DetailPanel)

    # -- panel sizes ---------------------------------------------------------------------------
    def _columns(self) -> int:
        return self.size.width or self.app.size.width

    def panel_widths(self) -> tuple[int, int]:
        """The (steps, tabs) widths for the screen as it is now; 0 when collapsed."""
        return panel_widths(self.prefs, self._columns())

    def apply_panels(self) -> None:
        left, right = self.panel_widths()
        for panel, splitter, width in (
            (self.steps, self.query_one("#split-left", Splitter), left),
            (self.details, self.query_one("#split-right", Splitter), right),
        ):
            panel.display = width > 0
            if width:
                panel.styles.width = width
            splitter.set_collapsed(width == 0)
        focused = self.focused
        if focused is not None and not _shown(focused):
            self.canvas.focus()

    def on_resize(self, _event: events.Resize) -> None:
        self.apply_panels()

    def show_panel(self, side: str) -> None:
        """Bring a collapsed panel back (leaving a maximized canvas first)."""
        if self.prefs.maximized or not self.prefs.shown(side, self._columns()):
            self.action_toggle_panel(side)

    def action_maximize_canvas(self) -> None:
        self.prefs.maximized = not self.prefs.maximized
        self.apply_panels()

    def action_toggle_panel(self, side: str) -> None:
        self.prefs.toggle(side, self._columns())
        self.apply_panels()

    def action_resize_panel(self, side: str, direction: int) -> None:
        columns = self._columns()
        left, right = self.panel_widths()
        current = left if side == "left" else right
        if current == 0:
            start = self.prefs.width(side, columns) if direction > 0 else 0
            self.prefs.resize(side, columns, start)
        else:
            self.prefs.resize(side, columns, current + direction * STEP)
        self.apply_panels()

    @on(SplitterMoved)
    def _splitter_moved(self, event: SplitterMoved) -> None:
        columns = self._columns()
        width = event.screen_x if event.side == "left" else columns - event.screen_x - 1
        self.prefs.resize(event.side, columns, width)
        self.apply_panels()

    @on(SplitterClicked)
    def _splitter_clicked(self, event: SplitterClicked) -> None:
        self.action_toggle_panel(event.side)

    # -- tabs ----------------------------------------------------------------------------------
    def cycle_tab(self, step: int) -> None:
        """p / P: the next / previous tab in front; a collapsed tabs panel opens on the tab it had."""
        if not self.panel_widths()[1]:
            self.show_panel("right")
            return
        self.details.cycle(step)

    @on(DetailPanel.Brought)
    def _tab_brought(self, message: DetailPanel.Brought) -> None:
        """An action filled a tab: open a collapsed tabs panel, or say where the tab is."""
        if self.panel_widths()[1]:
            return
        if message.tab not in ON_CANVAS_TOO:
            self.show_panel("right")
        elif ON_CANVAS_TOO[message.tab]:
            self.notify(ON_CANVAS_TOO[message.tab], timeout=4)


def _shown(widget: Widget) -> bool:
    """False when ``widget`` or a container above it is hidden."""
    node: Widget | None = widget
    while isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent  # type: ignore[assignment]
    return True
