"""inline_autodiff_subgraphs: small DifferentiableGraphs go back into the graph.

torch has no Python binding for InlineAutodiffSubgraphs; these tests follow
graph_executor.cpp (threshold autodiffSubgraphInlineThreshold = 5, size
counted over every node of the subgraph, nested and constants included) and
check that the inlined graph computes the same.
"""

from __future__ import annotations

import numpy as np

from gradview.autodiff import create_autodiff_subgraphs, inline_autodiff_subgraphs
from gradview.autodiff.inline_autodiff_subgraphs import block_size, can_run_with_autograd
from gradview.autodiff.subgraph_utils import get_subgraph
from gradview.ir import Graph, TensorType, parse_ir
from gradview.runtime import run_graph

from .subgraph_oracle import torch_differentiable

DG = "prim::DifferentiableGraph"
TEXT = """graph(%x : Tensor, %y : Tensor, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
   = prim::Print(%b)
  %c : Tensor = aten::exp(%b)
  %d : Tensor = aten::mul(%c, %y)
  %e : Tensor = aten::add(%d, %a, %one)
  %f : Tensor = aten::tanh(%e)
  %g : Tensor = aten::sigmoid(%f)
  %r : Tensor = prim::If(%flag)
    block0():
      %h : Tensor = aten::neg(%g)
      %i : Tensor = aten::relu(%h)
      -> (%i)
    block1():
      -> (%g)
  return (%r)
"""
X, Y = np.linspace(-1.0, 1.0, 9).reshape(3, 3), np.linspace(0.5, 1.5, 9).reshape(3, 3)


def sizes(graph: Graph) -> list[int]:
    return [block_size(get_subgraph(n).block) for n in graph.all_nodes() if n.kind() == DG]


def sliced() -> Graph:
    graph = parse_ir(TEXT)
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    return graph


def test_groups_below_the_threshold_are_inlined_with_nested_blocks() -> None:
    graph = sliced()
    # sin+cos, exp..sigmoid (with a copied constant), neg+relu in the branch.
    assert sorted(sizes(graph)) == [2, 2, 6]
    assert inline_autodiff_subgraphs(graph, 3)
    graph.lint()
    assert sizes(graph) == [6]
    assert not inline_autodiff_subgraphs(graph, 3)
    for flag in (True, False):
        expected = run_graph(parse_ir(TEXT), [X, Y, flag])
        np.testing.assert_allclose(run_graph(graph, [X, Y, flag])[0], expected[0])


def test_default_threshold_is_five_and_counts_constants() -> None:
    graph = sliced()
    inline_autodiff_subgraphs(graph)
    assert sizes(graph) == [6]
    graph = sliced()
    inline_autodiff_subgraphs(graph, 7)
    assert sizes(graph) == []
    assert [n.kind() for n in graph.nodes()].count("aten::tanh") == 1


def test_inlining_forgets_requires_grad_inside() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %p : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=0, device=cpu)](%x)
  %a : Tensor = aten::sin(%p)
  %b : Tensor = aten::cos(%a)
  return (%b)
""")
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    (group,) = [n for n in graph.nodes() if n.kind() == DG]
    # As after differentiation: the subgraph ran detached, so it saw no grad.
    inner_profile = next(n for n in get_subgraph(group).nodes() if n.kind() == "prim::profile")
    inner_profile.output().set_type(TensorType(requires_grad=False))
    assert inline_autodiff_subgraphs(graph)
    profile = next(n for n in graph.nodes() if n.kind() == "prim::profile")
    assert profile.ty("profiled_type").requires_grad is None
    sin = next(n for n in graph.nodes() if n.kind() == "aten::sin")
    assert sin.inputs()[0].type().requires_grad is None


def test_groups_that_autograd_cannot_run_stay() -> None:
    graph = parse_ir(TEXT)
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    group = next(n for n in graph.nodes() if n.kind() == DG)
    sub = get_subgraph(group)
    first = next(iter(sub.nodes()))
    fused = sub.create("prim::FusionGroup", [], 0)
    fused.insert_before(first)
    assert not can_run_with_autograd(fused)
    assert not can_run_with_autograd(sub.create("custom::op", [], 0))
    inline_autodiff_subgraphs(graph, 100)
    assert [n for n in graph.nodes() if n.kind() == DG] == [group]


def test_only_the_node_outputs_are_rewired_when_the_subgraph_returns_more() -> None:
    # A differentiated forward graph also returns what backward captures.
    graph = parse_ir("""graph(%x : Tensor):
  %y : Tensor = prim::DifferentiableGraph_0(%x)
  return (%y)
with prim::DifferentiableGraph_0 = graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
  return (%b, %a)
""")
    assert inline_autodiff_subgraphs(graph)
    graph.lint()
    assert [n.kind() for n in graph.nodes()] == ["aten::sin", "aten::cos"]
    np.testing.assert_allclose(run_graph(graph, [X])[0], np.cos(np.sin(X)))
