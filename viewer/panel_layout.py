"""How wide the side panels are, for any terminal width (no Textual here).

The canvas gets what the panels leave. By default the steps panel takes a
fifth of the columns (22 to 40) and the tabs a quarter (30 to 52), so the
canvas keeps at least half the screen from 108 columns on; below that
the tabs start collapsed. A width the user chose (by key or by dragging a
splitter) is kept when the terminal is resized, but the panels never leave
the canvas fewer than :data:`MIN_CANVAS` columns.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PanelPrefs", "panel_widths", "default_widths", "MIN_CANVAS", "SPLITTERS", "STEP"]

MIN_CANVAS = 20  # columns the canvas keeps whatever the panels ask for
SPLITTERS = 2  # one column per splitter, always shown (click one to bring its panel back)
STEP = 4  # columns per resize key press
NARROW = 108  # below this many columns the tabs start collapsed (22 + 30 + 2 leave half)
MIN_PANEL = 12  # a panel narrower than this is collapsed instead


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def default_widths(columns: int) -> tuple[int, int]:
    """(steps panel, tabs) for a terminal ``columns`` wide, before any user choice."""
    left = _clamp(round(columns * 0.2), 22, 40)
    right = 0 if columns < NARROW else _clamp(round(columns * 0.25), 30, 52)
    return left, right


@dataclass
class PanelPrefs:
    """What the user chose: widths (None: the default for the terminal), shown or
    collapsed (None: the default), and whether the canvas is maximized."""

    left: int | None = None
    right: int | None = None
    left_shown: bool | None = None
    right_shown: bool | None = None
    maximized: bool = False

    def shown(self, side: str, columns: int) -> bool:
        chosen = self.left_shown if side == "left" else self.right_shown
        if chosen is not None:
            return chosen
        return default_widths(columns)[0 if side == "left" else 1] > 0

    def width(self, side: str, columns: int) -> int:
        chosen = self.left if side == "left" else self.right
        if chosen is not None:
            return chosen
        left, right = default_widths(columns)
        return (left if side == "left" else right) or _clamp(round(columns * 0.3), 24, 52)

    def toggle(self, side: str, columns: int) -> None:
        """Collapse or expand one panel (leaving a maximized canvas first)."""
        if self.maximized:
            self.maximized = False
            self._set_shown(side, True)
            return
        self._set_shown(side, not self.shown(side, columns))

    def resize(self, side: str, columns: int, width: int) -> None:
        """Set a panel's width; too narrow collapses it, any other width shows it."""
        self.maximized = False
        if width < MIN_PANEL:
            self._set_shown(side, False)
            return
        available = columns - SPLITTERS - MIN_CANVAS
        other = "right" if side == "left" else "left"
        if self.shown(other, columns):
            available -= self.width(other, columns)
        width = max(MIN_PANEL, min(width, available))
        if side == "left":
            self.left = width
        else:
            self.right = width
        self._set_shown(side, True)

    def _set_shown(self, side: str, shown: bool) -> None:
        if side == "left":
            self.left_shown = shown
        else:
            self.right_shown = shown


def panel_widths(prefs: PanelPrefs, columns: int) -> tuple[int, int]:
    """The (steps panel, tabs) widths to draw now: 0 for a collapsed panel. The
    canvas keeps at least :data:`MIN_CANVAS` columns: the tabs give way first."""
    if prefs.maximized:
        return 0, 0
    left = prefs.width("left", columns) if prefs.shown("left", columns) else 0
    right = prefs.width("right", columns) if prefs.shown("right", columns) else 0
    room = max(0, columns - SPLITTERS - MIN_CANVAS)
    if left + right > room:
        right = max(0, room - left)
        if right < MIN_PANEL:
            right = 0
        left = min(left, room)
        if left < MIN_PANEL:
            left = 0
    return left, right
