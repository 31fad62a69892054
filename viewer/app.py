"""gradview's Textual app: step through every pass and watch the graph change.

Left, the pass timeline (grouped; ``u`` hides steps that changed nothing,
``/`` filters by pass name; up/down move through steps). Centre, the graph
of the selected step drawn from a union layout, so nodes stay where they are
from one step to the next; ``1``-``4`` switch between the whole graph, the
forward ``f``, the backward ``df`` and the joint view of the selected
DifferentiableGraph (``g`` picks the next one). Right, tabs: the inspector
(the selected node, and the docstring of the pass), the step's IR with its
changes marked (``d`` shows the unified diff), run results (``r`` runs the
graph of this step on the example inputs) and checks (``b`` finds the first
step whose outputs differ from the original graph's, ``G`` checks df's
gradients against finite differences).

The app only reads the session's trace; everything slow (layouts, runs,
checks) happens in thread workers, and a failure of any of them becomes a
message on screen, never a crash.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Input, Static, TabbedContent, TabPane

from gradview.runtime.pass_trace import which_label

from . import views
from .canvas import CanvasGeometry, GraphCanvas
from .commands import GradviewCommands
from .layout import DotMissingError, Layout, union_layout
from .marks import step_marks
from .model import DrawGraph, Marks, View
from .palette import LEGEND, style_for
from .session import Session
from .text_pane import TextPane
from .timeline import StepSummary, Timeline, summarize_steps

__all__ = ["GradviewApp", "HelpScreen"]

VIEW_KEYS = {"1": View.WHOLE, "2": View.FORWARD, "3": View.BACKWARD, "4": View.JOINT}
VIEW_NAMES = {View.WHOLE: "whole graph", View.FORWARD: "forward f", View.BACKWARD: "backward df", View.JOINT: "joint f→df"}


class HelpScreen(ModalScreen[None]):
    """Keys and colours, in one place."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.theme_name = theme

    def compose(self) -> ComposeResult:
        keys = Table(title="Keys", show_header=False, box=None, padding=(0, 1))
        for key, what in (
            ("up / down", "previous / next step (timeline)"),
            ("[ / ]", "previous / next step (anywhere)"),
            ("u", "hide or show the steps that changed nothing"),
            ("/", "filter the timeline by pass name"),
            ("1 2 3 4", "whole graph, forward f, backward df, joint view"),
            ("g", "next DifferentiableGraph"),
            ("arrows (canvas), drag", "pan; click a node to select it"),
            ("+ / - / 0", "zoom in, zoom out, fit"),
            ("n / N / c", "next / previous node, center on the selection"),
            ("d", "IR text or unified diff against the previous step"),
            ("r", "run this step's graph on the example inputs"),
            ("b", "find the first step whose outputs differ (which pass broke my numbers)"),
            ("G", "gradient check of df against finite differences"),
            ("e / E", "export this view as SVG / every step as one HTML file"),
            ("t", "dark or light theme"),
            ("ctrl+p", "command palette: jump to pass, find node, export"),
            ("q", "quit"),
        ):
            keys.add_row(Text(key, style="bold"), what)
        legend = Table(title="Colours", show_header=False, box=None, padding=(0, 1))
        for mark, meaning in LEGEND.items():
            style = style_for({mark}, self.theme_name)
            legend.add_row(Text("  ■  ", style=f"{style.stroke} on {style.fill}"), meaning)
        with VerticalScroll(id="help"):
            yield Static(keys)
            yield Static(legend)


