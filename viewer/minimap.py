"""The minimap: the whole drawing, shrunk into a few cells, with the view as a rectangle.

Two parts. :class:`MinimapPicture` (no Textual) scales a layout's boxes into
braille dots once per layout: each cell holds 2 x 4 dots, and a dot is about
square on a terminal, so the picture keeps the drawing's proportions and is
centred in the map. :class:`Minimap` paints that picture and, per scroll,
only the viewport rectangle (the cells the canvas shows, in reverse video);
search matches are lit in the selection's hue;
a click asks for the camera to move there (:class:`~gradview.viewer.messages.MinimapClicked`).

A layout of 5,000 nodes is one pass over its boxes (a few milliseconds), and
a scroll repaints eight short lines: the map stays cheap on large graphs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.events import Click
from textual.strip import Strip
from textual.widget import Widget

from .layout import Layout
from .messages import MinimapClicked
from .palette import CANVAS_BACKGROUND, HIGHLIGHT, style_for

__all__ = ["MinimapPicture", "Minimap", "MAP_COLUMNS", "MAP_ROWS"]

MAP_COLUMNS = 24  # cells of the picture (the widget adds a border)
MAP_ROWS = 8

# Braille dot bits by (column in cell, row in cell), as the canvas draws edges.
_DOT_BITS = np.array(((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80)), dtype=np.int64)
Rect = tuple[int, int, int, int]  # first column, first row, last column, last row (inclusive)


@dataclass
class MinimapPicture:
    """A layout shrunk into ``columns`` x ``rows`` braille cells.

    ``scale`` is dots per layout point (the same on both axes) and
    ``origin`` the dot where the layout's (0, 0) lands, so a point of the
    layout and a cell of the map convert both ways."""

    columns: int
    rows: int
    scale: float = 1.0
    origin: tuple[float, float] = (0.0, 0.0)
    width: float = 0.0  # the layout's extent in points
    height: float = 0.0
    cells: list[list[int]] = field(default_factory=list)  # row -> column -> braille bits

    @classmethod
    def build(
        cls, layout: Layout, columns: int = MAP_COLUMNS, rows: int = MAP_ROWS
    ) -> MinimapPicture:
        picture = cls(columns, rows, width=max(1.0, layout.width), height=max(1.0, layout.height))
        dots_x, dots_y = columns * 2, rows * 4
        scale = min(dots_x / picture.width, dots_y / picture.height)
        picture.scale = scale
        picture.origin = (
            (dots_x - picture.width * scale) / 2,
            (dots_y - picture.height * scale) / 2,
        )
        picture.cells = _dots_to_cells(*picture._box_dots(layout, dots_x, dots_y), columns, rows)
        return picture

    def _box_dots(self, layout: Layout, dots_x: int, dots_y: int) -> tuple[np.ndarray, np.ndarray]:
        """The (x, y) dots of every box: the row of dots its extent covers, at
        least its centre's; NumPy, so 5,000 boxes cost a few milliseconds."""
        boxes = layout.boxes
        if not boxes:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        table = np.array([(box.x, box.y, box.width) for box in boxes.values()], dtype=float)
        (ox, oy), scale = self.origin, self.scale
        x0 = np.floor(ox + (table[:, 0] - table[:, 2] / 2) * scale).astype(np.int64)
        x1 = np.maximum(
            x0, np.floor(ox + (table[:, 0] + table[:, 2] / 2) * scale - 0.5).astype(np.int64)
        )
        y = np.clip(np.floor(oy + table[:, 1] * scale).astype(np.int64), 0, dots_y - 1)
        widest = int((x1 - x0).max()) + 1
        xs = [x0 + k for k in range(widest)]
        ys = [y] * widest
        keep = [x <= x1 for x in xs]
        x_all = np.clip(
            np.concatenate([x[k] for x, k in zip(xs, keep, strict=True)]), 0, dots_x - 1
        )
        y_all = np.concatenate([row[k] for row, k in zip(ys, keep, strict=True)])
        return x_all, y_all

    def cell_rect(self, x0: float, y0: float, x1: float, y1: float) -> Rect:
        """The cells covering the layout rectangle (x0, y0)-(x1, y1) in points, at least one cell, inside the map."""
        ox, oy = self.origin
        c0 = int((ox + x0 * self.scale) // 2)
        r0 = int((oy + y0 * self.scale) // 4)
        c1 = int((ox + x1 * self.scale) // 2)
        r1 = int((oy + y1 * self.scale) // 4)
        c0, c1 = (min(max(0, c), self.columns - 1) for c in (c0, c1))
        r0, r1 = (min(max(0, r), self.rows - 1) for r in (r0, r1))
        return c0, r0, max(c0, c1), max(r0, r1)

    def point_at(self, col: float, row: float) -> tuple[float, float]:
        """The layout point (in points, clamped to the drawing) under cell coordinates (col, row)."""
        ox, oy = self.origin
        x = (col * 2 - ox) / self.scale
        y = (row * 4 - oy) / self.scale
        return min(max(0.0, x), self.width), min(max(0.0, y), self.height)

    def text_row(self, row: int) -> str:
        return "".join(chr(0x2800 + bits) if bits else " " for bits in self.cells[row])


class Minimap(Widget):
    """The whole drawing with the canvas's view as a reverse-video rectangle; click to go there."""

    DEFAULT_CSS = f"""
    Minimap {{
        width: {MAP_COLUMNS + 2};
        height: {MAP_ROWS + 2};
        border: round $accent;
        background: $surface;
    }}
    """

    def __init__(self, *, theme: str = "dark", id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self.theme_name = theme
        self.picture: MinimapPicture | None = None
        self.viewport: Rect | None = None
        self._mark_points: list[tuple[float, float]] = []
        self._mark_cells: tuple[MinimapPicture, dict[int, set[int]]] | None = None
        self._pictures: dict[
            int, tuple[Layout, MinimapPicture]
        ] = {}  # id of layout -> (layout, picture)

    def prime(self, layout: Layout, picture: MinimapPicture) -> None:
        """Keep ``layout``'s picture built elsewhere (with the layout's geometry,
        off the UI thread), so showing it does not build it here."""
        if len(self._pictures) > 8:
            self._pictures.clear()
        self._pictures[id(layout)] = (layout, picture)

    def show_layout(self, layout: Layout | None) -> bool:
        """Take ``layout``'s picture (built once per layout); True when the picture changed."""
        if layout is None:
            changed = self.picture is not None
            self.picture = None
        else:
            cached = self._pictures.get(id(layout))
            if cached is None or cached[0] is not layout:
                if len(self._pictures) > 8:
                    self._pictures.clear()
                cached = self._pictures[id(layout)] = (layout, MinimapPicture.build(layout))
            changed = cached[1] is not self.picture
            self.picture = cached[1]
        if changed:
            self.viewport = None
            self.refresh()
        return changed

    def show_viewport(self, view: tuple[float, float, float, float]) -> None:
        """Mark the view: ``view`` (left, top, right, bottom) in layout points."""
        if self.picture is None:
            return
        rect = self.picture.cell_rect(*view)
        if rect != self.viewport:
            self.viewport = rect
            self.refresh()

    def set_theme(self, theme: str) -> None:
        self.theme_name = theme
        self.refresh()

    def show_marks(self, points: list[tuple[float, float]]) -> None:
        """Light the cells of these layout points (the search's matches) in the selection's hue."""
        if points != self._mark_points:
            self._mark_points = points
            self._mark_cells = None
            self.refresh()

    def _marked_cells(self) -> dict[int, set[int]]:
        """Row -> columns of the marked points, for the picture shown (cached until either changes)."""
        if self.picture is None:
            return {}
        if self._mark_cells is None or self._mark_cells[0] is not self.picture:
            cells: dict[int, set[int]] = {}
            for x, y in self._mark_points:
                col, row, _, _ = self.picture.cell_rect(x, y, x, y)
                cells.setdefault(row, set()).add(col)
            self._mark_cells = (self.picture, cells)
        return self._mark_cells[1]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        background = CANVAS_BACKGROUND[self.theme_name]
        palette = style_for(None, self.theme_name)
        plain = Style(color=palette.text, bgcolor=background)
        if self.picture is None or y >= self.picture.rows:
            return Strip([Segment(" " * width, plain)])
        text = self.picture.text_row(y)[:width].ljust(width)
        rect = self.viewport
        inside = (
            range(rect[0], rect[2] + 1)
            if rect is not None and rect[1] <= y <= rect[3]
            else range(0)
        )
        marked = self._marked_cells().get(y, set())
        hue = HIGHLIGHT
        styles = {
            (False, False): plain,
            (True, False): Style(color=background, bgcolor=palette.stroke),
            (False, True): Style(color=hue, bgcolor=background, bold=True),
            (True, True): Style(color=hue, bgcolor=palette.stroke, bold=True),
        }
        segments: list[Segment] = []
        for col, char in enumerate(text):
            style = styles[(col in inside, col in marked)]
            if col in marked and char == " ":
                char = "⠶"  # a match never vanishes between dots
            if segments and segments[-1].style is style:
                segments[-1] = Segment(segments[-1].text + char, style)
            else:
                segments.append(Segment(char, style))
        return Strip(segments)

    def on_click(self, event: Click) -> None:
        """Centre the camera on the clicked place (as fractions of the drawing)."""
        offset = event.get_content_offset(self)
        if offset is None or self.picture is None:
            return
        event.stop()
        x, y = self.picture.point_at(offset.x + 0.5, offset.y + 0.5)
        self.post_message(MinimapClicked(x / self.picture.width, y / self.picture.height))


def _dots_to_cells(xs: np.ndarray, ys: np.ndarray, columns: int, rows: int) -> list[list[int]]:
    """Braille bits per cell (row, column) of the dots (xs, ys)."""
    cells = np.zeros((rows, columns), dtype=np.int64)
    np.bitwise_or.at(cells, (ys // 4, xs // 2), _DOT_BITS[xs % 2, ys % 4])
    return cells.tolist()
