"""Blocks are drawn where they are: at every step of every corpus graph with
blocks (prim::If, prim::Loop, prim::GradOf), each node's box lies inside its
block's frame, each frame inside the frame of the block holding its owner
and under the owner's box (not floating off elsewhere), in the exported SVG (read back from Graphviz's output) and in the terminal
canvas's cells."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import walk_records
from gradview.viewer.canvas_geometry import CanvasGeometry
from gradview.viewer.export import trace_frames, view_layouts
from gradview.viewer.layout import box_size, lay_out_sized
from gradview.viewer.layout_service import view_union
from gradview.viewer.model import DrawGraph, View
from gradview.viewer.session import load_target
from gradview.viewer.svg_dot import frame_numbers, run_neato, step_dot
from gradview.viewer.svg_geometry import step_geometry
from gradview.viewer.views import draw_step, view_unavailable_reason

from .conftest import ROOT
from .graphs import loop_and_if_trace

SIN_TIMES_X = "import torch\n\n\ndef f(x):\n    return torch.sin(x) * x\n"
SVG = "{http://www.w3.org/2000/svg}"
SLACK = 0.6  # points: Graphviz writes coordinates rounded to 2 decimals, and strokes overlap by a hair
SVG_STEPS_PER_VIEW = 6  # steps read back from Graphviz per view (every step's geometry is checked)


def _ir_corpus() -> list[Path]:
    shared = ROOT.parent / "shared" / "conformance"
    found = sorted((ROOT / "tests" / "data").rglob("*.ir")) + sorted((ROOT / "examples").glob("*.ir"))
    found += sorted(shared.rglob("*.ir")) if shared.is_dir() else []
    texts: dict[str, Path] = {}
    for path in found:
        text = path.read_text(encoding="utf-8")
        if text.startswith("graph(") and re.search(r"prim::(If|Loop)\b", text):
            texts.setdefault(text, path)  # the shared corpus repeats tests/data's
    return list(texts.values())


def _targets() -> list[str]:
    teaching = sorted(str(p) for p in (ROOT / "examples" / "teaching").glob("*.py"))
    return [str(p) for p in _ir_corpus()] + [f"{ROOT / 'examples' / 'mlp.py'}:mlp", "sin_times_x", "loop_and_if"] + teaching


@cache
def _trace(target: str, folder: str) -> PassTrace:
    if target == "loop_and_if":
        return loop_and_if_trace()
    if target == "sin_times_x":
        path = Path(folder) / "sin_times_x.py"
        path.write_text(SIN_TIMES_X, encoding="utf-8")
        return load_target(f"{path}:f", "3x4").trace
    if target.endswith(".py"):  # a teaching example: its first function
        names = re.findall(r"^def (\w+)\(", Path(target).read_text(encoding="utf-8"), re.M)
        target = f"{target}:{next(n for n in names if not n.endswith('example_inputs'))}"
    return load_target(target).trace


def _with_blocks(target: str, folder: str) -> PassTrace:
    """The target's trace; a teaching example without blocks (no GradOf: no
    DifferentiableGraph forms) is skipped, any other target must have some."""
    trace = _trace(target, folder)
    if not any(node.blocks for step in trace for node in walk_records(step.graph)):
        if "teaching" in target:
            pytest.skip("no blocks at any step")
        raise AssertionError(f"{target} was chosen for its blocks")
    return trace


def _views(trace: PassTrace) -> list[tuple[View, int]]:
    return [(View.WHOLE, 0)] + [
        (view, 0) for view in (View.FORWARD, View.BACKWARD, View.JOINT)
        if any(view_unavailable_reason(trace, step.index, view, 0) is None for step in trace)
    ]


def _inside(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float], slack: float) -> bool:
    return (
        inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack
    )


def _check(
    graph: DrawGraph, nodes: dict[int, tuple], frames: dict[str, tuple], slack: float, where: str
) -> int:
    """Every node drawn in a frame lies in it; every frame in its parent's and
    under the node owning its block. Returns the frames checked."""
    for node_id, box in nodes.items():
        key = graph.nodes[node_id].cluster
        if key is None or key not in graph.clusters:
            continue
        assert key in frames, f"{where}: node {node_id} is in {key!r}, which is not drawn"
        assert _inside(box, frames[key], slack), f"{where}: node {node_id} {box} is outside its frame {key!r} {frames[key]}"
    for key, frame in frames.items():
        owner = re.match(r"n(-?\d+)\.block\d+$", key)
        if owner is not None and int(owner.group(1)) in nodes:  # a block hangs under the node owning it
            assert frame[1] >= nodes[int(owner.group(1))][3] - slack, f"{where}: block {key!r} {frame} is not under its owner"
        parent = graph.clusters[key].parent
        if parent is not None and parent in graph.clusters:
            assert parent in frames, f"{where}: frame {key!r} is in {parent!r}, which is not drawn"
            assert _inside(frame, frames[parent], slack), f"{where}: frame {key!r} {frame} is outside {parent!r} {frames[parent]}"
    return len(frames)


def _svg_boxes(svg: str) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Group id -> the bounding box of its outline, for the nodes and the frames Graphviz drew."""
    root = ElementTree.fromstring(svg)
    nodes, frames = {}, {}
    for group in root.iter(f"{SVG}g"):
        name = group.get("id", "")
        table = nodes if name.startswith("node_") else frames if name.startswith("cluster_") else None
        if table is None:
            continue
        shape = next(e for e in group.iter() if e.tag in (f"{SVG}polygon", f"{SVG}path"))
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", shape.get("points") or shape.get("d"))]
        xs, ys = numbers[0::2], numbers[1::2]
        table[name] = (min(xs), min(ys), max(xs), max(ys))
    return nodes, frames


