"""Which tab is in front (issue 21, point 7): p / P cycle the tabs; d, r, G, b and S
bring their tab forward, also after S (whose table held the focus and pulled its
tab back); d, G and S open a collapsed tabs panel, r says where the Run tab is;
selecting a node brings Inspect forward unless the user chose the tab in front."""

from __future__ import annotations

from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.detail_panel import TABS
from gradview.viewer.session import Session

from .driving import drive
from .screen_text import region_lines

SIZE = (120, 40)


async def _press(app: GradviewApp, pilot: Pilot, key: str) -> None:
    await pilot.press(key)
    await app.workers.wait_for_complete()
    await app.wait_for_layouts()
    await pilot.pause()


def _shown_tab(app: GradviewApp) -> str | None:
    """The tab whose pane is on screen (None: the tabs panel is collapsed)."""
    if not app.main.panel_widths()[1]:
        return None
    shown = [tab for tab in TABS if app.main.details.query_one(f"#{tab}").region.width > 0]
    assert len(shown) == 1, shown
    return shown[0]


def test_p_and_shift_p_cycle_the_tabs_in_order(mlp_session: Session) -> None:
    seen: list[str | None] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        seen.append(_shown_tab(app))
        for key in "ppppp":
            await _press(app, pilot, key)
            seen.append(_shown_tab(app))
        for key in "PP":
            await _press(app, pilot, key)
            seen.append(_shown_tab(app))

    drive(mlp_session, script, SIZE)
    assert seen == [*TABS, TABS[0], TABS[-1], TABS[-2]]


def test_each_action_brings_its_tab_forward_also_after_s(mlp_session: Session) -> None:
    seen: list[tuple[str, str | None, str]] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        for key in ("S", "r", "S", "d", "S", "G", "d", "S", "b"):
            await _press(app, pilot, key)
            tab = _shown_tab(app)
            words = " ".join(region_lines(app, app.main.details))
            seen.append((key, tab, words))

    drive(mlp_session, script, SIZE)
    expected = {"S": "tab-saved", "r": "tab-run", "d": "tab-ir", "G": "tab-check", "b": "tab-check"}
    assert [(key, tab) for key, tab, _ in seen] == [(key, expected[key]) for key, _, _ in seen]
    run = next(words for key, _, words in seen if key == "r")
    assert "ran on the example" in " ".join(run.split())  # what a person reads: the Run tab's own line


def test_a_collapsed_panel_opens_for_d_and_g_and_stays_for_r_with_a_notice(mlp_session: Session) -> None:
    seen: list[tuple[str, str | None]] = []
    notices: list[str] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        for key in ("d", "G", "S"):
            await _press(app, pilot, "i")  # collapse the tabs
            assert _shown_tab(app) is None
            await _press(app, pilot, key)
            seen.append((key, _shown_tab(app)))
        await _press(app, pilot, "i")
        await _press(app, pilot, "r")
        seen.append(("r", _shown_tab(app)))
        notices.extend(str(n.message) for n in app._notifications)  # what the toasts say
        await _press(app, pilot, "p")  # p opens the collapsed panel on the tab in front
        seen.append(("p", _shown_tab(app)))

    drive(mlp_session, script, SIZE)
    assert seen == [("d", "tab-ir"), ("G", "tab-check"), ("S", "tab-saved"), ("r", None), ("p", "tab-run")]
    assert any("Run tab" in notice for notice in notices), notices


def test_selecting_a_node_shows_inspect_unless_the_user_chose_the_tab_in_front(mlp_session: Session) -> None:
    seen: list[str | None] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        nodes = [node.id for node in app.trace[app.index].nodes()]
        await _press(app, pilot, "r")  # brought forward by r: a selection moves on to Inspect
        app.main.canvas.select(nodes[0])
        await pilot.pause()
        seen.append(_shown_tab(app))
        await _press(app, pilot, "p")
        await _press(app, pilot, "p")  # the user goes to the Run tab: it is being read
        seen.append(_shown_tab(app))
        app.main.canvas.select(nodes[1])
        await pilot.pause()
        seen.append(_shown_tab(app))
        assert app.selected == nodes[1]

    drive(mlp_session, script, SIZE)
    assert seen == ["tab-inspect", "tab-run", "tab-run"]
