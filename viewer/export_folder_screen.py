"""The viewer asks where to export, once: a folder field prefilled with the
default beside the target (viewer/export_paths.py). Enter keeps it for the
session's later exports; escape exports nothing."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

__all__ = ["ExportFolderScreen"]


class ExportFolderScreen(ModalScreen[Path | None]):
    """Where should this session's exports go? Answers the folder, or None when cancelled."""

    DEFAULT_CSS = """
    ExportFolderScreen {
        align: center middle;
    }
    ExportFolderScreen #export-folder {
        width: 80%;
        max-width: 100;
        height: auto;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: Path) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="export-folder"):
            yield Static("Export into which folder? (enter: export there, and there for the rest of the session; escape: cancel)")
            yield Input(str(self.default), id="export-folder-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.dismiss(Path(text).expanduser() if text else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