def _sampled(count: int, keep: int) -> list[int]:
    if count <= keep:
        return list(range(count))
    return sorted({round(i * (count - 1) / (keep - 1)) for i in range(keep)})


@pytest.mark.parametrize("target", _targets())
def test_every_node_is_inside_its_block_frame_in_the_svg(target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    trace = _with_blocks(target, str(tmp_path_factory.getbasetemp()))
    checked = 0
    for view, dg in _views(trace):
        frames = trace_frames(trace, view, dg)
        layouts = view_layouts(trace, frames, view, dg)
        with_blocks = [f for f in frames if any(".block" in key for key in f.graph.clusters)]
        read_back = {id(with_blocks[i]) for i in _sampled(len(with_blocks), SVG_STEPS_PER_VIEW)}
        for frame in frames:
            layout = layouts[frame.which]
            where = f"{target} {view.value} step {frame.index} {frame.pass_name}"
            geometry = step_geometry(frame.graph, frame.marks, layout, {})
            boxes = {
                i: (b.x - b.width / 2, b.y - b.height / 2, b.x + b.width / 2, b.y + b.height / 2)
                for i, b in geometry.nodes.items()
            }
            checked += _check(frame.graph, boxes, geometry.frames, 0.01, where)
            if id(frame) not in read_back:
                continue
            svg = run_neato(step_dot(frame.graph, frame.marks, layout))
            svg_nodes, svg_frames = _svg_boxes(svg)
            numbers = frame_numbers(frame.graph, geometry)
            drawn_frames = {key: svg_frames[f"cluster_{n}"] for key, n in numbers.items()}
            drawn_nodes = {i: svg_nodes[f"node_{i}"] for i in geometry.nodes}
            _check(frame.graph, drawn_nodes, drawn_frames, SLACK, where + " (SVG)")
    assert checked, f"{target}: no frame drawn at any step"


@pytest.mark.parametrize("target", _targets())
def test_every_node_is_inside_its_block_frame_on_the_canvas(target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    trace = _with_blocks(target, str(tmp_path_factory.getbasetemp()))
    checked = 0
    for view, dg in _views(trace):
        keys = (
            [("whole", which) for which in dict.fromkeys(step.which for step in trace)]
            if view is View.WHOLE else [(view.value, dg)]
        )
        for key in keys:
            union = view_union(trace, key)
            layout = lay_out_sized(union, {i: box_size(n.label) for i, n in union.nodes.items()})
            geometry = CanvasGeometry.build(layout, 1.0)
            for step in trace:
                if key[0] == "whole" and step.which != key[1]:
                    continue
                if view_unavailable_reason(trace, step.index, view, dg) is not None:
                    continue
                graph = draw_step(trace, step.index, view, dg, ghosts=False)
                cells = {i: geometry.node_cells[i] for i in graph.nodes if i in geometry.node_cells}
                where = f"{target} {view.value} step {step.index} {step.pass_name} (canvas)"
                checked += _check(graph, cells, geometry.step_frames(graph), 0, where)
    assert checked, f"{target}: no frame drawn at any step"
