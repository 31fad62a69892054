import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.ir.passes.dead_code_elimination import eliminate_dead_code

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def test_removes_unused_nodes() -> None:
    text = """graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::relu(%x)
  %c : Tensor = aten::sigmoid(%b)
  return (%a)
"""
    graph = check_pass(eliminate_dead_code, text, [X], changes=True)
    assert kinds(graph) == ["aten::mul"]


def test_keeps_a_graph_where_everything_is_used() -> None:
    text = """graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::relu(%a)
  return (%b, %a)
"""
    check_pass(eliminate_dead_code, text, [X], changes=False)


def test_keeps_side_effects_even_when_unused() -> None:
    text = """graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
   = prim::Print(%a)
  return (%x)
"""
    graph = parse_ir(text)
    assert eliminate_dead_code(graph) is False
    assert kinds(graph) == ["aten::mul", "prim::Print"]


def test_trims_unused_if_outputs_in_both_branches() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %r : Tensor, %dead : Tensor = prim::If(%c)
    block0():
      %s : Tensor = aten::sigmoid(%x)
      %u : Tensor = aten::tanh(%x)
      -> (%s, %u)
    block1():
      %v : Tensor = aten::relu(%x)
      -> (%x, %v)
  return (%r)
"""
    for flag in (True, False):
        graph = check_pass(eliminate_dead_code, text, [X, flag], changes=True)
    if_node = next(n for n in graph.nodes() if n.kind() == "prim::If")
    assert len(if_node.outputs()) == 1
    assert kinds(graph) == ["prim::If", "aten::sigmoid"]


def test_stops_carrying_dead_loop_values_but_keeps_needed_ones() -> None:
    # %q is carried but never read after the loop nor by anything live:
    # it goes. %p feeds the result. %k is only read by the body itself in the
    # next iteration, through %p's update: it stays.
    text = """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %p : Tensor, %q : Tensor, %k : Tensor = prim::Loop(%n, %t, %x, %x, %x)
    block0(%i : int, %p1 : Tensor, %q1 : Tensor, %k1 : Tensor):
      %p2 : Tensor = aten::add(%p1, %k1, %one)
      %q2 : Tensor = aten::mul(%q1, %p1)
      %k2 : Tensor = aten::sigmoid(%k1)
      -> (%t, %p2, %q2, %k2)
  return (%p)
"""
    graph = check_pass(eliminate_dead_code, text, [X, 3], changes=True)
    loop = next(n for n in graph.nodes() if n.kind() == "prim::Loop")
    assert len(loop.outputs()) == 2
    assert [v.debug_name() for v in loop.blocks()[0].inputs()] == ["i", "p1", "k1"]
    assert "aten::mul" not in kinds(graph)


def test_live_values_callback_sees_the_survivors() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::relu(%x)
  return (%a)
""")
    seen: list[set[str]] = []
    eliminate_dead_code(graph, lambda live: seen.append({v.debug_name() for v in live}))
    assert seen == [{"x", "a"}]


@pytest.mark.parametrize("nodes", [10, 2000])
def test_long_dead_chain_is_removed(nodes: int) -> None:
    lines = ["graph(%x : Tensor):", "  %v0 : Tensor = aten::relu(%x)"]
    lines += [f"  %v{i} : Tensor = aten::tanh(%v{i - 1})" for i in range(1, nodes)]
    lines.append("  return (%x)")
    graph = parse_ir("\n".join(lines) + "\n")
    assert eliminate_dead_code(graph)
    graph.lint()
    assert kinds(graph) == []
