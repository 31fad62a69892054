"""Run values on the edges after ``r`` (issue 23, point 2): each edge says what
flows along it for the example inputs, a gradient marked ∂, placed clear of
the boxes, in the terminal and in exported pictures."""

from __future__ import annotations

from pathlib import Path

import numpy
import pytest

from gradview.runtime.checks import summarize_value
from gradview.viewer.canvas_geometry import CanvasGeometry, edge_label_cells
from gradview.viewer.edge_values import (
    ADJOINT,
    EDGE_VALUES_MAX_BOXES,
    ViewRun,
    edge_text,
    place_labels,
    run_for_views,
    with_edge_values,
)
from gradview.viewer.export import frame_for_step, render_svg
from gradview.viewer.layout import union_layout
from gradview.viewer.marks import step_marks
from gradview.viewer.model import DrawEdge, DrawGraph, DrawNode, View
from gradview.viewer.session import load_target
from gradview.viewer.views import draw_step

TEACHING = Path(__file__).resolve().parents[2] / "examples" / "teaching"


@pytest.fixture(scope="module")
def sin_times_x():
    """The joint view of sin(x) * x at its last step (df as its executor runs it), after r."""
    session = load_target(f"{TEACHING / 'sin_times_x.py'}:f")
    trace = session.trace
    index = len(trace) - 1
    run = run_for_views(trace, index, session.inputs)
    graph = with_edge_values(draw_step(trace, index, View.JOINT, 0), run)
    return trace, index, run, graph, numpy.asarray(session.inputs[0])


def _op(graph: DrawGraph, kind: str, cluster: str) -> int:
    (found,) = [i for i, n in graph.nodes.items() if n.label.startswith(kind + "\n") and n.cluster == cluster]
    return found


def _out_values(graph: DrawGraph, node_id: int) -> set[int]:
    return {e.value_id for e in graph.edges if e.source == node_id}


def test_the_edge_out_of_sin_carries_sin_of_the_input(sin_times_x) -> None:
    _, _, run, graph, x0 = sin_times_x
    assert isinstance(run, ViewRun)
    (value,) = _out_values(graph, _op(graph, "aten::sin", "f"))
    want = summarize_value(numpy.sin(x0))
    got = run.drawn[value]
    assert got.shape == (3, 4)
    numpy.testing.assert_allclose([got.min, got.max, got.mean], [want.min, want.max, want.mean], rtol=1e-12)
    assert graph.edge_values[value] == edge_text(want) == f"3x4 μ={want.mean:.3g}"
    # f's output too, though the step on screen is df's: r ran f's step as well.
    (product,) = _out_values(graph, _op(graph, "aten::mul", "f"))
    numpy.testing.assert_allclose(run.drawn[product].mean, (numpy.sin(x0) * x0).mean(), rtol=1e-12)


def test_df_edges_carry_the_adjoints_torch_computes(sin_times_x) -> None:
    torch = pytest.importorskip("torch")
    _, _, run, graph, x0 = sin_times_x
    x = torch.tensor(x0, requires_grad=True)
    (torch.sin(x) * x).backward(torch.ones_like(x))
    want = summarize_value(x.grad.numpy())
    (grad_x,) = _out_values(graph, _op(graph, "aten::add", "df"))
    got = run.drawn[grad_x]
    numpy.testing.assert_allclose([got.min, got.max, got.mean], [want.min, want.max, want.mean], rtol=1e-12)
    assert graph.edge_values[grad_x] == f"{ADJOINT} 3x4 μ={want.mean:.3g}"
    # cos(x) is a value of df but no gradient: no ∂.
    (cos,) = _out_values(graph, _op(graph, "aten::cos", "df"))
    assert not graph.edge_values[cos].startswith(ADJOINT)
    numpy.testing.assert_allclose(run.drawn[cos].mean, numpy.cos(x0).mean(), rtol=1e-12)


def test_a_capture_edge_carries_the_value_df_receives(sin_times_x) -> None:
    _, _, run, graph, x0 = sin_times_x
    captures = [e for e in graph.edges if e.capture and e.value_id in graph.edge_values]
    assert captures
    for edge in captures:
        assert graph.edge_values[edge.value_id] == edge_text(run.drawn[edge.target])


