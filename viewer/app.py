"""gradview's Textual app: step through every pass and watch the graph change.

The app holds what is on screen (:class:`~gradview.viewer.screen_state.OnScreen`:
step, view, DifferentiableGraph, selection) and turns keys into changes of it;
:class:`~gradview.viewer.main_screen.MainScreen` composes the panels (timeline
left, graph centre, tabs right), the :class:`~gradview.viewer.controller.Controller`
owns the caches and the layout service (worker processes), and the parts that
own their own state get what they need when they are made
(:class:`~gradview.viewer.large_graph.LargeGraph`, :class:`~gradview.viewer.saved_tools.SavedTools`,
:class:`~gradview.viewer.task_tools.LongTasks`). Widgets, workers and the
command palette speak to the app in messages (:mod:`~gradview.viewer.messages`).
Nothing slow runs in a key handler and a failure of any worker is a message on
screen, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import TabbedContent

from . import tasks, ui_priority, views
from .commands import GradviewCommands
from .controller import Controller, layout_key
from .detail import Detail
from .export_folder_screen import ExportFolderScreen
from .export_paths import default_export_dir
from .formatting import (
    add_run_values,
    autodiff_label,
    diff_lines,
    inline_threshold_label,
    marked_ir,
    min_group_size_label,
)
from .gc_tuning import FREEZE_EVERY_SECONDS, CollectorSettings
from .help_screen import HelpScreen
from .large_graph import LargeGraph
from .layout import Layout
from .main_screen import MainScreen
from .marks import with_selection
from .messages import (
    CheckDone,
    ExportDone,
    FindNode,
    Flush,
    JumpToStep,
    LayoutReady,
    NodeSelected,
    RunDone,
    ScreenReady,
    SearchAsked,
    StepChosen,
    StepFailed,
    TaskEnded,
    TaskProgress,
)
from .model import DrawGraph, Mark, Marks, View
from .module_tree import is_module_key
from .random_values import random_values_label
from .saved_panel import SavedPanel
from .saved_tools import SavedTools
from .screen_state import AppHooks, OnScreen, Traced
from .session import Session
from .task_tools import LongTasks
from .timeline import summarize_steps
from .transforms import Transforms
from .view_registry import VIEWS, view_spec
from .view_steps import opening_step

__all__ = ["GradviewApp", "HelpScreen"]


def _on_screen(name: str) -> Any:
    """A property of the app that reads and writes field ``name`` of its :class:`OnScreen`."""
    return property(lambda app: getattr(app.shown, name), lambda app, value: setattr(app.shown, name, value))


class GradviewApp(App[None]):
    """Step through a pass trace: timeline, graph canvas, inspector."""

    TITLE = "gradview"
    COMMANDS = App.COMMANDS | {GradviewCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("right_square_bracket,j", "step(1)", "Next step", show=False),
        Binding("left_square_bracket,k", "step(-1)", "Prev step", show=False),
        Binding("u", "toggle_unchanged", "Hide unchanged"),
        Binding("slash", "focus_filter", "Filter"),
        *(Binding(spec.key, f"view('{spec.view.value}')", spec.binding, show=False) for spec in VIEWS),
        Binding("v", "cycle_view", "View"),
        Binding("g", "next_graph", "Next DG", show=False),
        Binding("d", "toggle_diff", "Diff"),
        Binding("p", "cycle_tab(1)", "Tab"),
        Binding("P", "cycle_tab(-1)", "Prev tab", show=False),
        Binding("r", "run_step", "Run"),
        Binding("b", "find_divergence", "Broke?", show=False),
        Binding("escape", "cancel_check", "Cancel b, G, E", show=False),
        Binding("G", "gradient_check", "Gradcheck", show=False),
        Binding("T", "trace_back", "Trace back", show=False),
        Binding("e", "export_view", "Export SVG", show=False),
        Binding("E", "export_html", "Export HTML", show=False),
        Binding("y", "export_slide", "Export slide", show=False),
        Binding("t", "toggle_theme", "Theme"),
        # Canvas keys that work wherever the focus is (arrows pan only when the canvas has focus).
        Binding("plus,equals_sign", "canvas('zoom', 1)", "Zoom in", show=False),
        Binding("minus", "canvas('zoom', -1)", "Zoom out", show=False),
        Binding("0", "canvas('fit')", "Fit", show=False),
        Binding("n", "canvas('select_next', 1)", "Next node", show=False),
        Binding("N", "canvas('select_next', -1)", "Prev node", show=False),
        Binding("c", "canvas('follow')", "Center", show=False),
        # Large graphs (viewer/large_graph.py): collapse, focus, fan-out stubs.
        Binding("x", "large('collapse_group')", "Collapse", show=False),
        Binding("l", "large('next_detail')", "Detail"),
        Binding("backspace", "large('fold_parent')", "Fold up", show=False),
        Binding("X", "large('collapse_all')", "Collapse all", show=False),
        Binding("f", "large('focus_mode')", "Focus", show=False),
        Binding("less_than_sign", "large('focus_hops', -1)", "Fewer hops", show=False),
        Binding("greater_than_sign", "large('focus_hops', 1)", "More hops", show=False),
        Binding("o", "large('toggle_stubs')", "Stubs", show=False),
        Binding("M", "toggle_minimap", "Minimap", show=False),
        # What each graph saves for backward (viewer/saved_tools.py).
        Binding("S", "saved('show')", "Saved", show=False),
        Binding("w", "saved('mark_recomputed')", "Recompute?", show=False),
    ]

    def __init__(
        self, session: Session, *, theme: str = "dark", export_dir: str | None = None, detail: Detail | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.trace = session.trace
        self.theme_name = theme
        # e and E write beside the target, in a folder named after it (never over a file).
        self.export_dir = Path(export_dir) if export_dir is not None else default_export_dir(session.name)
        # A folder given by the caller is the answer; else the first export asks (prefilled).
        self.export_dir_chosen = export_dir is not None
        self.shown = OnScreen()  # step, view, DifferentiableGraph, selection, drawing
        # "Trace this gradient back" (T): the df and f nodes lit for the selection, until it changes.
        self.traced: Traced | None = None
        self.show_diff = False
        self._title = ""  # the header's words before the level of detail
        self._title_tail = ""  # and after it
        self.controller = Controller(self.trace, self.post_message, self._spawn_layout_worker)
        self._collector = CollectorSettings()
        self._dot_note_shown = False
        hooks = AppHooks(
            redraw=self.refresh_view, notify=self.notify, main=lambda: self.main, post=self.post_message,
            run_worker=self.run_worker, jump_to_pass=self.jump_to_pass,
        )
        self.large = LargeGraph(self.trace, self.controller, self.shown, hooks, detail)  # x, X, f, <, >, o, l
        self.saved = SavedTools(self.trace, session.run_error, self.shown, hooks)  # S, w and the Saved tab
        self.long_tasks = LongTasks(hooks)  # b, G and E: progress shown, escape cancels
        self.controller.make_ahead = self.transforms.make_ahead

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(self.theme_name)

    @property
    def main(self) -> MainScreen:
        """The main screen (also while the help screen is above it)."""
        return self.screen_stack[0]  # type: ignore[return-value]

    # What is on screen (self.shown), by its parts' names (tests and scripts read app.index, app.view, ...).
    index = _on_screen("index")
    view = _on_screen("view")
    dg = _on_screen("dg")
    selected = _on_screen("selected")

    @property
    def transforms(self) -> Transforms:
        """Every view's collapse, focus and stubs, and the level of detail (the large-graph part's)."""
        return self.large.transforms

    # Caches, as the controller keeps them.
    @property
    def layouts(self) -> dict[Any, Layout]:
        return self.controller.layouts

    @property
    def failures(self) -> dict[int, str]:
        return self.controller.failures

    @property
    def run_results(self) -> dict[int, Any]:
        return self.controller.run_results

    # -- start and end ---------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._collector.apply()
        self.set_interval(FREEZE_EVERY_SECONDS, self._collector.freeze_more)
        self.theme = "textual-dark" if self.theme_name == "dark" else "textual-light"
        self.animation_level = "none"

    @on(ScreenReady)
    def _screen_ready(self) -> None:
        name = self.session.name
        self._title = Path(name.partition(":")[0]).name + (":" + name.rpartition(":")[2] if ".py:" in name else "")
        # After the level of detail (which comes first: a narrow header cuts the end).
        self._title_tail = autodiff_label(self.trace.autodiff_mode())
        self._title_tail += inline_threshold_label(self.trace.inline_threshold())  # when not PyTorch's
        self._title_tail += min_group_size_label(self.trace.min_group_size())  # when not PyTorch's
        self._title_tail += random_values_label(self.trace)  # when a graph draws random values
        self.sub_title = self._header()
        self.main.timeline.load(summarize_steps(self.trace))
        self.main.timeline.focus()
        for note in self.session.notes:
            self.notify(note, severity="warning", timeout=8)
        self.show_step(opening_step(self.trace))  # a JIT log: the user's graph, not a helper
        # Lay out once the first screen is painted: the worker competes with
        # the event loop for the interpreter, and the first paint comes first.
        self.call_after_refresh(self.large.start_layouts)

    def _header(self) -> str:
        """The header: the target, the level of detail, the autodiff mode and threshold, and
        whether random values (gradview's own) are drawn."""
        return f"{self._title} · detail: {self.transforms.detail.value}{self._title_tail}"

    def on_unmount(self) -> None:
        self.controller.stop()  # stops and reaps the layout processes: exit never waits for a layout
        self._collector.restore()

    def _spawn_layout_worker(self, work: Any) -> None:
        self.run_worker(work, thread=True, group="layout", exclusive=False)

    async def wait_for_layouts(self) -> None:
        """Until every queued layout is done and shown (for tests, scripts and benchmarks)."""
        import asyncio

        while self.controller.busy():
            await asyncio.sleep(0.01)
        await self.workers.wait_for_complete()
        # Worker results travel as messages: a flush message queued now is
        # handled after every result posted before it.
        flushed = asyncio.Event()
        self.post_message(Flush(flushed.set))
        await flushed.wait()

    # -- what is on screen -----------------------------------------------------------------------
    def show_step(self, index: int) -> None:
        if not len(self.trace):
            return
        self.index = max(0, min(len(self.trace) - 1, index))
        timeline = self.main.timeline
        if timeline.current_step() != self.index:
            timeline.highlight_step(self.index)
        self.refresh_view()

    def _marks(self) -> Marks:
        base = self.controller.marks(self.index, self.view, self.dg)
        marks = with_selection(base, self.trace, self.index, self.selected)
        if self.traced is not None and self.traced.lit_on(self.shown):
            for node_id in self.traced.nodes:
                marks.mark_node(node_id, Mark.LINKED)
        self.saved.mark(marks)  # the Saved tab's row: its producer and readers
        return marks

    def refresh_view(self) -> None:
        """Redraw everything that depends on the step, the view and the selection."""
        ui_priority.claim()  # the app's background threads wait until this is painted
        step = self.trace[self.index]
        main = self.main
        reason = views.view_unavailable_reason(self.trace, self.index, self.view, self.dg)
        graph = DrawGraph() if reason else self.controller.draw(self.index, self.view, self.dg)
        marks = Marks() if reason else self._marks()
        key = picture_base = layout_key(self.trace, self.index, self.view, self.dg)
        picture = None if reason else self.large.picture_of(graph, key)  # detail, collapse, focus, stubs
        if picture is not None:
            graph, key = picture.graph, picture.key
            marks = picture.carry_marks(marks)
        graph = add_run_values(graph, step, self.run_results.get(self.index))
        layout = None if reason else self.layouts.get(key)
        if layout is None and not reason and picture is not None and picture.key == picture_base:
            self.controller.request(key)  # a plain layout (a transformed one is requested by picture_of)
        canvas = main.canvas
        self.controller.set_zoom(canvas.zoom)
        canvas.selected = self.selected if self.selected in graph.nodes else None
        canvas.stubs = picture.stub_labels if picture is not None else {}
        canvas.overview = picture is not None and picture.collapsed is not None and any(
            is_module_key(group) for group in picture.collapsed.groups.values()
        )
        canvas.show(
            layout, graph, marks, reason or self.controller.layout_errors.get(key) or "laying out…", camera_key=key
        )
        self.shown.drawing = graph
        title = self._header()
        if self.sub_title != title and self._title:
            self.sub_title = title  # the header says which level of detail is on
        if self.large.first_picture_fits(layout is not None):
            self.refresh_view()
            return
        main.graph.show_viewbar(
            step, len(self.trace) - 1, self.view, self.failures.get(step.index), self.dg,
            views.differentiable_graph_count(self.trace), note="" if reason else self.large.note,
        )
        if self.show_diff:
            previous = self.trace.previous(step)
            text = step.diff(previous) if previous is not None else ""
            main.details.show_ir(lambda: diff_lines(text), now=True, keep_scroll=False)
        else:
            theme = self.theme_name
            main.details.show_ir(lambda: marked_ir(step, marks, theme), now=False, keep_scroll=True)
        main.details.show_inspector(
            self.trace, self.index, self.selected, self.view, self.dg, self.run_results.get(self.index)
        )
        self.large.inspect()
        self.saved.follow()  # the Saved tab's row, once its joint view is laid out

    # -- messages ----------------------------------------------------------------------------------
    @on(StepChosen)
    def _step_chosen(self, event: StepChosen) -> None:
        if event.index != self.index:
            self.index = event.index
            self.refresh_view()

    @on(NodeSelected)
    def _node_selected(self, event: NodeSelected) -> None:
        self.selected = event.node_id
        if event.clicked and self.large.expand_clicked():
            return
        marks = self._marks()
        picture = self.large.picture
        self.main.canvas.set_marks(picture.carry_marks(marks) if picture else marks)
        self.main.details.show_inspector(
            self.trace, self.index, self.selected, self.view, self.dg, self.run_results.get(self.index)
        )
        self.large.inspect()
        self.main.details.show_selection()  # Inspect comes forward, unless another tab is being read

    @on(LayoutReady)
    def _layout_ready(self, message: LayoutReady) -> None:
        self.controller.accept(message)
        if message.layout is not None:
            if message.geometry is not None:
                self.main.canvas.prime(message.layout, message.geometry)
            if message.minimap is not None:
                self.main.graph.minimap.prime(message.layout, message.minimap)
            if message.layout.fallback and not self._dot_note_shown:
                self._dot_note_shown = True  # the layout says why dot was not used
                self.notify(message.layout.fallback, severity="warning", timeout=8)
        if not self.controller.busy():
            self._collector.freeze_more()
        if message.key in (layout_key(self.trace, self.index, self.view, self.dg), self.large.waiting_key):
            with suppress(NoMatches):  # a layout that comes as the app closes has nothing to draw on
                self.refresh_view()

    @on(Flush)
    def _flushed(self, message: Flush) -> None:  # not _flush: Textual's App has one (print capture)
        message.done()

    @on(StepFailed)
    def _step_failed(self, message: StepFailed) -> None:
        self.controller.accept(message)
        self._mark_failed(message.index, message.error)

    def _mark_failed(self, index: int, error: str) -> None:
        self.failures.setdefault(index, error)
        self.main.timeline.mark_failed(index, self.failures[index])
        if index == self.index:
            self.refresh_view()

    @on(RunDone)
    def _run_done(self, message: RunDone) -> None:
        error = self.main.details.show_run(message.index, self.trace[message.index], message.result)
        if error:
            self.failures[message.index] = error
            self._mark_failed(message.index, error)
            return
        self.run_results[message.index] = message.result
        if message.index == self.index:
            self.refresh_view()

    @on(CheckDone)
    def _check_done(self, message: CheckDone) -> None:
        """One check's result replaces the last; b's divergent step is brought on screen."""
        if not self.screen_stack:
            return  # it came as the app closed
        result = message.result
        self.main.details.show_check(result)
        if getattr(result, "check", None) == "divergence" and isinstance(result.step, int):
            self.jump_to_pass(result.step)

    @on(ExportDone)
    def _export_done(self, message: ExportDone) -> None:
        if message.result.startswith("error"):
            self.notify(message.result, severity="error", timeout=8)
        elif message.result.startswith("E: cancelled"):
            self.notify(message.result, severity="warning", timeout=8)
        else:
            self.notify(f"exported {message.result}", timeout=5)

    @on(JumpToStep)
    def _jump_to_step(self, message: JumpToStep) -> None:
        self.jump_to_pass(message.index)

    @on(FindNode)
    def _find_node(self, message: FindNode) -> None:
        self.find_node(message.node_id)

    @on(SearchAsked)
    def _search_asked(self, message: SearchAsked) -> None:
        self.main.graph.open_search(message.query)

    # The parts' messages, passed on to the part that owns the state.
    @on(TaskProgress)
    def _task_progress(self, message: TaskProgress) -> None:
        self.long_tasks.progress(message)

    @on(TaskEnded)
    def _task_ended(self, message: TaskEnded) -> None:
        self.long_tasks.ended(message)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.saved.tab_activated(event.pane.id)

    @on(SavedPanel.Loaded)
    def _saved_loaded(self, message: SavedPanel.Loaded) -> None:
        self.saved.loaded(message)

    @on(SavedPanel.Chosen)
    def _saved_chosen(self, message: SavedPanel.Chosen) -> None:
        self.saved.chosen(message.light)

    # -- actions ------------------------------------------------------------------------------------
    def action_canvas(self, action: str, *args: int) -> None:
        getattr(self.main.canvas, f"action_{action}")(*args)

    def action_large(self, action: str, *args: int) -> None:
        """The large-graph keys: collapse, focus, stubs, level of detail (viewer/large_graph.py)."""
        getattr(self.large, action)(*args)

    def action_collapse_group(self) -> None:
        """Enter on the canvas (bound there as ``app.collapse_group``): x, on the selected box."""
        self.large.collapse_group()

    def action_saved(self, action: str) -> None:
        """S and w (viewer/saved_tools.py)."""
        getattr(self.saved, action)()

    def action_cycle_tab(self, step: int) -> None:
        self.main.cycle_tab(step)

    def action_cancel_check(self) -> bool:
        """Escape: stop every running task (each stops before its next unit of work); whether one ran."""
        return self.long_tasks.cancel_all()

    def action_toggle_minimap(self) -> None:
        self.main.graph.toggle_minimap()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.theme_name))

    def action_step(self, delta: int) -> None:
        visible = [s.index for s in self.main.timeline.visible()]
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
        timeline = self.main.timeline
        timeline.hide_unchanged = not timeline.hide_unchanged
        timeline.rebuild(keep=self.index)
        self.notify("unchanged steps hidden" if timeline.hide_unchanged else "all steps shown", timeout=2)

    def action_focus_filter(self) -> None:
        self.main.steps.focus_filter()

    def action_view(self, name: str) -> None:
        self.view = View(name)
        self.refresh_view()

    def action_cycle_view(self) -> None:
        order = [spec.view for spec in VIEWS]
        self.view = order[(order.index(self.view) + 1) % len(order)]
        self.refresh_view()

    def action_next_graph(self) -> None:
        count = views.differentiable_graph_count(self.trace)
        if count:
            self.dg = (self.dg + 1) % count
            self.refresh_view()

    def action_toggle_diff(self) -> None:
        self.show_diff = not self.show_diff
        self.main.details.activate("tab-ir")
        self.refresh_view()

    def action_toggle_theme(self) -> None:
        self.theme_name = "light" if self.theme_name == "dark" else "dark"
        self.theme = "textual-dark" if self.theme_name == "dark" else "textual-light"
        self.main.canvas.set_theme(self.theme_name)
        self.refresh_view()

    def jump_to_pass(self, index: int) -> None:
        timeline = self.main.timeline
        if not any(s.index == index for s in timeline.visible()):
            timeline.hide_unchanged = False
            self.main.steps.clear_filter()
            timeline.rebuild(keep=index)
        self.show_step(index)

    def find_node(self, node_id: int) -> None:
        self.selected = node_id
        self.refresh_view()
        self.main.canvas.select(node_id)

    # -- runs, checks and exports (thread workers that answer with a message) -----------------------------
    def _need_inputs(self) -> bool:
        if self.session.can_run:
            return True
        if self.session.run_error is not None:  # the graph has inputs, but running it stopped at a node
            self.notify(f"nothing to run: {self.session.run_error}", severity="warning", timeout=8)
            return False
        self.notify("nothing to run: this target has no graph with example inputs (open a .ir or model.py:fn, "
                    "with --inputs if its input types are not complete)", severity="warning", timeout=6)
        return False

    def _in_thread(self, group: str, work: Any) -> None:
        self.run_worker(lambda: self.post_message(work()), thread=True, exclusive=True, group=group)

    def action_run_step(self) -> None:
        if self._need_inputs():
            index, trace, inputs = self.index, self.trace, self.session.inputs
            self.main.details.run_started(index)
            self._in_thread("run", lambda: RunDone(index, tasks.run_step(trace, index, inputs)))

    def action_find_divergence(self) -> None:
        """b: search in a thread that says which step it checks; b again (or escape) cancels."""
        if self.long_tasks.cancel("b") or not self._need_inputs():
            return
        trace, inputs = self.trace, self.session.inputs
        self.long_tasks.start(
            "b", lambda report: CheckDone(tasks.find_divergence(trace, inputs, report)),
            "b: running every step, forward and backward, against the original graph…",
        )

    def action_gradient_check(self) -> None:
        """G: the step on screen against finite differences, input by input; G again (or escape) cancels."""
        if self.long_tasks.cancel("G") or not self._need_inputs():
            return
        trace, index, inputs = self.trace, self.index, self.session.inputs
        self.long_tasks.start(
            "G", lambda report: CheckDone(tasks.gradient_check(trace, index, inputs, report)),
            f"G: checking step {index} ({trace[index].pass_name}) against finite differences…",
        )

    def action_trace_back(self) -> None:
        """Light the path of the selected gradient: the df ops that compute it and
        the forward ops their GradOf blocks differentiate (backward and joint views)."""
        from gradview.runtime.checks import gradient_path

        if self.selected is None or not view_spec(self.view).backward:
            self.notify("select a gradient (a node of df) in the backward or joint view (3 or 4), then T",
                        severity="warning", timeout=6)
            return
        path = gradient_path(self.trace, self.index, self.dg, self.selected)
        if path is None:
            self.notify("the selection is not a node of df at this step", severity="warning", timeout=6)
            return
        self.traced = Traced(self.index, self.dg, self.selected, path.df_nodes | path.f_nodes)
        self.notify(
            f"traced back: {len(path.df_nodes)} df nodes, {len(path.f_nodes)} forward ops they "
            f"differentiate, {len(path.df_inputs)} df inputs read", timeout=6,
        )
        self.refresh_view()

    def _export_folder_chosen(self, action: Callable[[], None]) -> bool:
        """Whether the export folder is settled; if not, ask for it and run ``action`` once answered."""
        if self.export_dir_chosen:
            return True

        def answered(folder: Path | None) -> None:
            if folder is None:
                self.notify("export cancelled: nothing written", timeout=4)
                return
            self.export_dir, self.export_dir_chosen = folder, True
            action()

        self.push_screen(ExportFolderScreen(self.export_dir), answered)
        return False

    def action_export_view(self) -> None:
        from .export import export_graph_name, svg_file_name  # Graphviz's side loads on first use

        if not self._export_folder_chosen(self.action_export_view):
            return

        step = self.trace[self.index]
        graph = export_graph_name(self.trace, self.index, self.view, self.dg)
        target = self.export_dir / svg_file_name(self.index, step.pass_name, graph)
        # What is on screen: at its level of detail, folded, focused, with its run values.
        canvas = self.main.canvas
        drawing, layout, marks, theme = canvas.graph, canvas.layout_data, canvas.marks, self.theme_name
        self._in_thread("export", lambda: ExportDone(tasks.export_svg(target, drawing, marks, layout, theme)))

    def action_export_slide(self) -> None:
        """The picture on screen as a slide (light, 16:9, 1600x900 PNG), as ``export --style slide``."""
        from .export import export_graph_name, frame_for_step, svg_file_name

        if not self._export_folder_chosen(self.action_export_slide):
            return

        step = self.trace[self.index]
        name = svg_file_name(self.index, step.pass_name, export_graph_name(self.trace, self.index, self.view, self.dg))
        target = self.export_dir / (name.removesuffix(".svg") + "-slide.png")
        canvas = self.main.canvas
        frame = frame_for_step(step, canvas.graph, canvas.marks)
        self._in_thread("export", lambda: ExportDone(tasks.export_slide(target, frame)))

    def action_export_html(self) -> None:
        """E: every step as one HTML page, in a thread that says which picture it draws; E again (or escape) cancels."""
        if self.long_tasks.cancel("E") or not self._export_folder_chosen(self.action_export_html):
            return
        view = self.view
        name = f"steps-{view.value}-{self.dg}.html" if view_spec(view).differentiated else f"steps-{view.value}.html"
        target, trace, dg, theme = self.export_dir / name, self.trace, self.dg, self.theme_name
        self.long_tasks.start(
            "E", lambda report: ExportDone(tasks.export_html(target, trace, view, dg, theme, report)),
            f"E: exporting every step to {target}…",
        )
