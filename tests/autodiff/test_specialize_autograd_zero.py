"""specializeAutogradZero: backward graphs specialized on which gradients are
undefined (Zero), checked by node kinds, by running before and after, and
against torch._C._jit_pass_specialize_autogradzero where torch can express
the same input states."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradview.autodiff import differentiate, specialize_autograd_zero_with_notes
from gradview.autodiff.specialize_autograd_zero import NONZERO, UNKNOWN, ZERO
from gradview.ir import Graph, TensorType, parse_ir
from gradview.ir.passes import eliminate_dead_code
from gradview.ir.passes.lower_grad_of import lower_grad_of
from gradview.runtime import run_graph

from ..ir.passes.pass_check import assert_same_outputs, kinds

D4 = "Double(4, strides=[1], requires_grad=0, device=cpu)"  # complete: a defined gradient
ARR = np.linspace(-1.0, 2.0, 4)
W = np.linspace(0.5, 1.5, 4)


def specialize(text: str, inputs_list: list[list[Any]], changes: bool | None = True, **kw: Any) -> tuple[Graph, Mapping]:
    """Parse, specialize a copy, lint it, and check it computes what the original
    does on each input list; returns the specialized graph and its states.
    ``changes``: what the pass must return (None: either)."""
    graph = parse_ir(text)
    graph.lint()
    after = graph.copy()
    changed, notes = specialize_autograd_zero_with_notes(after, **kw)
    states = notes.autograd_zero
    assert changes is None or changed is changes, str(after)
    if not changed:
        assert str(after) == str(graph)
    after.lint()
    for inputs in inputs_list:
        assert_same_outputs(run_graph(graph, inputs), run_graph(after, inputs))
    return after, states


def named_states(states: Mapping) -> dict[str, str]:
    return {v.debug_name(): s for v, s in states.items()}


def torch_kinds(text: str, zero_inputs: tuple[str, ...] = (), guarded: bool = False) -> list[str]:
    """Node kinds after torch's pass and DCE. torch cannot parse ``[Undefined]``,
    so each Zero input's uses read a ``prim::AutogradZero`` instead."""
    graph = torch._C.parse_ir(text.replace("[Undefined]", ""))
    first = next(iter(graph.nodes()))
    for value in graph.inputs():
        if value.debugName() in zero_inputs:
            zero = graph.create("prim::AutogradZero")
            zero.insertBefore(first)
            value.replaceAllUsesWith(zero.output())
    old = torch._C._jit_set_profiling_executor(guarded)
    try:
        torch._C._jit_pass_specialize_autogradzero(graph)
    finally:
        torch._C._jit_set_profiling_executor(old)
    torch._C._jit_pass_dce(graph)
    return _torch_walk(graph.nodes())


def _torch_walk(nodes: Any) -> list[str]:
    found = []
    for node in nodes:
        found.append(node.kind())
        for block in node.blocks():
            found += _torch_walk(block.nodes())
    return found


def ours_kinds(graph: Graph) -> list[str]:
    graph = graph.copy()
    eliminate_dead_code(graph)
    return kinds(graph)


def same_kinds_as_torch(graph: Graph, text: str, zero_inputs: tuple[str, ...] = (), guarded: bool = False) -> None:
    skip = {"prim::Constant", "prim::AutogradZero"}
    ours = [k for k in ours_kinds(graph) if k not in skip]
    theirs = [k for k in torch_kinds(text, zero_inputs, guarded) if k not in skip]
    assert ours == theirs


ADDS = f"""graph(%ga : Tensor[Undefined], %gb : {D4}, %gc : {D4}, %x : {D4}):
  %u : Tensor = aten::mul(%x, %x)
  %s1 : Tensor = prim::AutogradAdd(%ga, %gb)
  %s2 : Tensor = prim::AutogradAdd(%s1, %gc)
  %s3 : Tensor = prim::AutogradAdd(%s2, %u)
  %s4 : Tensor = prim::AutogradAdd(%ga, %ga)
  %s5 : Tensor = prim::AutogradAdd(%s4, %ga)
  return (%s3, %s4, %s5)
"""


