"""Acceptance 2 for the normalization formulas (softmax, log_softmax, their
``_softmax`` forms, layer_norm, native_layer_norm, batch_norm,
native_batch_norm): each graph is checked against torch (torch's Gradient
lists and capture count where torch 2.13 differentiates the op: all but
native_layer_norm and the _softmax forms, and
torch.autograd's numbers) and against finite differences in float64, with
and without weight and bias, in training and evaluation mode."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir

from .formula_case_tools import check_formula
from .ir_builder import T, const, graph
from .oracle import check_gradient, run_gradient

X = (2, 3, 4)


# -- softmax, log_softmax -------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(op: str, dim: int) -> None:
    text = graph({"x": T(*X)}, [const("d", dim), const("n", None), f"%y : {T(*X)} = aten::{op}(%x, %d, %n)"], ["y"])
    grad = check_formula(text, low=-2.0, high=2.0)
    assert grad.df_input_captured_outputs == [0] and not grad.df_input_captured_inputs  # the result only


@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
@pytest.mark.parametrize("dim", [0, -1])
def test_underscore_softmax(op: str, dim: int) -> None:
    text = graph({"x": T(*X)}, [const("d", dim), const("h", False), f"%y : {T(*X)} = aten::{op}(%x, %d, %h)"], ["y"])
    assert check_formula(text, torch_lists=False).captured_count == 1


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_with_dtype_casts_back(op: str) -> None:
    text = graph({"x": T(*X, dtype="Float")}, [const("d", 1), const("t", 7), f"%y : {T(*X)} = aten::{op}(%x, %d, %t)"], ["y"])
    x = np.random.default_rng(0).standard_normal(X).astype(np.float32)
    check_gradient(text, [x], rtol=1e-6, compare_torch_lists=False)
    _, (vjp,) = run_gradient(differentiate(parse_ir(text), mode="extended"), [x], [np.ones(X)])
    assert vjp.dtype == np.float32


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_an_untyped_tensor(op: str) -> None:
    """The input's dtype is read from the result at run time: still one capture."""
    text = graph({"x": "Tensor"}, [const("d", 1), const("n", None), f"%y : Tensor = aten::{op}(%x, %d, %n)"], ["y"])
    grad = check_formula(text, inputs=[np.random.default_rng(0).standard_normal(X)])
    assert grad.captured_count == 1


@pytest.mark.parametrize("op", ["_softmax", "_log_softmax"])
def test_underscore_softmax_of_an_untyped_tensor(op: str) -> None:
    text = graph({"x": "Tensor"}, [const("d", 0), const("h", False), f"%y : Tensor = aten::{op}(%x, %d, %h)"], ["y"])
    grad = check_formula(text, torch_lists=False, inputs=[np.random.default_rng(1).standard_normal(X)])
    assert grad.captured_count == 1


# -- layer norm -----------------------------------------------------------------------------
LAYER_SHAPES = [((2, 3, 4), [4]), ((2, 3, 4), [3, 4]), ((5, 4), [4])]
AFFINE = ["weight+bias", "weight", "bias", "none"]


def _layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str, native: bool) -> str:
    types = {"x": T(*shape)}
    if "weight" in affine:
        types["w"] = T(*normalized)
    if "bias" in affine:
        types["b"] = T(*normalized)
    args = f"%x, %ns, {'%w' if 'weight' in affine else '%none'}, {'%b' if 'bias' in affine else '%none'}, %e"
    body = [const("ns", normalized), const("e", 1e-5), const("c", True), const("none", None)]
    if native:
        stat = T(*shape[: len(shape) - len(normalized)], *[1] * len(normalized))
        body.append(f"%y : {T(*shape)}, %m : {stat}, %r : {stat} = aten::native_layer_norm({args})")
    else:
        body.append(f"%y : {T(*shape)} = aten::layer_norm({args}, %c)")
    return graph(types, body, ["y"])


