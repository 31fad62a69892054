"""What a person reads on the screen of a running app: the text of the
composited screen (every widget as painted, overlays included), whole or
cropped to one widget's region."""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App
from textual.widget import Widget


def screen_lines(app: App[object]) -> list[str]:
    """Every row of the screen as plain text, as wide as the terminal."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False, safe_box=False)
    # The same rendering as App.export_screenshot (an SVG), kept as text.
    console.print(app.screen._compositor.render_update(full=True))  # Textual has no public text export
    lines = console.export_text(styles=False).splitlines()
    return [line.ljust(width) for line in lines[:height]]


def region_lines(app: App[object], widget: Widget) -> list[str]:
    """The rows of the screen inside ``widget``'s region."""
    region = widget.region
    rows = screen_lines(app)[region.y : region.y + region.height]
    return [row[region.x : region.x + region.width] for row in rows]
