"""Gradients of the ops AOTAutograd's graphs call, against torch.autograd, where the
catalogue's one sample per op (both outputs used, float64) does not reach: var_mean
with only one of its results used (the other's gradient is undefined), with dims
None and [], native_dropout in training (the mask is gradview's own, so the oracle
is the mask the forward returned, and PyTorch's scale 1 for ``train=None``), the
flash attention without its logsumexp, slice_scatter, in float32 as well."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import Graph
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor


def _run(kind: str, args: list[Any], used: list[int]) -> tuple[list[Any], list[Tensor]]:
    """``kind(*args)`` as a one-node graph returning outputs ``used``; arrays are inputs
    that require grad (float) or not (bool). Returns the outputs and the float inputs."""
    graph = Graph()
    values, tensors = [], []
    for arg in args:
        if isinstance(arg, np.ndarray):
            values.append(graph.add_input())
            tensors.append(Tensor(arg.copy(), requires_grad=arg.dtype.kind == "f"))
        else:
            values.append(graph.insert_constant(arg))
    outputs = graph.insert(kind, values)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for index in used:
        graph.register_output(outputs[index])
    result = GraphExecutor(graph).run(tensors)
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    return result, [t for t in tensors if t.requires_grad]


def _grads(outputs: list[Any], inputs: list[Tensor], cotangents: list[np.ndarray]) -> list[np.ndarray]:
    got = grad(outputs, inputs, grad_outputs=[Tensor(c) for c in cotangents], allow_unused=True)
    return [np.asarray(g.detach().numpy()) for g in got]


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-11}


def _x(seed: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("used", [[0], [1], [0, 1]])
@pytest.mark.parametrize(("dim", "correction", "keepdim"), [(None, 1, False), ([1], 0, True), ([0, 2], 2, False)])
def test_var_mean_with_either_result(dtype: Any, used: list[int], dim: Any, correction: int, keepdim: bool) -> None:
    x = _x(1, (3, 4, 5), dtype)
    outs, inputs = _run("aten::var_mean", [x, dim, correction, keepdim], used)
    cot = [_x(2 + i, np.asarray(o.detach().numpy()).shape, dtype) for i, o in enumerate(outs)]
    ours = _grads(outs, inputs, cot)
    tx = torch.tensor(x, requires_grad=True)
    theirs = torch.ops.aten.var_mean.correction(tx, dim, correction=correction, keepdim=keepdim)
    (expected,) = torch.autograd.grad([theirs[i] for i in used], [tx], [torch.tensor(c) for c in cot])
    np.testing.assert_allclose(ours[0], expected.numpy(), **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("p", "train", "scale"), [(0.3, True, 1 / 0.7), (0.6, None, 1.0), (1.0, True, 0.0)])
def test_native_dropout_gradient_uses_the_forwards_mask(dtype: Any, p: float, train: Any, scale: float) -> None:
    """PyTorch's derivative: native_dropout_backward(grad, mask, scale), scale 1/(1-p)
    for train=True (0 for p=1) and 1 for train=None (its formula, as is)."""
    x = _x(3, (6, 7), dtype)
    outs, inputs = _run("aten::native_dropout", [x, p, train], [0, 1])
    mask = np.asarray(outs[1].numpy() if hasattr(outs[1], "numpy") else outs[1])
    cot = _x(4, x.shape, dtype)
    (ours,) = _grads([outs[0]], inputs, [cot])
    np.testing.assert_allclose(ours, cot * mask * dtype(scale), **_tol(dtype))
    # PyTorch's scale for the same p and train, on its own mask.
    tx = torch.tensor(x, requires_grad=True)
    t_out, t_mask = torch.ops.aten.native_dropout(tx, p, train)
    (t_grad,) = torch.autograd.grad(t_out, tx, torch.tensor(cot))
    np.testing.assert_allclose(t_grad.numpy(), cot * t_mask.numpy() * dtype(scale), **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("causal", "scale"), [(False, None), (True, 0.4)])
def test_flash_attention_gradient_without_logsumexp(dtype: Any, causal: bool, scale: Any) -> None:
    q, k, v = _x(5, (2, 2, 4, 3), dtype), _x(6, (2, 2, 5, 3), dtype), _x(7, (2, 2, 5, 3), dtype)
    op = "aten::_scaled_dot_product_flash_attention_for_cpu"
    outs, inputs = _run(op, [q, k, v, 0.0, causal, None, scale], [0])
    cot = _x(8, (2, 2, 4, 3), dtype)
    ours = _grads(outs, inputs, [cot])
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    out, _ = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(tq, tk, tv, 0.0, causal, scale=scale)
    theirs = torch.autograd.grad(out, [tq, tk, tv], torch.tensor(cot))
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, reference.numpy(), **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_slice_scatter_gradient(dtype: Any) -> None:
    x, src = _x(9, (4, 6), dtype), _x(10, (4, 2), dtype)
    outs, inputs = _run("aten::slice_scatter", [x, src, 1, -5, None, 3], [0])
    cot = _x(11, (4, 6), dtype)
    ours = _grads(outs, inputs, [cot])
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    out = torch.ops.aten.slice_scatter(tx, ts, 1, -5, None, 3)
    theirs = torch.autograd.grad(out, [tx, ts], torch.tensor(cot))
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, reference.numpy(), **_tol(dtype))
