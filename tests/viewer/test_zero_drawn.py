"""An input marked ``:nograd`` in ``--inputs`` reaches specializeAutogradZero,
and the gradients it finds undefined are drawn Zero in the exported SVG.

The MLP with its first layer frozen (``w1`` :nograd, as ``x`` and ``y``):
df's incoming gradients of f's temporaries are never defined at run time, so
specializeAutogradZero marks them Zero. They have no uses, so no line says
it: their box must, with the legend's dotted Zero line as its outline (also
on the vjp input's yellow fill) and a badge naming the state, at that step
and at the later steps of df, in the screen and the slide style.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gradview.cli.main import main
from gradview.runtime.pass_trace import GraphName, PassTrace
from gradview.runtime.trace_types import Note
from gradview.viewer.session import load_target

ROOT = Path(__file__).resolve().parents[2]
TARGET = str(ROOT / "examples" / "teaching" / "mlp_mse.py") + ":f"
FROZEN_FIRST_LAYER = "8x4:nograd,4x16:nograd,16,16x3,3,8x3:nograd"
SVG = "{http://www.w3.org/2000/svg}"


@cache
def _trace() -> PassTrace:
    return load_target(TARGET, FROZEN_FIRST_LAYER).trace


def _zero_inputs() -> dict[int, str]:
    """df's inputs specializeAutogradZero marks Zero: value id -> name."""
    trace = _trace()
    step = next(
        s for s in trace.steps if s.pass_name == "specializeAutogradZero" and s.which == GraphName.backward_executor(0)
    )
    main_graph = next(s for s in trace.steps if s.pass_name == "specializeTypes").graph
    assert "requires_grad=0" in main_graph.params[1].type  # w1's :nograd reached the graph
    states = step.annotations[Note.AUTOGRAD_ZERO]
    return {p.id: p.name for p in step.graph.params if states.get(p.id) == "Zero"}


def _export(folder: Path, *options: str) -> ElementTree.Element:
    assert main(["export", TARGET, "--inputs", FROZEN_FIRST_LAYER, "--svg", str(folder), *options]) == 0
    (svg,) = folder.glob("*.svg")
    return ElementTree.fromstring(svg.read_text(encoding="utf-8"))


def _groups(root: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {g.get("id", ""): g for g in root.iter(f"{SVG}g")}


def _outline(group: ElementTree.Element) -> ElementTree.Element:
    return next(e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path"))


def _text(group: ElementTree.Element) -> str:
    return " ".join(t.text or "" for t in group.iter(f"{SVG}text"))


@pytest.mark.parametrize("style", ["screen", "slide"])
@pytest.mark.parametrize(
    ("view", "step"), [("backward", "specializeAutogradZero"), ("joint", "specializeAutogradZero"), ("backward", "-1")]
)
def test_gradients_specialize_autograd_zero_finds_undefined_are_drawn_zero(
    view: str, step: str, style: str, tmp_path: Path
) -> None:
    zeros = _zero_inputs()
    assert len(zeros) == 2, zeros  # the incoming gradients of f's two temporaries
    if step == "-1":
        step = str(len(_trace().steps) - 1)
    groups = _groups(_export(tmp_path, "--view", view, "--step", step, "--style", style, "--detail", "ops"))
    legend = groups.get("legend_zero")
    assert legend is not None, "the legend does not list Zero"
    assert "Zero" in _text(groups["legend_text_zero"])
    dotted = _outline(legend)
    for value_id, name in zeros.items():
        box = groups.get(f"node_{value_id}")
        assert box is not None, f"%{name} (Zero, no uses) has no box"
        assert {"zero", "vjp_input"} <= set(box.get("class", "").split()), box.get("class")
        outline = _outline(box)
        assert outline.get("stroke-dasharray") == dotted.get("stroke-dasharray"), f"%{name}'s outline is not dotted"
        assert outline.get("stroke") == dotted.get("stroke") != outline.get("fill"), f"%{name}'s outline is not seen"
        assert "Zero" in _text(groups[f"badge_{value_id}"]).replace(",", " ").split()
