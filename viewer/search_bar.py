"""The canvas's search bar: one line under the graph, ``/`` opens it.

The bar only edits the query and says where the search stands ("3 of 17");
the graph panel runs the search, highlights and flies to the matches. Keys
while it has focus: typing searches as you type, enter or down goes to the
next match, shift+enter or up to the previous one, escape closes the bar and
clears the highlight.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Input, Static

from .messages import SearchChanged, SearchClosed, SearchMoved

__all__ = ["SearchBar", "match_status"]


def match_status(query: str, position: int | None, count: int) -> str:
    """What the bar says: ``3 of 17``, ``no match for "xyz"``, or nothing before a query."""
    if not query.strip():
        return ""
    if not count:
        return f'no match for "{query.strip()}"'
    return f"{(position or 0) + 1} of {count}"


class SearchBar(Horizontal):
    """``find:`` prompt, the query, and the match count."""

    DEFAULT_CSS = """
    SearchBar {
        height: 1;
        background: $panel;
        display: none;
    }
    SearchBar #search-prompt {
        width: auto;
        padding: 0 1;
        text-style: bold;
    }
    SearchBar #search-input, SearchBar #search-input:focus {
        width: 1fr;
        height: 1;
        border: none;
        padding: 0;
    }
    SearchBar #search-status {
        width: auto;
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close search", show=False),
        Binding("down", "move(1)", "Next match", show=False),
        Binding("up,shift+enter", "move(-1)", "Previous match", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static("find:", id="search-prompt")
        yield Input(placeholder="op kind, value name or attribute", id="search-input")
        yield Static("", id="search-status")

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    @property
    def query_text(self) -> str:
        return self.input.value

    def open(self, query: str | None = None) -> None:
        """Show the bar and focus its input; a given ``query`` replaces the text (and searches)."""
        self.display = True
        if query is not None and query != self.input.value:
            self.input.value = query  # posts Input.Changed: the search runs
        self.input.focus()

    def show_status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(text)

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(SearchChanged(event.value))

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(SearchMoved(1))

    def action_move(self, direction: int) -> None:
        self.post_message(SearchMoved(direction))

    def action_close(self) -> None:
        self.display = False
        self.post_message(SearchClosed())
