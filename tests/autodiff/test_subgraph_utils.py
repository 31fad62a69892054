"""Building and taking apart subgraph nodes (autodiff/subgraph_utils.py)."""

from __future__ import annotations

import numpy as np

from gradview.autodiff.subgraph_utils import (
    SlicingAliasDb,
    create_singleton_subgraph,
    get_subgraph,
    merge_node_into_subgraph,
    unmerge_aliased_outputs,
    unmerge_node,
    unmerge_outputs_aliasing_inputs,
    unmerge_subgraph,
)
from gradview.ir import Graph, parse_ir
from gradview.runtime import run_graph

DG = "prim::DifferentiableGraph"
CHAIN = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mm(%x, %w)
  %s : Tensor = aten::add(%m, %b, %one)
  %r : Tensor = aten::relu(%s)
  return (%r, %m)
"""
X, W, B = np.eye(3) * 2.0, np.full((3, 3), 0.5), np.linspace(-1.0, 1.0, 9).reshape(3, 3)


def node(graph: Graph, name: str):
    return graph.value_by_name(name).node


def lint_all(graph: Graph) -> None:
    graph.lint()
    for n in graph.all_nodes():
        if n.kind() == DG:
            get_subgraph(n).lint()


def test_merging_producers_copies_constants_and_keeps_used_outputs() -> None:
    graph = parse_ir(CHAIN)
    group = create_singleton_subgraph(node(graph, "r"), DG)
    merge_node_into_subgraph(node(graph, "s"), group)
    merge_node_into_subgraph(node(graph, "m"), group)
    lint_all(graph)
    assert str(graph) == """graph(%x : Tensor,
      %w : Tensor,
      %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %r : Tensor, %m : Tensor = prim::DifferentiableGraph_0(%b, %x, %w)
  return (%r, %m)
with prim::DifferentiableGraph_0 = graph(%b : Tensor,
      %x : Tensor,
      %w : Tensor):
  %m : Tensor = aten::mm(%x, %w)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%m, %b, %one)
  %r : Tensor = aten::relu(%s)
  return (%r, %m)
"""
    np.testing.assert_allclose(run_graph(graph, [X, W, B])[0], np.maximum(X @ W + B, 0))


def test_unmerge_subgraph_pastes_the_nodes_back() -> None:
    graph = parse_ir(CHAIN)
    group = create_singleton_subgraph(node(graph, "r"), DG)
    merge_node_into_subgraph(node(graph, "s"), group)
    pasted = unmerge_subgraph(group)
    lint_all(graph)
    assert [n.kind() for n in pasted] == ["prim::Constant", "aten::add", "aten::relu"]
    assert not any(n.kind() == DG for n in graph.nodes())
    np.testing.assert_allclose(run_graph(graph, [X, W, B])[0], np.maximum(X @ W + B, 0))


def test_merging_one_group_into_another() -> None:
    graph = parse_ir(CHAIN)
    consumer = create_singleton_subgraph(node(graph, "r"), DG)
    producer = create_singleton_subgraph(node(graph, "s"), DG)
    merge_node_into_subgraph(node(graph, "m"), producer)
    merge_node_into_subgraph(producer, consumer)
    lint_all(graph)
    groups = [n for n in graph.nodes() if n.kind() == DG]
    assert groups == [consumer]
    kinds = [n.kind() for n in get_subgraph(consumer).nodes() if n.kind() != "prim::Constant"]
    assert kinds == ["aten::mm", "aten::add", "aten::relu"]
    np.testing.assert_allclose(run_graph(graph, [X, W, B])[1], X @ W)


def test_unmerge_node_routes_inputs_through_group_outputs_like_torch() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %c : Tensor = aten::mul(%a, %x)
  return (%c)
""")
    group = create_singleton_subgraph(node(graph, "c"), DG)
    merge_node_into_subgraph(node(graph, "a"), group)
    mul = next(n for n in get_subgraph(group).nodes() if n.kind() == "aten::mul")
    unmerge_node(mul, group)
    lint_all(graph)
    # mul reads %a, now a group output, and the subgraph input %x, which
    # passes through the group as TorchScript's unmergeNode does it.
    sub = get_subgraph(group)
    assert [v.node.kind() for v in sub.outputs()] == ["aten::sin", "prim::Param"]
    outside = next(n for n in graph.nodes() if n.kind() == "aten::mul")
    assert outside.inputs() == group.outputs()
    assert [v.debug_name() for v in graph.inputs()] == ["x"]  # the pass-through output is unnamed
    x = np.linspace(0.0, 1.0, 9).reshape(3, 3)
    np.testing.assert_allclose(run_graph(graph, [x])[0], np.sin(x) * x)


def test_outputs_aliasing_inputs_or_each_other_leave_the_group() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::t(%a)
  %c : Tensor = aten::t(%x)
  %d : Tensor = aten::cos(%c)
  return (%a, %b, %c, %d)
""")
    group = create_singleton_subgraph(node(graph, "d"), DG)
    for name in ("c", "b", "a"):
        merge_node_into_subgraph(node(graph, name), group)
    assert unmerge_aliased_outputs(group)  # %b aliases %a
    assert unmerge_outputs_aliasing_inputs(group)  # %c aliases %x, cos goes with it
    lint_all(graph)
    inside = sorted(n.kind() for n in get_subgraph(group).nodes())
    assert inside == ["aten::sin"]
    assert not unmerge_aliased_outputs(group) and not unmerge_outputs_aliasing_inputs(group)


def test_slicing_alias_db_follows_torchscript() -> None:
    graph = parse_ir("""graph(%x : Tensor, %y : Tensor, %c : bool):
  %p : Tensor = prim::profile[profiled_type=Double(3, strides=[1], requires_grad=1, device=cpu)](%x)
  %a : Tensor = aten::sin(%y)
  %e : Tensor = aten::cos(%y)
  %r : Tensor = prim::If(%c)
    block0():
       = prim::Print(%y)
      -> (%a)
    block1():
      -> (%a)
  return (%p, %r, %e)
""")
    db = SlicingAliasDb(graph)
    x, y = graph.inputs()[:2]
    assert db.may_alias(x, y)  # two tensor arguments may be one tensor
    assert db.may_alias(node(graph, "p").output(), x)  # a profile hands its input through
    assert not db.has_side_effects(node(graph, "p"))
    # The print inside the branch does not make the if an effect, nor a writer.
    assert not db.has_side_effects(node(graph, "r"))
    assert not db.writes(node(graph, "r"))
    assert db.move_before_topologically_valid(node(graph, "e"), graph.return_node())
    graph.lint()
    assert [n.kind() for n in graph.nodes()][-1] == "aten::cos"
