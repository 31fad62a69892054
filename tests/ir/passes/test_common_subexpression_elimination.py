import numpy as np

from gradview.ir import parse_ir
from gradview.ir.passes.common_subexpression_elimination import eliminate_common_subexpression

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
Y = np.linspace(0.5, 2.0, 3)


def test_merges_identical_computations() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
"""
    graph = check_pass(eliminate_common_subexpression, text, [X, Y], changes=True)
    assert kinds(graph).count("aten::mul") == 1
    add = next(n for n in graph.nodes() if n.kind() == "aten::add")
    assert add.inputs()[0] is add.inputs()[1]


def test_keeps_different_inputs_and_attributes_apart() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%y, %x)
  %c : Tensor = aten::mul(%x, %x)
  return (%a, %b, %c)
"""
    check_pass(eliminate_common_subexpression, text, [X, Y], changes=False)


def test_inner_block_reuses_outer_but_not_the_reverse() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %a : Tensor = aten::tanh(%x)
  %r : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::tanh(%x)
      %s : Tensor = aten::sigmoid(%x)
      -> (%b)
    block1():
      %s2 : Tensor = aten::sigmoid(%x)
      -> (%s2)
  %s3 : Tensor = aten::sigmoid(%x)
  return (%r, %a, %s3)
"""
    for flag in (True, False):
        graph = check_pass(eliminate_common_subexpression, text, [X, flag], changes=True)
    # tanh inside the branch was merged with the outer one; the sigmoids in the
    # branches and after the If stay (neither dominates another).
    assert kinds(graph).count("aten::tanh") == 1
    assert kinds(graph).count("aten::sigmoid") == 3


def test_leaves_side_effects_and_random_ops_alone() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%x, %p, %t)
  %b : Tensor = aten::dropout(%x, %p, %t)
   = prim::Print(%x)
   = prim::Print(%x)
  return (%a, %b)
""")
    assert eliminate_common_subexpression(graph) is False
    assert kinds(graph).count("aten::dropout") == 2


def test_dropout_in_eval_mode_is_deterministic_and_merged() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::dropout(%x, %p, %f)
  %b : Tensor = aten::dropout(%x, %p, %f)
  return (%a, %b)
""")
    assert eliminate_common_subexpression(graph) is True
    graph.lint()
    assert kinds(graph).count("aten::dropout") == 1
