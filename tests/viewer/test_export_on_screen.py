"""``e`` exports what is on screen: folded groups stay folded in the SVG."""

from __future__ import annotations

import asyncio
from pathlib import Path
from xml.etree import ElementTree

from gradview.viewer.app import GradviewApp
from gradview.viewer.session import Session


def test_e_exports_the_folded_picture_on_screen(mlp_session: Session, tmp_path: Path) -> None:
    app = GradviewApp(mlp_session, export_dir=str(tmp_path))

    async def run() -> tuple[set[int], set[int]]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_layouts()
            app.jump_to_pass(21)  # CreateAutodiffSubgraphs: the DifferentiableGraph is framed
            await pilot.pause()
            plain = set(app.main.canvas.graph.nodes)
            await pilot.press("X")  # fold every group
            await app.wait_for_layouts()
            await pilot.pause()
            await pilot.press("e")
            await app.workers.wait_for_complete()
            await pilot.pause()
            return plain, set(app.main.canvas.graph.nodes) - app.main.canvas.graph.ghosts

    plain, folded = asyncio.run(run())
    assert len(folded) < len(plain), "X folded the DifferentiableGraph into one box"
    (svg,) = tmp_path.glob("021-*.svg")
    groups = ElementTree.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}g")
    drawn = {int(g.get("id")[5:]) for g in groups if (g.get("id") or "").startswith("node_")}
    assert drawn == folded


def test_y_exports_the_picture_on_screen_as_a_1600_by_900_slide(mlp_session: Session, tmp_path: Path) -> None:
    import struct

    app = GradviewApp(mlp_session, export_dir=str(tmp_path))

    async def run() -> list[str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("y")
            await app.workers.wait_for_complete()
            await pilot.pause()
            return [str(n.message) for n in app._notifications]

    notes = asyncio.run(run())
    (png,) = tmp_path.glob("000-Input-main-slide.png")
    assert struct.unpack(">II", png.read_bytes()[16:24]) == (1600, 900)
    assert any(str(png) in note and "px at 1600x900" in note for note in notes), notes
