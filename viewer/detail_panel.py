"""The tabs panel: Inspect (the selected node, the pass's docs), IR (the step's
text or its diff), Run (values of the last run), Check (b and G) and Saved
(what each graph saves for backward, :mod:`~gradview.viewer.saved_panel`).

The panel reads at any width: the Inspect table gives its values the width
(:mod:`~gradview.viewer.key_values`) and the Run and Check tables keep their
most useful columns (:mod:`~gradview.viewer.fit_table`), saying under the
table which ones a narrow panel leaves out.

Which tab is in front: an action that fills a tab brings it forward
(:meth:`DetailPanel.activate`); ``p`` / ``P`` cycle the tabs
(:meth:`DetailPanel.cycle`). A tab the user chose (with ``p`` / ``P`` or a
click) is being read: selecting a node then leaves it in front
(:attr:`DetailPanel.reading`)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from gradview.runtime import PassTrace, graph_draws_random_values

from .fit_table import FitTable
from .formatting import (
    doc_lines,
    short_summary,
    value_names,
    values_of_node,
    wrap_lines,
)
from .key_values import KeyValues
from .model import View
from .random_values import RANDOM_NOTE
from .saved_panel import SavedPanel
from .table_fit import Column, hidden_note, number, shape
from .text_pane import TextPane

__all__ = ["DetailPanel", "TABS", "RUN_COLUMNS", "CHECK_COLUMNS"]

TABS = ("tab-inspect", "tab-ir", "tab-run", "tab-check", "tab-saved")  # in the order p cycles them
# The Run and Check tables' columns; keep 0 is dropped last (see table_fit).
RUN_COLUMNS = (  # min and max show nowhere else (the nodes show shape, dtype and mean): they stay longest
    Column("value", 0, min_width=8, cut_at="middle"),
    Column("shape", 4),
    Column("dtype", 5, min_width=7),
    Column("min", 1, justify="right"),
    Column("max", 2, justify="right"),
    Column("mean", 3, justify="right"),
)
CHECK_COLUMNS = (
    Column("value", 0, min_width=8, cut_at="middle"),
    Column("shape", 4),
    Column("max abs err", 2, short="abs err", justify="right"),
    Column("max rel err", 3, short="rel err", justify="right"),
    Column("result", 1, min_width=7),
)


class DetailPanel(Vertical):
    """The IR tab is filled lazily: a big graph's text costs time, so it is
    built when the tab is shown (or the diff is asked for)."""

    DEFAULT_CSS = """
    DetailPanel #tabs {
        height: 1fr;
    }
    DetailPanel Tab {
        padding: 0 0 0 1;  /* one space between labels: the five tabs fit the default 30 columns */
    }
    DetailPanel TabPane {
        padding: 0 1;
    }
    DetailPanel #values, DetailPanel #gradcheck {
        height: 1fr;
    }
    DetailPanel .table-note {
        height: auto;
        color: $text-muted;
    }
    DetailPanel #inspector {
        height: auto;
        max-height: 75%;  /* sized to its rows: at 120x40 a vjp output's formula, IR and types all show */
    }
    DetailPanel #passdoc {
        height: 1fr;
    }
    """

    class Brought(Message):
        """An action filled ``tab`` and brought it forward (the app opens a collapsed panel, or says so)."""

        def __init__(self, tab: str) -> None:
            super().__init__()
            self.tab = tab

    def __init__(self, *, id: str | None = None) -> None:  # Textual's name
        super().__init__(id=id)
        self._ir_lines: Any = None  # a callable giving the IR lines, until the IR tab shows them
        self._inspector_shown: tuple[Any, ...] | None = None
        self._doc_shown: str | None = None
        self._brought = TABS[0]  # the tab an action last brought forward

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("Inspect", id="tab-inspect"):
                yield Static(id="inspector")
                yield TextPane(id="passdoc")
            with TabPane("IR", id="tab-ir"):
                yield TextPane(id="irtext")
            with TabPane("Run", id="tab-run"):
                yield Static("r: run this step on the example inputs", id="run-status")
                yield FitTable(RUN_COLUMNS, id="values", zebra_stripes=True)
                yield Static("", id="values-note", classes="table-note")
            with TabPane("Check", id="tab-check"):
                yield Static(
                    "b: find the first step whose outputs or gradients differ · "
                    "G: gradient check of the step on screen",
                    id="check-status",
                )
                yield FitTable(CHECK_COLUMNS, id="gradcheck", zebra_stripes=True)
                yield Static("", id="gradcheck-note", classes="table-note")
            with TabPane("Saved", id="tab-saved"):
                yield SavedPanel(id="saved")

    def on_mount(self) -> None:
        for note in self.query(".table-note"):
            note.display = False

    @on(FitTable.Fitted)
    def _fitted(self, event: FitTable.Fitted) -> None:
        """Say under a Run or Check table which columns the width leaves out."""
        if event.table.id not in ("values", "gradcheck"):
            return  # the Saved tab's table has its own line
        note = self.query_one(f"#{event.table.id}-note", Static)
        note.update(hidden_note(event.hidden))
        note.display = bool(event.hidden)

    # -- tabs ---------------------------------------------------------------------------
    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    @property
    def reading(self) -> bool:
        """Whether the tab in front is one the user chose (p / P or a click), not one an action brought."""
        return self.active != self._brought

    def activate(self, tab: str) -> None:
        """Bring ``tab`` forward because an action filled it."""
        self._brought = tab
        self._show(tab)
        self.post_message(self.Brought(tab))

    def show_selection(self) -> None:
        """A node was selected: the Inspect tab comes forward, unless the user is reading another tab."""
        if not self.reading:
            self.activate(TABS[0])

    def cycle(self, step: int) -> str:
        """The next (``step`` 1) or previous (-1) tab in front, chosen by the user; its id."""
        tab = TABS[(TABS.index(self.active) + step) % len(TABS)] if self.active in TABS else TABS[0]
        self._brought = ""
        self._show(tab)
        return tab

    def _show(self, tab: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active == tab:
            return
        # Focus inside the pane being hidden would pull it back to the front
        # (TabbedContent shows the pane of a focused widget): it moves along to
        # the new pane's first focusable widget.
        focused = self.screen.focused
        moving = focused is not None and any(isinstance(a, TabPane) and a.id != tab for a in focused.ancestors)
        tabs.active = tab
        if moving:
            target = next((w for w in self.query_one(f"#{tab}", TabPane).query(Widget) if w.focusable), None)
            if target is not None:
                target.focus()
            else:
                self.screen.set_focus(None)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-ir":
            self._fill_ir()

    # -- IR -------------------------------------------------------------------------------
    def show_ir(self, lines: Any, now: bool, keep_scroll: bool) -> None:
        """``lines()`` gives the IR tab's lines: built ``now``, or when the tab is shown."""
        self._ir_lines = (lines, keep_scroll)
        if now or self.active == "tab-ir":
            self._fill_ir()

    def _fill_ir(self) -> None:
        if self._ir_lines is None:
            return
        lines, keep_scroll = self._ir_lines
        self._ir_lines = None
        built = lines()  # long IR lines wrap to the pane, and again when it is resized
        self.query_one("#irtext", TextPane).set_wrapped(lambda width: wrap_lines(built, width), keep_scroll=keep_scroll)

    # -- Inspect --------------------------------------------------------------------------------
    def show_inspector(self, trace: PassTrace, index: int, selected: int | None, view: View, dg: int, run: Any) -> None:
        """The selected node's facts (and its run values), then the pass's docs."""
        from .inspector import inspect_node, inspect_value, pass_doc

        signature = (selected, index if selected is not None else None, view, dg, run is not None)
        if signature != self._inspector_shown:
            self._inspector_shown = signature
            rows: list[tuple[str, str | Text]] = []
            if selected is not None:
                try:
                    rows += inspect_node(trace, index, selected, view, dg) or inspect_value(trace, index, selected, view, dg)
                except Exception as exc:  # shown in the panel
                    rows = [("error", f"{type(exc).__name__}: {exc}")]
                if run is not None and getattr(run, "values", None):
                    for vid, summary in values_of_node(trace[index], selected, run.values):
                        rows.append((f"value %{vid}", short_summary(summary)))
            else:
                rows.append(("", Text("select a node: click it, or n / N on the canvas", style="dim")))
            self.query_one("#inspector", Static).update(KeyValues(rows))
        name = trace[index].pass_name
        if name != self._doc_shown:
            self._doc_shown = name
            doc = pass_doc(name) or "(no description for this step)"
            self.query_one("#passdoc", TextPane).set_wrapped(lambda width: doc_lines(name, doc, width))

    # -- Run ------------------------------------------------------------------------------------
    def run_started(self, index: int) -> None:
        """A run began: the Run tab comes forward saying so."""
        self.query_one("#run-status", Static).update(f"running step {index}…")
        self.activate("tab-run")

    def show_run(self, index: int, step: Any, result: Any) -> str | None:
        """Fill the Run tab with ``result``; the error message when the run failed."""
        status = self.query_one("#run-status", Static)
        table = self.query_one("#values", FitTable)
        table.clear_rows()
        error = result if isinstance(result, str) else getattr(result, "error", None) or getattr(result, "unavailable", None)
        if error:
            status.update(Text(f"step {index}: {error}", style="red"))
            return str(error)
        names = value_names(step)
        rows = []
        for value_id, summary in (getattr(result, "values", {}) or {}).items():
            sizes = getattr(summary, "shape", None)
            rows.append((None, (
                "%" + names.get(value_id, str(value_id)),
                shape(sizes) if sizes is not None else str(getattr(summary, "text", "")),
                str(getattr(summary, "dtype", None) or ""),
                number(getattr(summary, "min", None)), number(getattr(summary, "max", None)),
                number(getattr(summary, "mean", None)),
            )))
        table.set_rows(rows)
        said = f"step {index} ran on the example inputs: values shown on the nodes"
        if step is not None and graph_draws_random_values(step.graph):
            said += f"; {RANDOM_NOTE}"
        status.update(said)
        return None

    # -- Check ------------------------------------------------------------------------------------
    def check_started(self, text: str) -> None:
        """A check began: its first line, the previous result's table cleared."""
        self.query_one("#check-status", Static).update(text)
        self.query_one("#gradcheck", FitTable).clear_rows()
        self.activate("tab-check")

    def check_progress(self, text: str) -> None:
        """Where a running check is ("b: checking step k of n: ..."); the tab shown stays."""
        self.query_one("#check-status", Static).update(Text(text, style="dim"))

    def show_check(self, result: Any) -> None:
        """A check's result (b or G) replaces whatever check was shown: its
        one-line message, naming the step, then one row per compared value."""
        status = self.query_one("#check-status", Static)
        table = self.query_one("#gradcheck", FitTable)
        table.clear_rows()
        self.activate("tab-check")
        if isinstance(result, str):
            status.update(Text(result, style="red"))
            return
        style = {"pass": "green", "fail": "bold red"}.get(result.status, "yellow")
        status.update(Text(result.message, style=style))  # it names the check and the step
        rows = []
        for row in result.rows:
            verdict_style = {"pass": "green", "FAIL": "bold red"}.get(row.verdict, "dim")
            rows.append((None, (
                row.name, shape(tuple(row.shape)) if row.shape is not None else "",
                number(row.max_abs_error), number(row.max_rel_error),
                Text(row.verdict + (f" ({row.note})" if row.note else ""), style=verdict_style),
            )))
        table.set_rows(rows)