def test_autograd_add_drops_zero_operands_and_becomes_add_when_both_defined() -> None:
    graph, states = specialize(ADDS, [[None, ARR, W, W]])
    assert kinds(graph) == ["aten::mul", "prim::Constant", "aten::add", "prim::AutogradAdd"]
    # Zero + Zero is the Zero itself: the graph returns the undefined input.
    assert [v.debug_name() for v in graph.outputs()[1:]] == ["ga", "ga"]
    names = named_states(states)
    assert names["ga"] == ZERO and names["gb"] == NONZERO and names["u"] == UNKNOWN
    assert names["s2"] == NONZERO  # the aten::add keeps the AutogradAdd's name
    assert names["s3"] == NONZERO  # one defined operand makes a defined sum
    same_kinds_as_torch(graph, ADDS, ("ga",))


def lowered(cond_inputs: str, body: str = "%t : Tensor = aten::mul(%g1, %w)") -> str:
    return f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %gu : Tensor, %w : {D4}):
  %c : bool = prim::AutogradAnyNonZero({cond_inputs})
  %dx : Tensor = prim::If(%c)
    block0():
      %none : NoneType = prim::Constant()
      {body}
      %r : Tensor = aten::_grad_sum_to_size(%t, %none)
      -> (%r)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  return (%dx)
"""


def runs(*, gu_defined: bool = True) -> list[list[Any]]:
    return [[None, ARR, W if gu_defined else None, W], [None, ARR, None, W]]


def test_lowered_grad_of_with_all_zero_gradients_is_autograd_zero() -> None:
    text = lowered("%g0", "%t : Tensor = aten::mul(%g0, %w)")
    graph, states = specialize(text, runs())
    assert kinds(graph) == ["prim::AutogradZero"]
    assert states[graph.outputs()[0]] == ZERO
    same_kinds_as_torch(graph, text, ("g0",))


def test_lowered_grad_of_with_all_nonzero_gradients_runs_unconditionally() -> None:
    text = lowered("%g1")
    graph, states = specialize(text, runs())
    assert kinds(graph) == ["prim::Constant", "aten::mul"]  # the None size sum is gone too
    assert states[graph.outputs()[0]] == NONZERO
    assert graph.outputs()[0].debug_name() == "t"
    same_kinds_as_torch(graph, text)


def test_lowered_grad_of_with_unknown_gradient_keeps_the_if() -> None:
    text = lowered("%g0, %gu", "%t : Tensor = aten::mul(%gu, %w)")
    graph, states = specialize(text, [[None, ARR, W, W], [None, ARR, None, W]])
    assert kinds(graph).count("prim::If") == 1
    assert "aten::_grad_sum_to_size" not in kinds(graph)
    assert states[graph.outputs()[0]] == UNKNOWN
    same_kinds_as_torch(graph, text, ("g0",))


def test_one_defined_gradient_is_enough_to_run_the_formula() -> None:
    # torch keeps this If (it only inlines when all gradients are Nonzero);
    # AnyNonZero is already known True, so gradview inlines the branch.
    text = lowered("%g1, %gu", "%t : Tensor = aten::mul(%g1, %w)")
    graph, states = specialize(text, runs() + runs(gu_defined=False))
    assert "prim::If" not in kinds(graph) and "prim::AutogradAnyNonZero" not in kinds(graph)
    assert states[graph.outputs()[0]] == UNKNOWN  # not every gradient in was defined


GRAD_OF = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %gu : Tensor, %w : {D4}):
  %a : Tensor, %b : Tensor = prim::GradOf[name="aten::mul"](%g0)
    block0():
      %t : Tensor = aten::mul(%g0, %w)
      -> (%t, %t)
  %c : Tensor = prim::GradOf[name="aten::mul"](%g1)
    block0():
      %u : Tensor = aten::mul(%g1, %w)
      %s : Tensor = prim::AutogradAdd(%u, %a)
      -> (%s)
  %d : Tensor = prim::GradOf[name="aten::neg"](%gu, %g0)
    block0():
      %n : Tensor = aten::neg(%w)
      -> (%n)
  %e : Tensor = prim::AutogradAdd(%d, %b)
  return (%a, %c, %e)
"""


def test_unlowered_grad_of_blocks_are_removed_or_inlined() -> None:
    graph, states = specialize(GRAD_OF, [[None, ARR, W, W], [None, ARR, None, W]])
    assert kinds(graph) == [
        "prim::AutogradZero", "aten::mul", "prim::GradOf", "aten::neg",
    ]
    # All gradients into the second formula are defined, so is its result
    # (%u: the AutogradAdd of the Zero %a went away).
    assert graph.outputs()[1].debug_name() == "u" and states[graph.outputs()[1]] == NONZERO
    assert named_states(states)["d"] == UNKNOWN
    assert graph.outputs()[2].debug_name() == "d"  # AutogradAdd(%d, Zero) is %d


