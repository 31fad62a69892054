"""_safe_softmax and the double backward of _softmax_backward_data and
_log_softmax_backward_data, against torch.autograd and finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient

X = (3, 4, 5)


def _safe_softmax_text(dim: int, dtype: int | None, x: str = tensor_type(*X)) -> str:
    dtype_line = f"  %t : int = prim::Constant[value={dtype}]()\n" if dtype is not None else "  %t : NoneType = prim::Constant()\n"
    return (
        f"graph(%x : {x}):\n  %d : int = prim::Constant[value={dim}]()\n{dtype_line}"
        "  %y : Tensor = aten::_safe_softmax(%x, %d, %t)\n  return (%y)\n"
    )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_safe_softmax(dim: int) -> None:
    check_formula(_safe_softmax_text(dim, None), torch_lists=False, low=-2.0, high=2.0)


def test_safe_softmax_of_fully_masked_slices_has_zero_gradient() -> None:
    x = np.random.default_rng(0).uniform(-2, 2, X)
    x[0, :, :] = -math.inf
    x[1, 2, :] = -math.inf
    x[2, 1, 3] = -math.inf
    check_gradient(_safe_softmax_text(-1, None), [x], compare_torch_lists=False)


def test_safe_softmax_with_a_dtype_casts_the_gradient_back() -> None:
    x = np.random.default_rng(1).uniform(-2, 2, X).astype(np.float32)
    check_gradient(_safe_softmax_text(1, 7, tensor_type(*X, dtype="Float")), [x], rtol=1e-6, compare_torch_lists=False)


@pytest.mark.parametrize("op", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_double_backward(op: str, dim: int, needs: tuple[bool, bool]) -> None:
    """Both inputs (the incoming gradient and the forward's result) get their gradients."""
    g, y = (tensor_type(*X, grad=n) for n in needs)
    text = (
        f"graph(%g : {g}, %o : {y}):\n  %d : int = prim::Constant[value={dim}]()\n"
        "  %t : int = prim::Constant[value=7]()\n"
        f"  %r : {tensor_type(*X)} = aten::{op}(%g, %o, %d, %t)\n  return (%r)\n"
    )
    grad = check_formula(text, torch_lists=False, low=-1.0, high=1.0)
    assert grad.df_output_vjps == [i for i, n in enumerate(needs) if n]
