"""The exported legend is true to the picture: read back from Graphviz's SVG,
each legend swatch is what the boxes and lines of its role are drawn in, no
two entries share a swatch, and every entry is drawn somewhere; undefined
tensors are drawn Zero and constants never carry an AutogradZero state."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_records import ValueRecord, walk_records
from gradview.viewer.export import trace_frames, view_layouts
from gradview.viewer.model import Mark, NodeRole, View
from gradview.viewer.palette import PALETTES, STATE_BADGES, style_for
from gradview.viewer.session import load_target
from gradview.viewer.slides import slide_dot
from gradview.viewer.svg_dot import run_neato, step_dot

SIN_TIMES_X = "import torch\n\n\ndef f(x):\n    return torch.sin(x) * x\n"
SVG = "{http://www.w3.org/2000/svg}"
ROLES = (Mark.CAPTURED_INPUT, Mark.CAPTURED_OUTPUT, Mark.TEMPORARY, Mark.VJP_INPUT, Mark.VJP_OUTPUT)
# Steps worth a picture: the Gradient's wiring, AutogradZero, the last.
PASSES = ("differentiate", "LowerGradOf", "specializeAutogradZero", "lambdaLiftReverse")


@cache
def _sin_times_x(folder: str) -> PassTrace:
    path = Path(folder) / "sin_times_x.py"
    path.write_text(SIN_TIMES_X, encoding="utf-8")
    return load_target(f"{path}:f", "3x4", inline_threshold=0).trace


def _pictures(trace: PassTrace, view: View, theme: str) -> list[tuple[str, str]]:
    """(where, SVG) of the steps of PASSES and the last step in ``view``
    (``theme`` "slide": as slides, light)."""
    frames = trace_frames(trace, view, 0)
    chosen = [f for f in frames if f.pass_name in PASSES] + frames[-1:]
    if theme == "slide":
        return [(f"{view.value} step {f.index} {f.pass_name} (slide)", run_neato(slide_dot(f)[0])) for f in chosen]
    layouts = view_layouts(trace, chosen, view, 0)
    return [
        (f"{view.value} step {f.index} {f.pass_name}", run_neato(step_dot(f.graph, f.marks, layouts[f.which], theme)))
        for f in chosen
    ]


def _outline(group: ElementTree.Element) -> ElementTree.Element:
    return next(e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path"))


def _read(svg: str) -> tuple[dict[Mark, tuple], list[tuple], list[tuple], str]:
    """The legend (mark -> (fill, stroke, dashes)), the boxes and the lines
    ((fill, stroke, dashes, marks) each) and the badges' text of one exported picture."""
    legend: dict[Mark, tuple] = {}
    boxes, lines, badges = [], [], []
    for group in ElementTree.fromstring(svg).iter(f"{SVG}g"):
        name, classes = group.get("id", ""), set((group.get("class") or "").split())
        marks = {mark for mark in Mark if mark.value in classes}
        if name.startswith("badge_"):
            badges += [text.text or "" for text in group.iter(f"{SVG}text")]
        elif "legend" in classes:
            shape = _outline(group)
            legend[next(iter(marks))] = (shape.get("fill"), shape.get("stroke"), shape.get("stroke-dasharray"))
        elif name.startswith(("node_", "edge_")) and "faded" not in classes:
            shape = _outline(group)
            drawn = (shape.get("fill"), shape.get("stroke"), shape.get("stroke-dasharray"), marks)
            (boxes if name.startswith("node_") else lines).append(drawn)
    return legend, boxes, lines, " ".join(badges)


