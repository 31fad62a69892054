"""The graph panel: the view bar (step, pass, view) over the graph canvas."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from gradview.runtime.pass_trace import Step, which_label

from .canvas import GraphCanvas
from .model import View

__all__ = ["GraphPanel", "VIEW_NAMES"]

VIEW_NAMES = {View.WHOLE: "whole graph", View.FORWARD: "forward f", View.BACKWARD: "backward df", View.JOINT: "joint f→df"}


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
    GraphPanel #canvas {
        height: 1fr;
    }
    """

    def __init__(self, *, theme: str, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.theme_name = theme

    def compose(self) -> ComposeResult:
        yield Static(id="viewbar")
        yield GraphCanvas(id="canvas", theme=self.theme_name)

    @property
    def canvas(self) -> GraphCanvas:
        return self.query_one(GraphCanvas)

    def show_viewbar(
        self, step: Step, last: int, view: View, failure: str | None, dg: int, dg_count: int, note: str = ""
    ) -> None:
        text = Text()
        text.append(f" step {step.index}/{last} ", style="bold reverse")
        text.append(f" {step.pass_name} ", style="bold")
        text.append(f"[{which_label(step.which)}] ", style="dim")
        text.append("changed" if step.changed else "unchanged", style="green" if step.changed else "dim")
        if failure:
            text.append(f"  ✗ {failure}", style="bold red")
        text.append("  │ ", style="dim")
        text.append(VIEW_NAMES[view], style="bold reverse")
        text.append(" (1-4)", style="dim")
        if dg_count and view is not View.WHOLE:
            text.append(f"  │ DifferentiableGraph {dg} of {dg_count} (g)", style="dim")
        if note:  # collapse, focus, stubs (viewer/large_graph.py)
            text.append(f"  │ {note}", style="bold")
        self.query_one("#viewbar", Static).update(text, layout=False)
