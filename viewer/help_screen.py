"""The help screen: every key (the README's table) and every colour."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .keys import KEYS
from .palette import LEGEND, style_for

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    """Keys and colours, in one place."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen #help {
        width: 90%;
        max-width: 110;
        height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.theme_name = theme

    def compose(self) -> ComposeResult:
        keys = Table(title="Keys", show_header=False, box=None, padding=(0, 1))
        keys.add_column(no_wrap=True)
        keys.add_column()
        for key, what in KEYS:
            keys.add_row(Text(key, style="bold"), what)
        legend = Table(title="Colours", show_header=False, box=None, padding=(0, 1))
        for mark, meaning in LEGEND.items():
            style = style_for({mark}, self.theme_name)
            legend.add_row(Text("  ■  ", style=f"{style.stroke} on {style.fill}"), meaning)
        with VerticalScroll(id="help"):
            yield Static(keys)
            yield Static(legend)
