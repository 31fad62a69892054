"""Slide badges are short and out of the way: read back from each teaching
example's joint slide (SVG), every badge's text lies inside its own box, so
over no frame title, no other box and no line's end; it names only what the fill
does not say, numbering the vjp roles a reader matches between f and df. No
line runs through a frame's title (f's captures turning into df's top row),
and no capture through a box on its way from f to df.
The screen export's longer badges, above their boxes, keep off boxes,
titles and, where the picture leaves room, lines."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.badges import screen_badges, slide_badges
from gradview.viewer.detail import Detail
from gradview.viewer.export import trace_frames
from gradview.viewer.model import DrawGraph, DrawNode, Mark, Marks, View
from gradview.viewer.session import load_target
from gradview.viewer.slides import export_trace_pictures

from .conftest import ROOT

SVG = "{http://www.w3.org/2000/svg}"
TEACHING = sorted((ROOT / "examples" / "teaching").glob("*.py"))
Box = tuple[float, float, float, float]


@cache
def _trace(path: Path) -> PassTrace:
    return load_target(f"{path}:f", min_group_size=1).trace  # x_times_w forms a group only at 1


def _text_box(text: ElementTree.Element) -> Box:
    """The box of an SVG ``<text>`` Graphviz wrote (centred on x, y its baseline), Courier: 0.6 em a character."""
    size = float(text.get("font-size", "10"))
    x, y, width = float(text.get("x", "0")), float(text.get("y", "0")), 0.6 * size * len(text.text or "")
    return x - width / 2, y - 0.8 * size, x + width / 2, y + 0.2 * size


def _shape_box(group: ElementTree.Element) -> Box:
    shape = next(e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path"))
    points = _numbers(shape.get("points") or shape.get("d") or "")
    xs, ys = points[0::2], points[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a: Box, b: Box) -> bool:
    return b[0] <= a[0] and a[2] <= b[2] and b[1] <= a[1] and a[3] <= b[3]


def _slide_groups(path: Path, folder: Path, style: str = "slide") -> dict[str, ElementTree.Element]:
    """The SVG groups of ``path``'s joint slide (or screen export) at the ops level, by id."""
    trace = _trace(path)
    last = [len(trace) - 1]
    (svg_path, _), = export_trace_pictures(trace, folder, View.JOINT, 0, last, "svg", Detail.OPS, style, "dark")
    return {g.get("id", ""): g for g in ElementTree.fromstring(svg_path.read_text(encoding="utf-8")).iter(f"{SVG}g")}


@pytest.mark.parametrize("path", TEACHING, ids=[p.stem for p in TEACHING])
def test_slide_badges_sit_inside_their_box_clear_of_titles_boxes_and_lines(path: Path, tmp_path: Path) -> None:
    groups = _slide_groups(path, tmp_path)
    boxes = {name.removeprefix("node_"): _shape_box(g) for name, g in groups.items() if name.startswith("node_")}
    titles = [_text_box(t) for name, g in groups.items() if name.startswith("cluster_") for t in g.iter(f"{SVG}text")]
    lines = [
        (name, _numbers(path.get("d", "")))
        for name, g in groups.items() if name.startswith("edge_") for path in g.iter(f"{SVG}path")
    ]
    badges = {name.removeprefix("badge_"): g for name, g in groups.items() if name.startswith("badge_")}
    for node, group in badges.items():
        for text in group.iter(f"{SVG}text"):
            box = _text_box(text)
            assert _inside(box, boxes[node]), f"badge {text.text!r} of node {node} leaves its box"
            assert not [o for o, b in boxes.items() if o != node and _overlap(box, b)], f"badge {text.text!r} on a box"
            assert not [t for t in titles if _overlap(box, t)], f"badge {text.text!r} on a frame title"
            # Lines end at a box's border: inside it, a badge is under none (one that crosses the
            # box itself is the joint layout's routing, checked there, not the badge's place).
            ends = [(xy[0], xy[1]) for _, xy in lines] + [(xy[-2], xy[-1]) for _, xy in lines]
            assert not [e for e in ends if _inside((*e, *e), box)], f"a line ends on badge {text.text!r}"


