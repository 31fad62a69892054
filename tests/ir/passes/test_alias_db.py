import numpy as np
import pytest

from gradview.ir import parse_ir, register_schema
from gradview.ir.passes.alias_db import AliasDb
from gradview.runtime import run_graph

from .pass_check import assert_same_outputs

register_schema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")

CHAIN = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::sigmoid(%y)
  %c : Tensor = aten::mul(%a, %x)
  %d : Tensor = aten::relu(%b)
  %e : Tensor = aten::mul(%c, %d)
  return (%e)
"""


def by_name(graph, name):
    return graph.value_by_name(name).node


def order(graph):
    return [n.output().debug_name() for n in graph.nodes()]


def check_same_meaning(text, graph):
    inputs = [np.linspace(-1, 1, 4), np.linspace(0.5, 2, 4)]
    assert_same_outputs(run_graph(parse_ir(text), inputs), run_graph(graph, inputs))


def test_view_outputs_alias_their_input_and_math_outputs_do_not() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %t : Tensor = aten::t(%x)
  %u : Tensor = aten::tanh(%x)
  %l : Tensor[] = prim::ListConstruct(%u)
  return (%t, %l)
""")
    db = AliasDb(graph)
    x, t, u, lst = (graph.value_by_name(n) for n in ("x", "t", "u", "l"))
    assert db.may_alias(x, t)
    assert not db.may_alias(x, u)
    assert db.may_alias(u, lst)  # a list holds its elements


def test_in_place_ops_write_and_have_writers() -> None:
    graph = parse_ir("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %v : Tensor = aten::t(%x)
  %w : Tensor = aten::add_(%v, %y, %one)
  %z : Tensor = aten::tanh(%y)
  return (%w, %z)
""")
    db = AliasDb(graph)
    assert db.is_mutating(by_name(graph, "w"))
    assert db.has_writers(graph.value_by_name("x"))  # written through the view %v
    assert not db.has_writers(graph.value_by_name("y"))
    assert not db.is_mutating(by_name(graph, "z"))


def test_move_up_past_independent_nodes() -> None:
    graph = parse_ir(CHAIN)
    db = AliasDb(graph)
    assert db.move_before_topologically_valid(by_name(graph, "b"), by_name(graph, "a"))
    graph.lint()
    assert order(graph) == ["b", "a", "c", "d", "e"]
    check_same_meaning(CHAIN, graph)


def test_moving_up_brings_the_nodes_it_needs() -> None:
    graph = parse_ir(CHAIN)
    db = AliasDb(graph)
    # %d needs %b, which comes along above %a.
    assert db.move_before_topologically_valid(by_name(graph, "d"), by_name(graph, "a"))
    graph.lint()
    assert order(graph) == ["b", "d", "a", "c", "e"]
    check_same_meaning(CHAIN, graph)


def test_move_down_sends_dependents_past_the_target() -> None:
    graph = parse_ir(CHAIN)
    db = AliasDb(graph)
    # %a moves to just before %e; %c needs %a, so it goes after... %e needs %c:
    # impossible, nothing changes.
    before = order(graph)
    assert not db.move_before_topologically_valid(by_name(graph, "a"), by_name(graph, "e"))
    assert order(graph) == before
    # %b can move down to just before %d; nothing between them depends on it.
    assert db.move_before_topologically_valid(by_name(graph, "b"), by_name(graph, "d"))
    graph.lint()
    assert order(graph) == ["a", "c", "b", "d", "e"]
    check_same_meaning(CHAIN, graph)


def test_move_after_target() -> None:
    graph = parse_ir(CHAIN)
    db = AliasDb(graph)
    assert db.move_after_topologically_valid(by_name(graph, "a"), by_name(graph, "d"))
    graph.lint()
    # %c needed %a, so both go after %d, in order.
    assert order(graph) == ["b", "d", "a", "c", "e"]
    check_same_meaning(CHAIN, graph)


def test_a_user_cannot_move_above_its_input() -> None:
    graph = parse_ir(CHAIN)
    db = AliasDb(graph)
    before = order(graph)
    assert not db.move_before_topologically_valid(by_name(graph, "c"), by_name(graph, "a"))
    assert order(graph) == before


@pytest.mark.parametrize("target", ["r", "w"])
def test_no_reordering_across_a_write_to_the_same_memory(target: str) -> None:
    graph = parse_ir("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::tanh(%x)
  %w : Tensor = aten::add_(%x, %y, %one)
  %s : Tensor = aten::sigmoid(%x)
  return (%r, %w, %s)
""")
    db = AliasDb(graph)
    before = order(graph)
    moving = by_name(graph, "s")
    assert not db.move_before_topologically_valid(moving, by_name(graph, target))
    assert order(graph) == before


def test_nodes_with_side_effects_do_not_move() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %a : Tensor = aten::tanh(%x)
   = prim::Print(%x)
  %b : Tensor = aten::sigmoid(%x)
  return (%a, %b)
""")
    db = AliasDb(graph)
    assert not db.move_before_topologically_valid(by_name(graph, "b"), by_name(graph, "a"))


def test_a_value_returned_by_a_branch_counts_as_used_by_the_if() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %a : Tensor = aten::tanh(%x)
  %r : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%x)
  %b : Tensor = aten::sigmoid(%r)
  return (%b)
"""
    graph = parse_ir(text)
    db = AliasDb(graph)
    # Moving %a below the if would leave the branch returning an undefined
    # value: the if must travel past %b with it, and %b needs the if.
    assert not db.move_before_topologically_valid(by_name(graph, "a"), by_name(graph, "b"))
    graph.lint()
