"""Second derivatives through the backward kernels, against PyTorch (issue 11, acceptance 2).

A gradient formula emits a backward kernel (``tanh_backward``, ``gelu_backward``...);
``grad(..., create_graph=True)`` records that kernel, so a second ``grad`` needs the kernel's
own gradient. Each case runs a scripted function through ``GraphExecutor`` twice (the second
run takes the cached plan), takes ``autograd.grad(out, inputs, v, create_graph=True)`` with a
cotangent ``v`` that itself requires grad, then the gradient of ``sum(first * w)`` with
respect to the inputs and ``v``, and compares both with eager PyTorch (float64, 1e-7). The
gradient with respect to ``v`` goes through the backward kernel's gradient for its incoming
gradient, the one with respect to the inputs through its gradient for the saved tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gradview.ir import parse_ir
from gradview.runtime import Tensor, autograd
from gradview.runtime.executor import GraphExecutor

from ..autodiff.op_gradient_samples import matmul_grad_other, matmul_grad_self

Fn = Callable[..., torch.Tensor]


def _np(value: Any) -> np.ndarray:
    if value is None:
        return None  # type: ignore[return-value]
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value.detach().numpy() if isinstance(value, Tensor) else value)


def _same(ours: Any, theirs: Any, shape: tuple[int, ...], what: str) -> None:
    """Equal values; a None gradient counts as zeros (torch gives zeros_like for flat slopes)."""
    expected = np.zeros(shape) if theirs is None else _np(theirs)
    got = np.zeros(shape) if ours is None else _np(ours)
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-10, err_msg=what)


def _torch_double(fn: Fn, values: list[np.ndarray], v: np.ndarray, w: list[np.ndarray]) -> Any:
    leaves = [torch.tensor(a, requires_grad=True) for a in values]
    cotangent = torch.tensor(v, requires_grad=True)
    out = fn(*leaves)
    first = torch.autograd.grad(out, leaves, cotangent, create_graph=True, allow_unused=True)
    total = sum((f * torch.tensor(c)).sum() for f, c in zip(first, w, strict=True) if f is not None)
    second = torch.autograd.grad(total, [*leaves, cotangent], allow_unused=True)
    return first, second


def _ours_double(executor: GraphExecutor, values: list[np.ndarray], v: np.ndarray,
                 w: list[np.ndarray]) -> Any:
    leaves = [Tensor(a.copy(), requires_grad=True) for a in values]
    cotangent = Tensor(v.copy(), requires_grad=True)
    (out,) = executor.run(leaves)
    first = autograd.grad([out], leaves, [cotangent], create_graph=True, allow_unused=True)
    total = None
    for f, c in zip(first, w, strict=True):
        if f is not None and f.requires_grad:
            term = (f * Tensor(c)).sum()
            total = term if total is None else total + term
    assert total is not None, "no first gradient requires grad"
    second = autograd.grad([total], [*leaves, cotangent], allow_unused=True)
    return first, second


def _check(fn: Fn, shapes: list[tuple[int, ...]], ir: str | None = None) -> None:
    """Double backward of ``fn`` (scripted, or the graph ``ir`` when given) against torch."""
    rng = np.random.default_rng(11)
    values = [rng.uniform(-2.5, 2.5, s) for s in shapes]
    out_shape = tuple(fn(*[torch.tensor(a) for a in values]).shape)
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(s) for s in shapes]
    t_first, t_second = _torch_double(fn, values, v, w)
    graph = parse_ir(ir if ir is not None else str(torch.jit.script(fn).inlined_graph))
    executor = GraphExecutor(graph)
    for run in range(2):  # the second run takes the cached plan
        first, second = _ours_double(executor, values, v, w)
        for i, (ours, theirs) in enumerate(zip(first, t_first, strict=True)):
            _same(ours, theirs, shapes[i], f"run {run}: first gradient {i}")
            assert ours is None or ours.requires_grad == theirs.requires_grad, f"first {i}"
        for i, (ours, theirs) in enumerate(zip(second, t_second, strict=True)):
            shape = shapes[i] if i < len(shapes) else out_shape
            _same(ours, theirs, shape, f"run {run}: second gradient {i}")


# -- the activations' backward kernels, reached from their forward ops ---------------------------
def _tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 1.5


def _sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x) * 1.5


def _relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * x


def _threshold(x: torch.Tensor) -> torch.Tensor:
    return F.threshold(x, 0.3, -1.0) * x


def _leaky_relu(x: torch.Tensor) -> torch.Tensor:
    return F.leaky_relu(x, 0.2) * x


def _gelu(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x)


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


def _hardtanh(x: torch.Tensor) -> torch.Tensor:
    return F.hardtanh(x, -0.5, 1.5) * x


def _relu6(x: torch.Tensor) -> torch.Tensor:
    return F.relu6(x * 4.0) * x


def _hardshrink(x: torch.Tensor) -> torch.Tensor:
    return F.hardshrink(x, 0.4) * x


def _hardswish(x: torch.Tensor) -> torch.Tensor:
    return F.hardswish(x * 2.0)


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return F.softplus(x, 2.0, 3.0)


def _elu(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x, 1.3)


def _silu(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x) * 1.5


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, 1)


def _log_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(x, 0)


def _select(x: torch.Tensor) -> torch.Tensor:
    return x[1] * x[2]


def _slice(x: torch.Tensor) -> torch.Tensor:
    return x[:, 1:4:2] * x[:, 0:2] + x.narrow(1, 2, 2) ** 2


def _pad(x: torch.Tensor) -> torch.Tensor:
    return F.pad(x, [1, 2], "reflect") ** 2 + F.pad(x, [2, 1]) * 2.0


def _mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(torch.sigmoid(x @ w) * 2.0).sum(1)


@pytest.mark.parametrize("fn", [
    _tanh, _sigmoid, _relu, _threshold, _leaky_relu, _gelu, _gelu_tanh, _hardtanh, _relu6,
    _hardshrink, _hardswish, _softplus, _elu, _silu, _softmax, _log_softmax, _select, _slice,
    _pad,
])
def test_double_backward_of_an_activation_equals_torch(fn: Fn) -> None:
    _check(fn, [(3, 4)])


def test_double_backward_through_two_activations_and_a_matmul_equals_torch() -> None:
    _check(_mlp, [(3, 4), (4, 5)])


# -- the backward kernels called directly (their gradients for each tensor input) ---------------
def _k_tanh(g: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.tanh_backward(g, torch.tanh(y))


def _k_sigmoid(g: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.sigmoid_backward(g, torch.sigmoid(y))


def _k_threshold(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.threshold_backward(g, x, 0.2)


def _k_leaky_relu(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.leaky_relu_backward(g, x, 0.1, False)


def _k_gelu(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.gelu_backward(g, x)


def _k_gelu_tanh(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.gelu_backward(g, x, approximate="tanh")


def _k_hardtanh(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.hardtanh_backward(g, x, -0.5, 0.5)


def _k_hardshrink(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.hardshrink_backward(g, x, 0.4)


def _k_hardswish(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.hardswish_backward(g, x * 2.0)


def _k_softplus(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.softplus_backward(g, x, 2.0, 1.5)


def _k_elu(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.elu_backward(g, 1.2, 0.9, 1.1, False, x)


def _k_elu_result(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.elu_backward(g, 1.2, 0.9, 1.1, True, F.elu(x, 1.2) * 0.9)


def _k_softmax(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten._softmax_backward_data(g, torch.softmax(x, 1), 1, torch.float64)


def _k_log_softmax(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten._log_softmax_backward_data(g, torch.log_softmax(x, 0), 0, torch.float64)


def _k_broadcast(g: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.tanh_backward(g[0], torch.tanh(y))


@pytest.mark.parametrize("fn", [
    _k_tanh, _k_sigmoid, _k_threshold, _k_leaky_relu, _k_gelu, _k_gelu_tanh, _k_hardtanh,
    _k_hardshrink, _k_hardswish, _k_softplus, _k_elu, _k_elu_result, _k_softmax, _k_log_softmax,
    _k_broadcast,
])
def test_double_backward_of_a_backward_kernel_equals_torch(fn: Fn) -> None:
    _check(fn, [(3, 4), (3, 4)])


def _k_hardsigmoid(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.hardsigmoid_backward(g, x)


def _k_silu(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.silu_backward(g, x)


def _k_logit(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.logit_backward(g, torch.sigmoid(x), 0.05)


@pytest.mark.parametrize(("name", "fn"), [
    ("aten::hardsigmoid_backward", _k_hardsigmoid),
    ("aten::silu_backward", _k_silu),
    ("aten::logit_backward", _k_logit),
])
def test_backward_kernels_torch_does_not_differentiate_are_refused_as_torch_refuses(
    name: str, fn: Fn,
) -> None:
    values = [np.linspace(-1, 1, 4), np.linspace(-2, 2, 4)]
    leaves = [torch.tensor(a, requires_grad=True) for a in values]
    with pytest.raises(RuntimeError, match=f"derivative for {name} is not implemented"):
        torch.autograd.grad(fn(*leaves).sum(), leaves)
    ours = [Tensor(a.copy(), requires_grad=True) for a in values]
    (out,) = GraphExecutor(parse_ir(str(torch.jit.script(fn).inlined_graph))).run(ours)
    with pytest.raises(RuntimeError, match=name):
        autograd.grad([out.sum()], ours)


# -- matmul's gradients for operands of unknown rank (gradview's own helpers) ------------------
def _matmul_grad_ir(helper: str, size: list[int]) -> str:
    items = "\n".join(f"  %s{i} : int = prim::Constant[value={n}]()" for i, n in enumerate(size))
    names = ", ".join(f"%s{i}" for i in range(len(size)))
    return f"""graph(%g : Tensor, %b : Tensor):
{items}
  %size : int[] = prim::ListConstruct({names})
  %r : Tensor = gradview::{helper}(%g, %b, %size)
  return (%r)
"""


@pytest.mark.parametrize(("helper", "shapes", "size"), [
    ("matmul_grad_self", [(2, 5), (3, 5)], [2, 3]),
    ("matmul_grad_self", [(4, 2, 5), (3, 5)], [4, 2, 3]),
    ("matmul_grad_self", [(5,), (3, 5)], [3]),
    ("matmul_grad_self", [(4,), (5,)], [4, 5]),
    ("matmul_grad_other", [(2, 5), (2, 3)], [3, 5]),
    ("matmul_grad_other", [(4, 2, 5), (4, 2, 3)], [3, 5]),
    ("matmul_grad_other", [(2,), (2, 3)], [3]),
])
def test_double_backward_of_matmul_helpers_equals_torch(
    helper: str, shapes: list[tuple[int, ...]], size: list[int],
) -> None:
    oracle = matmul_grad_self if helper == "matmul_grad_self" else matmul_grad_other
    _check(lambda g, b: oracle(g, b, size), shapes, ir=_matmul_grad_ir(helper, size))
