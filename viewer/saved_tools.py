"""The Saved tab's keys: ``S`` shows it, ``w`` marks a value as recomputed.

:class:`SavedTools` owns the tab's state. The saved values of the session's
trace are listed once, in a thread, the first time the tab is shown. The row
the tab selects is lit (Mark.LINKED, as ``T``'s trace-back lights its path) in
the joint view of its graph, where the producer in the forward graph and the
readers in the backward graph both show; the app's ``_marks`` asks
:meth:`SavedTools.mark` for it and passes the tab's messages on.
"""

from __future__ import annotations

from gradview.runtime import PassTrace, SavedValuesError, saved_values

from .model import Mark, Marks
from .saved_panel import SavedPanel
from .saved_rows import SavedLight
from .screen_state import AppHooks, OnScreen
from .view_registry import view_showing, view_spec

__all__ = ["SavedTools", "SAVED_TAB"]

SAVED_TAB = "tab-saved"


def _list_saved(trace: PassTrace) -> SavedPanel.Loaded:
    """The worker's answer: the graphs, or one line saying why there are none."""
    try:
        return SavedPanel.Loaded(saved_values(trace), None)
    except SavedValuesError as exc:
        return SavedPanel.Loaded([], str(exc).splitlines()[0])
    except Exception as exc:  # a worker's failure is a line on screen, never a crash
        return SavedPanel.Loaded([], f"saved values: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


class SavedTools:
    """The Saved tab's side of the app: what it lists, what its row lights, where the canvas goes."""

    def __init__(self, trace: PassTrace, run_error: str | None, shown: OnScreen, hooks: AppHooks) -> None:
        self.trace, self.run_error, self.shown, self.hooks = trace, run_error, shown, hooks
        self.light: SavedLight | None = None  # what the tab's selected row lights
        self._follow: SavedLight | None = None  # a light the canvas scrolls to once its layout is drawn
        self._asked = False
        self._joint = view_showing(forward=True, backward=True)  # where a row's producer and readers show

    @property
    def panel(self) -> SavedPanel:
        return self.hooks.main().query_one(SavedPanel)

    def show(self) -> None:
        """S: the tabs panel shown, the Saved tab active, its table focused."""
        main = self.hooks.main()
        main.show_panel("right")
        main.details.activate(SAVED_TAB)
        self.list_saved()
        self.panel.focus_table()

    def mark_recomputed(self) -> None:
        """w: mark or unmark the selected saved value as recomputed (the Saved tab shown first)."""
        panel = self.panel
        if self.hooks.main().details.active != SAVED_TAB or not panel.loaded:
            self.show()
            self.hooks.notify("w marks the saved value under the Saved tab's cursor as recomputed", timeout=4)
            return
        panel.toggle_mark()

    def list_saved(self) -> None:
        """List the saved values once per session, in a thread (a big trace takes a while)."""
        if self._asked:
            return
        self._asked = True
        if self.run_error is not None:  # saved values are measured by running the graph
            self.hooks.post(SavedPanel.Loaded([], f"nothing is saved for backward: {self.run_error}"))
            return
        trace, post = self.trace, self.hooks.post
        self.hooks.run_worker(lambda: post(_list_saved(trace)), thread=True, group="saved")

    def mark(self, marks: Marks) -> None:
        """Light the selected saved value's nodes on ``marks`` when its graph (f, df or both) is on screen."""
        light, shown = self.light, self.shown
        if light is None or light.dg != shown.dg or not view_spec(shown.view).differentiated:
            return
        for node_id in light.nodes:
            marks.mark_node(node_id, Mark.LINKED)
        for value_id in light.values:
            marks.mark_value(value_id, Mark.LINKED)

    # -- the tab's messages, passed on by the app -----------------------------------------------
    def tab_activated(self, tab: str | None) -> None:
        if tab == SAVED_TAB:
            self.list_saved()

    def loaded(self, message: SavedPanel.Loaded) -> None:
        self.panel.load(self.trace, message.graphs, message.error)

    def chosen(self, light: SavedLight) -> None:
        """Go to the joint view of the row's graph, at the step both its halves come from."""
        self.light = light
        self._follow = light if light.focus else None
        self.shown.view, self.shown.dg = self._joint, light.dg
        self.hooks.jump_to_pass(light.step)

    def follow(self) -> None:
        """After a redraw: scroll the canvas to the chosen row's nodes, once its joint view is laid out."""
        light, shown = self._follow, self.shown
        if light is None or (shown.view, shown.dg, shown.index) != (self._joint, light.dg, light.step):
            return
        if self.hooks.main().canvas.show_nodes(list(light.focus)):
            self._follow = None
