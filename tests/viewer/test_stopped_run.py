"""A graph that cannot run (an op without a kernel) still opens in the viewer:
its steps are drawn, and r, b, G and the Saved tab say why they cannot run,
naming the node."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from gradview.viewer.app import GradviewApp
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.session import load_target

from ..runtime.no_kernel_graph import write_no_kernel_graph
from .driving import drive


def test_the_steps_draw_and_the_actions_that_need_values_name_the_node(tmp_path: Path) -> None:
    session = load_target(write_no_kernel_graph(tmp_path))
    assert session.run_error is not None
    seen: dict[str, object] = {}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        drawn = []
        for index in range(len(app.trace)):
            app.jump_to_pass(index)
            await app.wait_for_layouts()
            await pilot.pause()
            drawn.append(bool(app.query_one(GraphCanvas).graph.nodes))
        seen["drawn"] = drawn
        for key in ("r", "b", "G"):
            await pilot.press(key)
            await pilot.pause()
        seen["notes"] = [str(n.message) for n in app._notifications]
        await pilot.press("S")
        await app.workers.wait_for_complete()
        await pilot.pause()
        seen["saved"] = str(app.query_one("#saved-status", Static).content)

    drive(session, script, (160, 45))
    assert all(seen["drawn"])
    notes = seen["notes"]
    assert isinstance(notes, list)
    wanted = f"nothing to run: {session.run_error}"
    assert notes.count(wanted) == 3 and all("no graph with example inputs" not in n for n in notes)
    assert any("showing the executor's steps up to there" in n for n in notes)  # the loader's note
    assert seen["saved"] == f"nothing is saved for backward: {session.run_error}"
