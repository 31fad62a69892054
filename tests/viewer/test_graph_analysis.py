"""Focus, collapse, search, generations, fan-out stubs and the first view, on small parsed graphs."""

from __future__ import annotations

import pytest

from gradview.ir import parse_ir
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer import views
from gradview.viewer.graph_analysis import (
    collapse,
    collapsible_groups,
    fan_out_stubs,
    focus_graph,
    focus_nodes,
    generations,
    group_box_id,
    initial_target,
    search,
)
from gradview.viewer.layout import union_layout
from gradview.viewer.model import DrawEdge, DrawGraph, DrawNode, Mark, Marks, View

# Ids as the trace numbers them: inputs 0 (%x), 1 (%w), 2 (%c); nodes 3 (the
# constant), 5 (mul), 7 (add), 9 (If), 11 (sin), 13 (mul), 15 (GradOf), 17 (mul);
# return boxes -75 and -76 (the If's blocks), -123 (GradOf's block), -1 (the graph).
TEXT = """graph(%x : Double(3), %w : Double(3), %c : bool):
  %one : int = prim::Constant[value=1]()
  %a : Double(3) = aten::mul(%x, %w)
  %b : Double(3) = aten::add(%a, %w, %one)
  %y : Double(3) = prim::If(%c)
    block0():
      %s : Double(3) = aten::sin(%b)
      %t : Double(3) = aten::mul(%s, %w)
      -> (%t)
    block1():
      -> (%b)
  %g : Double(3) = prim::GradOf[name="aten::mul"](%y)
    block0():
      %u : Double(3) = aten::mul(%y, %w)
      -> (%u)
  return (%g)
"""

NESTED = """graph(%x : Double(3), %c : bool):
  %y : Double(3) = prim::If(%c)
    block0():
      %z : Double(3) = prim::If(%c)
        block0():
          %s : Double(3) = aten::sin(%x)
          -> (%s)
        block1():
          -> (%x)
      -> (%z)
    block1():
      -> (%x)
  %r : Double(3) = aten::cos(%y)
  return (%r)
"""


def _drawn(text: str) -> DrawGraph:
    trace = PassTrace()
    trace.record("Input", parse_ir(text), changed=False)
    return views.draw_step(trace, 0, View.WHOLE, 0, ghosts=False)


@pytest.fixture
def graph() -> DrawGraph:
    drawn = _drawn(TEXT)
    assert list(drawn.nodes) == [0, 1, 2, 3, 5, 7, 9, 11, 13, -75, -76, 15, 17, -123, -1]
    return drawn


def _edges(graph: DrawGraph) -> set[tuple[int, int, int]]:
    return {(e.source, e.target, e.value_id) for e in graph.edges}


# -- focus -----------------------------------------------------------------------------------
def test_focus_is_the_k_hop_neighbourhood_either_direction(graph):
    assert focus_nodes(graph, 7, 0) == {7}
    assert focus_nodes(graph, 7, 1) == {7, 5, 1, 3, 11, -76}
    assert focus_nodes(graph, 7, 2) == {7, 5, 1, 3, 11, -76, 0, 13, 17}
    assert focus_nodes(graph, 12345, 2) == set()


def test_focus_graph_keeps_order_edges_and_frames(graph):
    piece = focus_graph(graph, 11, 1)
    assert list(piece.nodes) == [7, 11, 13]
    assert _edges(piece) == {(7, 11, 8), (11, 13, 12)}
    assert list(piece.clusters) == ["n9.block0"]


# -- collapse ----------------------------------------------------------------------------------
def test_collapsible_groups_are_the_block_and_graph_frames(graph):
    assert {k: c.title for k, c in collapsible_groups(graph).items()} == {
        "n9.block0": "prim::If block0",
        "n9.block1": "prim::If block1",
        "n15.block0": "prim::GradOf block0",
    }