@pytest.mark.parametrize(("shape", "normalized"), LAYER_SHAPES, ids=str)
@pytest.mark.parametrize("affine", AFFINE)
def test_layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str) -> None:
    grad = check_formula(_layer_norm(shape, normalized, affine, native=False))
    # mean and rstd are recomputed from the input: only the input (and weight) are captured.
    assert grad.captured_count == (2 if "weight" in affine else 1)


@pytest.mark.parametrize(("shape", "normalized"), LAYER_SHAPES, ids=str)
@pytest.mark.parametrize("affine", AFFINE)
def test_native_layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str) -> None:
    grad = check_formula(_layer_norm(shape, normalized, affine, native=True), torch_lists=False)
    assert grad.captured_count == (4 if "weight" in affine else 3)  # input, weight, mean, rstd


def test_layer_norm_weight_gradient_only() -> None:
    text = _layer_norm((2, 3, 4), [4], "weight+bias", native=False).replace(
        "%x : Double(2, 3, 4, requires_grad=1", "%x : Double(2, 3, 4, requires_grad=0"
    )
    check_formula(text)


# -- batch norm -----------------------------------------------------------------------------
def _batch_norm(shape: tuple[int, ...], training: bool, affine: str, native: bool) -> str:
    channels = shape[1]
    types = {"x": T(*shape)}
    if "weight" in affine:
        types["w"] = T(channels)
    if "bias" in affine:
        types["b"] = T(channels)
    # torch.autograd refuses running statistics that require grad: detach them.
    types |= {"rm_in": T(channels, grad=False), "rv_in": T(channels, grad=False)}
    body = [
        f"%rm : {T(channels, grad=False)} = aten::detach(%rm_in)",
        f"%rv : {T(channels, grad=False)} = aten::detach(%rv_in)",
        const("t", training), const("mo", 0.1), const("e", 1e-5), const("none", None),
    ]
    args = f"%x, {'%w' if 'weight' in affine else '%none'}, {'%b' if 'bias' in affine else '%none'}, %rm, %rv, %t, %mo, %e"
    if native:
        stat = T(channels if training else 0)
        body.append(f"%y : {T(*shape)}, %m : {stat}, %s : {stat} = aten::native_batch_norm({args})")
    else:
        body.append(f"%y : {T(*shape)} = aten::batch_norm({args}, %t)")
    return graph(types, body, ["y"])


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 2)], ids=str)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", ["weight+bias", "weight", "none"])
@pytest.mark.parametrize("native", [False, True])
def test_batch_norm(shape: tuple[int, ...], training: bool, affine: str, native: bool) -> None:
    grad = check_formula(_batch_norm(shape, training, affine, native))
    weight = "weight" in affine
    if training:
        # batch_norm recomputes the batch statistics, native_batch_norm captures them.
        assert grad.captured_count == (1 + weight + 2 * native)
    else:
        assert grad.captured_count == 3 + weight  # input, (weight,) running mean and var


@pytest.mark.parametrize("native", ["layer", "batch"])
def test_statistics_outputs_are_not_differentiable(native: str) -> None:
    """Only mean/rstd (save_mean/save_invstd) used: no gradient reaches the input, as in PyTorch."""
    if native == "layer":
        stat = T(3, 1)
        body = [const("ns", [4]), const("e", 1e-5), const("n", None)]
        body.append(f"%y : {T(3, 4)}, %m : {stat}, %r : {stat} = aten::native_layer_norm(%x, %ns, %n, %n, %e)")
    else:
        stat = T(4)
        body = [const("t", True), const("mo", 0.1), const("e", 1e-5), const("n", None)]
        body.append(f"%y : {T(3, 4)}, %m : {stat}, %r : {stat} = aten::native_batch_norm(%x, %n, %n, %n, %n, %t, %mo, %e)")
    grad = differentiate(parse_ir(graph({"x": T(3, 4)}, body, ["m"])), mode="extended")
    stat_shape = (3, 1) if native == "layer" else (4,)
    _, vjps = run_gradient(grad, [np.ones((3, 4))], [np.ones(stat_shape)])
    assert all(v is None or not np.any(v) for v in vjps)
