"""Exports worth putting on a slide: cropped SVGs, f beside df, no overlapping labels, a small stepper."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradview.runtime import GraphName
from gradview.viewer.doc_markdown import markdown_blocks
from gradview.viewer.export import export_trace_html, render_svg, trace_frames, view_layouts
from gradview.viewer.model import View
from gradview.viewer.pass_docs import pass_doc
from gradview.viewer.session import example_inputs_for, trace_executor
from gradview.viewer.stepper import reflow
from gradview.viewer.svg_dot import _LEGEND_WIDTH, LEGEND_GAP
from gradview.viewer.svg_geometry import MARGIN, is_faded

from .test_export import _numbers, _step_pieces, _stepper_data

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[2]


def _points(element: ET.Element) -> list[tuple[float, float]]:
    text = element.get("points") or element.get("d") or ""
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]
    return list(zip(numbers[::2], numbers[1::2], strict=False))


def _shape_box(group: ET.Element) -> tuple[float, float, float, float]:
    points = [p for e in group.iter() if e.tag in (SVG + "polygon", SVG + "path") for p in _points(e)]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def _node_boxes(root: ET.Element) -> dict[int, tuple[float, float, float, float]]:
    return {
        int(g.get("id")[5:]): _shape_box(g)
        for g in root.iter(SVG + "g")
        if (g.get("id") or "").startswith("node_")
    }


def _svg(trace, view: View, index: int, leftovers: bool = False) -> tuple[ET.Element, object]:
    frames = trace_frames(trace, view, 0, [index])
    layouts = view_layouts(trace, frames, view, 0)
    frame = frames[0]
    svg = render_svg(frame.graph, frame.marks, layouts[frame.which], leftovers=leftovers)
    return ET.fromstring(svg), frame


def _view_box(root: ET.Element) -> tuple[float, float]:
    _, _, width, height = (float(n) for n in root.get("viewBox").split())
    return width, height


# -- cropping ------------------------------------------------------------------------------
def _first_removal(trace) -> int:
    """The first step of the main graph that removed nodes."""
    steps = [s for s in trace if s.which == GraphName.main()]
    return next(b.index for a, b in zip(steps, steps[1:], strict=False) if a.node_ids() - b.node_ids())


def test_a_step_svg_covers_its_nodes_and_no_leftovers(mlp_trace):
    index = _first_removal(mlp_trace)  # the nodes it removed are leftovers
    root, frame = _svg(mlp_trace, View.WHOLE, index)
    assert frame.graph.ghosts  # the drawing has leftovers to leave out
    boxes = _node_boxes(root)
    assert set(boxes) == set(frame.graph.nodes) - frame.graph.ghosts
    assert not [g for g in root.iter(SVG + "g") if "faded" in (g.get("class") or "").split()]
    x0, y0 = min(b[0] for b in boxes.values()), min(b[1] for b in boxes.values())
    x1, y1 = max(b[2] for b in boxes.values()), max(b[3] for b in boxes.values())
    width, height = _view_box(root)
    # Nodes plus margins, room for frame titles and badges above, edges bending out, and the legend.
    assert width <= (x1 - x0) + 2 * MARGIN + 60 + LEGEND_GAP + _LEGEND_WIDTH
    assert height <= (y1 - y0) + 2 * MARGIN + 60
    # Every frame drawn holds a node drawn.
    for group in root.iter(SVG + "g"):
        if (group.get("class") or "").split()[:1] == ["cluster"]:
            fx0, fy0, fx1, fy1 = _shape_box(group)
            assert any(fx0 <= (b[0] + b[2]) / 2 <= fx1 and fy0 <= (b[1] + b[3]) / 2 <= fy1 for b in boxes.values())
    # With leftovers the removed nodes come back, faded.
    root, _ = _svg(mlp_trace, View.WHOLE, index, leftovers=True)
    faded = {
        int(g.get("id")[5:])
        for g in root.iter(SVG + "g")
        if (g.get("id") or "").startswith("node_") and "faded" in (g.get("class") or "").split()
    }
    assert faded == {i for i in frame.graph.nodes if is_faded(frame.graph, frame.marks, i)} >= frame.graph.ghosts


# -- the joint view ------------------------------------------------------------------------
def _root_cluster(graph, key):
    while graph.clusters[key].parent is not None:
        key = graph.clusters[key].parent
    return key


@pytest.mark.parametrize("position", [0, -1])
def test_joint_view_puts_f_left_of_df_with_captures_between(mlp_trace, position):
    indices = [s.index for s in mlp_trace if s.which == GraphName.backward(0)]
    root, frame = _svg(mlp_trace, View.JOINT, indices[position])
    boxes = _node_boxes(root)
    side = {i: _root_cluster(frame.graph, n.cluster) for i, n in frame.graph.nodes.items() if i in boxes}
    f_right = max(boxes[i][2] for i, s in side.items() if s == "f")
    df_left = min(boxes[i][0] for i, s in side.items() if s == "df")
    assert f_right < df_left
    captures = [g for g in root.iter(SVG + "g") if "capture" in (g.get("class") or "").split()]
    assert captures
    for group in captures:
        source, target, _ = (int(n) for n in re.fullmatch(r"edge_(-?\d+)_(-?\d+)_(-?\d+)", group.get("id")).groups())
        assert (side[source], side[target]) == ("f", "df")
        xs = [x for e in group.iter(SVG + "path") for x, _ in _points(e)]
        # From the producer to the reader through the gap: never around the outside.
        assert boxes[source][0] <= min(xs) and max(xs) <= boxes[target][2]
        assert min(xs) < f_right and max(xs) > df_left - 8  # (the arrowhead ends it)


# -- labels --------------------------------------------------------------------------------
def _text_boxes(root: ET.Element) -> list[tuple[float, float, float, float, str]]:
    boxes = []
    for text in root.iter(SVG + "text"):
        size = float(text.get("font-size", "10"))
        width = 0.6 * size * len(text.text or "")
        x, y = float(text.get("x")), float(text.get("y"))
        left = {"middle": x - width / 2, "end": x - width}.get(text.get("text-anchor", "start"), x)
        boxes.append((left, y - 0.75 * size, left + width, y + 0.2 * size, text.text or ""))
    return boxes


@pytest.mark.parametrize("view", [View.JOINT, View.FORWARD, View.BACKWARD, View.WHOLE])
def test_no_two_labels_overlap(mlp_trace, view):
    indices = [s.index for s in mlp_trace if s.which == GraphName.backward(0)]
    for index in (indices[0], indices[-1], len(mlp_trace) - 1):
        root, _ = _svg(mlp_trace, view, index)
        boxes = _text_boxes(root)
        assert len(boxes) > 20
        for i, (ax0, ay0, ax1, ay1, a) in enumerate(boxes):
            for bx0, by0, bx1, by1, b in boxes[i + 1 :]:
                overlap = min(ax1, bx1) - max(ax0, bx0) > 0.5 and min(ay1, by1) - max(ay0, by0) > 0.5
                assert not overlap, f"{a!r} overlaps {b!r} in step {index} ({view.value})"


# -- the stepper ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chain_trace():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from graphs import chain_text
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from gradview.ir import parse_ir

    graph = parse_ir(chain_text(60, pass_fodder=True))
    return trace_executor(graph, example_inputs_for(graph))


def test_stepper_of_a_chain_stays_small(chain_trace, tmp_path):
    page = export_trace_html(chain_trace, tmp_path / "chain.html")
    size = page.stat().st_size
    data = _stepper_data(page)
    assert len(data["steps"]) == len(chain_trace) > 60
    # The 450-node chain's 81 steps must stay under 5 MB; 60 nodes get a proportional share.
    assert size < 5_000_000 * 60 / 450
    drawn = sum(len(_numbers(step["parts"])) for step in data["steps"])
    assert len(data["pieces"]) < drawn / 4  # most steps reuse nearly all their parts


def test_stepper_carries_each_steps_pass_docs_and_diff(mlp_trace, tmp_path):
    data = _stepper_data(export_trace_html(mlp_trace, tmp_path / "whole.html"))
    assert len(data["steps"]) == len(mlp_trace)
    for step in data["steps"]:
        assert data["docs"][step["doc"]] == markdown_blocks(reflow(pass_doc(step["pass"])))
    assert sum(1 for step in data["steps"] if data["docs"][step["doc"]]) > len(mlp_trace) / 2
    # A step that removes nodes from the main graph: the diff names them.
    step = data["steps"][_first_removal(mlp_trace)]
    assert step["changed"] and step["counts"][1] == len(step["removed"]) > 0
    # An unchanged picture has an empty diff.
    for step in data["steps"]:
        if not step["changed"]:
            assert step["added"] == step["removed"] == [] and step["counts"] in ([0, 0, 0],)


def test_changed_means_the_picture_changed(mlp_trace, tmp_path):
    # The backward view shows df at every step from differentiate on, including
    # the steps that changed f only: those leave df's picture as it was.
    data = _stepper_data(export_trace_html(mlp_trace, tmp_path / "backward.html", View.BACKWARD))
    steps = data["steps"]
    changed_in_trace = {s.index: s.changed for s in mlp_trace}
    assert any(changed_in_trace[s["index"]] and not s["changed"] for s in steps)
    def picture(step):  # what is drawn, in each part's colours (the drawing order does not matter)
        return sorted(zip(_step_pieces(data, step), _numbers(step["styles"]), strict=True))

    for before, after in zip(steps, steps[1:], strict=False):
        assert after["changed"] == (picture(before) != picture(after)), f"step {after['index']} {after['pass']}"
    page = (tmp_path / "backward.html").read_text(encoding="utf-8")
    # The graph's name is said once for the run of steps, not on every entry.
    assert page.count("[backward of DifferentiableGraph 0]") == 0
    assert page.count(">backward of DifferentiableGraph 0</li>") == 1


def test_docs_are_reflowed_for_the_page():
    doc = "One line\nand its continuation.\n\n* an item\n  going on\n* another\n\n    code stays\n    as it is"
    assert reflow(doc) == "One line and its continuation.\n\n* an item going on\n* another\n\n    code stays\n    as it is"
