"""The large-graph keys in the app: x / X collapse, f < > focus, o fan-out stubs (Pilot)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from gradview.ir import parse_ir
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.app import GradviewApp
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.controller import layout_key
from gradview.viewer.detail import Detail
from gradview.viewer.graph_analysis import collapse, focus_nodes
from gradview.viewer.model import DrawGraph, NodeRole, View
from gradview.viewer.session import Session

PACK_GRADIENT = 54  # examples/mlp.ir's step whose whole view frames DifferentiableGraph_0 (dg19)
GRAD_OF_STEP = 41  # its backward view at this step: five GradOf blocks
HANG_GUARD = 300  # seconds


def _drive(session: Session, script: Callable[[GradviewApp, Pilot], Awaitable[None]]) -> None:
    async def run() -> None:
        app = GradviewApp(session, detail=Detail.IR)  # the IR's own groups and fan-outs
        async with app.run_test(size=(160, 50)) as pilot:
            await _settle(app, pilot)
            await script(app, pilot)

    asyncio.run(run())


async def _settle(app: GradviewApp, pilot: Pilot) -> None:
    # Bounded only so that a crashed app fails the test instead of hanging it.
    await asyncio.wait_for(app.wait_for_layouts(), HANG_GUARD)
    await pilot.pause()


async def _press(app: GradviewApp, pilot: Pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await _settle(app, pilot)


def _canvas(app: GradviewApp) -> GraphCanvas:
    return app.query_one(GraphCanvas)


def _drawing(app: GradviewApp) -> DrawGraph:
    return app.controller.draw(app.index, app.view, app.dg)


def _painted(app: GradviewApp) -> str:
    """Every row of the canvas's whole picture, painted (scrolled through)."""
    canvas = _canvas(app)
    geometry = canvas.geometry
    assert geometry is not None, "the canvas has a layout"
    rows = []
    canvas.scroll_to(0, 0, animate=False, immediate=True, force=True)
    for top in range(0, geometry.rows, canvas.size.height):
        for left in range(0, geometry.columns, canvas.size.width):
            canvas.scroll_to(left, top, animate=False, immediate=True, force=True)
            rows += ["".join(s.text for s in canvas.render_line(y)) for y in range(canvas.size.height)]
    return "\n".join(rows)


def _box_rows(app: GradviewApp, node_id: int) -> list[str]:
    """The rows of ``node_id``'s box as the canvas paints them."""
    canvas = _canvas(app)
    c0, r0, c1, r1 = canvas.geometry.node_cells[node_id]
    canvas.scroll_to(c0, r0, animate=False, immediate=True, force=True)
    x, y = int(canvas.scroll_offset.x), int(canvas.scroll_offset.y)
    rows = ["".join(s.text for s in canvas.render_line(row - y)) for row in range(r0, r1)]
    return [row[c0 - x : c1 - x] for row in rows]


def _static_text(app: GradviewApp, selector: str) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


def _viewbar(app: GradviewApp) -> str:
    return _static_text(app, "#viewbar")


def _group_members(drawing: DrawGraph, group: str) -> list[int]:
    def inside(key: str | None) -> bool:
        while key is not None:
            if key == group:
                return True
            key = drawing.clusters[key].parent
        return False

    return [i for i, n in drawing.nodes.items() if inside(n.cluster)]


