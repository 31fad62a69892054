"""The views of a step, one record each: adding a view is a record here plus its drawing.

A view shows the step's whole graph, or halves of one DifferentiableGraph: its
forward graph f, its backward graph df, or both (drawn side by side with the
values f hands to df as edges, :func:`gradview.viewer.views.draw_step`). Which
steps it shows follows from its halves (:func:`gradview.viewer.view_steps.view_steps`);
its key, the footer's word and the view bar's name are read from here by the
app and the graph panel, and ``v`` cycles through the views in this order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import View

__all__ = ["ViewSpec", "VIEWS", "DEFAULT_VIEW", "view_spec", "view_showing"]


@dataclass(frozen=True)
class ViewSpec:
    """One view: its name, the key that shows it, the footer's word, the view bar's
    title, and which halves of a DifferentiableGraph it draws (neither: the whole graph)."""

    view: View
    key: str
    binding: str
    title: str
    forward: bool = False
    backward: bool = False

    @property
    def differentiated(self) -> bool:
        """Draws graphs of one DifferentiableGraph (``g`` picks which), not the step's whole graph."""
        return self.forward or self.backward

    @property
    def joint(self) -> bool:
        """Draws f and df side by side."""
        return self.forward and self.backward


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec(View.WHOLE, "1", "Whole", "whole graph"),
    ViewSpec(View.FORWARD, "2", "f", "forward f", forward=True),
    ViewSpec(View.BACKWARD, "3", "df", "backward df", backward=True),
    ViewSpec(View.JOINT, "4", "Joint", "joint f→df", forward=True, backward=True),
)
DEFAULT_VIEW = VIEWS[0].view  # the view a trace opens on; the steps are drawn ahead in it
_BY_VIEW = {spec.view: spec for spec in VIEWS}


def view_spec(view: View) -> ViewSpec:
    """The record of ``view``."""
    return _BY_VIEW[view]


def view_showing(*, forward: bool, backward: bool) -> View:
    """The view that draws these halves (both: where f's producers and df's readers show together)."""
    return next(spec.view for spec in VIEWS if (spec.forward, spec.backward) == (forward, backward))
