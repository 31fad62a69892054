"""Snapshot tests of the main screens (SVG screenshots compared with accepted ones).

Regenerate after an intended change with
``.venv/bin/python -m pytest tests/viewer/test_snapshots.py --snapshot-update``
and look at the SVGs in tests/viewer/__snapshots__/ before committing them.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from gradview.runtime import GraphName
from gradview.viewer.app import GradviewApp
from gradview.viewer.session import Session

SIZE = (160, 44)


def _at(
    pass_name: str,
    which: object,
    keys: tuple[str, ...] = (),
    *,
    canvas_keys: tuple[str, ...] = (),
    select: Callable[[GradviewApp], int] | None = None,
) -> Callable[[Pilot], object]:
    """Go to the step, press ``keys``; then select a node (``select``) and
    press ``canvas_keys`` with the canvas focused."""

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, GradviewApp)
        await app.wait_for_layouts()
        index = next(s.index for s in app.trace if s.pass_name == pass_name and s.which == which)
        app.jump_to_pass(index)
        for key in keys:
            await pilot.press(key)
            await app.wait_for_layouts()
        if select is not None:
            app.main.canvas.select(select(app))
            await pilot.pause()
        if canvas_keys:
            app.main.canvas.focus()
            await pilot.pause()
            for key in canvas_keys:
                await pilot.press(key)
                await app.wait_for_layouts()
        await pilot.pause()

    return run_before


def _first_grad_of(app: GradviewApp) -> int:
    """The first GradOf node of the backward graph on screen (a gradient to trace back)."""
    return next(n for n, node in app.main.canvas.graph.nodes.items() if "GradOf" in node.label)


def test_first_step_whole_graph(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", GraphName.main()))


def test_create_autodiff_subgraphs_frames_the_group(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("CreateAutodiffSubgraphs", GraphName.main()))


def test_joint_view_after_lambda_lift(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(
        GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("lambdaLiftReverse", GraphName.backward(0), ("4", "0"))
    )


def test_help_screen(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", GraphName.main(), ("question_mark",)))


# Issue 12, acceptance 5: the large-graph tools, the panels and the trace-back key.
def _first_grouped(app: GradviewApp) -> int:
    """The first node drawn inside a frame (a DifferentiableGraph's, at CreateAutodiffSubgraphs)."""
    return next(n for n, node in app.main.canvas.graph.nodes.items() if node.cluster is not None)


def test_collapse_folds_the_differentiable_graph_into_one_box(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(
        GradviewApp(mlp_session),
        terminal_size=SIZE,
        run_before=_at("CreateAutodiffSubgraphs", GraphName.main(), select=_first_grouped, canvas_keys=("x",)),
    )


def test_focus_shows_the_neighbourhood_of_the_selection(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", GraphName.main(), ("n", "f")))


def test_search_lights_the_matches_and_flies_to_the_first(snap_compare, mlp_session: Session) -> None:
    keys = ("slash", "a", "d", "d")
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", GraphName.main(), canvas_keys=keys))


def test_minimap_on_a_maximized_canvas(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(
        GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("CreateAutodiffSubgraphs", GraphName.main(), ("m", "plus"))
    )


def test_steps_panel_collapsed(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", GraphName.main(), ("s",)))


def test_trace_back_lights_the_gradient_path(snap_compare, mlp_session: Session) -> None:
    assert snap_compare(
        GradviewApp(mlp_session),
        terminal_size=SIZE,
        run_before=_at("lambdaLiftReverse", GraphName.backward(0), ("3",), select=_first_grad_of, canvas_keys=("T",)),
    )
