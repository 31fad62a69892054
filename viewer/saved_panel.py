"""The Saved tab: what each differentiated graph saves for backward, and the
what-if of recomputing some of it.

The table is ``gradview saved``'s (rows from :mod:`~gradview.viewer.saved_rows`).
The row under the cursor is the selected one: the panel posts
:class:`SavedPanel.Chosen` with what to light, and the app moves the canvas to
that graph's joint view. ``w`` (:meth:`SavedPanel.toggle_mark`) marks or unmarks
the row as recomputed; the words under the table then give the trade
(:func:`gradview.runtime.recompute.what_if_recomputed`). Nothing in the trace
changes: marks live in this panel only.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.recompute import Recomputation, RecomputeError, what_if_recomputed
from gradview.runtime.saved_values import GraphSaved, SavedValue

from .saved_rows import (
    COLUMNS,
    SavedLight,
    describe_graph,
    describe_value,
    describe_what_if,
    empty_message,
    heading_cells,
    light_for,
    value_cells,
)

__all__ = ["SavedPanel"]

class SavedPanel(Vertical):
    """A status line, the table, and the selected row in full with its graph's what-if."""

    DEFAULT_CSS = """
    SavedPanel #saved-status {
        height: auto;
    }
    SavedPanel #saved-table {
        height: 1fr;
        min-height: 4;
    }
    SavedPanel #saved-detail-scroll {
        height: auto;
        max-height: 60%;
        scrollbar-size-vertical: 1;
    }
    SavedPanel #saved-detail {
        height: auto;
    }
    """

    class Loaded(Message):
        """The saved values of the session's trace (computed in a worker), or why there are none."""

        def __init__(self, graphs: list[GraphSaved], error: str | None) -> None:
            super().__init__()
            self.graphs = graphs
            self.error = error

    class Chosen(Message):
        """What the selected row (and its graph's what-if) lights, and where both show."""

        def __init__(self, light: SavedLight) -> None:
            super().__init__()
            self.light = light

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.trace: PassTrace | None = None
        self.graphs: list[GraphSaved] = []
        self.loaded = False
        self.marked: dict[int, list[str]] = {}  # graph position -> names marked as recomputed, in order
        self.what_ifs: dict[int, Recomputation] = {}
        self.refusal: str | None = None  # the last mark refused (a graph input), until the cursor moves
        self._rows: list[tuple[int, SavedValue | None]] = []  # table row -> (graph position, value)
        self._chosen: tuple[int, SavedValue | None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("S: computing what each graph saves…", style="dim"), id="saved-status")
        yield DataTable(id="saved-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="saved-detail-scroll"):  # long source lines wrap: scroll at 80x24
            yield Static("", id="saved-detail")

    def on_mount(self) -> None:
        self.table.add_columns(*COLUMNS)

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#saved-table", DataTable)

    @property
    def status(self) -> Static:
        return self.query_one("#saved-status", Static)

    @property
    def detail(self) -> Static:
        return self.query_one("#saved-detail", Static)

    def load(self, trace: PassTrace, graphs: list[GraphSaved], error: str | None) -> None:
        """Fill the table (once per session); ``error``: one line shown instead of it."""
        self.trace, self.graphs, self.loaded = trace, graphs, True
        if error is not None or not graphs:
            self.table.display = False
        if error is not None:
            self.status.update(Text(error, style="red"))
            return
        if not graphs:
            self.status.update(Text(empty_message(trace), style="yellow"))
            return
        self.status.display = False  # the words under the table say what to do
        table = self.table
        for position, graph in enumerate(graphs):
            table.add_row(*heading_cells(graph, None), key=str(position))
            self._rows.append((position, None))
            for value in graph.saved:
                table.add_row(*value_cells(value, False), key=f"{position}:{value.name}")
                self._rows.append((position, value))
        table.move_cursor(row=1 if len(self._rows) > 1 else 0)  # the first graph's biggest value
        self.choose()

    def focus_table(self) -> None:
        self.table.focus()

    # -- the selected row --------------------------------------------------------------------
    def current(self) -> tuple[int, SavedValue | None] | None:
        """(graph position, value or None on a graph's heading) of the row under the cursor."""
        row = self.table.cursor_row
        return self._rows[row] if self._rows and 0 <= row < len(self._rows) else None

    @on(DataTable.RowHighlighted, "#saved-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if self.current() != self._chosen:
            self.refusal = None
            self.choose()

    def choose(self) -> None:
        """Show the row under the cursor in full and ask the app to light it."""
        current = self._chosen = self.current()
        if current is None:
            return
        position, value = current
        graph = self.graphs[position]
        what_if = self.what_ifs.get(position)
        text = describe_graph(graph) if value is None else describe_value(value)
        text.append("\n\n")
        if self.refusal is not None:
            text.append(self.refusal + "\n", style="red")
        text.append_text(describe_what_if(graph, self.marked.get(position, []), what_if))
        self.detail.update(text)
        self.post_message(self.Chosen(light_for(graph, value, what_if)))

    # -- the what-if --------------------------------------------------------------------------
    def toggle_mark(self) -> None:
        """Mark the row under the cursor as recomputed, or unmark it; a graph input is refused
        with one line (nothing in the forward makes it)."""
        current = self.current()
        if current is None or current[1] is None or self.trace is None:
            return
        position, value = current
        graph = self.graphs[position]
        marked = list(self.marked.get(position, []))
        if value.name in marked:
            marked.remove(value.name)
        else:
            marked.append(value.name)
        self.refusal = None
        try:
            what_if = what_if_recomputed(self.trace, graph, marked) if marked else None
        except RecomputeError as exc:
            self.refusal = str(exc).splitlines()[0]
            self.choose()
            return
        self.marked[position] = marked
        if what_if is None:
            self.what_ifs.pop(position, None)
        else:
            self.what_ifs[position] = what_if
        table = self.table
        names = table.ordered_columns
        for column, cell in zip(names, value_cells(value, value.name in marked), strict=True):
            table.update_cell(f"{position}:{value.name}", column.key, cell, update_width=True)
        for column, cell in zip(names, heading_cells(graph, what_if), strict=True):
            table.update_cell(str(position), column.key, cell, update_width=True)
        self.choose()