@pytest.mark.parametrize("theme", [*sorted(PALETTES), "slide"])
@pytest.mark.parametrize("view", [View.FORWARD, View.BACKWARD, View.JOINT])
def test_the_legend_shows_what_each_role_is_drawn_in(view: View, theme: str, tmp_path_factory) -> None:
    trace = _sin_times_x(str(tmp_path_factory.getbasetemp()))
    plain = style_for(None, "light" if theme == "slide" else theme)
    seen: set[Mark] = set()
    for where, svg in _pictures(trace, view, theme):
        legend, boxes, lines, badges = _read(svg)
        swatches = list(legend.values())
        assert len(set(swatches)) == len(swatches), f"{where}: two legend entries share a swatch: {legend}"
        assert (plain.fill, plain.stroke, None) not in swatches, f"{where}: a legend entry looks like an unmarked box"
        used: set[Mark] = set()
        for fill, stroke, dashes, marks in boxes:
            if (fill, stroke) == (plain.fill, plain.stroke):
                continue
            # A box drawn in an AutogradZero state: its outline in the state's line, filled by its role if any.
            outlined = dashes is not None or fill == plain.fill  # a solid outline on a role is the role's own
            states = [m for m in STATE_BADGES if m in legend and legend[m][1:] == (stroke, dashes) and outlined]
            if states:
                assert len(states) == 1 and states[0] in marks, f"{where}: a box outlined {dashes} {marks} vs {legend}"
                used.add(states[0])
                if fill == plain.fill:
                    continue
            drawn = (fill,) if states else (fill, stroke)  # a state's outline leaves the role its fill
            roles = [m for m, (f, s, _) in legend.items() if m not in STATE_BADGES and (f, s)[: len(drawn)] == drawn]
            assert len(roles) == 1 and roles[0] in marks, f"{where}: a box in {fill}/{stroke} {marks} vs {legend}"
            used.add(roles[0])
        for _, stroke, dashes, marks in lines:
            if stroke != plain.stroke:
                colours = [m for m in marks if m in legend and legend[m][1] == stroke]
                assert colours, f"{where}: a line in {stroke} {marks} has no legend entry of that colour: {legend}"
                used.update(colours)
            if dashes is not None:
                states = [m for m in marks & STATE_BADGES.keys() if m in legend and legend[m][2] == dashes]
                assert len(states) == 1, f"{where}: a line dashed {dashes} {marks} vs {legend}"
                used.update(states)
        used.update(m for m in legend if m in STATE_BADGES and STATE_BADGES[m] in badges.replace(",", " ").split())
        assert used >= set(legend) - {Mark.REMOVED}, f"{where}: legend entries drawn nowhere: {set(legend) - used}"
        seen.update(legend)
    if view is not View.FORWARD:
        assert seen & set(STATE_BADGES), "no AutogradZero state was drawn"
    assert seen & set(ROLES), "no Gradient role was drawn"


@pytest.mark.parametrize("theme", sorted(PALETTES))
def test_the_five_gradient_roles_and_the_changes_have_colours_of_their_own(theme: str) -> None:
    fills = [style_for({m}, theme).fill for m in (*ROLES, Mark.ADDED, Mark.INPUTS_CHANGED, Mark.SELECTED)]
    assert len(set(fills)) == len(fills)
    plain = style_for(None, theme)
    assert plain.fill not in fills


def test_undefined_tensors_are_drawn_zero_and_constants_carry_no_state(tmp_path_factory) -> None:
    from gradview.viewer.marks import step_marks
    from gradview.viewer.views import draw_step, view_unavailable_reason

    trace = _sin_times_x(str(tmp_path_factory.getbasetemp()))
    lowered = next(s for s in trace if s.pass_name == "LowerGradOf" and s.which != GraphName.main())
    undefined = [v for v in lowered.graph.params if "Undefined" in v.type]
    assert undefined, "the backward graph has an undefined input to draw"
    zeros_checked = 0
    for step in trace:
        if view_unavailable_reason(trace, step.index, View.BACKWARD, 0) is not None:
            continue
        graph = draw_step(trace, step.index, View.BACKWARD, 0, ghosts=False)
        marks = step_marks(trace, step.index, View.BACKWARD, 0)
        types = {v.id: v.type for v in _values(step)}
        for node_id, node in graph.nodes.items():
            states = marks.nodes.get(node_id, set()) & STATE_BADGES.keys()
            if node.role is NodeRole.CONSTANT:
                assert not states, f"step {step.index}: constant {node.label!r} drawn {states}"
            if node.label.startswith("prim::AutogradZero"):
                assert states == {Mark.ZERO}, f"step {step.index}: {node.label!r} drawn {states}"
                zeros_checked += 1
        for value_id, found in marks.values.items():
            if found & STATE_BADGES.keys() and value_id in types:
                assert not types[value_id].startswith(("int", "bool", "None", "float")), (step.index, types[value_id])
        for value in _values(step):
            if "[Undefined]" in value.type and value.id in graph.nodes:
                assert Mark.ZERO in marks.values.get(value.id, set()), f"step {step.index}: {value} not drawn Zero"
                zeros_checked += 1
    assert zeros_checked


def _values(step: Step) -> list[ValueRecord]:
    found = list(step.graph.params)
    for node in walk_records(step.graph):
        found += node.outputs
    return found
