"""LowerSimpleTuples: tuple readers of a TupleConstruct read the construct's inputs instead."""

from collections import Counter

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes.dead_code_elimination import eliminate_dead_code
from gradview.ir.passes.lower_simple_tuples import lower_simple_tuples

from .pass_check import assert_in_order, check_pass, kinds

UNPACK_AND_INDEX = """graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %y, %z)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::TupleUnpack(%t)
  %one : int = prim::Constant[value=1]()
  %i : Tensor = prim::TupleIndex(%t, %one)
  %minus : int = prim::Constant[value=-1]()
  %j : Tensor = prim::TupleIndex(%t, %minus)
  %p : Tensor = aten::mul(%a, %i)
  %q : Tensor = aten::sub(%j, %c, %one)
  %r : Tensor = aten::add(%p, %b, %one)
  return (%r, %q)
"""


def _three() -> list:
    return [np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4), np.linspace(3.0, -3.0, 4)]


def test_unpack_and_constant_index_read_the_construct_inputs() -> None:
    graph = check_pass(lower_simple_tuples, UNPACK_AND_INDEX, _three(), changes=True)
    # Readers, the tuple and the index constant -1 are gone; %one still has users.
    assert kinds(graph) == ["prim::Constant", "aten::mul", "aten::sub", "aten::add"]
    assert_in_order(str(graph), ["aten::mul(%x, %y)", "aten::sub(%z, %z, %one)", "aten::add(%p, %y, %one)"])


def test_a_tuple_still_used_elsewhere_is_kept() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  %m : Tensor = aten::mul(%a, %b)
  return (%m, %t)
"""
    graph = check_pass(lower_simple_tuples, text, _three()[:2], changes=True)
    assert kinds(graph) == ["prim::TupleConstruct", "aten::mul"]
    assert "aten::mul(%x, %y)" in str(graph)


def test_nested_tuples_and_readers_inside_blocks() -> None:
    text = """graph(%x : Tensor, %y : Tensor, %c : bool):
  %inner : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  %outer : ((Tensor, Tensor), Tensor) = prim::TupleConstruct(%inner, %x)
  %r : Tensor = prim::If(%c)
    block0():
      %pair : (Tensor, Tensor), %w : Tensor = prim::TupleUnpack(%outer)
      %u : Tensor, %v : Tensor = prim::TupleUnpack(%pair)
      %m : Tensor = aten::mul(%u, %v)
      -> (%m)
    block1():
      %zero : int = prim::Constant[value=0]()
      %p : (Tensor, Tensor) = prim::TupleIndex(%outer, %zero)
      %q : Tensor = prim::TupleIndex(%p, %zero)
      -> (%q)
  return (%r)
"""
    for flag in (True, False):
        graph = check_pass(lower_simple_tuples, text, [*_three()[:2], flag], changes=True)
        assert not [k for k in kinds(graph) if k.startswith("prim::Tuple")]
        assert kinds(graph) == ["prim::If", "aten::mul"]


def test_tuple_slice_becomes_a_smaller_construct() -> None:
    text = """graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %y, %z)
  %s : (Tensor, Tensor) = prim::TupleSlice[beg=1, end=3](%t)
  return (%s)
"""
    graph = parse_ir(text)
    assert lower_simple_tuples(graph)
    graph.lint()
    assert kinds(graph) == ["prim::TupleConstruct"]
    assert "%s : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)" in str(graph)


def test_tuple_slice_then_unpack_runs_the_same() -> None:
    text = """graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %y, %z)
  %s : (Tensor, Tensor) = prim::TupleSlice[beg=0, end=2](%t)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%s)
  %m : Tensor = aten::mul(%a, %b)
  return (%m)
"""
    graph = check_pass(lower_simple_tuples, text, _three(), changes=True)
    assert kinds(graph) == ["aten::mul"]


_X, _Y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4)


@pytest.mark.parametrize(("text", "inputs"), [
    pytest.param("""graph(%t : (Tensor, Tensor)):
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  %m : Tensor = aten::mul(%a, %b)
  return (%m)
""", [(_X, _Y)], id="tuple-is-a-graph-input"),
    pytest.param("""graph(%x : Tensor, %y : Tensor, %i : int):
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  %e : Tensor = prim::TupleIndex(%t, %i)
  return (%e)
""", [_X, _Y, 1], id="index-not-constant"),
    pytest.param("""graph(%x : Tensor, %y : Tensor, %c : bool):
  %t : (Tensor, Tensor) = prim::If(%c)
    block0():
      %p : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
      -> (%p)
    block1():
      %q : (Tensor, Tensor) = prim::TupleConstruct(%y, %x)
      -> (%q)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::sub(%a, %b, %one)
  return (%s)
""", [_X, _Y, True], id="tuple-comes-out-of-an-if"),
])
def test_tuples_the_pass_cannot_see_through_are_left_alone(text: str, inputs: list) -> None:
    check_pass(lower_simple_tuples, text, inputs, changes=False)


def test_matches_torch_lower_all_tuples_on_internal_tuples() -> None:
    """On tuples built and read inside the graph, torch's LowerAllTuples (which also
    runs DCE) and this pass followed by DCE leave the same nodes."""
    ours = parse_ir(UNPACK_AND_INDEX)
    assert lower_simple_tuples(ours)
    eliminate_dead_code(ours)
    theirs = torch._C.parse_ir(UNPACK_AND_INDEX)
    torch._C._jit_pass_lower_all_tuples(theirs)
    assert Counter(kinds(ours)) == Counter(n.kind() for n in theirs.nodes())
    assert [n.kind() for n in ours.nodes() if n.kind() != "prim::Constant"] == [
        n.kind() for n in theirs.nodes() if n.kind() != "prim::Constant"
    ]
