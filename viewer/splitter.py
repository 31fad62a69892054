"""A one-column bar between the canvas and a side panel: drag it to resize the
panel, click it to collapse or expand the panel."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.events import MouseDown, MouseMove, MouseUp
from textual.strip import Strip
from textual.widget import Widget

from .messages import SplitterClicked, SplitterMoved

__all__ = ["Splitter"]


class Splitter(Widget):
    """``side`` is the panel it resizes: "left" (the steps) or "right" (the tabs)."""

    DEFAULT_CSS = """
    Splitter {
        width: 1;
        height: 1fr;
        background: $panel;
        color: $text-muted;
    }
    Splitter:hover {
        background: $accent;
        color: $text;
    }
    """

    def __init__(self, side: str, *, id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self.side = side
        self.collapsed = False
        self._drag_from: int | None = None
        self._dragged = False

    def set_collapsed(self, collapsed: bool) -> None:
        if collapsed != self.collapsed:
            self.collapsed = collapsed
            self.refresh()

    def render_line(self, y: int) -> Strip:
        # The arrow in the middle says what a click does.
        middle = self.size.height // 2
        if y == middle:
            opens_left = (self.side == "left") == self.collapsed
            glyph = "›" if opens_left else "‹"
        else:
            glyph = "│"
        return Strip([Segment(glyph, Style())], 1)

    def on_mouse_down(self, event: MouseDown) -> None:
        self._drag_from = event.screen_x
        self._dragged = False
        self.capture_mouse()
        event.stop()

    def on_mouse_move(self, event: MouseMove) -> None:
        if self._drag_from is None or event.screen_x == self._drag_from:
            return
        self._dragged = True
        self.post_message(SplitterMoved(self.side, event.screen_x))
        event.stop()

    def on_mouse_up(self, event: MouseUp) -> None:
        if self._drag_from is None:
            return
        self.release_mouse()
        if not self._dragged:
            self.post_message(SplitterClicked(self.side))
        self._drag_from = None
        self._dragged = False
        event.stop()
