"""The terminal canvas: boxes where the layout puts them, edges between them, hit tests."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from gradview.viewer.canvas import (
    CELL_HEIGHT,
    CELL_WIDTH,
    CanvasGeometry,
    GraphCanvas,
    box_row_text,
)
from gradview.viewer.canvas_geometry import ARROWS, edge_glyph
from gradview.viewer.layout import Layout, NodeBox
from gradview.viewer.model import DrawEdge, DrawGraph, DrawNode, Mark, Marks, NodeRole


def _two_nodes() -> tuple[Layout, DrawGraph]:
    graph = DrawGraph()
    graph.add_node(DrawNode(1, "aten::matmul\n%m : Double(8, 16)"))
    graph.add_node(DrawNode(2, "aten::relu\n%h", role=NodeRole.OP))
    graph.add_edge(DrawEdge(1, 2, 10, "%m"))
    layout = Layout(
        boxes={1: NodeBox(120, 30, 132, 48), 2: NodeBox(120, 150, 72, 48)},
        edges={(1, 2, 10): [(120, 54), (120, 90), (120, 126)]},
        width=300,
        height=200,
    )
    return layout, graph


def _row_text(geometry: CanvasGeometry, row: int, graph: DrawGraph | None = None) -> str:
    graph = graph or _two_nodes()[1]
    cells = [" "] * geometry.columns
    for col, (bits, _, directions) in geometry.dots_in_row(row).items():
        cells[col] = edge_glyph(bits, directions) or " "
    for col, glyph, _ in geometry.arrows_in_row(row):
        cells[col] = glyph
    for span in geometry.boxes.get(row, ()):
        node = graph.nodes[span.node_id]
        for offset, ch in enumerate(box_row_text(span, row, node.label, node.role, geometry.zoom)):
            cells[span.start + offset] = ch
    return "".join(cells)


def test_boxes_sit_where_the_layout_puts_them_with_their_labels() -> None:
    layout, graph = _two_nodes()
    geometry = CanvasGeometry.build(layout, 1.0)
    c0, r0, c1, r1 = geometry.node_cells[1]
    assert abs((c0 + c1) / 2 - 120 / CELL_WIDTH) <= 1 and abs((r0 + r1) / 2 - 30 / CELL_HEIGHT) <= 1
    text = "\n".join(_row_text(geometry, r) for r in range(r0, r1))
    assert "aten::matmul" in text and "%m : Double(8, 16)" in text
    assert text.splitlines()[0].strip().startswith("┌") and text.splitlines()[-1].strip().endswith("┘")


def test_edges_are_solid_lines_ending_in_an_arrowhead_on_the_target() -> None:
    layout, graph = _two_nodes()
    for zoom in (1.0, 0.5):
        geometry = CanvasGeometry.build(layout, zoom)
        bottom_of_first = geometry.node_cells[1][3]
        top_of_second = geometry.node_cells[2][1]
        assert top_of_second - bottom_of_first >= 2
        between = [_row_text(geometry, r).strip() for r in range(bottom_of_first, top_of_second)]
        # A vertical line on every row (no gap), then the arrowhead on the row above the target.
        assert all(text == "│" for text in between[:-1]), (zoom, between)
        assert between[-1] == ARROWS["down"], (zoom, between)


def test_a_slanted_edge_has_no_gaps_and_reads_as_a_line() -> None:
    layout, graph = _two_nodes()
    layout.boxes[2] = NodeBox(300, 400, 72, 48)
    layout.edges[(1, 2, 10)] = [(120, 54), (200, 200), (300, 376)]
    layout.width, layout.height = 400, 450
    geometry = CanvasGeometry.build(layout, 1.0)
    cells = {(col, row) for row in range(geometry.rows) for col in geometry.dots_in_row(row)}
    source, target = geometry.node_cells[1], geometry.node_cells[2]
    outside = {(c, r) for c, r in cells if not _inside(c, r, source) and not _inside(c, r, target)}
    # Every edge cell outside the boxes touches another edge cell: one connected line.
    assert outside and all(
        any((c + dc, r + dr) in cells for dc in (-1, 0, 1) for dr in (-1, 0, 1) if (dc, dr) != (0, 0))
        for c, r in outside
    )
    rows = sorted({r for _, r in outside})
    assert rows == list(range(rows[0], rows[-1] + 1)), "a row without a dot of the line"
    glyphs = {_row_text(geometry, r, graph)[c] for c, r in outside}
    assert glyphs & {"│", "╲", "─"}, glyphs  # straight stretches drawn as lines, not dots
    arrow_rows = [r for r in range(geometry.rows) for col, glyph, _ in geometry.arrows_in_row(r)]
    assert arrow_rows == [target[1] - 1]


def _inside(col: int, row: int, cells: tuple[int, int, int, int]) -> bool:
    return cells[0] <= col < cells[2] and cells[1] <= row < cells[3]


def test_hit_test_finds_the_node_under_a_cell_and_nothing_between() -> None:
    layout, graph = _two_nodes()
    geometry = CanvasGeometry.build(layout, 1.0)
    c0, r0, c1, r1 = geometry.node_cells[2]
    assert geometry.node_at((c0 + c1) // 2, (r0 + r1) // 2) == 2
    assert geometry.node_at(c1 + 5, r0) is None


def test_zoomed_out_boxes_shrink_to_one_row_then_one_cell() -> None:
    layout, graph = _two_nodes()
    compact = CanvasGeometry.build(layout, 0.5)
    c0, r0, c1, r1 = compact.node_cells[1]
    assert r1 - r0 == 1 and "matmul" in _row_text(compact, r0)
    dots = CanvasGeometry.build(layout, 0.25)
    c0, r0, c1, r1 = dots.node_cells[1]
    assert (c1 - c0, r1 - r0) == (1, 1)


class _CanvasApp(App[None]):
    def compose(self) -> ComposeResult:
        yield GraphCanvas(id="canvas")


def test_widget_paints_marks_and_selects_by_click() -> None:
    asyncio.run(_paints_marks_and_selects_by_click())


async def _paints_marks_and_selects_by_click() -> None:
    layout, graph = _two_nodes()
    marks = Marks()
    marks.mark_node(1, Mark.ADDED)
    app = _CanvasApp()
    async with app.run_test(size=(80, 30)) as pilot:
        canvas = app.query_one(GraphCanvas)
        canvas.show(layout, graph, marks)
        await pilot.pause()
        c0, r0, c1, r1 = canvas.geometry.node_cells[1]
        line = canvas.render_line(r0 + 1 - canvas.camera_offset[1])
        styles = {segment.style for segment in line if "matmul" in segment.text}
        assert styles and all(style.bgcolor is not None for style in styles)
        x, y = canvas.camera_offset
        await pilot.click(GraphCanvas, offset=((c0 + c1) // 2 - x, (r0 + r1) // 2 - y))
        await pilot.pause()
        assert canvas.selected == 1
        painted = "".join(seg.text for y in range(canvas.size.height) for seg in canvas.render_line(y))
        assert "▼" in painted
        # A step without node 2 (same union layout): neither it nor its edge is painted.
        del graph.nodes[2]
        canvas.show(layout, DrawGraph(nodes=graph.nodes, edges=[]), marks)
        await pilot.pause()
        painted = "".join(seg.text for y in range(canvas.size.height) for seg in canvas.render_line(y))
        assert "relu" not in painted and "matmul" in painted
        assert "▼" not in painted and not any(0x2800 <= ord(ch) <= 0x28FF for ch in painted)


def test_arrows_and_dragging_pan_the_view() -> None:
    asyncio.run(_arrows_and_dragging_pan())


async def _arrows_and_dragging_pan() -> None:
    from types import SimpleNamespace

    graph = DrawGraph()
    boxes = {}
    for i in range(40):  # a wide, tall picture
        graph.add_node(DrawNode(i, f"aten::op{i}"))
        boxes[i] = NodeBox(60 + 200 * (i % 8), 40 + 120 * (i // 8), 90, 36)
    layout = Layout(boxes=boxes, width=1700, height=700)
    app = _CanvasApp()
    async with app.run_test(size=(60, 20)) as pilot:
        canvas = app.query_one(GraphCanvas)
        canvas.show(layout, graph, Marks())
        canvas.focus()
        await pilot.pause()
        canvas.scroll_to(0, 0, animate=False)
        await pilot.pause()
        await pilot.press("right", "down")
        await pilot.pause()
        assert canvas.scroll_x > 0 and canvas.scroll_y > 0
        before = (canvas.scroll_x, canvas.scroll_y)
        canvas.on_mouse_down(SimpleNamespace(screen_x=30, screen_y=10))
        canvas.on_mouse_move(SimpleNamespace(screen_x=20, screen_y=8, button=1))
        await pilot.pause()
        assert (canvas.scroll_x, canvas.scroll_y) == (before[0] + 10, before[1] + 2)
        canvas.on_mouse_up(SimpleNamespace())
        canvas.on_mouse_move(SimpleNamespace(screen_x=0, screen_y=0, button=0))
        assert (canvas.scroll_x, canvas.scroll_y) == (before[0] + 10, before[1] + 2)


def test_autograd_zero_states_draw_dotted_and_dashed_edges() -> None:
    asyncio.run(_zero_states_draw_line_styles())


async def _zero_states_draw_line_styles() -> None:
    layout, graph = _two_nodes()
    app = _CanvasApp()
    async with app.run_test(size=(80, 30)) as pilot:
        canvas = app.query_one(GraphCanvas)
        counts = {}
        for state in (None, Mark.NONZERO, Mark.UNKNOWN, Mark.ZERO):
            marks = Marks()
            if state is not None:
                marks.mark_value(10, state)
            canvas.show(layout, graph, marks)
            await pilot.pause()
            painted = "".join(seg.text for y in range(canvas.size.height) for seg in canvas.render_line(y))
            counts[state] = {glyph: painted.count(glyph) for glyph in "│╎┆▼"}
        # Solid, dashed and dotted vertical lines, always with the arrowhead.
        assert counts[None] == counts[Mark.NONZERO]
        line = counts[None]["│"] - counts[Mark.UNKNOWN]["│"]  # the rest are box borders
        assert line > 0
        for state, glyph in ((Mark.UNKNOWN, "╎"), (Mark.ZERO, "┆")):
            assert counts[state][glyph] == line and counts[state]["▼"] == 1, (state, counts[state])
            assert counts[state]["│"] == counts[None]["│"] - line, (state, counts[state])


class _LightCanvasApp(App[None]):
    def compose(self) -> ComposeResult:
        yield GraphCanvas(id="canvas", theme="light")


def test_the_light_theme_paints_the_canvas_light() -> None:
    asyncio.run(_light_canvas())


async def _light_canvas() -> None:
    app = _LightCanvasApp()
    async with app.run_test(size=(40, 12)) as pilot:
        canvas = app.query_one(GraphCanvas)
        await pilot.pause()
        light = canvas.styles.background
        assert light.brightness > 0.9
        for layout, graph in ((None, DrawGraph()), _two_nodes()):  # a message, then a graph
            canvas.show(layout, graph, Marks(), "laying out…")
            await pilot.pause()
            lines = [canvas.render_line(y) for y in range(canvas.size.height)]
            blanks = [seg.style for line in lines for seg in line if not seg.text.strip()]
            assert blanks and all(s is not None and s.bgcolor.triplet.red > 230 for s in blanks)
        canvas.set_theme("dark")
        assert canvas.styles.background.brightness < 0.2
        canvas.set_theme("light")
        assert canvas.styles.background == light
