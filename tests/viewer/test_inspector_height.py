"""The Inspect tab shows the chain-rule line without extra keys: at 120x40,
df's box making grad_x in the joint view of sin(x) * x shows its whole
``formula`` row (the panel as it opens, no ``)`` to widen it); at 80x24,
with the tabs panel opened (``i``), the formula still reads and the pass's
docs keep rows of their own."""

from __future__ import annotations

from functools import cache

import pytest
from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.inspector import inspect_node
from gradview.viewer.model import Mark, NodeRole, View
from gradview.viewer.session import Session, load_target

from .conftest import ROOT
from .driving import drive
from .screen_text import region_lines


@cache
def _session() -> Session:
    return load_target(f"{ROOT / 'examples' / 'teaching' / 'sin_times_x.py'}:f")


def _shown_value(lines: list[str], key: str) -> str:
    """The value of ``key``'s row as the screen shows it, its wrapped pieces
    joined ('' when not on screen): beside the key, or under it in a narrow panel."""
    lines = [line.rstrip() for line in lines]
    rows = [i for i, line in enumerate(lines) if line.strip() == key or line.lstrip().startswith(key + " ")]
    if not rows:
        return ""
    first = rows[0]
    if lines[first].strip() == key:  # stacked: the value's lines indented under the key
        first += 1
        if first == len(lines):
            return ""
        start = len(lines[first]) - len(lines[first].lstrip())
    else:
        start = len(lines[first]) - len(lines[first].lstrip().removeprefix(key).lstrip())
    pieces = [lines[first][start:].strip()]
    for line in lines[first + 1:]:
        if line[:start].strip() or not line.strip():
            break
        pieces.append(line[start:].strip())
    return " ".join(pieces)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_the_inspector_shows_a_vjp_outputs_whole_formula_without_widening(size: tuple[int, int]) -> None:
    session = _session()
    last = len(session.trace) - 1
    seen: dict[str, object] = {}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(last)
        await pilot.press("4")  # the joint view
        await app.wait_for_layouts()
        await pilot.pause()
        canvas = app.main.canvas
        (grad_x,) = [
            n for n, node in canvas.graph.nodes.items()
            if Mark.VJP_OUTPUT in canvas.marks.nodes.get(n, ()) and node.role is NodeRole.OP
        ]
        if size[0] < 108:
            await pilot.press("i")  # a narrow terminal opens with the tabs collapsed
        canvas.select(grad_x, clicked=True)
        await pilot.pause()
        formula = dict(inspect_node(app.trace, last, grad_x, View.JOINT, 0))["formula"]
        inspector = app.main.details.query_one("#inspector")
        shown = _shown_value(region_lines(app, inspector), "formula")
        seen.update(formula=formula, shown=shown, docs=app.main.details.query_one("#passdoc").region.height)

    drive(_session(), script, size)
    assert "grad_x = " in str(seen["formula"])
    assert str(seen["shown"]).replace(" ", "") == str(seen["formula"]).replace(" ", ""), seen  # every character
    assert int(str(seen["docs"])) >= 3, "the pass's docs keep rows under the inspector"
