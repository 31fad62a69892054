"""The canvas camera: zoom steps, the zoom that fits a drawing, and where to
scroll so a point stays put. Plain arithmetic on cells and layout points, no
Textual, so the rules are tested on their own.

One cell is ``CELL_WIDTH`` x ``CELL_HEIGHT`` layout points at zoom 1 (a
Courier 10pt character): a layout point ``p`` sits in cell ``p * zoom / CELL``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from .layout import Layout

__all__ = [
    "CELL_WIDTH",
    "CELL_HEIGHT",
    "ZOOM_LEVELS",
    "MIN_ZOOM",
    "MAX_ZOOM",
    "FIRST_VIEW_MAX",
    "Camera",
    "CameraKey",
    "zoom_step",
    "fit_zoom",
    "drawing_bounds",
    "anchored_scroll",
    "centred_scroll",
]

CELL_WIDTH = 6.0  # points per terminal column at zoom 1 (Courier 10pt)
CELL_HEIGHT = 12.0  # points per terminal row at zoom 1
# The steps of + and -; fit picks any zoom between the ends.
ZOOM_LEVELS = (0.15, 0.25, 0.35, 0.5, 0.65, 0.8, 1.0, 1.25, 1.5, 2.0)
MIN_ZOOM = ZOOM_LEVELS[0]
MAX_ZOOM = ZOOM_LEVELS[-1]
FIRST_VIEW_MAX = 1.25  # a first view never blows a small graph up beyond this

CameraKey = Hashable  # the layout key (controller.layout_key): one camera per view


@dataclass(frozen=True)
class Camera:
    """Where one view was left: its zoom and scroll offset, for the layout it was set on."""

    zoom: float
    scroll_x: int
    scroll_y: int
    layout: Layout


def zoom_step(zoom: float, direction: int) -> float:
    """The next zoom level above (``direction`` > 0) or below ``zoom``, which may
    lie between levels (after fit); the end levels stay where they are."""
    if direction > 0:
        return next((z for z in ZOOM_LEVELS if z > zoom * 1.0001), ZOOM_LEVELS[-1])
    return next((z for z in reversed(ZOOM_LEVELS) if z < zoom * 0.9999), ZOOM_LEVELS[0])


def fit_zoom(width: float, height: float, columns: int, rows: int, margin: int = 2) -> float:
    """The largest zoom at which ``width`` x ``height`` points fit ``columns`` x
    ``rows`` cells less ``margin`` cells each way, not clamped (0 for no room)."""
    room_x, room_y = columns - margin, rows - margin
    if room_x <= 0 or room_y <= 0:
        return 0.0
    return min(
        room_x * CELL_WIDTH / width if width > 0 else MAX_ZOOM,
        room_y * CELL_HEIGHT / height if height > 0 else MAX_ZOOM,
    )


def drawing_bounds(layout: Layout, shown: Iterable[int]) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1) in points around the boxes of ``shown`` nodes (None: none laid out)."""
    x0 = y0 = float("inf")
    x1 = y1 = float("-inf")
    for node_id in shown:
        box = layout.boxes.get(node_id)
        if box is None:
            continue
        x0, x1 = min(x0, box.x - box.width / 2), max(x1, box.x + box.width / 2)
        y0, y1 = min(y0, box.y - box.height / 2), max(y1, box.y + box.height / 2)
    if x0 > x1:
        return None
    return x0, y0, x1, y1


def anchored_scroll(scroll: tuple[float, float], before: tuple[float, float], after: tuple[float, float]) -> tuple[int, int]:
    """The scroll offset that keeps a point on the same screen cell when it moves
    from cell ``before`` to cell ``after`` (a zoom): shift by the difference."""
    return round(scroll[0] + after[0] - before[0]), round(scroll[1] + after[1] - before[1])


def centred_scroll(centre: tuple[float, float], columns: int, rows: int) -> tuple[int, int]:
    """The offset (top left cell, may be negative) that puts cell ``centre`` in
    the middle of a ``columns`` x ``rows`` view."""
    return round(centre[0] - columns / 2), round(centre[1] - rows / 2)
