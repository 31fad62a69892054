"""The canvas camera: zoom keeps the selection in place, fit fills the canvas,
each view keeps its own camera, and a first view never opens on an empty corner."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from gradview.viewer.camera import ZOOM_LEVELS, anchored_scroll, fit_zoom, zoom_step
from gradview.viewer.canvas import COMPACT_BOXES, GraphCanvas
from gradview.viewer.layout import Layout, NodeBox
from gradview.viewer.model import DrawEdge, DrawGraph, DrawNode, Mark, Marks, NodeRole


class _CanvasApp(App[None]):
    def compose(self) -> ComposeResult:
        yield GraphCanvas(id="canvas")


def _run(script, size: tuple[int, int] = (80, 30)) -> None:  # an async callable
    async def run() -> None:
        app = _CanvasApp()
        async with app.run_test(size=size) as pilot:
            canvas = app.query_one(GraphCanvas)
            await pilot.pause()
            await script(canvas, pilot)

    asyncio.run(run())


def _grid(count: int = 40, per_row: int = 8) -> tuple[Layout, DrawGraph]:
    """A wide, tall picture: ``count`` boxes in rows of ``per_row``."""
    graph = DrawGraph()
    boxes = {}
    for i in range(count):
        graph.add_node(DrawNode(i, f"aten::op{i}"))
        boxes[i] = NodeBox(60 + 200 * (i % per_row), 40 + 120 * (i // per_row), 90, 36)
    width = 200 * per_row
    return Layout(boxes=boxes, width=width, height=120 * (count // per_row + 1)), graph


def _chain(n: int) -> tuple[Layout, DrawGraph]:
    """``n`` ops in a column, the last one the graph's output."""
    graph = DrawGraph()
    boxes, edges = {}, {}
    graph.add_node(DrawNode(0, "%x", NodeRole.INPUT))
    boxes[0] = NodeBox(100, 30, 60, 36)
    for i in range(1, n + 1):
        graph.add_node(DrawNode(i, f"aten::sin\n%v{i}"))
        boxes[i] = NodeBox(100, 30 + 72 * i, 90, 48)
        graph.add_edge(DrawEdge(i - 1, i, i - 1, f"%v{i - 1}"))
        edges[(i - 1, i, i - 1)] = [(100, 54 + 72 * (i - 1)), (100, 6 + 72 * i)]
    return Layout(boxes=boxes, edges=edges, width=200, height=72 * (n + 1) + 30), graph


def _screen_centre(canvas: GraphCanvas, node_id: int) -> tuple[float, float]:
    col, row = canvas.geometry.node_centre(node_id)
    x, y = canvas.camera_offset
    return col - x, row - y


def _visible(canvas: GraphCanvas, node_id: int) -> bool:
    col, row = _screen_centre(canvas, node_id)
    return 0 <= col < canvas.size.width and 0 <= row < canvas.size.height


def _painted(canvas: GraphCanvas) -> str:
    return "\n".join("".join(s.text for s in canvas.render_line(y)) for y in range(canvas.size.height))


# -- the arithmetic ---------------------------------------------------------------------------
def test_zoom_steps_go_to_the_next_level_from_anywhere() -> None:
    assert zoom_step(1.0, 1) == 1.25 and zoom_step(1.0, -1) == 0.8
    assert zoom_step(0.9, 1) == 1.0 and zoom_step(0.9, -1) == 0.8  # between levels, after fit
    assert zoom_step(ZOOM_LEVELS[-1], 1) == ZOOM_LEVELS[-1] and zoom_step(ZOOM_LEVELS[0], -1) == ZOOM_LEVELS[0]


def test_fit_zoom_is_limited_by_the_tighter_dimension() -> None:
    # 600 x 120 points at zoom 1: 100 x 10 cells; a 52 x 42 view (50 x 40 inside) halves it.
    assert fit_zoom(600, 120, 52, 42) == 0.5
    assert fit_zoom(60, 1200, 52, 42) == 0.4
    assert fit_zoom(60, 120, 2, 2) == 0.0


def test_anchored_scroll_shifts_by_how_far_the_point_moved() -> None:
    assert anchored_scroll((10, 5), (30, 15), (60, 30)) == (40, 20)


# -- the widget -------------------------------------------------------------------------------
def test_zoom_keeps_the_selection_on_its_screen_cell() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _grid()
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        # The node nearest the middle: zooming out far from the canvas's edges.
        node = min(graph.nodes, key=lambda n: abs(_screen_centre(canvas, n)[0] - 40) + abs(_screen_centre(canvas, n)[1] - 15))
        canvas.select(node, follow=False)
        before = _screen_centre(canvas, node)
        for direction in (1, 1, -1, -1, -1):
            canvas.action_zoom(direction)
            await pilot.pause()
            after = _screen_centre(canvas, node)
            assert abs(after[0] - before[0]) <= 1 and abs(after[1] - before[1]) <= 1, (canvas.zoom, before, after)

    _run(script)


def test_zoom_without_a_selection_keeps_the_centre_of_the_view() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _grid()
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        canvas.action_pan(-500, -500)
        canvas.action_pan(60, 20)

        def centre_in_points() -> tuple[float, float]:
            x, y = canvas.camera_offset
            x, y = x + canvas.size.width / 2, y + canvas.size.height / 2
            return x * 6 / canvas.zoom, y * 12 / canvas.zoom

        before = centre_in_points()
        canvas.action_zoom(1)
        await pilot.pause()
        after = centre_in_points()
        assert canvas.zoom == 1.25
        assert abs(after[0] - before[0]) <= 6 and abs(after[1] - before[1]) <= 12  # within a cell

    _run(script)