@pytest.mark.parametrize("path", TEACHING, ids=[p.stem for p in TEACHING])
def test_no_line_of_a_slide_runs_through_a_frame_title(path: Path, tmp_path: Path) -> None:
    groups = _slide_groups(path, tmp_path)
    titles = [_text_box(t) for name, g in groups.items() if name.startswith("cluster_") for t in g.iter(f"{SVG}text")]
    for name, group in groups.items():
        if not name.startswith("edge_"):
            continue
        for shape in group.iter(f"{SVG}path"):
            samples = _samples(_numbers(shape.get("d", "")))
            assert not [t for t in titles for x, y in samples if _inside((x, y, x, y), t)], f"{name} crosses a title"


@pytest.mark.parametrize("path", TEACHING, ids=[p.stem for p in TEACHING])
def test_no_capture_of_a_slide_runs_through_a_box(path: Path, tmp_path: Path) -> None:
    groups = _slide_groups(path, tmp_path)
    boxes = {name.removeprefix("node_"): _shape_box(g) for name, g in groups.items() if name.startswith("node_")}
    for name, group in groups.items():
        if not name.startswith("edge_") or "capture" not in (group.get("class") or "").split():
            continue
        source, target = name.split("_")[1:3]
        points = [p for shape in group.iter(f"{SVG}path") for p in _samples(_numbers(shape.get("d", "")))]
        for node, (x0, y0, x1, y1) in boxes.items():
            inner = (x0 + 2, y0 + 2, x1 - 2, y1 - 2)
            if node not in (source, target):
                assert not [p for p in points if _inside((*p, *p), inner)], f"{name} runs through node {node}"


def test_screen_badges_keep_off_boxes_titles_and_lines(tmp_path: Path) -> None:
    groups = _slide_groups(ROOT / "examples" / "teaching" / "sin_times_x.py", tmp_path, "screen")
    boxes = [_shape_box(g) for name, g in groups.items() if name.startswith("node_")]
    titles = [_text_box(t) for name, g in groups.items() if name.startswith("cluster_") for t in g.iter(f"{SVG}text")]
    points = [
        (x, y) for name, g in groups.items() if name.startswith("edge_") for shape in g.iter(f"{SVG}path")
        for x, y in _samples(_numbers(shape.get("d", "")))
    ]
    badges = [_text_box(t) for name, g in groups.items() if name.startswith("badge_") for t in g.iter(f"{SVG}text")]
    assert len(badges) >= 8  # f's three, df's three inputs, the states of df's ops
    for badge in badges:
        assert not [b for b in boxes if _overlap(badge, b)] and not [t for t in titles if _overlap(badge, t)]
        assert not [p for p in points if _inside((*p, *p), badge)], "a line through a badge"


def _samples(xy: list[float]) -> list[tuple[float, float]]:
    """Points every eighth of the way between a Graphviz path's points (its control points lie on the lines)."""
    points = list(zip(xy[0::2], xy[1::2], strict=False))
    return [
        (ax + (bx - ax) * t / 8, ay + (by - ay) * t / 8)
        for (ax, ay), (bx, by) in zip(points, points[1:], strict=False) for t in range(9)
    ]


def test_a_slide_badge_names_what_the_fill_does_not_and_numbers_only_the_vjp_roles() -> None:
    trace = _trace(ROOT / "examples" / "teaching" / "sin_times_x.py")
    (frame,) = trace_frames(trace, View.JOINT, 0, [len(trace) - 1])
    found = sorted("/".join(lines) for lines in slide_badges(frame.graph, frame.marks, joint=True).values())
    # f: x (captured input, the gradient's target), sin_x (temporary, its gradient comes in as #1),
    # the output (#0); df: the two incoming gradients, #1 never defined.
    assert found == ["vjp in #0", "vjp in #0", "vjp in #1", "vjp in #1/Zero", "vjp out"]


def test_screen_badges_number_every_role_and_a_temporary_is_not_also_a_captured_output() -> None:
    graph = DrawGraph(nodes={1: DrawNode(1, "sin\n%sin_x")})
    marks = Marks()
    for mark, index in ((Mark.TEMPORARY, 0), (Mark.CAPTURED_OUTPUT, 0), (Mark.VJP_INPUT, 1), (Mark.UNKNOWN, None)):
        marks.mark_node(1, mark, index)
    assert screen_badges(graph, marks) == {1: "temporary #0, vjp input #1, Unknown"}
    assert slide_badges(graph, marks, joint=False) == {1: ["vjp in"]}
