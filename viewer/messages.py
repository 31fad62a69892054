"""Every Textual message of the viewer, in one place.

Widgets and the command palette post the first group (what the user did); the workers post the
second (results computed off the UI thread: ``post_message`` is thread-safe,
so a worker never touches a widget or a cache the UI thread reads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.message import Message

__all__ = [
    "ScreenReady",
    "StepChosen",
    "NodeSelected",
    "SplitterMoved",
    "SplitterClicked",
    "SearchChanged",
    "SearchMoved",
    "SearchClosed",
    "MinimapClicked",
    "JumpToStep",
    "FindNode",
    "SearchAsked",
    "LayoutReady",
    "StepFailed",
    "RunDone",
    "CheckDone",
    "ExportDone",
    "TaskProgress",
    "TaskEnded",
    "Flush",
]


# -- from widgets ------------------------------------------------------------------------
class ScreenReady(Message):
    """The main screen's widgets are mounted: the app can fill them."""


class StepChosen(Message):
    """The timeline highlighted step ``index``."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class NodeSelected(Message):
    """The user selected a node on the canvas (by click or by ``n``)."""

    def __init__(self, node_id: int | None, clicked: bool = False) -> None:
        super().__init__()
        self.node_id = node_id
        self.clicked = clicked  # by a click (a click on a folded module's box unfolds it)


class SplitterMoved(Message):
    """A panel splitter was dragged to screen column ``screen_x``."""

    def __init__(self, side: str, screen_x: int) -> None:
        super().__init__()
        self.side = side
        self.screen_x = screen_x


class SplitterClicked(Message):
    """A panel splitter was clicked without a drag: collapse or expand its panel."""

    def __init__(self, side: str) -> None:
        super().__init__()
        self.side = side


class SearchChanged(Message):
    """The canvas search bar's query is now ``query``: find it and fly to the first match."""

    def __init__(self, query: str) -> None:
        super().__init__()
        self.query = query


class SearchMoved(Message):
    """Go to the next (``direction`` 1) or previous (-1) search match."""

    def __init__(self, direction: int) -> None:
        super().__init__()
        self.direction = direction


class SearchClosed(Message):
    """The search bar was closed: clear the highlight."""


class MinimapClicked(Message):
    """The minimap was clicked: centre the view on (``x``, ``y``), fractions of the drawing's size."""

    def __init__(self, x: float, y: float) -> None:
        super().__init__()
        self.x = x
        self.y = y


class JumpToStep(Message):
    """Bring step ``index`` on screen (shown in the timeline even if its filter hid it)."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class FindNode(Message):
    """Select node ``node_id`` of the step on screen and centre the canvas on it."""

    def __init__(self, node_id: int) -> None:
        super().__init__()
        self.node_id = node_id


class SearchAsked(Message):
    """Open the canvas's search bar (searching ``query`` at once, when given)."""

    def __init__(self, query: str | None = None) -> None:
        super().__init__()
        self.query = query


# -- from workers --------------------------------------------------------------------------
class LayoutReady(Message):
    """A union layout is computed (``layout``, its canvas ``geometry`` and
    ``minimap`` picture, where built), or failed (``error``)."""

    def __init__(self, key: Any, layout: Any, error: str | None, geometry: Any = None, minimap: Any = None) -> None:
        super().__init__()
        self.key = key
        self.layout = layout
        self.error = error
        self.geometry = geometry
        self.minimap = minimap


class StepFailed(Message):
    """Step ``index``'s graph is broken (lint, drawing or running it failed)."""

    def __init__(self, index: int, error: str) -> None:
        super().__init__()
        self.index = index
        self.error = error


class RunDone(Message):
    """Running step ``index`` on the example inputs finished (a result or an ``error: ...`` string)."""

    def __init__(self, index: int, result: Any) -> None:
        super().__init__()
        self.index = index
        self.result = result


class CheckDone(Message):
    """A check finished (b or G): its CheckResult, or an ``error: ...`` string.
    The result names the step it belongs to and replaces the one shown."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result


class ExportDone(Message):
    """An export finished: the written path, or an ``error: ...`` string."""

    def __init__(self, result: str) -> None:
        super().__init__()
        self.result = result


class TaskProgress(Message):
    """Long task ``key`` (b, G or E), run by ``worker``, is at ``text`` ("G: input 12 of 62: %w…")."""

    def __init__(self, key: str, worker: Any, text: str) -> None:
        super().__init__()
        self.key, self.worker, self.text = key, worker, text


class TaskEnded(Message):
    """Long task ``key``'s ``worker`` has stopped (done, failed or cancelled); its result came before."""

    def __init__(self, key: str, worker: Any) -> None:
        super().__init__()
        self.key, self.worker = key, worker


class Flush(Message):
    """Handled after every message posted before it: ``done`` is called then (tests wait on it)."""

    def __init__(self, done: Callable[[], None]) -> None:
        super().__init__()
        self.done = done
