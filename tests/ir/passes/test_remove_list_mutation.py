"""RemoveListMutation: appends, inserts and stores right after a ListConstruct fold into it."""

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes.dead_code_elimination import eliminate_dead_code
from gradview.ir.passes.remove_list_mutation import remove_list_mutation

from .pass_check import check_pass, kinds

APPEND_AND_SET = """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::mul(%x, %y)
  %l : Tensor[] = prim::ListConstruct(%x)
  %w : Tensor = aten::relu(%y)
  %a : Tensor[] = aten::append(%l, %w)
  %zero : int = prim::Constant[value=0]()
  %s : Tensor[] = aten::_set_item(%l, %zero, %z)
  %r : Tensor = aten::cat(%l, %zero)
  return (%r, %a)
"""


def _xy() -> list:
    return [np.linspace(-1.0, 1.0, 3), np.linspace(0.5, 2.0, 3)]


def test_append_and_constant_store_fold_into_the_construct() -> None:
    graph = check_pass(remove_list_mutation, APPEND_AND_SET, _xy(), changes=True)
    assert kinds(graph) == ["aten::mul", "aten::relu", "prim::Constant", "prim::ListConstruct", "aten::cat"]
    text = str(graph)
    # The construct moved down past %w and %zero; the append's result is the list itself.
    assert "%l : Tensor[] = prim::ListConstruct(%z, %w)" in text
    assert "return (%r, %l)" in text


def test_several_appends_and_inserts_in_order() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %minus : int = prim::Constant[value=-1]()
  %far : int = prim::Constant[value=10]()
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor = aten::exp(%x)
  %1 : Tensor[] = aten::append(%l, %a)
  %b : Tensor = aten::tanh(%y)
  %2 : Tensor[] = aten::append(%l, %b)
  aten::insert(%l, %zero, %y)
  aten::insert(%l, %minus, %x)
  aten::insert(%l, %far, %a)
  %r : Tensor = aten::cat(%l, %zero)
  return (%r)
"""
    text = text.replace("  aten::insert", "   = aten::insert")
    graph = check_pass(remove_list_mutation, text, _xy(), changes=True)
    assert "aten::append" not in kinds(graph) and "aten::insert" not in kinds(graph)
    assert "%l : Tensor[] = prim::ListConstruct(%y, %a, %x, %b, %a)" in str(graph)


def test_mutation_inside_a_loop_body_with_its_own_list() -> None:
    text = """graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %l : Tensor[] = prim::ListConstruct(%acc)
      %t : Tensor = aten::tanh(%acc)
      %1 : Tensor[] = aten::append(%l, %t)
      %c : Tensor = aten::cat(%l, %zero)
      -> (%true, %c)
  return (%r)
"""
    graph = check_pass(remove_list_mutation, text, [np.linspace(-1.0, 1.0, 2), 3], changes=True)
    assert "aten::append" not in kinds(graph)
    assert "prim::ListConstruct(%acc, %t)" in str(graph)


@pytest.mark.parametrize("text", [
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %first : Tensor = aten::cat(%l, %zero)
  %w : Tensor = aten::relu(%y)
  %a : Tensor[] = aten::append(%l, %w)
  %r : Tensor = aten::cat(%l, %zero)
  return (%r, %first)
""", id="list-read-before-the-append"),
    pytest.param("""graph(%x : Tensor, %y : Tensor, %c : bool):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
   = prim::If(%c)
    block0():
      %a : Tensor[] = aten::append(%l, %y)
      -> ()
    block1():
      -> ()
  %r : Tensor = aten::cat(%l, %zero)
  return (%r)
""", id="append-in-another-block"),
    pytest.param("""graph(%x : Tensor, %y : Tensor, %i : int):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %s : Tensor[] = aten::_set_item(%l, %i, %y)
  %r : Tensor = aten::cat(%l, %zero)
  return (%r)
""", id="store-at-unknown-index"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %r : Tensor = aten::cat(%l, %zero)
  return (%r)
""", id="no-mutation"),
])
def test_mutations_that_cannot_be_folded_are_kept(text: str) -> None:
    inputs = _xy()
    if "%c : bool" in text:
        inputs.append(True)
    elif "%i : int" in text:
        inputs.append(1)
    check_pass(remove_list_mutation, text, inputs, changes=False)


def test_list_passed_in_is_not_touched() -> None:
    text = """graph(%l : Tensor[], %y : Tensor):
  %a : Tensor[] = aten::append(%l, %y)
  return (%a)
"""
    graph = parse_ir(text)
    assert not remove_list_mutation(graph)
    assert str(graph) == str(parse_ir(text))


@pytest.mark.parametrize("text", [
    APPEND_AND_SET.replace("return (%r, %a)", "return (%r)"),
    """graph(%x : Tensor, %y : Tensor):
  %l : Tensor[] = prim::ListConstruct(%x)
  %n : int = aten::len(%l)
  %w : Tensor = aten::relu(%y)
  %a : Tensor[] = aten::append(%l, %w)
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = aten::cat(%l, %zero)
  return (%r, %n)
""",
])
def test_matches_torch_remove_mutation_on_lists(text: str) -> None:
    """torch's RemoveMutation (lists and tensors, then DCE) on list-only graphs."""
    ours = parse_ir(text)
    remove_list_mutation(ours)
    eliminate_dead_code(ours)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_remove_mutation(theirs)
    assert kinds(ours) == [n.kind() for n in theirs.nodes()]
