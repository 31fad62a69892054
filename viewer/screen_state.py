"""What the screen shows, as one typed object, and what a part of the app may ask of it.

The app owns one :class:`OnScreen`; its parts (the large-graph keys, the Saved
tab, the long tasks) read and change it, and ask for a redraw, a notice or the
main screen's panels through :class:`AppHooks`, never through the app itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

from .model import DrawGraph, View
from .view_registry import DEFAULT_VIEW

if TYPE_CHECKING:
    from .main_screen import MainScreen

__all__ = ["OnScreen", "Traced", "AppHooks"]


@dataclass
class OnScreen:
    """The step, the view, the DifferentiableGraph, the selected node and the drawing on screen."""

    index: int = 0
    view: View = DEFAULT_VIEW
    dg: int = 0
    selected: int | None = None
    drawing: DrawGraph = field(default_factory=DrawGraph)  # as the canvas shows it (the palette searches it)


@dataclass(frozen=True)
class Traced:
    """A gradient traced back (``T``): the df and f ``nodes`` lit for node ``start``
    of step ``index``, DifferentiableGraph ``dg``, while that selection is on screen."""

    index: int
    dg: int
    start: int
    nodes: frozenset[int]

    def lit_on(self, shown: OnScreen) -> bool:
        """Whether the selection it was traced for is on screen."""
        return (self.index, self.dg, self.start) == (shown.index, shown.dg, shown.selected)


@dataclass(frozen=True)
class AppHooks:
    """The app's services a part is given: ``redraw`` everything that depends on
    :class:`OnScreen`, ``notify`` (as ``App.notify``), the ``main`` screen (its
    panels), ``post`` a message to the app (from any thread), ``run_worker`` (as
    ``App.run_worker``) and ``jump_to_pass`` (bring a step on screen, unhiding it)."""

    redraw: Callable[[], None]
    notify: Callable[..., Any]
    main: Callable[[], MainScreen]
    post: Callable[[Message], Any]
    run_worker: Callable[..., Any]
    jump_to_pass: Callable[[int], None]
