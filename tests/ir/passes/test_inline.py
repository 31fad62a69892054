"""Inline: calls of functions whose body is attached to the Function constant are pasted in.

The interpreter cannot run ``prim::CallFunction``, so the positive cases compare the
inlined graph with the same computation run through the callee graph directly.
"""

from collections import Counter

import numpy as np
import pytest
import torch

from gradview.ir import FunctionType, Graph, parse_ir
from gradview.ir.passes.inline import InlineError, inline
from gradview.runtime import run_graph

from .pass_check import assert_same_outputs, check_pass, kinds

CALLEE = """graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%a, %b)
  %s : Tensor = aten::add(%m, %a, %one)
  return (%s, %m)
"""

CALLER = """graph(%x : Tensor, %y : Tensor):
  %f : Function = prim::Constant_0[name="mul_add"]()
  %p : Tensor, %q : Tensor = prim::CallFunction(%f, %x, %y)
  %r : Tensor, %w : Tensor = prim::CallFunction(%f, %p, %q)
  %t : Tensor = aten::tanh(%r)
  return (%t, %q)
with prim::Constant_0 = graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%a, %b)
  %s : Tensor = aten::add(%m, %a, %one)
  return (%s, %m)
"""


def _xy() -> list:
    return [np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)]


def _inline_checked(text: str) -> Graph:
    graph = parse_ir(text)
    printed = str(graph)
    assert inline(graph)
    graph.lint()
    assert str(graph) != printed
    assert "prim::CallFunction" not in kinds(graph)
    return graph


def test_calls_are_replaced_by_the_body() -> None:
    graph = _inline_checked(CALLER)
    assert kinds(graph) == ["prim::Constant"] + ["prim::Constant", "aten::mul", "aten::add"] * 2 + ["aten::tanh"]
    text = str(graph)
    # The call's results keep the caller's names; the function constant stays for DCE.
    assert "%q : Tensor = aten::mul(%x, %y)" in text
    assert "%p : Tensor = aten::add(%q, %x, %one" in text
    assert 'prim::Constant_0[name="mul_add"]()' in text
    x, y = _xy()
    body = parse_ir(CALLEE)
    p, q = run_graph(body, [x, y])
    (r, _) = run_graph(body, [p, q])
    assert_same_outputs(run_graph(graph, [x, y]), [np.tanh(r), q])


def test_nested_calls_and_calls_inside_blocks_are_inlined() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %outer : Function = prim::Constant_0[name="outer"]()
  %r : Tensor = prim::If(%c)
    block0():
      %v : Tensor = prim::CallFunction(%outer, %x)
      -> (%v)
    block1():
      -> (%x)
  return (%r)
with prim::Constant_0 = graph(%a : Tensor):
  %inner : Function = prim::Constant_0[name="inner"]()
  %b : Tensor = prim::CallFunction(%inner, %a)
  %e : Tensor = aten::exp(%b)
  return (%e)
  with prim::Constant_0 = graph(%z : Tensor):
    %s : Tensor = aten::sigmoid(%z)
    return (%s)
"""
    graph = _inline_checked(text)
    assert [k for k in kinds(graph) if k != "prim::Constant"] == ["prim::If", "aten::sigmoid", "aten::exp"]
    x = np.linspace(-2.0, 2.0, 4)
    assert_same_outputs(run_graph(graph, [x, True]), [np.exp(1.0 / (1.0 + np.exp(-x)))])
    assert_same_outputs(run_graph(graph, [x, False]), [x])


def test_a_body_that_returns_its_input_keeps_the_callers_names() -> None:
    text = """graph(%x : Tensor):
  %f : Function = prim::Constant_0[name="identity"]()
  %y : Tensor = prim::CallFunction(%f, %x)
  %z : Tensor = aten::relu(%y)
  return (%z)
with prim::Constant_0 = graph(%a : Tensor):
  return (%a)
"""
    graph = _inline_checked(text)
    assert "%z : Tensor = aten::relu(%x)" in str(graph)
    assert [v.debug_name() for v in graph.inputs()] == ["x"]


def test_graph_without_calls_is_unchanged() -> None:
    check_pass(inline, CALLEE, _xy(), changes=False)


def test_call_without_a_body_is_left_alone() -> None:
    text = """graph(%x : Tensor):
  %f : Function = prim::Constant[name="unknown"]()
  %y : Tensor = prim::CallFunction(%f, %x)
  return (%y)
