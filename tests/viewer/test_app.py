"""Pilot tests: drive the app on the bundled example as a user would."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.app import GradviewApp, HelpScreen
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.model import Mark, View
from gradview.viewer.session import Session, load_target
from gradview.viewer.timeline import Timeline, summarize_steps

from .driving import Script, drive

SIZE = (200, 50)


def _drive(session: Session, script: Script) -> GradviewApp:
    return drive(session, script, SIZE)


def _static_text(app: GradviewApp, selector: str) -> str:
    """The plain text a Static shows (its content rendered by Rich)."""
    from rich.console import Console

    content = app.query_one(selector, Static).content
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


def test_down_steps_through_every_step_of_the_trace(mlp_session: Session) -> None:
    seen: list[int] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        seen.append(app.index)
        for _ in range(len(mlp_session.trace) - 1):
            await pilot.press("down")
            seen.append(app.index)
        canvas = app.query_one(GraphCanvas)
        assert canvas.geometry is not None and canvas.graph.nodes
        assert f"step {len(mlp_session.trace) - 1}/" in _static_text(app, "#viewbar")

    _drive(mlp_session, script)
    assert seen == list(range(len(mlp_session.trace)))


def test_views_switch_between_whole_forward_backward_and_joint(mlp_session: Session) -> None:
    drawn: dict[View, int] = {}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(len(mlp_session.trace) - 1)
        for key, view in (("2", View.FORWARD), ("3", View.BACKWARD), ("4", View.JOINT), ("1", View.WHOLE)):
            await pilot.press(key)
            await app.wait_for_layouts()
            await pilot.pause()
            assert app.view is view
            canvas = app.query_one(GraphCanvas)
            assert canvas.geometry is not None, f"{view} has no drawing"
            drawn[view] = len(canvas.geometry.node_cells)

    _drive(mlp_session, script)
    assert all(count > 0 for count in drawn.values())
    assert drawn[View.JOINT] > max(drawn[View.FORWARD], drawn[View.BACKWARD])


def test_selecting_a_captured_value_highlights_it_and_explains_it(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(len(mlp_session.trace) - 1)
        await pilot.press("4")
        await app.wait_for_layouts()
        await pilot.pause()
        canvas = app.query_one(GraphCanvas)
        captured = [n for n, marks in canvas.marks.nodes.items() if Mark.CAPTURED_OUTPUT in marks and n in canvas.graph.nodes]
        assert captured, "the joint view marks captured outputs"
        node = captured[0]
        cells = canvas.geometry.node_cells[node]
        canvas.select(node)  # bring it into view, then click it unselected
        canvas.selected = None
        await pilot.pause()
        x, y = canvas.camera_offset  # the camera, margins before the drawing included
        await pilot.click(GraphCanvas, offset=((cells[0] + cells[2]) // 2 - x, (cells[1] + cells[3]) // 2 - y))
        await pilot.pause()
        assert app.selected == node and canvas.selected == node
        assert Mark.CAPTURED_OUTPUT in canvas.marks.nodes[node]
        inspector = _static_text(app, "#inspector")
        assert "captured" in inspector.lower()
        # The canvas paints the captured node in the captured-output colour.
        from gradview.viewer.palette import style_for

        row = cells[1] + 1 - canvas.camera_offset[1]
        painted = {seg.style.bgcolor.name for seg in canvas.render_line(row) if seg.style and seg.style.bgcolor}
        expected = style_for({Mark.SELECTED}, "dark").fill
        assert expected in painted

    _drive(mlp_session, script)


def test_hiding_unchanged_steps_keeps_only_changed_ones(mlp_session: Session) -> None:
    trace: PassTrace = mlp_session.trace
    # "changed" as the timeline prints it: the trace's one change function.
    changed = {s.index for s in summarize_steps(trace) if s.changed} | {0}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        timeline = app.query_one(Timeline)
        await pilot.press("u")
        await pilot.pause()
        assert {s.index for s in timeline.visible()} == changed
        for _ in range(len(changed) + 2):
            await pilot.press("down")
            assert app.index in changed
        await pilot.press("u")
        await pilot.pause()
        assert len(timeline.visible()) == len(trace)

    _drive(mlp_session, script)


def test_filter_box_keeps_matching_passes(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("slash")
        for ch in "autogradzero":
            await pilot.press(ch)
        await pilot.pause()
        names = {s.pass_name for s in app.query_one(Timeline).visible()}
        assert names == {"specializeAutogradZero"}

    _drive(mlp_session, script)


def test_gradient_check_runs_and_every_input_passes(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("G")
        await app.wait_for_layouts()
        await pilot.pause()
        table = app.query_one("#gradcheck", DataTable)
        assert table.row_count == len(mlp_session.inputs)
        verdicts = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        assert verdicts == ["pass"] * table.row_count
        status = _static_text(app, "#check-status")
        assert f"step {app.index} " in status and "all 5 gradients match finite differences" in status

    _drive(mlp_session, script)


def test_run_shows_values_and_divergence_search_finds_none(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("r")
        await app.wait_for_layouts()
        await pilot.pause()
        assert app.query_one("#values", DataTable).row_count > 0
        canvas = app.query_one(GraphCanvas)
        assert any(" = " in node.label and "μ=" in node.label for node in canvas.graph.nodes.values()), "values on nodes"
        await pilot.press("b")
        await app.wait_for_layouts()
        await pilot.pause()
        status = _static_text(app, "#check-status")
        assert "no divergence" in status and "original outputs and gradients" in status
        assert app.query_one("#gradcheck", DataTable).row_count == 0  # b's result replaced G's table

    _drive(mlp_session, script)


def test_help_theme_diff_and_palette_do_not_disturb_the_state(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(5)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("t")
        await pilot.pause()
        assert app.theme_name == "light"
        await pilot.press("d")
        await pilot.pause()
        from gradview.viewer.text_pane import TextPane

        diff = app.query_one("#irtext", TextPane).plain
        assert "@@" in diff or "no change" in diff
        assert app.index == 5

    _drive(mlp_session, script)


def test_a_broken_step_is_shown_as_failed_not_a_crash(tmp_path: Path) -> None:
    # A trace whose second step holds a graph that cannot run (a shape error):
    # running it marks the step failed in the timeline and the view bar.
    from gradview.ir import parse_ir

    good = parse_ir("graph(%a : Double(2, 3), %b : Double(3, 4)):\n  %c : Double(2, 4) = aten::mm(%a, %b)\n  return (%c)\n")
    bad = parse_ir("graph(%a : Double(2, 3), %b : Double(3, 4)):\n  %c : Double(2, 4) = aten::mm(%b, %a)\n  return (%c)\n")
    trace = PassTrace()
    trace.record("Input", good, changed=False)
    trace.record("BrokenPass", bad, changed=True)
    path = tmp_path / "broken.json"
    trace.save(str(path))
    session = load_target(str(path))
    import numpy as np

    session.graph = good
    session.inputs = [np.ones((2, 3)), np.ones((3, 4))]

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(1)
        await pilot.press("r")
        await app.wait_for_layouts()
        await pilot.pause()
        assert 1 in app.failures and "mm" in app.failures[1]
        assert "✗" in _static_text(app, "#viewbar")
        await pilot.press("b")
        await app.wait_for_layouts()
        await pilot.pause()
        assert app.index == 1

    _drive(session, script)


def test_a_step_whose_graph_breaks_an_invariant_is_marked_failed() -> None:
    # The pass moved a node above the node that produces its input.
    from gradview.ir import parse_ir

    graph = parse_ir(
        "graph(%a : Tensor):\n  %b : Tensor = aten::relu(%a)\n  %c : Tensor = aten::tanh(%b)\n  return (%c)\n"
    )
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    nodes = list(graph.nodes())
    nodes[1].move_before(nodes[0])
    trace.record("BadReorder", graph, changed=True)
    session = Session("bad-reorder", trace)

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await app.wait_for_layouts()
        await pilot.pause()
        assert 1 in app.failures and 0 not in app.failures
        assert 1 in app.query_one(Timeline).failed
        app.jump_to_pass(1)
        await pilot.pause()
        assert "✗" in _static_text(app, "#viewbar")

    _drive(session, script)


def test_without_graphviz_the_canvas_still_draws_and_says_how_to_install_it(
    mlp_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    notes: list[str] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas = app.query_one(GraphCanvas)
        assert canvas.geometry is not None and canvas.graph.nodes
        assert all(layout.engine == "layered" for layout in app.layouts.values())
        notes.extend(str(n.message) for n in app._notifications)

    _drive(mlp_session, script)
    assert any("apt-get install graphviz" in note for note in notes)


def test_command_palette_offers_passes_nodes_and_exports(mlp_session: Session) -> None:
    from gradview.viewer.commands import GradviewCommands

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        provider = GradviewCommands(app.screen)
        labels = [label for label, _, _ in provider._commands()]
        assert "jump to pass CreateAutodiffSubgraphs" in labels
        assert any(label.startswith("find node %h") for label in labels)
        assert "export this view as SVG" in labels
        jump = next(cb for label, cb, _ in provider._commands() if label == "jump to pass CreateAutodiffSubgraphs")
        jump()
        await pilot.pause()
        assert app.trace[app.index].pass_name == "CreateAutodiffSubgraphs"
        hits = [hit async for hit in provider.search("lambdalift")]
        assert hits and all("lambdaLiftReverse" in str(hit.text) for hit in hits)

    _drive(mlp_session, script)


def test_export_keys_write_the_view_as_svg_and_every_step_as_html(mlp_session: Session, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    app = GradviewApp(mlp_session, export_dir=str(tmp_path / "out"))

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_for_layouts()
            app.jump_to_pass(21)
            await pilot.pause()
            await pilot.press("e")
            await app.wait_for_layouts()
            await pilot.press("E")
            await app.wait_for_layouts()
            await pilot.pause()

    asyncio.run(run())
    (svg,) = (tmp_path / "out").glob("021-*-main.svg")
    ET.parse(svg)  # well-formed
    assert "aten::matmul" in svg.read_text(encoding="utf-8")
    html = (tmp_path / "out" / "steps-whole.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "ArrowRight" in html  # its pictures: tests/viewer/test_export.py


def test_trace_back_lights_the_gradient_path(mlp_session: Session) -> None:
    """T on a gradient of df lights the df ops computing it and the forward ops they differentiate."""
    from gradview.runtime.checks import gradient_path
    from gradview.runtime.trace_records import walk_records
    from gradview.viewer.view_steps import backward_step

    trace = mlp_session.trace
    index = next(
        s.index for s in trace
        if (df := backward_step(trace, s.index, 0)) is not None
        and any(n.kind == "prim::GradOf" for n in walk_records(df.graph))
    )
    df = backward_step(trace, index, 0)
    assert df is not None
    grad_of = next(n for n in walk_records(df.graph) if n.kind == "prim::GradOf")

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("T")  # nothing selected: a warning, nothing lit
        assert app.traced is None
        app.jump_to_pass(index)
        await pilot.press("3")
        await app.wait_for_layouts()
        app.selected = grad_of.id
        await pilot.press("T")
        await pilot.pause()
        path = gradient_path(trace, index, 0, grad_of.id)
        assert path is not None and app.traced is not None
        lit = {node for node, marks in app._marks().nodes.items() if Mark.LINKED in marks}
        assert path.df_nodes <= lit and path.f_nodes <= lit

    _drive(mlp_session, script)