def test_collapse_folds_a_group_into_one_counted_box(graph):
    folded = collapse(graph, ["n9.block0", "n15.block0"])
    box_if, box_grad = group_box_id(graph, "n9.block0"), group_box_id(graph, "n15.block0")
    assert folded.box_of == {11: box_if, 13: box_if, -75: box_if, 17: box_grad, -123: box_grad}
    assert folded.members == {box_if: [11, 13, -75], box_grad: [17, -123]}
    assert folded.groups == {box_if: "n9.block0", box_grad: "n15.block0"}
    out = folded.graph
    assert list(out.nodes) == [0, 1, 2, 3, 5, 7, 9, box_if, -76, 15, box_grad, -1]
    assert out.nodes[box_if].label == "prim::If block0\n[2 nodes]"
    assert out.nodes[box_grad].label == "prim::GradOf block0\n[1 node]"
    assert _edges(out) == {
        (0, 5, 0), (1, 5, 1), (5, 7, 6), (1, 7, 1), (3, 7, 4), (2, 9, 2),
        (7, box_if, 8), (1, box_if, 1), (7, -76, 8),
        (9, 15, 10), (9, box_grad, 10), (1, box_grad, 1), (15, -1, 16),
    }  # fmt: skip
    assert list(out.clusters) == ["n9.block1"]
    assert collapse(graph, []).graph.nodes == graph.nodes


def test_a_group_inside_a_collapsed_group_folds_into_the_outer_box():
    graph = _drawn(NESTED)
    outer = next(k for k, c in graph.clusters.items() if c.title == "prim::If block0" and c.parent is None)
    inner = [k for k, c in graph.clusters.items() if c.parent == outer]
    assert len(inner) == 2
    folded = collapse(graph, [outer, *inner])
    box = group_box_id(graph, outer)
    assert set(folded.members) == {box}
    hidden = [i for i, n in graph.nodes.items() if n.cluster == outer or n.cluster in inner]
    assert folded.members[box] == hidden
    assert folded.graph.nodes[box].label == "prim::If block0\n[2 nodes]"  # the inner If and sin
    assert set(folded.graph.clusters) == set(graph.clusters) - {outer, *inner}


# -- search -------------------------------------------------------------------------------------
def test_search_by_kind_value_name_and_attribute(graph):
    assert search(graph, "mul") == [5, 13, 15, 17]  # the GradOf's name attribute too
    assert search(graph, "%W") == [1, 5, 7, 13, 17]  # case-insensitive, readers of %w
    assert search(graph, "value=1") == [3]
    assert search(graph, "  ") == [] and search(graph, "nothing") == []


def test_search_follows_the_layout_top_to_bottom():
    graph = DrawGraph()
    for node_id in (1, 2, 3):
        graph.add_node(DrawNode(node_id, f"aten::relu\n%v{node_id}"))
    graph.add_edge(DrawEdge(3, 1, 30))  # 3 above 1: a layout puts 3 first
    graph.add_edge(DrawEdge(1, 2, 10))
    assert search(graph, "relu") == [1, 2, 3]
    assert search(graph, "relu", union_layout([graph], "layered")) == [3, 1, 2]


# -- generations -----------------------------------------------------------------------------------
def test_generations_are_topological_layers_in_program_order(graph):
    assert generations(graph) == [[0, 1, 2, 3], [5, 9], [7, 15, 17], [11, -76, -123, -1], [13], [-75]]


def test_generations_name_a_node_on_a_cycle():
    graph = DrawGraph()
    for node_id in (1, 2):
        graph.add_node(DrawNode(node_id, "op"))
    graph.edges = [DrawEdge(1, 2, 10), DrawEdge(2, 1, 20)]
    with pytest.raises(ValueError, match="cycle through node"):
        generations(graph)


# -- fan-out ----------------------------------------------------------------------------------------
def test_a_value_read_by_many_nodes_becomes_stubs(graph):
    stubs = fan_out_stubs(graph, limit=2)  # %w has four readers, %b and %y two
    assert stubs.labels == {1: "%w"}
    assert stubs.sources == {1: 1}
    assert stubs.readers == {5: [1], 7: [1], 13: [1], 17: [1]}
    assert stubs.hidden == {(1, 5, 1), (1, 7, 1), (1, 13, 1), (1, 17, 1)}
    assert _edges(stubs.graph) == _edges(graph) - stubs.hidden
    assert stubs.graph.nodes == graph.nodes
    assert fan_out_stubs(graph).labels == {}  # the default limit is 8


# -- the first view ----------------------------------------------------------------------------------
def test_initial_target_is_the_first_change_else_the_output(graph):
    assert initial_target(graph) == -1
    assert initial_target(graph, [13, 7]) == 7  # program order
    marks = Marks()
    marks.mark_node(5, Mark.SELECTED)
    marks.mark_node(13, Mark.ADDED)
    assert initial_target(graph, marks) == 13
    graph.ghosts = {5}
    assert initial_target(graph, [5]) == -1  # a removed node is no change to look at
    assert initial_target(DrawGraph()) is None
    piece = focus_graph(graph, 11, 1)
    assert initial_target(piece) == 13  # no return box: the last node