def test_fit_fills_the_canvas_and_centres_the_drawing() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _grid(24, 6)
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        canvas.action_fit()
        await pilot.pause()
        assert canvas.zoom not in ZOOM_LEVELS  # continuous, not the nearest level below
        cells = [canvas.geometry.node_cells[n] for n in graph.nodes]
        x, y = canvas.camera_offset
        left = min(c[0] for c in cells) - x
        right = canvas.size.width - (max(c[2] for c in cells) - x)
        top = min(c[1] for c in cells) - y
        bottom = canvas.size.height - (max(c[3] for c in cells) - y)
        assert min(left, right, top, bottom) >= 0, "the whole drawing is on screen"
        assert min(left + right, top + bottom) <= 6, "the larger dimension fills the view"
        assert abs(left - right) <= 2 and abs(top - bottom) <= 2, "centred"
        assert canvas.notice == ""

    _run(script)


def test_fit_says_so_instead_of_shrinking_boxes_to_dots() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _chain(450)
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        canvas.action_fit()
        await pilot.pause()
        assert canvas.zoom == COMPACT_BOXES
        assert "fits only at zoom" in canvas.notice
        assert "[sin]" in _painted(canvas), "op names, not a one-column line of dots"

    _run(script)


def test_the_first_view_of_a_big_chain_shows_its_output_at_zoom_1() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _chain(450)
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        assert canvas.zoom == 1.0
        assert _visible(canvas, 450) and "%v450" in _painted(canvas)
        assert canvas.camera_offset[1] > 0, "not the top-left corner"

    _run(script)


def test_the_first_view_centres_the_first_changed_node() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _chain(450)
        marks = Marks()
        marks.mark_node(200, Mark.ADDED)
        marks.mark_node(300, Mark.ADDED)
        canvas.show(layout, graph, marks, camera_key="a")
        await pilot.pause()
        col, row = _screen_centre(canvas, 200)
        assert abs(row - canvas.size.height / 2) <= 1 and "%v200" in _painted(canvas)

    _run(script)


def test_a_small_graph_opens_whole_and_readable() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        layout, graph = _chain(3)
        canvas.show(layout, graph, Marks(), camera_key="a")
        await pilot.pause()
        assert 0.8 <= canvas.zoom <= 1.25
        assert all(_visible(canvas, n) for n in graph.nodes)

    _run(script)


def test_each_view_keeps_its_camera_and_stepping_never_moves_it() -> None:
    async def script(canvas: GraphCanvas, pilot) -> None:
        grid, grid_graph = _grid()
        chain, chain_graph = _chain(100)
        canvas.show(grid, grid_graph, Marks(), camera_key=("whole", "main"))
        await pilot.pause()
        canvas.action_zoom(1)
        canvas.action_pan(-8, -4)
        await pilot.pause()
        kept = (canvas.zoom, canvas.camera_offset)
        # Another step of the same view (a node fewer, same union layout): the camera stays.
        del grid_graph.nodes[3]
        canvas.show(grid, grid_graph, Marks(), camera_key=("whole", "main"))
        await pilot.pause()
        assert (canvas.zoom, canvas.camera_offset) == kept
        # Another view: its own first view; back: the first view's camera again.
        canvas.show(None, DrawGraph(), Marks(), "laying out…", camera_key=("backward", 0))
        canvas.show(chain, chain_graph, Marks(), camera_key=("backward", 0))
        await pilot.pause()
        assert canvas.zoom == 1.0 and _visible(canvas, 100)
        canvas.action_zoom(-1)
        chain_camera = (canvas.zoom, canvas.camera_offset)
        canvas.show(grid, grid_graph, Marks(), camera_key=("whole", "main"))
        await pilot.pause()
        assert (canvas.zoom, canvas.camera_offset) == kept
        canvas.show(chain, chain_graph, Marks(), camera_key=("backward", 0))
        await pilot.pause()
        assert (canvas.zoom, canvas.camera_offset) == chain_camera
        # The same view drawn by another layout for a while (a focused picture), then its own again.
        focused, focused_graph = _chain(3)
        canvas.show(focused, focused_graph, Marks(), camera_key=("backward", 0))
        await pilot.pause()
        assert all(_visible(canvas, n) for n in focused_graph.nodes)
        canvas.show(chain, chain_graph, Marks(), camera_key=("backward", 0))
        await pilot.pause()
        assert (canvas.zoom, canvas.camera_offset) == chain_camera
        assert canvas.camera(("whole", "main"), grid).zoom == kept[0]

    _run(script)


def test_in_the_app_each_view_keeps_its_camera(mlp_session) -> None:  # a fixture
    from gradview.viewer.app import GradviewApp

    async def run() -> None:
        app = GradviewApp(mlp_session)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.wait_for_layouts()
            app.jump_to_pass(next(s.index for s in mlp_session.trace if s.pass_name == "lambdaLiftReverse"))
            canvas = app.query_one(GraphCanvas)

            async def view(key: str) -> tuple[float, tuple[int, int]]:
                await pilot.press(key)
                await app.wait_for_layouts()
                await pilot.pause()
                return canvas.zoom, canvas.camera_offset

            await view("1")
            canvas.action_zoom(-1)
            canvas.action_zoom(-1)
            canvas.action_pan(8, 4)
            whole = (canvas.zoom, canvas.camera_offset)
            first_backward = await view("3")
            assert first_backward[0] != whole[0], "the zoom of one view is not carried into another"
            canvas.action_zoom(1)
            backward = (canvas.zoom, canvas.camera_offset)
            assert await view("1") == whole
            assert await view("3") == backward

    asyncio.run(run())
