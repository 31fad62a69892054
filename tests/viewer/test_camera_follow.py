"""A whole first view follows the step until the user moves it: each step is
fitted to what it shows, and frames are drawn around the boxes they hold at
that step (Pilot, the bundled example)."""

from __future__ import annotations

from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.session import Session

from .driving import drive


def _step_of(app: GradviewApp, pass_name: str, which: str = "main") -> int:
    return next(s.index for s in app.trace if s.pass_name == pass_name and str(s.which) == which)


def _fits(canvas: GraphCanvas) -> bool:
    """Every box and frame of the step on screen lies inside the canvas."""
    assert canvas.geometry is not None
    c0, r0, c1, r1 = canvas._drawn_cells(canvas.geometry)
    x, y = canvas.camera_offset
    return x <= c0 and y <= r0 and c1 <= x + canvas.size.width and r1 <= y + canvas.size.height


def test_an_untouched_whole_view_is_fitted_to_each_step(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas = app.query_one(GraphCanvas)
        assert _fits(canvas)
        for pass_name in ("CreateAutodiffSubgraphs", "InlineAutodiffSubgraphs"):
            app.jump_to_pass(_step_of(app, pass_name))
            await app.wait_for_layouts()
            await pilot.pause()
            assert _fits(canvas), pass_name
            # The DifferentiableGraph's frame is drawn around the boxes it holds at this step.
            frames = canvas._frames(canvas.geometry)
            union = {key: (c0, r0, c1, r1) for c0, r0, c1, r1, key in canvas.geometry.frames}
            for key, (c0, r0, c1, r1) in frames.items():
                inside = [canvas.geometry.node_cells[i] for i, n in canvas.graph.nodes.items()
                          if n.cluster == key and i in canvas.geometry.node_cells]
                assert inside, key
                left, top = min(c[0] for c in inside), min(c[1] for c in inside)
                right, bottom = max(c[2] for c in inside), max(c[3] for c in inside)
                assert c0 <= left and right <= c1 + 1 and r0 <= top and bottom <= r1 + 1, key  # around its boxes
                assert c1 - c0 <= right - left + 4 and r1 - r0 <= bottom - top + 4, key  # and no larger
                u = union[key]
                assert u[0] <= c0 and u[1] <= r0 and c1 <= u[2] and r1 <= u[3], key  # never beyond the union's

    drive(mlp_session, script, (200, 50))


def test_a_view_the_user_moved_stays_where_it_was(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas = app.query_one(GraphCanvas)
        canvas.focus()
        await pilot.press("right", "right")
        await pilot.pause()
        moved = (canvas.camera_offset, canvas.zoom)
        app.jump_to_pass(_step_of(app, "CreateAutodiffSubgraphs"))
        await app.wait_for_layouts()
        await pilot.pause()
        assert (canvas.camera_offset, canvas.zoom) == moved, "stepping never moves a camera the user moved"

    drive(mlp_session, script, (200, 50))
