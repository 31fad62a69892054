"""specializeAutogradZero, guarded mode: profiled states guarded by a prim::If
whose else branch runs the original graph as a prim::FallbackGraph."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gradview.autodiff import (
    differentiate,
    specialize_autograd_zero,
    specialize_autograd_zero_with_notes,
)
from gradview.autodiff.specialize_autograd_zero import NONZERO, ZERO
from gradview.ir import Graph, Node, OptionalType, TensorType, Type, parse_ir
from gradview.ir.graph import walk_blocks
from gradview.ir.passes import eliminate_dead_code
from gradview.ir.passes.lower_grad_of import lower_grad_of
from gradview.runtime import run_graph

from ..ir.passes.pass_check import assert_same_outputs, kinds
from .test_specialize_autograd_zero import ARR, D4, FORWARD, W, _torch_walk, named_states

PROFILED = f"""graph(%g0 : Tensor, %g1 : Tensor, %w : {D4}, %size : int[]?, %size2 : int[]?):
  %p0 : Tensor = prim::profile[profiled_type=Tensor[Undefined]](%g0)
  %p1 : Tensor = prim::profile[profiled_type={D4}](%g1)
  %ps : int[]? = prim::profile_ivalue(%size)
  %ps2 : int[]? = prim::profile_ivalue(%size2)
  %c : bool = prim::AutogradAnyNonZero(%p0)
  %dx : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::mul(%p0, %w)
      %tr : Tensor = aten::_grad_sum_to_size(%t, %ps)
      -> (%tr)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  %s : Tensor = prim::AutogradAdd(%dx, %p1)
  %r : Tensor = aten::_grad_sum_to_size(%s, %ps)
  %q : Tensor = aten::_grad_sum_to_size(%s, %ps2)
  return (%r, %q)
"""


def counts(none: int, present: int) -> dict[str, int]:
    return {"num_none": none, "num_present": present}


def profiled_graph() -> Graph:
    graph = parse_ir(PROFILED)
    profiles = [n for n in graph.nodes() if n.kind() == "prim::profile_ivalue"]
    profiles[0].ival_("none_counts", counts(3, 0))  # %size was always None
    profiles[1].ival_("none_counts", counts(0, 3))  # %size2 never was
    return graph


def top_if(graph: Graph) -> Node:
    (node,) = [n for n in graph.nodes() if n.kind() == "prim::If"]
    return node


def test_guard_checks_the_profiled_states_and_falls_back_when_they_fail() -> None:
    original = profiled_graph()
    graph = original.copy()
    changed, notes = specialize_autograd_zero_with_notes(graph, guarded=True)
    assert changed
    states = notes.autograd_zero
    graph.lint()
    assert [n.kind() for n in graph.nodes()] == [
        "prim::Constant", "aten::__is__", "aten::__isnot__", "prim::AutogradAllNonZero",
        "prim::AutogradAllZero", "aten::__and__", "aten::__and__", "aten::__and__", "prim::If",
    ]
    versioning_if = top_if(graph)
    assert versioning_if.outputs() == graph.outputs()
    fast, slow = versioning_if.blocks()
    fast_kinds = [n.kind() for n in fast.nodes()]
    for gone in ("prim::AutogradAnyNonZero", "prim::AutogradAdd", "prim::If", "prim::profile_ivalue"):
        assert gone not in fast_kinds
    assert fast_kinds.count("aten::_grad_sum_to_size") == 1  # only the sum to the present size
    (call,) = list(slow.nodes())
    assert call.kind() == "prim::FallbackGraph" and call.inputs() == graph.inputs()
    fallback = call.g("Subgraph")
    fallback.lint()
    assert [k for k in kinds(original) if not k.startswith("prim::profile")] == kinds(fallback)
    names = named_states(states)
    assert (names["g0"], names["g1"], names["size"], names["size2"]) == (ZERO, NONZERO, ZERO, NONZERO)

    guard_holds = [None, ARR, W, None, [4]]
    guard_fails = [
        [ARR, ARR, W, None, [4]],  # %g0 defined after all
        [None, None, W, None, None],  # %g1 undefined, %size2 None
        [None, ARR, W, [4], [4]],  # %size given
    ]
    for inputs in [guard_holds, *guard_fails]:
        assert_same_outputs(run_graph(original, inputs), run_graph(graph, inputs))


def test_guarded_mode_without_profiles_uses_the_types_only() -> None:
    text = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %gu : Tensor):
  %s : Tensor = prim::AutogradAdd(%g0, %g1)
  %u : Tensor = prim::AutogradAdd(%gu, %s)
  return (%u)
"""
    guarded, plain = parse_ir(text), parse_ir(text)
    assert specialize_autograd_zero(guarded, guarded=True)
    assert specialize_autograd_zero(plain)
    assert str(guarded) == str(plain)
    assert kinds(guarded) == ["prim::AutogradAdd"]


def test_typed_inputs_need_no_guard_even_when_profiled() -> None:
    text = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}):
  %p0 : Tensor = prim::profile[profiled_type={D4}](%g0)
  %s : Tensor = prim::AutogradAdd(%p0, %g1)
  return (%s)
