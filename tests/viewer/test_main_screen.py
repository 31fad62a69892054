"""The main screen's panels: how much of the screen the canvas gets at common
terminal sizes, and the keys and the mouse that collapse, resize and maximize."""

from __future__ import annotations

import asyncio
import gc
import re

import pytest
from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.detail_panel import DetailPanel
from gradview.viewer.session import Session
from gradview.viewer.steps_panel import StepsPanel

from .driving import Script, drive

BOX_CORNERS = ("┌", "╭")


def _drive(session: Session, size: tuple[int, int], script: Script) -> None:
    drive(session, script, size)


def _canvas_rows(app: GradviewApp) -> list[str]:
    canvas = app.query_one(GraphCanvas)
    return ["".join(segment.text for segment in canvas.render_line(y)) for y in range(canvas.size.height)]


def _widths(app: GradviewApp) -> tuple[int, int, int]:
    """Columns of the steps panel, the canvas and the tabs as drawn (0: hidden)."""
    steps, details = app.query_one(StepsPanel), app.query_one(DetailPanel)
    return (
        steps.region.width if steps.display else 0,
        app.query_one(GraphCanvas).region.width,
        details.region.width if details.display else 0,
    )


@pytest.mark.parametrize("size", [(120, 40), (200, 50)])
def test_the_canvas_takes_at_least_half_the_columns(mlp_session: Session, size: tuple[int, int]) -> None:
    async def script(app: GradviewApp, _pilot: Pilot) -> None:
        left, canvas, right = _widths(app)
        assert canvas >= size[0] // 2, (left, canvas, right)
        assert left >= 22 and right >= 30, "both side panels are open by default"
        assert any(corner in row for row in _canvas_rows(app) for corner in BOX_CORNERS)

    _drive(mlp_session, size, script)


def test_at_80x24_the_canvas_shows_and_draws_node_boxes(mlp_session: Session) -> None:
    async def script(app: GradviewApp, _pilot: Pilot) -> None:
        left, canvas, right = _widths(app)
        assert right == 0 and left > 0 and canvas >= 40
        rows = _canvas_rows(app)
        # Framed boxes, or (the whole graph zoomed out to fit) boxes of one line: [matmul].
        framed = sum(row.count(corner) for row in rows for corner in BOX_CORNERS)
        one_line = sum(len(re.findall(r"\[[^\[\]]+\]", row)) for row in rows)
        assert framed >= 2 or one_line >= 2, "\n".join(rows)
        assert any("matmul" in row or "%" in row for row in rows), "box labels are drawn"

    _drive(mlp_session, (80, 24), script)


def test_m_maximizes_the_canvas_and_restores_the_panels(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        before = _widths(app)
        await pilot.press("m")
        await pilot.pause()
        left, canvas, right = _widths(app)
        assert (left, right) == (0, 0) and canvas >= 120 - 2
        assert any(corner in row for row in _canvas_rows(app) for corner in BOX_CORNERS)
        await pilot.press("m")
        await pilot.pause()
        assert _widths(app) == before

    _drive(mlp_session, (120, 40), script)


def test_s_and_i_collapse_and_expand_each_side_panel(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        left, canvas, right = _widths(app)
        await pilot.press("s")
        await pilot.pause()
        assert _widths(app)[0] == 0 and _widths(app)[1] == canvas + left
        await pilot.press("i")
        await pilot.pause()
        assert _widths(app) == (0, canvas + left + right, 0)
        assert app.focused is not None and app.focused.display, "focus left the hidden timeline"
        await pilot.press("s", "i")
        await pilot.pause()
        assert _widths(app) == (left, canvas, right)

    _drive(mlp_session, (120, 40), script)


def test_bracket_keys_resize_the_panels(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        left, canvas, right = _widths(app)
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        assert _widths(app) == (left + 4, canvas - 4, right)
        await pilot.press("left_parenthesis", "left_parenthesis")
        await pilot.pause()
        assert _widths(app) == (left + 4, canvas + 4, right - 8)
        await pilot.press("left_curly_bracket")
        await pilot.pause()
        assert _widths(app)[0] == left

    _drive(mlp_session, (120, 40), script)


def test_at_80_columns_i_opens_the_tabs_beside_a_canvas_that_keeps_its_minimum(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("i")
        await pilot.pause()
        left, canvas, right = _widths(app)
        assert right > 0 and canvas >= 20

    _drive(mlp_session, (80, 24), script)


def test_dragging_a_splitter_resizes_and_clicking_it_collapses(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        left, canvas, right = _widths(app)
        splitter = app.query_one("#split-left")
        x = splitter.region.x
        await pilot.mouse_down("#split-left")
        await pilot.hover("#main", offset=(x + 10, 10))
        await pilot.mouse_up("#main", offset=(x + 10, 10))
        await pilot.pause()
        assert _widths(app)[0] == left + 10
        await pilot.click("#split-right")
        await pilot.pause()
        assert _widths(app)[2] == 0
        await pilot.click("#split-right")
        await pilot.pause()
        assert _widths(app)[2] == right

    _drive(mlp_session, (120, 40), script)


def test_the_panels_adapt_when_the_terminal_is_resized(mlp_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        left, canvas, right = _widths(app)
        assert right > 0 and canvas >= 100
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        left, canvas, right = _widths(app)
        assert right == 0 and canvas >= 40
        assert any(corner in row for row in _canvas_rows(app) for corner in BOX_CORNERS)

    _drive(mlp_session, (120, 40), script)


def test_the_app_gives_the_garbage_collector_back_as_it_found_it(mlp_session: Session) -> None:
    before = gc.get_threshold(), gc.get_freeze_count()

    async def script(app: GradviewApp, _pilot: Pilot) -> None:
        assert gc.get_threshold() != before[0], "raised while the app runs"

    _drive(mlp_session, (80, 24), script)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_layouts_arrive_as_messages_that_the_controller_stores(mlp_session: Session) -> None:
    from gradview.viewer.messages import LayoutReady

    seen: list[LayoutReady] = []

    async def run() -> None:
        app = GradviewApp(mlp_session)
        hook = lambda message: seen.append(message) if isinstance(message, LayoutReady) else None  # noqa: E731
        async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
            await app.wait_for_layouts()
            await pilot.pause()
            assert not app.controller.busy()
            assert {m.key for m in seen} == set(app.layouts) | set(app.controller.layout_errors)
            assert len(seen) == len({m.key for m in seen}), "each layout is computed once"

    asyncio.run(run())
    assert seen
