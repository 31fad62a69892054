"""PropagateRequiresGrad: flags checked against eager PyTorch and on hand-written graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import TensorType, parse_ir
from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from gradview.ir.passes.propagate_requires_grad import propagate_requires_grad

from .pass_check import check_pass, long_chain

# -- against eager PyTorch: which results of a scripted function require grad ---------------------


@torch.jit.script
def mixed(x, y, i, n: int, flag: bool):
    if flag:  # noqa: SIM108 - written out to read like the prim::If it becomes
        z = x + y
    else:
        z = i.float()
    acc = y
    for _ in range(n):
        acc = acc * x
    m, idx = x.max(0)
    a, b = torch.chunk(x, 2)
    pair = (x, y)
    first = pair[0]
    return (z, acc, x > 0, x.detach(), m, idx, a, i + 1, y.type_as(x), x.type_as(y),
            torch.zeros_like(x), first, torch.cat([x, y]), x.argmax(), (x * 2).sum(), y.sin())


@torch.jit.script
def late_grad(x, y, n: int):
    # The carried value only picks up a gradient in the second iteration.
    a = y
    b = y
    for _ in range(n):
        a = b
        b = x * 2
    c = torch.zeros_like(y)
    if n > 100:
        c = x
    return a, b, c, x.int(), torch.sort(x)[1], (x + y).size(0)


@torch.jit.script
def in_place(x, y):
    # In-place writes give a tensor a gradient after it was made.
    c = torch.zeros_like(y)
    c.add_(x)
    d = y * 2
    d.requires_grad_(True)
    z = y * 1
    z.view(-1).mul_(x.view(-1))  # writing through a view reaches z
    pair = [y * 1, y * 2]
    pair[1].add_(x)  # and writing through a list element reaches the list (all of it:
    # pair[0] is then taken to require grad too, which is safe but not exact)
    return c, d, c * 3, y * 3, x.detach(), z, z + 1, pair[1], torch.cat(pair)


# Each function runs with arguments that take every branch and loop count; a
# result statically requires grad exactly when some run gives it a gradient.
CASES = [
    (mixed, [lambda x, y, i: (x, y, i, 2, True), lambda x, y, i: (x, y, i, 0, False)]),
    (late_grad, [lambda x, y, i, n=n: (x, y, n) for n in (0, 1, 3, 101)]),
    (in_place, [lambda x, y, i: (x, y)]),
]


@pytest.mark.parametrize(("fn", "variants"), CASES, ids=["mixed", "late_grad", "in_place"])
@pytest.mark.parametrize("with_shapes", [True, False], ids=["shapes", "no-shapes"])
def test_matches_eager_autograd(fn, variants, with_shapes):
    x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    y = torch.randn(2, 3, dtype=torch.double)
    i = torch.arange(6).view(2, 3)
    runs = [fn(*make(x, y, i)) for make in variants]
    torch_graph = fn.graph.copy()
    for value, arg in zip(torch_graph.inputs(), variants[0](x, y, i), strict=True):
        if isinstance(arg, torch.Tensor):
            value.setType(torch._C.TensorType.create_from_tensor(arg))
    graph = parse_ir(str(torch_graph))
    if with_shapes:
        propagate_input_shapes(graph)
    assert propagate_requires_grad(graph) is True
    graph.lint()
    returned = graph.outputs()[0].node.inputs()
    for index, value in enumerate(returned):
        results = [run[index] for run in runs]
        if isinstance(results[0], torch.Tensor):
            t = value.type()
            assert isinstance(t, TensorType) and t.requires_grad is not None, value
            expected = any(r.requires_grad for r in results)
            if with_shapes:
                assert t.requires_grad == expected, f"result {index} %{value.debug_name()}: {t}"
            else:
                # Without dtypes (x.int() is just a Tensor) the pass may only err on the safe side.
                assert t.requires_grad or not expected, f"result {index} %{value.debug_name()}: {t}"
    assert propagate_requires_grad(graph) is False


# -- changes it must make, and graphs it must leave alone --------------------------------------------

BASIC = """graph(%x : Double(3, strides=[1], requires_grad=1, device=cpu),
      %w : Double(3, strides=[1], requires_grad=0, device=cpu),
      %i : Long(3, strides=[1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::mul(%x, %w)
  %v : Tensor = aten::mul(%w, %w)
  %m : Tensor = aten::gt(%y, %v)
  %j : Tensor = aten::add(%i, %i, %one)
  %f : Tensor = aten::mul(%w, %i)
  %values : Tensor, %indices : Tensor = aten::max(%y, %zero, %false)
  %d : Tensor = aten::detach(%y)
  %t : Tensor = aten::type_as(%w, %x)
  %u : Tensor = aten::type_as(%x, %w)
  %z : Tensor = aten::zeros_like(%x, %zero, %zero, %zero, %false, %zero)
  return (%y, %v, %m, %j, %f, %values, %indices, %d, %t, %u)
"""


def _flags(graph):
    return [v.type().requires_grad for v in graph.outputs()]


def _basic_inputs():
    return [np.arange(3.0), np.ones(3), np.arange(3)]


def test_sets_flags():
    text = BASIC.replace("%zero, %zero, %zero, %false, %zero)", "%none, %none, %none, %none, %none)").replace(
        "  %y : Tensor", "  %none : NoneType = prim::Constant()\n  %y : Tensor")
    graph = check_pass(propagate_requires_grad, text, _basic_inputs(), changes=True)
    assert _flags(graph) == [True, False, False, False, False, True, False, False, False, True]
    z = graph.value_by_name("z")
    assert z.type().requires_grad is False


def test_unknown_flags_count_as_requiring_grad():
    text = BASIC.replace("Double(3, strides=[1], requires_grad=0, device=cpu)", "Tensor").replace(
        "Long(3, strides=[1], requires_grad=0, device=cpu)", "Long(3, strides=[1], device=cpu)")
    text = text.replace("  %z : Tensor = aten::zeros_like(%x, %zero, %zero, %zero, %false, %zero)\n", "")
    graph = check_pass(propagate_requires_grad, text, _basic_inputs(), changes=True)
    # %w may require grad now; %i is an integer tensor, which never does.
    assert _flags(graph) == [True, True, False, False, True, True, False, False, True, True]
    assert graph.inputs()[1].type() == TensorType()  # graph inputs keep their declared types


def test_leaves_a_propagated_graph_alone():
    graph = parse_ir(BASIC.replace("  %z : Tensor = aten::zeros_like(%x, %zero, %zero, %zero, %false, %zero)\n", ""))
    propagate_requires_grad(graph)
    check_pass(propagate_requires_grad, str(graph), _basic_inputs(), changes=False)


def test_leaves_a_graph_without_tensor_results_alone():
    text = """graph(%x : Double(3, strides=[1], requires_grad=1, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%x, %zero)
  %two : int = aten::mul(%n, %n)
  return (%two)
"""
    check_pass(propagate_requires_grad, text, [np.ones(3)], changes=False)


LOOP = """graph(%x : Double(2, strides=[1], requires_grad=1, device=cpu),
      %y : Double(2, strides=[1], requires_grad=0, device=cpu),
      %n : int, %flag : bool):
  %true : bool = prim::Constant[value=1]()
  %a : Tensor, %b : Tensor = prim::Loop(%n, %true, %y, %y)
    block0(%i : int, %pa : Tensor, %pb : Tensor):
      %next_b : Tensor = aten::mul(%x, %x)
      -> (%true, %pb, %next_b)
  %c : Tensor = prim::If(%flag)
    block0():
      -> (%y)
    block1():
      %s : Tensor = aten::sin(%x)
      -> (%s)
  %d : Tensor = prim::If(%flag)
    block0():
      %e : Tensor = aten::cos(%y)
      -> (%e)
    block1():
      -> (%y)
  return (%a, %b, %c, %d)
"""


@pytest.mark.parametrize("flag", [True, False])
def test_loop_reaches_a_fixpoint_and_if_takes_either_branch(flag):
    inputs = [np.ones(2), np.zeros(2), 3, flag]
    graph = check_pass(propagate_requires_grad, LOOP, inputs, changes=True)
    # %a only receives %b's value on the second iteration, yet must require grad.
    assert _flags(graph) == [True, True, True, False]
    body = graph.outputs()[0].node.blocks()[0]
    assert [p.type().requires_grad for p in body.inputs()[1:]] == [True, True]


def test_a_long_chain_propagates():
    text = long_chain("Float(8, strides=[1], requires_grad=1, device=cpu)", "Float(8, strides=[1], device=cpu)")
    graph = parse_ir(text)
    assert propagate_requires_grad(graph) is True
    assert all(n.output().type().requires_grad for n in graph.nodes() if n.kind() != "prim::Constant")


def test_a_list_that_grows_is_not_trusted():
    text = """graph(%x : Double(2, strides=[1], requires_grad=1, device=cpu),
      %y : Double(2, strides=[1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%y)
  %l2 : Tensor[] = aten::append(%l, %x)
  %c : Tensor = aten::cat(%l, %zero)
  %fixed : Tensor[] = prim::ListConstruct(%y, %y)
  %d : Tensor = aten::cat(%fixed, %zero)
  return (%c, %d)
"""
    graph = check_pass(propagate_requires_grad, text, [np.ones(2), np.ones(2)], changes=True)
    assert _flags(graph) == [True, False]
