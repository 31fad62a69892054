"""The canvas's search: ``/`` with the canvas focused (or the palette's
``find node: <query>``) highlights the matches and flies to them in reading order."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from benchmarks.graphs import chain_text
from gradview.ir import parse_ir
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.app import GradviewApp
from gradview.viewer.commands import GradviewCommands
from gradview.viewer.graph_analysis import search
from gradview.viewer.search_bar import SearchBar, match_status
from gradview.viewer.session import Session

from .driving import Script, drive

SIZE = (120, 40)


@pytest.fixture(scope="module")
def chain_session() -> Session:
    """One step of a 60-op chain (tanh, sin, mm, ...): larger than the canvas at zoom 1."""
    trace = PassTrace()
    trace.record("Input", parse_ir(chain_text(60)), changed=False)
    return Session("chain60", trace)


def _drive(session: Session, script: Script) -> None:
    drive(session, script, SIZE)


def _status(app: GradviewApp) -> str:
    return str(app.query_one("#search-status", Static).render())


def _in_view(app: GradviewApp, node_id: int) -> bool:
    """Whether ``node_id``'s box lies inside the canvas's visible cells."""
    canvas = app.main.canvas
    assert canvas.geometry is not None
    c0, r0, c1, r1 = canvas.geometry.node_cells[node_id]
    x, y = canvas.camera_offset
    return x <= c0 and c1 <= x + canvas.size.width and y <= r0 and r1 <= y + canvas.size.height


def _expected(app: GradviewApp, query: str) -> list[int]:
    canvas = app.main.canvas
    return search(canvas.graph, query, canvas.layout_data)


async def _search(app: GradviewApp, pilot: Pilot, query: str) -> None:
    app.main.canvas.focus()
    await pilot.pause()
    await pilot.press("slash", *query)
    await pilot.pause()


def test_the_bar_says_where_the_search_stands() -> None:
    assert match_status("tanh", 2, 17) == "3 of 17"
    assert match_status("xyz", None, 0) == 'no match for "xyz"'
    assert match_status("  ", None, 0) == ""


def test_slash_in_the_canvas_flies_to_the_first_tanh_and_highlights_every_match(
    chain_session: Session,
) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas = app.main.canvas
        assert not app.query_one(SearchBar).display
        await _search(app, pilot, "tanh")
        bar = app.query_one(SearchBar)
        assert bar.display and isinstance(app.focused, Input) and app.focused.value == "tanh"
        matches = _expected(app, "tanh")
        assert len(matches) >= 3
        assert all("tanh" in canvas.graph.nodes[i].label for i in matches)
        assert app.selected == matches[0] == canvas.selected
        assert _in_view(app, matches[0]), "the camera flew to the first match"
        assert canvas.highlight == frozenset(matches)
        assert _status(app) == f"1 of {len(matches)}"
        # Reading order: top to bottom in the layout.
        ys = [canvas.layout_data.boxes[i].y for i in matches]
        assert ys == sorted(ys)

    _drive(chain_session, script)


def test_enter_and_down_go_to_the_next_match_up_to_the_previous_wrapping_around(
    chain_session: Session,
) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await _search(app, pilot, "tanh")
        matches = _expected(app, "tanh")
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected == matches[1] and _status(app) == f"2 of {len(matches)}"
        assert _in_view(app, matches[1])
        await pilot.press("down")
        await pilot.pause()
        assert app.selected == matches[2] and _in_view(app, matches[2])
        await pilot.press("up", "up")
        await pilot.pause()
        assert app.selected == matches[0]
        await pilot.press("up")
        await pilot.pause()
        assert app.selected == matches[-1], "up from the first match wraps to the last"
        assert _status(app) == f"{len(matches)} of {len(matches)}"
        assert _in_view(app, matches[-1])
        await pilot.press("shift+enter")
        await pilot.pause()
        assert app.selected == matches[-2]

    _drive(chain_session, script)


def test_escape_closes_the_bar_and_clears_the_highlight(chain_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        canvas = app.main.canvas
        await _search(app, pilot, "sin")
        assert canvas.highlight
        await pilot.press("escape")
        await pilot.pause()
        assert not app.query_one(SearchBar).display
        assert canvas.highlight == frozenset()
        assert app.focused is canvas
        assert app.selected == _expected(app, "sin")[0], (
            "the selection stays where the search left it"
        )

    _drive(chain_session, script)


def test_a_query_without_match_says_so(chain_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await _search(app, pilot, "zMz")  # M (the minimap key) types into the bar
        assert _status(app) == 'no match for "zMz"'
        assert app.main.canvas.highlight == frozenset()
        await pilot.press("enter")  # nothing to go to: no error, nothing selected
        await pilot.pause()
        assert app.selected is None

    _drive(chain_session, script)


def test_slash_outside_the_canvas_still_filters_the_timeline(chain_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.main.timeline.focus()
        await pilot.pause()
        await pilot.press("slash")
        await pilot.pause()
        assert not app.query_one(SearchBar).display
        assert isinstance(app.focused, Input) and app.focused.id != "search-input"

    _drive(chain_session, script)


def test_the_palette_finds_a_node_like_the_search_bar(chain_session: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        provider = GradviewCommands(app.screen)
        hits = [hit async for hit in provider.search("find node: tanh")]
        assert hits and str(hits[0].text) == "find node: tanh"
        assert str(hits[0].help).startswith(f"{len(_expected(app, 'tanh'))} matches")
        misses = [hit async for hit in provider.search("find node: zzz")]
        assert misses and misses[0].help == "no match on screen"
        # Through the palette itself: ctrl+p, the query, enter.
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"find node: tanh")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        matches = _expected(app, "tanh")
        assert app.query_one(SearchBar).display
        assert app.selected == matches[0] and _in_view(app, matches[0])
        assert app.main.canvas.highlight == frozenset(matches)
        await pilot.press("enter")  # the bar has focus: next match
        await pilot.pause()
        assert app.selected == matches[1]

    _drive(chain_session, script)