SUM_TO_SIZE = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %n : NoneType, %size : int[]?):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::_grad_sum_to_size(%g1, %none)
  %b : Tensor = aten::_grad_sum_to_size(%g1, %n)
  %c : Tensor = aten::_grad_sum_to_size(%g0, %size)
  %d : Tensor = aten::_grad_sum_to_size(%g1, %size)
  return (%a, %b, %c, %d)
"""


def test_grad_sum_to_size_of_a_zero_or_to_a_none_size_is_its_input() -> None:
    graph, states = specialize(SUM_TO_SIZE, [[None, ARR, None, None]])
    assert kinds(graph) == ["prim::Constant", "aten::_grad_sum_to_size"]
    assert [v.debug_name() for v in graph.outputs()[:3]] == ["g1", "g1", "g0"]
    assert states[graph.outputs()[3]] == NONZERO
    # With a real size the original fails to sum the undefined %g0 (so does
    # torch's sum_to); the specialized graph passes the Zero through.
    result = run_graph(graph, [None, ARR, None, [1]])
    assert result[2] is None and result[3].tolist() == [ARR.sum()]


CHECKS = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %gu : Tensor):
  %a : bool = prim::AutogradAnyNonZero(%g0, %g1)
  %b : bool = prim::AutogradAnyNonZero(%g0, %g0)
  %c : bool = prim::AutogradAllZero(%g0, %gu)
  %d : bool = prim::AutogradAllZero(%g0, %g0)
  %e : bool = prim::AutogradAllNonZero(%g1, %gu)
  %f : bool = prim::AutogradAllNonZero(%g0, %gu)
  %g : bool = prim::AutogradAnyNonZero(%gu)
  %s : Tensor = prim::AutogradAdd(%gu, %gu)
  return (%a, %b, %c, %d, %e, %f, %g, %s)
"""


def test_defined_checks_fold_to_constants_when_states_decide_them() -> None:
    graph, _ = specialize(CHECKS, [[None, ARR, None], [None, ARR, W]])
    assert kinds(graph).count("prim::Constant") == 4
    remaining = [k for k in kinds(graph) if k != "prim::Constant"]
    assert remaining == [
        "prim::AutogradAllZero", "prim::AutogradAllNonZero", "prim::AutogradAnyNonZero", "prim::AutogradAdd",
    ]


LOOP = f"""graph(%g0 : Tensor[Undefined], %g1 : {D4}, %n : int):
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %g1)
    block0(%i : int, %acc : Tensor):
      %s : Tensor = prim::AutogradAdd(%acc, %g0)
      %t : Tensor = aten::mul(%s, %g1)
      -> (%true, %t)
  return (%r)
"""


def test_nested_blocks_see_the_states_of_outer_values() -> None:
    graph, states = specialize(LOOP, [[None, ARR, 3], [None, ARR, 0]])
    assert "prim::AutogradAdd" not in kinds(graph)
    assert states[graph.outputs()[0]] == UNKNOWN


def test_unknown_states_leave_the_graph_alone() -> None:
    text = CHECKS.replace("Tensor[Undefined]", "Tensor").replace(D4, "Double(4)")
    graph, states = specialize(text, [[None, ARR, W], [ARR, None, None]], changes=False)
    assert str(graph) == str(parse_ir(text))
    assert set(states.values()) == {UNKNOWN}


def test_forward_graph_is_not_touched() -> None:
    text = f"""graph(%x : Tensor[Undefined], %y : {D4}):
  %none : NoneType = prim::Constant()
  %z : Tensor = aten::mul(%y, %y)
  return (%z)
"""
    _, states = specialize(text, [[None, ARR]], changes=False)
    assert named_states(states) == {"x": ZERO, "y": NONZERO, "none": UNKNOWN, "z": UNKNOWN}


# -- a backward graph written by differentiate -----------------------------------------
FORWARD = """graph(%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu),
      %y : Double(4, strides=[1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%b, %c)
"""
VJP_TYPES = {ZERO: TensorType(undefined=True), NONZERO: TensorType("Double", (3, 4), (4, 1), False, "cpu")}


def differentiated(lower: bool) -> tuple[Any, list[Any]]:
    grad = differentiate(parse_ir(FORWARD))
    if lower:
        lower_grad_of(grad.df)
    x = np.linspace(0.5, 1.5, 12).reshape(3, 4)
    y = np.linspace(-1.0, 1.0, 4)
    forward = run_graph(grad.f, [x, y])
    captured = [[x, y][i] for i in grad.df_input_captured_inputs] + [forward[i] for i in grad.df_input_captured_outputs]
    return grad, captured


