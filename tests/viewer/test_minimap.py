"""The minimap: the whole drawing shrunk with the view as a rectangle, shown
while the drawing is larger than the canvas, ``M`` toggles it, a click moves the camera."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from benchmarks.graphs import chain_text
from gradview.ir import parse_ir
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.app import GradviewApp
from gradview.viewer.layout import Layout, NodeBox
from gradview.viewer.minimap import MAP_COLUMNS, MAP_ROWS, Minimap, MinimapPicture
from gradview.viewer.session import Session

from .driving import Script, drive

SIZE = (200, 50)  # the canvas has room for the minimap (108 x 45)
SMALL = "graph(%x : Tensor, %w : Tensor):\n  %y : Tensor = aten::mul(%x, %w)\n  return (%y)\n"


def _session(name: str, text: str) -> Session:
    trace = PassTrace()
    trace.record("Input", parse_ir(text), changed=False)
    return Session(name, trace)


@pytest.fixture(scope="module")
def big_session() -> Session:
    return _session("chain60", chain_text(60))


def _drive(session: Session, script: Script, size: tuple[int, int] = SIZE) -> None:
    drive(session, script, size)


# -- the picture ------------------------------------------------------------------------------
def _layout(points: list[tuple[float, float]], width: float, height: float) -> Layout:
    boxes = {i: NodeBox(x, y, 6.0, 12.0) for i, (x, y) in enumerate(points)}
    return Layout(boxes=boxes, width=width, height=height)


def test_the_picture_keeps_the_drawings_proportions_and_places_each_box() -> None:
    # A tall drawing (1 wide, 4 high): the full height, a centred strip of columns.
    picture = MinimapPicture.build(_layout([(50, 0), (50, 400)], 100, 400))
    assert len(picture.cells) == MAP_ROWS and all(len(row) == MAP_COLUMNS for row in picture.cells)
    lit = [(r, c) for r, row in enumerate(picture.cells) for c, bits in enumerate(row) if bits]
    assert {r for r, _ in lit} == {0, MAP_ROWS - 1}, (
        "the top box in the first row, the bottom one in the last"
    )
    assert {c for _, c in lit} <= {MAP_COLUMNS // 2 - 1, MAP_COLUMNS // 2}, lit
    # A wide drawing: the full width, rows centred.
    wide = MinimapPicture.build(_layout([(0, 25), (800, 25)], 800, 50))
    cols = {c for row in wide.cells for c, bits in enumerate(row) if bits}
    assert min(cols) == 0 and max(cols) == MAP_COLUMNS - 1


def test_cells_and_points_convert_both_ways() -> None:
    picture = MinimapPicture.build(_layout([(0, 0)], 480, 320))
    assert picture.cell_rect(0, 0, 480, 320) == (0, 0, MAP_COLUMNS - 1, MAP_ROWS - 1)
    assert picture.cell_rect(0, 0, 1, 1) == (0, 0, 0, 0), "a view smaller than a cell is one cell"
    x, y = picture.point_at(MAP_COLUMNS / 2, MAP_ROWS / 2)
    assert (round(x), round(y)) == (240, 160)
    assert picture.point_at(-5, 99) == (0.0, 320.0), "clamped to the drawing"


def test_the_picture_is_built_once_per_layout() -> None:
    layout = _layout([(10, 10), (90, 90)], 100, 100)
    minimap = Minimap()
    assert minimap.show_layout(layout)
    first = minimap.picture
    assert not minimap.show_layout(layout) and minimap.picture is first
    other = _layout([(10, 10)], 100, 100)
    assert minimap.show_layout(other) and minimap.picture is not first
    assert minimap.show_layout(layout) and minimap.picture is first, "cached by layout"


# -- in the app -----------------------------------------------------------------------------------
def test_a_big_graph_gets_a_minimap_in_the_canvas_corner(big_session: Session) -> None:
    async def script(app: GradviewApp, _pilot: Pilot) -> None:
        canvas, minimap = app.main.canvas, app.query_one(Minimap)
        assert canvas.geometry is not None and canvas.geometry.rows > canvas.size.height
        assert minimap.display and minimap.picture is not None
        assert any(any(row) for row in minimap.picture.cells)
        area, box = canvas.region, minimap.region
        assert area.contains_region(box), (area, box)
        assert box.right >= area.right - 4 and box.bottom >= area.bottom - 3, "bottom right"
        assert minimap.viewport is not None

    _drive(big_session, script)


def test_on_a_small_canvas_the_minimap_waits_for_m(big_session: Session) -> None:
    # At 120x40 the canvas is 64 columns: a 26-column map would cover the nodes it points to.
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas, minimap = app.main.canvas, app.query_one(Minimap)
        assert canvas.geometry is not None and canvas.geometry.rows > canvas.size.height
        assert canvas.size.width < 3 * (MAP_COLUMNS + 2)
        assert not minimap.display
        await pilot.press("M")
        await pilot.pause()
        assert minimap.display

    _drive(big_session, script, size=(120, 40))


def test_a_graph_that_fits_has_no_minimap_until_m(big_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas, minimap = app.main.canvas, app.query_one(Minimap)
        geometry = canvas.geometry
        assert geometry is not None
        assert geometry.columns <= canvas.size.width and geometry.rows <= canvas.size.height
        assert not minimap.display
        await pilot.press("M")
        await pilot.pause()
        assert minimap.display
        await pilot.press("M")
        await pilot.pause()
        assert not minimap.display

    _drive(_session("small", SMALL), script)


def test_m_hides_and_shows_the_minimap_of_a_big_graph(big_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        minimap = app.query_one(Minimap)
        await pilot.press("M")
        await pilot.pause()
        assert not minimap.display
        app.main.canvas.action_pan(-10_000, -10_000)  # stays hidden while the view moves
        await pilot.pause()
        assert not minimap.display
        await pilot.press("M")
        await pilot.pause()
        assert minimap.display

    _drive(big_session, script)


def test_the_viewport_rectangle_follows_scrolling(big_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas, minimap = app.main.canvas, app.query_one(Minimap)
        canvas.action_pan(-10_000, -10_000)
        await pilot.pause()
        top = minimap.viewport
        assert top is not None and top[1] == 0, top
        canvas.action_pan(10_000, 10_000)
        await pilot.pause()
        bottom = minimap.viewport
        assert bottom is not None and bottom[1] > top[1] and bottom[3] > top[3], (top, bottom)
        assert bottom[0] >= top[0]

    _drive(big_session, script)


def test_clicking_the_minimap_moves_the_camera_there(big_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas, minimap = app.main.canvas, app.query_one(Minimap)
        geometry = canvas.geometry
        assert geometry is not None and minimap.picture is not None
        # The last picture row, in the middle column (the border is one cell).
        await pilot.click(Minimap, offset=(1 + MAP_COLUMNS // 2, MAP_ROWS))
        await pilot.pause()
        x, y = canvas.camera_offset
        assert y + canvas.size.height >= geometry.rows - 1, "the bottom of the drawing is in view"
        assert y > 0
        await pilot.click(Minimap, offset=(1 + MAP_COLUMNS // 2, 1))
        await pilot.pause()
        assert canvas.camera_offset[1] <= 0, "and back to the top"
        assert minimap.viewport is not None and minimap.viewport[1] == 0

    _drive(big_session, script)


def test_search_matches_are_lit_on_the_minimap(big_session: Session) -> None:
    from gradview.viewer.palette import HIGHLIGHT as hue

    def lit(minimap: Minimap) -> int:
        return sum(
            len(segment.text)
            for y in range(MAP_ROWS)
            for segment in minimap.render_line(y)
            if segment.style is not None
            and segment.style.color is not None
            and segment.style.color.name == hue
        )

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        minimap = app.query_one(Minimap)
        assert lit(minimap) == 0
        app.main.canvas.focus()
        await pilot.press("slash", *"tanh")
        await pilot.pause()
        assert lit(minimap) > 0
        await pilot.press("escape")
        await pilot.pause()
        assert lit(minimap) == 0

    _drive(big_session, script)
