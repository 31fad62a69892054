"""Acceptance 1: differentiate agrees with torch._C._jit_differentiate and
torch.autograd on every case of the shared conformance corpus."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from ..ir.corpus import CASES_DIR, read_graph_text, scalars_of
from .oracle import check_gradient, random_inputs

CASES = sorted(CASES_DIR.glob("*.ir"))


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_conformance_case(path: Path) -> None:
    text = read_graph_text(path)
    for seed in (0, 1):
        check_gradient(text, random_inputs(text, seed, scalars_of(path)), seed=seed, mode="torch")


# -- our own cases: random op chains traced by torch, and hand-written ones -----------
UNARY = ("tanh", "sigmoid", "exp", "sin", "cos", "relu", "neg")
BINARY = ("add", "sub", "mul", "div")
SHAPES = ((3, 4), (4,), (1, 4), (3, 1))


def random_chain(seed: int) -> str:
    """A torch-traced chain of broadcasting elementwise ops, matmuls and means.

    Every shape broadcasts to (3, 4), so any two values combine.
    """
    import torch

    rng = __import__("random").Random(seed)
    shapes = [rng.choice(SHAPES) for _ in range(3)]

    def fn(*xs):  # traced by torch
        values = list(xs)
        for _ in range(rng.randint(4, 10)):
            kind = rng.random()
            a = rng.choice(values)
            if kind < 0.35:
                values.append(getattr(torch, rng.choice(UNARY))(a))
            elif kind < 0.8:
                b = rng.choice(values)
                if rng.choice(BINARY) == "div":
                    values.append(a / torch.exp(b))
                else:
                    values.append(getattr(torch, rng.choice(BINARY[:3]))(a, b))
            elif kind < 0.9 and tuple(a.shape) == (3, 4):
                values.append(torch.matmul(torch.matmul(a, a.t()), a))  # stays (3, 4)
            else:
                values.append(a.mean(dim=-1, keepdim=True))  # (.., 1) broadcasts back
        return values[-1] * values[-2]

    state = rng.getstate()
    inputs = [torch.rand(*s, dtype=torch.float64, requires_grad=True) + 0.5 for s in shapes]
    rng.setstate(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, inputs, check_trace=False)
    return str(traced.graph)


RANDOM_SEEDS = range(20)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_traced_chain(seed: int) -> None:
    text = random_chain(seed)
    check_gradient(text, random_inputs(text, seed), seed=seed)


HAND_WRITTEN = {
    # A value used by three consumers, one of them twice: gradients add up.
    "fan_out": """graph(%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu),
      %y : Double(4, strides=[1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %x)
  %b : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::add(%a, %y, %one)
  %c : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::tanh(%a)
  %d : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%b, %c)
  return (%d, %a)
""",
    # An input that does not require grad, and an output that does not either.
    "mixed_requires_grad": """graph(%x : Double(2, 3, strides=[3, 1], requires_grad=1, device=cpu),
      %w : Double(3, 5, strides=[5, 1], requires_grad=0, device=cpu)):
  %m : Double(2, 5, strides=[5, 1], requires_grad=1, device=cpu) = aten::mm(%x, %w)
  %s : Double(2, 5, strides=[5, 1], requires_grad=1, device=cpu) = aten::sigmoid(%m)
  %k : Double(3, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::relu(%w)
  return (%s, %k)
""",
    # A chain whose gradient stops at a non-differentiable comparison.
    "masked": """graph(%x : Double(4, strides=[1], requires_grad=1, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %g : Bool(4, strides=[1], requires_grad=0, device=cpu) = aten::gt(%x, %zero)
  %e : Double(4, strides=[1], requires_grad=1, device=cpu) = aten::exp(%x)
  %n : Double(4, strides=[1], requires_grad=1, device=cpu) = aten::neg(%x)
  %r : Double(4, strides=[1], requires_grad=1, device=cpu) = aten::where(%g, %e, %n)
  return (%r)
""",
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_case(name: str) -> None:
    text = HAND_WRITTEN[name]
    check_gradient(text, random_inputs(text, 0))


def test_a_value_returned_twice_is_captured_as_its_first_output() -> None:
    """``return (%y, %y)``: torch captures output 0 for the backward of tanh."""
    import torch

    from gradview.autodiff import differentiate
    from gradview.ir import parse_ir

    text = """graph(%x : Tensor):
  %y : Tensor = aten::tanh(%x)
  return (%y, %y)
"""
    ours = differentiate(parse_ir(text))
    theirs = torch._C._jit_differentiate(torch._C.parse_ir(text))
    assert list(ours.df_input_captured_outputs) == list(theirs.df_input_captured_outputs) == [0]
    assert list(ours.df_input_vjps) == list(theirs.df_input_vjps)
    typed = text.replace("%x : Tensor", "%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu)")
    check_gradient(typed, random_inputs(typed, 0), mode="torch")
