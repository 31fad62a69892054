"""The tabs panel's side of the app: ``p`` / ``P`` cycle the tabs, and a tab an
action filled is brought where the user sees it.

A mixin of :class:`~gradview.viewer.app.GradviewApp`. What a user expects:

- ``d``, ``G``, ``b`` and ``S`` fill a tab that is the only place their result
  shows: the tab comes forward, and a collapsed tabs panel (``i``, a narrow
  terminal, or ``m``'s maximized canvas) opens;
- ``r`` puts its values on the nodes as well: the Run tab comes forward, but a
  collapsed panel stays collapsed (the user chose the room for the graph) and a
  notice says where min, max and mean are;
- selecting a node brings the Inspect tab forward unless the user chose the
  tab in front (``p`` / ``P`` or a click on its label): a tab being read stays;
  a collapsed panel stays collapsed (the selection shows on the canvas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .detail_panel import DetailPanel

if TYPE_CHECKING:
    from .app import GradviewApp

__all__ = ["TabTools", "ON_CANVAS_TOO"]

# Tabs whose content the canvas shows too: bringing them forward leaves a collapsed panel as it is.
ON_CANVAS_TOO = {
    "tab-inspect": None,  # the selection is on the canvas: nothing to say
    "tab-run": "the Run tab has min, max and mean of every value: i shows the tabs",
}


class TabTools:
    """``self`` is the GradviewApp."""

    def action_cycle_tab(self: GradviewApp, step: int) -> None:
        """p / P: the next / previous tab in front; a collapsed tabs panel opens on the tab it had."""
        if not self.main.panel_widths()[1]:
            self.main.show_panel("right")
            return
        self.main.details.cycle(step)

    def on_detail_panel_brought(self: GradviewApp, message: DetailPanel.Brought) -> None:
        """An action filled a tab: open a collapsed tabs panel, or say where the tab is."""
        if self.main.panel_widths()[1]:
            return
        if message.tab not in ON_CANVAS_TOO:
            self.main.show_panel("right")
        elif ON_CANVAS_TOO[message.tab]:
            self.notify(ON_CANVAS_TOO[message.tab], timeout=4)
