"""The Saved tab: what each differentiated graph saves for backward, and the
what-if of recomputing some of it.

The table is ``gradview saved``'s (rows from :mod:`~gradview.viewer.saved_rows`).
The row under the cursor is the selected one: the panel posts
:class:`SavedPanel.Chosen` with what to light, and the app moves the canvas to
that graph's joint view. The table keeps its most useful columns at any
width (:mod:`~gradview.viewer.fit_table`; the line under it names those left
out, and the words under it give the selected row in full). ``w`` (:meth:`SavedPanel.toggle_mark`) marks or unmarks
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
from textual.widgets import Static

from gradview.runtime import (
    GraphSaved,
    PassTrace,
    Recomputation,
    RecomputeError,
    SavedValue,
    what_if_recomputed,
)

from .fit_table import FitTable
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
from .table_fit import Cell, Column, Forms, hidden_note, shape

__all__ = ["SavedPanel", "SAVED_COLUMNS"]

# How useful each of saved_rows' columns is at a narrow width: 0 is dropped last.
_KEEP = {"name": 0, "bytes": 1, "producer": 2, "shape": 3, "consumers": 4, "dtype": 5}
SAVED_COLUMNS = tuple(
    Column(label, _KEEP.get(label, len(_KEEP)), min_width=8 if label == "name" else 7,
           justify="right" if label == "bytes" else "left", cut_at="middle" if label == "name" else "end")
    for label in COLUMNS
)

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
    SavedPanel #saved-note {
        height: auto;
        color: $text-muted;
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

    def __init__(self, *, id: str | None = None) -> None:  # Textual's name
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
        yield FitTable(SAVED_COLUMNS, id="saved-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="saved-note")
        with VerticalScroll(id="saved-detail-scroll"):  # long source lines wrap: scroll at 80x24
            yield Static("", id="saved-detail")

    def on_mount(self) -> None:
        self.query_one("#saved-note", Static).display = False

    @on(FitTable.Fitted, "#saved-table")
    def _fitted(self, event: FitTable.Fitted) -> None:
        event.stop()
        note = self.query_one("#saved-note", Static)
        note.update(hidden_note(event.hidden))
        note.display = bool(event.hidden) and bool(self.table.display)

    @property
    def table(self) -> FitTable:
        return self.query_one("#saved-table", FitTable)

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
        rows: list[tuple[str | None, tuple[Cell, ...]]] = []
        for position, graph in enumerate(graphs):
            rows.append((str(position), _heading(graph, None)))
            self._rows.append((position, None))
            for value in graph.saved:
                rows.append((f"{position}:{value.name}", _cells(value, False)))
                self._rows.append((position, value))
        table.set_rows(rows)
        table.move_cursor(row=1 if len(self._rows) > 1 else 0)  # the first graph's biggest value
        self.choose()

    def focus_table(self) -> None:
        self.table.focus()

    # -- the selected row --------------------------------------------------------------------
    def current(self) -> tuple[int, SavedValue | None] | None:
        """(graph position, value or None on a graph's heading) of the row under the cursor."""
        row = self.table.cursor_row
        return self._rows[row] if self._rows and 0 <= row < len(self._rows) else None

    @on(FitTable.RowHighlighted, "#saved-table")
    def _highlighted(self, event: FitTable.RowHighlighted) -> None:
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
        self.table.replace_rows({
            f"{position}:{value.name}": _cells(value, value.name in marked),
            str(position): _heading(graph, what_if),
        })
        self.choose()


def _cells(value: SavedValue, recomputed: bool) -> tuple[Cell, ...]:
    """A saved value's row, its bytes and shape spelt so that a narrow column shortens
    them (``9.44 MB``, ``8x16``) rather than cut them."""
    cells: list[Cell] = list(value_cells(value, recomputed))
    cells[COLUMNS.index("shape")] = shape(tuple(value.shape), brackets="[]")
    cells[COLUMNS.index("bytes")] = _bytes(cells[COLUMNS.index("bytes")], value.bytes)
    return tuple(cells)


def _heading(graph: GraphSaved, what_if: Recomputation | None) -> tuple[Cell, ...]:
    """A graph's heading row, its total spelt as the value rows' bytes are."""
    cells: list[Cell] = list(heading_cells(graph, what_if))
    total = what_if.saved_bytes_after if what_if is not None else graph.total_bytes
    cells[COLUMNS.index("bytes")] = _bytes(cells[COLUMNS.index("bytes")], total)
    return tuple(cells)


def _bytes(cell: Cell, count: int) -> Forms:
    """``cell`` (saved_rows' ``9,437,184``, in its style) with a short spelling, ``9.44 MB``."""
    style = str(cell.style) if isinstance(cell, Text) else ""
    short = next((f"{count / size:.3g} {unit}" for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)) if count >= size),
                 f"{count} B")
    full = cell.plain if isinstance(cell, Text) else str(cell)
    return Forms((full, short) if len(short) < len(full) else (full,), style)
