"""Acceptance 2 for the matrix product formulas (mm, bmm, mv, dot, matmul,
addmm, linear): each graph is checked against torch (check_gradient: torch's
Gradient lists and capture count, torch.autograd's numbers) and against
finite differences in float64, over every rank combination of matmul,
broadcast batch dims, broadcast addmm ``self``, and linear with and without
a bias. Graphs with untyped (``Tensor``) inputs exercise the run-time
fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph


def _shape(fn, *shapes: tuple[int, ...]) -> tuple[int, ...]:  # a torch function
    return tuple(fn(*(torch.zeros(s) for s in shapes)).shape)


def _binary(op: str, a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...], grads: tuple[bool, bool] = (True, True)) -> str:
    types = {"a": T(*a, grad=grads[0]), "b": T(*b, grad=grads[1])}
    return graph(types, [f"%c : {T(*out)} = aten::{op}(%a, %b)"], ["c"])


# -- mm, bmm, mv, dot -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("op", "a", "b"),
    [("mm", (3, 4), (4, 5)), ("bmm", (2, 3, 4), (2, 4, 5)), ("mv", (3, 4), (4,)), ("dot", (4,), (4,))],
)
def test_fixed_rank_products(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    out = _shape(getattr(torch, op), a, b)
    grad = check_formula(_binary(op, a, b, out))
    assert grad.captured_count == 2  # each operand's gradient needs the other one


@pytest.mark.parametrize("op", ["mm", "matmul"])
def test_only_one_operand_needs_a_gradient(op: str) -> None:
    """dA needs only B: A is not captured when B has no gradient to compute."""
    grad = check_formula(_binary(op, (3, 4), (4, 5), (3, 5), grads=(True, False)))
    assert grad.df_input_captured_inputs == [1] and not grad.df_input_captured_outputs


# -- matmul -------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((1, 3, 4), (2, 4, 5)),
]


@pytest.mark.parametrize(("a", "b"), MATMUL_SHAPES, ids=str)
def test_matmul_every_rank_combination(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    grad = check_formula(_binary("matmul", a, b, _shape(torch.matmul, a, b)))
    # Complete types: the sizes to sum back to are constants, only the operands are captured.
    assert grad.captured_count == 2


@pytest.mark.parametrize(("a", "b"), MATMUL_SHAPES[:6] + [MATMUL_SHAPES[9]], ids=str)
def test_matmul_of_untyped_operands(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """Unknown ranks: the gradient goes through gradview::matmul_grad_self/_other."""
    rng = np.random.default_rng(0)
    text = graph({"a": "Tensor", "b": "Tensor"}, ["%c : Tensor = aten::matmul(%a, %b)"], ["c"])
    check_formula(text, inputs=[rng.standard_normal(a), rng.standard_normal(b)])


# -- addmm --------------------------------------------------------------------------------
@pytest.mark.parametrize("self_shape", [(5,), (3, 5), (1, 5), (3, 1), ()], ids=str)
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, 2.0), (0, -1.5)])
def test_addmm_broadcasting_self(self_shape: tuple[int, ...], beta: float, alpha: float) -> None:
    text = graph(
        {"s": T(*self_shape), "a": T(3, 4), "b": T(4, 5)},
        [const("beta", beta), const("alpha", alpha), f"%c : {T(3, 5)} = aten::addmm(%s, %a, %b, %beta, %alpha)"],
        ["c"],
    )
    grad = check_formula(text)
    assert grad.captured_count == 2  # mat1 and mat2; self's size is a constant


def test_addmm_without_beta_and_alpha() -> None:
    """Hand-written IR may leave out the defaults (torch's parser does not accept it)."""
    rng = np.random.default_rng(3)
    text = graph({"s": T(5), "a": T(3, 4), "b": T(4, 5)}, [f"%c : {T(3, 5)} = aten::addmm(%s, %a, %b)"], ["c"])
    check_finite_differences(text, [rng.uniform(0.5, 1.5, size) for size in ((5,), (3, 4), (4, 5))])


# -- linear -------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape", [(3, 4), (4,), (2, 3, 4), (2, 1, 2, 4)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear(x_shape: tuple[int, ...], bias: bool) -> None:
    types = {"x": T(*x_shape), "w": T(5, 4)} | ({"b": T(5)} if bias else {})
    out = x_shape[:-1] + (5,)
    body = [const("none", None), f"%y : {T(*out)} = aten::linear(%x, %w, {'%b' if bias else '%none'})"]
    grad = check_formula(graph(types, body, ["y"]))
    assert grad.captured_count == 2  # input and weight, never the bias


@pytest.mark.parametrize("x_shape", [(4,), (2, 3, 4)], ids=str)
def test_linear_with_a_vector_weight(x_shape: tuple[int, ...]) -> None:
    text = graph(
        {"x": T(*x_shape), "w": T(4)}, [const("none", None), f"%y : {T(*x_shape[:-1])} = aten::linear(%x, %w, %none)"], ["y"]
    )
    check_formula(text)


def test_linear_of_untyped_tensors() -> None:
    rng = np.random.default_rng(1)
    text = graph({"x": "Tensor", "w": "Tensor", "b": "Tensor"}, ["%y : Tensor = aten::linear(%x, %w, %b)"], ["y"])
    check_formula(text, inputs=[rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)])


def test_linear_where_only_the_bias_needs_a_gradient() -> None:
    text = graph(
        {"x": T(3, 4, grad=False), "w": T(5, 4, grad=False), "b": T(5)}, [f"%y : {T(3, 5)} = aten::linear(%x, %w, %b)"], ["y"]
    )
    grad = check_formula(text)
    assert grad.captured_count == 0