class GradviewApp(App[None]):
    """Step through a pass trace: timeline, graph canvas, inspector."""

    CSS_PATH = "app.tcss"
    TITLE = "gradview"
    COMMANDS = App.COMMANDS | {GradviewCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("right_square_bracket,j", "step(1)", "Next step", show=False),
        Binding("left_square_bracket,k", "step(-1)", "Prev step", show=False),
        Binding("u", "toggle_unchanged", "Hide unchanged"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("1", "view('whole')", "Whole", show=False),
        Binding("2", "view('forward')", "f", show=False),
        Binding("3", "view('backward')", "df", show=False),
        Binding("4", "view('joint')", "Joint", show=False),
        Binding("v", "cycle_view", "View"),
        Binding("g", "next_graph", "Next DG", show=False),
        Binding("d", "toggle_diff", "Diff"),
        Binding("r", "run_step", "Run"),
        Binding("b", "find_divergence", "Broke?", show=False),
        Binding("G", "gradient_check", "Gradcheck", show=False),
        Binding("e", "export_view", "Export SVG", show=False),
        Binding("E", "export_html", "Export HTML", show=False),
        Binding("t", "toggle_theme", "Theme"),
        # Canvas keys that work wherever the focus is (arrows pan only when the canvas has focus).
        Binding("plus,equals_sign", "canvas('zoom', 1)", "Zoom in", show=False),
        Binding("minus", "canvas('zoom', -1)", "Zoom out", show=False),
        Binding("0", "canvas('fit')", "Fit", show=False),
        Binding("n", "canvas('select_next', 1)", "Next node", show=False),
        Binding("N", "canvas('select_next', -1)", "Prev node", show=False),
        Binding("c", "canvas('follow')", "Center", show=False),
    ]

    def __init__(self, session: Session, *, theme: str = "dark", export_dir: str = "gradview-export") -> None:
        super().__init__()
        self.session = session
        self.trace = session.trace
        self.theme_name = theme
        self.export_dir = Path(export_dir)
        self.index = 0
        self.view = View.WHOLE
        self.dg = 0
        self.selected: int | None = None
        self.show_diff = False
        self.summaries: list[StepSummary] = []
        self.layouts: dict[Any, Layout] = {}
        self.layout_errors: dict[Any, str] = {}
        self.run_results: dict[int, Any] = {}
        self.failures: dict[int, str] = {}
        self._pending_layouts: list[Any] = []
        self._draw_cache: dict[tuple[int, View, int], DrawGraph] = {}
        self.dot_note_shown = False
        self._ir_stale = True
        self._ir_marks = Marks()
        self._doc_shown: str | None = None
        self._painted = False  # layouts start after the first screen is painted
        self._gc_thresholds = gc.get_threshold()
        self._inspector_shown: tuple[Any, ...] | None = None

    # -- layout of the screen -------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter passes  (/)", id="filter")
                yield Timeline(id="timeline")
            with Vertical(id="center"):
                yield Static(id="viewbar")
                yield GraphCanvas(id="canvas", theme=self.theme_name)
            with TabbedContent(id="right"):
                with TabPane("Inspect", id="tab-inspect"):
                    yield Static(id="inspector")
                    yield TextPane(id="passdoc")
                with TabPane("IR", id="tab-ir"):
                    yield TextPane(id="irtext")
                with TabPane("Run", id="tab-run"):
                    yield Static("r: run this step on the example inputs", id="run-status")
                    yield DataTable(id="values", zebra_stripes=True)
                with TabPane("Check", id="tab-check"):
                    yield Static("b: find the first step that changes the outputs · G: gradient check", id="check-status")
                    yield DataTable(id="gradcheck", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        # The trace is millions of small immutable records that live as long
        # as the app: keep the cyclic garbage collector from rescanning them
        # (a full collection took half a second in the middle of a key press).
        # No collection first: on a big trace it alone costs most of a second.
        self._gc_thresholds = gc.get_threshold()
        gc.freeze()
        # The layout worker allocates drawings by the hundred thousand; with
        # the default thresholds the collector ran so often that it slowed the
        # worker by a third and now and then stalled a key press.
        gc.set_threshold(100_000, 50, 100)
        self.theme = "textual-dark" if self.theme_name == "dark" else "textual-light"
        self.animation_level = "none"
        self.sub_title = Path(self.session.name.partition(":")[0]).name + (
            ":" + self.session.name.rpartition(":")[2] if ".py:" in self.session.name else ""
        ) + _autodiff_label(self.trace.autodiff_mode())
        self.summaries = summarize_steps(self.trace)
        timeline = self.query_one(Timeline)
        timeline.load(self.summaries)
        timeline.focus()
        for note in self.session.notes:
            self.notify(note, severity="warning", timeout=8)
        self.query_one("#values", DataTable).add_columns("value", "shape", "dtype", "min", "max", "mean")
        self.query_one("#gradcheck", DataTable).add_columns("input", "shape", "max abs err", "max rel err", "result")
        self.show_step(0)
        # Lay out once the first screen is painted: the worker competes with
        # the event loop for the interpreter, and the first paint comes first.
        self.call_after_refresh(self._queue_all_layouts)

    async def wait_for_layouts(self) -> None:
        """Until every queued layout is done (for tests, scripts and benchmarks)."""
        while not self._painted or self._pending_layouts:
            await asyncio.sleep(0.01)
        await self.workers.wait_for_complete()

    def on_unmount(self) -> None:
        """Give the process its collector back (tests and scripts run several apps)."""
        gc.set_threshold(*self._gc_thresholds)
        gc.unfreeze()

    # -- stepping ---------------------------------------------------------------------------
    def show_step(self, index: int) -> None:
        if not len(self.trace):
            return
        self.index = max(0, min(len(self.trace) - 1, index))
        timeline = self.query_one(Timeline)
        if timeline.current_step() != self.index:
            timeline.highlight_step(self.index)
        self.refresh_view()

    def refresh_view(self) -> None:
        """Redraw everything that depends on the step, the view and the selection."""
        step = self.trace[self.index]
        canvas = self.query_one(GraphCanvas)
        reason = views.view_unavailable_reason(self.trace, self.index, self.view, self.dg)
        graph = DrawGraph() if reason else self._draw(self.index, self.view, self.dg)
        marks = Marks() if reason else self._marks()
        if self.index in self.run_results:
            graph = dataclasses.replace(graph, nodes=dict(graph.nodes))  # the cached drawing stays as it was
            self._add_run_values(graph)
        key = self._layout_key(self.index, self.view, self.dg)
        layout = self.layouts.get(key)
        message = reason or self.layout_errors.get(key) or "laying out…"
        if layout is None and not reason:
            self._request_layout(key)
        canvas.selected = self.selected if self.selected in graph.nodes else None
        canvas.show(layout if not reason else None, graph, marks, message)
        self._update_viewbar(step)
        self._ir_marks = marks
        if self.show_diff or self.query_one("#right", TabbedContent).active == "tab-ir":
            self._update_ir(step, marks)
        else:
            self._ir_stale = True
        self._update_inspector()

    def _draw(self, index: int, view: View, dg: int) -> DrawGraph:
        key = (index, view, dg)
        graph = self._draw_cache.get(key)
        if graph is None:
            graph = views.draw_step(self.trace, index, view, dg)
            if len(self._draw_cache) > 512:
                self._draw_cache.clear()
            self._draw_cache[key] = graph
        return graph

    def _marks(self) -> Marks:
        drawing = self._draw(self.index, self.view, self.dg)
        return step_marks(self.trace, self.index, self.view, self.dg, selection=self.selected, drawing=drawing)

    def _add_run_values(self, graph: DrawGraph) -> None:
        """Show run results on the nodes: each output's line ``%h : Double(8, 16)``
        becomes ``%h = 8x16 float64 μ=0.12`` (the box keeps its size)."""
        result = self.run_results.get(self.index)
        summaries = getattr(result, "values", None) if result is not None else None
        if not summaries:
            return
        names = _value_names(self.trace[self.index])
        by_name = {names[v]: summary for v, summary in summaries.items() if v in names}
        for node_id, node in list(graph.nodes.items()):
            lines = node.label.splitlines()
            changed = False
            for position, line in enumerate(lines[1:], start=1):
                name = line.split(" ", 1)[0].lstrip("%")
                summary = by_name.get(name)
                if line.startswith("%") and summary is not None:
                    lines[position] = f"%{name} = {_short_summary(summary)}"
                    changed = True
            if node.role.value == "input":
                name = lines[0].split(" ", 1)[0].lstrip("%")
                if name in by_name:
                    lines[0] = f"%{name} = {_short_summary(by_name[name])}"
                    changed = True
            if changed:
                graph.nodes[node_id] = dataclasses.replace(node, label="\n".join(lines))

    # -- layouts (in a worker) -----------------------------------------------------------------
    def _layout_key(self, index: int, view: View, dg: int) -> Any:
        if view is View.WHOLE:
            return ("whole", self.trace[index].which)
        return (view.value, dg)

    def _queue_all_layouts(self) -> None:
        self._painted = True
        keys: list[Any] = list(self._pending_layouts)
        for step in self.trace:
            key = ("whole", step.which)
            if key not in keys:
                keys.append(key)
        for dg in range(views.differentiable_graph_count(self.trace)):
            keys += [(View.FORWARD.value, dg), (View.BACKWARD.value, dg), (View.JOINT.value, dg)]
        self._pending_layouts.clear()
        for key in keys:
            self._request_layout(key)

    def _request_layout(self, key: Any) -> None:
        if key in self.layouts or key in self.layout_errors or key in self._pending_layouts:
            return
        self._pending_layouts.append(key)
        if len(self._pending_layouts) == 1 and self._painted:
            self._layout_worker()

    @work(thread=True, exclusive=False, group="layout")
    def _layout_worker(self) -> None:
        while self._pending_layouts:
            key = self._pending_layouts[0]
            try:
                graphs = self._union_members(key)
                layout = union_layout(graphs) if graphs else Layout()
                geometry = CanvasGeometry.build(layout, self.query_one(GraphCanvas).zoom)
                self.call_from_thread(self._layout_ready, key, layout, None, geometry)
            except DotMissingError as exc:
                self.call_from_thread(self._layout_ready, key, None, str(exc))
            except Exception as exc:  # noqa: BLE001 - shown in the canvas, never a crash
                self.call_from_thread(self._layout_ready, key, None, f"layout failed: {type(exc).__name__}: {exc}")
            finally:
                if self._pending_layouts and self._pending_layouts[0] == key:
                    self._pending_layouts.pop(0)
        # Then draw every step of the whole-graph view ahead of the user, so a
        # step key only has to look the drawing up, and check that every
        # step's graph is well formed (a broken one is marked failed).
        for step in self.trace:
            if self._pending_layouts:
                break
            problem = _lint_problem(step)
            if problem is not None and step.index not in self.failures:
                self.call_from_thread(self._mark_failed, step.index, problem)
            try:
                self._draw(step.index, View.WHOLE, 0)
            except Exception as exc:  # noqa: BLE001 - shown as the step's failure
                self.call_from_thread(self._mark_failed, step.index, f"cannot draw: {type(exc).__name__}: {exc}")

    def _mark_failed(self, index: int, message: str) -> None:
        self.failures[index] = message
        self.query_one(Timeline).mark_failed(index, message)
        if index == self.index:
            self.refresh_view()

    def _union_members(self, key: Any) -> list[DrawGraph]:
        kind, which_or_dg = key
        if kind == "whole":
            # A step that changed nothing shows its predecessor's graph again:
            # only the first step of the graph and the changing ones add to the union.
            members = []
            for step in self.trace:
                if step.which == which_or_dg and (step.changed or not members):
                    members.append(views.draw_step(self.trace, step.index, View.WHOLE, 0, ghosts=False))
            return members
        view = View(kind)
        members = []
        seen: set[tuple[int, ...]] = set()
        for step in self.trace:
            if views.view_unavailable_reason(self.trace, step.index, view, which_or_dg):
                continue
            graph = views.draw_step(self.trace, step.index, view, which_or_dg, ghosts=False)
            signature = tuple(sorted(graph.nodes))
            if signature not in seen:
                seen.add(signature)
                members.append(graph)
        return members

    def _layout_ready(self, key: Any, layout: Layout | None, error: str | None, geometry: Any = None) -> None:
        if layout is not None:
            self.layouts[key] = layout
            if geometry is not None:
                self.query_one(GraphCanvas).prime(layout, geometry)
            if layout.engine != "dot" and not self.dot_note_shown:
                self.dot_note_shown = True
                self.notify(
                    "Graphviz's dot was not found (Debian: apt-get install graphviz): "
                    "using the built-in layered layout",
                    severity="warning",
                    timeout=8,
                )
        else:
            self.layout_errors[key] = error or "layout failed"
        if not self._pending_layouts:
            gc.freeze()  # the layouts and geometries live as long as the app too
        if key == self._layout_key(self.index, self.view, self.dg):
            self.refresh_view()

    # -- panes ------------------------------------------------------------------------------------
    def _update_viewbar(self, step: Any) -> None:
        text = Text()
        text.append(f" step {step.index}/{len(self.trace) - 1} ", style="bold reverse")
        text.append(f" {step.pass_name} ", style="bold")
        text.append(f"[{which_label(step.which)}] ", style="dim")
        text.append("changed" if step.changed else "unchanged", style="green" if step.changed else "dim")
        failure = self.failures.get(step.index)
        if failure:
            text.append(f"  ✗ {failure}", style="bold red")
        text.append("  │ ", style="dim")
        text.append(VIEW_NAMES[self.view], style="bold reverse")
        text.append(" (1-4)", style="dim")
        count = views.differentiable_graph_count(self.trace)
        if count and self.view is not View.WHOLE:
            text.append(f"  │ DifferentiableGraph {self.dg} of {count} (g)", style="dim")
        self.query_one("#viewbar", Static).update(text, layout=False)

    def _update_ir(self, step: Any, marks: Marks) -> None:
        pane = self.query_one("#irtext", TextPane)
        if self.show_diff:
            previous = self.trace.previous(step)
            diff = step.diff(previous) if previous is not None else ""
            lines: list[tuple[str, Style | None]] = []
            for line in (diff or "(no change against the previous step of this graph)").splitlines():
                color = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else None
                lines.append((line, Style(color=color) if color else None))
            pane.set_lines(lines)
            return
        pane.set_lines(_marked_ir(step, marks, self.theme_name), keep_scroll=True)

    def _update_inspector(self) -> None:
        from .inspector import inspect_node, inspect_value, pass_doc  # noqa: PLC0415

        step = self.trace[self.index]
        table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        selected = self.selected
        if selected is not None:
            try:
                rows = inspect_node(self.trace, self.index, selected, self.view, self.dg)
                if not rows:
                    rows = inspect_value(self.trace, self.index, selected, self.view, self.dg)
            except Exception as exc:  # noqa: BLE001
                rows = [("error", f"{type(exc).__name__}: {exc}")]
            for label, value in rows:
                table.add_row(label, value)
            run = self.run_results.get(self.index)
            if run is not None and getattr(run, "values", None):
                for vid, summary in _values_of_node(self.trace, self.index, selected, run.values):
                    table.add_row(f"value %{vid}", _short_summary(summary))
        else:
            table.add_row("", Text("select a node: click it, or n / N on the canvas", style="dim"))
        signature = (selected, self.index if selected is not None else None, self.view, self.dg, self.index in self.run_results)
        if signature != self._inspector_shown:
            self._inspector_shown = signature
            self.query_one("#inspector", Static).update(table)
        if step.pass_name != self._doc_shown:
            self._doc_shown = step.pass_name
            self._show_pass_doc(step.pass_name, pass_doc(step.pass_name) or "(no description for this step)")

    def _show_pass_doc(self, name: str, doc: str) -> None:
        """The pass's docstring, wrapped to the pane (a line-API pane: docs are long)."""
        pane = self.query_one("#passdoc", TextPane)
        width = max(20, (pane.size.width or 48) - 3)
        lines: list[tuple[str, Style | None]] = [("", None), (name, Style(bold=True, underline=True))]
        for paragraph in reflow_doc(doc).splitlines():
            if not paragraph.strip() or paragraph.startswith((" ", "\t")):
                lines.append((paragraph, Style(dim=True) if paragraph.strip() else None))
                continue
            indent = "  " if paragraph.lstrip().startswith(("- ", "* ")) else ""
            for wrapped in textwrap.wrap(paragraph, width, subsequent_indent=indent) or [""]:
                lines.append((wrapped, None))
        pane.set_lines(lines)

    # -- events ----------------------------------------------------------------------------------
    @on(Timeline.StepChosen)
    def _step_chosen(self, event: Timeline.StepChosen) -> None:
        if event.index != self.index:
            self.index = event.index
            self.refresh_view()

    @on(GraphCanvas.NodeSelected)
    def _node_selected(self, event: GraphCanvas.NodeSelected) -> None:
        self.selected = event.node_id
        self.query_one(GraphCanvas).set_marks(self._marks())
        self._update_inspector()
        self.query_one("#right", TabbedContent).active = "tab-inspect"

    @on(TabbedContent.TabActivated, "#right")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-ir" and self._ir_stale:
            self._ir_stale = False
            self._update_ir(self.trace[self.index], self._ir_marks)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        timeline = self.query_one(Timeline)
        timeline.filter_text = event.value
        timeline.rebuild(keep=self.index)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.query_one(Timeline).focus()

    # -- actions ----------------------------------------------------------------------------------
    def action_canvas(self, action: str, *args: int) -> None:
        getattr(self.query_one(GraphCanvas), f"action_{action}")(*args)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.theme_name))

    def action_step(self, delta: int) -> None:
        visible = [s.index for s in self.query_one(Timeline).visible()]
        if not visible:
            return
        if delta > 0:
            later = [i for i in visible if i > self.index]
            target = later[0] if later else visible[-1]
        else:
            earlier = [i for i in visible if i < self.index]
            target = earlier[-1] if earlier else visible[0]
        self.show_step(target)

    def action_toggle_unchanged(self) -> None:
        timeline = self.query_one(Timeline)
        timeline.hide_unchanged = not timeline.hide_unchanged
        timeline.rebuild(keep=self.index)
        self.notify("unchanged steps hidden" if timeline.hide_unchanged else "all steps shown", timeout=2)

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_view(self, name: str) -> None:
        self.view = View(name)
        self.refresh_view()

    def action_cycle_view(self) -> None:
        order = list(VIEW_KEYS.values())
        self.view = order[(order.index(self.view) + 1) % len(order)]
        self.refresh_view()

    def action_next_graph(self) -> None:
        count = views.differentiable_graph_count(self.trace)
        if count:
            self.dg = (self.dg + 1) % count
            self.refresh_view()

    def action_toggle_diff(self) -> None:
        self.show_diff = not self.show_diff
        self.query_one("#right", TabbedContent).active = "tab-ir"
        self.refresh_view()

    def action_toggle_theme(self) -> None:
        self.theme_name = "light" if self.theme_name == "dark" else "dark"
        self.theme = "textual-dark" if self.theme_name == "dark" else "textual-light"
        self.query_one(GraphCanvas).set_theme(self.theme_name)
        self.refresh_view()

    def jump_to_pass(self, index: int) -> None:
        timeline = self.query_one(Timeline)
        if not any(s.index == index for s in timeline.visible()):
            timeline.hide_unchanged = False
            timeline.filter_text = ""
            self.query_one("#filter", Input).value = ""
            timeline.rebuild(keep=index)
        self.show_step(index)

    def find_node(self, node_id: int) -> None:
        self.selected = node_id
        canvas = self.query_one(GraphCanvas)
        self.refresh_view()
        canvas.select(node_id)

    # -- runs and checks (workers) ------------------------------------------------------------
    def _need_inputs(self) -> bool:
        if self.session.can_run:
            return True
        self.notify("nothing to run: this target has no graph with example inputs (open a .ir or model.py:fn, "
                    "with --inputs if its input types are not complete)", severity="warning", timeout=6)
        return False

    def action_run_step(self) -> None:
        if self._need_inputs():
            self.query_one("#run-status", Static).update(f"running step {self.index}…")
            self.query_one("#right", TabbedContent).active = "tab-run"
            self._run_worker(self.index)

    @work(thread=True, exclusive=True, group="run")
    def _run_worker(self, index: int) -> None:
        from .evaluate import run_step  # noqa: PLC0415

        result = _guarded(lambda: run_step(self.trace, index, self.session.inputs))
        self.call_from_thread(self._run_done, index, result)

    def _run_done(self, index: int, result: Any) -> None:
        status = self.query_one("#run-status", Static)
        table = self.query_one("#values", DataTable)
        table.clear()
        error = result if isinstance(result, str) else getattr(result, "error", None) or getattr(result, "unavailable", None)
        if error:
            status.update(Text(f"step {index}: {error}", style="red"))
            self.failures[index] = str(error)
            self.query_one(Timeline).mark_failed(index, str(error))
            self.refresh_view()
            return
        self.run_results[index] = result
        names = _value_names(self.trace[index])
        for value_id, summary in (getattr(result, "values", {}) or {}).items():
            table.add_row(
                "%" + names.get(value_id, str(value_id)),
                str(getattr(summary, "shape", "")), str(getattr(summary, "dtype", "")),
                _fmt(getattr(summary, "min", None)), _fmt(getattr(summary, "max", None)), _fmt(getattr(summary, "mean", None)),
            )
        status.update(f"step {index} ran on the example inputs: values shown on the nodes")
        if index == self.index:
            self.refresh_view()

    def action_find_divergence(self) -> None:
        if self._need_inputs():
            self.query_one("#check-status", Static).update("running every step of the main graph…")
            self.query_one("#right", TabbedContent).active = "tab-check"
            self._divergence_worker()

    @work(thread=True, exclusive=True, group="check")
    def _divergence_worker(self) -> None:
        from .evaluate import first_divergent_step  # noqa: PLC0415

        result = _guarded(lambda: first_divergent_step(self.trace, self.session.inputs))
        self.call_from_thread(self._divergence_done, result)

    def _divergence_done(self, result: Any) -> None:
        status = self.query_one("#check-status", Static)
        if isinstance(result, str):
            status.update(Text(result, style="red"))
        elif result is None:
            status.update(Text("every step of the main graph gives the original outputs", style="green"))
        else:
            status.update(Text(f"first step whose outputs differ: {_describe_divergence(result)}", style="bold red"))
            index = getattr(result, "index", None)
            if isinstance(index, int):
                self.jump_to_pass(index)

    def action_gradient_check(self) -> None:
        if self._need_inputs():
            self.query_one("#check-status", Static).update("checking df against finite differences…")
            self.query_one("#right", TabbedContent).active = "tab-check"
            self._gradcheck_worker()

    @work(thread=True, exclusive=True, group="check")
    def _gradcheck_worker(self) -> None:
        from .evaluate import gradient_check  # noqa: PLC0415

        result = _guarded(lambda: gradient_check(self.session.graph, self.session.inputs))
        self.call_from_thread(self._gradcheck_done, result)

    def _gradcheck_done(self, result: Any) -> None:
        status = self.query_one("#check-status", Static)
        table = self.query_one("#gradcheck", DataTable)
        table.clear()
        if isinstance(result, str):
            status.update(Text(result, style="red"))
            return
        passed = 0
        for row in result:
            ok = getattr(row, "passed", None)
            reason = getattr(row, "skipped", None) or getattr(row, "reason", None)
            verdict = Text("pass", style="green") if ok else Text("skipped" if ok is None or reason else "FAIL", style="dim" if reason else "bold red")
            passed += bool(ok)
            table.add_row(
                "%" + str(getattr(row, "name", "?")), str(getattr(row, "shape", "")),
                _fmt(getattr(row, "max_abs_error", None)), _fmt(getattr(row, "max_rel_error", None)), verdict,
            )
        status.update(f"gradient check: {passed} of {len(result)} inputs pass")

    # -- export -------------------------------------------------------------------------------------
    def action_export_view(self) -> None:
        self._export_worker(all_steps=False)

    def action_export_html(self) -> None:
        self._export_worker(all_steps=True)

    @work(thread=True, exclusive=True, group="export")
    def _export_worker(self, all_steps: bool) -> None:
        from . import export  # noqa: PLC0415

        def run() -> str:
            self.export_dir.mkdir(parents=True, exist_ok=True)
            if all_steps:
                target = self.export_dir / "steps.html"
                export.export_trace_html(self.trace, target, view=self.view, dg=self.dg, theme=self.theme_name)
                return str(target)
            key = self._layout_key(self.index, self.view, self.dg)
            layout = self.layouts.get(key)
            if layout is None:
                return "error: the layout is not ready yet"
            target = self.export_dir / f"step-{self.index:03d}-{self.view.value}.svg"
            svg = export.render_svg(self._draw(self.index, self.view, self.dg), self._marks(), layout, theme=self.theme_name)
            target.write_text(svg, encoding="utf-8")
            return str(target)

        result = _guarded(run)
        self.call_from_thread(self._export_done, result)

    def _export_done(self, result: str) -> None:
        if result.startswith("error"):
            self.notify(result, severity="error", timeout=8)
        else:
            self.notify(f"exported {result}", timeout=5)


