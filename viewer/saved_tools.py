"""The Saved tab's keys for the app: ``S`` shows it, ``w`` marks a value as recomputed.

A mixin of :class:`~gradview.viewer.app.GradviewApp`. The saved values of the
session's trace are listed once, in a thread, the first time the tab is shown.
The row the tab selects is lit (Mark.LINKED, as ``T``'s trace-back lights its
path) in the joint view of its graph, where the producer in the forward graph
and the readers in the backward graph both show; the app's ``_marks`` asks
:meth:`SavedTools.saved_marks` for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import TabbedContent

from gradview.runtime import PassTrace, SavedValuesError, saved_values

from .model import Mark, Marks, View
from .saved_panel import SavedPanel
from .saved_rows import SavedLight

if TYPE_CHECKING:
    from .app import GradviewApp

__all__ = ["SavedTools", "SAVED_TAB"]

SAVED_TAB = "tab-saved"


def _list_saved(trace: PassTrace) -> SavedPanel.Loaded:
    """The worker's answer: the graphs, or one line saying why there are none."""
    try:
        return SavedPanel.Loaded(saved_values(trace), None)
    except SavedValuesError as exc:
        return SavedPanel.Loaded([], str(exc).splitlines()[0])
    except Exception as exc:  # noqa: BLE001 - a worker's failure is a line on screen, never a crash
        return SavedPanel.Loaded([], f"saved values: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


class SavedTools:
    """The Saved tab's side of the app (``self`` is the GradviewApp)."""

    saved_light: SavedLight | None = None  # what the tab's selected row lights
    _saved_follow: SavedLight | None = None  # a light the canvas scrolls to once its layout is drawn
    _saved_asked: bool = False

    @property
    def saved_panel(self: GradviewApp) -> SavedPanel:
        return self.main.query_one(SavedPanel)

    def action_show_saved(self: GradviewApp) -> None:
        """S: the tabs panel shown, the Saved tab active, its table focused."""
        self.main.show_panel("right")
        self.main.details.activate(SAVED_TAB)
        self.list_saved()
        self.saved_panel.focus_table()

    def action_mark_recomputed(self: GradviewApp) -> None:
        """w: mark or unmark the selected saved value as recomputed (the Saved tab shown first)."""
        panel = self.saved_panel
        if self.main.details.active != SAVED_TAB or not panel.loaded:
            self.action_show_saved()
            self.notify("w marks the saved value under the Saved tab's cursor as recomputed", timeout=4)
            return
        panel.toggle_mark()

    def list_saved(self: GradviewApp) -> None:
        """List the saved values once per session, in a thread (a big trace takes a while)."""
        if self._saved_asked:
            return
        self._saved_asked = True
        if self.session.run_error is not None:  # saved values are measured by running the graph
            self.post_message(SavedPanel.Loaded([], f"nothing is saved for backward: {self.session.run_error}"))
            return
        trace = self.trace
        self.run_worker(lambda: self.post_message(_list_saved(trace)), thread=True, group="saved")

    def saved_marks(self: GradviewApp, marks: Marks) -> None:
        """Light the selected saved value's nodes on ``marks`` when its graph is on screen."""
        light = self.saved_light
        if light is None or light.dg != self.dg or self.view is View.WHOLE:
            return
        for node_id in light.nodes:
            marks.mark_node(node_id, Mark.LINKED)
        for value_id in light.values:
            marks.mark_value(value_id, Mark.LINKED)

    # -- messages (Textual finds these handlers by name on the mixin too) ----------------------
    def on_tabbed_content_tab_activated(self: GradviewApp, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == SAVED_TAB:
            self.list_saved()

    def on_saved_panel_loaded(self: GradviewApp, message: SavedPanel.Loaded) -> None:
        self.saved_panel.load(self.trace, message.graphs, message.error)

    def on_saved_panel_chosen(self: GradviewApp, message: SavedPanel.Chosen) -> None:
        """Go to the joint view of the row's graph, at the step both its halves come from."""
        self.saved_light = light = message.light
        self._saved_follow = light if light.focus else None
        self.view, self.dg = View.JOINT, light.dg
        self.jump_to_pass(light.step)

    def saved_follow(self: GradviewApp) -> None:
        """After a redraw: scroll the canvas to the chosen row's nodes, once its joint view is laid out."""
        light = self._saved_follow
        if light is None or (self.view, self.dg, self.index) != (View.JOINT, light.dg, light.step):
            return
        if self.main.canvas.show_nodes(list(light.focus)):
            self._saved_follow = None
