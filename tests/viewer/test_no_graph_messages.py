"""The views and the Saved tab of a target without a DifferentiableGraph say
why (the ops that kept it out and what would show one), as the CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.runtime.no_graph_reason import no_differentiable_graph_reason
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.model import View
from gradview.viewer.saved_rows import empty_message
from gradview.viewer.session import load_target
from gradview.viewer.view_steps import view_unavailable_reason

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lstm() -> PassTrace:
    return load_target(f"{ROOT / 'examples' / 'lstm.py'}:build").trace


@pytest.mark.parametrize("view", [View.FORWARD, View.BACKWARD, View.JOINT])
def test_each_differentiated_view_says_why_there_is_none(lstm: PassTrace, view: View) -> None:
    reason = view_unavailable_reason(lstm, len(lstm) - 1, view, 0)
    assert reason == no_differentiable_graph_reason(lstm)
    assert "aten::lstm" in reason and "nothing in it needed grad" not in reason


def test_the_empty_saved_tab_says_the_same_and_asks_for_no_inputs(lstm: PassTrace) -> None:
    message = empty_message(lstm)
    assert message == f"nothing is saved for backward: {no_differentiable_graph_reason(lstm)}"
    assert "give example inputs" not in message


def test_the_backward_view_shows_the_whole_reason_at_120x40(lstm: PassTrace) -> None:
    """The reason is longer than the canvas is wide: it wraps, every word on screen."""
    from textual.pilot import Pilot

    from gradview.viewer.app import GradviewApp
    from gradview.viewer.canvas import GraphCanvas
    from gradview.viewer.session import Session

    from .driving import drive

    rows: list[str] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("3")
        await pilot.pause()
        canvas = app.query_one(GraphCanvas)
        for y in range(canvas.size.height):
            rows.append("".join(segment.text for segment in canvas.render_line(y)).strip())

    drive(Session("lstm", lstm), script, (120, 40))
    shown = " ".join(row for row in rows if row)
    assert len([row for row in rows if row]) > 1
    assert shown == no_differentiable_graph_reason(lstm)
