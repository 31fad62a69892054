"""RemoveExpands: implicit expands (implicit=True) disappear, explicit ones stay."""

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes.remove_expands import remove_expands

from .pass_check import check_pass, kinds

MIXED = """graph(%x : Tensor, %y : Tensor):
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %four : int = prim::Constant[value=4]()
  %size : int[] = prim::ListConstruct(%three, %four)
  %e : Tensor = aten::expand(%x, %size, %true)
  %a : Tensor = aten::add(%e, %y, %one)
  %f : Tensor = aten::expand(%x, %size, %false)
  %m : Tensor = aten::mul(%f, %a)
  return (%m)
"""


def _inputs() -> list:
    return [np.linspace(-1.0, 1.0, 4), np.linspace(0.0, 2.0, 12).reshape(3, 4)]


def test_implicit_expand_is_replaced_by_its_input() -> None:
    graph = check_pass(remove_expands, MIXED, _inputs(), changes=True)
    assert kinds(graph).count("aten::expand") == 1
    text = str(graph)
    assert "aten::add(%x, %y, %one)" in text
    assert "aten::expand(%x, %size, %false)" in text  # the user's own expand stays


def test_implicit_expand_inside_a_block() -> None:
    text = """graph(%x : Tensor, %y : Tensor, %c : bool):
  %true : bool = prim::Constant[value=1]()
  %size : int[] = prim::ListConstruct()
  %r : Tensor = prim::If(%c)
    block0():
      %e : Tensor = aten::expand(%x, %size, %true)
      %t : Tensor = aten::tanh(%e)
      -> (%t)
    block1():
      -> (%y)
  return (%r)
"""
    graph = check_pass(remove_expands, text, [np.float64(0.5) * np.ones(()), np.zeros(()), True], changes=True)
    assert "aten::expand" not in kinds(graph)
    assert "aten::tanh(%x)" in str(graph)


@pytest.mark.parametrize("flag", ["%false", "%flag"])
def test_explicit_or_unknown_expands_are_kept(flag: str) -> None:
    text = f"""graph(%x : Tensor, %flag : bool):
  %false : bool = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %size : int[] = prim::ListConstruct(%two, %three)
  %e : Tensor = aten::expand(%x, %size, {flag})
  return (%e)
"""
    check_pass(remove_expands, text, [np.linspace(1.0, 3.0, 3), True], changes=False)


def test_matches_torch_remove_expands() -> None:
    ours = parse_ir(MIXED)
    assert remove_expands(ours)
    theirs = torch._C.parse_ir(MIXED)
    torch._C._jit_pass_remove_expands(theirs)
    assert kinds(ours) == [n.kind() for n in theirs.nodes()]
    # Same wiring too: the add reads %x where it read the implicit expand.
    add_ours = [n for n in ours.nodes() if n.kind() == "aten::add"][0]
    add_theirs = [n for n in theirs.nodes() if n.kind() == "aten::add"][0]
    assert [v.debug_name() for v in add_ours.inputs()[:2]] == [v.debugName() for v in list(add_theirs.inputs())[:2]]
