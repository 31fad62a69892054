"""LowerGradOf: GradOf nodes become If(AutogradAnyNonZero) with an AutogradZero else branch."""

import numpy as np

from gradview.ir import BoolType, parse_ir
from gradview.ir.passes.lower_grad_of import lower_grad_of
from gradview.runtime import run_graph

from .pass_check import assert_in_order, assert_same_outputs, check_pass, kinds

TWO_OUTPUTS = """graph(%g : Tensor, %x : Tensor, %y : Tensor):
  %dx : Tensor, %dy : Tensor = prim::GradOf[name="aten::mul"](%g)
    block0():
      %t : Tensor = aten::mul(%g, %y)
      %u : Tensor = aten::mul(%g, %x)
      -> (%t, %u)
  %s : Tensor = aten::tanh(%x)
  return (%dx, %dy, %s)
"""


def _inputs(defined_grad: bool) -> list:
    grad = np.linspace(-1.0, 2.0, 4) if defined_grad else None
    return [grad, np.linspace(0.5, 1.5, 4), np.linspace(-2.0, 1.0, 4)]


def test_grad_of_becomes_if_on_any_defined_gradient() -> None:
    for defined in (True, False):
        graph = check_pass(lower_grad_of, TWO_OUTPUTS, _inputs(defined), changes=True)
        assert "prim::GradOf" not in kinds(graph)
        assert_in_order(str(graph), [
            "bool = prim::AutogradAnyNonZero(%g)",
            "%dx : Tensor, %dy : Tensor = prim::If(",
            "block0():", "aten::mul(%g, %y)", "aten::mul(%g, %x)", "-> (%t, %u)",
            "block1():", "= prim::AutogradZero()", "-> (%",
            "aten::tanh(%x)",
        ])


def test_else_branch_returns_one_autograd_zero_per_output_with_types_copied() -> None:
    graph = parse_ir(TWO_OUTPUTS.replace("%dx : Tensor, %dy : Tensor", "%dx : Double(4), %dy : Double(4)"))
    assert lower_grad_of(graph)
    graph.lint()
    (if_node,) = [n for n in graph.nodes() if n.kind() == "prim::If"]
    assert if_node.input().type() == BoolType()
    assert if_node.input().node.kind() == "prim::AutogradAnyNonZero"
    assert [str(v.type()) for v in if_node.outputs()] == ["Double(4)", "Double(4)"]
    assert [v.debug_name() for v in if_node.outputs()] == ["dx", "dy"]
    else_block = if_node.blocks()[1]
    (zero,) = list(else_block.nodes())
    assert zero.kind() == "prim::AutogradZero"
    assert else_block.outputs() == [zero.output(), zero.output()]


def test_nested_grad_of_inside_if_and_inside_grad_of_are_lowered() -> None:
    text = """graph(%g : Tensor, %h : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = prim::GradOf[name="outer"](%g, %h)
        block0():
          %b : Tensor = prim::GradOf[name="inner"](%h)
            block0():
              %e : Tensor = aten::exp(%h)
              -> (%e)
          %m : Tensor = aten::mul(%g, %g)
          -> (%m)
      -> (%a)
    block1():
      -> (%g)
  return (%r)
"""
    inputs = [np.linspace(-1.0, 1.0, 3), np.linspace(0.0, 2.0, 3), True]
    graph = check_pass(lower_grad_of, text, inputs, changes=True)
    assert "prim::GradOf" not in kinds(graph)
    assert kinds(graph).count("prim::AutogradAnyNonZero") == 2
    # The inner GradOf had an unused output: it is lowered, not deleted (that is DCE's job).
    assert kinds(graph).count("prim::If") == 3
    for undefined in ([None, None, True], [None, np.ones(3), False]):
        assert_same_outputs(run_graph(parse_ir(text), undefined), run_graph(graph, undefined))


def test_grad_of_without_outputs_needs_no_autograd_zero() -> None:
    text = """graph(%g : Tensor):
   = prim::GradOf[name="nothing"](%g)
    block0():
      -> ()
  return (%g)
"""
    graph = check_pass(lower_grad_of, text, [np.ones(2)], changes=True)
    assert kinds(graph) == ["prim::AutogradAnyNonZero", "prim::If"]


def test_graph_without_grad_of_is_unchanged() -> None:
    text = """graph(%g : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::tanh(%g)
      -> (%t)
    block1():
      -> (%g)
  return (%r)
"""
    check_pass(lower_grad_of, text, [np.linspace(-1.0, 1.0, 5), False], changes=False)