"""
    graph = parse_ir(text)
    printed = str(graph)
    assert not inline(graph)
    graph.lint()
    assert str(graph) == printed


def _function_constant(graph: Graph, name: str, body: Graph) -> object:
    node = graph.create("prim::Constant")
    node.output().set_type(FunctionType())
    node.s_("name", name)
    node.g_("Subgraph", body)
    graph.prepend_node(node)
    return node.output()


def _return_call(graph: Graph, name: str, callee: Graph, arg: object) -> None:
    """Make ``graph`` return ``name(arg)``: a prim::CallFunction of ``callee``
    placed last, whose output replaces the graph's first output."""
    fn = _function_constant(graph, name, callee)
    call = graph.create("prim::CallFunction", [fn, arg])
    call.insert_before(graph.return_node())
    graph.block.replace_output(0, call.output())


def test_recursive_functions_raise_a_clear_error() -> None:
    # even(x) calls odd(x), which calls even(x) again: built by hand, since
    # the bodies refer to each other.
    even = parse_ir("graph(%a : Tensor):\n  %r : Tensor = aten::relu(%a)\n  return (%r)\n")
    odd = parse_ir("graph(%a : Tensor):\n  %r : Tensor = aten::tanh(%a)\n  return (%r)\n")
    for body, callee, name in ((even, odd, "odd"), (odd, even, "even")):
        _return_call(body, name, callee, body.outputs()[0])
    top = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::exp(%x)\n  return (%y)\n")
    _return_call(top, "even", even, top.inputs()[0])
    top.lint()
    with pytest.raises(InlineError, match=r"function 'even' calls itself \('even' -> 'odd' -> 'even'\)"):
        inline(top)
    # Nothing was inlined before the error (the graphs cannot be printed: they refer to each other).
    assert kinds(top) == ["prim::Constant", "aten::exp", "prim::CallFunction"]


def test_function_calling_itself_directly() -> None:
    body = parse_ir("graph(%a : Tensor):\n  %r : Tensor = aten::relu(%a)\n  return (%r)\n")
    _return_call(body, "loop", body, body.outputs()[0])
    top = parse_ir("graph(%x : Tensor):\n  return (%x)\n")
    _return_call(top, "loop", body, top.inputs()[0])
    with pytest.raises(InlineError, match=r"function 'loop' calls itself \('loop' -> 'loop'\)"):
        inline(top)


def test_arity_mismatch_is_an_error() -> None:
    text = CALLER.replace("prim::CallFunction(%f, %p, %q)", "prim::CallFunction(%f, %p)")
    with pytest.raises(InlineError, match="takes 2 inputs"):
        inline(parse_ir(text))


@torch.jit.script
def _scale(a: torch.Tensor) -> torch.Tensor:
    return a * 2


@torch.jit.script
def _scale_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _scale(a) + b


@torch.jit.script
def _twice(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = _scale_add(x, y)
    return _scale_add(z, y)


def _gradview_graph(fn: torch.jit.ScriptFunction, bodies: dict[str, Graph]) -> Graph:
    """``fn``'s torch graph in gradview, with the named callees' bodies attached."""
    graph = parse_ir(str(fn.graph))
    for node in graph.nodes():
        if node.kind() == "prim::Constant" and node.output().type() == FunctionType():
            node.g_("Subgraph", bodies[node.s("name")])
    return graph


def test_matches_torch_inline_on_scripted_functions() -> None:
    scale = _gradview_graph(_scale, {})
    scale_add = _gradview_graph(_scale_add, {"_scale": scale})
    ours = _gradview_graph(_twice, {"_scale_add": scale_add})
    assert inline(ours)
    ours.lint()
    theirs = _twice.graph.copy()
    torch._C._jit_pass_inline(theirs)
    # torch pools the callee's constants, so compare the kinds as a multiset and
    # the computing nodes in order.
    assert Counter(kinds(ours)) == Counter(n.kind() for n in theirs.nodes())
    assert [k for k in kinds(ours) if k != "prim::Constant"] == [
        n.kind() for n in theirs.nodes() if n.kind() != "prim::Constant"
    ]
    x, y = _xy()
    expected = _twice(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert_same_outputs(run_graph(ours, [x, y]), [expected])
