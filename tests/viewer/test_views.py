"""views.draw_step: boxes, arrows and frames for each view of a trace step."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import BlockRecord, NodeRecord, ValueRecord, walk_records
from gradview.viewer.marks import step_marks
from gradview.viewer.model import NodeRole, View, return_id
from gradview.viewer.views import (
    available_views,
    block_return_id,
    differentiable_graph_count,
    draw_step,
    node_label,
    short_type,
    view_unavailable_reason,
)

from .graphs import DG, drawn_node_ids, exclusions_trace, loop_and_if_trace, producer_of, step_named


def expected_counts(graph: BlockRecord) -> tuple[int, int]:
    """Boxes and arrows by counting records: inputs, non-group nodes, one return per
    graph and block; one arrow per input of a drawn node and per returned value."""
    boxes = len(graph.params) + 1
    arrows = len(graph.returns)
    for node in walk_records(graph):
        if node.kind == DG:
            continue
        boxes += 1 + len(node.blocks)
        arrows += len(node.inputs) + sum(len(block.returns) for block in node.blocks)
    return boxes, arrows


@pytest.mark.parametrize("name", ["mlp", "loop_and_if", "exclusions"])
def test_whole_view_has_a_box_per_record_and_an_arrow_per_use(name: str, mlp_trace: PassTrace) -> None:
    trace = {"mlp": mlp_trace, "loop_and_if": loop_and_if_trace(), "exclusions": exclusions_trace()}[name]
    for step in trace:
        drawing = draw_step(trace, step.index, View.WHOLE, ghosts=False)
        assert (len(drawing.nodes), len(drawing.edges)) == expected_counts(step.graph), step.index
        assert drawn_node_ids(step.graph) <= set(drawing.nodes)
        for edge in drawing.edges:
            assert edge.source in drawing.nodes and edge.target in drawing.nodes


def test_arrows_go_from_producer_to_consumer(mlp_trace: PassTrace) -> None:
    step = mlp_trace[0]
    drawing = draw_step(mlp_trace, 0, View.WHOLE, ghosts=False)
    made_by = {v.id: node.id for node in step.graph.nodes for v in node.outputs}
    made_by.update({v.id: v.id for v in step.graph.params})
    expected = {(made_by[v], node.id, v) for node in step.graph.nodes for v in node.inputs}
    expected |= {(made_by[v], return_id(0), v) for v in step.graph.returns}
    assert {(e.source, e.target, e.value_id) for e in drawing.edges} == expected
    relu = producer_of(step.graph, "h")
    assert drawing.nodes[relu.id].label == "aten::relu\n%h : Double(8, 16)"
    assert all(drawing.nodes[v.id].role is NodeRole.INPUT for v in step.graph.params)


def test_loop_and_if_blocks_are_framed_clusters() -> None:
    trace = loop_and_if_trace()
    step = trace[0]
    drawing = draw_step(trace, 0, View.WHOLE)
    loop = next(n for n in step.graph.nodes if n.kind == "prim::Loop")
    branch = next(n for n in step.graph.nodes if n.kind == "prim::If")
    titles = {c.title for c in drawing.clusters.values()}
    assert titles == {"prim::Loop block0", "prim::If block0", "prim::If block1"}
    body = drawing.nodes[producer_of(step.graph, "u").id].cluster
    assert drawing.clusters[body].title == "prim::Loop block0"
    assert drawing.nodes[loop.id].cluster is None
    assert drawing.nodes[block_return_id(branch.id, 1)].role is NodeRole.RETURN
    # The loop's carried value %v comes out of the loop node into the body.
    mul = producer_of(step.graph, "w")
    assert any(e.source == loop.id and e.target == mul.id for e in drawing.edges)


def test_differentiable_graph_is_a_frame_wired_to_the_outer_graph(mlp_trace: PassTrace) -> None:
    step = step_named(mlp_trace, "packGradient")
    drawing = draw_step(mlp_trace, step.index, View.WHOLE, ghosts=False)
    group = next(n for n in step.graph.nodes if n.kind == DG)
    assert group.id not in drawing.nodes
    assert drawing.clusters[f"dg{group.id}"].title == "DifferentiableGraph_0"
    assert group.subgraph is not None
    for inner in group.subgraph.nodes:
        assert drawing.nodes[inner.id].cluster == f"dg{group.id}"
    # Each group input feeds the inner nodes straight from the outer producer.
    x = step.graph.params[0]
    matmul = next(n for n in group.subgraph.nodes if n.kind == "aten::matmul")
    assert any(e.source == x.id and e.target == matmul.id for e in drawing.edges)
    # The group's output reaches the return from the inner node that makes it.
    made_inside = next(n.id for n in group.subgraph.nodes if group.subgraph.returns[0] in {v.id for v in n.outputs})
    assert any(e.source == made_inside and e.target == return_id(0) for e in drawing.edges)


def test_forward_and_backward_views_show_the_latest_f_and_df(mlp_trace: PassTrace) -> None:
    last = {}
    for step in mlp_trace:
        if not step.which.is_main:
            last[step.which] = step
        forward = draw_step(mlp_trace, step.index, View.FORWARD, ghosts=False)
        f = last.get(GraphName.forward(0))
        if f is None:
            assert not forward.nodes
            assert "step 22" in (view_unavailable_reason(mlp_trace, step.index, View.FORWARD) or "")
        else:
            assert drawn_node_ids(f.graph) <= set(forward.nodes)
        backward = draw_step(mlp_trace, step.index, View.BACKWARD, ghosts=False)
        df = last.get(GraphName.backward_executor(0)) or last.get(GraphName.backward(0))
        if step.which == GraphName.forward(0) and mlp_trace[step.index + 1].which == GraphName.backward(0):
            df = mlp_trace[step.index + 1]  # differentiate records f, then df, of the same step
        if df is None:
            assert not backward.nodes
        else:
            assert drawn_node_ids(df.graph) == {n for n in backward.nodes if n >= 0} - {v.id for v in df.graph.params}


def test_joint_view_has_one_capture_edge_per_captured_value(mlp_trace: PassTrace) -> None:
    index = len(mlp_trace) - 1
    notes = next(s.annotations for s in reversed(mlp_trace.steps) if "df_input_captured_inputs" in s.annotations)
    f = next(s for s in reversed(mlp_trace.steps) if s.which == GraphName.forward(0))
    df = next(s for s in reversed(mlp_trace.steps) if s.which == GraphName.backward_executor(0))
    drawing = draw_step(mlp_trace, index, View.JOINT)
    captures = [e for e in drawing.edges if e.capture]
    inputs, outputs = notes["df_input_captured_inputs"], notes["df_input_captured_outputs"]
    assert len(captures) == len(inputs) + len(outputs) > 0
    first = len(notes["df_input_vjps"])
    made_by = {v.id: n.id for n in f.graph.nodes for v in n.outputs} | {v.id: v.id for v in f.graph.params}
    wanted = [(f.graph.params[i].id, df.graph.params[first + j].id) for j, i in enumerate(inputs)]
    wanted += [(f.graph.returns[i], df.graph.params[first + len(inputs) + j].id) for j, i in enumerate(outputs)]
    assert sorted((e.value_id, e.target) for e in captures) == sorted(wanted)
    assert all(e.source == made_by[e.value_id] for e in captures)
    assert {drawing.nodes[n].cluster for n in drawing.nodes if n >= 0} == {"f", "df"}


@pytest.mark.parametrize("name", ["mlp", "loop_and_if"])
def test_ghosts_are_the_nodes_the_step_removed(name: str, mlp_trace: PassTrace) -> None:
    trace = {"mlp": mlp_trace, "loop_and_if": loop_and_if_trace()}[name]
    seen_removal = False
    for step in trace:
        previous = trace.previous(step)
        drawing = draw_step(trace, step.index, View.WHOLE)
        if previous is None:
            continue
        gone = drawn_node_ids(previous.graph) - {n.id for n in walk_records(step.graph)}
        assert drawing.ghosts == gone, step.index
        assert gone <= set(drawing.nodes)
        seen_removal |= bool(gone)
    assert seen_removal


def test_views_available_and_differentiable_graph_count(mlp_trace: PassTrace) -> None:
    assert available_views(mlp_trace, 0) == [View.WHOLE]
    assert available_views(mlp_trace, len(mlp_trace) - 1) == list(View)
    assert differentiable_graph_count(mlp_trace) == 1
    assert differentiable_graph_count(exclusions_trace()) == 3
    assert "no DifferentiableGraph 5" in (view_unavailable_reason(mlp_trace, 40, View.FORWARD, 5) or "")
    assert draw_step(mlp_trace, 40, View.FORWARD, 5).nodes == {}


def test_labels_are_short() -> None:
    assert short_type("Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu)") == "Double(8, 16)"
    assert short_type("(Tensor, int)") == "(Tensor, int)"
    many = tuple(ValueRecord(i, "a_very_long_value_name_" + str(i), "Float(1, 2, 3, 4, 5, 6)") for i in range(7))
    label = node_label(NodeRecord(99, "aten::some_really_long_operator_name_here", (), many, (), None, (), None))
    lines = label.split("\n")
    assert all(len(line) <= 36 for line in lines)
    assert lines[-1] == "… 3 more outputs" and len(lines) == 6


def test_draw_step_returns_a_copy(mlp_trace: PassTrace) -> None:
    first = draw_step(mlp_trace, 5, View.WHOLE)
    first.nodes.clear()
    assert draw_step(mlp_trace, 5, View.WHOLE).nodes


def test_a_saved_trace_draws_and_marks_the_same(mlp_trace: PassTrace, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    mlp_trace.save(str(path))
    loaded = PassTrace.load(str(path))
    for index in (21, 37, len(mlp_trace) - 1):
        for view in View:
            assert draw_step(loaded, index, view) == draw_step(mlp_trace, index, view)
            assert step_marks(loaded, index, view) == step_marks(mlp_trace, index, view)
