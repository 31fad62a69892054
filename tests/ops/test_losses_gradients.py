"""The loss, baddbmm and bilinear formulas against torch.autograd (torch's Gradient
lists for nll_loss, which PyTorch's JIT differentiates) and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.autodiff import DifferentiationError, differentiate
from gradview.ir import parse_ir
from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient

RNG = np.random.default_rng(0)


def _line(name: str, kind: str, value: object) -> str:
    if value is None:
        return f"  %{name} : NoneType = prim::Constant()\n"
    return f"  %{name} : {kind} = prim::Constant[value={value}]()\n"


# -- mse_loss -----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize(("a", "b", "grads"), [((3, 4), (3, 4), (True, True)), ((3, 4), (4,), (True, True)),
                                               ((3, 4), (3, 4), (False, True))])
def test_mse_loss(reduction: int, a: tuple, b: tuple, grads: tuple) -> None:
    out = tuple(torch.ops.aten.mse_loss(torch.zeros(a), torch.zeros(b), reduction).shape)
    text = (
        f"graph(%x : {tensor_type(*a, grad=grads[0])}, %t : {tensor_type(*b, grad=grads[1])}):\n"
        + _line("r", "int", reduction)
        + f"  %y : {tensor_type(*out)} = aten::mse_loss(%x, %t, %r)\n  return (%y)\n"
    )
    # Eager PyTorch divides each input's mean gradient by that input's own element count
    # (mse_loss_backward(grad, target, self)), which is not the derivative when the two
    # broadcast (F.mse_loss broadcasts them first). gradview follows eager PyTorch, so
    # finite differences are only checked where the shapes agree.
    check_formula(text, torch_lists=False, finite_differences=a == b or reduction != 1)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_loss_double_backward(reduction: int) -> None:
    go = () if reduction else (3, 4)
    text = (
        f"graph(%g : {tensor_type(*go)}, %x : {tensor_type(3, 4)}, %t : {tensor_type(3, 4)}):\n"
        + _line("r", "int", reduction)
        + f"  %y : {tensor_type(3, 4)} = aten::mse_loss_backward(%g, %x, %t, %r)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False)


# -- nll_loss family -------------------------------------------------------------------------------
def _nll_text(op: str, shape: tuple, reduction: int, weighted: bool, ignore_index: int) -> str:
    d = 0 if len(shape) == 1 else 1
    target = tuple(s for i, s in enumerate(shape) if i != d)
    out = target if reduction == 0 else ()
    weight = f", %w : {tensor_type(shape[d], grad=False)}" if weighted else ""
    lines = f"graph(%x : {tensor_type(*shape)}, %t : {tensor_type(*target, dtype='Long', grad=False)}{weight}):\n"
    if not weighted:
        lines += _line("w", "", None)
    lines += _line("r", "int", reduction) + _line("i", "int", ignore_index)
    return lines + f"  %y : {tensor_type(*out)} = aten::{op}(%x, %t, %w, %r, %i)\n  return (%y)\n"


def _nll_inputs(shape: tuple, weighted: bool, ignore_index: int) -> list:
    d = 0 if len(shape) == 1 else 1
    target = RNG.integers(0, shape[d], tuple(s for i, s in enumerate(shape) if i != d))
    if ignore_index >= 0 and target.size:
        target.reshape(-1)[::2] = ignore_index
    inputs = [RNG.uniform(-2, 0, shape), target.astype(np.int64)]
    return inputs + ([RNG.uniform(0.5, 2, shape[d])] if weighted else [])


@pytest.mark.parametrize(("op", "shape"), [("nll_loss", (5, 4)), ("nll_loss", (4,)), ("nll_loss2d", (2, 3, 2, 2)),
                                           ("nll_loss_nd", (2, 3, 4)), ("nll_loss_nd", (5, 4))])
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize(("weighted", "ignore_index"), [(False, -100), (True, -100), (True, 1)])
def test_nll_loss(op: str, shape: tuple, reduction: int, weighted: bool, ignore_index: int) -> None:
    text = _nll_text(op, shape, reduction, weighted, ignore_index)
    for seed in (0, 1):
        inputs = _nll_inputs(shape, weighted, ignore_index)
        check_gradient(text, inputs, seed=seed, compare_torch_lists=op == "nll_loss")


def test_nll_loss_weight_requiring_grad_is_refused_as_in_torch() -> None:
    text = _nll_text("nll_loss", (5, 4), 1, True, -100).replace(
        tensor_type(4, grad=False), tensor_type(4, grad=True)
    )
    with pytest.raises(DifferentiationError, match="not differentiable with respect to argument 'weight'"):
        differentiate(parse_ir(text), mode="extended")


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_double_backward(reduction: int) -> None:
    go = (5,) if reduction == 0 else ()
    text = (
        f"graph(%g : {tensor_type(*go)}, %x : {tensor_type(5, 4, grad=False)}, "
        f"%t : {tensor_type(5, dtype='Long', grad=False)}, %tw : {tensor_type(grad=False)}):\n"
        + _line("w", "", None) + _line("r", "int", reduction) + _line("i", "int", 2)
        + f"  %y : {tensor_type(5, 4)} = aten::nll_loss_backward(%g, %x, %t, %w, %r, %i, %tw)\n  return (%y)\n"
    )
    target = np.array([0, 2, 3, 1, 2])
    check_gradient(text, [RNG.uniform(size=go), RNG.uniform(size=(5, 4)), target, np.array(3.0)],
                   compare_torch_lists=False)


# -- cross_entropy_loss -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 2)])
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize(("probabilities", "weighted", "ignore_index"),
                         [(False, False, -100), (False, True, 1), (True, False, -100), (True, True, -100)])
def test_cross_entropy_loss(shape: tuple, reduction: int, smoothing: float, probabilities: bool,
                            weighted: bool, ignore_index: int) -> None:
    d = 0 if len(shape) == 1 else 1
    target_shape = shape if probabilities else tuple(s for i, s in enumerate(shape) if i != d)
    out = tuple(s for i, s in enumerate(shape) if i != d) if reduction == 0 else ()
    target_type = tensor_type(*target_shape) if probabilities else tensor_type(*target_shape, dtype="Long", grad=False)
    weight = f", %w : {tensor_type(shape[d], grad=False)}" if weighted else ""
    text = f"graph(%x : {tensor_type(*shape)}, %t : {target_type}{weight}):\n"
    if not weighted:
        text += _line("w", "", None)
    text += _line("r", "int", reduction) + _line("i", "int", ignore_index) + _line("s", "float", smoothing)
    text += f"  %y : {tensor_type(*out)} = aten::cross_entropy_loss(%x, %t, %w, %r, %i, %s)\n  return (%y)\n"
    if probabilities:
        target = RNG.uniform(size=shape)
        target = target / target.sum(axis=d, keepdims=True)
    else:
        target = _nll_inputs(shape, False, ignore_index)[1]
    inputs = [RNG.normal(size=shape), target] + ([RNG.uniform(0.5, 2, shape[d])] if weighted else [])
    check_gradient(text, inputs, compare_torch_lists=False)


# -- baddbmm, bilinear ------------------------------------------------------------------------------
@pytest.mark.parametrize("self_shape", [(2, 3, 4), (4,), (3, 1)])
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, -2.0), (0.0, 1)])
def test_baddbmm(self_shape: tuple, beta: float, alpha: float) -> None:
    text = (
        f"graph(%s : {tensor_type(*self_shape)}, %a : {tensor_type(2, 3, 5)}, %b : {tensor_type(2, 5, 4)}):\n"
        + _line("beta", "float" if isinstance(beta, float) else "int", beta)
        + _line("alpha", "float" if isinstance(alpha, float) else "int", alpha)
        + f"  %y : {tensor_type(2, 3, 4)} = aten::baddbmm(%s, %a, %b, %beta, %alpha)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False)


@pytest.mark.parametrize(("a", "b"), [((4, 3), (4, 5)), ((2, 4, 3), (2, 4, 5)), ((3,), (5,))])
@pytest.mark.parametrize("bias", ["grad", "none", "no_grad"])
def test_bilinear(a: tuple, b: tuple, bias: str) -> None:
    out = a[:-1] + (2,)
    bias_type = "" if bias == "none" else f", %c : {tensor_type(2, grad=bias == 'grad')}"
    text = f"graph(%x : {tensor_type(*a)}, %z : {tensor_type(*b)}, %w : {tensor_type(2, 3, 5)}{bias_type}):\n"
    if bias == "none":
        text += _line("c", "", None)
    text += f"  %y : {tensor_type(*out)} = aten::bilinear(%x, %z, %w, %c)\n  return (%y)\n"
    check_formula(text, torch_lists=False)
