"""The tabs panel: Inspect (the selected node, the pass's docs), IR (the step's
text or its diff), Run (values of the last run), Check (b and G) and Saved
(what each graph saves for backward, :mod:`~gradview.viewer.saved_panel`)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from gradview.runtime.pass_trace import PassTrace

from .formatting import (
    doc_lines,
    fmt,
    short_summary,
    value_names,
    values_of_node,
)
from .model import View
from .saved_panel import SavedPanel
from .text_pane import TextPane

__all__ = ["DetailPanel"]


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
    DetailPanel #inspector {
        height: auto;
        max-height: 50%;
    }
    DetailPanel #passdoc {
        height: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._ir_lines: Any = None  # a callable giving the IR lines, until the IR tab shows them
        self._inspector_shown: tuple[Any, ...] | None = None
        self._doc_shown: str | None = None

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("Inspect", id="tab-inspect"):
                yield Static(id="inspector")
                yield TextPane(id="passdoc")
            with TabPane("IR", id="tab-ir"):
                yield TextPane(id="irtext")
            with TabPane("Run", id="tab-run"):
                yield Static("r: run this step on the example inputs", id="run-status")
                yield DataTable(id="values", zebra_stripes=True)
            with TabPane("Check", id="tab-check"):
                yield Static(
                    "b: find the first step whose outputs or gradients differ · "
                    "G: gradient check of the step on screen",
                    id="check-status",
                )
                yield DataTable(id="gradcheck", zebra_stripes=True)
            with TabPane("Saved", id="tab-saved"):
                yield SavedPanel(id="saved")

    def on_mount(self) -> None:
        self.query_one("#values", DataTable).add_columns("value", "shape", "dtype", "min", "max", "mean")
        self.query_one("#gradcheck", DataTable).add_columns("value", "shape", "max abs err", "max rel err", "result")

    # -- tabs ---------------------------------------------------------------------------
    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    def activate(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

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
        self.query_one("#irtext", TextPane).set_lines(lines(), keep_scroll=keep_scroll)

    # -- Inspect --------------------------------------------------------------------------------
    def show_inspector(self, trace: PassTrace, index: int, selected: int | None, view: View, dg: int, run: Any) -> None:
        """The selected node's facts (and its run values), then the pass's docs."""
        from .inspector import inspect_node, inspect_value, pass_doc  # noqa: PLC0415

        signature = (selected, index if selected is not None else None, view, dg, run is not None)
        if signature != self._inspector_shown:
            self._inspector_shown = signature
            table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
            table.add_column(style="bold", no_wrap=True)
            table.add_column(overflow="fold")
            if selected is not None:
                try:
                    rows = inspect_node(trace, index, selected, view, dg) or inspect_value(trace, index, selected, view, dg)
                except Exception as exc:  # noqa: BLE001 - shown in the panel
                    rows = [("error", f"{type(exc).__name__}: {exc}")]
                for label, value in rows:
                    table.add_row(label, value)
                if run is not None and getattr(run, "values", None):
                    for vid, summary in values_of_node(trace[index], selected, run.values):
                        table.add_row(f"value %{vid}", short_summary(summary))
            else:
                table.add_row("", Text("select a node: click it, or n / N on the canvas", style="dim"))
            self.query_one("#inspector", Static).update(table)
        name = trace[index].pass_name
        if name != self._doc_shown:
            self._doc_shown = name
            doc = pass_doc(name) or "(no description for this step)"
            self.query_one("#passdoc", TextPane).set_wrapped(lambda width: doc_lines(name, doc, width))

    # -- Run ------------------------------------------------------------------------------------
    def run_started(self, index: int) -> None:
        self.query_one("#run-status", Static).update(f"running step {index}…")
        self.activate("tab-run")

    def show_run(self, index: int, step: Any, result: Any) -> str | None:
        """Fill the Run tab with ``result``; the error message when the run failed."""
        status = self.query_one("#run-status", Static)
        table = self.query_one("#values", DataTable)
        table.clear()
        error = result if isinstance(result, str) else getattr(result, "error", None) or getattr(result, "unavailable", None)
        if error:
            status.update(Text(f"step {index}: {error}", style="red"))
            return str(error)
        names = value_names(step)
        for value_id, summary in (getattr(result, "values", {}) or {}).items():
            table.add_row(
                "%" + names.get(value_id, str(value_id)),
                str(getattr(summary, "shape", "")), str(getattr(summary, "dtype", "")),
                fmt(getattr(summary, "min", None)), fmt(getattr(summary, "max", None)), fmt(getattr(summary, "mean", None)),
            )
        status.update(f"step {index} ran on the example inputs: values shown on the nodes")
        return None

    # -- Check ------------------------------------------------------------------------------------
    def check_started(self, text: str) -> None:
        """A check began: its first line, the previous result's table cleared."""
        self.query_one("#check-status", Static).update(text)
        self.query_one("#gradcheck", DataTable).clear()
        self.activate("tab-check")

    def check_progress(self, text: str) -> None:
        """Where a running check is ("b: checking step k of n: ..."); the tab shown stays."""
        self.query_one("#check-status", Static).update(Text(text, style="dim"))

    def show_check(self, result: Any) -> None:
        """A check's result (b or G) replaces whatever check was shown: its
        one-line message, naming the step, then one row per compared value."""
        status = self.query_one("#check-status", Static)
        table = self.query_one("#gradcheck", DataTable)
        table.clear()
        self.activate("tab-check")
        if isinstance(result, str):
            status.update(Text(result, style="red"))
            return
        style = {"pass": "green", "fail": "bold red"}.get(result.status, "yellow")
        status.update(Text(result.message, style=style))  # it names the check and the step
        for row in result.rows:
            verdict_style = {"pass": "green", "FAIL": "bold red"}.get(row.verdict, "dim")
            table.add_row(
                row.name, "" if row.shape is None else str(tuple(row.shape)),
                fmt(row.max_abs_error), fmt(row.max_rel_error),
                Text(row.verdict + (f" ({row.note})" if row.note else ""), style=verdict_style),
            )