@pytest.mark.parametrize("lower", [True, False], ids=["lowered", "grad_of"])
@pytest.mark.parametrize("vjp_states", list(itertools.product([ZERO, NONZERO, UNKNOWN], repeat=2)))
def test_differentiated_backward_graph(lower: bool, vjp_states: tuple[str, str]) -> None:
    grad, captured = differentiated(lower)
    df = grad.df
    for value, state in zip(df.inputs(), vjp_states, strict=False):
        value.set_type(VJP_TYPES.get(state, TensorType()))
    choices = [[None] if s == ZERO else [np.full((3, 4), 0.25)] if s == NONZERO else [None, np.ones((3, 4))] for s in vjp_states]
    runs = [list(vjps) + captured for vjps in itertools.product(*choices)]
    before = [run_graph(df, inputs) for inputs in runs]
    changed, notes = specialize_autograd_zero_with_notes(df)
    states = notes.autograd_zero
    df.lint()
    for inputs, expected in zip(runs, before, strict=True):
        assert_same_outputs(expected, run_graph(df, inputs))
    found = kinds(df)
    assert changed is (vjp_states != (UNKNOWN, UNKNOWN))
    if UNKNOWN not in vjp_states:
        # Every run-time check had a known answer.
        for kind in ("prim::If", "prim::GradOf", "prim::AutogradAnyNonZero", "prim::AutogradAdd"):
            assert kind not in found
    if vjp_states == (ZERO, ZERO):
        (packed,) = df.outputs()
        assert all(states[v] == ZERO for v in packed.node.inputs())


# -- random backward graphs --------------------------------------------------------------
TYPE_OF = {ZERO: "Tensor[Undefined]", NONZERO: D4, UNKNOWN: "Tensor"}


@st.composite
def random_backward_graph(draw: Any) -> tuple[str, list[str]]:
    """Gradients %g0.. of random states, then AutogradAdds and lowered GradOfs
    (an If on AnyNonZero whose body multiplies the sum of its gradients)."""
    states = draw(st.lists(st.sampled_from([ZERO, NONZERO, UNKNOWN]), min_size=1, max_size=4))
    values = [f"%g{i}" for i in range(len(states))]
    params = ", ".join(f"{v} : {TYPE_OF[s]}" for v, s in zip(values, states, strict=True))
    lines = [f"graph({params}, %w : {D4}, %size : int[]?):", "  %none : NoneType = prim::Constant()"]
    for i in range(draw(st.integers(1, 6))):
        a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        if draw(st.booleans()):
            lines.append(f"  %v{i} : Tensor = prim::AutogradAdd({a}, {b})")
        else:
            size = draw(st.sampled_from(["%none", "%size"]))
            lines += [
                f"  %c{i} : bool = prim::AutogradAnyNonZero({a}, {b})",
                f"  %v{i} : Tensor = prim::If(%c{i})",
                "    block0():",
                f"      %s{i} : Tensor = prim::AutogradAdd({a}, {b})",
                f"      %m{i} : Tensor = aten::mul(%s{i}, %w)",
                f"      %r{i} : Tensor = aten::_grad_sum_to_size(%m{i}, {size})",
                f"      -> (%r{i})",
                "    block1():",
                f"      %z{i} : Tensor = prim::AutogradZero()",
                f"      -> (%z{i})",
            ]
        values.append(f"%v{i}")
    lines.append(f"  return ({', '.join(values[len(states):])})")
    return "\n".join(lines) + "\n", states


@settings(max_examples=150, deadline=None)
@given(random_backward_graph(), st.randoms(use_true_random=False))
def test_random_backward_graphs_keep_their_meaning(case: tuple[str, list[str]], rng: Any) -> None:
    text, states = case
    choices = [[None] if s == ZERO else [ARR] if s == NONZERO else [None, ARR] for s in states]
    runs = [[rng.choice(c) for c in choices] + [W, rng.choice([None, [4]])] for _ in range(3)]
    graph, found = specialize(text, runs, changes=None)
    for inputs in runs:  # a known state must be what the output is at run time
        for value, result in zip(graph.outputs(), run_graph(graph, inputs), strict=True):
            if found[value] != UNKNOWN:
                assert (result is None) == (found[value] == ZERO), (found[value], str(graph))
