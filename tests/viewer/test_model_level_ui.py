"""The model level in the app (Pilot): ResNet-18 opens on its top-level modules,
enter / x / a click expand a module in place, backspace folds it again, l switches
the level of detail and the header says which is on (issue 21, acceptance 2)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from gradview.viewer.app import GradviewApp
from gradview.viewer.canvas import GraphCanvas
from gradview.viewer.detail import Detail
from gradview.viewer.module_tree import is_module_key, key_path
from gradview.viewer.session import Session, load_target
from gradview.viewer.transforms import Picture

from .driving import Script, drive

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc"]
HANG_GUARD = 300  # seconds


@pytest.fixture(scope="module")
def resnet() -> Session:
    return load_target(f"{ROOT / 'examples' / 'resnet18.py'}:build")


def _drive(session: Session, script: Script, size: tuple[int, int] = (120, 40), **options: object) -> None:
    async def settled(app: GradviewApp, pilot: Pilot) -> None:
        await _settle(app, pilot)  # a first picture that does not fit goes up a level: its layout too
        await script(app, pilot)

    drive(session, settled, size, **options)


async def _settle(app: GradviewApp, pilot: Pilot) -> None:
    await asyncio.wait_for(app.wait_for_layouts(), HANG_GUARD)
    await pilot.pause()
    await asyncio.wait_for(app.wait_for_layouts(), HANG_GUARD)
    await pilot.pause()


def _picture(app: GradviewApp) -> Picture:
    picture = app.large.picture
    assert picture is not None
    return picture


def _boxes(app: GradviewApp) -> dict[str, int]:
    """Module path -> id of its folded box in the picture on screen."""
    folded = _picture(app).collapsed
    if folded is None:
        return {}
    return {key_path(key): box for box, key in folded.groups.items() if is_module_key(key)}


def _on_screen(app: GradviewApp) -> str:
    canvas = app.query_one(GraphCanvas)
    return "\n".join("".join(s.text for s in canvas.render_line(y)) for y in range(canvas.size.height))


def _select(app: GradviewApp, node_id: int) -> None:
    app.query_one(GraphCanvas).select(node_id, follow=False)


def test_the_first_view_names_every_top_level_module_and_the_header_the_level(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        assert app.transforms.detail is Detail.MODEL
        assert "· detail: model ·" in app.sub_title
        assert set(_boxes(app)) == set(TOP_LEVEL)
        canvas = app.query_one(GraphCanvas)
        assert canvas.layout_data is not None and canvas.layout_data.engine == "dot"
        screen = _on_screen(app)
        for name in TOP_LEVEL:
            assert f"[{name}]" in screen or f" {name} " in screen, f"{name} on screen:\n{screen}"

    _drive(resnet, script)


def test_enter_expands_a_module_one_level_and_backspace_folds_it_again(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        _select(app, _boxes(app)["layer1"])
        await pilot.pause()
        app.query_one(GraphCanvas).focus()
        await pilot.press("enter")
        await _settle(app, pilot)
        boxes = _boxes(app)
        assert "layer1" not in boxes and {"layer1.0", "layer1.1"} <= set(boxes)
        assert "mod:layer1" in _picture(app).graph.clusters, "layer1 is a frame around its blocks"
        _select(app, boxes["layer1.0"])
        await pilot.press("x")  # x on a folded box expands it too
        await _settle(app, pilot)
        assert {"layer1.0.conv1", "layer1.0.bn1", "layer1.1"} <= set(_boxes(app))
        _select(app, _boxes(app)["layer1.0.conv1"])
        await pilot.press("backspace")  # folds layer1.0, the frame around conv1
        await _settle(app, pilot)
        assert {"layer1.0", "layer1.1"} <= set(_boxes(app)) and "layer1.0.conv1" not in _boxes(app)
        await pilot.press("backspace")  # and layer1, around the layer1.0 box
        await _settle(app, pilot)
        assert set(_boxes(app)) == set(TOP_LEVEL)

    _drive(resnet, script)


def test_a_click_on_a_module_expands_it(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        box = _boxes(app)["layer2"]
        canvas = app.query_one(GraphCanvas)
        canvas.select(box, follow=True, clicked=True)
        await _settle(app, pilot)
        assert {"layer2.0", "layer2.1"} <= set(_boxes(app))

    _drive(resnet, script)


def test_l_switches_the_level_and_the_header_follows(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("l")
        await _settle(app, pilot)
        assert app.transforms.detail is Detail.OPS and "· detail: ops ·" in app.sub_title
        picture = _picture(app)
        assert picture.collapsed is None and picture.plumbing is not None
        labels = [node.label.splitlines()[0] for node in picture.graph.nodes.values()]
        assert sum(1 for label in labels if label.startswith("conv2d")) == 20
        await pilot.press("l")
        await _settle(app, pilot)
        assert app.transforms.detail is Detail.IR and "· detail: ir ·" in app.sub_title
        assert any(node.label.startswith("prim::Constant") or node.role.value == "constant"
                   for node in _picture(app).graph.nodes.values())
        await pilot.press("l")
        await _settle(app, pilot)
        assert app.transforms.detail is Detail.MODEL and set(_boxes(app)) == set(TOP_LEVEL)

    _drive(resnet, script)


def test_the_inspector_shows_the_full_ir_of_a_node_at_the_ops_level(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        picture = _picture(app)
        conv = next(i for i, n in picture.graph.nodes.items() if n.label.startswith("conv2d"))
        _select(app, conv)
        await _settle(app, pilot)
        assert "aten::_convolution(" in picture.graph.nodes[conv].tooltip
        console = Console(width=300, record=True, file=io.StringIO())
        console.print(app.query_one("#inspector", Static).content)
        inspected = console.export_text()
        assert "aten::_convolution" in inspected, inspected

    _drive(resnet, script, detail=Detail.OPS)


def test_a_level_asked_for_is_kept_even_when_it_does_not_fit(resnet: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        assert app.transforms.detail is Detail.IR
        assert "· detail: ir ·" in app.sub_title

    _drive(resnet, script, detail=Detail.IR)
