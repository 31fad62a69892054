"""Redraw the README's teaching walkthrough: ``gradview view
examples/teaching/sin_times_x.py:f`` at 120x40, from the first screen to the
inspector's chain-rule line (PNG under screenshots/, drawn by headless
Chromium from Textual's SVG screenshot; without Chromium the SVG stays).

    .venv/bin/python scripts/teaching_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshots import OUT, _find, _png  # noqa: E402 - a script beside this one

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "examples" / "teaching" / "sin_times_x.py"
SIZE = (120, 40)


async def _walk() -> list[Path]:
    from gradview.runtime.pass_trace import GraphName
    from gradview.viewer.app import GradviewApp
    from gradview.viewer.canvas import GraphCanvas
    from gradview.viewer.model import Mark, NodeRole
    from gradview.viewer.session import load_target

    session = load_target(f"{TARGET}:f")
    app = GradviewApp(session)
    shots: list[Path] = []
    async with app.run_test(size=SIZE) as pilot:

        async def settle() -> None:
            await app.wait_for_layouts()
            await pilot.pause()
            await app.wait_for_layouts()
            await pilot.pause()

        async def shoot(name: str, *keys: str) -> None:
            for key in keys:
                await pilot.press(key)
                await settle()
            app.save_screenshot(f"{name}.svg", path=str(OUT))
            shots.append(OUT / f"{name}.svg")

        await settle()
        await shoot("teach-1-open")
        app.jump_to_pass(_find(session.trace, "CreateAutodiffSubgraphs", GraphName.main()))
        await shoot("teach-2-differentiable-graph", "1")
        app.jump_to_pass(len(session.trace) - 1)  # the last step: df as its executor runs it
        await pilot.press("4")
        while app.transforms.detail.value != "ops":
            await pilot.press("l")
        await shoot("teach-3-joint-ops", "s", "0", "M")
        await shoot("teach-4-run", "r")
        canvas = app.query_one(GraphCanvas)
        # df's box making grad_x (f's x carries vjp output #0 too: the value whose gradient it is)
        (grad_x,) = [
            n for n, node in canvas.graph.nodes.items()
            if Mark.VJP_OUTPUT in canvas.marks.nodes.get(n, ()) and node.role is NodeRole.OP
        ]
        canvas.select(grad_x, clicked=True)  # as a click does: the Inspect tab comes forward
        await settle()
        await shoot("teach-5-chain-rule")  # the formula row shows at the panel's default width
    return shots


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for svg in asyncio.run(_walk()):
        png = _png(svg)
        if png is None:
            print(f"screenshots/{svg.name} (no Chromium: no PNG)")
            continue
        svg.unlink()  # the README shows the PNG
        print(f"screenshots/{png.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
