"""The gradient formulas of gradview.ops.activations against torch.

Smooth regions: check_formula (torch.autograd's numbers to 1e-7, the
Gradient's lists against ``torch._C._jit_differentiate`` where torch 2.13
differentiates the op symbolically, finite differences), with the Scalar
arguments as int and float constants, left at their defaults, and as graph
inputs.

Kinks: inputs placed exactly on each activation's bounds, compared with
``torch.autograd.grad``, the gradient PyTorch's eager autograd gives and its
modules use. For hardtanh/relu6 bounds and threshold, TorchScript's symbolic
formula disagrees with eager autograd (it lets the gradient through at the
bound); those tests run torch's own Gradient too and show the difference,
as issue 10 asks: gradview follows eager autograd.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient, run_gradient
from tests.ops.test_pointwise_gradients import _const, unary

T34 = tensor_type(3, 4)


def _consts(*specs: tuple[str, str]) -> str:
    """Constants ``%a``, ``%b``, ... for (type, value) pairs."""
    return "".join(_const(name, kind, value) for name, (kind, value) in zip("abc", specs, strict=False))


F = "float"
I = "int"  # noqa: E741 - reads as a type name next to F
CASES: dict[str, list[tuple[str, str, list[float]]]] = {
    # op -> [(call, constants, kinks to keep away from)]
    "relu6": [("aten::relu6(%x)", "", [0.0, 6.0])],
    "hardswish": [("aten::hardswish(%x)", "", [-3.0, 3.0])],
    "hardsigmoid": [("aten::hardsigmoid(%x)", "", [-3.0, 3.0])],
    "silu": [("aten::silu(%x)", "", [])],
    "hardtanh": [
        ("aten::hardtanh(%x, %a, %b)", _consts((F, "-1."), (F, "1.")), [-1.0, 1.0]),
        ("aten::hardtanh(%x, %a, %b)", _consts((I, "-2"), (I, "3")), [-2.0, 3.0]),
        ("aten::hardtanh(%x, %a, %b)", _consts((F, "0.5"), (I, "4")), [0.5, 4.0]),
    ],
    "hardshrink": [
        ("aten::hardshrink(%x, %a)", _consts((F, "0.5")), [-0.5, 0.5]),
        ("aten::hardshrink(%x, %a)", _consts((I, "2")), [-2.0, 2.0]),
    ],
    "softplus": [
        ("aten::softplus(%x, %a, %b)", _consts((I, "1"), (I, "20")), []),
        ("aten::softplus(%x, %a, %b)", _consts((F, "2."), (F, "3.")), [1.5]),
        ("aten::softplus(%x, %a, %b)", _consts((F, "0.5"), (I, "1")), [2.0]),
    ],
    "threshold": [
        ("aten::threshold(%x, %a, %b)", _consts((F, "0.5"), (F, "-2.")), [0.5]),
        ("aten::threshold(%x, %a, %b)", _consts((I, "1"), (I, "7")), [1.0]),
    ],
}
ELU = [
    ("aten::elu(%x, %a, %b, %c)", _consts((I, "1"), (I, "1"), (I, "1"))),
    ("aten::elu(%x, %a, %b, %c)", _consts((F, "1.5"), (F, "2."), (F, "0.5"))),
    ("aten::elu(%x, %a, %b, %c)", _consts((F, "-0.5"), (F, "1.0507"), (I, "3"))),
]
PARAMS = [(op, index) for op, cases in CASES.items() for index in range(len(cases))]


@pytest.mark.parametrize("op,index", PARAMS)
def test_activation(op: str, index: int) -> None:
    call, consts, kinks = CASES[op][index]
    grad = check_formula(unary(call, consts), low=-6.5, high=7.0, away_from=kinks)
    assert grad.captured_count == 1  # the input; torch's lists captured no fewer


@pytest.mark.parametrize("index", range(len(ELU)))
def test_elu(index: int) -> None:
    call, consts = ELU[index]
    check_formula(unary(call, consts), low=-3, high=3, away_from=[0.0], torch_lists=False)


@pytest.mark.parametrize("short,full", [
    ("aten::hardtanh(%x)", "aten::hardtanh(%x, %m, %one)"), ("aten::hardshrink(%x)", "aten::hardshrink(%x, %half)"),
    ("aten::softplus(%x)", "aten::softplus(%x, %one, %twenty)"), ("aten::elu(%x)", "aten::elu(%x, %one, %one, %one)"),
])
def test_defaults_left_out(short: str, full: str) -> None:
    """Hand-written IR may leave out trailing Scalar arguments (torch's parser cannot):
    their defaults apply, so the gradient equals the full call's, which torch checks."""
    consts = _consts((I, "1"), (I, "-1"), (F, "0.5")).replace("%a", "%one").replace("%b", "%m").replace("%c", "%half")
    consts += _const("twenty", I, "20")
    x = np.random.default_rng(3).uniform(-3, 3, (3, 4))
    x = np.where(np.abs(np.abs(x) - 0.75) > 0.3, x, 2.0)  # away from the kinks at +-0.5 and +-1
    check_gradient(unary(full, consts), [x], compare_torch_lists=False)
    check_finite_differences(unary(short), [x])
    g = np.random.default_rng(4).standard_normal((3, 4))
    ours = run_gradient(differentiate(parse_ir(unary(short)), mode="extended"), [x], [g])
    theirs = run_gradient(differentiate(parse_ir(unary(full, consts)), mode="extended"), [x], [g])
    np.testing.assert_array_equal(ours[1][0], theirs[1][0])


@pytest.mark.parametrize("op,call,names,values", [
    ("hardtanh", "aten::hardtanh(%x, %a, %b)", ["a", "b"], [-0.7, 1.2]),
    ("softplus", "aten::softplus(%x, %a, %b)", ["a", "b"], [1.5, 2.0]),
    ("elu", "aten::elu(%x, %a, %b, %c)", ["a", "b", "c"], [1.3, 0.9, 1.7]),
    ("threshold", "aten::threshold(%x, %a, %b)", ["a", "b"], [0.25, 3.0]),
    ("hardshrink", "aten::hardshrink(%x, %a)", ["a"], [0.4]),
])
def test_scalar_arguments_as_graph_inputs(op: str, call: str, names: list[str], values: list[float]) -> None:
    params = "".join(f", %{n} : float" for n in names)
    text = f"graph(%x : {T34}{params}):\n  %y : {T34} = {call}\n  return (%y)\n"
    kinks = [v for v in values] + [-v for v in values] + [0.0]
    check_formula(text, scalars=dict(zip(names, values, strict=True)), low=-3, high=3, away_from=kinks,
                  torch_lists=False)


# -- the kinks: eager autograd's conventions ----------------------------------------------------
def _torch_jit_vjp(text: str, x: np.ndarray) -> np.ndarray:
    """The vjp of torch's own symbolic Gradient (``_jit_differentiate``) for a ones gradient."""
    gradient = torch._C._jit_differentiate(torch._C.parse_ir(text))
    inputs = [torch.from_numpy(x.copy())]
    outputs = torch._C._create_function_from_graph("f", gradient.f)(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    df = torch._C._create_function_from_graph("df", gradient.df)
    args: list[Any] = [torch.ones_like(outputs[0])]
    args += [inputs[i] for i in gradient.df_input_captured_inputs]
    args += [outputs[i] for i in gradient.df_input_captured_outputs]
    (vjp,) = df(*args)
    return vjp.numpy()


def _eager_vjp(text: str, x: np.ndarray) -> np.ndarray:
    grad = check_gradient(text, [x], compare_torch_lists=False)  # gradview == torch.autograd
    assert grad.df_output_vjps == [0]
    t = torch.tensor(x, requires_grad=True)
    fn = torch._C._create_function_from_graph("f", torch._C.parse_ir(text))
    (vjp,) = torch.autograd.grad(fn(t).sum(), [t])
    return vjp.numpy()


EDGE = "graph(%x : Double(6, strides=[1], requires_grad=1, device=cpu)):\n{consts}" \
       "  %y : Double(6, strides=[1], requires_grad=1, device=cpu) = {call}\n  return (%y)\n"


@pytest.mark.parametrize("call,consts,x,eager,jit", [
    ("aten::hardtanh(%x, %a, %b)", _consts((F, "-1."), (F, "2.")), [-1.0, 2.0, -1.5, 2.5, 0.0, 1.0],
     [0, 0, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1]),
    ("aten::relu6(%x)", "", [0.0, 6.0, -1.0, 7.0, 3.0, 5.9], [0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1]),
    ("aten::threshold(%x, %a, %b)", _consts((F, "0.5"), (F, "9.")), [0.5, 0.4, 0.6, -3.0, 3.0, 0.5],
     [0, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 1]),
])
def test_eager_conventions_at_the_bounds(call: str, consts: str, x: list, eager: list, jit: list) -> None:
    """gradview gives eager autograd's gradient at the bounds; torch's JIT formula may not."""
    text = EDGE.format(consts=consts, call=call)
    ours = _eager_vjp(text, np.array(x))
    assert ours.tolist() == eager
    assert _torch_jit_vjp(text, np.array(x)).tolist() == jit


@pytest.mark.parametrize("call,consts,x", [
    ("aten::hardswish(%x)", "", [-3.0, 3.0, -4.0, 4.0, 0.0, -2.5]),
    ("aten::hardsigmoid(%x)", "", [-3.0, 3.0, -4.0, 4.0, 0.0, 2.5]),
    ("aten::hardshrink(%x, %a)", _consts((F, "0.5")), [-0.5, 0.5, -0.6, 0.6, 0.0, 2.0]),
    ("aten::softplus(%x, %a, %b)", _consts((F, "2."), (F, "3.")), [1.5, 1.4, 1.6, -1.0, 0.0, 9.0]),
    ("aten::elu(%x, %a, %b, %c)", _consts((F, "1.5"), (F, "2."), (F, "0.5")), [0.0, -0.0, 1.0, -1.0, 1e-9, -1e-9]),
    ("aten::silu(%x)", "", [0.0, -800.0, 800.0, -1.0, 1.0, 40.0]),
])
def test_gradient_at_the_kinks_matches_torch_autograd(call: str, consts: str, x: list) -> None:
    check_gradient(EDGE.format(consts=consts, call=call), [np.array(x)], compare_torch_lists=False)


def test_hardswish_at_three() -> None:
    text = EDGE.format(consts="", call="aten::hardswish(%x)")
    assert _eager_vjp(text, np.array([-3.0, 3.0, -4.0, 4.0, 0.0, 1.5])).tolist() == [0, 1, 0, 1, 0.5, 1]
