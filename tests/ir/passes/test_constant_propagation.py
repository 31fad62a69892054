import numpy as np

from gradview.ir import TensorConstant, constant_value, parse_ir
from gradview.ir.passes.constant_propagation import constant_propagation

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def test_folds_tensor_arithmetic_on_constants() -> None:
    text = """graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %one : int = prim::Constant[value=1]()
  %ct : Tensor = prim::Constant[value={2.5}]()
  %d : Tensor = aten::mul(%ct, %two)
  %e : Tensor = aten::add(%d, %ct, %one)
  %y : Tensor = aten::mul(%x, %e)
  return (%y)
"""
    graph = check_pass(constant_propagation, text, [X], changes=True)
    assert kinds(graph).count("aten::mul") == 1 and "aten::add" not in kinds(graph)
    mul = next(n for n in graph.nodes() if n.kind() == "aten::mul")
    folded = constant_value(mul.inputs()[1])
    assert isinstance(folded, TensorConstant) and folded.values == (7.5,)


def test_takes_the_branch_of_a_constant_condition() -> None:
    text = """graph(%x : Tensor):
  %c : bool = prim::Constant[value=0]()
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::tanh(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::sigmoid(%x)
      -> (%b)
  return (%r)
"""
    graph = check_pass(constant_propagation, text, [X], changes=True)
    assert kinds(graph) == ["prim::Constant", "aten::sigmoid"]


def test_leaves_values_that_depend_on_inputs() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %one)
  %r : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%x)
  return (%r)
"""
    check_pass(constant_propagation, text, [X, True], changes=False)


def test_does_not_fold_random_or_side_effecting_nodes() -> None:
    graph = parse_ir("""graph():
  %ct : Tensor = prim::Constant[value={2.5}]()
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%ct, %p, %t)
   = prim::Print(%ct)
  return (%a)
""")
    assert constant_propagation(graph) is False
    assert "aten::dropout" in kinds(graph)


def test_an_op_that_fails_on_constants_is_left_for_run_time() -> None:
    graph = parse_ir("""graph():
  %a : Tensor = prim::Constant[value= 1  2 [ CPUDoubleType{2} ]]()
  %b : Tensor = prim::Constant[value= 1  2  3 [ CPUDoubleType{3} ]]()
  %c : Tensor = aten::mul(%a, %b)
  return (%c)
""")
    assert constant_propagation(graph) is False
    assert "aten::mul" in kinds(graph)