def test_big_pictures_keep_values_on_their_boxes(sin_times_x) -> None:
    _, _, run, _, _ = sin_times_x
    big = DrawGraph()
    for i in range(EDGE_VALUES_MAX_BOXES + 1):
        big.add_node(DrawNode(1000 + i, "aten::relu"))
    big.add_edge(DrawEdge(1000, 1001, next(iter(run.drawn))))
    assert with_edge_values(big, run).edge_values == {}


def test_terminal_labels_sit_clear_of_boxes_and_each_other(sin_times_x) -> None:
    _, _, _, graph, _ = sin_times_x
    layout = union_layout([graph])
    for zoom in (1.0, 0.5):
        geometry = CanvasGeometry.build(layout, zoom)
        rows = edge_label_cells(geometry, layout, graph, geometry.step_frames(graph))
        spans = [(row, col, col + len(text)) for row, found in rows.items() for col, text, _ in found]
        assert spans, f"no value on any edge at zoom {zoom}"
        for row, start, end in spans:
            for c0, r0, c1, r1 in geometry.node_cells.values():
                assert not (r0 <= row < r1 and start < c1 and c0 < end), "a label over a box"
        assert len({(row, col) for row, start, end in spans for col in range(start, end)}) == sum(e - s for _, s, e in spans)


def test_place_labels_leaves_out_a_label_with_no_room() -> None:
    line = [[(0.0, 0.0), (0.0, 10.0)]]
    placed = place_labels([("a", "wide label", line)], [(-20.0, -1.0, 20.0, 11.0)], 1.0, 1.0)
    assert placed == {}
    placed = place_labels([("a", "x", line), ("b", "x", line)], [], 1.0, 1.0)
    assert set(placed) == {"a", "b"} and placed["a"] != placed["b"]


def test_exports_draw_the_values_screen_and_slide(sin_times_x) -> None:
    from gradview.viewer import slides

    trace, index, _, graph, x0 = sin_times_x
    marks = step_marks(trace, index, View.JOINT, 0)
    svg = render_svg(graph, marks, union_layout([graph]), theme="light")
    sin_text = edge_text(summarize_value(numpy.sin(x0)))
    assert "edge_value" in svg and sin_text in svg
    dot, _ = slides.slide_dot(frame_for_step(trace[index], graph, marks))
    assert "edge_value_" in dot and f"{ADJOINT} 3x4" in dot


def test_boxes_take_their_values_by_id_not_by_name(sin_times_x) -> None:
    from gradview.viewer.formatting import add_run_values

    trace, index, run, graph, _ = sin_times_x
    shown = add_run_values(graph, trace[index], run)
    # f's aten::size %5 (the size [3, 4]) and df's input %5 (an undefined int[]?) share a name.
    f_sizes = [n for n in shown.nodes.values() if n.cluster == "f" and n.label.startswith("aten::size\n%5")]
    df_five = [n for n in shown.nodes.values() if n.cluster == "df" and n.label.startswith("%5")]
    assert f_sizes and df_five
    assert f_sizes[0].label.splitlines()[1] == "%5 = [3, 4]"
    assert df_five[0].label.startswith("%5 = undefined")


def test_a_value_computed_in_a_loop_says_it_is_the_last() -> None:
    summary = summarize_value(numpy.ones((3, 4)), times=3)
    assert edge_text(summary) == "3x4 μ=1 (last of 3)"
    assert edge_text(summary, adjoint=True) == f"{ADJOINT} 3x4 μ=1 (last of 3)"


def test_r_fills_the_joint_view_of_another_differentiable_graph() -> None:
    # loop_if's last step is DifferentiableGraph 1's df; the joint view of group 0 gets its values too.
    session = load_target(f"{TEACHING / 'loop_if.py'}:f")
    trace = session.trace
    index = len(trace) - 1
    assert trace[index].which.index == 1
    run = run_for_views(trace, index, session.inputs)
    graph = with_edge_values(draw_step(trace, index, View.JOINT, 0), run)
    tanh = _op(graph, "aten::tanh", "f")
    assert all(value in graph.edge_values for value in _out_values(graph, tanh))
