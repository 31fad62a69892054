"""A read-only text pane that paints only the lines on screen.

The IR of a big graph is thousands of lines; a ``Static`` lays out all of
them on every update, which made a step key cost seconds on a 5,000-node
graph. This line-API widget keeps the lines as (text, style) pairs and
builds a strip for a row only when it is painted.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["TextPane"]

# A line is (text, one style), or a Rich Text where spans carry styles (the pass docs).
Line = tuple[str, Style | None] | Text


class TextPane(ScrollView, can_focus=True):
    """Lines of text, one style per line, scrolled both ways."""

    DEFAULT_CSS = """
    TextPane {
        height: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self.lines: list[Line] = []
        self._wrap: Callable[[int], list[Line]] | None = None
        self._wrapped_at = 0

    def set_wrapped(self, build: Callable[[int], list[Line]], keep_scroll: bool = False) -> None:
        """Lines that depend on the pane's width: ``build(width)`` now if the pane
        has a size, and again whenever its width changes (``keep_scroll``: the
        pane stays where it was scrolled to)."""
        self._wrap = build
        self._wrapped_at = 0
        self._rewrap(keep_scroll)

    def _rewrap(self, keep_scroll: bool = False) -> None:
        # The widget's width less room for a vertical scrollbar, which appears
        # only once the lines are set (and then resizes nothing).
        width = self.size.width
        if self._wrap is not None and width > 0 and width != self._wrapped_at:
            self._wrapped_at = width
            self.set_lines(self._wrap(width - 3), keep_scroll=keep_scroll)

    def on_resize(self) -> None:
        self._rewrap(keep_scroll=True)

    def set_lines(self, lines: list[Line], keep_scroll: bool = False) -> None:
        """Show ``lines`` as they are (a later :meth:`set_wrapped` replaces them)."""
        self.lines = lines
        width = max((len(_plain(line)) for line in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def plain(self) -> str:
        return "\n".join(_plain(line) for line in self.lines)

    def render_line(self, y: int) -> Strip:
        # Painted over the widget's own colours (its theme's background), not the terminal's.
        base = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        index = y + int(scroll_y)
        width = self.size.width
        if index >= len(self.lines):
            return Strip.blank(width, base)
        line = self.lines[index]
        if isinstance(line, Text):
            shown = line[int(scroll_x) : int(scroll_x) + width]
            # Text.render leaves out the Text's own style (a heading's bold): applied here,
            # under its spans, and not to the padding (an underline stops with the words).
            own = self.app.console.get_style(shown.style) if shown.style else None
            segments = list(Segment.apply_style(shown.render(self.app.console, end=""), own))
            return Strip(segments, shown.cell_len).extend_cell_length(width).apply_style(base)
        text, style = line
        shown_text = text[int(scroll_x) : int(scroll_x) + width]
        return Strip([Segment(shown_text.ljust(width), base + style if style else base)], width)


def _plain(line: Line) -> str:
    return line.plain if isinstance(line, Text) else line[0]
