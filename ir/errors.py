"""Errors the IR raises on bad input: one clear line that names the place."""

from __future__ import annotations

__all__ = ["IRParseError", "IRVerifyError"]

_CONTEXT = 60  # characters of the offending line shown on each side of the caret


class IRParseError(ValueError):
    """Malformed IR text. ``str(err)`` is ``line:col: message`` followed by the
    offending line and a caret under the column."""

    def __init__(self, message: str, line: int, column: int, source_line: str = "") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    @property
    def summary(self) -> str:
        """The first line only: ``line:col: message``."""
        return f"{self.line}:{self.column}: {self.message}"

    def _render(self) -> str:
        text = self.source_line
        caret = self.column - 1
        # A 10 MB single line must not end up in a message: show a window.
        if len(text) > 2 * _CONTEXT:
            start = max(0, caret - _CONTEXT)
            prefix = "..." if start > 0 else ""
            end = min(len(text), caret + _CONTEXT)
            text = prefix + text[start:end] + ("..." if end < len(self.source_line) else "")
            caret = caret - start + len(prefix)
        printable = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in text)
        # Tabs before the caret stay tabs so the caret lines up under the column.
        caret = max(caret, 0)
        pad = "".join("\t" if ch == "\t" else " " for ch in printable[:caret]).ljust(caret)
        return f"{self.summary}\n    {printable}\n    {pad}^"


class IRVerifyError(ValueError):
    """A graph that breaks an IR invariant; the message names the node and says how to fix it."""

    def __init__(self, message: str, node: object | None = None) -> None:
        self.node = node
        super().__init__(message)