def test_x_collapses_the_selections_differentiable_graph_and_x_on_the_box_expands_it(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(PACK_GRADIENT)
        await _settle(app, pilot)
        drawing = _drawing(app)
        members = _group_members(drawing, "dg19")
        count = sum(1 for i in members if drawing.nodes[i].role is not NodeRole.RETURN)
        assert count > 3
        app.find_node(members[1])
        await _press(app, pilot, "x")
        shown = _canvas(app).graph
        box = app.selected
        assert box is not None and box < 0 and box in shown.nodes
        assert shown.nodes[box].label == f"DifferentiableGraph_0\n[{count} nodes]"
        assert not set(members) & set(shown.nodes), "the group's nodes are folded into the box"
        assert "dg19" not in shown.clusters
        key = app.large.picture_of(drawing, layout_key(app.trace, app.index, app.view, app.dg)).key
        assert key[0] == "transform" and _canvas(app).layout_data is app.layouts[key], "laid out on its own"
        assert box in _canvas(app).geometry.node_cells and _canvas(app).selected == box
        painted = _painted(app)
        assert "DifferentiableGraph_0" in painted and f"[{count} nodes]" in painted
        assert "1 group collapsed" in _viewbar(app)
        inspector = _static_text(app, "#inspector")
        assert f"{count} nodes" in inspector and "DifferentiableGraph_0" in inspector

        app.find_node(members[0])  # the palette's "find node" on a folded node: its box
        await _settle(app, pilot)
        assert app.selected == box and _canvas(app).selected == box
        await _press(app, pilot, "x")  # on the box: expand
        shown = _canvas(app).graph
        assert set(members) <= set(shown.nodes) and box not in shown.nodes
        assert app.selected in members and "collapsed" not in _viewbar(app)
        assert _canvas(app).layout_data is app.layouts[layout_key(app.trace, app.index, app.view, app.dg)]

    _drive(mlp_session, script)


def test_x_without_a_grouped_selection_says_what_to_do(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(PACK_GRADIENT)
        await _settle(app, pilot)
        outside = next(i for i, n in _drawing(app).nodes.items() if n.cluster is None)
        app.find_node(outside)
        before = set(_canvas(app).graph.nodes)
        await _press(app, pilot, "x")
        assert set(_canvas(app).graph.nodes) == before and app.selected == outside
        assert any("then x" in str(n.message) for n in app._notifications)

    _drive(mlp_session, script)


def test_shift_x_collapses_every_group_and_again_expands_them_all(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(GRAD_OF_STEP)
        await _press(app, pilot, "3")
        drawing = _drawing(app)
        groups = [k for k, c in drawing.clusters.items() if c.title.startswith("prim::GradOf")]
        assert len(groups) == 5
        await _press(app, pilot, "X")
        shown = _canvas(app).graph
        boxes = [n for n in shown.nodes.values() if n.label.startswith("prim::GradOf block0\n[")]
        assert len(boxes) == 5
        hidden = {i for g in groups for i in _group_members(drawing, g)}
        assert not hidden & set(shown.nodes)
        assert all(b.id in _canvas(app).geometry.node_cells for b in boxes)
        assert "5 groups collapsed" in _viewbar(app)
        await _press(app, pilot, "X")
        assert set(_canvas(app).graph.nodes) == set(drawing.nodes)

    _drive(mlp_session, script)


def test_f_shows_only_the_neighbourhood_and_hops_change_with_angle_brackets(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(PACK_GRADIENT)
        await _settle(app, pilot)
        drawing = _drawing(app)
        centre = _group_members(drawing, "dg19")[2]
        app.find_node(centre)
        await _press(app, pilot, "f")
        assert set(_canvas(app).graph.nodes) == focus_nodes(drawing, centre, 2)
        assert len(focus_nodes(drawing, centre, 2)) < len(drawing.nodes)
        assert set(_canvas(app).geometry.node_cells) == focus_nodes(drawing, centre, 2), "laid out alone"
        assert "focus: 2 hops around" in _viewbar(app)
        await _press(app, pilot, "greater_than_sign")
        assert set(_canvas(app).graph.nodes) == focus_nodes(drawing, centre, 3)
        assert "focus: 3 hops" in _viewbar(app)
        await _press(app, pilot, "less_than_sign", "less_than_sign", "less_than_sign")  # 1 is the least
        assert set(_canvas(app).graph.nodes) == focus_nodes(drawing, centre, 1)
        assert "focus: 1 hop around" in _viewbar(app)
        await _press(app, pilot, "f")
        assert set(_canvas(app).graph.nodes) == set(drawing.nodes)
        assert "focus" not in _viewbar(app)

    _drive(mlp_session, script)


def test_focus_follows_the_steps_and_collapse_inside_it(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(PACK_GRADIENT)
        await _settle(app, pilot)
        drawing = _drawing(app)
        inside = _group_members(drawing, "dg19")[2]
        app.find_node(inside)
        await _press(app, pilot, "x")  # collapse, then focus on the box
        box = app.selected
        await _press(app, pilot, "f")
        await _press(app, pilot, "less_than_sign")
        folded = collapse(drawing, ["dg19"], {"dg19": box})
        shown = set(_canvas(app).graph.nodes)
        assert shown == focus_nodes(folded.graph, box, 1) and inside not in shown
        assert len(shown) < len(folded.graph.nodes)
        await _press(app, pilot, "right_square_bracket")  # the next step keeps the view's transform
        assert app.index == PACK_GRADIENT + 1
        assert set(_canvas(app).graph.nodes) == focus_nodes(collapse(_drawing(app), ["dg19"], {"dg19": box}).graph, box, 1)
        assert "focus: 1 hop" in _viewbar(app) and "1 group collapsed" in _viewbar(app)
        await _press(app, pilot, "x")  # expanding the box the focus is on: the focus moves to its first node
        first = app.selected
        assert first in _group_members(_drawing(app), "dg19")
        assert set(_canvas(app).graph.nodes) == focus_nodes(_drawing(app), first, 1)

    _drive(mlp_session, script)


# -- fan-out stubs -----------------------------------------------------------------------------
READERS = 12


def _fan_out_session() -> Session:
    """%w read by twelve matmuls (more than FAN_OUT_LIMIT = 8)."""
    lines = ["graph(%x : Double(4, 4), %w : Double(4, 4)):"]
    previous = "x"
    for i in range(READERS):
        lines.append(f"  %a{i} : Double(4, 4) = aten::matmul(%{previous}, %w)")
        previous = f"a{i}"
    lines.append(f"  return (%{previous})")
    trace = PassTrace()
    trace.record("Input", parse_ir("\n".join(lines) + "\n"), changed=False)
    return Session("fan-out", trace)


def test_o_toggles_fan_out_stubs_for_a_value_read_by_many_nodes() -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        drawing = _drawing(app)
        w = next(i for i, n in drawing.nodes.items() if n.label.startswith("%w"))
        readers = {e.target for e in drawing.edges if e.value_id == w}
        assert len(readers) == READERS
        canvas = _canvas(app)
        assert not any(e.value_id == w for e in canvas.graph.edges), "stubs are on by default"
        assert {i for i, text in canvas.stubs.items() if "◂%w" in text} == readers
        assert canvas.stubs[w] == f"%w▸{READERS}"
        assert "stubs: 1 value" in _viewbar(app)
        assert canvas.layout_data is app.layouts[layout_key(app.trace, 0, View.WHOLE, 0)], "the plain layout"
        while canvas.zoom < 1.0:  # the small chain opens whole, boxes on one line: stubs show on full boxes
            await _press(app, pilot, "plus")
        for reader in readers:
            assert "◂%w" in _box_rows(app, reader)[-1], _box_rows(app, reader)
        assert f"%w▸{READERS}" in _box_rows(app, w)[-1]

        await _press(app, pilot, "o")
        assert sum(1 for e in canvas.graph.edges if e.value_id == w) == READERS
        assert canvas.stubs == {} and "stubs" not in _viewbar(app)
        assert not any("◂%w" in _box_rows(app, reader)[-1] for reader in readers)
        await _press(app, pilot, "o")
        assert not any(e.value_id == w for e in canvas.graph.edges) and len(canvas.stubs) == READERS + 1

    _drive(_fan_out_session(), script)


def test_focus_on_a_fan_out_value_keeps_its_readers_as_stubs() -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        drawing = _drawing(app)
        w = next(i for i, n in drawing.nodes.items() if n.label.startswith("%w"))
        app.find_node(w)
        await _press(app, pilot, "f")
        assert set(_canvas(app).graph.nodes) == focus_nodes(drawing, w, 2)
        assert "stubs: 1 value" in _viewbar(app) and "focus: 2 hops around %w" in _viewbar(app)

    _drive(_fan_out_session(), script)


def test_while_the_collapsed_layout_is_computed_the_plain_picture_stays(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(PACK_GRADIENT)
        await _settle(app, pilot)
        drawing = _drawing(app)
        asked: list = []
        app.controller.request_custom = lambda key, build: asked.append((key, build))  # never answers
        app.find_node(_group_members(drawing, "dg19")[1])
        await _press(app, pilot, "x")
        (key, build), *_ = asked
        assert key[0] == "transform" and key[1] == layout_key(app.trace, app.index, app.view, app.dg)
        canvas = _canvas(app)
        assert set(canvas.graph.nodes) == set(drawing.nodes), "the plain picture, placed by the plain layout"
        assert canvas.layout_data is app.layouts[key[1]]
        assert "1 group collapsed (x X) · laying out…" in _viewbar(app)
        union = build()  # what the worker would lay out: the box where the group's steps have it
        assert app.selected in union.nodes and "dg19" not in union.clusters
        await _press(app, pilot, "j")  # keys still work meanwhile
        assert app.index == PACK_GRADIENT + 1 and "laying out…" in _viewbar(app)

    _drive(mlp_session, script)
