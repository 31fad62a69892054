"""The steps panel: the filter box over the pass timeline."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from .timeline import Timeline

__all__ = ["StepsPanel"]


class StepsPanel(Vertical):
    """``/`` focuses the filter; Enter goes back to the timeline."""

    DEFAULT_CSS = """
    StepsPanel #filter {
        margin: 0;
    }
    StepsPanel #timeline {
        height: 1fr;
        border: none;
        scrollbar-size-vertical: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter passes  (/)", id="filter")
        yield Timeline(id="timeline")

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def clear_filter(self) -> None:
        self.timeline.filter_text = ""
        self.query_one("#filter", Input).value = ""

    def focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        timeline = self.timeline
        if timeline.filter_text != event.value:
            timeline.filter_text = event.value
            timeline.rebuild(keep=timeline.current_step())

    @on(Input.Submitted, "#filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.timeline.focus()
