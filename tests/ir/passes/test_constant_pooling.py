import numpy as np

from gradview.ir.passes.constant_pooling import constant_pooling

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def test_merges_equal_constants_and_hoists_them() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %a : Tensor = aten::relu(%x)
  %one : int = prim::Constant[value=1]()
  %b : Tensor = aten::add(%a, %x, %one)
  %r : Tensor = prim::If(%c)
    block0():
      %one.2 : int = prim::Constant[value=1]()
      %two : float = prim::Constant[value=2.]()
      %s : Tensor = aten::add(%b, %x, %one.2)
      %t : Tensor = aten::mul(%s, %two)
      -> (%t)
    block1():
      -> (%b)
  return (%r)
"""
    for flag in (True, False):
        graph = check_pass(constant_pooling, text, [X, flag], changes=True)
    assert kinds(graph)[:2] == ["prim::Constant", "prim::Constant"]
    assert kinds(graph).count("prim::Constant") == 2
    top = [n for n in graph.nodes()][:2]
    assert [n.output().debug_name() for n in top] == ["one", "two"]


def test_int_one_and_float_one_stay_distinct() -> None:
    text = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %onef : float = prim::Constant[value=1.]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %one)
  %b : Tensor = aten::mul(%a, %onef)
  return (%b, %t)
"""
    check_pass(constant_pooling, text, [X], changes=False)
