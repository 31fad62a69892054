"""A DataTable that fits its panel: :func:`~gradview.viewer.table_fit.fit_table`
decides which columns show and how wide, again whenever the widget's width changes.

The table keeps the cells it was given (its rows) and shows them fitted; row
keys, the cursor row and the number of rows stay as given, so callers use it
as a DataTable with :meth:`set_rows`, :meth:`replace_rows` and :meth:`clear_rows`.
When columns are left out, :class:`FitTable.Fitted` says which (the panels
show :func:`~gradview.viewer.table_fit.hidden_note` under the table).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.message import Message
from textual.widgets import DataTable

from .table_fit import Cell, Column, FittedTable, fit_table

__all__ = ["FitTable", "Row"]

Row = tuple[str | None, Sequence[Cell]]  # (row key, cells)
UNLAID = 10_000  # the width fitted for before the widget has one: every column at full width


class FitTable(DataTable[object]):
    """The columns a narrow panel has room for, most useful first; nothing cut without an ellipsis."""

    class Fitted(Message):
        """The table was fitted anew and these column labels are left out (maybe none)."""

        def __init__(self, table: FitTable, hidden: tuple[str, ...]) -> None:
            super().__init__()
            self.table = table
            self.hidden = hidden

        @property
        def control(self) -> FitTable:
            return self.table

    def __init__(self, columns: Sequence[Column], *, id: str | None = None, **kwargs: object) -> None:
        super().__init__(id=id, cell_padding=0, **kwargs)  # type: ignore[arg-type]
        self.spec = tuple(columns)
        self.rows_given: list[Row] = []
        self.fitted: FittedTable | None = None
        self._fitted_at = -1
        self._hidden: tuple[str, ...] = ()

    # -- content -------------------------------------------------------------------------------
    def set_rows(self, rows: Sequence[Row]) -> None:
        """Show ``rows`` (replacing any), fitted to the width the table has now."""
        self.rows_given = list(rows)
        self.refit(force=True)

    def clear_rows(self) -> None:
        self.set_rows([])

    def replace_rows(self, changes: dict[str, Sequence[Cell]]) -> None:
        """New cells for the rows of the keys in ``changes`` (the columns may be fitted anew)."""
        self.rows_given = [(k, changes.get(k, c) if k is not None else c) for k, c in self.rows_given]
        self.refit(force=True)

    def given_row(self, index: int) -> Sequence[Cell]:
        """Row ``index``'s cells as given, every column (for tests and details)."""
        return self.rows_given[index][1]

    # -- fitting -------------------------------------------------------------------------------
    def _room(self) -> int:
        width = self.size.width
        if width <= 0:
            return UNLAID
        if len(self.rows_given) + self.header_height > self.size.height:  # a vertical scrollbar shows
            width -= self.styles.scrollbar_size_vertical
        return max(1, width)

    def refit(self, force: bool = False) -> None:
        """Lay the columns out for the table's width (when it changed, or ``force``)."""
        room = self._room()
        if room == self._fitted_at and not force:
            return
        self._fitted_at = room
        fitted = self.fitted = fit_table(self.spec, [cells for _, cells in self.rows_given], room)
        row, scroll_y = self.cursor_row, self.scroll_y
        self.clear(columns=True)
        for header, width in zip(fitted.headers(), fitted.cell_widths(), strict=True):
            self.add_column(header, width=width)
        for key, cells in self.rows_given:
            self.add_row(*fitted.cells(cells), key=key)
        if self.rows_given:
            self.move_cursor(row=min(row, len(self.rows_given) - 1), animate=False, scroll=False)
            self.scroll_to(y=scroll_y, animate=False, immediate=True)
        if fitted.hidden != self._hidden or force:
            self._hidden = fitted.hidden
            self.post_message(self.Fitted(self, fitted.hidden))

    def on_resize(self, _event: events.Resize) -> None:
        self.refit()