"""
    graph = parse_ir(text)
    assert specialize_autograd_zero(graph, guarded=True)
    assert kinds(graph) == ["prim::profile"]  # the type wins over a (stale) profile
    assert_same_outputs(run_graph(parse_ir(text), [None, ARR]), run_graph(graph, [None, ARR]))


# -- a differentiated graph, profiled as InsertProfileNodesForSpecializeAutogradZero does
def insert_profiles(df: Graph, inputs: list[Any]) -> None:
    """Profile each gradient input (its type as seen on ``inputs``) and each
    optional size that _grad_sum_to_size reads (None or not, once)."""
    for value, seen in zip(df.inputs(), inputs, strict=True):
        users = [u.user for u in value.uses]
        if isinstance(value.type(), OptionalType) and any(u.kind() == "aten::_grad_sum_to_size" for u in users):
            node = df.create("prim::profile_ivalue", [value])
            node.ival_("none_counts", counts(int(seen is None), int(seen is not None)))
        elif isinstance(value.type(), TensorType) and value.type().sizes is None:
            node = df.create("prim::profile", [value])
            node.ty_("profiled_type", profiled_type(seen))
        else:
            continue
        node.output().set_type(value.type())
        df.prepend_node(node)
        for user in users:
            user.replace_input_with(value, node.output())


def profiled_type(seen: Any) -> Type:
    if seen is None:
        return TensorType(undefined=True)
    return TensorType("Double", tuple(seen.shape), tuple(s // 8 for s in seen.strides), False, "cpu")


def test_profiled_differentiated_graph() -> None:
    grad = differentiate(parse_ir(FORWARD))
    df = grad.df
    assert df is not None
    lower_grad_of(df)
    x = np.linspace(0.5, 1.5, 12).reshape(3, 4)
    y = np.linspace(-1.0, 1.0, 4)
    forward = run_graph(grad.f, [x, y])
    captured = [[x, y][i] for i in grad.df_input_captured_inputs] + [forward[i] for i in grad.df_input_captured_outputs]
    seen = [None, np.full((3, 4), 0.5)] + captured  # the first output's gradient was never defined
    insert_profiles(df, seen)
    original = df.copy()
    changed, notes = specialize_autograd_zero_with_notes(df, guarded=True)
    assert changed
    states = notes.autograd_zero
    df.lint()
    fast = top_if(df).blocks()[0]
    fast_kinds = kinds_of(fast)
    for gone in ("prim::If", "prim::AutogradAnyNonZero", "prim::AutogradAdd"):
        assert gone not in fast_kinds
    assert "aten::_grad_sum_to_size" in fast_kinds  # the sum back to %y's size stays
    assert sorted(set(states[v] for v in df.inputs()[:2])) == [NONZERO, ZERO]
    (packed,) = fast.outputs()
    assert [states[v] for v in packed.node.inputs()] == [NONZERO, NONZERO]
    for vjps in ([None, np.ones((3, 4))], [np.ones((3, 4)), None], [None, None], [np.ones((3, 4))] * 2):
        inputs = vjps + captured
        assert_same_outputs(run_graph(original, inputs), run_graph(df, inputs))


# -- torch (its guarded mode reads every parsed type as defined, so profiles say Nonzero)
TORCH_TEXT = f"""graph(%g0 : Tensor, %g1 : Tensor, %w : {D4}):
  %p0 : Tensor = prim::profile[profiled_type={D4}](%g0)
  %p1 : Tensor = prim::profile[profiled_type={D4}](%g1)
  %c : bool = prim::AutogradAnyNonZero(%p0)
  %dx : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::mul(%p0, %w)
      -> (%t)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  %s : Tensor = prim::AutogradAdd(%dx, %p1)
  return (%s)
"""


def test_guarded_specialized_branch_matches_torch() -> None:
    graph = parse_ir(TORCH_TEXT)
    assert specialize_autograd_zero(graph, guarded=True)
    eliminate_dead_code(graph)
    ours = top_if(graph).blocks()

    theirs_graph = torch._C.parse_ir(TORCH_TEXT)
    old = torch._C._jit_set_profiling_executor(True)
    try:
        torch._C._jit_pass_specialize_autogradzero(theirs_graph)
    finally:
        torch._C._jit_set_profiling_executor(old)
    torch._C._jit_pass_dce(theirs_graph)
    (theirs_if,) = [n for n in theirs_graph.nodes() if n.kind() == "prim::If"]
    theirs = list(theirs_if.blocks())
    for mine, other in zip(ours, theirs, strict=True):
        mine_kinds = [k for k in kinds_of(mine) if k != "prim::Constant"]
        assert mine_kinds == [k for k in _torch_walk(other.nodes()) if k != "prim::Constant"]
    inputs = [ARR, ARR, W]
    assert_same_outputs(run_graph(parse_ir(TORCH_TEXT), inputs), run_graph(graph, inputs))


def kinds_of(block: Any) -> list[str]:
    return [n.kind() for n in walk_blocks([block])]