# -- helpers ------------------------------------------------------------------------------------------
def _lint_problem(step: Any) -> str | None:
    """None when the step's graph parses back and passes lint, else the first line of why not."""
    from gradview.ir import IRParseError, IRVerifyError, lint, parse_ir  # noqa: PLC0415

    try:
        lint(parse_ir(step.text()))
    except (IRParseError, IRVerifyError) as exc:
        return f"lint: {str(exc).splitlines()[0]}"
    except Exception as exc:  # noqa: BLE001 - any other surprise is a failure of this step too
        return f"lint: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def reflow_doc(doc: str) -> str:
    """A docstring for a narrow pane: paragraphs joined into single lines (the
    pane wraps them), indented blocks and lists kept, reST ``code`` marks dropped."""
    paragraphs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for line in doc.replace("``", "").splitlines():
        stripped = line.strip()
        if not stripped:
            flush()
            paragraphs.append("")
        elif line.startswith((" ", "\t")) or stripped.startswith(("- ", "* ", "|")) or set(stripped) <= set("-=~"):
            flush()
            paragraphs.append(line)
        else:
            current.append(stripped)
    flush()
    text = "\n".join(paragraphs)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip()


def _guarded(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; any exception becomes a one-line ``error: ...`` string for the screen."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the app shows it instead of crashing
        return f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _short_summary(summary: Any) -> str:
    shape = getattr(summary, "shape", None)
    if shape is None:
        return str(getattr(summary, "text", summary))[:24]
    dims = "x".join(str(d) for d in shape) or "()"
    mean = getattr(summary, "mean", None)
    dtype = str(getattr(summary, "dtype", ""))
    return f"{dims} {dtype}" + (f" μ={mean:.3g}" if isinstance(mean, float) else "")


def _value_names(step: Any) -> dict[int, str]:
    from gradview.runtime.trace_records import value_names  # noqa: PLC0415

    return value_names(step.graph)


def _values_of_node(trace: Any, index: int, node_id: int, values: dict[int, Any]) -> list[tuple[str, Any]]:
    step = trace[index]
    for node in step.nodes():
        if node.id == node_id:
            return [(out.name, values[out.id]) for out in node.outputs if out.id in values]
    return [(str(node_id), values[node_id])] if node_id in values else []


def _describe_divergence(result: Any) -> str:
    parts = [f"step {getattr(result, 'index', '?')} {getattr(result, 'pass_name', '')}"]
    for attr in ("output", "max_abs_error", "max_rel_error"):
        if getattr(result, attr, None) is not None:
            parts.append(f"{attr.replace('_', ' ')} {_fmt(getattr(result, attr))}")
    return ", ".join(parts)


def _marked_ir(step: Any, marks: Marks, theme: str) -> list[tuple[str, Style | None]]:
    """The step's IR lines, each node's line coloured by its marks (added, changed inputs...)."""
    from gradview.runtime.trace_records import print_record  # noqa: PLC0415

    lines: list[tuple[str, Style | None]] = []
    by_output_name: dict[str, int] = {}
    for node in step.nodes():
        for out in node.outputs:
            by_output_name[out.name] = node.id
    for line in print_record(step.graph).splitlines():
        stripped = line.strip()
        node_id = None
        if stripped.startswith("%") and " = " in stripped:
            first = stripped[1:].split(" ", 1)[0].rstrip(",:")
            node_id = by_output_name.get(first)
        node_marks = marks.nodes.get(node_id, set()) if node_id is not None else set()
        if node_marks:
            style = style_for(node_marks, theme)
            lines.append((line, Style(color=style.text, bgcolor=style.fill)))
        else:
            lines.append((line, None))
    return lines


def _autodiff_label(mode: str | None) -> str:
    """The header's word on the autodiff mode: PyTorch's, or the extended set beyond it."""
    if mode == "extended":
        return " · autodiff: EXTENDED (beyond PyTorch)"
    return " · autodiff: PyTorch's" if mode == "torch" else ""
